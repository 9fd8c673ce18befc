"""Scalar locals kept in memory only because their address was taken become SSA values again.

The front end gives a local whose address is taken (`swap(&u, &v)`) a stack slot. Once the
callee is inlined (`inlining.py`), nothing may see the address any more: the slot is only
loaded and stored, and its loads hide what the passes read from SSA values, such as the
pointer swap of a time loop (`u` and `v` exchanged through `*a` and `*b`). A slot whose every
use is a load or store of its own type, at its own address, is promoted as the front end
builds SSA (`ssa.SSABuilder`: a load reads the value last stored on every path to it, phis
where paths meet).
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .cfg import CFG, successors
from .rewrite import remove_instruction, replace_uses, users_of
from .ssa import SSABuilder, remove_trivial_phis


def promote_local_scalars(function: ir.Function) -> int:
    """Promote `function`'s promotable stack slots (see the module docstring); returns how
    many."""
    users = users_of(function)
    slots = [a for a in function.blocks[0].instructions if _promotable(a, users.get(a, []))]
    if not slots:
        return 0
    ssa = SSABuilder(ir.IRBuilder(function.blocks[0]))
    for slot in slots:
        ssa.declare(slot, slot.allocated_type)
    for block in function.blocks:
        for successor in successors(block):
            ssa.add_edge(block, successor)
    promoted, loaded = set(slots), {}
    order = CFG(function).reverse_postorder()  # a store before the loads it reaches
    reached = set(order)
    for block in [*order, *(b for b in function.blocks if b not in reached)]:
        for instr in list(block.instructions):
            if isinstance(instr, ins.StoreInstr) and instr.operands[1] in promoted:
                value = instr.operands[0]
                ssa.write(instr.operands[1], block, loaded.get(value, value))
            elif isinstance(instr, ins.LoadInstr) and instr.operands[0] in promoted:
                loaded[instr] = ssa.read(instr.operands[0], block)
            else:
                continue
            remove_instruction(instr)
    for block in function.blocks:
        ssa.seal(block)
    replace_uses(function, loaded)
    for slot in slots:
        remove_instruction(slot)
    remove_trivial_phis(function)
    return len(slots)


def _promotable(instr: ir.Instruction, uses: list[ir.Instruction]) -> bool:
    """A fixed-size slot of one scalar only loaded and stored as that scalar (its address
    is never a value: not stored, passed, offset or compared)."""
    if not isinstance(instr, ins.AllocaInstr) or instr.operands:
        return False
    kind = instr.allocated_type
    if not isinstance(kind, (ir.IntType, ir.FloatType, ir.DoubleType, ir.PointerType)):
        return False
    for use in uses:
        if isinstance(use, ins.LoadInstr):
            if use.type != kind:
                return False
        elif isinstance(use, ins.StoreInstr):
            value, address = use.operands
            if address is not instr or value is instr or value.type != kind:
                return False
        else:
            return False
    return True
