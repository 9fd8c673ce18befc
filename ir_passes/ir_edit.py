"""Editing primitives for llvmlite.ir, which has no use lists.

Every stage that rewrites IR in place (the front end's SSA construction, the passes) goes
through these, because some llvmlite instructions keep operands outside `operands`
(a GEP prints from its `pointer` and `indices` attributes) and every instruction caches its
printed form.
"""

from __future__ import annotations

from llvmlite import ir


def operands_of(instr: ir.Instruction) -> list[ir.Value]:
    """All values an instruction uses (phi inputs included)."""
    if isinstance(instr, ir.PhiInstr):
        return [value for value, _ in instr.incomings]
    return list(instr.operands)


def replace_uses_in(instr: ir.Instruction, old: ir.Value, new: ir.Value) -> None:
    """Make `instr` use `new` wherever it used `old`."""
    instr.replace_usage(old, new)  # operands, or phi incomings
    if isinstance(instr, ir.GEPInstr):
        if instr.pointer is old:
            instr.pointer = new
        instr.indices = [new if i is old else i for i in instr.indices]
    instr._clear_string_cache()


def replace_all_uses(function: ir.Function, old: ir.Value, new: ir.Value) -> None:
    """Replace every use of `old` in `function` by `new`."""
    for block in function.blocks:
        for instr in block.instructions:
            if any(op is old for op in operands_of(instr)):
                replace_uses_in(instr, old, new)
