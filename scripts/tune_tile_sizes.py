#!/usr/bin/env python3
"""Measure tile sizes around the cache model's on this machine and record those that beat the
model's in `polyhedral/tuned_sizes.py`, where `-O3`'s time tiles and fused tiles take them for
this target (`-march=native` here; the entry's key names the CPU, its vector width, L1 and L2).

Each kernel's class comes from the remarks of `-O3`'s passes: a stencil's (space depth, bytes
and loads per point) for diamond time tiles, a pipeline's (stages, depth, bytes per point) for
fused tiles. For each class, the bench kernels (`scripts/bench.py`) are built at the model's
sizes and at sizes around them (a diamond's height x 1/2, 2 and its next tile x 1/2, 2, x 1/4
.. 4 in 1-D; a fused strip's rows / 16 .. x 2, at least 8), every output is checked against
gcc's, and each is timed at the `tiling` size (DRAM-sized grids) on one thread, round-robin,
best of `--reps`. A class gets sizes only if a candidate beats the model's sizes by `--margin`
(geometric mean over its kernels) and still does when the two are timed again alone with twice
the repetitions. The sizes chosen (the model's or the winner) are then timed against gcc at
each of `--check-sizes` (DRAM-sized grids with many steps, grids past the L3 threshold with
one or two): where they run slower than gcc's untiled code by more than the margin, the
class's entry says "no tiles" and `-O3` leaves its nests to cc (issue 19's "never lose",
measured). Otherwise the entry is removed and the model decides. Nothing is written with
`--dry-run`.

    python scripts/tune_tile_sizes.py [--kernels jacobi-1d,jacobi-2d,...] [--reps 5]
        [--margin 0.05] [--dry-run]
"""

from __future__ import annotations

import argparse
import ast
import datetime
import math
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import bench
from pycc_stencil.polyhedral import tuned_sizes

REPOSITORY = Path(__file__).resolve().parent.parent
TABLE = REPOSITORY / "polyhedral" / "tuned_sizes.py"
BEGIN, END = "    # BEGIN TUNED", "    # END TUNED"
#: bench.py's references every output is checked against
REFERENCES = ("gcc", "gcc-nofma")
DEFAULT_KERNELS = (
    "jacobi-1d,jacobi-2d,heat-2d,fdtd-2d,heat-3d,box-3d27,blur-sharpen-f32,unsharp-f32"
)
#: what `-O3` runs, and the remarks that give a kernel's class, sizes and target key: the
#: diamonds' (time_tile.py), the fused pipelines' (fuse_tile.py), and a class's "no tiles"
PASSES = "time-tile-large,fuse-tile-large"
_ORIGIN = r"; sizes (?:from the cache model for|measured for) (?P<key>.+?) "
REMARKS = {
    "time-tile-large": re.compile(
        r"over \d+-D space with diamond tiles .*?\) of (?P<sizes>[\dx]+), .*?"
        + _ORIGIN
        + r"\((?P<cls>\d+-D, \d+ bytes and \d+ loads a point)\)"
    ),
    "fuse-tile-large": re.compile(
        r"fused \d+ loop nests into tiles \(sizes (?P<sizes>[\dx]+)\) .*?"
        + _ORIGIN
        + r"\((?P<cls>pipeline of \d+ stages over \d+-D, \d+ bytes a point)\)"
    ),
}
LOST = re.compile(
    r"(?P<kind>time|fused) tiles lost to the untiled code for (?P<cls>.+?) on "
    r"(?P<key>.+?) \(measured"
)


@dataclass
class StencilClass:
    """The kernels of one class, the pass that tiles them and the sizes tried for them."""

    name: str
    key: str
    model: list[int]
    tiling: str = "time-tile-large"
    kernels: list[bench.Kernel] = field(default_factory=list)

    def candidates(self) -> list[list[int]]:
        """The model's sizes first, then the sizes around them."""
        if self.tiling == "fuse-tile-large":  # strips of rows: down to 8, and twice as many
            rows = self.model[0]
            tries = [
                [r, *self.model[1:]]
                for r in (rows // 16, rows // 8, rows // 4, rows // 2, rows * 2)
            ]
            return [self.model, *[t for t in tries if t[0] >= 8 and t != self.model]]
        side, *rest = self.model[1:]
        if rest:  # the diamond's height, and the tile of the next space dimension (down
            # to a quarter: in 3-D, the rows of three planes a point reads may fit the L1)
            sides = [side // 2, side, side * 2]
            inner = [[r, *rest[1:]] for r in (rest[0] // 4, rest[0] // 2, rest[0], rest[0] * 2)]
        else:
            sides, inner = [side // 4, side // 2, side, side * 2, side * 4], [[]]
        out = [self.model]
        for s in sides:
            for tail in inner:
                sizes = [s, s, *tail]
                if min(sizes) >= 4 and sizes not in out:
                    out.append(sizes)
        return out

    def pipeline(self, sizes: list[int]) -> str:
        return f"{self.tiling}({','.join(map(str, sizes))})"


def classes_of(
    kernels, pycc: str, build: Path, log: Callable[[str], None]
) -> dict[str, StencilClass]:
    """Each kernel's class, model sizes and target key, from the remarks of `-O3`'s passes."""
    (variant,) = bench.pycc_pass_variants(pycc, [PASSES], [1])
    builds = bench.build_all(kernels, [variant], build, None)
    found: dict[str, StencilClass] = {}
    for k in kernels:
        b = builds[(k.name, variant.key)]
        cls = class_of_remarks(b.pycc_remarks)
        if cls is None:
            log(f"{k.name}: no diamond or fused tiles ({b.pycc_status or b.error}); left out")
            continue
        found.setdefault(cls.name, cls).kernels.append(k)
    return found


def class_of_remarks(remarks: list[str]) -> StencilClass | None:
    """The class a kernel's remarks name, with the cache model's sizes for it (for a class
    measured before, the model's sizes its entry records)."""
    for remark in remarks:
        if (lost := LOST.search(remark)) is not None:
            tiling = "time-tile-large" if lost["kind"] == "time" else "fuse-tile-large"
            model = tuned_sizes.TUNED[lost["key"]][lost["cls"]]["model"]
            return StencilClass(lost["cls"], lost["key"], model, tiling)
        for tiling, pattern in REMARKS.items():
            if (match := pattern.search(remark)) is not None:
                sizes = [int(x) for x in match["sizes"].split("x")]
                if "from the cache model" not in match.group(0):
                    sizes = tuned_sizes.TUNED[match["key"]][match["cls"]]["model"]
                return StencilClass(match["cls"], match["key"], sizes, tiling)
    return None


def timed(kernels, variants, build: Path, args, size: str, log) -> dict[str, dict[str, float]]:
    """Seconds per call of each variant on each kernel (outputs checked against gcc's)."""
    gcc = shutil.which(args.gcc) or args.gcc
    base = [v for v in bench.make_variants(args, gcc, None, None) if v.key in REFERENCES]
    everything = [*base, *variants]
    builds = bench.build_all(kernels, everything, build, None)
    gomp = bench.Gomp()
    times: dict[str, dict[str, float]] = {}
    for k in kernels:
        for r in bench.bench_kernel_size(k, size, builds, everything, args, gomp, log):
            if (r.variant.startswith("pycc-tile") or r.variant == "gcc") and r.time and not r.wrong:
                times.setdefault(r.variant, {})[k.name] = r.time
            elif r.variant.startswith("pycc-tile"):
                log(f"  {k.name} {r.label}: {r.check or r.note}: not a candidate")
    return times


def relative(times: dict[str, dict[str, float]], key: str, model_key: str) -> float | None:
    """Geometric mean over the kernels of the variant's time over the model's."""
    mine, model = times.get(key, {}), times.get(model_key, {})
    common = [k for k in model if k in mine]
    if not common or len(common) < len(model):
        return None
    return math.exp(sum(math.log(mine[k] / model[k]) for k in common) / len(common))


def choose(ratios: dict[int, float | None], margin: float) -> int | None:
    """The candidate (index, 0 = the model's sizes) whose time over the model's is lowest, if
    it is at most 1 - margin."""
    known = {i: r for i, r in ratios.items() if r is not None and i != 0}
    if not known:
        return None
    best = min(known, key=known.__getitem__)
    return best if known[best] <= 1 - margin else None


def tune_class(cls: StencilClass, pycc: str, build: Path, args, log) -> dict | None:
    """The class's entry: sizes that beat the model's, or no tiles where the tiles lose to
    gcc's untiled code at a size measured; None when the model's sizes stay."""
    sizes, speedup = best_sizes(cls, pycc, build, args, log)
    shown = "x".join(map(str, sizes or cls.model))
    chosen = bench.pycc_pass_variants(pycc, [cls.pipeline(sizes or cls.model)], [1])
    against: dict[str, float | None] = {}
    for size in args.check_sizes:
        times = timed(cls.kernels, chosen, build, args, size, log)
        ratio = relative(times, chosen[0].key, "gcc")
        against[size] = None if ratio is None else round(1 / ratio, 3)
        log(f"  {size}: {shown} at {against[size]}x gcc's speed")
    facts = {
        "model": cls.model,
        "kernels": [k.name for k in cls.kernels],
        "measured": f"{datetime.date.today()}, {cpu(args)}, 1 thread, best of {args.reps}",
    }
    if loses(against, args.margin):
        return {"sizes": None, "against_gcc": against, **facts}
    if sizes is None:
        return None
    return {"sizes": sizes, "speedup": speedup, **facts}


def cpu(args) -> str:
    """The CPU as bench.py names it (model, ISA, cores)."""
    line = bench.machine_info(shutil.which(args.gcc) or args.gcc, None, None)[0]
    return line.removeprefix("machine: ").split(";")[0].split(", 24 GiB")[0]


def loses(against: dict[str, float | None], margin: float) -> bool:
    """Whether the tiles ran slower than gcc's untiled code by more than `margin` at a size
    (their speeds relative to gcc's)."""
    return any(speed is not None and speed < 1 - margin for speed in against.values())


def best_sizes(
    cls: StencilClass, pycc: str, build: Path, args, log
) -> tuple[list[int] | None, float | None]:
    """Sizes that beat the model's by the margin at `args.size`, timed twice, and their speed
    over the model's; (None, None) when the model's stay."""
    candidates = cls.candidates()
    variants = bench.pycc_pass_variants(pycc, [cls.pipeline(c) for c in candidates], [1])
    bench.probe_variants(variants, build)
    log(f"{cls.name}: {len(cls.kernels)} kernel(s), {len(candidates)} candidates around the "
        f"model's {'x'.join(map(str, cls.model))}")  # fmt: skip
    times = timed(cls.kernels, variants, build, args, args.size, log)
    ratios = {i: relative(times, v.key, variants[0].key) for i, v in enumerate(variants)}
    for i, c in enumerate(candidates):
        shown = "-" if ratios[i] is None else f"{1 / ratios[i]:.3f}x"
        log(f"  {'x'.join(map(str, c)):>16}  {shown} the model's speed")
    best = choose(ratios, args.margin)
    if best is None:
        return None, None
    again = bench.pycc_pass_variants(
        pycc, [cls.pipeline(cls.model), cls.pipeline(candidates[best])], [1]
    )
    confirm = argparse.Namespace(**{**vars(args), "reps": args.reps * 2})
    times = timed(cls.kernels, again, build, confirm, args.size, log)
    ratio = relative(times, again[1].key, again[0].key)
    log(f"  again, alone: {'x'.join(map(str, candidates[best]))} at "
        f"{'-' if ratio is None else f'{1 / ratio:.3f}x'} the model's speed")  # fmt: skip
    if ratio is None or choose({0: 1.0, 1: ratio}, args.margin) is None:
        return None, None
    return candidates[best], round(1 / ratio, 3)


def read_table(text: str) -> dict[str, dict[str, dict]]:
    """The entries between the markers of `tuned_sizes.py`'s text."""
    body = text[text.index(BEGIN) : text.index(END)].split("\n", 1)[1]
    return ast.literal_eval("{" + body + "}")


def write_table(text: str, table: dict[str, dict[str, dict]]) -> str:
    """`tuned_sizes.py`'s text with `table` between the markers (formatted as ruff would)."""
    lines = []
    for key in sorted(table):
        lines.append(f"    {key!r}: {{")
        for name in sorted(table[key]):
            lines.append(f"        {name!r}: {{")
            for field_name, value in table[key][name].items():
                lines.append(f"            {field_name!r}: {value!r},")
            lines.append("        },")
        lines.append("    },")
    start = text.index("\n", text.index(BEGIN)) + 1
    stop = text.index(END)
    return text[:start] + "".join(f"{line}\n" for line in lines).replace("'", '"') + text[stop:]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", default=DEFAULT_KERNELS, help=f"default {DEFAULT_KERNELS}")
    p.add_argument("--size", default="tiling", help="bench.py's size class (default tiling)")
    p.add_argument(
        "--check-sizes",
        default="tiling,l3",
        help="sizes where the chosen tiles must not lose to gcc (default tiling,l3)",
    )
    p.add_argument("--margin", type=float, default=0.05, help="least gain over the model's (0.05)")
    p.add_argument("--dry-run", action="store_true", help="measure, but write nothing")
    bench.add_common_options(p)
    p.set_defaults(reps=5, best=True)  # the best of the repetitions: noise only adds time
    args = p.parse_args(argv)
    by_name = {k.name: k for k in bench.KERNELS}
    unknown = [k for k in args.kernels.split(",") if k not in by_name]
    if unknown:
        p.error(f"unknown kernel: {', '.join(unknown)}")
    kernels = [by_name[k] for k in args.kernels.split(",") if args.size in by_name[k].sizes]
    pycc = args.pycc or bench.default_pycc()
    if not pycc:
        sys.exit("tune_tile_sizes.py: pycc-stencil not found (pass --pycc PATH)")
    args.threads, args.variants, args.pycc_passes = [1], ["pycc-tile"], []
    args.check_sizes = args.check_sizes.split(",")

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    text = TABLE.read_text()
    table = read_table(text)
    with bench.build_directory(args.keep, prefix="pycc-tune-") as build:
        classes = classes_of(kernels, pycc, build, log)
        for cls in classes.values():
            entry = tune_class(cls, pycc, build, args, log)
            entries = table.setdefault(cls.key, {})
            model = "x".join(map(str, cls.model))
            if entry is None:
                entries.pop(cls.name, None)
                print(f"{cls.key}: {cls.name}: the model's {model}")
            elif entry["sizes"] is None:
                entries[cls.name] = entry
                print(f"{cls.key}: {cls.name}: no tiles (gcc's speed: {entry['against_gcc']})")
            else:
                entries[cls.name] = entry
                sizes = "x".join(map(str, entry["sizes"]))
                print(f"{cls.key}: {cls.name}: {sizes}, {entry['speedup']}x the model's {model}")
            if not entries:
                del table[cls.key]
    if not args.dry_run:
        TABLE.write_text(write_table(text, table))
        print(f"written: {TABLE.relative_to(REPOSITORY)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
