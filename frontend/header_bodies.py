"""Blanking the bodies of system-header functions nothing in a unit calls, before libclang
reads a preprocessed unit.

`#include <immintrin.h>` puts some 6000 inline intrinsics into a `cc -E` unit; libclang
parses each body (with thousands of errors: they use gcc's own builtins) although a kernel
calls none or a few. libclang's `PARSE_SKIP_FUNCTION_BODIES` would skip the main file's
bodies too (a preprocessed unit is one file), so the text is changed instead: a body of a
function defined in a system header (line marker flag 3) whose name appears nowhere outside
such bodies, nor in the body of one that is kept, becomes blanks. Every byte offset and line
stays where it was (the split cuts cc's copy of the unit at the same offsets), and a kept
body is exactly as cc sees it: only functions no kernel can reach change.
"""

from __future__ import annotations

import bisect
import re

from .line_markers import system_header_ranges

#: what can hide a brace (literals, comments of `cc -E -C`), and braces
_BRACES = re.compile(
    rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?\*/|//[^\n]*|[{}]', re.DOTALL
)
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
_SPACE = frozenset(b" \t\r\n")
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
#: words before a parenthesis after a parameter list
_NOT_NAMES = frozenset({b"__attribute__", b"__attribute", b"__asm__", b"__asm", b"asm"})
#: `bytes.translate` table: every byte a space, but line ends stay
_BLANKS = bytes(byte if byte == ord("\n") else ord(" ") for byte in range(256))


def without_unused_header_bodies(text: bytes) -> tuple[bytes, frozenset[int]]:
    """`text` with the bodies of unreachable system-header functions blanked (see above),
    and the offsets of the blanked bodies' `{` (lowering one would be a bug: it says so)."""
    ranges = system_header_ranges(text)
    if not ranges:
        return text, frozenset()
    starts = [start for start, _ in ranges]
    bodies = [b for b in _function_bodies(text) if _inside(ranges, starts, b[1])]
    by_name: dict[bytes, list[tuple[int, int]]] = {}
    for name, start, end in bodies:
        by_name.setdefault(name, []).append((start, end))
    # what the main file and user headers name (a system header's own code is no kernel)
    position, roots = 0, set()
    for start, end in ranges:
        roots.update(_IDENTIFIER.findall(text, position, start))
        position = end
    roots.update(_IDENTIFIER.findall(text, position))
    pending = roots & by_name.keys()
    kept: set[bytes] = set()
    while pending:
        name = pending.pop()
        kept.add(name)
        for start, end in by_name[name]:
            pending |= (set(_IDENTIFIER.findall(text, start, end)) & by_name.keys()) - kept
    out, blanked = bytearray(text), set()
    for name, spans in by_name.items():
        if name not in kept:
            for start, end in spans:
                out[start + 1 : end - 1] = text[start + 1 : end - 1].translate(_BLANKS)
                blanked.add(start)
    return bytes(out), frozenset(blanked)


def _function_bodies(text: bytes) -> list[tuple[bytes, int, int]]:
    """(name, offset of `{`, one past `}`) of each file-scope `{...}` right after a `)`: a
    function definition's body (initializers follow `=`, struct bodies a name). A declarator
    whose name is not just before its parameter list (`int (*f(void))[4] {`) has no name
    here, and its body is kept."""
    found = []
    depth, start, name = 0, -1, b""
    for match in _BRACES.finditer(text):
        token = match.group()
        if token == b"{":
            if depth == 0:
                start, name = match.start(), _declared_name(text, match.start())
            depth += 1
        elif token == b"}" and depth > 0:
            depth -= 1
            if depth == 0 and name:
                found.append((name, start, match.end()))
    return found


def _declared_name(text: bytes, brace: int) -> bytes:
    """The name before the parameter list that ends just before `brace`, past attributes
    (glibc's `int f (int x) __attribute__ ((__nothrow__)) {`), or b"" if there is none."""
    end = brace
    while True:
        close = _skip_space(text, end) - 1
        if close < 0 or text[close] != ord(")"):
            return b""
        lowest, at, depth = max(0, close - 4096), close, 1
        while depth:
            at = max(text.rfind(b"(", lowest, at), text.rfind(b")", lowest, at))
            if at < 0:
                return b""
            depth += 1 if text[at] == ord(")") else -1
        name = _word_before(text, at)
        if name not in _NOT_NAMES:
            return name
        end = _skip_space(text, at) - len(name)


def _skip_space(text: bytes, end: int) -> int:
    while end > 0 and text[end - 1] in _SPACE:
        end -= 1
    return end


def _word_before(text: bytes, end: int) -> bytes:
    """The identifier just before `end` (white space between), or b""."""
    end = start = _skip_space(text, end)
    while start > 0 and text[start - 1] in _WORD:
        start -= 1
    return text[start:end] if start < end and not text[start : start + 1].isdigit() else b""


def _inside(ranges: list[tuple[int, int]], starts: list[int], offset: int) -> bool:
    index = bisect.bisect_right(starts, offset) - 1
    return index >= 0 and offset < ranges[index][1]
