"""Alignment declarations in C: `#pragma pycc row_align(N)` and `__attribute__((aligned(N)))`.

libclang exposes neither unknown pragmas nor the argument of `aligned` on a variable, so the
pragma is read from the source text (the line immediately before a function definition, only
blank lines and comments between) and the attribute from its tokens. What they declare is
written on the IR with `ir_passes.alignment` (the one place that defines the encoding), so the
passes see it whatever front end produced the IR.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import clang.cindex as ci

from ..diagnostics import SourceLocation, error
from ..ir_passes.core.alignment import declare_row_alignment, is_power_of_two
from .signature import LoweredModule

_PRAGMA = re.compile(r"^\s*#\s*pragma\s+pycc\b(?P<rest>.*)$")
_ROW_ALIGN = re.compile(r"^\s*row_align\s*\(\s*(?P<n>[0-9]+)\s*\)\s*(//.*|/\*.*\*/\s*)?$")
_COMMENT_LINE = re.compile(r"^\s*(//.*|/\*.*\*/\s*)?$")


def parse_row_align(text: str, where: SourceLocation | None = None) -> int:
    """A row alignment value: a power of two (from a pragma or a command-line option)."""
    try:
        value = int(text, 10)
    except ValueError:
        raise error(f"row_align: '{text}' is not an integer", where) from None
    if not is_power_of_two(value):
        raise error(f"row_align({value}): the alignment must be a power of two", where)
    return value


def row_align_pragmas(
    path: str,
    source: str,
    definitions: dict[str, int],
    locate: Callable[[int, int], SourceLocation] | None = None,
) -> dict[str, int]:
    """The `row_align` of each function of `definitions` (name -> first line of its definition)
    that has `#pragma pycc row_align(N)` immediately before it. Every `#pragma pycc` line is
    checked: a malformed one, or one not followed by a function definition, is an error
    (at `locate(line, column)`: the user's position when `source` is a preprocessed unit)."""
    if locate is None:

        def locate(line: int, column: int) -> SourceLocation:
            return SourceLocation(path, line, column)

    lines = source.splitlines()
    pragmas: dict[int, int] = {}  # line -> N
    for number, line in enumerate(lines, start=1):
        match = _PRAGMA.match(line)
        if not match:
            continue
        where = locate(number, line.index("#") + 1)
        rest = match.group("rest")
        row = _ROW_ALIGN.match(rest)
        if row is None:
            raise error(
                f"unknown or malformed '#pragma pycc{rest}' (expected 'row_align(N)')", where
            )
        pragmas[number] = parse_row_align(row.group("n"), where)
    found: dict[str, int] = {}
    for name, start in definitions.items():
        line = start - 1
        while line >= 1 and line not in pragmas and _COMMENT_LINE.match(lines[line - 1]):
            line -= 1
        if line in pragmas:
            found[name] = pragmas.pop(line)
    if pragmas:
        line = min(pragmas)
        raise error(
            "'#pragma pycc row_align' must immediately precede a function definition",
            locate(line, lines[line - 1].index("#") + 1),
        )
    return found


def apply_row_align(lowered: LoweredModule, alignment: int | None) -> None:
    """`--row-align N` / `-fpycc-row-align=N`: declare `row_align(N)` for every kernel of the
    file that has no `#pragma pycc row_align` of its own."""
    if alignment is None:
        return
    for name, info in list(lowered.functions.items()):
        if info.is_kernel and info.row_align is None:
            declare_row_alignment(lowered.module.get_global(name), alignment)
            lowered.functions[name] = dataclasses.replace(info, row_align=alignment)


def aligned_attribute(cursor: ci.Cursor) -> int:
    """N of `__attribute__((aligned(N)))` on a declaration (an integer literal; the largest
    alignment, 16, without an argument), or 1."""
    alignment = 1
    for child in cursor.get_children():
        if child.kind != ci.CursorKind.ALIGNED_ATTR:
            continue
        tokens = [t.spelling for t in child.get_tokens()]
        numbers = [int(t, 0) for t in tokens if re.fullmatch(r"[0-9][0-9a-fA-FxX]*[uUlL]*", t)]
        alignment = max(alignment, numbers[0] if numbers else 16)
    return alignment


def type_alignment(clang_type: ci.Type) -> int:
    """The alignment of a C type if a typedef or attribute raised it above its natural one
    (`typedef float f8 __attribute__((aligned(8)))`), else 1."""
    declared = clang_type.get_align()
    natural = clang_type.get_canonical().get_align()
    return declared if declared > 0 and declared > natural else 1
