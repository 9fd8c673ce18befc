"""Columns of the user's file for positions in a preprocessed unit.

Compiler mode lowers the unit `cc -E` wrote, whose line markers give each line the user's
file and line, but whose columns are not the user's: cc's preprocessor collapses white space,
drops comments and expands macros. A column is mapped back by aligning the tokens of the
unit's line with those of the user's line: a token in the common prefix or suffix of the two
sequences is the same token, and a token between them comes from a macro expansion, reported
at the macro's name as compilers report it. Without a common token (another file, `#line`
into unrelated text) the column stays as it is.
"""

from __future__ import annotations

import bisect
import contextlib
import contextvars
import functools
import os
import re
from collections.abc import Callable, Iterator
from typing import TypeVar

#: white space and comments, or one C token (approximately: enough to align two spellings)
_TOKEN = re.compile(
    rb"""(?P<skip>\s+|/\*.*?\*/|/\*.*|//.*)
    |[A-Za-z_]\w*|\.?\d(?:[eEpP][+-]|[\w.])*
    |"(?:\\.|[^"\\])*"?|'(?:\\.|[^'\\])*'?
    |<<=|>>=|\.\.\.|->|\+\+|--|<<|>>|&&|\|\||\#\#|[-+*/%&|^!=<>]=|[^\s]""",
    re.VERBOSE,
)


def _tokens(line: bytes) -> list[tuple[int, bytes]]:
    """(offset, spelling) of each token of one line."""
    return [(m.start(), m.group()) for m in _TOKEN.finditer(line) if m.lastgroup != "skip"]


@functools.lru_cache(maxsize=8)
def _lines(path: str, stamp: tuple[int, int]) -> list[bytes]:
    with open(path, "rb") as handle:
        return handle.read().split(b"\n")


def user_column(unit: str, unit_line: int, user: str, line: int, column: int) -> int:
    """The column in `user`'s line `line` of the position at `column` (1-based) of line
    `unit_line` of the preprocessed `unit`."""
    try:
        stamps = (_stamp(unit), _stamp(user))
    except OSError:
        return column
    alignment = _alignment(unit, unit_line, user, line, stamps)
    return column if alignment is None else alignment.column(column)


def aligned_column(unit_text: bytes, written: bytes, column: int) -> int:
    """`column` of `unit_text` as a column of `written`, the same line as the user wrote it."""
    return _Alignment(unit_text, written).column(column)


_T = TypeVar("_T")

#: facts of the files of the unit being lowered (`one_unit`), by kind and key
_UNIT: contextvars.ContextVar[dict | None] = contextvars.ContextVar("unit", default=None)


@contextlib.contextmanager
def one_unit() -> Iterator[None]:
    """While one unit is lowered its files do not change: each is looked at once (the front
    end asks for a position per expression; a stat per position was a tenth of lowering)."""
    token = _UNIT.set({})
    try:
        yield
    finally:
        _UNIT.reset(token)


def unit_memo(key: object, compute: Callable[[], _T]) -> _T:
    """`compute()`, once per `key` while `one_unit` is in force."""
    memo = _UNIT.get()
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def _stamp(path: str) -> tuple[int, int]:
    def stat() -> tuple[int, int]:
        status = os.stat(path)
        return status.st_mtime_ns, status.st_size

    return unit_memo(("stamp", path), stat)


@functools.lru_cache(maxsize=4096)
def _alignment(unit: str, unit_line: int, user: str, line: int, stamps: tuple) -> _Alignment | None:
    """One alignment per pair of lines: a statement has many positions on one long line."""
    written, unit_text = _line(user, line, stamps[1]), _line(unit, unit_line, stamps[0])
    if written is None or unit_text is None:
        return None
    return _Alignment(unit_text, written)


def _line(path: str, number: int, stamp: tuple[int, int]) -> bytes | None:
    lines = _lines(path, stamp)
    return lines[number - 1] if 0 < number <= len(lines) else None


class _Alignment:
    """The tokens of a line of the unit, matched to those of the line as written: the common
    prefix and suffix are the same tokens; what lies between comes from a macro expansion."""

    def __init__(self, unit_text: bytes, written: bytes):
        self.ours, self.theirs = _tokens(unit_text), _tokens(written)
        ours, theirs = self.ours, self.theirs
        shortest = min(len(ours), len(theirs))
        prefix = 0
        while prefix < shortest and ours[prefix][1] == theirs[prefix][1]:
            prefix += 1
        suffix = 0
        while suffix < shortest - prefix and ours[-1 - suffix][1] == theirs[-1 - suffix][1]:
            suffix += 1
        self.prefix, self.suffix = prefix, suffix
        self.ends = [start + len(text) for start, text in ours]

    def column(self, column: int) -> int:
        ours, theirs = self.ours, self.theirs
        if not ours or not theirs or (self.prefix == 0 and self.suffix == 0):
            return column  # nothing in common: another text
        offset = column - 1
        index = bisect.bisect_right(self.ends, offset)
        if index == len(ours):  # past the last token: as far past the user's last token
            end = theirs[-1][0] + len(theirs[-1][1])
            return end + (offset - self.ends[-1]) + 1
        inside = max(offset - ours[index][0], 0)
        if index < self.prefix:
            return theirs[index][0] + inside + 1
        if index >= len(ours) - self.suffix:
            return theirs[index - len(ours) + len(theirs)][0] + inside + 1
        return theirs[min(self.prefix, len(theirs) - 1)][0] + 1
