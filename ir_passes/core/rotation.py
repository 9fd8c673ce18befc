"""Counted do-while loops become loops that test before their body.

`t = t0; do { sweeps; t++; } while (t < T);` runs its body for t = t0, t0 + 1, ... as long as
the incremented counter stays below T, and at least once: for t from t0 while `t < max(T,
t0 + 1)`. The polyhedral model reads loops that test before the body; this rewrites the
bottom test into that top test, the bound computed once before the loop (its preheader
stays empty). Only that form is rewritten: a counter counting up by one without wrapping
(`nsw`: `t0 + 1` cannot overflow either, the first `t++` would), tested after its update
with `<` against a loop-invariant bound, no value of the loop used after it (the loop's
exit is now reached from the test, where the body's values are not defined).
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .analyses import invalidate, loops_of
from .counters import computed_before, stay_test
from .loops import Loop
from .rewrite import branch_to, forget_text, landing_block, remove_instruction, users_of


def test_before_the_body(function: ir.Function) -> int:
    """Rewrite every counted do-while loop of `function` (see the module docstring); returns
    how many."""
    users = users_of(function)
    found = [(loop, test) for loop in loops_of(function).loops if (test := _test(loop, users))]
    for loop, (compare, bound) in found:
        _rotate_back(loop, compare, bound)
    if found:
        invalidate(function)
    return len(found)


def _test(loop: Loop, users: dict) -> tuple[ins.ICMPInstr, ir.Value] | None:
    """(the latch's compare, the bound) of a do-while loop this module rewrites, or None."""
    tc, iv = loop.trip_count, loop.trip_count_iv
    if tc is None or iv is None or loop.preheader is None or loop.latch is None:
        return None
    if loop.exiting != [loop.latch] or loop.exit is None or tc.minimum != 1:
        return None
    if iv.step != 1 or not iv.nsw:
        return None
    test = stay_test(loop, loop.latch, users)
    if test is None:
        return None
    compare, pred, tested, bound = test
    if tested is not iv.update or pred != "slt" or not loop.is_invariant(bound):
        return None
    if any(isinstance(i, ins.PhiInstr) for i in loop.exit.instructions):
        return None
    inside = set(loop.blocks)
    for block in loop.blocks:
        for instr in block.instructions:
            if any(user.parent not in inside for user in users.get(instr, [])):
                return None  # used after the loop
    return compare, bound


def _rotate_back(loop: Loop, compare: ins.ICMPInstr, bound: ir.Value) -> None:
    """`preheader: P = max(bound, t0 + 1)`, then a new header `t < P` holding the loop's
    phis, in front of the old one; the latch branches to it."""
    header, preheader, latch, iv = loop.header, loop.preheader, loop.latch, loop.trip_count_iv
    builder = ir.IRBuilder(preheader)
    builder.position_before(preheader.terminator)
    bound = computed_before(builder, bound, loop)  # `T - 1` is computed in the latch
    once = builder.add(iv.init, ir.Constant(iv.type, 1), name=f"{iv.phi.name}.once", flags=["nsw"])
    stop = builder.select(
        builder.icmp_signed(">", bound, once), bound, once, name=f"{iv.phi.name}.stop"
    )
    function = header.parent
    test = function.insert_basic_block(function.blocks.index(header), f"{header.name}.test")
    phis = [i for i in header.instructions if isinstance(i, ins.PhiInstr)]
    for phi in phis:
        header.instructions.remove(phi)
        test.instructions.append(phi)
        phi.parent = test
        forget_text(phi)
    builder.position_at_end(test)
    stay = builder.icmp_signed("<", iv.phi, stop, name=f"{iv.phi.name}.stay")
    builder.cbranch(stay, header, loop.exit)
    test.terminator.metadata.update(latch.terminator.metadata)
    branch_to(preheader, test)
    branch_to(latch, test)
    remove_instruction(compare)
    landing_block(preheader, test)
