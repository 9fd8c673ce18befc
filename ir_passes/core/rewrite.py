"""Replacing values in llvmlite.ir functions.

llvmlite's own `replace_usage` misses operands that some instructions keep in extra attributes
(a GEP prints `pointer`/`indices`, not `operands`) and leaves stale cached text behind; passes
that rewrite IR use this instead.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable, Iterable

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .cfg import CFG, successors


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


def forget_text(instr: ir.Instruction) -> None:
    """Drop the text llvmlite caches for `instr` (its line and its `%name` reference), so a
    change or a rename made after the module was printed shows when it is printed again."""
    instr._clear_string_cache()
    instr.__dict__.pop("_StringReferenceCaching__cached_refstr", None)


def copy_instruction(instr: ir.Instruction, block: ir.Block) -> ir.Instruction:
    """A shallow copy of `instr` for `block` (not inserted), under a fresh name of the same
    stem. The text llvmlite caches (the instruction's and its `%name` reference) is dropped:
    a copy of an instruction that was printed before would otherwise print the old name."""
    new = copy.copy(instr)
    forget_text(new)
    new.parent = block
    new.name = instr.name  # registered again in the function's scope, deduplicated
    if hasattr(instr, "flags") and isinstance(instr.flags, list):
        new.flags = list(instr.flags)
    new.metadata = dict(instr.metadata)
    new._clear_string_cache()
    return new


def clone_instruction(
    instr: ir.Instruction,
    block: ir.Block,
    values: dict[ir.Value, ir.Value],
    blocks: dict[ir.Block, ir.Block],
    incoming: dict[ir.Block, ir.Block] | None = None,
) -> ir.Instruction:
    """A copy of `instr` appended to `block`, operands (instructions, arguments) mapped by
    `values`, targets by `blocks`."""

    def value(v):
        if isinstance(v, ir.Block):
            return blocks.get(v, v)
        return values.get(v, v) if isinstance(v, (ir.Instruction, ir.Argument)) else v

    new = copy_instruction(instr, block)
    remap_operands(new, value)
    if isinstance(instr, ins.PhiInstr):
        incoming = blocks if incoming is None else incoming
        new.incomings = [(v, incoming.get(b, b)) for v, b in new.incomings]
    if isinstance(instr, ins.SwitchInstr):
        new.default = value(instr.default)
        new.cases = [(v, value(b)) for v, b in instr.cases]
    new._clear_string_cache()
    block.instructions.append(new)
    if isinstance(instr, ins.Terminator):
        block.terminator = new
    return new


def copy_blocks(
    blocks: list[ir.Block], suffix: str
) -> tuple[dict[ir.Block, ir.Block], dict[ir.Value, ir.Value]]:
    """Copies of `blocks` (a region: a loop), inserted after the last one: operands, phi
    incomings and branch targets within the region map to the copies, the rest stays, and
    every block outside the region that a block of it branches to gets the copy as a new
    predecessor with the copied values. The (block -> copy) and (value -> copy) maps."""
    function = blocks[0].parent
    copies = {b: ir.Block(function, f"{b.name}{suffix}") for b in blocks}
    values: dict[ir.Value, ir.Value] = {}
    for block in blocks:
        for instr in block.instructions:
            new = copy_instruction(instr, copies[block])
            copies[block].instructions.append(new)
            if isinstance(instr, ins.Terminator):
                copies[block].terminator = new
            values[instr] = new
    for block in blocks:
        for instr in copies[block].instructions:
            remap_operands(instr, lambda v: copies.get(v, values.get(v, v)))
            if isinstance(instr, ins.PhiInstr):
                instr.incomings = [(v, copies.get(b, b)) for v, b in instr.incomings]
                instr._clear_string_cache()
    for block in blocks:
        outside = [t for t in block.terminator.operands if isinstance(t, ir.Block)]
        for target in {t: None for t in outside if t not in copies}:
            for phi in (i for i in target.instructions if isinstance(i, ins.PhiInstr)):
                for value, source in list(phi.incomings):
                    if source is block:
                        phi.add_incoming(values.get(value, value), copies[block])
                phi._clear_string_cache()
    position = function.blocks.index(blocks[-1]) + 1
    function.blocks[position:position] = list(copies.values())
    return copies, values


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


#: instructions without side effects: removable when nothing uses them
_PURE_OPS = frozenset(
    "add sub mul shl lshr ashr and or xor fadd fsub fmul fneg sext zext trunc fpext fptrunc "
    "sitofp uitofp fptosi fptoui bitcast icmp fcmp getelementptr select phi".split()
)


def remove_dead(function: ir.Function, candidates: Iterable[ir.Instruction]) -> None:
    """Delete those of `candidates` that have no side effect and (transitively) no use."""
    uses: dict[ir.Value, int] = {}
    for block in function.blocks:
        for instr in block.instructions:
            for op in used_values(instr):
                uses[op] = uses.get(op, 0) + 1
    work = [i for i in candidates if i.opname in _PURE_OPS]
    while work:
        instr = work.pop()
        if uses.get(instr, 0) or instr.parent is None or instr not in instr.parent.instructions:
            continue
        remove_instruction(instr)
        instr.parent = None
        for op in used_values(instr):
            uses[op] -= 1
            if isinstance(op, ir.Instruction) and op.opname in _PURE_OPS and not uses[op]:
                work.append(op)


def used_values(instr: ir.Instruction) -> list[ir.Value]:
    """The values `instr` reads (llvmlite keeps a GEP's pointer and indices apart)."""
    if isinstance(instr, ins.PhiInstr):
        return [v for v, _ in instr.incomings]
    used = list(instr.operands)
    if isinstance(instr, ins.GEPInstr):
        used += [instr.pointer, *instr.indices]
    return used


def users_of(function: ir.Function) -> dict[ir.Value, list[ir.Instruction]]:
    """Each value's users in `function` (an instruction once, however often it uses it)."""
    out: dict[ir.Value, list[ir.Instruction]] = {}
    for block in function.blocks:
        for instr in block.instructions:
            for value in dict.fromkeys(used_values(instr)):
                out.setdefault(value, []).append(instr)
    return out


def merge_straight_line(
    function: ir.Function, blocks: Iterable[ir.Block], keep: Iterable[ir.Block] = ()
) -> None:
    """Merge each block of `blocks` into its predecessor (or its successor into it) when the
    two are joined by an unconditional branch and nothing else enters the second one, so a
    chain of copied iterations becomes one block. The function's entry block is kept first;
    no block of `keep` is merged into another (a loop's latch, header, preheader, exit)."""
    kept = set(keep)
    candidates = set(blocks)
    cfg = CFG(function)
    preds = {b: list(p) for b, p in cfg.preds.items()}
    for first in list(function.blocks):
        if first.parent is None:
            continue
        while True:
            term = first.terminator
            if not isinstance(term, ins.Branch) or isinstance(term, ins.ConditionalBranch):
                break
            (second,) = term.operands
            if second is first or preds[second] != [first] or second is function.blocks[0]:
                break
            if second in kept:
                break
            if first not in candidates and second not in candidates:
                break
            _append_block(function, first, second, preds)
            candidates.add(first)


def merge_pair(function: ir.Function, first: ir.Block, second: ir.Block) -> None:
    """Merge `second` into `first`, which branches only to it, its only predecessor."""
    _append_block(function, first, second, defaultdict(list))


def _append_block(function, first, second, preds) -> None:
    """Move `second`'s instructions to the end of `first` (which branches only to it)."""
    remove_instruction(first.terminator)
    mapping = {}
    for instr in list(second.instructions):
        if isinstance(instr, ins.PhiInstr):
            (mapping[instr],) = {v for v, _ in instr.incomings}
            continue
        instr.parent = first
        first.instructions.append(instr)
    first.terminator = second.terminator
    if mapping:
        replace_uses(function, mapping)
    for succ in successors(first):
        preds[succ] = [first if p is second else p for p in preds[succ]]
        for phi in succ.instructions:
            if not isinstance(phi, ins.PhiInstr):
                break
            phi.incomings = [(v, first if b is second else b) for v, b in phi.incomings]
            phi._clear_string_cache()
    function.blocks.remove(second)
    second.parent = None


def set_terminator(block: ir.Block, terminator: ir.Instruction) -> None:
    """Replace `block`'s terminator by `terminator` (debug location and metadata kept)."""
    old = block.terminator
    if old is not None:
        terminator.metadata.update(old.metadata)
        block.instructions.remove(old)
    terminator.parent = block
    block.instructions.append(terminator)
    block.terminator = terminator


def branch_to(block: ir.Block, target: ir.Block) -> None:
    """End `block` with an unconditional branch to `target`."""
    set_terminator(block, ins.Branch(block, "br", [target]))


def landing_block(before: ir.Block, header: ir.Block) -> ir.Block:
    """Put an empty block between a loop's preheader `before` (now holding values computed
    for the loop) and its header, and return it: a nest's preheader stays empty, as the
    polyhedral passes want it (they branch around the nest there, and the values must be
    computed before)."""
    function = header.parent
    landing = function.insert_basic_block(function.blocks.index(header), f"{header.name}.pre")
    branch_to(landing, header)
    landing.terminator.metadata.update(before.terminator.metadata)
    branch_to(before, landing)
    for phi in (i for i in header.instructions if isinstance(i, ins.PhiInstr)):
        phi.incomings = [(v, landing if b is before else b) for v, b in phi.incomings]
        forget_text(phi)
    return landing


def opaque(pointer: ir.NamedValue) -> ir.NamedValue:
    """Give an alloca or global the opaque `ptr` type (llvmlite makes them typed pointers,
    which LLVM 22 no longer parses)."""
    pointer.type = ir.PointerType()
    return pointer
