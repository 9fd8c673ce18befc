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

Under C's effective-type rules (`!tbaa`, absent under `-fno-strict-aliasing`) a member read
through a pointer argument moves too (`i < f->nx`, `f->data` in heat-equation codes): a
load at a constant offset from the argument whose type no store of the loop has (a store of
a `double` never changes an `int` or a pointer; char and untagged accesses may change
anything), when it cannot fault before the loop: the argument was accessed before the loop
at that offset or beyond (`f->ny` at offset 4 makes the object's first 8 bytes readable: a
member access points at the start of its struct, an element access into its array).
"""

from __future__ import annotations

from functools import cached_property

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .affine import address_of, size_of
from .analyses import analyses, invalidate, loops_of
from .loops import Loop
from .memory import (
    OMNIPOTENT_CHAR,
    fixed_size,
    may_write,
    pointer_roots,
    store_size,
    tbaa_type,
)
from .rewrite import (
    forget_text,
    landing_block,
    remove_dead,
    remove_instruction,
    replace_uses,
    used_values,
)
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
    derived: set[ir.Instruction] = set()  # the values read from memory, moved or not
    dominators = analyses(function).dominators
    writes = [i for b in function.blocks for i in b.instructions if may_write(i)]
    for loop in reversed(loops_of(function).loops):
        if loop.preheader is None:
            continue
        count = _hoist(loop, derived, _Readable(function, loop, dominators, writes))
        if count and loop.parent is None:  # a nest's preheader stays empty (see landing_block)
            landing_block(loop.preheader, loop.header)
        moved += count
    if moved:
        invalidate(function)
    return moved


def _hoist(loop: Loop, derived: set[ir.Instruction], readable: _Readable) -> int:
    preheader = loop.preheader
    writes = [i for b in loop.blocks for i in b.instructions if may_write(i)]
    moved, changed = 0, True
    while changed:
        changed = False
        for block in loop.blocks:
            for instr in list(block.instructions):
                member = _member_address(instr, loop)
                if member is not None and _member_movable(instr, writes, readable):
                    earlier = readable.same_load(instr)
                    if earlier is not None:  # one value for `m = f->ny + 2` and `j <= f->ny`
                        function = block.parent
                        replace_uses(function, {instr: earlier})
                        remove_instruction(instr)
                        remove_dead(function, [member])  # its address, unless used
                        derived.add(earlier)
                        moved += 1
                        changed = True
                        continue
                    if member is not instr:
                        _move(member, preheader)  # `f + 24`, then the load of `f->data`
                elif not (_invariant(instr, loop) and _movable(instr, writes, derived)):
                    continue
                earlier = _same_fixed_load(instr, preheader) or _same_computation(instr, preheader)
                if earlier is not None:  # one value for every read of `N` in the nest
                    replace_uses(block.parent, {instr: earlier})
                    remove_instruction(instr)
                    moved += 1
                    changed = True
                    continue
                derived.add(instr)
                _move(instr, preheader)
                moved += 1
                changed = True
    return moved


def _same_fixed_load(instr: ir.Instruction, preheader: ir.Block) -> ins.LoadInstr | None:
    """A load at the end of `preheader` (nothing that may write after it) of the global
    element `instr` loads."""
    if not isinstance(instr, ins.LoadInstr):
        return None
    span = _fixed_element(instr.operands[0], instr.type)
    if span is None:
        return None
    for earlier in reversed(preheader.instructions[:-1]):
        if may_write(earlier):
            return None
        if (
            isinstance(earlier, ins.LoadInstr)
            and earlier.type == instr.type
            and _fixed_element(earlier.operands[0], earlier.type) == span
        ):
            return earlier
    return None


def _same_computation(instr: ir.Instruction, preheader: ir.Block) -> ir.Instruction | None:
    """An instruction already moved to `preheader` that computes what `instr` computes: the
    same operation (and comparison predicate) with the same flags on the same operands. Every
    row of a nest writes `(ny + 2)` anew; one value for them all is one parameter of the
    polyhedral model (two values of one row length would be two shapes of one array)."""
    if instr.opname not in _MOVABLE or isinstance(instr, ins.LoadInstr):
        return None
    for earlier in preheader.instructions[:-1]:
        if (
            type(earlier) is type(instr)
            and earlier.opname == instr.opname
            and getattr(earlier, "op", None) == getattr(instr, "op", None)  # a predicate
            and earlier.type == instr.type
            and getattr(earlier, "flags", None) == getattr(instr, "flags", None)
            and getattr(earlier, "inbounds", None) == getattr(instr, "inbounds", None)
            and getattr(earlier, "source_etype", None) == getattr(instr, "source_etype", None)
            and _same_operands(used_values(earlier), used_values(instr))
        ):
            return earlier
    return None


def _same_operands(first: list[ir.Value], second: list[ir.Value]) -> bool:
    return len(first) == len(second) and all(
        a is b
        or (
            isinstance(a, ir.Constant)
            and isinstance(b, ir.Constant)
            and a.type == b.type
            and a.constant == b.constant
        )
        for a, b in zip(first, second)
    )


def _move(instr: ir.Instruction, preheader: ir.Block) -> None:
    """Move `instr` to the end of `preheader` (before its branch)."""
    instr.parent.instructions.remove(instr)
    preheader.instructions.insert(len(preheader.instructions) - 1, instr)
    instr.parent = preheader
    forget_text(instr)


class _Readable:
    """Which bytes of a pointer argument a loop may read before it runs: those below the end
    of an access through the argument at a constant offset that runs on every path into the
    loop (in a block dominating its preheader). Found on first use: most loops read no
    member."""

    def __init__(self, function: ir.Function, loop: Loop, dominators, writes: list):
        """`writes`: every instruction of the function that may write memory."""
        self.function, self.loop, self.dominators, self.writes = function, loop, dominators, writes

    @cached_property
    def _before(self) -> tuple[dict[ir.Argument, int], dict[tuple, ins.LoadInstr]]:
        """(the end of the bytes read or written before the loop, per argument; the loads
        before the loop by (argument, offset, type) when no store or call of the function
        may change what they read: each reads one value)."""
        ends: dict[ir.Argument, int] = {}
        loads: dict[tuple, ins.LoadInstr] = {}
        for block in self.function.blocks:
            if block in self.loop or not self.dominators.dominates(block, self.loop.preheader):
                continue
            for instr in block.instructions:
                span = _argument_span(instr)
                if span is None:
                    continue
                ends[span[0]] = max(ends.get(span[0], 0), span[2])
                if isinstance(instr, ins.LoadInstr) and _unwritten(instr, self.writes):
                    loads.setdefault((span[0], span[1], str(instr.type)), instr)
        return ends, loads

    def same_load(self, load: ins.LoadInstr) -> ins.LoadInstr | None:
        """A load before the loop that reads what `load` reads (none if `load` is one)."""
        span = _argument_span(load)
        earlier = self._before[1].get((span[0], span[1], str(load.type)))
        return earlier if earlier is not load else None

    def load(self, instr: ins.LoadInstr) -> bool:
        """Can `instr` run once before the loop without faulting?"""
        span = _argument_span(instr)
        if span is None:
            return False
        return span[2] <= self._before[0].get(span[0], 0)


def _argument_span(instr: ir.Instruction) -> tuple[ir.Argument, int, int] | None:
    """(argument, first byte, end) of a load or store at a constant, non-negative offset
    from a pointer argument."""
    if isinstance(instr, ins.LoadInstr):
        pointer, t = instr.operands[0], instr.type
    elif isinstance(instr, ins.StoreInstr):
        pointer, t = instr.operands[1], instr.operands[0].type
    else:
        return None
    address = address_of(pointer)
    offset = _constant(address.offset)
    if not isinstance(address.base, ir.Argument) or offset is None or offset < 0:
        return None
    return address.base, offset, offset + size_of(t)


def _member_address(instr: ir.Instruction, loop: Loop) -> ir.Instruction | None:
    """The address of a load of `arg + constant` computed in the loop (`f->data`: the
    front end's `getelementptr i8, f, 24`), to move with the load, or the load itself if
    its address is computed outside the loop; None for anything else."""
    if not isinstance(instr, ins.LoadInstr):
        return None
    pointer = instr.operands[0]
    if not (isinstance(pointer, ins.GEPInstr) and pointer.parent in loop):
        return instr if _invariant(instr, loop) and _argument_span(instr) else None
    constant = all(isinstance(i, ir.Constant) for i in pointer.indices)
    return pointer if constant and isinstance(pointer.pointer, ir.Argument) else None


def _member_movable(load: ins.LoadInstr, writes: list[ir.Instruction], readable: _Readable) -> bool:
    """`load` reads what it read before the loop (no store of the loop has its type) and
    cannot fault there."""
    return _unwritten(load, writes) and readable.load(load)


def _unwritten(load: ins.LoadInstr, writes: list[ir.Instruction]) -> bool:
    """No store of `writes` changes what `load` reads, by C's effective-type rules: each
    has another type than the load's, neither a character type (calls may write anything)."""
    kind = tbaa_type(load)
    if kind is None or kind == OMNIPOTENT_CHAR:
        return False
    for write in writes:
        other = tbaa_type(write) if isinstance(write, ins.StoreInstr) else None
        if other is None or other in (kind, OMNIPOTENT_CHAR):
            return False
    return True


def _invariant(instr: ir.Instruction, loop: Loop) -> bool:
    return all(
        not isinstance(v, ir.Instruction) or v.parent not in loop for v in used_values(instr)
    )


def _movable(
    instr: ir.Instruction, writes: list[ir.Instruction], derived: set[ir.Instruction]
) -> bool:
    if isinstance(instr, ins.GEPInstr) and isinstance(
        instr.pointer, (ir.GlobalVariable, ins.AllocaInstr)
    ):  # a fixed element's address: `&N[1]`, `&current.ny`
        return all(isinstance(i, ir.Constant) for i in instr.indices)
    if instr.opname in _MOVABLE:
        values = [v for v in used_values(instr) if isinstance(v, ir.Instruction)]
        return bool(values) and all(v in derived for v in values)
    if isinstance(instr, ins.LoadInstr):
        span = _fixed_element(instr.operands[0], instr.type)
        return span is not None and (
            _unwritten(instr, writes) or not any(_may_write_to(w, *span) for w in writes)
        )
    return False


def _fixed_element(pointer: ir.Value, t: ir.Type) -> tuple[ir.Value, int, int] | None:
    """(object, first byte, end) of a fixed element of a global or of a local's slot (a
    struct member of `field current`), inside its bounds: always readable."""
    address = address_of(pointer)
    offset = _constant(address.offset)
    if not isinstance(address.base, (ir.GlobalVariable, ins.AllocaInstr)) or offset is None:
        return None
    size, end = fixed_size(address.base), offset + size_of(t)
    if size is None or offset < 0 or end > size:
        return None
    return address.base, offset, end


def _may_write_to(write: ir.Instruction, variable: ir.Value, lo: int, end: int) -> bool:
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
