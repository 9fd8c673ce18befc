"""The translation unit `cc` compiles once pycc-stencil has taken some kernels over.

Each taken-over definition is replaced, in place, by
- a declaration of the kernel (an external kernel is then defined by pycc-stencil's object),
  or for a `static` kernel a `static` trampoline that calls the hidden global symbol
  pycc-stencil's object defines, so internal linkage and same-file callers keep working;
`#line` directives keep every line of the file where it was, so `__LINE__` and the debug
info of the rest of the file are unchanged. (Diagnostics do not come from this file: the
driver has `cc` compile the original file for them, so they are exactly cc's.)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the driver imports this module on every compile: no LLVM here
    from .dropin_takeover import Takeover

_STORAGE_WORDS = re.compile(rb"\b(static|extern|inline|__inline|__inline__)\b")


def split_source(text: bytes, takeovers: list[Takeover], path: str) -> bytes:
    """`text` with every taken-over definition replaced as described in the module doc."""
    quoted = _quote(path)
    out = text
    for takeover in sorted(takeovers, key=lambda t: t.info.definition.start, reverse=True):
        where = takeover.info.definition
        signature = text[where.start : where.body_start]
        first_line = text.count(b"\n", 0, where.start) + 1
        last_line = text.count(b"\n", 0, where.body_end) + 1
        name_at = (where.name_start - where.start, where.name_end - where.start)
        parts = [_declaration(takeover, signature, name_at)]
        if takeover.is_static:
            parts.append(_line(first_line, quoted) + signature + _trampoline(takeover))
        replacement = b"\n".join(parts) + b"\n" + _line(last_line, quoted)
        out = out[: where.start] + replacement + out[where.body_end :]
    return _line(1, quoted) + out


def _declaration(takeover: Takeover, signature: bytes, name_at: tuple[int, int]) -> bytes:
    signature = _without_identifier_list(signature, name_at[1])
    if not takeover.is_static:  # `;` on a line of its own: the signature may end in a // comment
        return signature.rstrip() + b"\n;"
    renamed = _renamed(signature, name_at, takeover.symbol.encode())
    return (
        b'__attribute__((__visibility__("hidden"))) extern '
        + _STORAGE_WORDS.sub(b"", renamed).strip()
        + b"\n;"
    )


def _without_identifier_list(signature: bytes, name_end: int) -> bytes:
    """A K&R definition `f(a, n) float *a; int n;` is declared `f()`: still no prototype, so
    calls keep the default argument promotions the definition expects."""
    open_at = signature.find(b"(", name_end)
    depth, close_at = 0, -1
    for index in range(open_at, len(signature)):
        depth += {ord("("): 1, ord(")"): -1}.get(signature[index], 0)
        if depth == 0:
            close_at = index
            break
    if open_at < 0 or close_at < 0 or b";" not in signature[close_at:]:
        return signature
    return signature[: open_at + 1] + b")"


def _trampoline(takeover: Takeover) -> bytes:
    arguments = ", ".join(p.name for p in takeover.info.params)
    call = f"{takeover.symbol}({arguments});"
    return ("{ return " + call + " }" if takeover.returns_value else "{ " + call + " }").encode()


def _renamed(signature: bytes, name_at: tuple[int, int], name: bytes) -> bytes:
    return signature[: name_at[0]] + name + signature[name_at[1] :]


def _line(number: int, quoted_path: bytes) -> bytes:
    return b"\n#line %d %s\n" % (number, quoted_path)


def _quote(path: str) -> bytes:
    escaped = path.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'.encode("utf-8", "surrogateescape")
