"""The floating-point classification builtins that <math.h>'s macros expand to.

`isinf`, `isfinite`, `isnormal`, `signbit`, `fpclassify` and the quiet comparisons
(`isgreater`, ..., `isunordered`) are gcc/clang builtins with no side effects; they are lowered
inline, with the values gcc gives them on x86-64 (the reference is built by the system
compiler): `signbit` is the raw sign bit of a float (as an int) and 0/1 for a double.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from llvmlite import ir

from . import c_types as ct
from .conversions import int_result

I32 = ir.IntType(32)

_QUIET_COMPARISONS = {
    "isgreater": ">",
    "isgreaterequal": ">=",
    "isless": "<",
    "islessequal": "<=",
    "islessgreater": "!=",  # ordered and unequal: fcmp one
}


def _abs(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.call(b.module.declare_intrinsic("llvm.fabs", [x.type]), [x])


def _smallest_normal(t: ir.Type) -> ir.Constant:
    return ir.Constant(t, 2.0**-126 if isinstance(t, ir.FloatType) else 2.0**-1022)


def _sign_bit(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    if isinstance(x.type, ir.FloatType):
        bits = b.bitcast(x, I32)
        return b.and_(bits, ir.Constant(I32, -(1 << 31)))
    bits = b.bitcast(x, ir.IntType(64))
    return b.trunc(b.lshr(bits, ir.Constant(ir.IntType(64), 63)), I32)


def _is_inf(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fcmp_ordered("==", _abs(b, x), ir.Constant(x.type, math.inf))


def _isinf_sign(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    bits = ir.IntType(32 if isinstance(x.type, ir.FloatType) else 64)
    negative = b.icmp_signed("<", b.bitcast(x, bits), ir.Constant(bits, 0))
    sign = b.select(negative, ir.Constant(I32, -1), ir.Constant(I32, 1))
    return b.select(_is_inf(b, x), sign, ir.Constant(I32, 0))


def _isfinite(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return int_result(b, b.fcmp_ordered("<", _abs(b, x), ir.Constant(x.type, math.inf)))


def _isnormal(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    a = _abs(b, x)
    finite = b.fcmp_ordered("<", a, ir.Constant(x.type, math.inf))
    normal = b.fcmp_ordered(">=", a, _smallest_normal(x.type))
    return int_result(b, b.and_(finite, normal))


def _fpclassify(b: ir.IRBuilder, args: list[ir.Value]) -> ir.Value:
    """`__builtin_fpclassify(nan, infinite, normal, subnormal, zero, x)`."""
    nan, infinite, normal, subnormal, zero, x = args
    a = _abs(b, x)
    result = b.select(b.fcmp_ordered("==", a, ir.Constant(x.type, 0.0)), zero, subnormal)
    result = b.select(b.fcmp_ordered(">=", a, _smallest_normal(x.type)), normal, result)
    result = b.select(b.fcmp_ordered("==", a, ir.Constant(x.type, math.inf)), infinite, result)
    return b.select(b.fcmp_unordered("uno", x, x), nan, result)


_ONE_ARGUMENT: dict[str, Callable[[ir.IRBuilder, ir.Value], ir.Value]] = {
    "isinf_sign": _isinf_sign,
    "isinf": lambda b, x: int_result(b, _is_inf(b, x)),
    "isfinite": _isfinite,
    "isnormal": _isnormal,
    "signbit": _sign_bit,
    "signbitf": _sign_bit,
}

NAMES = frozenset({*_ONE_ARGUMENT, *_QUIET_COMPARISONS, "isunordered", "fpclassify"})


def lower(b: ir.IRBuilder, name: str, args: list[ir.Value]) -> tuple[ir.Value, ct.CType]:
    """The int result of classification builtin `name` (one of `NAMES`)."""
    if name in _ONE_ARGUMENT:
        return _ONE_ARGUMENT[name](b, args[0]), ct.INT
    if name == "fpclassify":
        return _fpclassify(b, args), ct.INT
    x, y = args
    if name == "isunordered":
        return int_result(b, b.fcmp_unordered("uno", x, y)), ct.INT
    return int_result(b, b.fcmp_ordered(_QUIET_COMPARISONS[name], x, y)), ct.INT
