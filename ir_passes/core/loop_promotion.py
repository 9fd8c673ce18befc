"""Scalars in memory that a loop reads and writes become SSA values inside it.

Legacy stencil codes keep their grids in global pointers (`double *u, *v;` ... `tmp = u; u =
v; v = tmp;`) or in struct members (`field current, previous;` swapped by `swap_fields(&current,
&previous)`) and swap them every step: the time loop then loads its grids from memory, and
the swap is a pair of stores, where the passes need the header phis a swap of locals gives
(`swap_unroll.py`). In an outermost loop that calls nothing but libm and memory-free
intrinsics, a scalar location (a scalar global, or a member at a fixed offset of a local's
slot, which an initializing call outside the loop may have seen) accessed only directly
(`load g`, `store g`, `load (current + 8)`; never through a computed address) that no other
access of the loop may reach is read once before the loop, carried in SSA values through it
(`ssa.SSABuilder`), and written back after it: a global only if its value changed, so no
store is added to a run that made none (another thread may own the global then), a local's
member always (its value before may be uninitialized). No other access may reach it when
each is through a pointer that does not derive from it (or, for a global, from an argument),
its bytes elsewhere in the same slot, or, under C's effective-type rules (`!tbaa`), is of
another type, neither a character type: a `double` store never changes a `double *`.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .affine import address_of, size_of
from .analyses import invalidate, loops_of
from .cfg import CFG, successors
from .loops import Loop
from .memory import (
    OMNIPOTENT_CHAR,
    fixed_size,
    may_write,
    pointer_operand,
    pointer_roots,
    tbaa_type,
)
from .rewrite import branch_to, landing_block, remap_operands, remove_instruction, replace_uses
from .ssa import SSABuilder, remove_trivial_phis

_SCALARS = (ir.IntType, ir.FloatType, ir.DoubleType, ir.PointerType)


@dataclass(frozen=True)
class Location:
    """A scalar in memory: a global (offset 0), or a local's slot and a byte offset in it."""

    base: ir.Value
    offset: int

    @property
    def name(self) -> str:  # (the phis' names)
        return self.base.name + (f".{self.offset}" if self.offset else "")


def promote_scalars_in_loops(function: ir.Function) -> int:
    """Promote the promotable memory scalars of `function`'s outermost loops (see the module
    docstring); returns how many (location, loop) pairs."""
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


def _location(pointer: ir.Value, kind: ir.Type) -> Location | None:
    """The scalar global `pointer` is, or (slot, offset) of a fixed member of a local's slot
    it addresses, inside the slot; None for any other address."""
    if isinstance(pointer, ir.GlobalVariable):
        return Location(pointer, 0) if isinstance(pointer.value_type, _SCALARS) else None
    address = address_of(pointer)
    slot, offset = address.base, address.offset
    if not isinstance(slot, ins.AllocaInstr) or not offset.is_constant:
        return None
    size = fixed_size(slot)
    if size is None or offset.value < 0 or offset.value + size_of(kind) > size:
        return None
    return Location(slot, offset.value)


def _promotable(loop: Loop) -> dict[Location, ir.Type]:
    """The locations of `loop` to promote, with their type."""
    exit_block = loop.exit
    if (
        loop.preheader is None
        or exit_block is None
        or len(loop.exiting) != 1
        or any(isinstance(i, ins.PhiInstr) for i in exit_block.instructions)
    ):
        return {}
    instructions = [i for b in loop.blocks for i in b.instructions]
    if any(isinstance(i, ins.CallInstr) and may_write(i) for i in instructions):
        return {}
    accesses = [i for i in instructions if pointer_operand(i) is not None]
    direct: dict[Location, list[ir.Instruction]] = {}
    for access in accesses:
        if isinstance(_accessed_type(access), _SCALARS):
            location = _location(pointer_operand(access), _accessed_type(access))
            if location is not None:
                direct.setdefault(location, []).append(access)
    kinds = {}
    for location, own in direct.items():
        kind = _accessed_type(own[0])
        if (
            all(_accessed_type(a) == kind for a in own)
            and any(isinstance(a, ins.StoreInstr) for a in own)
            and all(_apart(a, location, kind, own[0]) for a in accesses if a not in own)
        ):
            kinds[location] = kind
    return kinds


def _accessed_type(access: ir.Instruction) -> ir.Type:
    return access.operands[0].type if isinstance(access, ins.StoreInstr) else access.type


def _apart(access: ir.Instruction, location: Location, kind: ir.Type, own: ir.Instruction) -> bool:
    """Can `access` not reach the `kind` at `location` (whose accesses are like `own`)?"""
    base, offset = location.base, location.offset
    if isinstance(access, ins.StoreInstr) and base in (pointer_roots(access.operands[0]) or ()):
        return False  # its address is stored: it escapes
    pointer = pointer_operand(access)
    roots = pointer_roots(pointer)
    if roots is not None and base not in roots:
        if isinstance(base, ins.AllocaInstr) or not any(isinstance(r, ir.Argument) for r in roots):
            return True  # (no argument points into a slot of this call's)
    elif roots == frozenset([base]):  # the same global or slot: apart if its bytes are
        other = address_of(pointer).offset
        if not other.is_constant:
            return False
        end = other.value + size_of(_accessed_type(access))
        return end <= offset or offset + size_of(kind) <= other.value
    elif roots is not None:
        return False  # it or another object
    kinds = tbaa_type(own), tbaa_type(access)
    return None not in kinds and OMNIPOTENT_CHAR not in kinds and kinds[0] != kinds[1]


def _address(location: Location, preheader: ir.Block) -> ir.Value:
    """The location's address, computed at the end of `preheader` for a slot's member."""
    if not location.offset:
        return location.base
    offset = ir.Constant(ir.IntType(64), location.offset)
    member = ins.GEPInstr(
        preheader, location.base, [offset], True, location.name, source_etype=ir.IntType(8)
    )
    preheader.instructions.insert(len(preheader.instructions) - 1, member)
    return member


def _promote(function: ir.Function, loop: Loop, variables: dict[Location, ir.Type]) -> None:
    preheader, exiting, exit_block = loop.preheader, loop.exiting[0], loop.exit
    blocks = [preheader, *loop.blocks]
    ssa = SSABuilder(ir.IRBuilder(preheader))
    for block in blocks:
        for successor in successors(block):
            if successor in loop:
                ssa.add_edge(block, successor)
    initial, addresses = {}, {}
    for location, kind in variables.items():
        ssa.declare(location, kind)
        first = next(
            i
            for b in loop.blocks
            for i in b.instructions
            if pointer_operand(i) is not None
            and _location(pointer_operand(i), _accessed_type(i)) == location
        )
        address = addresses[location] = _address(location, preheader)
        load = ins.LoadInstr(preheader, address, f"{address.name}.in", typ=kind)
        load.metadata.update({k: v for k, v in first.metadata.items() if k == "tbaa"})
        preheader.instructions.insert(len(preheader.instructions) - 1, load)
        ssa.write(location, preheader, load)
        initial[location] = load
    loaded: dict[ir.Value, ir.Value] = {}
    order = [b for b in CFG(function).reverse_postorder() if b in loop]
    for block in order:
        for instr in list(block.instructions):
            pointer = pointer_operand(instr)
            location = None if pointer is None else _location(pointer, _accessed_type(instr))
            if location not in initial:
                continue
            if isinstance(instr, ins.StoreInstr):
                value = instr.operands[0]
                ssa.write(location, block, loaded.get(value, value))
            else:
                loaded[instr] = ssa.read(location, block)
            remove_instruction(instr)
    for block in blocks:
        ssa.seal(block)
    replace_uses(function, loaded)
    sources = [exiting]
    for location in variables:
        sources = _store_after(
            function,
            sources,
            exit_block,
            location,
            addresses[location],
            initial[location],
            ssa.read(location, exiting),
        )
    landing_block(preheader, loop.header)


def _store_after(
    function: ir.Function,
    sources: list[ir.Block],
    exit_block: ir.Block,
    location: Location,
    address: ir.Value,
    initial: ir.Value,
    final: ir.Value,
) -> list[ir.Block]:
    """On the edges from `sources` to `exit_block`: `if (final != initial) variable = final`
    for a global (bit for bit: a float compares as its bits), `variable = final` for a local's
    member (its value before the loop may be uninitialized memory: a test of it would branch
    on an undefined value, which LLVM takes as unreachable); returns the blocks that now
    branch there."""
    index = function.blocks.index(exit_block)
    store = function.insert_basic_block(index, f"{location.name}.out")
    first = store
    if isinstance(location.base, ir.GlobalVariable):
        first = function.insert_basic_block(index, f"{location.name}.changed")
        builder = ir.IRBuilder(first)
        a, b = initial, final
        if isinstance(initial.type, (ir.FloatType, ir.DoubleType)):
            bits = ir.IntType(32 if isinstance(initial.type, ir.FloatType) else 64)
            a, b = builder.bitcast(a, bits), builder.bitcast(b, bits)
        builder.cbranch(builder.icmp_unsigned("!=", a, b), store, exit_block)
    for source in sources:
        remap_operands(source.terminator, lambda v: first if v is exit_block else v)
    written = ir.IRBuilder(store).store(final, address)
    written.metadata.update({k: v for k, v in initial.metadata.items() if k == "tbaa"})
    branch_to(store, exit_block)
    return [first, store] if first is not store else [store]
