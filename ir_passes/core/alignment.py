"""Alignment facts: the largest power of two that provably divides an access's address.

SIMD binding chooses aligned or unaligned vector loads from this (and the C66x dialect of the
C emitter `_amem8` or `_mem8`, from the `align` it sets). The address is `base + offset`
(`ir_passes.core.affine`); its alignment is the minimum of the base's alignment and the
alignment of every term of the offset, where a term `c · v1 · v2 ...` is divisible by `c`
times whatever is known to divide the values `v` (a row length declared a multiple of 8, an
induction variable starting at 0 and stepping by 4). The
facts about bases and values come from the caller (declarations, loop analysis); with none, the
answer is what the constant coefficients alone prove.

Declarations live on the IR itself, so the `align` pass sees them whatever produced the IR:

- `!pycc.row_align = !{!{!"f", i64 N}}` for function `f` (`#pragma pycc row_align(N)`,
  `--row-align N`, `-fpycc-row-align=N`): every pointer parameter is N-aligned (also
  written as `align N` on the parameters, which LLVM understands) and every row starts
  N-aligned, i.e. in an access `param + offset` that moves with an induction variable of its
  loop, the terms of the offset that are loop-invariant and not constant (the row start,
  `4*i*size_x`) sum to a multiple of N (dissertation §4.3).
- `align N` on a parameter, a global or an alloca (`__attribute__((aligned(N)))`).
- `!pycc.assume_align !{i64 N}` on a zero-offset GEP (`__builtin_assume_aligned(p, N)`: LLVM's
  `llvm.assume` with an "align" operand bundle cannot be built with llvmlite.ir).

`prove_alignment` combines them with the induction variables of the access's loop: with
`j = j0 + n*s`, a term `c*j` contributes `c*j0` to the first iteration's offset and `c*s` per
iteration, so `4*(j + dx)` with `j` stepping by 2 is 8-aligned iff `4*(j0 + dx)` is (the
paper's rule align8 <=> j0 + dx even).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from llvmlite import ir

from .affine import Access, Address, address_of
from .loops import Loop
from .symbolic import Expr, integer_expr

#: no address is assumed more aligned than this (a cache line / AVX-512 vector)
MAX_ALIGNMENT = 64

ROW_ALIGN = "pycc.row_align"
ASSUME_ALIGN = "pycc.assume_align"
#: on a load/store after the `align` pass: !{i1 aligned} (proven alignment >= access size)
ACCESS_ALIGNED = "pycc.aligned"

_I1, _I64 = ir.IntType(1), ir.IntType(64)


def power_of_two_dividing(value: int) -> int:
    """The largest power of two dividing `value` (MAX_ALIGNMENT for 0)."""
    if value == 0:
        return MAX_ALIGNMENT
    return min(abs(value) & -abs(value), MAX_ALIGNMENT)


def is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def polynomial_alignment(polynomial: Expr, divisors: Mapping[ir.Value, int] | None = None) -> int:
    """A power of two dividing `polynomial` for every value of its symbols."""
    divisors = divisors or {}
    alignment = MAX_ALIGNMENT
    for monomial, coefficient in polynomial.terms:
        term = power_of_two_dividing(coefficient)
        for value in monomial:
            term *= divisors.get(value, 1)
        alignment = min(alignment, term)
    return alignment


def address_alignment(
    address: Address,
    base_alignment: Mapping[ir.Value, int] | None = None,
    divisors: Mapping[ir.Value, int] | None = None,
    default_base_alignment: int = 1,
) -> int:
    """The alignment in bytes that `address` has for every value of its symbols.

    `base_alignment` maps base pointers to their known alignment (otherwise
    `default_base_alignment`); `divisors` maps SSA values to a power of two known to divide
    them (otherwise 1).
    """
    base = (base_alignment or {}).get(address.base, default_base_alignment)
    return min(base, polynomial_alignment(address.offset, divisors))


# --------------------------------------------------------------------------------------------
# Declarations on the IR


def _md_int(module: ir.Module, value: int, typ: ir.IntType = _I64) -> ir.MDValue:
    return module.add_metadata([ir.Constant(typ, value)])


def declare_row_alignment(function: ir.Function, alignment: int) -> None:
    """Record `row_align(alignment)` for `function` and `align` on its pointer parameters.

    The fact is module-level named metadata `!pycc.row_align = !{!{!"f", i64 N}, ...}`, by
    name so that deleting a function leaves valid IR (llvmlite prints a second function
    attachment after `!dbg` in a syntax LLVM rejects)."""
    if not is_power_of_two(alignment):
        raise ValueError(f"row alignment must be a power of two, not {alignment}")
    module = function.module
    if row_alignment(function) is not None:
        raise ValueError(f"row alignment of '{function.name}' is already declared")
    name = ir.MetaDataString(module, function.name)
    entry = module.add_metadata([name, ir.Constant(_I64, alignment)])
    module.add_named_metadata(ROW_ALIGN).add(entry)
    for argument in function.args:
        if isinstance(argument.type, ir.PointerType):
            argument.attributes.align = max(argument.attributes.align, alignment)


def row_alignment(function: ir.Function) -> int | None:
    """The declared row alignment of `function`, if any."""
    named = function.module.namedmetadata.get(ROW_ALIGN)
    for entry in named.operands if named is not None else ():
        target, value = entry.operands
        if target.string == function.name:
            return int(value.constant)
    return None


def assume_aligned(builder: ir.IRBuilder, pointer: ir.Value, alignment: int) -> ir.Value:
    """`__builtin_assume_aligned(pointer, alignment)`: the same address, carrying the fact."""
    result = builder.gep(
        pointer,
        [ir.Constant(_I64, 0)],
        inbounds=True,
        source_etype=ir.IntType(8),
        name="assume_aligned",
    )
    result.set_metadata(ASSUME_ALIGN, _md_int(builder.module, alignment))
    return result


def pointer_alignment(pointer: ir.Value) -> int:
    """What is declared about `pointer` itself (1 if nothing)."""
    if isinstance(pointer, ir.Argument):
        return max(1, pointer.attributes.align)
    if isinstance(pointer, (ir.GlobalVariable, ir.instructions.AllocaInstr)):
        return max(1, pointer.align or 1)
    node = getattr(pointer, "metadata", {}).get(ASSUME_ALIGN)
    if node is not None:
        return int(node.operands[0].constant)
    return 1


def declared_pointer_alignment(function: ir.Function) -> int:
    """The largest alignment declared for a pointer parameter of `function` (1 if none)."""
    pointers = [a for a in function.args if isinstance(a.type, ir.PointerType)]
    return max((pointer_alignment(a) for a in pointers), default=1)


def mark_access(instruction: ir.Instruction, alignment: int, aligned: bool) -> None:
    """Set `align` (never lowering it) and `!pycc.aligned` on a load or store."""
    instruction.align = max(instruction.align or 1, alignment)
    instruction.set_metadata(ACCESS_ALIGNED, _md_int(instruction.module, int(aligned), _I1))
    instruction._clear_string_cache()


def access_is_marked_aligned(instruction: ir.Instruction) -> bool | None:
    """The `align` pass's verdict on a load/store (None if the pass did not see it)."""
    node = instruction.metadata.get(ACCESS_ALIGNED)
    return None if node is None else bool(int(node.operands[0].constant))


# --------------------------------------------------------------------------------------------
# Proofs


@dataclass(frozen=True)
class Proof:
    """The alignment proven for an access and, if it is below the access size, why."""

    alignment: int
    reason: str


class _Iteration:
    """The iteration number `n` of a loop, as a polynomial symbol."""

    name = "n"


def _iteration_form(offset: Expr, loop: Loop) -> tuple[Expr, Expr, Expr]:
    """Split `offset` into (row: invariant non-constant terms, start: the first iteration's
    value of the rest, per-iteration: the terms in the iteration number), substituting
    `iv = init + n*step` for every induction variable of `loop`."""
    ivs = {iv.phi: iv for iv in loop.induction_variables}
    n = Expr.symbol(_Iteration())  # type: ignore[arg-type]
    row, rest = Expr(), Expr()
    for monomial, coefficient in offset.terms:
        term = Expr(((monomial, coefficient),))
        if monomial and all(v not in ivs and loop.is_invariant(v) for v in monomial):
            row = row + term
            continue
        substituted = Expr.constant(coefficient)
        for value in monomial:
            iv = ivs.get(value)
            if iv is None:
                substituted = substituted * Expr.symbol(value)
                continue
            step = (
                Expr.constant(iv.step)
                if iv.step is not None
                else integer_expr(iv.step_value).scaled(iv.step_sign)
            )
            substituted = substituted * (integer_expr(iv.init) + step * n)
        rest = rest + substituted
    start = Expr(tuple((m, c) for m, c in rest.terms if not _has_iteration(m)))
    periodic = Expr(tuple((m, c) for m, c in rest.terms if _has_iteration(m)))
    return row, start, periodic


def _has_iteration(monomial: tuple) -> bool:
    return any(isinstance(v, _Iteration) for v in monomial)


def _pointer_chain(pointer: ir.Value) -> list[ir.Value]:
    """`pointer` and the pointers its GEPs are based on, down to the base."""
    chain = [pointer]
    while getattr(pointer, "opname", None) == "getelementptr":
        pointer = pointer.pointer
        chain.append(pointer)
    return chain


def prove_alignment(access: Access, loop: Loop | None, row_align: int | None) -> Proof:
    """The largest power of two provably dividing the access's address on every iteration."""
    pointer = access.instruction.operands[1 if access.is_store else 0]
    best = Proof(1, f"nothing is declared about the alignment of {_describe(access.address)}")
    for known in _pointer_chain(pointer):
        declared = pointer_alignment(known)
        if declared <= 1:
            continue
        offset = access.address.offset - address_of(known).offset
        is_parameter = known is access.address.base and isinstance(known, ir.Argument)
        rows = row_align if is_parameter else None
        proof = _offset_proof(offset, loop, rows)
        if declared < proof.alignment:
            proof = Proof(declared, f"'{_name(known)}' is declared {declared}-byte aligned only")
        if proof.alignment > best.alignment:
            best = proof
    return best


def _offset_proof(offset: Expr, loop: Loop | None, row_align: int | None) -> Proof:
    parts: list[Proof] = []
    if loop is None:
        parts.append(Proof(polynomial_alignment(offset), f"the offset {offset} is not in a loop"))
    else:
        row, start, periodic = _iteration_form(offset, loop)
        if row.terms:
            # the rule speaks of rows walked by the loop: an access that does not move with
            # an induction variable (`coef[i]` inside the `j` loop) is not a row start
            if row_align is not None and periodic.terms:
                parts.append(Proof(row_align, f"row_align({row_align}) is declared"))
            else:
                why = "no row_align" if row_align is None else "the access does not walk a row"
                parts.append(
                    Proof(
                        polynomial_alignment(row),
                        f"the row start {row} is not declared aligned ({why})",
                    )
                )
        parts.append(
            Proof(
                polynomial_alignment(start),
                f"the first iteration's offset {start or '0'} is only "
                f"{polynomial_alignment(start)}-byte aligned",
            )
        )
        parts.append(
            Proof(
                polynomial_alignment(periodic),
                f"the address advances by {periodic or '0'} bytes in iteration n",
            )
        )
    return min(parts, key=lambda p: p.alignment)


def _name(value: ir.Value) -> str:
    return getattr(value, "name", "") or "?"


def _describe(address: Address) -> str:
    return f"'{_name(address.base)}'"
