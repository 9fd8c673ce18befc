"""Calls inside loops to `static` functions of the same file are inlined, so the loop
analyses see what they compute: an index helper (`*IDX(g, w, i, j)`, `static cell_t *IDX(...)
{ return g + i * w + j; }`) becomes the address arithmetic it is, and a time loop calling a
sweep function (`for (t...) { sweep(u, v, nx, ny); swap }`, heat-equation codes) holds the
sweep's loops. gcc inlines these calls at -O2/-O3 too; doing it here only comes earlier.

Only `static` functions: an external one may be replaced at link time (a `weak` definition
overridden by a strong one elsewhere) or interposed in a shared library (`-fPIC`: the
executable's own definition wins), and then the call must stay a call. A `static` callee is
inlined when it has a body, is not the caller, comes from the C source (not a function a pass
made), is small (`MAX_CALLEE_INSTRUCTIONS`), returns, takes no struct by value (the `byval`
copy is its own to write) and allocates its locals once (in its entry block; a VLA inside it
would grow the caller's stack on every iteration). Calls the inlined code makes are inlined
in turn, at most `MAX_DEPTH` levels deep (a recursive callee stays a call), while the caller
stays below `MAX_CALLER_INSTRUCTIONS` (the passes' time grows with it). Inlined instructions
keep their source lines, marked as inlined at the call (`inlinedAt`), so remarks and
debuggers name the callee's lines.
"""

from __future__ import annotations

import re

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .analyses import invalidate, loops_of
from .branches import fold_constant_branches
from .cfg import successors
from .promotion import promote_local_scalars, split_local_structs
from .rewrite import (
    clone_instruction,
    forget_text,
    merge_pair,
    remap_operands,
    replace_uses,
    set_terminator,
)

#: instructions of a callee worth copying into every call site inside a loop
MAX_CALLEE_INSTRUCTIONS = 400
#: the callee's values a copy may use
_MAPPED = (ir.Instruction, ir.Argument)
#: a function of the user's C (the passes' own have a `.` in their names, or the reserved
#: prefix of pycc-stencil's run-time helpers, `__pycc_`)
_C_NAME = re.compile(r"(?!__pycc_)[A-Za-z_]\w*")
#: argument attributes of a callee's private copy of a struct (or of its result)
_BY_COPY = re.compile(r"(byval|sret|inalloca|preallocated)\b")
#: instructions a caller may grow to by inlining
MAX_CALLER_INSTRUCTIONS = 4000
#: how deep calls of inlined code are inlined in turn
MAX_DEPTH = 3


def inline_calls_in_loops(
    function: ir.Function, kept: list[tuple[ins.CallInstr, str]] | None = None
) -> int:
    """Inline the calls inside `function`'s loops to functions it may inline; returns how
    many calls were inlined. `kept` receives the calls of the file's functions left as they
    are, with the reason (a remark says why a nest with a call is not tiled). Locals whose
    address only the inlined code took are promoted to SSA values (`promotion.py`)."""
    inlined = 0
    refused: list[tuple[ins.CallInstr, str]] = []
    for _ in range(MAX_DEPTH):
        size, done, refused = _size(function), 0, []
        for call in _calls_in_loops(function):
            reason = _refusal(call, function)
            if reason is None and size + _size(call.callee) > MAX_CALLER_INSTRUCTIONS:
                reason = f"the caller would grow past {MAX_CALLER_INSTRUCTIONS} instructions"
            if reason is not None:
                refused.append((call, reason))
                continue
            size += _size(call.callee)
            _inline(call)
            done += 1
        if not done:
            break
        invalidate(function)
        inlined += done
    else:  # every level inlined something: what the last one brought in stays a call
        known = {call for call, _ in refused}
        deeper = f"calls nested deeper than {MAX_DEPTH} levels (recursion)"
        refused += [(c, deeper) for c in _calls_in_loops(function) if c not in known]
    if (split_local_structs(function) or inlined) and promote_local_scalars(function):
        invalidate(function)  # (a loop's bound may have been a load of a slot)
    if inlined:
        fold_constant_branches(function)  # a helper's tests of a constant argument
    if kept is not None:  # (those a folded branch did not take away)
        live = set(function.blocks)
        kept += [(call, reason) for call, reason in refused if call.parent in live]
    return inlined


def _calls_in_loops(function: ir.Function) -> list[ins.CallInstr]:
    """The calls of the file's functions inside `function`'s loops."""
    in_loops = {b for loop in loops_of(function).loops for b in loop.blocks}
    return [
        i
        for b in function.blocks
        if b in in_loops
        for i in b.instructions
        if isinstance(i, ins.CallInstr) and _of_the_file(i.callee)
    ]


def _of_the_file(callee: object) -> bool:
    """A function of the C source with a body (not a declaration, an intrinsic or a
    function a pass made: `f.par`, a tile body run on threads, `__pycc_omp_ready`)."""
    return (
        isinstance(callee, ir.Function)
        and bool(callee.blocks)
        and bool(_C_NAME.fullmatch(callee.name))
    )


def _refusal(call: ins.CallInstr, caller: ir.Function) -> str | None:
    """Why the call of a function of the file is not inlined, or None."""
    callee = call.callee
    entry, later = callee.blocks[0], [i for b in callee.blocks[1:] for i in b.instructions]
    allocas = [i for i in entry.instructions if isinstance(i, ins.AllocaInstr)]
    checks = [
        (callee is caller, "it is the caller itself (recursion)"),
        (callee.function_type.var_arg, "it takes variable arguments"),
        (  # an external function may be replaced at link time (weak) or interposed (-fPIC)
            callee.linkage not in ("internal", "private"),
            "it is not static (the linker may replace or interpose it)",
        ),
        (not _matches(call), "its arguments do not match its parameters"),
        (
            any(_BY_COPY.match(str(a)) for arg in callee.args for a in arg.attributes),
            "it takes a struct by value (its own copy)",
        ),
        (not any(isinstance(b.terminator, ins.Ret) for b in callee.blocks), "it never returns"),
        (
            _size(callee) > MAX_CALLEE_INSTRUCTIONS,
            f"it has {_size(callee)} instructions (at most {MAX_CALLEE_INSTRUCTIONS})",
        ),
        (
            any(isinstance(i, ins.AllocaInstr) for i in later)
            or not all(_constant_size(i) for i in allocas),
            "it allocates a variable-length array",
        ),
    ]
    return next((reason for refused, reason in checks if refused), None)


def _matches(call: ins.CallInstr) -> bool:
    """Does the call pass what the callee takes (a call through a prototype-less
    declaration may not)?"""
    types = [a.type for a in call.callee.args]
    return types == [a.type for a in call.args] and call.type == call.callee.return_value.type


def _size(function: ir.Function) -> int:
    return sum(len(b.instructions) for b in function.blocks)


def _constant_size(alloca: ins.AllocaInstr) -> bool:
    return not alloca.operands or isinstance(alloca.operands[0], ir.Constant)


def _inline(call: ins.CallInstr) -> None:
    """Replace `call` by a copy of its callee's body."""
    callee, block = call.callee, call.parent
    caller = block.parent
    position = caller.blocks.index(block)
    after = caller.insert_basic_block(position + 1, f"{block.name}.after")
    _split_after(call, after)
    values: dict[ir.Value, ir.Value] = dict(zip(callee.args, call.args, strict=True))
    blocks = {
        b: caller.insert_basic_block(position + 1 + k, f"{callee.name}.{b.name}")
        for k, b in enumerate(callee.blocks)
    }
    entry = caller.blocks[0]
    cloned, returns = [], []
    for original in callee.blocks:
        for instr in original.instructions:
            if isinstance(instr, ins.AllocaInstr):  # once per call of the caller
                copy = clone_instruction(instr, entry, values, {})
                entry.instructions.remove(copy)
                entry.instructions.insert(0, copy)
            elif isinstance(instr, ins.Ret):
                returns.append((instr.return_value, blocks[original]))
                copy = ins.Branch(blocks[original], "br", [after])
                set_terminator(blocks[original], copy)
            else:
                copy = clone_instruction(instr, blocks[original], values, blocks)
            values[instr] = copy
            cloned.append(copy)
    for copy in cloned:  # the callee's arguments, uses before definitions (phis)
        remap_operands(copy, lambda v: values.get(v, v) if isinstance(v, _MAPPED) else v)
    _mark_inlined(cloned, call)
    if call.type != ir.VoidType():
        _return_value(call, [(values.get(v, v), b) for v, b in returns], after)
    block.instructions.remove(call)
    set_terminator(block, ins.Branch(block, "br", [blocks[callee.blocks[0]]]))
    # one straight line where the callee has one: its entry joins the call's block, its
    # return block what followed the call (the loops around keep their own latch blocks)
    merge_pair(caller, block, blocks[callee.blocks[0]])
    if len(returns) == 1:
        last = returns[0][1]
        merge_pair(caller, block if last is blocks[callee.blocks[0]] else last, after)


def _split_after(call: ins.CallInstr, after: ir.Block) -> None:
    """Move what follows `call` in its block to `after` (successors' phis follow)."""
    block = call.parent
    tail = block.instructions[block.instructions.index(call) + 1 :]
    for instr in tail:
        block.instructions.remove(instr)
        instr.parent = after
        after.instructions.append(instr)
    after.terminator, block.terminator = block.terminator, None
    for target in successors(after):
        for phi in (i for i in target.instructions if isinstance(i, ins.PhiInstr)):
            phi.incomings = [(v, after if b is block else b) for v, b in phi.incomings]
            forget_text(phi)


def _return_value(call: ins.CallInstr, returns: list, after: ir.Block) -> None:
    """Make the uses of `call` use the value the callee returns (a phi of several)."""
    if len(returns) == 1:
        value = returns[0][0]
    else:
        value = ins.PhiInstr(after, call.type, name=f"{call.callee.name}.result")
        for returned, block in returns:
            value.add_incoming(returned, block)
        after.instructions.insert(0, value)
    replace_uses(call.parent.parent, {call: value})


def _mark_inlined(cloned: list[ir.Instruction], call: ins.CallInstr) -> None:
    """Source locations of the copies, inlined at the call's (none if the call has none:
    LLVM's verifier wants every location of a function to lead to its own subprogram)."""
    at = call.metadata.get("dbg")
    module = call.parent.parent.module
    for instr in cloned:
        location = instr.metadata.pop("dbg", None)
        if at is not None and isinstance(location, ir.DIValue):
            instr.metadata["dbg"] = _inlined_at(location, at, module)
        forget_text(instr)


def _inlined_at(location: ir.DIValue, at: ir.DIValue, module: ir.Module) -> ir.DIValue:
    """`location` inlined at `at` (a location inlined before: its chain then ends at `at`)."""
    fields = dict(location.operands)
    inner = fields.get("inlinedAt")
    fields["inlinedAt"] = at if inner is None else _inlined_at(inner, at, module)
    return module.add_debug_info("DILocation", fields)
