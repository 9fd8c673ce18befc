"""Address expressions of loads and stores: base pointer + a polynomial byte offset.

Every pass that reasons about memory (unrolling's operand remapping, SIMD binding's
"consecutive addresses", alignment, the polyhedral bridge) needs to know, for each access, which
object it touches and how its address moves with the loop counters. This module reads that from
the IR alone: a pointer is followed back through `getelementptr` to its base (an argument, a
global, an alloca, or an opaque pointer such as a loaded row pointer), and integer index
arithmetic (`add`, `sub`, `mul`, `shl` by a constant, `sext`/`zext`/`trunc`) is folded into an
`Expr` (`symbolic.py`), a polynomial over the SSA values it starts from (loop phis, arguments,
loads).

The offset is exact under the IR's own no-overflow promises (`nsw` index arithmetic and
`inbounds` GEPs, which the front end emits); extensions are treated as the identity for the same
reason. A value the folding does not understand becomes a symbol of its own, so every access has
an address; whether it is affine in the induction variables is a question asked of the result
(`Expr.is_affine_in`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir

from .symbolic import Expr, integer_expr


@dataclass(frozen=True)
class Address:
    """Where an access goes: `base` + `offset` bytes."""

    base: ir.Value
    offset: Expr

    def __str__(self) -> str:
        return f"%{self.base.name} + {self.offset}"


@dataclass(frozen=True)
class Access:
    """One load or store of a function."""

    instruction: ir.Instruction
    is_store: bool
    value_type: ir.Type
    size: int  # bytes
    address: Address


@dataclass(frozen=True)
class Level:
    """One index of a `getelementptr` chain: it steps over elements of `rows` nested arrays of
    constant length (outermost first; none for a scalar element) of `leaf`-byte scalars, so
    its byte offset is `index` * prod(rows) * leaf. The constant array lengths are the shape
    the declaration gave (`double A[17][17]`), which a flat byte offset forgets."""

    rows: tuple[int, ...]
    leaf: int
    index: Expr

    @property
    def offset(self) -> Expr:
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
            step.append(Level(tuple(rows), size_of(leaf), integer_expr(index, atom)))
        else:
            levels = step + levels
            pointer = pointer.pointer
            continue
        break
    return pointer, levels


def address_of(pointer: ir.Value) -> Address:
    """Follow `getelementptr` chains back to the base pointer, summing the byte offsets."""
    base, levels = address_levels(pointer)
    offset = Expr()
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
