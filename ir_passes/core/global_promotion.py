"""Scalar globals a loop reads and writes become SSA values inside it.

Legacy stencil codes keep their grids in global pointers and swap them every step (`double
*u, *v;` ... `tmp = u; u = v; v = tmp;`): the time loop then loads its grids from memory, and
the swap is a pair of stores, where the passes need the header phis a swap of locals gives
(`swap_unroll.py`). In an outermost loop that calls nothing but libm and memory-free
intrinsics, a global of scalar type accessed only directly (`load g`, `store g`, never
through a computed address) that no other access of the loop may reach is read once before
the loop, carried in SSA values through it (`ssa.SSABuilder`), and written back after it only
if its value changed, so no store is added to a run that made none (another thread may own
the global then). No other access may reach it when each is through a pointer that does not
derive from it or an argument, or, under C's effective-type rules (`!tbaa`), is of another
type, neither a character type: a `double` store never changes a `double *`.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .analyses import invalidate, loops_of
from .cfg import CFG, successors
from .loops import Loop
from .memory import OMNIPOTENT_CHAR, may_write, pointer_operand, pointer_roots, tbaa_type
from .rewrite import branch_to, landing_block, remap_operands, remove_instruction, replace_uses
from .ssa import SSABuilder, remove_trivial_phis

_SCALARS = (ir.IntType, ir.FloatType, ir.DoubleType, ir.PointerType)


def promote_globals_in_loops(function: ir.Function) -> int:
    """Promote the promotable globals of `function`'s outermost loops (see the module
    docstring); returns how many (global, loop) pairs."""
    promoted = 0
    for loop in [lp for lp in loops_of(function).loops if lp.parent is None]:
        variables = _promotable(loop)
        if variables:
            _promote(function, loop, variables)
            promoted += len(variables)
    if promoted:
        invalidate(function)
        remove_trivial_phis(function)
    return promoted


def _promotable(loop: Loop) -> list[ir.GlobalVariable]:
    exit_block = loop.exit
    if (
        loop.preheader is None
        or exit_block is None
        or len(loop.exiting) != 1
        or any(isinstance(i, ins.PhiInstr) for i in exit_block.instructions)
    ):
        return []
    accesses = [i for b in loop.blocks for i in b.instructions if pointer_operand(i) is not None]
    if any(
        isinstance(i, ins.CallInstr) and may_write(i) for b in loop.blocks for i in b.instructions
    ):
        return []
    direct: dict[ir.GlobalVariable, list[ir.Instruction]] = {}
    for access in accesses:
        pointer = pointer_operand(access)
        if isinstance(pointer, ir.GlobalVariable) and isinstance(pointer.value_type, _SCALARS):
            direct.setdefault(pointer, []).append(access)
    return [
        g
        for g, own in direct.items()
        if all(_accessed_type(a) == g.value_type for a in own)
        and any(isinstance(a, ins.StoreInstr) for a in own)
        and all(_apart(a, g, own[0]) for a in accesses if a not in own)
    ]


def _accessed_type(access: ir.Instruction) -> ir.Type:
    return access.operands[0].type if isinstance(access, ins.StoreInstr) else access.type


def _apart(access: ir.Instruction, variable: ir.GlobalVariable, own: ir.Instruction) -> bool:
    """Can `access` not reach `variable` (whose accesses are like `own`)?"""
    if isinstance(access, ins.StoreInstr) and access.operands[0] is variable:
        return False  # its address is stored: it escapes
    roots = pointer_roots(pointer_operand(access))
    if roots is not None and variable not in roots:
        if not any(isinstance(r, ir.Argument) for r in roots):
            return True
    kind, other = tbaa_type(own), tbaa_type(access)
    return None not in (kind, other) and OMNIPOTENT_CHAR not in (kind, other) and kind != other


def _promote(function: ir.Function, loop: Loop, variables: list[ir.GlobalVariable]) -> None:
    preheader, exiting, exit_block = loop.preheader, loop.exiting[0], loop.exit
    blocks = [preheader, *loop.blocks]
    ssa = SSABuilder(ir.IRBuilder(preheader))
    for block in blocks:
        for successor in successors(block):
            if successor in loop:
                ssa.add_edge(block, successor)
    initial = {}
    for g in variables:
        ssa.declare(g, g.value_type)
        first = next(i for b in loop.blocks for i in b.instructions if pointer_operand(i) is g)
        load = ins.LoadInstr(preheader, g, f"{g.name}.in", typ=g.value_type)
        load.metadata.update({k: v for k, v in first.metadata.items() if k == "tbaa"})
        preheader.instructions.insert(len(preheader.instructions) - 1, load)
        ssa.write(g, preheader, load)
        initial[g] = load
    loaded: dict[ir.Value, ir.Value] = {}
    order = [b for b in CFG(function).reverse_postorder() if b in loop]
    for block in order:
        for instr in list(block.instructions):
            g = pointer_operand(instr)
            if g not in initial:
                continue
            if isinstance(instr, ins.StoreInstr):
                value = instr.operands[0]
                ssa.write(g, block, loaded.get(value, value))
            else:
                loaded[instr] = ssa.read(g, block)
            remove_instruction(instr)
    for block in blocks:
        ssa.seal(block)
    replace_uses(function, loaded)
    sources = [exiting]
    for g in variables:
        sources = _store_if_changed(
            function, sources, exit_block, g, initial[g], ssa.read(g, exiting)
        )
    landing_block(preheader, loop.header)


def _store_if_changed(
    function: ir.Function,
    sources: list[ir.Block],
    exit_block: ir.Block,
    variable: ir.GlobalVariable,
    initial: ir.Value,
    final: ir.Value,
) -> list[ir.Block]:
    """On the edges from `sources` to `exit_block`: `if (final != initial) variable = final`
    (bit for bit: a float compares as its bits); returns the blocks that now branch there."""
    index = function.blocks.index(exit_block)
    test = function.insert_basic_block(index, f"{variable.name}.changed")
    store = function.insert_basic_block(index + 1, f"{variable.name}.out")
    for source in sources:
        remap_operands(source.terminator, lambda v: test if v is exit_block else v)
    builder = ir.IRBuilder(test)
    a, b = initial, final
    if isinstance(initial.type, (ir.FloatType, ir.DoubleType)):
        bits = ir.IntType(32 if isinstance(initial.type, ir.FloatType) else 64)
        a, b = builder.bitcast(a, bits), builder.bitcast(b, bits)
    builder.cbranch(builder.icmp_unsigned("!=", a, b), store, exit_block)
    builder = ir.IRBuilder(store)
    written = builder.store(final, variable)
    written.metadata.update({k: v for k, v in initial.metadata.items() if k == "tbaa"})
    branch_to(store, exit_block)
    return [test, store]
