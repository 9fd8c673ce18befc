"""C conversions as LLVM instructions (C11 6.3): the one place that knows how a value of one
C type becomes another, so promotions and casts are exact everywhere in the front end."""

from __future__ import annotations

from llvmlite import ir

from . import c_types as ct


def convert(b: ir.IRBuilder, value: ir.Value, src: ct.CType, dst: ct.CType) -> ir.Value:
    """Convert `value` of C type `src` to C type `dst` with C semantics."""
    if src == dst:
        return value
    if isinstance(dst, ct.IntType) and dst.is_bool:
        return b.zext(truth_value(b, value, src), dst.llvm())
    if isinstance(src, ct.IntType) and isinstance(dst, ct.IntType):
        if src.bits == dst.bits:
            return value
        if src.bits > dst.bits:
            return b.trunc(value, dst.llvm())
        return b.sext(value, dst.llvm()) if src.signed else b.zext(value, dst.llvm())
    if isinstance(src, ct.IntType) and isinstance(dst, ct.FloatType):
        return b.sitofp(value, dst.llvm()) if src.signed else b.uitofp(value, dst.llvm())
    if isinstance(src, ct.FloatType) and isinstance(dst, ct.IntType):
        return b.fptosi(value, dst.llvm()) if dst.signed else b.fptoui(value, dst.llvm())
    if isinstance(src, ct.FloatType) and isinstance(dst, ct.FloatType):
        if src.bits < dst.bits:
            return b.fpext(value, dst.llvm())
        return b.fptrunc(value, dst.llvm()) if src.bits > dst.bits else value
    if isinstance(src, ct.PointerType) and isinstance(dst, ct.PointerType):
        return value
    if isinstance(src, ct.PointerType) and isinstance(dst, ct.IntType):
        return b.ptrtoint(value, dst.llvm())
    if isinstance(src, ct.IntType) and isinstance(dst, ct.PointerType):
        return b.inttoptr(value, dst.llvm())
    raise TypeError(f"no conversion from {src} to {dst}")


def truth_value(b: ir.IRBuilder, value: ir.Value, src: ct.CType) -> ir.Value:
    """`value != 0` as an i1 (C's test of a scalar in conditions and conversion to _Bool)."""
    if isinstance(src, ct.FloatType):
        return b.fcmp_unordered("!=", value, ir.Constant(src.llvm(), 0.0))
    if isinstance(src, ct.PointerType):
        return b.icmp_unsigned("!=", value, ir.Constant(ir.PointerType(), None))
    return b.icmp_unsigned("!=", value, ir.Constant(src.llvm(), 0))


def to_index(b: ir.IRBuilder, value: ir.Value, src: ct.CType) -> ir.Value:
    """Widen an integer to the i64 index type (sign-extending signed types)."""
    assert isinstance(src, ct.IntType)
    return convert(b, value, src, ct.LONG if src.signed else ct.ULONG)


def int_result(b: ir.IRBuilder, flag: ir.Value) -> ir.Value:
    """An i1 as C's int result of a comparison or logical operator."""
    return b.zext(flag, ir.IntType(32))
