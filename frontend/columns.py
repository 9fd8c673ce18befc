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

import functools
import os
import re

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


def _line(path: str, number: int) -> bytes | None:
    try:
        status = os.stat(path)
        lines = _lines(path, (status.st_mtime_ns, status.st_size))
    except OSError:
        return None
    return lines[number - 1] if 0 < number <= len(lines) else None


def user_column(unit: str, unit_line: int, user: str, line: int, column: int) -> int:
    """The column in `user`'s line `line` of the position at `column` (1-based) of line
    `unit_line` of the preprocessed `unit`."""
    written, unit_text = _line(user, line), _line(unit, unit_line)
    if written is None or unit_text is None:
        return column
    return aligned_column(unit_text, written, column)


def aligned_column(unit_text: bytes, written: bytes, column: int) -> int:
    """`column` of `unit_text` as a column of `written`, the same line as the user wrote it."""
    ours, theirs = _tokens(unit_text), _tokens(written)
    if not ours or not theirs:
        return column
    offset = column - 1
    index = next((k for k, (start, text) in enumerate(ours) if offset < start + len(text)), None)
    if index is None:  # past the last token: as far past the user's last token
        start, text = ours[-1]
        end = theirs[-1][0] + len(theirs[-1][1])
        return end + (offset - start - len(text)) + 1
    inside = max(offset - ours[index][0], 0)
    prefix = 0
    while prefix < min(len(ours), len(theirs)) and ours[prefix][1] == theirs[prefix][1]:
        prefix += 1
    suffix = 0
    room = min(len(ours), len(theirs)) - prefix
    while suffix < room and ours[-1 - suffix][1] == theirs[-1 - suffix][1]:
        suffix += 1
    if index < prefix:
        return theirs[index][0] + inside + 1
    if index >= len(ours) - suffix:
        return theirs[index - len(ours) + len(theirs)][0] + inside + 1
    if prefix == 0 and suffix == 0:
        return column
    return theirs[min(prefix, len(theirs) - 1)][0] + 1
