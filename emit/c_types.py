"""C spellings of LLVM types and constants for the structured-C back end.

Scalars keep C's own types (`intN_t` signed: LLVM integers are signless, and every operation
that reads them unsigned casts at the use; `bool` for i1; `float`, `double`). Vectors are GCC
vector-extension types with *unsigned* integer lanes, so lane arithmetic wraps as LLVM's does
(signed lane overflow is undefined in C); masks (`<N x i1>`) have one 0/1 byte per lane.
Arrays and structs get typedefs (`pycc_a5_f32`, `pycc_s0`) with members `f0, f1, ...` in
LLVM's order; a C compiler lays them out as LLVM's data layout does (natural alignment), and a
packed struct is `__attribute__((packed))`. Constants are written so that cc reads back the
very bits (the shortest decimal that round-trips, else a hex float; NaNs by their bits).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from llvmlite import ir


class Unexpressible(Exception):
    """IR the C emitter cannot write as C; the message names the construct."""


_FLOAT_NAMES = {ir.FloatType: ("float", "f32"), ir.DoubleType: ("double", "f64")}


def lane_suffix(t: ir.Type) -> str:
    """Short name of a scalar type in generated identifiers (`f32`, `u8`, `b`)."""
    if isinstance(t, ir.IntType):
        return "b" if t.width == 1 else f"u{t.width}"
    if type(t) in _FLOAT_NAMES:
        return _FLOAT_NAMES[type(t)][1]
    if isinstance(t, ir.PointerType):
        return "p"
    raise Unexpressible(f"type '{t}' has no C equivalent here")


def int_name(width: int, signed: bool = True) -> str:
    if width not in (8, 16, 32, 64):
        raise Unexpressible(f"integer type 'i{width}' has no C equivalent here")
    return f"{'' if signed else 'u'}int{width}_t"


@dataclass
class TypeTable:
    """The C names of the types one module uses, and the typedefs they need (in an order C
    accepts: a member's type before its struct)."""

    typedefs: list[str] = field(default_factory=list)
    _names: dict[str, str] = field(default_factory=dict)
    #: a dialect's own spelling of vector types: (C name, typedef or None); GCC vectors if None
    vector_spelling: Callable[[ir.VectorType], tuple[str, str | None]] | None = None

    def name(self, t: ir.Type) -> str:
        """The C type of an IR value of type `t` (a typedef name for aggregates/vectors)."""
        if isinstance(t, ir.IntType):
            return "bool" if t.width == 1 else int_name(t.width)
        if type(t) in _FLOAT_NAMES:
            return _FLOAT_NAMES[type(t)][0]
        if isinstance(t, ir.PointerType):
            return "void *"
        if isinstance(t, ir.VoidType):
            return "void"
        key = str(t)
        if key in self._names:
            return self._names[key]
        if isinstance(t, ir.VectorType):
            name = self._vector(t)
        elif isinstance(t, ir.ArrayType):
            name = self._array(t)
        elif isinstance(t, (ir.LiteralStructType, ir.IdentifiedStructType)):
            name = self._struct(t)
        else:
            raise Unexpressible(f"type '{t}' has no C equivalent here")
        self._names[key] = name
        return name

    def lane(self, t: ir.VectorType) -> str:
        """The C type of one lane of vector `t` as stored (unsigned for integers)."""
        e = t.element
        if isinstance(e, ir.IntType):
            return "uint8_t" if e.width == 1 else int_name(e.width, signed=False)
        return self.name(e)

    def _vector(self, t: ir.VectorType) -> str:
        if self.vector_spelling is not None:
            name, typedef = self.vector_spelling(t)
            if typedef:
                self.typedefs.append(typedef)
            return name
        lane_bytes = 1 if _is_bool(t.element) else _bytes(t.element)
        count = t.count
        if count & (count - 1):
            raise Unexpressible(f"vector type '{t}': GCC vectors need a power-of-two lane count")
        name = f"pycc_v{count}{lane_suffix(t.element)}"
        self.typedefs.append(
            f"typedef {self.lane(t)} {name} __attribute__((vector_size({count * lane_bytes})));"
        )
        return name

    def _array(self, t: ir.ArrayType) -> str:
        element = self.name(t.element)
        name = f"pycc_a{t.count}_{_ident(element)}"
        self.typedefs.append(f"typedef {element} {name}[{t.count}];")
        return name

    def _struct(self, t: ir.BaseStructType) -> str:
        members = [f"    {self.name(e)} f{i};" for i, e in enumerate(t.elements)]
        name = f"pycc_s{sum(n.startswith('pycc_s') for n in self._names.values())}"
        packed = " __attribute__((packed))" if t.packed else ""
        self.typedefs.append("typedef struct {\n" + "\n".join(members) + f"\n}}{packed} {name};")
        return name


def _ident(c_name: str) -> str:
    return c_name.replace(" ", "").replace("*", "p")


def _is_bool(t: ir.Type) -> bool:
    return isinstance(t, ir.IntType) and t.width == 1


def _bytes(t: ir.Type) -> int:
    if isinstance(t, ir.IntType):
        return max(1, t.width // 8)
    if isinstance(t, ir.FloatType):
        return 4
    if isinstance(t, ir.DoubleType):
        return 8
    if isinstance(t, ir.PointerType):
        return 8
    raise Unexpressible(f"type '{t}' has no C equivalent here")


# --------------------------------------------------------------------------------------------
# constants


def float_literal(value: float, t: ir.Type) -> str:
    """A C literal (or constant expression) with exactly the bits of `value` as type `t`."""
    single = isinstance(t, ir.FloatType)
    if math.isnan(value) or math.isinf(value):
        bits = _bits(value, single)
        return f"pycc_bits_{'f32' if single else 'f64'}({bits:#x}u)"
    if single:
        shortest = str(np.float32(value))  # numpy: the shortest text that reads back the same
        exact = np.float32(float(shortest)) == np.float32(value)
        text = _with_point(shortest if exact else value.hex()) + "f"
    else:
        text = _with_point(repr(value) if float(repr(value)) == value else value.hex())
    return f"({text})" if text.startswith("-") else text


def _with_point(text: str) -> str:
    if text.startswith(("0x", "-0x")) or any(c in text for c in ".eE"):
        return text
    return text + ".0"


def _bits(value: float, single: bool) -> int:
    packed = struct.pack("<f" if single else "<d", value)
    return int.from_bytes(packed, "little")


def int_literal(value: int, width: int) -> str:
    """A C constant of type intN_t with the two's-complement bits of `value`."""
    if width == 1:
        return "true" if value & 1 else "false"
    value &= (1 << width) - 1
    if value >= 1 << (width - 1):
        value -= 1 << width
    if width == 64 and value == -(1 << 63):
        return "INT64_MIN"
    if width == 32 and value == -(1 << 31):
        return "INT32_MIN"
    text = f"INT64_C({value})" if width == 64 and abs(value) > 0x7FFFFFFF else str(value)
    return f"({text})" if value < 0 else text
