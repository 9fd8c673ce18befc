"""Does a function's memory footprint depend on the data in its parameter buffers?

The harness measures the footprint of a kernel by a dry run in which loads from parameter
buffers return 0. That is exact only if no address, and no decision whether a parameter access
happens, depends on loaded data. This analysis proves it, or names the instruction that breaks
it.

Taint is every value that may depend on data read through a possibly-parameter pointer (any
pointer not provably into an alloca or global variable). It flows through operands, phis,
selects, casts, calls (the callee is analysed with its tainted arguments), memory objects
(allocas and globals a tainted value was stored into) and control: a branch on a tainted value
taints the phis and stores of the region it controls (the blocks reachable from its successors
before its immediate post-dominator).

A tainted branch is still harmless when every parameter access in its region has an address
computable before the branch (from values that dominate it, through pure integer and GEP
arithmetic): the dry run then records all of them at the branch ("shadow accesses"), so the
footprint is the union over both sides, whichever side the fake data takes. This keeps common
code such as `if (v > 255) out[i] = 255; else out[i] = v;` measurable.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .cfg import CFG
from .debuginfo import describe
from .dominance import dominator_tree, post_dominator_tree

_MemoryObject = ins.AllocaInstr | ir.GlobalVariable


@dataclass(frozen=True)
class DataDependence:
    """Why a dry run cannot give the exact footprint: the instruction and the reason."""

    instruction: ir.Instruction
    reason: str

    def __str__(self) -> str:
        return f"{describe(self.instruction)}: {self.reason}"


#: Instructions an address may be recomputed through at a branch: no side effects, no traps.
PURE_OPCODES = frozenset(
    [
        "getelementptr",
        "add",
        "sub",
        "mul",
        "shl",
        "and",
        "or",
        "xor",
        "lshr",
        "ashr",
        "sext",
        "zext",
        "trunc",
        "bitcast",
        "ptrtoint",
        "inttoptr",
    ]
)


@dataclass(frozen=True)
class FootprintAnalysis:
    """Result for one function (and the functions it calls): why a dry run is not exact (or
    None); the shadow accesses (tainted branch -> the loads/stores of its region) a dry run must
    record at the branch; the `bounded` accesses, to one alloca or global at a data-dependent
    address, which a dry run must bounds-check (its data is not the real data)."""

    dependence: DataDependence | None
    shadows: dict[ir.Instruction, list[ir.Instruction]]
    bounded: set[ir.Instruction]


@dataclass(frozen=True)
class _Summary:
    """What a call to a function does, for given tainted arguments."""

    returns_tainted: bool
    parameter_access: bool  # loads or stores through a possibly-parameter pointer
    stores_unknown: bool  # stores anything through a possibly-parameter pointer
    stores_tainted_unknown: bool  # stores tainted data through one
    dependence: DataDependence | None


#: What is assumed of a function while it is being analysed (recursion): the worst.
_WORST = _Summary(True, True, True, True, None)


def base_objects(value: ir.Value, _seen: set | None = None) -> frozenset | None:
    """The allocas and globals `value` may point into, or None if it may point anywhere."""
    seen = set() if _seen is None else _seen
    if isinstance(value, (ins.AllocaInstr, ir.GlobalVariable)):
        return frozenset([value])
    if isinstance(value, ins.GEPInstr):
        return base_objects(value.pointer, seen)
    if isinstance(value, ins.CastInstr) and value.opname in ("bitcast", "addrspacecast"):
        return base_objects(value.operands[0], seen)
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
            objects = base_objects(source, seen)
            if objects is None:
                return None
            result |= objects
        return result
    return None


def fixed_size(obj: _MemoryObject) -> int | None:
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


def _users(function: ir.Function) -> dict[ir.Value, list[ir.Instruction]]:
    users: dict[ir.Value, list[ir.Instruction]] = {}
    for block in function.blocks:
        for instr in block.instructions:
            for operand in _operands(instr):
                users.setdefault(operand, []).append(instr)
    return users


def _operands(instr: ir.Instruction) -> list[ir.Value]:
    if isinstance(instr, ins.PhiInstr):
        return [v for v, _ in instr.incomings]
    if isinstance(instr, ins.SwitchInstr):
        return [instr.value]
    return [op for op in instr.operands if not isinstance(op, ir.Block)]


def _escaping_objects(function: ir.Function) -> set[_MemoryObject]:
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


class _FunctionTaint:
    """The taint fixpoint of one function for one set of tainted arguments."""

    def __init__(self, analysis: _ModuleTaint, function: ir.Function, tainted_args: frozenset):
        self.analysis = analysis
        self.function = function
        self.cfg = CFG(function)
        self.dom = dominator_tree(self.cfg)
        self.pdom = post_dominator_tree(self.cfg)
        #: tainted value -> when it was found tainted (to report root causes, not consequences)
        self.tainted: dict[ir.Value, int] = {function.args[i]: i for i in tainted_args}
        self.tainted_objects: set[_MemoryObject] = set()
        self.controlled: set[ir.Block] = set()  # blocks under a tainted branch
        self.phi_blocks: set[ir.Block] = set()  # blocks whose phis a tainted branch decides
        self.tainted_branches: set[ir.Instruction] = set()
        self.escaping: set[_MemoryObject] | None = None
        self.stores_unknown = False
        self.stores_tainted_unknown = False

    def run(self) -> _Summary:
        changed = True
        while changed:
            changed = False
            for block in self.cfg.blocks:
                for instr in block.instructions:
                    changed |= self._visit(block, instr)
        return self._summary()

    def _object_tainted(self, obj: _MemoryObject) -> bool:
        return obj in self.tainted_objects or obj in self.analysis.tainted_globals

    def _taint_objects(self, objects: frozenset | set) -> bool:
        changed = False
        for obj in objects:
            if not self._object_tainted(obj):
                changed = True
                if isinstance(obj, ir.GlobalVariable):
                    self.analysis.tainted_globals.add(obj)
                else:
                    self.tainted_objects.add(obj)
        return changed

    def _tainted_store_to_unknown(self) -> bool:
        """Tainted data went through a pointer that may alias any escaping object."""
        if self.escaping is None:
            self.escaping = _escaping_objects(self.function)
        changed = not self.stores_tainted_unknown
        self.stores_tainted_unknown = True
        return self._taint_objects(self.escaping | self.analysis.writable_globals) or changed

    def _store(self, pointer: ir.Value, tainted_value: bool) -> bool:
        objects = base_objects(pointer)
        if objects is None:
            self.stores_unknown = True
            return self._tainted_store_to_unknown() if tainted_value else False
        return self._taint_objects(objects) if tainted_value else False

    def _visit(self, block: ir.Block, instr: ir.Instruction) -> bool:
        changed = False
        if isinstance(instr, ins.StoreInstr):
            value, pointer = instr.operands
            tainted_value = value in self.tainted or pointer in self.tainted
            return self._store(pointer, tainted_value or block in self.controlled)
        if isinstance(instr, (ins.ConditionalBranch, ins.SwitchInstr)):
            condition = _operands(instr)[0]
            if condition in self.tainted and instr not in self.tainted_branches:
                self.tainted_branches.add(instr)
                region = self._region(block)
                self.controlled |= region
                self.phi_blocks |= region | {self.pdom.idom(block)}
                return True
            return False
        if isinstance(instr, ins.CallInstr):
            changed = self._call(block, instr)
        if instr not in self.tainted and self._is_tainted(block, instr):
            self.tainted[instr] = len(self.tainted)
            changed = True
        return changed

    def _is_tainted(self, block: ir.Block, instr: ir.Instruction) -> bool:
        if isinstance(instr, ins.LoadInstr):
            pointer = pointer_operand(instr)
            objects = base_objects(pointer)
            return (
                objects is None
                or pointer in self.tainted
                or any(self._object_tainted(o) for o in objects)
            )
        if isinstance(instr, ins.PhiInstr) and block in self.phi_blocks:
            return True
        if isinstance(instr, ins.CallInstr):
            return self._call_summary(instr).returns_tainted
        return any(op in self.tainted for op in _operands(instr))

    def _call_summary(self, call: ins.CallInstr) -> _Summary:
        callee = call.callee
        args = call.args
        tainted_args = frozenset(i for i, a in enumerate(args) if a in self.tainted)
        if isinstance(callee, ir.Function) and callee.blocks:
            return self.analysis.summary(callee, tainted_args)
        # A declaration: an intrinsic or a libm function (the front end calls nothing else).
        pointers = [a for a in args if isinstance(a.type, ir.PointerType)]
        unknown = any(base_objects(p) is None for p in pointers)
        tainted = bool(tainted_args) or any(
            self._object_tainted(o) for p in pointers for o in (base_objects(p) or ())
        )
        return _Summary(tainted, unknown, unknown, unknown and tainted, None)

    def _call(self, block: ir.Block, call: ins.CallInstr) -> bool:
        summary = self._call_summary(call)
        stores = summary.stores_tainted_unknown or (
            summary.stores_unknown and block in self.controlled
        )
        changed = False
        if summary.stores_unknown:
            self.stores_unknown = True
        if stores:
            changed |= self._tainted_store_to_unknown()
            for arg in call.args:
                if isinstance(arg.type, ir.PointerType):
                    changed |= self._taint_objects(base_objects(arg) or frozenset())
        return changed

    def _region(self, block: ir.Block) -> set[ir.Block]:
        """Blocks a branch at the end of `block` decides on (before its post-dominator)."""
        barrier = self.pdom.idom(block)
        return self.cfg.reachable(self.cfg.succs[block], barrier if block in self.pdom else None)

    def _parameter_access(self, instr: ir.Instruction) -> bool:
        pointer = pointer_operand(instr)
        if pointer is not None:
            return base_objects(pointer) is None
        if isinstance(instr, ins.CallInstr):
            return self._call_summary(instr).parameter_access
        return False

    def _hoistable(self, access: ir.Instruction, branch_block: ir.Block) -> bool:
        """Can `access`'s address be computed at the end of `branch_block`?"""
        pointer = pointer_operand(access)
        return pointer is not None and self._available(pointer, branch_block)

    def _available(self, value: ir.Value, block: ir.Block) -> bool:
        if not isinstance(value, ir.Instruction):
            return True  # constants, arguments, globals
        if value in self.tainted:
            return False
        if value.parent is block or self.dom.dominates(value.parent, block):
            return True
        return value.opname in PURE_OPCODES and all(
            self._available(op, block) for op in _operands(value)
        )

    def _summary(self) -> _Summary:
        returns = any(
            isinstance(i, ins.Ret) and i.return_value in self.tainted
            for b in self.cfg.blocks
            for i in b.instructions
        )
        access = any(self._parameter_access(i) for b in self.cfg.blocks for i in b.instructions)
        return _Summary(
            returns, access, self.stores_unknown, self.stores_tainted_unknown, self._dependence()
        )

    def _dependence(self) -> DataDependence | None:
        """The dependence whose cause (address or condition) was tainted first, if any."""
        found = []
        for block in self.cfg.blocks:
            for instr in block.instructions:
                dependence = self._instruction_dependence(block, instr)
                if dependence is not None:
                    cause = pointer_operand(instr)
                    if isinstance(instr, (ins.ConditionalBranch, ins.SwitchInstr)):
                        cause = _operands(instr)[0]
                    order = self.tainted.get(cause, len(self.tainted))
                    found.append((order, len(found), dependence))
        return min(found)[2] if found else None

    def _instruction_dependence(
        self, block: ir.Block, instr: ir.Instruction
    ) -> DataDependence | None:
        if pointer_operand(instr) in self.tainted:
            objects = base_objects(pointer_operand(instr))
            if objects is not None and len(objects) == 1 and fixed_size(next(iter(objects))):
                self.analysis.bounded.add(instr)  # a local table indexed by data
                return None
            return DataDependence(instr, "address depends on data read from a parameter buffer")
        if instr in self.tainted_branches:
            region = self._region(block)
            accesses = [i for b in region for i in b.instructions if self._parameter_access(i)]
            if accesses and not all(self._hoistable(i, block) for i in accesses):
                return DataDependence(
                    instr,
                    "branch on data read from a parameter buffer decides which buffer "
                    "elements are accessed",
                )
            if accesses:
                self.analysis.shadows[instr] = accesses
        if isinstance(instr, ins.CallInstr):
            callee = instr.callee
            if not (isinstance(callee, ir.Function) and callee.blocks):
                pointers = [a for a in instr.args if isinstance(a.type, ir.PointerType)]
                if any(base_objects(p) is None for p in pointers):
                    return DataDependence(
                        instr, f"call to {callee.name} with a parameter buffer is not modelled"
                    )
            return self._call_summary(instr).dependence
        return None


class _ModuleTaint:
    """Summaries of every analysed (function, tainted arguments) pair of one module."""

    def __init__(self, module: ir.Module, tainted_globals: set[ir.GlobalVariable]):
        self.module = module
        self.summaries: dict[tuple[str, frozenset], _Summary] = {}
        self.tainted_globals = set(tainted_globals)
        self.shadows: dict[ir.Instruction, list[ir.Instruction]] = {}
        self.bounded: set[ir.Instruction] = set()
        self.writable_globals: set[ir.GlobalVariable] = {
            g
            for g in module.global_values
            if isinstance(g, ir.GlobalVariable) and not g.global_constant
        }

    def summary(self, function: ir.Function, tainted_args: frozenset) -> _Summary:
        key = (function.name, tainted_args)
        if key not in self.summaries:
            self.summaries[key] = _WORST  # assumed while recursing
            self.summaries[key] = _FunctionTaint(self, function, tainted_args).run()
        return self.summaries[key]


def analyse_footprint(module: ir.Module, function_name: str) -> FootprintAnalysis:
    """Can one dry run give the exact footprint of `function_name`, and what must it record?

    A None dependence means: whatever the parameter buffers hold, the function accesses the
    same parameter addresses, or (under tainted branches) a subset of the shadow accesses.
    """
    function = module.get_global(function_name)
    tainted_globals: set[ir.GlobalVariable] = set()
    while True:  # until the globals that hold tainted data are known for all functions
        analysis = _ModuleTaint(module, tainted_globals)
        summary = analysis.summary(function, frozenset())
        if analysis.tainted_globals == tainted_globals:
            return FootprintAnalysis(summary.dependence, analysis.shadows, analysis.bounded)
        tainted_globals = set(analysis.tainted_globals)
