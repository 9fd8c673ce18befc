"""Array initializers (`{...}` lists) and the constant folding that file-scope tables need."""

from __future__ import annotations

import math
import struct

import clang.cindex as ci

from . import c_types as ct
from .clang_ast import K, binary_operator, children, constant_value, unary_operator
from .clang_types import ctype_of
from .unsupported import Unsupported


def flatten(init: ci.Cursor, array: ct.ArrayType) -> dict[int, ci.Cursor]:
    """Map each initialized scalar slot (row-major index) of `array` to its expression.

    Fully braced (`{{1,2},{3,4}}`) and fully flat (`{1,2,3,4}`) lists are accepted; slots
    that are not mentioned are zero, as in C.
    """
    dims = [int(d) for d in array.dims]  # the caller guarantees constant dimensions
    if init.kind == K.STRING_LITERAL:
        raise Unsupported("arrays initialized by a string literal are not supported", init)
    if init.kind != K.INIT_LIST_EXPR:
        raise Unsupported("array initializer is not a brace-enclosed list", init)
    items = children(init)
    braced = [item.kind == K.INIT_LIST_EXPR for item in items]
    if len(dims) > 1 and any(braced) and not all(braced):
        raise Unsupported("partly braced initializers are not supported", init)
    if len(dims) > 1 and not any(braced):
        if len(items) > math.prod(dims):
            raise Unsupported("too many initializers for this array", init)
        return dict(enumerate(items))
    slots: dict[int, ci.Cursor] = {}

    def fill(cursor: ci.Cursor, depth: int, base: int) -> None:
        entries = children(cursor)
        if len(entries) > dims[depth]:
            raise Unsupported("too many initializers (or designators) for this array", cursor)
        stride = math.prod(dims[depth + 1 :])
        for position, item in enumerate(entries):
            if depth + 1 == len(dims):
                slots[base + position] = item
            elif item.kind == K.INIT_LIST_EXPR:
                fill(item, depth + 1, base + position * stride)
            else:
                raise Unsupported("partly braced initializers are not supported", item)

    fill(init, 0, 0)
    return slots


def fold(cursor: ci.Cursor, target: ct.CType) -> int | float:
    """The value of a constant expression converted to `target`, with C's rounding."""
    if not target.is_arithmetic:
        raise Unsupported(f"constant initializer of type {target} is not supported", cursor)
    value, _ = _fold(cursor)
    return _convert(value, target)


def _fold(c: ci.Cursor) -> tuple[int | float, ct.CType]:
    t = ctype_of(c.type, c)
    if not t.is_arithmetic:
        raise Unsupported(f"constant of type {t} is not supported", c)
    kind = c.kind
    if kind in (K.INTEGER_LITERAL, K.FLOATING_LITERAL, K.CHARACTER_LITERAL, K.CXX_UNARY_EXPR):
        value = constant_value(c)
        if value is not None:
            return _convert(value, t), t
    elif kind == K.DECL_REF_EXPR and c.referenced.kind == K.ENUM_CONSTANT_DECL:
        return _convert(c.referenced.enum_value, t), t
    elif kind in (K.PAREN_EXPR, K.UNEXPOSED_EXPR, K.CSTYLE_CAST_EXPR):
        inner = [k for k in children(c) if k.kind.is_expression()]
        if len(inner) == 1:
            value, _ = _fold(inner[0])
            return _convert(value, t), t
    elif kind == K.UNARY_OPERATOR and unary_operator(c) in ("-", "+"):
        value, _ = _fold(children(c)[0])
        return _convert(-value if unary_operator(c) == "-" else value, t), t
    elif kind == K.BINARY_OPERATOR and binary_operator(c) in ("+", "-", "*", "/"):
        (a, _), (b, _) = (_fold(k) for k in children(c))
        op = binary_operator(c)
        if op == "/" and isinstance(t, ct.IntType):
            quotient = abs(a) // abs(b)
            return _convert(quotient if (a >= 0) == (b >= 0) else -quotient, t), t
        result = {"+": a + b, "-": a - b, "*": a * b}[op] if op != "/" else _divide(a, b)
        return _convert(result, t), t
    raise Unsupported("initializer is not a constant expression", c)


def _divide(a: float, b: float) -> float:
    """IEEE division, as gcc folds a static initializer: `0.0 / 0.0` is a NaN without the
    sign bit (gcc's own, not the machine's), `x / 0.0` an infinity signed by both."""
    if b != 0 or math.isnan(b):
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _convert(value: int | float, t: ct.CType) -> int | float:
    if isinstance(t, ct.FloatType):
        value = float(value)
        return struct.unpack("f", struct.pack("f", value))[0] if t.bits == 32 else value
    if isinstance(t, ct.IntType):
        if t.is_bool:
            return int(value != 0)
        integer = int(value)  # truncates toward zero, as C converts floating to integer
        mask = (1 << t.bits) - 1
        integer &= mask
        if t.signed and integer >> (t.bits - 1):
            integer -= 1 << t.bits
        return integer
    raise TypeError(f"no constant conversion to {t}")
