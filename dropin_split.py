"""The translation unit `cc` compiles once pycc-stencil has taken some kernels over.

It is the very unit pycc-stencil lowered (`cc -E` output: every macro, include and
conditional already resolved by cc), with each taken-over definition replaced, in place, by
- a declaration of the kernel (an external kernel is then defined by pycc-stencil's object),
  or for a `static` kernel a `static` trampoline that calls the hidden global symbol
  pycc-stencil's object defines, so internal linkage and same-file callers keep working;
- the pragmas written inside its body that act beyond it (`#pragma pack`, ...), which
  cc must still see at that point of the unit;
and a line marker after it, so everything after the body keeps its file and line for debug
info and `__LINE__`-free code alike. (Diagnostics do not come from this unit: the driver
has `cc` compile the original file for them, so they are exactly cc's.)

A `static` global a taken-over kernel uses gets, at the end of the unit, a hidden alias
(`global_aliases`): a global symbol of the same storage, which pycc-stencil's object refers to
(gcc accepts an alias of a static definition of the same unit, and no longer assumes it knows
every access to the variable).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .frontend.line_markers import LineMarkers, line_of

if TYPE_CHECKING:  # the driver imports this module on every compile: no LLVM here
    from .dropin_takeover import Takeover

_STORAGE_WORDS = re.compile(rb"\b(static|extern|inline|__inline|__inline__)\b")
_PRAGMA_LINE = re.compile(rb"^[ \t]*#[ \t]*pragma\b.*$", re.MULTILINE)
#: pragmas that apply to the statement after them only (an error or no-op at file scope)
_STATEMENT_PRAGMA = re.compile(rb"#[ \t]*pragma[ \t]+(omp|acc|GCC[ \t]+(ivdep|unroll|novector))\b")


def split_source(
    text: bytes, takeovers: list[Takeover], globals_as: dict[str, str] | None = None
) -> bytes:
    """The preprocessed unit `text` with every taken-over definition replaced as the module
    doc describes; `globals_as` maps the mutable globals the kernels use to their symbols."""
    markers = LineMarkers(text)
    out = text
    for takeover in sorted(takeovers, key=lambda t: t.info.definition.start, reverse=True):
        where = takeover.info.definition
        signature = text[where.start : where.body_start]
        body = text[where.body_start : where.body_end]
        name_at = (where.name_start - where.start, where.name_end - where.start)
        first = markers.origin(line_of(text, where.start))
        if takeover.dispatched:
            parts = [_try_declaration(takeover, signature, name_at)]
            parts.append(b"\n" + first.marker() + signature + _dispatching(takeover, body))
        else:
            parts = [_declaration(takeover, signature, name_at)]
        if takeover.is_static and not takeover.dispatched:
            parts.append(b"\n" + first.marker() + signature + _trampoline(takeover))
        if not takeover.dispatched:  # (else they are still in the body)
            parts += [m.group() for m in _PRAGMA_LINE.finditer(body) if not _statement_only(m)]
        last = markers.origin(line_of(text, where.body_end - 1))
        replacement = b"\n".join(parts) + b"\n" + last.marker()
        out = out[: where.start] + replacement + out[where.body_end :]
    return out + global_aliases(globals_as or {})


def may_dispatch(text: bytes, takeover: Takeover) -> bool:
    """Can cc's definition of the kernel call a try of it (`dropin_original`): a prototype
    whose parameters all have names, no variable arguments?"""
    where = takeover.info.definition
    signature = text[where.start : where.body_start]
    parameters = _parameter_list(signature, where.name_end - where.start)
    return (
        parameters is not None
        and b"..." not in parameters
        and all(p.name for p in takeover.info.params)
        and _without_identifier_list(signature, where.name_end - where.start) == signature
    )


def _parameter_list(signature: bytes, name_end: int) -> bytes | None:
    """The text between the parentheses after the name, or None."""
    open_at = signature.find(b"(", name_end)
    depth = 0
    for index in range(max(open_at, 0), len(signature)):
        depth += {ord("("): 1, ord(")"): -1}.get(signature[index], 0)
        if depth == 0:
            return signature[open_at + 1 : index] if open_at >= 0 else None
    return None


def _try_declaration(takeover: Takeover, signature: bytes, name_at: tuple[int, int]) -> bytes:
    """`int TRY([void *result,] the kernel's parameters);`, hidden."""
    parameters = (_parameter_list(signature, name_at[1]) or b"").strip()
    if parameters in (b"", b"void"):
        parameters = b"void *" if takeover.returns_value else b"void"
    elif takeover.returns_value:
        parameters = b"void *, " + parameters
    return (
        b'__attribute__((__visibility__("hidden"))) extern int '
        + takeover.symbol.encode()
        + b"("
        + parameters
        + b");"
    )


def _dispatching(takeover: Takeover, body: bytes) -> bytes:
    """The kernel's body behind a call of its try: `{ if (try(...)) return; {body} }`, the
    result kept in a declaration at the start of the block, so C90 accepts it too."""
    arguments = ", ".join(p.name for p in takeover.info.params)
    name, symbol = takeover.info.name, takeover.symbol
    if takeover.returns_value:
        result = "__pycc_result"
        head = (
            f"{{ __typeof__({name}({arguments})) {result}; "
            f"if ({symbol}(&{result}{', ' if arguments else ''}{arguments})) return {result}; "
        )
    else:
        head = f"{{ if ({symbol}({arguments})) return; "
    return head.encode() + body + b" }"


def global_aliases(globals_as: dict[str, str]) -> bytes:
    """The hidden alias of each global whose symbol is not its own name (a `static` one)."""
    lines = [
        f'extern __typeof__({name}) {symbol} __attribute__((alias("{name}"), '
        'visibility("hidden")));\n'
        for name, symbol in globals_as.items()
        if symbol != name
    ]
    return ("\n" if lines else "").encode() + "".join(lines).encode()


def _statement_only(pragma: re.Match) -> bool:
    return _STATEMENT_PRAGMA.match(pragma.group().lstrip()) is not None


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
