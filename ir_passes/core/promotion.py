"""Scalar locals kept in memory only because their address was taken become SSA values again.

The front end gives a local whose address is taken (`swap(&u, &v)`) a stack slot. Once the
callee is inlined (`inlining.py`), nothing may see the address any more: the slot is only
loaded and stored, and its loads hide what the passes read from SSA values, such as the
pointer swap of a time loop (`u` and `v` exchanged through `*a` and `*b`). A slot whose every
use is a load or store of its own type, at its own address, is promoted as the front end
builds SSA (`ssa.SSABuilder`: a load reads the value last stored on every path to it, phis
where paths meet).

A local struct (or an array indexed by constants only) gets a slot of bytes, its members
accessed at constant offsets: once the helpers that took its address are inlined
(`swap_fields(&current, &previous)`), a slot whose every use is a load or store of one scalar
type per offset, the offsets' bytes apart, is split into one slot per member first
(`split_local_structs`), and each member is promoted like a scalar: a grid pointer kept in a
struct and swapped each step becomes the header phis the time-loop passes need, its bounds
(`f->nx`) values. (A struct an initializing call saw stays whole; `loop_promotion.py` carries
its members through the time loop.)
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .cfg import CFG, successors
from .memory import store_size
from .rewrite import remap_operands, remove_instruction, replace_uses, users_of
from .ssa import SSABuilder, remove_trivial_phis

_SCALARS = (ir.IntType, ir.FloatType, ir.DoubleType, ir.PointerType)
#: the most members a slot is split into
MAX_SPLIT_MEMBERS = 64


def split_local_structs(function: ir.Function) -> int:
    """Split `function`'s splittable aggregate slots into one scalar slot per member (see
    the module docstring); returns how many slots were split."""
    users = users_of(function)
    split = 0
    for slot in list(function.blocks[0].instructions):
        layout = _layout(slot, users)
        if layout is None:
            continue
        members, zeroings = layout
        entry = ir.IRBuilder(function.blocks[0])
        entry.position_at_start(function.blocks[0])
        scalars: dict[int, ir.Instruction] = {}
        for offset, (kind, accesses) in sorted(members.items()):
            scalar = scalars[offset] = entry.alloca(kind, name=f"{slot.name}.{offset}")
            for access in accesses:
                address = access.operands[0 if isinstance(access, ins.LoadInstr) else 1]
                remap_operands(access, lambda v, a=address, new=scalar: new if v is a else v)
        for call, start, end in zeroings:  # `field f = {0}`: each member's zero, stored
            builder = ir.IRBuilder(call.parent)
            builder.position_before(call)
            for offset, (kind, _) in sorted(members.items()):
                if start <= offset < end:
                    builder.store(
                        ir.Constant(kind, None if kind == _POINTER else 0), scalars[offset]
                    )
            remove_instruction(call)
        for address in _addresses(slot, users):
            remove_instruction(address)
        split += 1
    return split


_POINTER = ir.PointerType()
#: a slot's members by byte offset (their scalar type, their accesses)
_Members = dict[int, tuple[ir.Type, list[ir.Instruction]]]
#: the memsets that zero a slot's bytes: (call, first byte, end)
_Zeroings = list[tuple[ins.CallInstr, int, int]]


def _layout(
    slot: ir.Instruction, users: dict[ir.Value, list[ir.Instruction]]
) -> tuple[_Members, _Zeroings] | None:
    """The members of an aggregate slot and the memsets that zero them; None when the slot
    is no aggregate or is not splittable (an address escapes, is offset by a variable, two
    accesses differ in type or overlap, a memset zeroes part of a member)."""
    if not isinstance(slot, ins.AllocaInstr) or slot.operands:
        return None
    if not isinstance(slot.allocated_type, (ir.ArrayType, ir.LiteralStructType)):
        return None
    size = store_size(slot.allocated_type)
    members: _Members = {}
    zeroings: _Zeroings = []
    pending = [(slot, 0)]
    while pending:
        address, offset = pending.pop()
        for use in users.get(address, []):
            if isinstance(use, ins.GEPInstr) and use.pointer is address:
                step = _constant_offset(use)
                if step is None:
                    return None
                pending.append((use, offset + step))
                continue
            length = _zeroed_bytes(use, address)
            if length is not None:
                zeroings.append((use, offset, offset + length))
                continue
            if isinstance(use, ins.LoadInstr):
                kind = use.type
            elif isinstance(use, ins.StoreInstr) and use.operands[0] is not address:
                kind = use.operands[0].type
            else:
                return None  # passed, stored, compared, cast: the address escapes
            known = members.setdefault(offset, (kind, []))
            if known[0] != kind or not isinstance(kind, _SCALARS):
                return None
            known[1].append(use)
    spans = [(o, o + (store_size(k) or 0)) for o, (k, _) in sorted(members.items())]
    if size is None or any(o < 0 or end > size for o, end in spans):
        return None
    if any(end > start for (_, end), (start, _) in zip(spans, spans[1:])):
        return None  # members overlap: a union's, or a member read through another type
    for _, first, last in zeroings:
        if any(first < end and start < last and not first <= start < end <= last
               for start, end in spans):  # fmt: skip
            return None
    if not members or len(members) > MAX_SPLIT_MEMBERS:
        return None  # (a large table indexed by constants stays one: its phis would be many)
    return members, zeroings


def _zeroed_bytes(use: ir.Instruction, address: ir.Value) -> int | None:
    """How many bytes from `address` `use` zeroes, if it is a plain `memset(address, 0, n)`
    of a constant `n`; else None."""
    if not isinstance(use, ins.CallInstr) or not use.callee.name.startswith("llvm.memset."):
        return None
    target, value, length, volatile = use.args
    constants = all(isinstance(v, ir.Constant) for v in (value, length, volatile))
    if target is not address or not constants or value.constant != 0 or volatile.constant:
        return None
    return length.constant


def _constant_offset(gep: ins.GEPInstr) -> int | None:
    """The byte offset of a GEP of one constant index over a scalar element type (the front
    end addresses a member as `getelementptr i8, ptr %s, i64 C`, an element of a member array
    as `getelementptr i32, ptr %m, i64 C`); None for any other GEP."""
    element = store_size(gep.source_etype)
    if element is None or len(gep.indices) != 1 or not isinstance(gep.indices[0], ir.Constant):
        return None
    return gep.indices[0].constant * element


def _addresses(
    slot: ir.Instruction, users: dict[ir.Value, list[ir.Instruction]]
) -> list[ir.Instruction]:
    """The GEPs that address into `slot`, innermost first, then the slot itself."""
    found, pending = [], [slot]
    while pending:
        address = pending.pop()
        found.append(address)
        pending += [u for u in users.get(address, []) if isinstance(u, ins.GEPInstr)]
    return found[::-1]


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
