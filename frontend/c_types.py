"""The C type model of the front end.

libclang's types are tied to a translation unit and hide the runtime extent of variable-length
arrays, so the front end carries its own small, hashable model: it knows signedness and
widths (for C's promotions and conversions), array dimensions (constant, or symbolic for
VLAs), `restrict`, and how each type maps to LLVM and to numpy.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from llvmlite import ir

from ..ir_passes.core.symbolic import Expr


class CType:
    """Base of all C types the front end models."""

    def llvm(self) -> ir.Type:
        raise TypeError(f"type {self} has no LLVM value representation")

    @property
    def is_arithmetic(self) -> bool:
        return isinstance(self, (IntType, FloatType))


@dataclass(frozen=True)
class VoidType(CType):
    def llvm(self) -> ir.Type:
        return ir.VoidType()

    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True)
class IntType(CType):
    """An integer type. `_Bool` is an 8-bit unsigned integer whose values are only 0 and 1."""

    bits: int
    signed: bool
    name: str
    is_bool: bool = False

    def llvm(self) -> ir.Type:
        return ir.IntType(self.bits)

    @property
    def rank(self) -> int:
        """Conversion rank (C11 6.3.1.1); widths identify ranks on LP64 except long vs long long."""
        ranks = {"_Bool": 0, "char": 1, "short": 2, "int": 3, "long": 4, "long long": 5}
        base = self.name.replace("unsigned ", "").replace("signed ", "")
        return ranks.get(base, {8: 1, 16: 2, 32: 3, 64: 4}[self.bits])

    @property
    def min_value(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max_value(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class FloatType(CType):
    bits: int  # 32 or 64

    def llvm(self) -> ir.Type:
        return ir.FloatType() if self.bits == 32 else ir.DoubleType()

    def __str__(self) -> str:
        return "float" if self.bits == 32 else "double"


@dataclass(frozen=True)
class PointerType(CType):
    pointee: CType
    restrict: bool = False
    const_pointee: bool = False

    def llvm(self) -> ir.Type:
        return ir.PointerType()

    def __str__(self) -> str:
        const = "const " if self.const_pointee else ""
        restrict = " restrict" if self.restrict else ""
        return f"{const}{self.pointee} *{restrict}"


@dataclass(frozen=True)
class ArrayType(CType):
    """`element[length]`; `length` is an int, a `Expr` for a VLA, or None for `[]`.

    `vla_key` identifies the declaration whose size expression gives a VLA its runtime length
    (evaluated once, where C evaluates it); it is None for constant-length arrays.
    """

    element: CType
    length: int | Expr | None
    vla_key: Hashable | None = None

    @property
    def is_vla(self) -> bool:
        return self.vla_key is not None

    @property
    def scalar(self) -> CType:
        """The innermost non-array element type."""
        t: CType = self
        while isinstance(t, ArrayType):
            t = t.element
        return t

    @property
    def dims(self) -> list[int | Expr | None]:
        out: list[int | Expr | None] = []
        t: CType = self
        while isinstance(t, ArrayType):
            out.append(t.length)
            t = t.element
        return out

    def llvm(self) -> ir.Type:
        if self.is_vla or self.length is None:
            raise TypeError(f"array {self} has no fixed LLVM type")
        return ir.ArrayType(self.element.llvm(), self.length)

    def __str__(self) -> str:
        return f"{self.scalar}" + "".join(f"[{'' if d is None else d}]" for d in self.dims)


@dataclass(frozen=True)
class Field:
    """One member of a struct at its byte offset (the target ABI's layout, as clang computes
    it for the unit's triple)."""

    name: str
    offset: int
    ctype: CType


@dataclass(frozen=True)
class StructType(CType):
    """A plain-data struct: its members, size and alignment as the target ABI lays them out.

    In LLVM it is a `[size x i8]` blob: members are reached at constant byte offsets from the
    struct's address, so every member access stays `base + affine offset` for the passes.
    """

    name: str
    fields: tuple[Field, ...]
    size: int
    align: int

    @property
    def is_opaque(self) -> bool:
        """Incomplete, or seen through a pointer member of itself: the layout is unknown here."""
        return self.align == 0

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)

    def llvm(self) -> ir.Type:
        if self.is_opaque:
            raise TypeError(f"{self} is opaque here")
        return ir.ArrayType(ir.IntType(8), self.size)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class FunctionType(CType):
    result: CType
    params: tuple[CType, ...]
    variadic: bool = False

    def __str__(self) -> str:
        return f"{self.result} ({', '.join(map(str, self.params))})"


def has_fixed_size(t: CType) -> bool:
    """True if sizeof(t) is a compile-time constant."""
    if isinstance(t, ArrayType):
        return not t.is_vla and t.length is not None and has_fixed_size(t.element)
    return True


def size_of(t: CType) -> int:
    """sizeof of a fixed-size type, in bytes (LP64)."""
    if isinstance(t, IntType):
        return t.bits // 8
    if isinstance(t, FloatType):
        return t.bits // 8
    if isinstance(t, PointerType):
        return 8
    if isinstance(t, ArrayType) and has_fixed_size(t):
        return int(t.length) * size_of(t.element)
    if isinstance(t, StructType) and not t.is_opaque:
        return t.size
    raise TypeError(f"sizeof({t}) is not a constant")


def same_struct(a: CType, b: StructType) -> bool:
    """Whether `a` is the struct type `b`, however their pointer members were reached (a
    struct met again through a pointer member is opaque there, so `struct b` inside
    `struct a { struct b *p; }` is modelled differently from `struct b` on its own)."""
    return isinstance(a, StructType) and a.name == b.name


def alignment_of(t: CType) -> int:
    """The ABI alignment of a type (x86-64 SysV: scalars are aligned to their size)."""
    if isinstance(t, ArrayType):
        return alignment_of(t.element)
    if isinstance(t, StructType):
        return t.align
    return size_of(t)


@dataclass(frozen=True)
class Leaf:
    """A scalar inside a struct: its byte offset and its path (`in.v[2]`)."""

    offset: int
    ctype: CType
    path: str


def scalar_leaves(t: CType, offset: int = 0, path: str = "") -> list[Leaf]:
    """Every scalar inside an object of fixed-size type `t`, arrays and nested structs
    flattened: what the calling convention classifies and what `check` fills and compares."""
    if isinstance(t, StructType):
        return [
            leaf
            for f in t.fields
            for leaf in scalar_leaves(f.ctype, offset + f.offset, f"{path}.{f.name}".lstrip("."))
        ]
    if isinstance(t, ArrayType):
        step = size_of(t.element)
        return [
            leaf
            for i in range(int(t.length))
            for leaf in scalar_leaves(t.element, offset + i * step, f"{path}[{i}]")
        ]
    return [Leaf(offset, t, path)]


BOOL = IntType(8, False, "_Bool", is_bool=True)
CHAR = IntType(8, True, "char")
SCHAR = IntType(8, True, "signed char")
UCHAR = IntType(8, False, "unsigned char")
SHORT = IntType(16, True, "short")
USHORT = IntType(16, False, "unsigned short")
INT = IntType(32, True, "int")
UINT = IntType(32, False, "unsigned int")
LONG = IntType(64, True, "long")
ULONG = IntType(64, False, "unsigned long")
LONGLONG = IntType(64, True, "long long")
ULONGLONG = IntType(64, False, "unsigned long long")
FLOAT = FloatType(32)
DOUBLE = FloatType(64)
VOID = VoidType()

#: numpy dtype names of the scalar element types the JIT harness can marshal.
NUMPY_DTYPES = {
    (8, True): "int8",
    (8, False): "uint8",
    (16, True): "int16",
    (16, False): "uint16",
    (32, True): "int32",
    (32, False): "uint32",
    (64, True): "int64",
    (64, False): "uint64",
}


def numpy_dtype_name(t: CType) -> str | None:
    """The numpy dtype that holds one `t`, or None if `t` is not a plain scalar."""
    if isinstance(t, IntType):
        return "bool" if t.is_bool else NUMPY_DTYPES[(t.bits, t.signed)]
    if isinstance(t, FloatType):
        return "float32" if t.bits == 32 else "float64"
    return None


def promote(t: IntType) -> IntType:
    """C's integer promotions: every type of rank below int becomes int."""
    return INT if t.bits < 32 else t


def usual_arithmetic_conversion(a: CType, b: CType) -> CType:
    """The common real type of a binary arithmetic operation (C11 6.3.1.8)."""
    if isinstance(a, FloatType) or isinstance(b, FloatType):
        bits = max(t.bits for t in (a, b) if isinstance(t, FloatType))
        return FloatType(bits)
    assert isinstance(a, IntType) and isinstance(b, IntType)
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.signed == b.signed:
        return a if (a.rank, a.bits) >= (b.rank, b.bits) else b
    unsigned, signed = (a, b) if not a.signed else (b, a)
    if unsigned.rank >= signed.rank:
        return unsigned
    if signed.bits > unsigned.bits:
        return signed
    return IntType(signed.bits, False, "unsigned " + signed.name)
