"""Where each line of a preprocessed translation unit (`cc -E` output) comes from.

The drop-in compiler lowers and splits the unit `cc -E` made, not the user's file, so that
both halves see exactly the program cc compiles. GNU line markers (`# 12 "k.c" 2`) say
which file and line each following line stands for: the flag 1 enters an included file,
2 returns to the includer. A line is *in the main file* when no include is open, whatever
`#line` renamed it to: that is what "written out in the file" means for a kernel.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_PATTERN = r'^# (\d+) ("(?:[^"\\\n]|\\.)*")((?: [1-4])*)[ \t]*$'
_MARKER = re.compile(_PATTERN.encode(), re.MULTILINE)
_MARKER_TEXT = re.compile(_PATTERN, re.MULTILINE)


@dataclass(frozen=True)
class Origin:
    """The source position one physical line of the unit stands for."""

    quoted_file: bytes  # as the marker spells it, quotes and escapes included
    line: int
    in_main_file: bool

    def marker(self) -> bytes:
        """A line marker that makes the next line of a unit this position."""
        return b"# %d %s\n" % (self.line, self.quoted_file)


class LineMarkers:
    """The line markers of one preprocessed unit, for mapping its lines back."""

    def __init__(self, text: bytes):
        #: physical line of the first line after each marker, and its origin
        self._lines: list[int] = [1]
        self._origins: list[Origin] = [Origin(b'""', 1, True)]
        depth = 0
        physical = 1
        position = 0
        for match in _MARKER.finditer(text):
            physical += text.count(b"\n", position, match.start()) + 1
            position = match.end() + 1
            flags = match.group(3).split()
            depth += (b"1" in flags) - (b"2" in flags)
            self._lines.append(physical)
            self._origins.append(Origin(match.group(2), int(match.group(1)), depth <= 0))
        main = next((o.quoted_file for o in self._origins[1:2]), b'""')
        self.main_file = _unquote(main)

    def origin(self, physical_line: int) -> Origin:
        """The file and line that physical line `physical_line` (1-based) of the unit is."""
        index = bisect.bisect_right(self._lines, physical_line) - 1
        start, origin = self._lines[index], self._origins[index]
        return Origin(origin.quoted_file, origin.line + physical_line - start, origin.in_main_file)


def system_header_ranges(text: bytes) -> list[tuple[int, int]]:
    """The byte ranges of the unit that are system headers (markers with the flag 3), in
    order."""
    ranges = []
    matches = list(_MARKER.finditer(text))
    for match, following in zip(matches, [*matches[1:], None]):
        if b"3" in match.group(3).split():
            end = following.start() if following is not None else len(text)
            ranges.append((match.end(), end))
    return ranges


def without_markers(text: str) -> str:
    """`text` with its line markers blanked (every other line keeps its number)."""
    return _MARKER_TEXT.sub("", text)


def line_of(text: bytes, offset: int) -> int:
    """The 1-based physical line of byte `offset`."""
    return text.count(b"\n", 0, offset) + 1


def _unquote(quoted: bytes) -> str:
    """A marker's file name: cpp escapes `\\` and `"` (and nothing else) with a backslash."""
    return re.sub(rb"\\(.)", rb"\1", quoted[1:-1]).decode("utf-8", "surrogateescape")
