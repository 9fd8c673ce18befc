"""If-conversion of a loop body: branches inside it become `select`s (for SIMD binding).

Legacy kernels saturate and threshold with `if`/`?:` (`if (v > 255) v = 255;`,
`dst = v >= lo && v <= hi ? v : 0`); the front end lowers these to branches and phis. A vector
loop cannot branch per lane, so the body is flattened into one block: every block gets a
predicate (when it runs), every phi becomes a chain of selects on the predicates of its incoming
edges, and the branches disappear. That executes both sides of each `if`, which is correct only
when the blocks that do not always run are free of side effects and of undefined behaviour when
run needlessly; memory accesses, calls other than the exact math intrinsics, and divisions by a
value that may be 0 (or -1) there make the conversion decline. Predicates are combined with
`select` (logical and/or), never `and`/`or`, so a poison condition computed on a path not taken
(e.g. from an `nsw` overflow) cannot leak into a taken one.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .core.affine import address_of
from .core.analyses import analyses, invalidate
from .core.cfg import reverse_postorder, successors
from .core.loops import Loop
from .core.rewrite import copy_instruction, remap_operands, replace_in
from .unroll import Decline

_DIVISIONS = frozenset({"sdiv", "udiv", "srem", "urem"})
#: intrinsics that only compute a value from their operands (the exact math of math_calls)
PURE_INTRINSICS = frozenset(
    "sqrt fabs floor ceil trunc round rint nearbyint fma fmuladd minnum maxnum minimum maximum "
    "copysign abs smax smin umax umin".split()
)


def intrinsic_stem(call: ir.Instruction) -> str | None:
    """`sqrt` for a call to `llvm.sqrt.f32`, if it is one of PURE_INTRINSICS."""
    name = getattr(call.callee, "name", "")
    if not name.startswith("llvm."):
        return None
    stem = name.split(".")[1]
    return stem if stem in PURE_INTRINSICS else None


_TRUE = ir.Constant(ir.IntType(1), 1)
_FALSE = ir.Constant(ir.IntType(1), 0)


def _speculatable(instr: ir.Instruction) -> str | None:
    """Why `instr` may not run when its block would not have (None if it may)."""
    opname = instr.opname
    if opname in ("load", "store"):
        return f"a conditional {opname} (it would need masking)"
    if opname == "call" and intrinsic_stem(instr) is None:
        return f"a conditional call to {getattr(instr.callee, 'name', '') or 'a function'}"
    if opname in _DIVISIONS:
        divisor = instr.operands[1]
        if not isinstance(divisor, ir.Constant) or int(divisor.constant) in (0, -1):
            return f"a conditional {opname} by a value that may be 0"
    return None


def if_convert(loop: Loop) -> bool:
    """Flatten the body of innermost `loop` (header-tested, no early exits) into one block.
    Returns whether anything changed; raises Decline when the body cannot be flattened."""
    header = loop.header
    body = [b for b in loop.blocks if b is not header]
    if all(isinstance(b.terminator, ins.Branch) for b in body):
        return False  # straight-line already (a chain of unconditional branches)
    if loop.exiting != [header] or loop.latch is None:
        raise Decline("control flow leaves the loop body early (break, return, goto)")
    function = header.parent
    if _sink_paired_stores(body):
        invalidate(function)
    dominators = analyses(function).dominators
    members = set(body)
    inside = [s for s in successors(header) if s in members]
    if len(inside) != 1:
        raise Decline("the exit test is not in the header")
    entry = inside[0]
    order = reverse_postorder(entry, lambda b: [s for s in successors(b) if s in members])
    if len(order) != len(body):
        raise Decline("control flow inside the loop body that is not a forward branch")
    for block in body:
        term = block.terminator
        if not isinstance(term, (ins.Branch, ins.ConditionalBranch)):
            raise Decline(f"a '{term.opname}' inside the loop body")
        if dominators.dominates(block, loop.latch):
            continue  # runs on every iteration
        for instr in block.instructions[:-1]:
            reason = _speculatable(instr)
            if reason is not None:
                raise Decline(reason)
    _flatten(loop, entry, order, dominators, analyses(function).cfg.preds)
    invalidate(function)
    return True


def _sink_paired_stores(body: list[ir.Block]) -> bool:
    """`if (c) a[i] = x; else a[i] = y;`: both arms of a diamond store to the same address;
    make it one store of a phi in the join block (then a select), so no store is conditional.
    The address is computed again in the join block from the first arm's instructions."""
    changed = False
    members = set(body)
    for join in body:
        arms = [b for b in body if join in successors(b)]
        if len(arms) != 2 or any(successors(a) != [join] for a in arms):
            continue
        stores = []
        for arm in arms:
            effects = [i for i in arm.instructions if i.opname in ("store", "load", "call")]
            if len(effects) != 1 or effects[0].opname != "store":
                break
            stores.append(effects[0])
        else:
            first, second = stores
            if first.operands[0].type != second.operands[0].type:
                continue
            if address_of(first.operands[1]) != address_of(second.operands[1]):
                continue
            _merge_stores(join, arms, first, second, members)
            changed = True
    return changed


def _merge_stores(
    join: ir.Block,
    arms: list[ir.Block],
    first: ir.Instruction,
    second: ir.Instruction,
    members: set[ir.Block],
) -> None:
    value = ins.PhiInstr(join, first.operands[0].type, "stored")
    value.add_incoming(first.operands[0], arms[0])
    value.add_incoming(second.operands[0], arms[1])
    copies: dict[ir.Value, ir.Value] = {}
    placed: list[ir.Instruction] = []

    def rebuild(v: ir.Value) -> ir.Value:
        if not isinstance(v, ins.Instruction) or v.parent is not arms[0]:
            return v
        if v not in copies:
            new = copy_instruction(v, join)
            remap_operands(new, rebuild)
            copies[v] = new
            placed.append(new)
        return copies[v]

    pointer = rebuild(first.operands[1])
    store = ins.StoreInstr(join, value, pointer)
    store.align = first.align
    store.metadata = dict(first.metadata)
    phis = [i for i in join.instructions if isinstance(i, ins.PhiInstr)]
    join.instructions[len(phis) : len(phis)] = [value, *placed, store]
    for old in (first, second):
        old.parent.instructions.remove(old)


def _joining_condition(
    block: ir.Block, arms: list[tuple[ir.Value, ir.Block]], dominators, preds
) -> tuple[ir.Value, ir.Value, ir.Value] | None:
    """(c, value if c, value if not c) when a two-way phi merges the two sides of the branch
    `br c, T, F` that ends `block`'s immediate dominator: the branch's own condition then
    picks the value (a path predicate would hide `c ? 0 : (d ? 255 : v)` from LLVM's min/max
    matching)."""
    if len(arms) != 2:
        return None
    top = dominators.idom(block)
    term = getattr(top, "terminator", None)
    if not isinstance(term, ins.ConditionalBranch):
        return None
    condition, on_true, on_false = term.operands
    if on_true is on_false:
        return None

    def side(source: ir.Block) -> bool | None:
        """Which way `top` branched when `block` is entered from `source`: a side's blocks
        are those its target dominates, the target being entered from `top` alone."""
        for target, taken in ((on_true, True), (on_false, False)):
            if source is top and target is block:
                return taken
            if target is not block and list(preds[target]) == [top]:
                if dominators.dominates(target, source):
                    return taken
        return None

    sides = [side(source) for _, source in arms]
    if None in sides or sides[0] == sides[1]:
        return None
    (first, _), (second, _) = arms
    return (condition, first, second) if sides[0] else (condition, second, first)


def _flatten(loop: Loop, entry: ir.Block, order: list[ir.Block], dominators, preds) -> None:
    function = loop.header.parent
    flat = ir.Block(function, f"{entry.name}.flat")
    builder = ir.IRBuilder(flat)
    predicate: dict[ir.Block, ir.Value] = {entry: _TRUE}
    edge: dict[tuple[ir.Block, ir.Block], ir.Value] = {}
    replaced: dict[ir.Value, ir.Value] = {}

    def land(a: ir.Value, b: ir.Value) -> ir.Value:
        if a is _TRUE:
            return b
        return builder.select(a, b, _FALSE)

    def lor(a: ir.Value, b: ir.Value) -> ir.Value:
        return builder.select(a, _TRUE, b)

    for block in order:
        if block is not entry:
            incoming = [edge[(p, block)] for p in order if (p, block) in edge]
            value = incoming[0]
            for other in incoming[1:]:
                value = lor(value, other)
            predicate[block] = value
        for instr in block.instructions:
            if isinstance(instr, ins.PhiInstr):
                joined = _joining_condition(block, instr.incomings, dominators, preds)
                if joined is not None:
                    replaced[instr] = builder.select(*joined)
                    continue
                arms = [(v, edge.get((b, block), _TRUE)) for v, b in instr.incomings]
                value = arms[-1][0]
                for arm, condition in reversed(arms[:-1]):
                    value = builder.select(condition, arm, value)
                replaced[instr] = value
            elif isinstance(instr, ins.ConditionalBranch):
                condition, on_true, on_false = instr.operands
                if on_true is on_false:
                    edge[(block, on_true)] = predicate[block]
                else:
                    negated = builder.xor(condition, _TRUE)
                    edge[(block, on_true)] = land(predicate[block], condition)
                    edge[(block, on_false)] = land(predicate[block], negated)
            elif isinstance(instr, ins.Branch):
                edge[(block, instr.operands[0])] = predicate[block]
            else:
                instr.parent = flat
                builder._insert(instr)
    back = builder.branch(loop.header)
    back.metadata = dict(loop.latch.terminator.metadata)
    replaced = _resolved(replaced)
    replace_in(flat.instructions, replaced)
    replace_in((i for b in function.blocks for i in b.instructions if b not in order), replaced)
    header_branch = loop.header.terminator
    header_branch.operands = [flat if t is entry else t for t in header_branch.operands]
    header_branch._clear_string_cache()
    for phi in loop.header.instructions:
        if isinstance(phi, ins.PhiInstr):
            phi.incomings = [(v, flat if b is loop.latch else b) for v, b in phi.incomings]
            phi._clear_string_cache()
    position = function.blocks.index(order[0])
    for block in order:
        function.blocks.remove(block)
    function.blocks.insert(position, flat)


def _resolved(mapping: dict[ir.Value, ir.Value]) -> dict[ir.Value, ir.Value]:
    """`mapping` with chains (a phi whose select uses another replaced phi) followed."""
    out = {}
    for key, value in mapping.items():
        while value in mapping:
            value = mapping[value]
        out[key] = value
    return out
