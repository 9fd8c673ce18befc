"""Instrument a module for the footprint dry run.

Each pointer parameter k of the probed function receives a fake base address in the
non-canonical range, `fake_base(k)`, that no real object can have. Every load and store of the
module goes through a helper that looks at the address: one with nonzero bits above bit 52
belongs to fake region `address >> 52` and only widens that region's [lowest offset, highest
end) byte range (separately for reads and writes), a load from it returning 0; any other address
(locals, file-scope tables) is accessed normally. A counter stops the run past a budget of
accesses (exit status `BUDGET_EXIT_STATUS`, so the dry run must run in a child process).

Integer divisions get a divisor that cannot trap, without changing any defined result: data
read as 0 must not crash the dry run (the taint analysis proves such values never reach an
address).
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from ..ir_passes.rewrite import remove_instruction, replace_uses

REGION_SHIFT = 52
REGION_COUNT = 1 << (64 - REGION_SHIFT)
FAKE_OFFSET = 1 << 50
TABLE = "__pycc_fp_table"  # [REGION_COUNT x [4 x i64]]: read lo, read end, write lo, write end
COUNTER = "__pycc_fp_count"
BUDGET = "__pycc_fp_budget"
BUDGET_EXIT_STATUS = 86
READ, WRITE = 0, 2

_I1, _I32, _I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)


def fake_base(k: int) -> int:
    """The fake address passed for pointer parameter k (0-based among pointer parameters)."""
    return ((k + 1) << REGION_SHIFT) + FAKE_OFFSET


def _store_size(t: ir.Type) -> int:
    if isinstance(t, ir.IntType):
        return (t.width + 7) // 8
    if isinstance(t, ir.FloatType):
        return 4
    if isinstance(t, ir.DoubleType):
        return 8
    if isinstance(t, ir.PointerType):
        return 8
    if isinstance(t, (ir.VectorType, ir.ArrayType)):
        return t.count * _store_size(t.element)
    raise TypeError(f"cannot instrument an access of type {t}")


class _Instrumenter:
    """Builds the helpers once per module and rewrites every function's memory accesses."""

    def __init__(self, module: ir.Module):
        self.module = module
        table_type = ir.ArrayType(ir.ArrayType(_I64, 4), REGION_COUNT)
        self.table = self._global(TABLE, table_type)
        self.counter = self._global(COUNTER, _I64)
        self.budget = self._global(BUDGET, _I64)
        self.record = self._define_record()
        self.tick = self._define_tick()
        self.loads: dict[str, ir.Function] = {}
        self.stores: dict[str, ir.Function] = {}

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
        region = b.lshr(address, ir.Constant(_I64, REGION_SHIFT))
        low_bits = b.and_(address, ir.Constant(_I64, (1 << REGION_SHIFT) - 1))
        offset = b.sub(low_bits, ir.Constant(_I64, FAKE_OFFSET))
        end = b.add(offset, size)
        zero = ir.Constant(_I64, 0)
        lo_ptr = b.gep(self.table, [zero, region, slot], inbounds=True)
        end_ptr = b.gep(
            self.table, [zero, region, b.add(slot, ir.Constant(_I64, 1))], inbounds=True
        )
        lo = b.load(lo_ptr, typ=_I64)
        b.store(b.select(b.icmp_signed("<", offset, lo), offset, lo), lo_ptr)
        old_end = b.load(end_ptr, typ=_I64)
        b.store(b.select(b.icmp_signed(">", end, old_end), end, old_end), end_ptr)
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

    def _dispatch(self, b: ir.IRBuilder, pointer: ir.Value) -> tuple[ir.Value, ir.Block]:
        """Count the access, branch on whether `pointer` is fake and continue in the fake block.

        Returns the address as an integer and the block for real addresses.
        """
        b.call(self.tick, [])
        address = b.ptrtoint(pointer, _I64)
        fake = b.icmp_unsigned("!=", b.lshr(address, _const(REGION_SHIFT)), _const(0))
        fake_block = b.function.append_basic_block("fake")
        real_block = b.function.append_basic_block("real")
        b.cbranch(fake, fake_block, real_block)
        b.position_at_end(fake_block)
        return address, real_block

    def load_helper(self, t: ir.Type) -> ir.Function:
        key = str(t)
        if key not in self.loads:
            function = self._helper(f"__pycc_fp_load.{len(self.loads)}", t, [ir.PointerType()])
            b = ir.IRBuilder(function.append_basic_block("entry"))
            address, real_block = self._dispatch(b, function.args[0])
            b.call(self.record, [address, ir.Constant(_I64, _store_size(t)), _const(READ)])
            b.ret(ir.Constant(t, None))
            b.position_at_end(real_block)
            b.ret(b.load(function.args[0], typ=t, align=1))
            self.loads[key] = function
        return self.loads[key]

    def store_helper(self, t: ir.Type) -> ir.Function:
        key = str(t)
        if key not in self.stores:
            function = self._helper(
                f"__pycc_fp_store.{len(self.stores)}", ir.VoidType(), [t, ir.PointerType()]
            )
            value, pointer = function.args
            b = ir.IRBuilder(function.append_basic_block("entry"))
            address, real_block = self._dispatch(b, pointer)
            b.call(self.record, [address, ir.Constant(_I64, _store_size(t)), _const(WRITE)])
            b.ret_void()
            b.position_at_end(real_block)
            b.store(value, pointer, align=1)
            b.ret_void()
            self.stores[key] = function
        return self.stores[key]

    def instrument(self, function: ir.Function) -> None:
        """Route `function`'s loads and stores through the helpers; make divisions safe."""
        replaced: dict[ir.Value, ir.Value] = {}
        b = ir.IRBuilder()
        for block in list(function.blocks):
            for instr in list(block.instructions):
                b.position_before(instr)
                if isinstance(instr, ins.LoadInstr):
                    call = b.call(self.load_helper(instr.type), [instr.operands[0]])
                    call.metadata.update(instr.metadata)
                    replaced[instr] = call
                    remove_instruction(instr)
                elif isinstance(instr, ins.StoreInstr):
                    value, pointer = instr.operands
                    call = b.call(self.store_helper(value.type), [value, pointer])
                    call.metadata.update(instr.metadata)
                    remove_instruction(instr)
                elif instr.opname in ("sdiv", "udiv", "srem", "urem"):
                    _make_division_safe(b, instr)
        replace_uses(function, replaced)


def _const(value: int) -> ir.Constant:
    return ir.Constant(_I64, value)


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


def instrument_module(module: ir.Module) -> ir.Module:
    """Instrument every function defined in `module`, in place (pass a private copy)."""
    defined = [f for f in module.functions if f.blocks]
    instrumenter = _Instrumenter(module)
    for function in defined:
        instrumenter.instrument(function)
    return module
