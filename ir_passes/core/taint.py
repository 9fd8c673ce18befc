"""Whose memory footprint depends on the data in the parameter buffers?

The harness measures the footprint of a kernel by a dry run in which loads from parameter
buffers return 0. For one pointer parameter that is exact only if no address of an access to
its memory, and no decision whether such an access happens, depends on loaded data. This
analysis names, per pointer parameter, an instruction that breaks it, if any: only those
parameters need their extent from elsewhere, the others' footprints are exact.

Taint is every value that may depend on data read from parameter memory. It flows through
operands, phis, selects, casts, memory objects (allocas and globals a tainted value was stored
into), calls (the callee is analysed in the calling context: which arguments are tainted values
and which pointer arguments point to memory holding data) and control: a branch on a tainted
value taints the phis and stores of the region it controls (the blocks reachable from its
successors before its immediate post-dominator), except phis whose incoming values all compute
the same thing (`if (c) { ...; i++; } else { ...; i++; }`).

An access at a tainted address makes the parameters its pointer derives from depend on data
(one into a single local table is bounds-checked by the dry run instead: "bounded"). An access
under a tainted branch is harmless when its address is computable before the branch (from
values that dominate it, through pure integer and GEP arithmetic): the dry run records it at
the branch ("shadow access"), so the footprint is the union over both sides, whichever side the
fake data takes. This keeps `if (v > 255) out[i] = 255; else out[i] = v;` measurable. Any other
parameter access under a tainted branch (or a call making one) makes its parameters depend on
data. What cannot be pinned on parameters (an access through a pointer loaded from memory, a
local array indexed by data, a library function given a parameter buffer) makes all of them
depend on data: no dry run would be exact or safe.

Callees are summarised per calling context; recursive ones by iterating from "does nothing"
until the summaries no longer change.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .cfg import CFG
from .debuginfo import describe
from .dominance import dominator_tree, post_dominator_tree
from .memory import (
    MemoryObject,
    escaping_objects,
    fixed_size,
    pointer_operand,
    pointer_roots,
    value_operands,
)

#: In a set of argument indices: memory reached through a pointer of unknown origin.
UNKNOWN = -1


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

_ADDRESS = "address depends on data read from a parameter buffer"
_BRANCH = "branch on data read from a parameter buffer decides which buffer elements are accessed"


@dataclass(frozen=True)
class FootprintAnalysis:
    """Result for one function (and the functions it calls): per pointer argument index whose
    footprint depends on data, why; the shadow accesses (tainted branch -> the loads/stores of
    its region) a dry run must record at the branch; the `bounded` accesses, to one alloca or
    global at a data-dependent address, which a dry run must bounds-check (its data is not the
    real data)."""

    dependences: dict[int, DataDependence]
    shadows: dict[ir.Instruction, list[ir.Instruction]]
    bounded: set[ir.Instruction]


@dataclass(frozen=True)
class _Blame:
    """A dependence and the pointer arguments whose footprint it makes data-dependent."""

    order: int  # when its cause was found tainted: root causes are reported first
    dependence: DataDependence
    arguments: frozenset[int]  # UNKNOWN: all of them


@dataclass(frozen=True)
class _Context:
    """How a function is called: which arguments are tainted values, which pointer arguments
    point to memory that may hold data."""

    values: frozenset[int]
    memory: frozenset[int]


@dataclass(frozen=True)
class _Summary:
    """What a call does, in one context. Argument indices; UNKNOWN stands for memory reached
    through pointers of unknown origin."""

    returns_tainted: bool
    accessed: frozenset[int]  # whose memory it reads or writes
    stored: frozenset[int]  # whose memory it writes
    tainted_stored: frozenset[int]  # whose memory it writes data into
    blames: frozenset[_Blame]


_NOTHING = _Summary(False, frozenset(), frozenset(), frozenset(), frozenset())


def _signature(instr: ir.Instruction) -> tuple | None:
    """What fixes the value of a side-effect-free instruction, None for any other."""
    if not (
        type(instr) is ir.Instruction  # the arithmetic operators
        or isinstance(instr, (ins.CastInstr, ins.CompareInstr, ins.GEPInstr))
    ):
        return None
    return (
        type(instr),
        instr.opname,
        str(instr.type),
        tuple(instr.flags),
        getattr(instr, "op", None),
        getattr(instr, "inbounds", None),
        str(getattr(instr, "source_etype", "")),
        tuple((str(op.type), op.get_reference()) for op in instr.operands),
    )


def _computes_same(a: ir.Value, b: ir.Value) -> bool:
    """Whether `a` and `b` are the same value: one value, or the same pure computation on the
    same operands (SSA values do not change, so it gives the same result everywhere)."""
    if a is b:
        return True
    if not (isinstance(a, ir.Instruction) and isinstance(b, ir.Instruction)):
        return False
    signature = _signature(a)
    return signature is not None and signature == _signature(b)


class _FunctionTaint:
    """The taint fixpoint of one function in one calling context."""

    def __init__(self, analysis: _ModuleTaint, function: ir.Function, context: _Context):
        self.analysis = analysis
        self.function = function
        self.context = context
        self.cfg = CFG(function)
        self.dom = dominator_tree(self.cfg)
        self.pdom = post_dominator_tree(self.cfg)
        self.argument_index = {arg: i for i, arg in enumerate(function.args)}
        #: tainted value -> when it was found tainted (to report root causes, not consequences)
        self.tainted: dict[ir.Value, int] = {function.args[i]: i for i in context.values}
        self.tainted_objects: set[MemoryObject] = set()
        #: data was stored through an argument, whose memory may be any argument's
        self.arguments_clobbered = False
        self.controlled: set[ir.Block] = set()  # blocks under a tainted branch
        self.phi_blocks: set[ir.Block] = set()  # blocks whose phis a tainted branch decides
        self.tainted_branches: set[ir.Instruction] = set()
        self.escaping: set[MemoryObject] | None = None
        self.stored: set[int] = set()
        self.tainted_stored: set[int] = set()

    def run(self) -> _Summary:
        changed = True
        while changed:
            changed = False
            for block in self.cfg.blocks:
                for instr in block.instructions:
                    changed |= self._visit(block, instr)
        return self._summary()

    # ----------------------------------------------------------------- memory
    def _arguments(self, roots: frozenset | None) -> frozenset[int]:
        """The argument indices among pointer roots (UNKNOWN for an unknown pointer)."""
        if roots is None:
            return frozenset([UNKNOWN])
        return frozenset(
            self.argument_index[r]
            for r in roots
            if isinstance(r, ir.Argument) and not is_frame_argument(r)
        )

    def _object_tainted(self, obj: MemoryObject) -> bool:
        return obj in self.tainted_objects or obj in self.analysis.tainted_globals

    def _memory_tainted(self, pointer: ir.Value) -> bool:
        """May the memory `pointer` points to hold data?"""
        roots = pointer_roots(pointer)
        if roots is None:
            return True
        return any(self._root_tainted(r) for r in roots)

    def _root_tainted(self, root: ir.Value) -> bool:
        if not isinstance(root, ir.Argument):
            return self._object_tainted(root)
        if self.arguments_clobbered or self.argument_index[root] in self.context.memory:
            return True
        return is_frame_argument(root) and root in self.tainted_objects

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
            self.escaping = escaping_objects(self.function)
        changed = not self.arguments_clobbered
        self.arguments_clobbered = True
        return self._taint_objects(self.escaping | self.analysis.writable_globals) or changed

    def _store(self, pointer: ir.Value | None, tainted: bool) -> bool:
        """A store through `pointer` (None: of unknown origin), of data if `tainted`.

        An argument's memory cannot be one of this function's allocas (they did not exist
        when it was called): only the caller's objects, which the summary tells it about.
        """
        roots = None if pointer is None else pointer_roots(pointer)
        arguments = self._arguments(roots)
        self.stored |= arguments
        if not tainted:
            return False
        self.tainted_stored |= arguments
        if roots is None:
            return self._tainted_store_to_unknown()
        changed = arguments and not self.arguments_clobbered
        self.arguments_clobbered |= bool(arguments)
        objects = {r for r in roots if not isinstance(r, ir.Argument) or is_frame_argument(r)}
        return self._taint_objects(objects) or bool(changed)

    # ----------------------------------------------------------------- propagation
    def _visit(self, block: ir.Block, instr: ir.Instruction) -> bool:
        changed = False
        if isinstance(instr, ins.StoreInstr):
            value, pointer = instr.operands
            tainted_value = value in self.tainted or pointer in self.tainted
            return self._store(pointer, tainted_value or block in self.controlled)
        if isinstance(instr, (ins.ConditionalBranch, ins.SwitchInstr)):
            condition = value_operands(instr)[0]
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
            return pointer in self.tainted or self._memory_tainted(pointer)
        if isinstance(instr, ins.PhiInstr) and block in self.phi_blocks:
            first, *others = value_operands(instr)
            if not all(_computes_same(first, other) for other in others):
                return True
        if isinstance(instr, ins.CallInstr):
            return self._call_summary(instr).returns_tainted
        return any(op in self.tainted for op in value_operands(instr))

    def _call_summary(self, call: ins.CallInstr) -> _Summary:
        callee = call.callee
        values = frozenset(i for i, a in enumerate(call.args) if a in self.tainted)
        pointers = frozenset(
            i for i, a in enumerate(call.args) if isinstance(a.type, ir.PointerType)
        )
        memory = frozenset(i for i in pointers if self._memory_tainted(call.args[i]))
        if isinstance(callee, ir.Function) and callee.blocks:
            return self.analysis.summary(callee, _Context(values, memory))
        # A declaration: an intrinsic, a libm function, or another object's function, which
        # reaches the parameters' memory only through the pointers passed to it.
        tainted = bool(values or memory)
        return _Summary(
            tainted, pointers, pointers, pointers if tainted else frozenset(), frozenset()
        )

    def _call(self, block: ir.Block, call: ins.CallInstr) -> bool:
        """The callee's stores, as stores through the pointers passed to it."""
        summary = self._call_summary(call)
        changed = False
        for i in summary.stored:
            pointer = None if i == UNKNOWN else call.args[i]
            tainted = i in summary.tainted_stored or block in self.controlled
            changed |= self._store(pointer, tainted)
        return changed

    def _region(self, block: ir.Block) -> set[ir.Block]:
        """Blocks a branch at the end of `block` decides on (before its post-dominator)."""
        barrier = self.pdom.idom(block)
        return self.cfg.reachable(self.cfg.succs[block], barrier if block in self.pdom else None)

    # ----------------------------------------------------------------- results
    def _accessed(self, instr: ir.Instruction) -> frozenset[int]:
        """The arguments (UNKNOWN: also any memory) whose memory `instr` reads or writes."""
        pointer = pointer_operand(instr)
        if pointer is not None:
            return self._arguments(pointer_roots(pointer))
        if isinstance(instr, ins.CallInstr):
            return self._caller_arguments(instr, self._call_summary(instr).accessed)
        return frozenset()

    def _caller_arguments(self, call: ins.CallInstr, callee_args: frozenset[int]) -> frozenset:
        """Arguments of the callee -> the arguments of this function they point into."""
        result: set[int] = set()
        for i in callee_args:
            result |= {UNKNOWN} if i == UNKNOWN else self._arguments(pointer_roots(call.args[i]))
        return frozenset(result)

    def _blamed(self, roots: frozenset | None) -> frozenset[int]:
        """The arguments to blame for a data-dependent access through a pointer with these
        roots: UNKNOWN (all) if it may also reach other memory, where a dry run would access
        real memory at an address made from fake data."""
        if roots is None or not all(isinstance(r, ir.Argument) for r in roots):
            return frozenset([UNKNOWN])
        return self._arguments(roots)

    def _blamed_by_callee(self, call: ins.CallInstr, callee_args: frozenset[int]) -> frozenset:
        """Arguments of the callee blamed for a dependence -> this function's."""
        return frozenset().union(
            *(
                self._blamed(None if i == UNKNOWN else pointer_roots(call.args[i]))
                for i in callee_args
            )
        )

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
            self._available(op, block) for op in value_operands(value)
        )

    def _summary(self) -> _Summary:
        returns = any(
            isinstance(i, ins.Ret) and i.return_value in self.tainted
            for b in self.cfg.blocks
            for i in b.instructions
        )
        accessed: set[int] = set()
        blames: set[_Blame] = set()
        for block in self.cfg.blocks:
            for instr in block.instructions:
                accessed |= self._accessed(instr)
                blames |= self._instruction_blames(block, instr)
        return _Summary(
            returns,
            frozenset(accessed),
            frozenset(self.stored),
            frozenset(self.tainted_stored),
            frozenset(blames),
        )

    def _instruction_blames(self, block: ir.Block, instr: ir.Instruction) -> set[_Blame]:
        pointer = pointer_operand(instr)
        if pointer in self.tainted:
            roots = pointer_roots(pointer)
            if roots is not None and len(roots) == 1:
                [root] = roots
                if not isinstance(root, ir.Argument) and fixed_size(root):
                    self.analysis.bounded.add(instr)  # a local table indexed by data
                    return set()
            dependence = DataDependence(instr, _ADDRESS)
            return {_Blame(self.tainted[pointer], dependence, self._blamed(roots))}
        if instr in self.tainted_branches:
            return self._branch_blames(block, instr)
        if isinstance(instr, ins.CallInstr):
            last = len(self.tainted)
            callee = instr.callee
            if not (isinstance(callee, ir.Function) and callee.blocks):
                if not self._accessed(instr):
                    return set()
                reason = f"call to {callee.name} with a parameter buffer is not modelled"
                return {_Blame(last, DataDependence(instr, reason), frozenset([UNKNOWN]))}
            return {
                _Blame(last, b.dependence, self._blamed_by_callee(instr, b.arguments))
                for b in self._call_summary(instr).blames
            }
        return set()

    def _branch_blames(self, block: ir.Block, branch: ir.Instruction) -> set[_Blame]:
        """Shadow the accesses of a tainted branch's region that can be; blame the others."""
        region = self._region(block)
        accesses = [i for b in region for i in b.instructions if self._accessed(i)]
        shadows = [i for i in accesses if self._hoistable(i, block)]
        if shadows:
            self.analysis.shadows[branch] = shadows
        blamed = frozenset().union(*(self._accessed(i) for i in accesses if i not in shadows))
        if not blamed:
            return set()
        order = self.tainted[value_operands(branch)[0]]
        return {_Blame(order, DataDependence(branch, _BRANCH), blamed)}


class _ModuleTaint:
    """One round of summaries of every analysed (function, context) pair of one module."""

    def __init__(
        self,
        module: ir.Module,
        tainted_globals: set[ir.GlobalVariable],
        assumed: dict[tuple[str, _Context], _Summary],
    ):
        self.module = module
        #: the previous round's summaries, assumed for calls into a function being analysed
        self.assumed = assumed
        self.assumption_used = False
        self.summaries: dict[tuple[str, _Context], _Summary] = {}
        self._in_progress: set[tuple[str, _Context]] = set()
        self.tainted_globals = set(tainted_globals)
        self.shadows: dict[ir.Instruction, list[ir.Instruction]] = {}
        self.bounded: set[ir.Instruction] = set()
        self.writable_globals: set[ir.GlobalVariable] = {
            g
            for g in module.global_values
            if isinstance(g, ir.GlobalVariable) and not g.global_constant
        }

    def summary(self, function: ir.Function, context: _Context) -> _Summary:
        key = (function.name, context)
        if key in self._in_progress:
            self.assumption_used = True
        elif key not in self.summaries:
            self._in_progress.add(key)
            self.summaries[key] = self.assumed.get(key, _NOTHING)
            self.summaries[key] = _FunctionTaint(self, function, context).run()
            self._in_progress.discard(key)
        return self.summaries[key]


def is_frame_argument(argument: ir.Argument) -> bool:
    """A struct passed by value (`byval`: the callee's own copy, its values the caller's) or
    the slot of a struct result (`sret`): memory of the call, not a parameter buffer."""
    return any(str(a).startswith(("byval(", "sret(")) for a in argument.attributes)


def analyse_footprint(module: ir.Module, function_name: str) -> FootprintAnalysis:
    """Which pointer arguments of `function_name` have a footprint a dry run cannot measure
    exactly, and what must the dry run record for the others?

    An argument without a dependence: whatever the parameter buffers hold, the function
    accesses the same addresses of its memory, or (under tainted branches) a subset of the
    shadow accesses.
    """
    function = module.get_global(function_name)
    pointers = frozenset(
        i
        for i, a in enumerate(function.args)
        if isinstance(a.type, ir.PointerType) and not is_frame_argument(a)
    )
    context = _Context(frozenset(), pointers)
    tainted_globals: set[ir.GlobalVariable] = set()
    assumed: dict[tuple[str, _Context], _Summary] = {}
    while True:  # until the globals holding data and the recursive summaries are stable
        analysis = _ModuleTaint(module, tainted_globals, assumed)
        summary = analysis.summary(function, context)
        stable = not analysis.assumption_used or analysis.summaries == assumed
        if stable and analysis.tainted_globals == tainted_globals:
            break
        tainted_globals, assumed = set(analysis.tainted_globals), analysis.summaries
    dependences = {}
    for blame in sorted(summary.blames, key=lambda b: (b.order, str(b.dependence))):
        for i in pointers if UNKNOWN in blame.arguments else blame.arguments:
            dependences.setdefault(i, blame.dependence)
    return FootprintAnalysis(dependences, analysis.shadows, analysis.bounded)
