"""Innermost loops of LLVM's verbose assembly, for the back-end feedback of `tune`.

With `set_asm_verbosity(True)` LLVM's AsmPrinter marks every loop header with a comment,
`=>  This Inner Loop Header: Depth=2` for an innermost loop, on the lines that follow the
header block's label. The loop body runs from that label to the first branch back to it (a
conditional jump naming the label, or, for a Hexagon hardware loop, the packet closed by
`:endloop0`). This is the same for every target, so the Hexagon oracle and the host cost
model read loops the same way and differ only in how they count what is inside.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_FUNCTION = re.compile(r"^\s*\.type\s+([\w.$]+),\s*[@%]function")
#: a label starts in column 0 (instructions are indented; `r9:8 = ...` is not a label)
_LABEL = re.compile(r"^([\w.$]+):")
_INNER_HEADER = "This Inner Loop Header"


@dataclass
class AsmLoop:
    """One innermost loop: its header label and its lines (comments and directives removed,
    except `.loc`, kept as `source_lines`)."""

    label: str
    lines: list[str] = field(default_factory=list)
    source_lines: set[int] = field(default_factory=set)
    #: lines with a register spill or reload inside the loop (AsmPrinter's comments)
    spills: int = 0


def _strip_comment(line: str, comment: str) -> str:
    index = line.find(comment)
    return line if index < 0 else line[:index]


def functions(assembly: str) -> dict[str, list[str]]:
    """Assembly lines per function, from its `.type NAME,@function` to the next one."""
    result: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in assembly.splitlines():
        match = _FUNCTION.match(line)
        if match:
            current = result.setdefault(match.group(1), [])
            continue
        if current is not None:
            current.append(line)
    return result


def innermost_loops(lines: list[str], comment: str) -> list[AsmLoop]:
    """The innermost loops of one function's lines, in assembly order."""
    loops = []
    for index, line in enumerate(lines):
        if _INNER_HEADER not in line:
            continue
        start = index
        while start >= 0 and not _LABEL.match(lines[start]):
            start -= 1
        if start < 0:
            continue
        label = _LABEL.match(lines[start]).group(1)
        loop = AsmLoop(label)
        back = re.compile(rf"(?<![\w.$]){re.escape(label)}(?![\w$])")
        for raw in lines[start + 1 :]:
            if "Spill" in raw or "Reload" in raw:
                loop.spills += 1
            stripped = raw.strip()
            loc = re.match(r"\.loc\s+\d+\s+(\d+)", stripped)
            if loc:
                loop.source_lines.add(int(loc.group(1)))
            code = _strip_comment(raw, comment).strip()
            if not code or code.startswith(".") or _LABEL.match(raw):
                continue
            loop.lines.append(code)
            if ":endloop0" in code or (back.search(code) and "loop0(" not in code):
                break
        loops.append(loop)
    return loops
