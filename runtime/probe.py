"""Instrument a module for the footprint dry run (and for traced runs on real data).

Each pointer parameter k of the probed function receives a fake base address in the
non-canonical range, `fake_base(k)`, that no real object can have. Every load and store of the
module goes through a helper that looks at the address: one with nonzero bits above bit 52
belongs to fake region `address >> 52` and widens that region's [lowest offset, highest end)
byte range (separately for reads and writes); any other address (locals, file-scope tables) is
accessed normally. A fake access is then made in the region's real buffer if `REAL` gives it
one and the offset is inside it, else skipped (a load gives 0): a dry run gives no region a
buffer, a traced run gives every region its buffer, so it computes on the real data and
records every access, even those outside the buffers, which it does not make. A counter stops
the run past a budget of accesses (exit status `BUDGET_EXIT_STATUS`, so the run must be in a
child process).

Shadow accesses (see `ir_passes.taint`) are recorded at their branch when `SHADOWING` is set:
their addresses are recomputed there and recorded as if accessed, whichever way the branch
then goes.

Integer divisions get a divisor that cannot trap, without changing any defined result: data
read as 0 must not crash the dry run (the taint analysis proves such values never reach an
address).
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from ..ir_passes.core.cfg import CFG
from ..ir_passes.core.dominance import DominatorTree, dominator_tree
from ..ir_passes.core.memory import base_objects, fixed_size, store_size
from ..ir_passes.core.rewrite import remove_instruction, replace_uses

REGION_SHIFT = 52
REGION_COUNT = 1 << (64 - REGION_SHIFT)
FAKE_OFFSET = 1 << 50
TABLE = "__pycc_fp_table"  # [REGION_COUNT x [4 x i64]]: read lo, read end, write lo, write end
REAL = "__pycc_fp_real"  # [REGION_COUNT x [3 x i64]]: address of offset 0, valid [lo, end)
SHADOWING = "__pycc_fp_shadowing"  # i64: nonzero to record shadow accesses
COUNTER = "__pycc_fp_count"
BUDGET = "__pycc_fp_budget"
BUDGET_EXIT_STATUS = 86
READ, WRITE = 0, 2

_I32, _I64 = ir.IntType(32), ir.IntType(64)
_BUILDER_BINOPS = {"and": "and_", "or": "or_"}
_dominator_trees: dict[ir.Function, DominatorTree] = {}


def fake_base(k: int) -> int:
    """The fake address passed for pointer parameter k (0-based among pointer parameters)."""
    return ((k + 1) << REGION_SHIFT) + FAKE_OFFSET


class _Instrumenter:
    """Builds the helpers once per module and rewrites every function's memory accesses."""

    def __init__(self, module: ir.Module):
        self.module = module
        self.table = self._global(TABLE, ir.ArrayType(ir.ArrayType(_I64, 4), REGION_COUNT))
        self.real = self._global(REAL, ir.ArrayType(ir.ArrayType(_I64, 3), REGION_COUNT))
        self.shadowing = self._global(SHADOWING, _I64)
        self.counter = self._global(COUNTER, _I64)
        self.budget = self._global(BUDGET, _I64)
        self.record = self._define_record()
        self.translate = self._define_translate()
        self.touch = self._define_touch()
        self.tick = self._define_tick()
        self.helpers: dict[tuple[str, bool, bool], ir.Function] = {}

    def _global(self, name: str, t: ir.Type) -> ir.GlobalVariable:
        """A zero-initialized global; the dry-run driver sets it before each run."""
        variable = ir.GlobalVariable(self.module, t, name)
        variable.initializer = ir.Constant(t, None)
        return variable

    def _helper(self, name: str, result: ir.Type, args: list[ir.Type]) -> ir.Function:
        function = ir.Function(self.module, ir.FunctionType(result, args), name)
        function.linkage = "internal"
        function.attributes.add("alwaysinline")
        return function

    def _define_record(self) -> ir.Function:
        """record(address, size, slot): widen [lo, end) of the address's fake region."""
        function = self._helper("__pycc_fp_record", ir.VoidType(), [_I64, _I64, _I64])
        address, size, slot = function.args
        b = ir.IRBuilder(function.append_basic_block("entry"))
        region, offset = _region_offset(b, address)
        end = b.add(offset, size)
        lo_ptr = b.gep(self.table, [_const(0), region, slot], inbounds=True)
        end_ptr = b.gep(self.table, [_const(0), region, b.add(slot, _const(1))], inbounds=True)
        lo = b.load(lo_ptr, typ=_I64)
        b.store(b.select(b.icmp_signed("<", offset, lo), offset, lo), lo_ptr)
        old_end = b.load(end_ptr, typ=_I64)
        b.store(b.select(b.icmp_signed(">", end, old_end), end, old_end), end_ptr)
        b.ret_void()
        return function

    def _define_translate(self) -> ir.Function:
        """translate(address, size): where the fake access is made in its region's real
        buffer, or null if the region has none or the access is not inside it."""
        function = self._helper("__pycc_fp_translate", ir.PointerType(), [_I64, _I64])
        address, size = function.args
        b = ir.IRBuilder(function.append_basic_block("entry"))
        region, offset = _region_offset(b, address)
        base, lo, end = (
            b.load(b.gep(self.real, [_const(0), region, _const(k)], inbounds=True), typ=_I64)
            for k in range(3)
        )
        inside = b.and_(
            b.icmp_signed(">=", offset, lo), b.icmp_signed("<=", b.add(offset, size), end)
        )
        real = b.inttoptr(b.add(base, offset), ir.PointerType())
        b.ret(b.select(inside, real, ir.Constant(ir.PointerType(), None)))
        return function

    def _define_touch(self) -> ir.Function:
        """touch(address, size, slot): record(...) if shadowing and the address is fake."""
        function = self._helper("__pycc_fp_touch", ir.VoidType(), [_I64, _I64, _I64])
        b = ir.IRBuilder(function.append_basic_block("entry"))
        address = function.args[0]
        fake = b.icmp_unsigned("!=", b.lshr(address, _const(REGION_SHIFT)), _const(0))
        shadowing = b.icmp_unsigned("!=", b.load(self.shadowing, typ=_I64), _const(0))
        with b.if_then(b.and_(fake, shadowing)):
            b.call(self.record, list(function.args))
        b.ret_void()
        return function

    def _define_tick(self) -> ir.Function:
        """tick(): count one access; past the budget, _exit(BUDGET_EXIT_STATUS)."""
        function = self._helper("__pycc_fp_tick", ir.VoidType(), [])
        exit_fn = self.module.globals.get("_exit") or ir.Function(
            self.module, ir.FunctionType(ir.VoidType(), [_I32]), "_exit"
        )
        b = ir.IRBuilder(function.append_basic_block("entry"))
        count = b.add(b.load(self.counter, typ=_I64), ir.Constant(_I64, 1))
        b.store(count, self.counter)
        over = b.icmp_signed(">", count, b.load(self.budget, typ=_I64))
        stop, done = function.append_basic_block("stop"), function.append_basic_block("done")
        b.cbranch(over, stop, done)
        b.position_at_end(stop)
        b.call(exit_fn, [ir.Constant(_I32, BUDGET_EXIT_STATUS)])
        b.unreachable()
        b.position_at_end(done)
        b.ret_void()
        return function

    def access_helper(self, t: ir.Type, store: bool, bounded: bool) -> ir.Function:
        """The helper that replaces a load or store of `t` (memoized).

        Plain: a fake address is recorded, then translated to real memory or skipped.
        Bounded (args: ..., object base, last valid offset): an address outside the object is
        skipped. A skipped load gives 0.
        """
        key = (str(t), store, bounded)
        if key not in self.helpers:
            kind = ("store" if store else "load") + ("_bounded" if bounded else "")
            args = ([t] if store else []) + [ir.PointerType()]
            if bounded:
                args += [ir.PointerType(), _I64]
            result = ir.VoidType() if store else t
            function = self._helper(f"__pycc_fp_{kind}.{len(self.helpers)}", result, args)
            pointer = function.args[1 if store else 0]
            b = ir.IRBuilder(function.append_basic_block("entry"))
            b.call(self.tick, [])
            address = b.ptrtoint(pointer, _I64)
            if bounded:
                base, last = function.args[-2:]
                offset = b.sub(address, b.ptrtoint(base, _I64))
                skip = b.icmp_unsigned(">", offset, last)
            else:
                skip = b.icmp_unsigned("!=", b.lshr(address, _const(REGION_SHIFT)), _const(0))
            fake_block = function.append_basic_block("fake")
            real_block = function.append_basic_block("real")
            b.cbranch(skip, fake_block, real_block)
            b.position_at_end(real_block)
            _access(b, function, pointer, t, store)
            b.position_at_end(fake_block)
            if not bounded:
                size = _const(store_size(t))
                b.call(self.record, [address, size, _const(WRITE if store else READ)])
                translated = b.call(self.translate, [address, size])
                translated_block = function.append_basic_block("translated")
                skipped_block = function.append_basic_block("skipped")
                null = ir.Constant(ir.PointerType(), None)
                b.cbranch(b.icmp_unsigned("==", translated, null), skipped_block, translated_block)
                b.position_at_end(translated_block)
                _access(b, function, translated, t, store)
                b.position_at_end(skipped_block)
            if store:
                b.ret_void()
            else:
                b.ret(ir.Constant(t, None))
            self.helpers[key] = function
        return self.helpers[key]

    def shadow(self, branch: ir.Instruction, accesses: list[ir.Instruction]) -> None:
        """Record `accesses` just before `branch`, recomputing their addresses there."""
        b = ir.IRBuilder()
        b.position_before(branch)
        clones: dict[ir.Value, ir.Value] = {}
        for access in accesses:
            if isinstance(access, ins.LoadInstr):
                pointer, t, slot = access.operands[0], access.type, READ
            else:
                pointer, t, slot = access.operands[1], access.operands[0].type, WRITE
            address = b.ptrtoint(_recompute(b, pointer, branch.parent, clones), _I64)
            b.call(self.touch, [address, _const(store_size(t)), _const(slot)]).metadata.update(
                branch.metadata
            )

    def instrument(self, function: ir.Function, bounded: set[ir.Instruction]) -> None:
        """Route `function`'s loads and stores through the helpers; make divisions safe."""
        replaced: dict[ir.Value, ir.Value] = {}
        b = ir.IRBuilder()
        for block in list(function.blocks):
            for instr in list(block.instructions):
                b.position_before(instr)
                if isinstance(instr, (ins.LoadInstr, ins.StoreInstr)):
                    store = isinstance(instr, ins.StoreInstr)
                    args = list(instr.operands)
                    t = args[0].type if store else instr.type
                    if instr in bounded:
                        [obj] = base_objects(args[-1])
                        args += [obj, _const(max(fixed_size(obj) - store_size(t), 0))]
                    call = b.call(self.access_helper(t, store, instr in bounded), args)
                    call.metadata.update(instr.metadata)
                    if not store:
                        replaced[instr] = call
                    remove_instruction(instr)
                elif instr.opname in ("sdiv", "udiv", "srem", "urem"):
                    _make_division_safe(b, instr)
        replace_uses(function, replaced)


def _const(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


def _region_offset(b: ir.IRBuilder, address: ir.Value) -> tuple[ir.Value, ir.Value]:
    """A fake address's region and its byte offset from the region's fake base."""
    region = b.lshr(address, _const(REGION_SHIFT))
    offset = b.sub(b.and_(address, _const((1 << REGION_SHIFT) - 1)), _const(FAKE_OFFSET))
    return region, offset


def _access(
    b: ir.IRBuilder, helper: ir.Function, pointer: ir.Value, t: ir.Type, store: bool
) -> None:
    """End an access helper with the access itself, at `pointer`."""
    if store:
        b.store(helper.args[0], pointer, align=1)
        b.ret_void()
    else:
        b.ret(b.load(pointer, typ=t, align=1))


def _recompute(b: ir.IRBuilder, value: ir.Value, block: ir.Block, clones: dict) -> ir.Value:
    """`value` at the builder's position: itself if already computed by then, else a copy of
    its (pure, see `ir_passes.taint.PURE_OPCODES`) computation."""
    if not isinstance(value, ir.Instruction) or value.parent is block or value in clones:
        return clones.get(value, value)
    dom = _dominator_trees.setdefault(block.parent, dominator_tree(CFG(block.parent)))
    if dom.dominates(value.parent, block):
        return value
    operands = [_recompute(b, op, block, clones) for op in value.operands]
    if isinstance(value, ins.GEPInstr):
        copy = b.gep(operands[0], operands[1:], inbounds=False, source_etype=value.source_etype)
    elif isinstance(value, ins.CastInstr):
        copy = getattr(b, value.opname)(operands[0], value.type)
    else:
        copy = getattr(b, _BUILDER_BINOPS.get(value.opname, value.opname))(*operands)
    clones[value] = copy
    return copy


def _make_division_safe(b: ir.IRBuilder, instr: ir.Instruction) -> None:
    """Divide by 1 where the divisor would trap (x / 0, INT_MIN / -1): both are undefined in C."""
    dividend, divisor = instr.operands
    t = divisor.type
    if not isinstance(t, ir.IntType):
        return
    traps = b.icmp_unsigned("==", divisor, ir.Constant(t, 0))
    if instr.opname in ("sdiv", "srem"):
        overflow = b.and_(
            b.icmp_signed("==", dividend, ir.Constant(t, -(1 << (t.width - 1)))),
            b.icmp_signed("==", divisor, ir.Constant(t, -1)),
        )
        traps = b.or_(traps, overflow)
    instr.operands = [dividend, b.select(traps, ir.Constant(t, 1), divisor)]
    instr._clear_string_cache()


def instrument_module(
    module: ir.Module,
    shadows: dict[ir.Instruction, list[ir.Instruction]],
    bounded: set[ir.Instruction],
) -> ir.Module:
    """Instrument every function defined in `module`, in place (pass a private copy), with the
    shadow and bounded accesses found by `ir_passes.taint.analyse_footprint`."""
    defined = [f for f in module.functions if f.blocks]
    instrumenter = _Instrumenter(module)
    for branch, accesses in shadows.items():
        instrumenter.shadow(branch, accesses)
    _dominator_trees.clear()
    for function in defined:
        instrumenter.instrument(function, bounded)
    return module
