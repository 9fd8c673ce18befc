"""Square roots LLVM's vectorizer scalarized, put back into vector instructions.

On SSE-only targets (x86-64 without `-mavx`) LLVM's cost model prices `sqrtpd`/`sqrtps` above
their scalar halves, so a vectorized loop computes its square roots lane by lane
(extract, `sqrtsd`, insert), while gcc keeps `sqrtpd`. A time-tiled kernel then lost to gcc's
untiled loop (1.7x on a 2-D sweep of square roots). Every x86 core since Nehalem issues the
packed instruction at least as fast as its scalar halves, and a square root is correctly
rounded in both forms, so the packed call gives the same bits.
"""

from __future__ import annotations

import re

_VALUE = r"(%[\w.]+)"
_TAIL = r"(?:, !.*)?$"  # metadata attachments
_LANE = r"i(?:32|64) (\d+)" + _TAIL
_EXTRACT = re.compile(rf"\s*{_VALUE} = extractelement (<(\d+) x (float|double)>) {_VALUE}, {_LANE}")
_SQRT = re.compile(
    rf"\s*{_VALUE} = (?:tail )?call ((?:[a-z]+ )*)(float|double) "
    rf"@llvm\.sqrt\.f(?:32|64)\(\3 {_VALUE}\){_TAIL}"
)
_INSERT = re.compile(
    rf"\s*{_VALUE} = insertelement (<(\d+) x (float|double)>) (poison|undef|%[\w.]+), "
    rf"\4 {_VALUE}, {_LANE}"
)
_SUFFIX = {"float": "f32", "double": "f64"}


def bind_vector_sqrt(module_text: str) -> str:
    """`module_text` with each full vector of lane-wise square roots of one vector's lanes
    (inserted in any order) computed by one `llvm.sqrt.v*` call, at the last insertion: the
    source vector dominates every lane's root, so it dominates that point too. The scalar
    calls left without a use are dropped by instruction selection."""
    if "@llvm.sqrt.f" not in module_text or "extractelement" not in module_text:
        return module_text
    lines = module_text.split("\n")
    declared = set(re.findall(r"declare [^@]*@(llvm\.sqrt\.v\w+)\(", module_text))
    needed: set[tuple[str, str]] = set()
    #: an extracted value -> (its vector, typed: "<2 x double> %v", lane)
    lanes: dict[str, tuple[str, int]] = {}
    roots: dict[str, tuple[str, int, str]] = {}  # square root -> (vector, lane, call flags)
    #: a vector of roots being built -> (source vector, its lanes so far, call flags)
    built: dict[str, tuple[str, frozenset[int], str]] = {}
    for index, line in enumerate(lines):
        if line.startswith("define "):  # value names are the function's own
            lanes, roots, built = {}, {}, {}
        elif match := _EXTRACT.match(line):
            lanes[match[1]] = (f"{match[2]} {match[5]}", int(match[6]))
        elif (match := _SQRT.match(line)) and match[4] in lanes:
            roots[match[1]] = (*lanes[match[4]], match[2])
        elif match := _INSERT.match(line):
            result, vector_type, width, element, into, value, lane = match.groups()
            source, at, flags = roots.get(value, ("", -1, ""))
            start = ("", frozenset(), flags) if into in ("poison", "undef") else built.get(into)
            if at != int(lane) or not source.startswith(f"{vector_type} ") or start is None:
                continue
            if start[0] not in ("", source) or start[2] != flags or at in start[1]:
                continue
            built[result] = (source, start[1] | {at}, flags)
            if len(built[result][1]) == int(width):
                name = f"llvm.sqrt.v{width}{_SUFFIX[element]}"
                lines[index] = f"  {result} = call {flags}{vector_type} @{name}({source})"
                needed.add((name, vector_type))
    declarations = [f"declare {t} @{n}({t})" for n, t in sorted(needed) if n not in declared]
    return "\n".join(lines + declarations) if needed else module_text
