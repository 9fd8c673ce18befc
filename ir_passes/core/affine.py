"""Address expressions of loads and stores: base pointer + a polynomial byte offset.

Every pass that reasons about memory (unrolling's operand remapping, SIMD binding's
"consecutive addresses", alignment, the polyhedral bridge) needs to know, for each access, which
object it touches and how its address moves with the loop counters. This module reads that from
the IR alone: a pointer is followed back through `getelementptr` to its base (an argument, a
global, an alloca, or an opaque pointer such as a loaded row pointer), and integer index
arithmetic (`add`, `sub`, `mul`, `shl` by a constant, `sext`/`zext`/`trunc`) is folded into a
polynomial over the SSA values it starts from (loop phis, arguments, loads).

The offset is exact under the IR's own no-overflow promises (`nsw` index arithmetic and
`inbounds` GEPs, which the front end emits); extensions are treated as the identity for the same
reason. A value the folding does not understand becomes a symbol of its own, so every access has
an address; whether it is affine in the induction variables is a question asked of the result
(`Polynomial.is_affine_in`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir

#: a monomial: the SSA values multiplied together, ordered by identity (the constant term: ())
Monomial = tuple[ir.Value, ...]


@dataclass(frozen=True)
class Polynomial:
    """Σ coefficient · monomial, integer coefficients, over SSA values."""

    terms: tuple[tuple[Monomial, int], ...] = ()

    @staticmethod
    def constant(value: int) -> Polynomial:
        return Polynomial((((), value),) if value else ())

    @staticmethod
    def symbol(value: ir.Value) -> Polynomial:
        return Polynomial((((value,), 1),))

    def as_dict(self) -> dict[Monomial, int]:
        return dict(self.terms)

    def __add__(self, other: Polynomial) -> Polynomial:
        total = self.as_dict()
        for monomial, coefficient in other.terms:
            total[monomial] = total.get(monomial, 0) + coefficient
        return _normalized(total)

    def __neg__(self) -> Polynomial:
        return Polynomial(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: Polynomial) -> Polynomial:
        return self + (-other)

    def __mul__(self, other: Polynomial) -> Polynomial:
        total: dict[Monomial, int] = {}
        for left, a in self.terms:
            for right, b in other.terms:
                monomial = tuple(sorted(left + right, key=id))
                total[monomial] = total.get(monomial, 0) + a * b
        return _normalized(total)

    def scaled(self, factor: int) -> Polynomial:
        return self * Polynomial.constant(factor)

    @property
    def constant_term(self) -> int:
        return self.as_dict().get((), 0)

    def coefficient(self, value: ir.Value) -> Polynomial:
        """The factor multiplying `value` (in monomials of degree 1 in it), as a polynomial."""
        parts: dict[Monomial, int] = {}
        for monomial, c in self.terms:
            if sum(v is value for v in monomial) == 1:
                rest = tuple(v for v in monomial if v is not value)
                parts[rest] = parts.get(rest, 0) + c
        return _normalized(parts)

    def is_affine_in(self, variables: set[ir.Value]) -> bool:
        """At most one of `variables`, to the first power, in every monomial."""
        return all(sum(v in variables for v in m) <= 1 for m, _ in self.terms)

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for monomial, c in self.terms:
            names = "*".join(_name(v) for v in monomial)
            parts.append(str(c) if not names else names if c == 1 else f"{c}*{names}")
        return " + ".join(parts).replace("+ -", "- ")


def _normalized(total: dict[Monomial, int]) -> Polynomial:
    ordered = sorted(((m, c) for m, c in total.items() if c), key=lambda mc: _key(mc[0]))
    return Polynomial(tuple(ordered))


def _key(monomial: Monomial) -> tuple:
    """Readable order (degree, names); identities break ties between equally named values."""
    return (len(monomial), tuple(_name(v) for v in monomial), tuple(id(v) for v in monomial))


def _name(value: ir.Value) -> str:
    return getattr(value, "name", "") or "?"


@dataclass(frozen=True)
class Address:
    """Where an access goes: `base` + `offset` bytes."""

    base: ir.Value
    offset: Polynomial

    def __str__(self) -> str:
        return f"{_name(self.base)} + {self.offset}"


@dataclass(frozen=True)
class Access:
    """One load or store of a function."""

    instruction: ir.Instruction
    is_store: bool
    value_type: ir.Type
    size: int  # bytes
    address: Address


_INTEGER_CASTS = frozenset({"sext", "zext", "trunc"})


def integer_polynomial(
    value: ir.Value, atom: Callable[[ir.Value], bool] | None = None
) -> Polynomial:
    """`value` (an integer) as a polynomial over the SSA values its arithmetic starts from;
    values `atom` accepts stay symbols (the polyhedral bridge keeps a VLA's extent `n + 2`,
    computed before the loops, as one stride)."""
    if isinstance(value, ir.Constant) and isinstance(value.type, ir.IntType):
        return Polynomial.constant(int(value.constant))
    if atom is not None and atom(value):
        return Polynomial.symbol(value)
    opname = getattr(value, "opname", None)
    operands = getattr(value, "operands", ())
    if opname in _INTEGER_CASTS:
        return integer_polynomial(operands[0], atom)
    if opname in ("add", "sub", "mul") and len(operands) == 2:
        left, right = (integer_polynomial(o, atom) for o in operands)
        return {"add": left + right, "sub": left - right, "mul": left * right}[opname]
    if opname == "shl" and isinstance(operands[1], ir.Constant):
        return integer_polynomial(operands[0], atom).scaled(1 << int(operands[1].constant))
    return Polynomial.symbol(value)


@dataclass(frozen=True)
class Level:
    """One index of a `getelementptr` chain: it steps over elements of `rows` nested arrays of
    constant length (outermost first; none for a scalar element) of `leaf`-byte scalars, so
    its byte offset is `index` * prod(rows) * leaf. The constant array lengths are the shape
    the declaration gave (`double A[17][17]`), which a flat byte offset forgets."""

    rows: tuple[int, ...]
    leaf: int
    index: Polynomial

    @property
    def offset(self) -> Polynomial:
        return self.index.scaled(math.prod(self.rows) * self.leaf)


def address_levels(
    pointer: ir.Value, atom: Callable[[ir.Value], bool] | None = None
) -> tuple[ir.Value, list[Level]]:
    """Follow `getelementptr` chains back to the base pointer: the base and every index with
    the array shape it steps over (a struct index ends the chain: its GEP is the base)."""
    levels: list[Level] = []
    while getattr(pointer, "opname", None) == "getelementptr":
        element = pointer.source_etype
        if isinstance(element, ir.BaseStructType):
            break
        step = []
        for k, index in enumerate(pointer.indices):
            if k and not isinstance(element, ir.ArrayType):
                break
            if k:
                element = element.element
            rows, leaf = [], element
            while isinstance(leaf, ir.ArrayType):
                rows.append(leaf.count)
                leaf = leaf.element
            step.append(Level(tuple(rows), size_of(leaf), integer_polynomial(index, atom)))
        else:
            levels = step + levels
            pointer = pointer.pointer
            continue
        break
    return pointer, levels


def address_of(pointer: ir.Value) -> Address:
    """Follow `getelementptr` chains back to the base pointer, summing the byte offsets."""
    base, levels = address_levels(pointer)
    offset = Polynomial()
    for level in levels:
        offset = offset + level.offset
    return Address(base, offset)


def size_of(t: ir.Type) -> int:
    """Allocation size in bytes of the scalar, vector and array types the front end emits."""
    if isinstance(t, ir.IntType):
        return max(1, (t.width + 7) // 8) if t.width != 1 else 1
    if isinstance(t, ir.FloatType):
        return 4
    if isinstance(t, ir.DoubleType):
        return 8
    if isinstance(t, ir.ArrayType):
        return t.count * size_of(t.element)
    if isinstance(t, ir.VectorType):
        return t.count * size_of(t.element)
    if isinstance(t, ir.PointerType):
        return 8
    raise ValueError(f"no size for type {t}")


def accesses(function: ir.Function) -> list[Access]:
    """Every load and store of `function`, in block order, with its address."""
    found = []
    for block in function.blocks:
        for instruction in block.instructions:
            if instruction.opname == "load":
                pointer, value_type, is_store = instruction.operands[0], instruction.type, False
            elif instruction.opname == "store":
                pointer, value_type = instruction.operands[1], instruction.operands[0].type
                is_store = True
            else:
                continue
            found.append(
                Access(instruction, is_store, value_type, size_of(value_type), address_of(pointer))
            )
    return found
