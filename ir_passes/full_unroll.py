"""`unroll-full(L)`: replace small constant-trip loops by straight-line copies of their body.

A filter window (`for (dy = -2; dy <= 2; dy++) for (dx = -2; dx <= 2; dx++) acc += ...`)
inside the pixel loops is two loops with a constant trip count; as long as they stay loops,
the pixel loop is not innermost and SIMD binding cannot touch it. This pass flattens every
loop whose trip count T is a compile-time constant and whose T × (instructions of one
iteration) is at most L (default `DEFAULT_LIMIT`), innermost loops first and again until no
loop qualifies, so a window nest becomes one block of straight-line code.

Each iteration is an exact copy of the loop's blocks in iteration order (header phis replaced
by the previous copy's latch values; an induction variable with a constant start becomes the
constant `start + k*step`), so every reduction keeps the scalar evaluation order and results
stay bit-exact. The exit tests disappear (their values are known), the copies' blocks are
merged into straight-line code and the instructions left without use are deleted. Both loop
forms are handled: top-tested (the front end's; T + 1 header copies, the last one leading to
the exit) and bottom-tested (clang's rotated loops; the last latch copy leads to the exit).
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .core.loops import Loop, invariant_expr
from .core.rewrite import branch_to, merge_straight_line, remove_dead, replace_in
from .registry import PassContext, bounded_int, register
from .unroll import (
    Decline,
    block_maker,
    clone_iteration,
    is_remainder,
    transform_until_done,
    unrolled_loops,
)

#: the largest trip count × iteration size flattened by default: a 5×5 window of a filter on
#: 2-D data (about 25 instructions per tap) fits, a loop over a row does not have a constant
#: trip count anyway
DEFAULT_LIMIT = 1024
#: the largest limit a pipeline may give (`unroll-full(N)`)
MAX_LIMIT = 16384


def iteration_size(loop: Loop) -> int:
    """Instructions of one iteration, without phis and branches."""
    return sum(
        not isinstance(i, (ins.PhiInstr, ins.Terminator))
        for b in loop.blocks
        for i in b.instructions
    )


def constant_trip_count(loop: Loop) -> int:
    """The loop's trip count if it is a constant that is exact (the IV cannot wrap)."""
    if loop.preheader is None:
        raise Decline("no unique preheader")
    if loop.latch is None:
        raise Decline(f"{len(loop.latches)} latches")
    if loop.exit is None:
        raise Decline(f"{len(loop.exits)} exit blocks")
    tc = loop.trip_count
    if tc is None:
        raise Decline(f"trip count unknown: {loop.trip_count_reason}")
    count = tc.constant
    if count is None:
        raise Decline(f"the trip count {tc} is not a constant")
    if not tc.no_wrap:
        iv = loop.trip_count_iv
        signed = tc.predicate[0] != "u"
        start = invariant_expr(iv.init, signed=signed).evaluate({})
        width = iv.type.width
        low, high = (
            (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
        )
        if not all(low <= start + k * tc.step <= high for k in (0, count + 1)):
            raise Decline(f"the induction variable may wrap around in i{width}")
    return count


def flatten_loop(function: ir.Function, loop: Loop, limit: int) -> int:
    """Replace `loop` by its iterations as straight-line code; returns the trip count."""
    count = constant_trip_count(loop)
    size = iteration_size(loop)
    if count * size > limit:
        raise Decline(
            f"{count} iterations × {size} instructions = {count * size} exceeds the limit {limit}"
        )
    header, preheader, latch, exit_ = loop.header, loop.preheader, loop.latch, loop.exit
    top_tested = loop.trip_count.minimum == 0
    exiting = header if top_tested else latch
    inside = next(t for t in exiting.terminator.operands if isinstance(t, ir.Block) and t in loop)
    phis = [i for i in header.instructions if isinstance(i, ins.PhiInstr)]
    incoming = {p: {b: v for v, b in p.incomings} for p in phis}
    constant_ivs = {}
    for iv in loop.induction_variables:
        try:
            start = invariant_expr(iv.init).evaluate({})
        except KeyError:
            continue
        if iv.step is not None:
            constant_ivs[iv.phi] = (start, iv.step)

    new_blocks, new_block = block_maker(function)

    copied: dict[ir.Value, ir.Value] = {}
    previous_latch = None
    first_header = None
    for k in range(count + top_tested):
        values = {}
        for phi in phis:
            if phi in constant_ivs:
                start, step = constant_ivs[phi]
                values[phi] = ir.Constant(phi.type, _wrapped(start + k * step, phi.type.width))
            elif k == 0:
                values[phi] = incoming[phi][preheader]
            else:
                value = incoming[phi][latch]
                values[phi] = copied.get(value, value)
        last = top_tested and k == count
        copied, blocks = clone_iteration(loop, values, {}, new_block, f".f{k}", header_only=last)
        first_header = first_header or blocks[header]
        if previous_latch is not None:
            branch_to(previous_latch, blocks[header])
        if top_tested:
            branch_to(blocks[header], exit_ if last else blocks[inside])
        elif k == count - 1:
            branch_to(blocks[latch], exit_)
        previous_latch = None if last else blocks[latch]
        final_exiting = blocks[exiting]

    # enter the copies instead of the loop; the exit and later code see the last copy's values
    term = preheader.terminator
    term.operands = [first_header if t is header else t for t in term.operands]
    term._clear_string_cache()
    for phi in exit_.instructions:
        if not isinstance(phi, ins.PhiInstr):
            break
        phi.incomings = [
            (copied.get(v, v), final_exiting) if b is exiting else (v, b) for v, b in phi.incomings
        ]
        phi._clear_string_cache()
    position = function.blocks.index(header)
    originals = set(loop.blocks)
    function.blocks[:] = [b for b in function.blocks if b not in originals]
    function.blocks[position:position] = new_blocks
    defined = {i: copied[i] for b in loop.blocks for i in b.instructions if i in copied}
    replace_in((i for b in function.blocks if b not in new_blocks for i in b.instructions), defined)
    remove_dead(function, [i for b in new_blocks for i in b.instructions])
    merge_straight_line(function, [*new_blocks, preheader, exit_])
    return count


def _wrapped(value: int, width: int) -> int:
    """`value` as a signed integer of `width` bits (two's complement wrap-around)."""
    half = 1 << (width - 1)
    return (value + half) % (2 * half) - half


@register(
    "unroll-full",
    (bounded_int("full-unroll limit", MAX_LIMIT),),
    defaults=(DEFAULT_LIMIT,),
)
def unroll_full(module: ir.Module, limit: int, *, context: PassContext) -> ir.Module:
    """Flatten every loop with a small constant trip count, innermost first, repeatedly."""

    def wanted(function: ir.Function, loop: Loop) -> bool:
        return (
            loop.innermost
            and not is_remainder(loop)
            and loop.header not in unrolled_loops(function)
        )

    def transform(function: ir.Function, loop: Loop) -> str:
        count = flatten_loop(function, loop, int(limit))
        return f"loop fully unrolled ({count} iterations)"

    transform_until_done(module, context, wanted, transform, "loop not fully unrolled")
    return module


@register(
    "unroll-reductions",
    (bounded_int("full-unroll limit", MAX_LIMIT),),
    defaults=(MAX_LIMIT,),
)
def unroll_reductions(module: ir.Module, limit: int, *, context: PassContext) -> ir.Module:
    """Flatten every innermost constant-trip loop that stores nothing: the reduction loops
    of a convolution (its filter taps, summed in a register), never the loops over its
    outputs, however short. What the AI Engine back end does first (Vyasa always unrolls the
    reduction loops, then vectorizes an output loop)."""

    def wanted(function: ir.Function, loop: Loop) -> bool:
        stores = any(isinstance(i, ins.StoreInstr) for b in loop.blocks for i in b.instructions)
        return loop.innermost and not stores and loop.header not in unrolled_loops(function)

    def transform(function: ir.Function, loop: Loop) -> str:
        count = flatten_loop(function, loop, int(limit))
        return f"reduction loop fully unrolled ({count} iterations)"

    transform_until_done(module, context, wanted, transform, "reduction loop not unrolled")
    return module
