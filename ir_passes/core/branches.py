"""Branches on constants, such as an inlined helper's tests of a constant argument, are taken.

`coef(0)` with `static double coef(int k) { if (k == 0) return 0.5; ... }` inlined tests `0
== 0`: a branch the polyhedral model refuses ("condition in the loop body") though it always
goes one way. The branch becomes a jump, the blocks no path reaches any more go, phis of one
value become that value, and the straight line left is merged into one block (a statement;
the loops' headers, latches, preheaders and exits stay blocks of their own).
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .analyses import invalidate, loops_of
from .cfg import CFG, successors
from .rewrite import branch_to, forget_text, merge_straight_line
from .ssa import remove_trivial_phis

#: llvm's integer predicates without their sign letter
_COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


def fold_constant_branches(function: ir.Function) -> int:
    """Take every conditional branch of `function` on a constant condition (see the module
    docstring); returns how many."""
    touched: set[ir.Block] = set()
    taken_branches = 0
    for block in list(function.blocks):
        term = block.terminator
        if not isinstance(term, ins.ConditionalBranch):
            continue
        condition, yes, no = term.operands
        truth = _constant_truth(condition)
        if truth is None:
            continue
        taken, dropped = (yes, no) if truth else (no, yes)
        if dropped is not taken:
            _drop_edge(block, dropped)
        branch_to(block, taken)
        touched |= {block, taken, dropped}
        taken_branches += 1
    if not touched:
        return 0
    touched |= _remove_unreachable(function)
    remove_trivial_phis(function)
    invalidate(function)
    structure = [
        b
        for loop in loops_of(function).loops
        for b in (loop.header, loop.latch, loop.preheader, loop.exit)
        if b is not None
    ]
    merge_straight_line(function, [b for b in touched if b.parent is not None], structure)
    invalidate(function)
    return taken_branches


def _constant_truth(condition: ir.Value) -> bool | None:
    """The value of an `i1` constant or of an integer comparison of two constants."""
    if isinstance(condition, ir.Constant) and condition.type == ir.IntType(1):
        return bool(condition.constant)
    if not isinstance(condition, ins.ICMPInstr):
        return None
    left, right = condition.operands
    if not (isinstance(left, ir.Constant) and isinstance(right, ir.Constant)):
        return None
    if not isinstance(left.constant, int) or not isinstance(right.constant, int):
        return None
    width, op = left.type.width, condition.op
    a, b = left.constant % (1 << width), right.constant % (1 << width)  # bit patterns
    if op[0] == "s":
        a, b = (v - (1 << width) if v >> (width - 1) else v for v in (a, b))
    return _COMPARE[op[1:] if op[0] in "su" else op](a, b)


def _drop_edge(block: ir.Block, target: ir.Block) -> None:
    """`target`'s phis forget the values they took from `block`."""
    for phi in target.instructions:
        if not isinstance(phi, ins.PhiInstr):
            break
        phi.incomings = [(v, b) for v, b in phi.incomings if b is not block]
        forget_text(phi)


def _remove_unreachable(function: ir.Function) -> set[ir.Block]:
    """Delete the blocks the entry no longer reaches; returns the blocks that lost a
    predecessor."""
    reached = set(CFG(function).reverse_postorder())
    lost = set()
    for block in [b for b in function.blocks if b not in reached]:
        for target in successors(block):
            if target in reached:
                _drop_edge(block, target)
                lost.add(target)
        function.blocks.remove(block)
        block.parent = None
    return lost
