"""Tiled kernels that give the call back to cc's code where tiling does not run.

The polyhedral passes guard their code with a run-time check (the `poly.check` block: the
arrays do not overlap, the parameters meet the model's assumptions and, for the `-large`
passes, the data exceed the L2 cache). Where it fails, the original nest runs as LLVM compiles
it, which can be slower than gcc's code for the same function, all the more where gcc inlines
the kernel into its caller and specializes it for constant sizes (heat-3d at PolyBench's
MEDIUM size: 0.80x gcc). When nothing before the check has an effect, the kernel becomes a
*try*: `int try([void *result,] arguments)` returns 0 at the failing check, having done
nothing, and 1 once the tiled code ran (its result stored through `result`). cc keeps the
kernel's own definition, which calls the try first and otherwise runs its own code
(`dropin_split`): where tiling does not pay, a taken-over kernel is exactly cc's. The try
itself holds only the checks and calls the kernel's code, a function of its own: where the
call comes back, it costs the checks alone, not the tiled code's register saves.
"""

from __future__ import annotations

import copy
import re

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .ir_passes.core.analyses import invalidate
from .ir_passes.core.cfg import CFG
from .ir_passes.core.libm import ARITHMETIC_INTRINSIC
from .ir_passes.core.rewrite import clone_instruction, remap_operands, set_terminator

#: the block the polyhedral code generator guards its code with (polyhedral/codegen.py)
_CHECK = re.compile(r"poly\.check(\.\d+)?$")
#: intrinsics that only describe the code (besides the arithmetic ones)
_MARKERS = ("llvm.dbg.", "llvm.lifetime.", "llvm.assume")
_EFFECTS = (ins.StoreInstr, ins.AtomicRMW, ins.CmpXchg, ins.Fence, ins.InvokeInstr)
I32 = ir.IntType(32)


def make_try(function: ir.Function) -> bool:
    """Turn `function` (a taken-over kernel no other function of its module calls) into its
    try form, if some `poly.check` is reached only through code without effects; whether it
    was. Of a chain of checks (two passes' code for one nest, each check entering the next
    where its own code does not run: streams, else the team) the last gives the call back.
    Not one that keeps state in a static local: cc's definition keeps its own copy of it for
    the calls the try gives back."""
    if not _plain_signature(function) or _called_in(function.module, function):
        return False
    if keeps_static_state(function):
        return False
    cfg = CFG(function)
    check = next(
        (
            b
            for b in cfg.reverse_postorder()
            if _CHECK.match(b.name)
            and isinstance(b.terminator, ins.ConditionalBranch)
            and not _CHECK.match(b.terminator.operands[2].name)  # (not one of a chain)
            and _effect_free_before(cfg, b)
        ),
        None,
    )
    if check is None:
        return False
    result_type = function.function_type.return_type
    returns = not isinstance(result_type, ir.VoidType)
    result = ir.Argument(function, ir.PointerType(), name="pycc.result") if returns else None
    function.args = (result, *function.args) if result is not None else function.args
    function.ftype = ir.FunctionType(I32, [a.type for a in function.args])
    function.type = function.ftype.as_pointer()
    function.return_value = ir.ReturnValue(function, I32)
    for block in list(function.blocks):
        term = block.terminator
        if isinstance(term, ins.Ret):
            builder = ir.IRBuilder(block)
            builder.position_before(term)
            if result is not None:
                builder.store(term.return_value, result)
            set_terminator(block, ins.Ret(block, "ret", I32(1)))
    _give_back(function, check)
    _split_checks(function, check)
    return True


def _give_back(function: ir.Function, check: ir.Block) -> None:
    """The failing edge of `check` returns 0."""
    term = check.terminator
    condition, tiled, original = term.operands
    declined = function.append_basic_block("pycc.declined")
    ir.IRBuilder(declined).ret(I32(0))
    set_terminator(check, ins.ConditionalBranch(check, "br", [condition, tiled, declined]))
    for phi in (i for i in original.instructions if isinstance(i, ins.PhiInstr)):
        phi.incomings = [(v, b) for v, b in phi.incomings if b is not check]
        phi._clear_string_cache()


def _split_checks(function: ir.Function, check: ir.Block) -> None:
    """Move the try's code into `NAME.tiled` (never inlined) and leave in `function` a copy
    of the blocks up to `check` (effect-free, `_effect_free_before`), whose every way on
    calls it: a declining call then pays neither its prologue nor its epilogue."""
    body = ir.Function(function.module, function.ftype, name=f"{function.name}.tiled")
    # the code keeps its names' scope, the try starts a new one: the copies keep their names
    body.scope, function.scope = function.scope, type(function.scope)()
    body.args, function.args = function.args, body.args
    for moved, new in zip(body.args, function.args, strict=True):
        moved.parent, new.parent, new.name = body, function, moved.name
    body.attributes = copy.copy(function.attributes)
    body.attributes.add("noinline")
    body.metadata, function.metadata = function.metadata, {}
    body.blocks, function.blocks = function.blocks, []
    for block in body.blocks:
        block.parent = body
    invalidate(function)
    cfg = CFG(body)
    region = _reaching(cfg, check) | {check}
    copies = {b: ir.Block(function, b.name) for b in body.blocks if b in region}
    run = ir.Block(function, "pycc.run")
    declined = ir.Block(function, "pycc.declined")
    targets = {b: copies.get(b, run) for b in body.blocks}
    targets[check.terminator.operands[2]] = declined
    values: dict[ir.Value, ir.Value] = dict(zip(body.args, function.args, strict=True))
    for block, copy_ in copies.items():
        for instr in block.instructions:
            if not _describes_only(instr):
                values[instr] = clone_instruction(instr, copy_, values, targets)
                values[instr].metadata.pop("dbg", None)
    for copied in (i for b in copies.values() for i in b.instructions):  # (back edges)
        remap_operands(copied, lambda v: values.get(v, v))
    builder = ir.IRBuilder(run)
    builder.ret(builder.call(body, function.args, tail=True))
    ir.IRBuilder(declined).ret(I32(0))
    function.blocks = [*copies.values(), run, declined]
    invalidate(body)


def _describes_only(instr: ir.Instruction) -> bool:
    return isinstance(instr, ins.CallInstr) and getattr(instr.callee, "name", "").startswith(
        _MARKERS
    )


def keeps_static_state(function: ir.Function) -> bool:
    """Does `function` use a static local's storage: the module's own mutable global
    (`frontend/module.py`; the program's globals are declarations of their symbols, its
    constants are constant)? Such a function must have one definition in the program."""
    return any(
        isinstance(o, ir.GlobalVariable) and o.linkage == "internal" and not o.global_constant
        for b in function.blocks
        for i in b.instructions
        for o in i.operands
    )


def _plain_signature(function: ir.Function) -> bool:
    """Does C pass the arguments as the IR takes them (pointers, `int`s and wider, floating
    point: nothing cc's ABI widens, no struct in memory), and return a scalar?"""
    types = [*function.function_type.args, function.function_type.return_type]
    plain = all(
        isinstance(t, (ir.PointerType, ir.FloatType, ir.DoubleType, ir.VoidType))
        or (isinstance(t, ir.IntType) and t.width in (32, 64))
        for t in types
    )
    in_memory = any(
        "byval" in str(attribute) or "sret" in str(attribute)
        for argument in function.args
        for attribute in argument.attributes
    )
    return plain and not in_memory


def _called_in(module: ir.Module, function: ir.Function) -> bool:
    return any(
        isinstance(i, (ins.CallInstr, ins.InvokeInstr)) and getattr(i, "callee", None) is function
        for other in module.functions
        for block in other.blocks
        for i in block.instructions
    )


def _effect_free_before(cfg: CFG, check: ir.Block) -> bool:
    """Has no block from which `check` can be reached an effect that running the function
    from its start again would repeat (and is `check` outside every loop)?"""
    before = _reaching(cfg, check)
    if check in before:
        return False
    return not any(_has_effect(i) for b in before for i in b.instructions)


def _reaching(cfg: CFG, block: ir.Block) -> set[ir.Block]:
    """The blocks from which `block` can be reached."""
    before: set[ir.Block] = set()
    work = list(cfg.preds[block])
    while work:
        source = work.pop()
        if source not in before:
            before.add(source)
            work.extend(cfg.preds[source])
    return before


def _has_effect(instr: ir.Instruction) -> bool:
    if isinstance(instr, _EFFECTS):
        return True
    if isinstance(instr, ins.CallInstr):
        name = getattr(instr.callee, "name", "")
        return not (ARITHMETIC_INTRINSIC.match(name + ".") or name.startswith(_MARKERS))
    return isinstance(instr, ins.LoadInstr) and "volatile" in str(instr)
