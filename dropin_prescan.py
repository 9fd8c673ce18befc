"""Files the `-O3` locality passes cannot touch, told from cc's preprocessed tokens alone.

`time-tile-large` and `fuse-tile-large` transform only SCoPs (`polyhedral/scop.py`): nests of
loops that test their condition first, whose bodies have no condition (`if`, `switch`, `&&`,
`||` all branch in the front end's IR), no jump (`goto`, `break`, `continue`, `return`) and no
call but arithmetic ones (the math functions LLVM has intrinsics for). They need a nest of two
loops at least (a time loop around a sweep) or two nests in one function (a pipeline).

A file of which no function has such a nest is left to cc without loading libclang, LLVM or
isl: most files of a real project are (a codec, a library of utilities). The scan is
deliberately looser than the model (a `?:`, a typedef-named cast or an ill-formed bound pass
it), never stricter: every nest the passes transform passes the scan. Only the user's code is
read; functions of system headers are never kernels.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_TOKEN = re.compile(
    rb"//[^\n]*|/\*.*?\*/"  # comments (cc -E -C keeps them)
    rb'|"(?:\\.|[^"\\\n])*"'
    rb"|'(?:\\.|[^'\\\n])*'"
    rb"|[A-Za-z_]\w*|\d[\w.]*|&&|\|\||\S",
    re.S,
)
_LINE_MARKER = re.compile(rb"^#\s*(?:line\s+)?\d+\s*(\"(?:\\.|[^\"\\])*\")?([ \d]*)$")
_LOOPS = frozenset((b"for", b"while", b"do"))
#: tokens that put a nest outside the polyhedral model
_NOT_AFFINE = frozenset((b"if", b"switch", b"goto", b"break", b"continue", b"return", b"&&", b"||"))
#: words a `(` follows that are not calls
_NOT_CALLS = frozenset(
    b"if for while switch return sizeof _Alignof __alignof__ alignof typeof __typeof__ "
    b"__typeof __attribute__ __asm__ asm __extension__ _Generic __builtin_offsetof _Pragma "
    b"int char short long float double void signed unsigned _Bool const volatile restrict "
    b"__restrict struct union enum".split()
)
#: calls the front end lowers to arithmetic (LLVM intrinsics), with their float/long double forms
_ARITHMETIC_CALL = re.compile(
    rb"(?:__builtin_\w+|(?:sqrt|fabs|floor|ceil|trunc|round|rint|nearbyint|fma|fmin|fmax|"
    rb"copysign)[fl]?|abs|labs|llabs)$"
)
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*$")
#: the first word of a counter's declaration that makes it unsigned: the model needs loop tests
#: to be signed comparisons (C's and <stdint.h>'s names: a header cannot redefine them)
_UNSIGNED = frozenset(
    b"unsigned size_t uint8_t uint16_t uint32_t uint64_t uintptr_t uintmax_t _Bool".split()
)


def has_locality_nest(preprocessed: bytes) -> bool:
    """Could a function of this preprocessed unit have a nest the locality passes transform?"""
    tokens = _tokens(_user_code(preprocessed))
    return next(_candidate_bodies(tokens), None) is not None


def locality_candidates(preprocessed: bytes) -> set[str] | None:
    """The functions of the unit that may have such a nest (the only ones the front end need
    lower at -O3), or None when the name of one of them cannot be told."""
    tokens = _tokens(_user_code(preprocessed))
    names = set()
    for start, _ in _candidate_bodies(tokens):
        name = _function_name(tokens, start)
        if name is None:
            return None
        names.add(name.decode())
    return names


def _candidate_bodies(tokens: list[bytes]) -> Iterator[tuple[int, int]]:
    """(first, last) token of each top-level brace block with a candidate nest."""
    end = 0
    for start, token in enumerate(tokens):
        if start < end or token != b"{":
            continue
        end = _closing(tokens, start)
        if _has_candidate(tokens, start, end):
            yield start, end


#: words after a declarator's parameter list, before the body
_AFTER_DECLARATOR = frozenset((b"__attribute__", b"__asm__", b"asm", b"__asm"))


def _function_name(tokens: list[bytes], body: int) -> bytes | None:
    """The name declared by the definition whose body starts at `body`: the identifier before
    the last parameter list (after K&R parameter declarations, before attributes)."""
    index = body - 1
    while index >= 0:
        if tokens[index] != b")":
            index -= 1
            continue
        depth, opening = 0, index
        while opening >= 0:
            depth += {b")": 1, b"(": -1}.get(tokens[opening], 0)
            if depth == 0:
                break
            opening -= 1
        name = tokens[opening - 1] if opening > 0 else b""
        if name not in _AFTER_DECLARATOR:
            return name if _IDENTIFIER.match(name) else None
        index = opening - 2
    return None


def _user_code(preprocessed: bytes) -> bytes:
    """The unit without system headers' lines and without line markers and directives."""
    kept: list[bytes] = []
    system = False
    for line in preprocessed.split(b"\n"):
        stripped = line.lstrip()
        if not stripped.startswith(b"#"):
            if not system:
                kept.append(line)
            continue
        marker = _LINE_MARKER.match(stripped)
        if marker is not None and marker.group(1) is not None:
            system = b"3" in marker.group(2).split()
    return b"\n".join(kept)


def _tokens(code: bytes) -> list[bytes]:
    return [t for t in _TOKEN.findall(code) if not t.startswith((b"//", b"/*", b'"', b"'"))]


def _closing(tokens: list[bytes], start: int) -> int:
    """The index of the bracket closing the one at `start` (the last token if unbalanced)."""
    opening = tokens[start]
    closing = {b"{": b"}", b"(": b")", b"[": b"]"}[opening]
    depth = 0
    for index in range(start, len(tokens)):
        if tokens[index] == opening:
            depth += 1
        elif tokens[index] == closing:
            depth -= 1
            if depth == 0:
                return index
    return len(tokens) - 1


def _statement_end(tokens: list[bytes], start: int) -> int:
    """The last token of the statement that begins at `start`."""
    if start >= len(tokens):
        return len(tokens) - 1
    token = tokens[start]
    if token == b"{":
        return _closing(tokens, start)
    if token in (b"for", b"while", b"if", b"switch") and tokens[start + 1 : start + 2] == [b"("]:
        end = _statement_end(tokens, _closing(tokens, start + 1) + 1)
        if token == b"if" and tokens[end + 1 : end + 2] == [b"else"]:
            end = _statement_end(tokens, end + 2)
        return end
    if token == b"do":
        body_end = _statement_end(tokens, start + 1)
        if tokens[body_end + 2 : body_end + 3] == [b"("]:  # `while (`
            return _closing(tokens, body_end + 2) + 1
        return body_end
    depth = 0
    for index in range(start, len(tokens)):
        if tokens[index] in (b"(", b"["):
            depth += 1
        elif tokens[index] in (b")", b"]"):
            depth -= 1
        elif tokens[index] == b";" and depth <= 0:
            return index
    return len(tokens) - 1


def _has_candidate(tokens: list[bytes], start: int, end: int) -> bool:
    """Does `tokens[start..end]` (a function body) have a nest of two loops, or two nests, that
    the model may accept? Inside a loop it does not accept, its inner nests are looked at."""
    nests = 0
    index = start
    while index <= end:
        if tokens[index] not in _LOOPS:
            index += 1
            continue
        nest_end = _statement_end(tokens, index)
        if _affine_nest(tokens, index, nest_end):
            nests += 1
            loops = sum(1 for t in tokens[index : nest_end + 1] if t in _LOOPS)
            if loops >= 2 or nests >= 2:
                return True
        else:  # the inner nests, of the body only (not a `do`'s `while (...)`)
            body_end = _statement_end(tokens, index + 1) if tokens[index] == b"do" else nest_end
            if _has_candidate(tokens, index + 1, body_end):
                return True
        index = nest_end + 1
    return False


def _affine_nest(tokens: list[bytes], start: int, end: int) -> bool:
    """No token of the nest puts it outside the model (a `do` loop tests its condition last;
    a `for` that declares an unsigned counter compares without sign)."""
    previous = b""
    for index, token in enumerate(tokens[start : end + 1], start):
        if token in _NOT_AFFINE or token == b"do":
            return False
        if token == b"for" and tokens[index + 2 : index + 3] and tokens[index + 2] in _UNSIGNED:
            return False
        if (
            token == b"("
            and _IDENTIFIER.match(previous)
            and previous not in _NOT_CALLS
            and not _ARITHMETIC_CALL.match(previous)
        ):
            return False
        previous = token
    return True
