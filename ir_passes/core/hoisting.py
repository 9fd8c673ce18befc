"""Loop-invariant values computed in a loop move to its preheader, so the loop analyses see
them as invariant: above all a loop bound read from a global (`i < grid_points[0] - 1`, NAS),
which the front end reloads on every iteration, since the loop may write any global.

Only values read from globals move (and what is computed from them alone), not every
invariant: an address like `u[i]` stays in the block of the load that uses it, which is
what the polyhedral model's statements are made of. Such a value moves when its operands are
all defined outside the loop and executing it once before the loop (even when the loop then
runs zero times) gives the value every iteration computes: the address of a fixed element of
a global, arithmetic that cannot trap (no division), and loads of a fixed element of a
global inside its bounds that nothing in the loop may write. A store may write the
element when its address is not known to lie elsewhere: a pointer argument may point into the
global, an unknown pointer anywhere; a call other than libm's or a memory-free intrinsic may
write anything.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .affine import address_of, size_of
from .analyses import invalidate, loops_of
from .libm import LIBM_FUNCTIONS
from .loops import Loop
from .memory import pointer_roots, store_size
from .rewrite import branch_to, forget_text, used_values
from .symbolic import Expr

#: operations that cannot trap or write memory (division can trap: it stays)
_MOVABLE = frozenset(
    "add sub mul shl lshr ashr and or xor fadd fsub fmul fneg sext zext trunc fpext fptrunc "
    "sitofp uitofp fptosi fptoui bitcast icmp fcmp getelementptr select".split()
)


def hoist_invariants(function: ir.Function) -> int:
    """Move the invariant instructions of every loop of `function` (inner loops first, so a
    value can leave a whole nest) to its preheader; returns how many moved."""
    moved = 0
    derived: set[ir.Instruction] = set()  # the values read from globals, moved or not
    for loop in reversed(loops_of(function).loops):
        if loop.preheader is None:
            continue
        count = _hoist(loop, derived)
        if count and loop.parent is None:
            _empty_preheader(loop)
        moved += count
    if moved:
        invalidate(function)
    return moved


def _empty_preheader(loop: Loop) -> None:
    """Put an empty block between the preheader (now holding hoisted values) and the header:
    a nest's preheader stays empty, as the polyhedral passes want it (they branch around
    the nest there, and the values must be computed before)."""
    before, header = loop.preheader, loop.header
    function = header.parent
    landing = function.insert_basic_block(function.blocks.index(header), f"{header.name}.pre")
    branch_to(landing, header)
    landing.terminator.metadata.update(before.terminator.metadata)
    branch_to(before, landing)
    for phi in (i for i in header.instructions if isinstance(i, ins.PhiInstr)):
        phi.incomings = [(v, landing if b is before else b) for v, b in phi.incomings]
        forget_text(phi)


def _hoist(loop: Loop, derived: set[ir.Instruction]) -> int:
    preheader = loop.preheader
    writes = [i for b in loop.blocks for i in b.instructions if _may_write(i)]
    moved, changed = 0, True
    while changed:
        changed = False
        for block in loop.blocks:
            for instr in list(block.instructions):
                if _invariant(instr, loop) and _movable(instr, writes, derived):
                    derived.add(instr)
                    block.instructions.remove(instr)
                    preheader.instructions.insert(len(preheader.instructions) - 1, instr)
                    instr.parent = preheader
                    forget_text(instr)
                    moved += 1
                    changed = True
    return moved


def _invariant(instr: ir.Instruction, loop: Loop) -> bool:
    return all(
        not isinstance(v, ir.Instruction) or v.parent not in loop for v in used_values(instr)
    )


def _movable(
    instr: ir.Instruction, writes: list[ir.Instruction], derived: set[ir.Instruction]
) -> bool:
    if isinstance(instr, ins.GEPInstr) and isinstance(instr.pointer, ir.GlobalVariable):
        return all(isinstance(i, ir.Constant) for i in instr.indices)
    if instr.opname in _MOVABLE:
        values = [v for v in used_values(instr) if isinstance(v, ir.Instruction)]
        return bool(values) and all(v in derived for v in values)
    if isinstance(instr, ins.LoadInstr):
        span = _global_element(instr.operands[0], instr.type)
        return span is not None and not any(_may_write_to(w, *span) for w in writes)
    return False


def _global_element(pointer: ir.Value, t: ir.Type) -> tuple[ir.GlobalVariable, int, int] | None:
    """(global, first byte, end) of a fixed element of a global, inside its bounds."""
    address = address_of(pointer)
    offset = _constant(address.offset)
    if not isinstance(address.base, ir.GlobalVariable) or offset is None:
        return None
    size, end = store_size(address.base.value_type), offset + size_of(t)
    if size is None or offset < 0 or end > size:
        return None
    return address.base, offset, end


def _may_write(instr: ir.Instruction) -> bool:
    if isinstance(instr, ins.StoreInstr):
        return True
    if isinstance(instr, ins.CallInstr):
        name = getattr(instr.callee, "name", "")
        memory_free = name.startswith("llvm.") and not name.startswith("llvm.mem")
        return not (memory_free or name in LIBM_FUNCTIONS)
    return False


def _may_write_to(write: ir.Instruction, variable: ir.GlobalVariable, lo: int, end: int) -> bool:
    if not isinstance(write, ins.StoreInstr):
        return True  # a call
    pointer = write.operands[1]
    roots = pointer_roots(pointer)
    if roots is None or any(isinstance(r, ir.Argument) for r in roots):
        return True
    if variable not in roots:
        return False  # other globals, locals: never the same bytes
    if roots != {variable}:
        return True
    offset = _constant(address_of(pointer).offset)
    size = store_size(write.operands[0].type)
    return offset is None or size is None or (offset < end and lo < offset + size)


def _constant(expr: Expr) -> int | None:
    return expr.value if expr.is_constant else None
