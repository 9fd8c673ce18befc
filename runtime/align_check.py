"""Check mode's run-time test of the alignment the `align` pass proved from declarations.

A wrong `#pragma pycc row_align(8)` (an odd `size_x`, a misaligned base) would make the pass
mark accesses aligned that are not: on the C66x an `_amem8` silently reads the wrong bytes, on
x86 an aligned vector load faults. So `check` runs an instrumented copy: every access the pass
marked (`!pycc.aligned`) goes through `__pycc_align_check(p, align - 1, id)`, which returns `p`
if it is aligned and otherwise records the first violation (access id and address) in a
shared-memory record (the kernel runs in a forked child) and returns a scratch buffer, so the
access itself stays harmless. Pointer parameters lose their `align` attributes in that copy,
or LLVM would fold the test away.
"""

from __future__ import annotations

import ctypes
import mmap
import struct
from dataclasses import dataclass

from llvmlite import ir

from ..ir_passes.core.alignment import ACCESS_ALIGNED, MAX_ALIGNMENT, row_alignment
from ..ir_passes.core.debuginfo import describe

_I64 = ir.IntType(64)
_PTR = ir.PointerType()
_RECORD = struct.Struct("<QQ")  # access id + 1 (0: no violation), address
_HELPER = "__pycc_align_check"


@dataclass(frozen=True)
class CheckedAccess:
    kind: str  # "load" or "store"
    where: str  # file:line:col
    alignment: int
    row_align: int | None


class AlignmentCheck:
    """Instruments a module (in place) and reads back the first violation of a run."""

    def __init__(self, module: ir.Module):
        self._memory = mmap.mmap(-1, mmap.PAGESIZE)
        self._address = _address_of(self._memory)
        self.accesses: list[CheckedAccess] = []
        helper = self._define_helper(module)
        for function in list(module.functions):
            if function.blocks and function is not helper:
                self._instrument(function, helper)

    def reset(self) -> None:
        self._memory[: _RECORD.size] = bytes(_RECORD.size)

    def violation(self) -> str | None:
        """The error message for the first violation since `reset`, if any (in the kernel or
        in a function it calls)."""
        ident, address = _RECORD.unpack(self._memory[: _RECORD.size])
        if ident == 0:
            return None
        access = self.accesses[ident - 1]
        declared = (
            f"declared row_align({access.row_align})"
            if access.row_align is not None
            else "the declared alignment"
        )
        return (
            f"{declared} does not hold: the {access.kind} at {access.where} has address "
            f"{address:#x}, not a multiple of {access.alignment}; a wrong declaration "
            "(the `align` pass relied on it)"
        )

    def _define_helper(self, module: ir.Module) -> ir.Function:
        scratch_type = ir.ArrayType(ir.IntType(8), 4 * MAX_ALIGNMENT)
        scratch = ir.GlobalVariable(module, scratch_type, name="__pycc_align_scratch")
        scratch.type = _PTR
        scratch.linkage = "internal"
        scratch.align = MAX_ALIGNMENT
        scratch.initializer = ir.Constant(scratch.value_type, None)
        helper = ir.Function(module, ir.FunctionType(_PTR, [_PTR, _I64, _I64]), name=_HELPER)
        helper.linkage = "internal"
        pointer, mask, ident = helper.args
        entry, ok, fail, note, done = (
            helper.append_basic_block(n) for n in ("entry", "ok", "fail", "note", "done")
        )
        b = ir.IRBuilder(entry)
        address = b.ptrtoint(pointer, _I64)
        b.cbranch(b.icmp_unsigned("!=", b.and_(address, mask), ir.Constant(_I64, 0)), fail, ok)
        b.position_at_end(ok)
        b.ret(pointer)
        b.position_at_end(fail)
        record = ir.Constant(_I64, self._address).inttoptr(_PTR)
        first = b.icmp_unsigned("==", b.load(record, typ=_I64), ir.Constant(_I64, 0))
        b.cbranch(first, note, done)
        b.position_at_end(note)
        b.store(ident, record)
        b.store(address, b.gep(record, [ir.Constant(_I64, 1)], source_etype=_I64))
        b.branch(done)
        b.position_at_end(done)
        b.ret(scratch)
        return helper

    def _instrument(self, function: ir.Function, helper: ir.Function) -> None:
        rows = row_alignment(function)
        for argument in function.args:
            if isinstance(argument.type, ir.PointerType):
                argument.attributes.align = 0
        for block in function.blocks:
            for instruction in list(block.instructions):
                if instruction.opname not in ("load", "store"):
                    continue
                if ACCESS_ALIGNED not in instruction.metadata or (instruction.align or 1) <= 1:
                    continue
                self.accesses.append(
                    CheckedAccess(
                        instruction.opname,
                        describe(instruction),
                        instruction.align,
                        rows,
                    )
                )
                position = 1 if instruction.opname == "store" else 0
                b = ir.IRBuilder(block)
                b.position_before(instruction)
                checked = b.call(
                    helper,
                    [
                        instruction.operands[position],
                        ir.Constant(_I64, instruction.align - 1),
                        ir.Constant(_I64, len(self.accesses)),
                    ],
                )
                if "dbg" in instruction.metadata:
                    checked.set_metadata("dbg", instruction.metadata["dbg"])
                operands = list(instruction.operands)
                operands[position] = checked
                instruction.operands = operands
                instruction._clear_string_cache()


def _address_of(memory: mmap.mmap) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(memory))
