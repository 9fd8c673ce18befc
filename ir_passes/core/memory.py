"""Where the pointers of a llvmlite.ir function point: memory objects, arguments, sizes.

The footprint analysis must know, for every load and store, which allocas, globals or pointer
arguments its address may be derived from. Front-end IR keeps every pointer local in SSA form,
so following GEPs, casts, phis and selects back to their roots answers that; a pointer loaded
from memory or made from an integer may point anywhere.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .libm import LIBM_FUNCTIONS

MemoryObject = ins.AllocaInstr | ir.GlobalVariable
#: the `!tbaa` type of C's character types, which may access an object of any type
OMNIPOTENT_CHAR = "omnipotent char"


def tbaa_type(instr: ir.Instruction) -> str | None:
    """The C type name of an access's `!tbaa` tag (`[node, node, 0]`, node `[name, ...]`),
    None without one (under -fno-strict-aliasing, or an access the front end did not tag)."""
    tag = instr.metadata.get("tbaa")
    if tag is None:
        return None
    name = tag.operands[0].operands[0]
    return getattr(name, "string", None)


def may_write(instr: ir.Instruction) -> bool:
    """May `instr` write memory? A store; a call but of libm or a memory-free intrinsic
    (another object's function may read and write any memory)."""
    if isinstance(instr, ins.StoreInstr):
        return True
    if isinstance(instr, ins.CallInstr):
        name = getattr(instr.callee, "name", "")
        memory_free = name.startswith("llvm.") and not name.startswith("llvm.mem")
        return not (memory_free or name in LIBM_FUNCTIONS)
    return False


def pointer_roots(value: ir.Value, _seen: set | None = None) -> frozenset | None:
    """The allocas, globals and function arguments `value` may point into, or None if it may
    point anywhere."""
    seen = set() if _seen is None else _seen
    if isinstance(value, (ins.AllocaInstr, ir.GlobalVariable, ir.Argument)):
        return frozenset([value])
    if isinstance(value, ins.GEPInstr):
        return pointer_roots(value.pointer, seen)
    if isinstance(value, ins.CastInstr) and value.opname in ("bitcast", "addrspacecast"):
        return pointer_roots(value.operands[0], seen)
    if isinstance(value, (ins.PhiInstr, ins.SelectInstr)):
        if value in seen:
            return frozenset()
        seen.add(value)
        sources = (
            [v for v, _ in value.incomings]
            if isinstance(value, ins.PhiInstr)
            else [value.lhs, value.rhs]
        )
        result: frozenset = frozenset()
        for source in sources:
            roots = pointer_roots(source, seen)
            if roots is None:
                return None
            result |= roots
        return result
    return None


def base_objects(value: ir.Value) -> frozenset | None:
    """The allocas and globals `value` may point into, or None if it may also point into an
    argument's memory or anywhere."""
    roots = pointer_roots(value)
    if roots is None or any(isinstance(r, ir.Argument) for r in roots):
        return None
    return roots


def disjoint(a: ir.Value, b: ir.Value) -> bool:
    """Are `a` and `b` two different objects (allocas or globals), which never share a byte?
    A pointer argument is never provably disjoint from anything: it may point into a global,
    or into another argument's memory."""
    objects = (ins.AllocaInstr, ir.GlobalVariable)
    return a is not b and isinstance(a, objects) and isinstance(b, objects)


def fixed_size(obj: MemoryObject) -> int | None:
    """Bytes of an alloca (without a dynamic count) or global; None if not statically known."""
    if isinstance(obj, ins.AllocaInstr):
        if obj.operands and not isinstance(obj.operands[0], ir.Constant):
            return None
        count = obj.operands[0].constant if obj.operands else 1
        size = store_size(obj.allocated_type)
    else:
        count, size = 1, store_size(obj.value_type)
    return None if size is None else count * size


def store_size(t: ir.Type) -> int | None:
    """Bytes of a scalar, vector or array type; None for other types (structs)."""
    if isinstance(t, ir.IntType):
        return (t.width + 7) // 8
    if isinstance(t, (ir.FloatType, ir.PointerType)):
        return 4 if isinstance(t, ir.FloatType) else 8
    if isinstance(t, ir.DoubleType):
        return 8
    if isinstance(t, (ir.VectorType, ir.ArrayType)):
        element = store_size(t.element)
        return None if element is None else t.count * element
    return None


def pointer_operand(instr: ir.Instruction) -> ir.Value | None:
    """The address a load or store accesses; None for other instructions."""
    if isinstance(instr, ins.LoadInstr):
        return instr.operands[0]
    if isinstance(instr, ins.StoreInstr):
        return instr.operands[1]
    return None


def value_operands(instr: ir.Instruction) -> list[ir.Value]:
    """The values `instr` uses (a phi's incoming values, a switch's condition; no blocks)."""
    if isinstance(instr, ins.PhiInstr):
        return [v for v, _ in instr.incomings]
    if isinstance(instr, ins.SwitchInstr):
        return [instr.value]
    return [op for op in instr.operands if not isinstance(op, ir.Block)]


def _users(function: ir.Function) -> dict[ir.Value, list[ir.Instruction]]:
    users: dict[ir.Value, list[ir.Instruction]] = {}
    for block in function.blocks:
        for instr in block.instructions:
            for operand in value_operands(instr):
                users.setdefault(operand, []).append(instr)
    return users


def escaping_objects(function: ir.Function) -> set[MemoryObject]:
    """Allocas and globals whose address flows anywhere but into a load/store/GEP/cast/phi."""
    users = _users(function)
    roots = [i for b in function.blocks for i in b.instructions if isinstance(i, ins.AllocaInstr)]
    roots += [op for op in users if isinstance(op, ir.GlobalVariable)]
    escaping = set()
    for root in roots:
        work, seen = [root], set()
        while work and root not in escaping:
            pointer = work.pop()
            if pointer in seen:
                continue
            seen.add(pointer)
            for user in users.get(pointer, []):
                if isinstance(user, ins.LoadInstr) or (
                    isinstance(user, ins.StoreInstr)
                    and user.operands[1] is pointer
                    and user.operands[0] is not pointer
                ):
                    continue
                derived = isinstance(user, (ins.GEPInstr, ins.PhiInstr, ins.SelectInstr)) or (
                    isinstance(user, ins.CastInstr) and user.opname in ("bitcast", "addrspacecast")
                )
                if derived and base_objects(user) is not None:
                    work.append(user)
                else:
                    escaping.add(root)
                    break
    return escaping
