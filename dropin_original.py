"""cc's own compile of a taken-over kernel, for the runs where the transformed code does not run.

The polyhedral passes guard their code with a run-time check (the `poly.check` block: the
arrays do not overlap, the parameters meet the model's assumptions and, for the `-large`
passes, the data exceed the L2 cache). Where it fails, the original nest runs as LLVM compiles
it, which can be slower than gcc's code for the same nest (heat-3d at PolyBench's MEDIUM size:
0.80x gcc). When nothing before the check has an effect, that path becomes `return
original(arguments)`, a call of cc's compile of the original function, which the unit cc
compiles keeps as a hidden copy (`dropin_split`): where tiling does not pay, a taken-over
kernel runs exactly cc's code.
"""

from __future__ import annotations

import re

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .ir_passes.core.analyses import invalidate
from .ir_passes.core.cfg import CFG
from .ir_passes.core.rewrite import set_terminator

#: the suffix of the hidden copy's symbol
COPY_SUFFIX = "__pycc_cc"
#: the block the polyhedral code generator guards its code with (polyhedral/codegen.py)
_CHECK = re.compile(r"poly\.check(\.\d+)?$")
#: calls without an effect the copy would repeat
_NO_EFFECT_CALL = re.compile(
    r"llvm\.(dbg|lifetime|assume|sqrt|fabs|floor|ceil|trunc|rint|round|fma|fmuladd|minnum|"
    r"maxnum|copysign|smin|smax|umin|umax|abs)\."
)
_EFFECTS = (ins.StoreInstr, ins.AtomicRMW, ins.CmpXchg, ins.Fence, ins.InvokeInstr)


def copy_symbol(symbol: str) -> str:
    """The symbol of cc's copy of the kernel whose symbol is `symbol`."""
    return symbol + COPY_SUFFIX


def call_original_where_unchecked(function: ir.Function, copy: str) -> bool:
    """Make each failing edge of a `poly.check` that only code without effects leads to
    `return copy(arguments)`; whether any was (the copy is then needed)."""
    if not _plain_signature(function):
        return False
    cfg = CFG(function)
    checks = [b for b in cfg.blocks if _CHECK.match(b.name)]
    changed = False
    for check in checks:
        term = check.terminator
        if not isinstance(term, ins.ConditionalBranch) or not _effect_free_before(cfg, check):
            continue
        original = term.operands[2]
        fallback = function.append_basic_block("original.cc")
        builder = ir.IRBuilder(fallback)
        callee = _declaration(function, copy)
        result = builder.call(callee, list(function.args))
        if "dbg" in term.metadata:  # a call in a function with debug info needs a location
            result.set_metadata("dbg", term.metadata["dbg"])
        if isinstance(function.function_type.return_type, ir.VoidType):
            builder.ret_void()
        else:
            builder.ret(result)
        condition, tiled = term.operands[0], term.operands[1]
        set_terminator(check, ins.ConditionalBranch(check, "br", [condition, tiled, fallback]))
        for phi in (i for i in original.instructions if isinstance(i, ins.PhiInstr)):
            phi.incomings = [(v, b) for v, b in phi.incomings if b is not check]
            phi._clear_string_cache()
        changed = True
    if changed:
        invalidate(function)
    return changed


def _plain_signature(function: ir.Function) -> bool:
    """Can the call pass the arguments on as they came (no struct passed or returned in
    memory, no argument cc's ABI widens: pointers, `int`s and wider, floating point)?"""
    types = [*function.function_type.args, function.function_type.return_type]
    return all(
        isinstance(t, (ir.PointerType, ir.FloatType, ir.DoubleType, ir.VoidType))
        or (isinstance(t, ir.IntType) and t.width in (32, 64))
        for t in types
    ) and not any("byval" in str(attribute) or "sret" in str(attribute)
                  for argument in function.args for attribute in argument.attributes)  # fmt: skip


def _effect_free_before(cfg: CFG, check: ir.Block) -> bool:
    """Has no block from which `check` can be reached (a loop around it included) an
    effect that running the function again from its start would repeat?"""
    before: set[ir.Block] = set()
    work = list(cfg.preds[check])
    while work:
        block = work.pop()
        if block in before:
            continue
        before.add(block)
        work.extend(cfg.preds[block])
    if check in before:  # the check is in a loop: the copy would redo earlier iterations
        return False
    return not any(_has_effect(i) for b in before for i in b.instructions)


def _has_effect(instr: ir.Instruction) -> bool:
    if isinstance(instr, _EFFECTS):
        return True
    if isinstance(instr, ins.CallInstr):
        return not _NO_EFFECT_CALL.match(getattr(instr.callee, "name", ""))
    return isinstance(instr, ins.LoadInstr) and "volatile" in str(instr)


def _declaration(function: ir.Function, name: str) -> ir.Function:
    module = function.module
    existing = module.globals.get(name)
    if isinstance(existing, ir.Function):
        return existing
    return ir.Function(module, function.function_type, name=name)
