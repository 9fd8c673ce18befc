"""Replacing values in llvmlite.ir functions.

llvmlite's own `replace_usage` misses operands that some instructions keep in extra attributes
(a GEP prints `pointer`/`indices`, not `operands`) and leaves stale cached text behind; passes
that rewrite IR use this instead.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable

from llvmlite import ir
from llvmlite.ir import instructions as ins


def remap_operands(instr: ir.Instruction, new: Callable[[ir.Value], ir.Value]) -> None:
    """Replace every value `instr` uses (incoming values of a phi, operands, and the extra
    attributes GEPs and aggregates print) by `new(value)`; phi incoming blocks are kept."""
    if isinstance(instr, ins.PhiInstr):
        instr.incomings = [(new(v), b) for v, b in instr.incomings]
    else:
        operands = [new(op) for op in instr.operands]
        instr.operands = operands if isinstance(instr.operands, list) else tuple(operands)
    if isinstance(instr, ins.GEPInstr):
        instr.pointer = new(instr.pointer)
        instr.indices = [new(i) for i in instr.indices]
    if isinstance(instr, (ins.ExtractValue, ins.InsertValue)):
        instr.aggregate = new(instr.aggregate)
    if isinstance(instr, ins.InsertValue):
        instr.value = new(instr.value)
    instr._clear_string_cache()


def copy_instruction(instr: ir.Instruction, block: ir.Block) -> ir.Instruction:
    """A shallow copy of `instr` for `block` (not inserted), under a fresh name of the same
    stem. The text llvmlite caches (the instruction's and its `%name` reference) is dropped:
    a copy of an instruction that was printed before would otherwise print the old name."""
    new = copy.copy(instr)
    new.__dict__.pop("_StringReferenceCaching__cached_refstr", None)
    new.parent = block
    new.name = instr.name  # registered again in the function's scope, deduplicated
    if hasattr(instr, "flags") and isinstance(instr.flags, list):
        new.flags = list(instr.flags)
    new.metadata = dict(instr.metadata)
    new._clear_string_cache()
    return new


def replace_in(instructions: Iterable[ir.Instruction], mapping: dict[ir.Value, ir.Value]) -> None:
    """Make every use of a key of `mapping` in `instructions` use the mapped value instead."""

    def new(value):
        return mapping.get(value, value) if isinstance(value, ir.Instruction) else value

    for instr in instructions:
        remap_operands(instr, new)


def replace_uses(function: ir.Function, mapping: dict[ir.Value, ir.Value]) -> None:
    """Make every use of a key of `mapping` in `function` use the mapped value instead."""
    replace_in((i for block in function.blocks for i in block.instructions), mapping)


def remove_instruction(instr: ir.Instruction) -> None:
    """Delete `instr` from its block (its uses must already be replaced)."""
    block = instr.parent
    block.instructions.remove(instr)
    if block.terminator is instr:
        block.terminator = None
