"""`unroll(N)`: unroll innermost loops by N with a remainder loop (Algorithm 2).

For every innermost loop in front-end form (unique preheader, latch and exit; the header is
the only exiting block and holds the exit test `v pred B`, `v` an induction variable with a
constant step `s`, possibly offset or extended), the pass builds

    preheader -> unrolled header UH:  phis of the header, a copy of its other instructions,
                 guard = "iteration 0 runs" and "iteration N-1 runs"
              -> copy 0 of the body -> copy 1 (header + body) -> ... -> copy N-1
              -> back to UH, the IV stepped once by N*s
    UH (guard false) -> the original loop, the remainder ("middle block"), which runs the last
                        T mod N iterations (and everything when T < N) -> the original exit.

Operands are remapped per copy (operand registration): in copy k a constant-step IV is
`iv + k*s`, any other header phi is the value the previous copy sends along the latch edge,
loop invariants stay themselves. The guard is one comparison of v with a limit the preheader
computes once where the bound is invariant arithmetic (`v < B - (N-1)*s`, `+1` for `<=`;
mirrored for a negative step; the type's extreme where the limit would wrap, so no v passes).
Otherwise (a `!=` test, a bound the loop computes) the guard "iteration N-1 runs" is computed
without overflow: with iteration 0 running, the distance `B - v` (`v - B` for a negative step)
is exact as an unsigned value of v's width, and iterations 0..N-1 all run iff that distance
exceeds (or, for `<=`/`>=`, reaches) (N-1)*|s|.

A rotated loop (clang's form: the exit test `v pred B` in the latch, the body runs once before
it; a guard before the loop, if any, is left as it is) is unrolled the same way, except that UH
is entered only when iteration 0 runs, recomputes the tested value `v` from its phis (copying
the pure arithmetic between them) and enters the copies only when iterations 0..N all run (the
tests after iterations 0..N-1 pass, same overflow-free distance test); so every copy's exit
test is known to pass, the last copy branches back to UH unconditionally (the `UnrolledLoop`
record has the same shape in both forms) and the remainder runs the 1..N iterations left.

Loops that do not have this shape are left alone with a `-Rpass-missed=unroll` remark giving
the reason; an unrolled loop gets `loop unrolled by N [-Rpass=unroll]` at its header.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from dataclasses import dataclass

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .core.analyses import invalidate, loops_of
from .core.facts import fact
from .core.loops import INVERSE_PREDICATE, SWAPPED_PREDICATE, Loop
from .core.rewrite import branch_to, clone_instruction, replace_in
from .registry import PassContext, bounded_int, register

#: the largest unroll (and unroll-and-jam) factor a pipeline may ask for: the strategy search's
#: `unroll(U*W),simd(W)` for 64 copies of a 256-lane vector (strategy.py, simd.py)
MAX_UNROLL = 1 << 14
UnrollFactor = bounded_int("unroll factor", MAX_UNROLL)
#: instructions the copies of one loop may have: beyond, the loop is not unrolled (the work of
#: every later pass and of LLVM grows with them)
MAX_UNROLLED_INSTRUCTIONS = 20_000


class Decline(Exception):
    """A loop a pass leaves alone; the message is the reason given in the missed-remark."""


def check_growth(loop: Loop, factor: int) -> None:
    """Decline when `factor` copies of `loop` would exceed MAX_UNROLLED_INSTRUCTIONS."""
    size = sum(len(block.instructions) for block in loop.blocks)
    if size * factor > MAX_UNROLLED_INSTRUCTIONS:
        raise Decline(
            f"{factor} copies of its {size} instructions exceed the limit of "
            f"{MAX_UNROLLED_INSTRUCTIONS} instructions"
        )


#: metadata kind on a remainder loop's header branch: later passes leave that loop alone
REMAINDER = "pycc.remainder"


@dataclass(eq=False)
class UnrolledLoop:
    """What `unroll_loop` built, for passes that rework the unrolled body (SIMD binding).

    `header` is the unrolled loop's header (its phis `phis[original phi]`); `body` are the
    blocks of the copies, entered from `header` and ending in `latch`, which branches back;
    the original loop (`original`, its header `original.header`) is the remainder."""

    header: ir.Block
    factor: int
    original: Loop
    phis: dict[ins.PhiInstr, ins.PhiInstr]
    body: list[ir.Block]
    entry: ir.Block
    latch: ir.Block
    #: a run-time test besides the trip count guards the unrolled loop or one of its
    #: iterations (SIMD binding's overlap check): when it fails, the remainder runs the
    #: iterations left, possibly every one
    checked: bool = False
    #: its copies were bound into vectors (SIMD binding): nothing left to bind
    vectorized: bool = False

    def replace_body(self, first: ir.Block, last: ir.Block, back: dict[ir.Value, ir.Value]) -> None:
        """Make `first`..`last` (already in the function, `last` branching to `header`) the
        loop body instead of the copies; `back` maps each original phi to its next value."""
        function = self.header.parent
        for block in self.body:
            function.blocks.remove(block)
        term = self.header.terminator
        term.operands = [first if t is self.entry else t for t in term.operands]
        term._clear_string_cache()
        for phi, new in self.phis.items():
            new.incomings = [
                (back[phi], last) if b is self.latch else (v, b) for v, b in new.incomings
            ]
            new._clear_string_cache()
        start, end = function.blocks.index(first), function.blocks.index(last)
        self.body, self.entry, self.latch = function.blocks[start : end + 1], first, last


def unrolled_loops(function: ir.Function) -> dict[ir.Block, UnrolledLoop]:
    """The loops `unroll_loop` built in `function`, by header (a fact kept with the function)."""
    return fact(function, "unrolled loops", dict)


def is_remainder(loop: Loop) -> bool:
    """Whether `loop` is the scalar remainder of a loop a pass unrolled or vectorized."""
    return REMAINDER in loop.header.terminator.metadata


def block_maker(function: ir.Function):
    """(the list of blocks made, a function `name -> new block of function` adding to it)."""
    made: list[ir.Block] = []

    def new_block(name: str) -> ir.Block:
        block = ir.Block(parent=function, name=name)
        made.append(block)
        return block

    return made, new_block


def clone_iteration(
    loop: Loop,
    values: dict[ir.Value, ir.Value],
    targets: dict[ir.Block, ir.Block],
    new_block,
    suffix: str,
    header_only: bool = False,
) -> tuple[dict[ir.Value, ir.Value], dict[ir.Block, ir.Block]]:
    """One iteration of `loop` as new blocks (`new_block(name)` makes them), for unrolling.

    `values` must map every header phi to its value in this iteration; the header's phis are
    not copied. Branches to a block of `targets` (e.g. the header: the next iteration) go there,
    branches inside the loop to the copies; terminators are copied as they are (the caller
    rewrites the exiting one). Returns the values of this copy (`values` extended with every
    copied instruction) and the copies of the blocks, by original block. `header_only` copies
    just the header (the last exit test of a top-tested loop)."""
    originals = [loop.header] if header_only else loop.blocks
    blocks = {b: new_block(f"{b.name}{suffix}") for b in originals}
    mapping = {**blocks, **targets}
    copied = dict(values)
    cloned = []
    for block in originals:
        for instr in block.instructions:
            if block is loop.header and isinstance(instr, ins.PhiInstr):
                continue
            copied[instr] = clone_instruction(instr, blocks[block], copied, mapping, blocks)
            cloned.append(copied[instr])
    # uses before definitions in block order (phis of the body): remap once more
    replace_in(cloned, copied)
    return copied, blocks


def exit_test(loop: Loop, nested: bool = False):
    """(stay predicate, v, B, step, in-loop successor) of the exit test `v pred B`, which is in
    the header (top-tested, the front end's form) or in the latch (rotated, clang's form).
    Loops with inner loops are declined unless `nested`."""
    if not loop.innermost and not nested:
        raise Decline("not an innermost loop (see unroll-jam for outer loops)")
    if loop.preheader is None:
        raise Decline("no unique preheader")
    if loop.latch is None:
        raise Decline(f"{len(loop.latches)} latches")
    if loop.exiting not in ([loop.header], [loop.latch]):
        names = ", ".join(b.name for b in loop.exiting) or "none"
        raise Decline(
            f"exiting blocks {names}: only the header or the latch may exit (early exit?)"
        )
    if loop.exit is None:
        raise Decline(f"{len(loop.exits)} exit blocks")
    if loop.trip_count is None:
        raise Decline(f"trip count unknown: {loop.trip_count_reason}")
    top_tested = loop.trip_count.minimum == 0
    term = (loop.header if top_tested else loop.latch).terminator
    if not isinstance(term, ins.ConditionalBranch):
        raise Decline("the exit test does not end in a conditional branch")
    cond, on_true, on_false = term.operands
    if not isinstance(cond, ins.ICMPInstr):
        raise Decline("the exit condition is not an icmp")
    pred = cond.op if on_true in loop else INVERSE_PREDICATE[cond.op]
    inside = on_true if on_true in loop else on_false
    left, right = cond.operands
    if loop.is_invariant(right) and not loop.is_invariant(left):
        v, bound = left, right
    elif loop.is_invariant(left) and not loop.is_invariant(right):
        v, bound, pred = right, left, SWAPPED_PREDICATE[pred]
    else:
        raise Decline("the exit test does not compare an induction variable with an invariant")
    step = loop.trip_count.step
    kind = pred[1:] if pred[0] in "su" else pred
    if kind not in ("lt", "le", "gt", "ge", "ne"):
        raise Decline(f"unsupported exit predicate {pred}")
    if top_tested and inside is loop.header:
        raise Decline("the header branches to itself")
    return pred, v, bound, step, inside


def build_guard(block: ir.Block, pred: str, v0, b0, step: int, span: int, metadata: dict):
    """`v0 pred b0` and `v0 + span*sign(step)` still passes it, without overflow: with the
    first test true, the distance `b0 - v0` (`v0 - b0` for a negative step) is exact as an
    unsigned value of v0's width."""
    builder = ir.IRBuilder(block)
    builder.position_at_end(block)
    kind = pred[1:] if pred[0] in "su" else pred
    symbol = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "ne": "!="}[kind]
    compare = builder.icmp_signed if pred[0] == "s" else builder.icmp_unsigned
    stay = compare(symbol, v0, b0)
    distance = builder.sub(b0, v0) if step > 0 else builder.sub(v0, b0)
    full = builder.icmp_unsigned(
        ">=" if kind in ("le", "ge") else ">", distance, ir.Constant(v0.type, span)
    )
    guard = builder.and_(stay, full, name="unroll.guard")
    for instr in (stay, distance, full, guard):
        instr.metadata.update(metadata)
    return guard


def _limit_before(loop: Loop, pred: str, bound: ir.Value, step: int, span: int):
    """The exit test `v pred B` of N more iterations, `v + span*sign(step) pred B`, as one
    comparison with a limit computed once in the preheader (None for `!=` tests or a bound
    the loop computes from more than invariants): `v < L` with L = B - span (+1 for `<=`),
    `v > L` with L = B + span (-1 for `>=`), exact in v's width; where L would overflow no v
    passes, so L is the type's extreme that none passes. A vector loop then tests its trip
    count once per iteration, as LLVM's own vectorizer does."""
    kind = pred[1:] if pred[0] in "su" else pred
    if kind == "ne" or not is_slice_of(bound, loop, ()):
        return None
    preheader = loop.preheader
    terminator = preheader.terminator
    preheader.instructions.remove(terminator)
    b0 = clone_slice(bound, loop, preheader, {})
    width = b0.type.width
    signed = pred[0] == "s"
    low, high = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    offset = span - (1 if kind in ("le", "ge") else 0)  # >= 0: span is at least 1
    builder = ir.IRBuilder(preheader)
    compare = builder.icmp_signed if signed else builder.icmp_unsigned
    constant = functools.partial(ir.Constant, b0.type)
    if step > 0:  # L = B - offset, valid when B >= low + offset
        valid = compare(">=", b0, constant(low + offset))
        limit = builder.select(valid, builder.sub(b0, constant(offset)), constant(low))
    else:  # L = B + offset, valid when B <= high - offset
        valid = compare("<=", b0, constant(high - offset))
        limit = builder.select(valid, builder.add(b0, constant(offset)), constant(high))
    limit.name = "unroll.limit"
    preheader.instructions.append(terminator)
    return limit


def _compare_with_limit(block: ir.Block, pred: str, v0, limit, step: int, metadata: dict):
    """`v0 < limit` (`>` for a negative step), signed or unsigned as `pred`, at the end of
    `block`: the guard `_limit_before` prepared."""
    builder = ir.IRBuilder(block)
    builder.position_at_end(block)
    compare = builder.icmp_signed if pred[0] == "s" else builder.icmp_unsigned
    guard = compare("<" if step > 0 else ">", v0, limit, name="unroll.guard")
    guard.metadata.update(metadata)
    return guard


def clone_slice(value: ir.Value, loop: Loop, block: ir.Block, values: dict) -> ir.Value:
    """`value` recomputed at the end of `block` from `values` (the header phis' values there):
    the pure integer arithmetic inside the loop it depends on is copied."""
    if not isinstance(value, ins.Instruction) or value.parent not in loop:
        return value
    if value not in values:
        if isinstance(value, ins.PhiInstr) or value.opname not in _SLICE_OPS:
            raise Decline(f"the exit test depends on %{value.name} ({value.opname})")
        for operand in value.operands:
            clone_slice(operand, loop, block, values)
        values[value] = clone_instruction(value, block, values, {})
    return values[value]


_SLICE_OPS = frozenset({"add", "sub", "mul", "shl", "sext", "zext", "trunc"})


def is_slice_of(value: ir.Value, loop: Loop, phis: Collection[ins.PhiInstr]) -> bool:
    """Whether `value` is computed inside `loop` only by the pure integer arithmetic
    `clone_slice` copies, from values outside it and from `phis`."""
    if not isinstance(value, ins.Instruction) or value.parent not in loop or value in phis:
        return True
    if isinstance(value, ins.PhiInstr) or value.opname not in _SLICE_OPS:
        return False
    return all(is_slice_of(operand, loop, phis) for operand in value.operands)


def unroll_loop(function: ir.Function, loop: Loop, factor: int) -> UnrolledLoop:
    """Unroll `loop` by `factor` (>= 2) with the original loop as remainder; Decline if the
    loop does not have the supported shape."""
    check_growth(loop, factor)
    pred, v, bound, step, inside = exit_test(loop)
    width = v.type.width
    span = (factor - 1) * abs(step)
    if span >= 1 << width:
        raise Decline(f"(factor - 1) * step = {span} does not fit in i{width}")
    if loop.trip_count.minimum == 1:
        return _unroll_rotated(function, loop, factor, pred, v, bound, step)
    header, latch = loop.header, loop.latch
    phis = [i for i in header.instructions if isinstance(i, ins.PhiInstr)]
    rest = [i for i in header.instructions if not isinstance(i, ins.PhiInstr)][:-1]
    body = [b for b in loop.blocks if b is not header]
    ivs = {iv.phi: iv for iv in loop.induction_variables if iv.step is not None}
    latch_value = {p: dict((b, val) for val, b in p.incomings)[latch] for p in phis}

    new_blocks, new_block = block_maker(function)

    # the unrolled header: phis, the header's own instructions, the guard
    uh = new_block(f"{header.name}.unrolled")
    values: dict[ir.Value, ir.Value] = {}
    uh_phis = {}
    for phi in phis:
        new = ir.PhiInstr(uh, phi.type, phi.name + ".u")
        uh.instructions.append(new)
        uh_phis[phi] = values[phi] = new
    for instr in rest:
        values[instr] = clone_instruction(instr, uh, values, {})
    v0, b0 = values.get(v, v), values.get(bound, bound)
    limit = _limit_before(loop, pred, bound, step, span)
    if limit is None:
        guard = build_guard(uh, pred, v0, b0, step, span, header.terminator.metadata)
    else:
        guard = _compare_with_limit(uh, pred, v0, limit, step, header.terminator.metadata)

    # the copies: entry blocks (copy 0 enters through UH) and body blocks, then their contents
    entries = [uh] + [new_block(f"{header.name}.u{k}") for k in range(1, factor)]
    copies: list[tuple[dict, dict]] = []
    for k in range(factor):
        entry = entries[k]
        blocks = {b: new_block(f"{b.name}.u{k}") for b in body}
        if k == 0:
            copy_values = dict(values)
        else:
            previous = copies[-1][0]
            copy_values = {}
            for phi in phis:
                if phi in ivs:
                    iv = ivs[phi]
                    offset = ir.Constant(phi.type, k * iv.step)
                    flags = ["nsw"] if iv.nsw else []
                    copy_values[phi] = append_add(
                        entry, uh_phis[phi], offset, flags, f"{phi.name}.u{k}"
                    )
                else:
                    value = latch_value[phi]
                    copy_values[phi] = previous.get(value, value)
            for instr in rest:
                copy_values[instr] = clone_instruction(instr, entry, copy_values, {})
            branch = ins.Branch(entry, "br", [blocks[inside]])
            branch.metadata.update(header.terminator.metadata)
            entry.instructions.append(branch)
            entry.terminator = branch
        mapping = dict(blocks)
        mapping[header] = entries[k + 1] if k + 1 < factor else uh
        incoming = dict(blocks)
        incoming[header] = entry
        cloned = []
        for block in body:
            for instr in block.instructions:
                copy_values[instr] = clone_instruction(
                    instr, blocks[block], copy_values, mapping, incoming
                )
                cloned.append(copy_values[instr])
        # uses before definitions in block order (phis of the body): remap once more
        replace_in(cloned, copy_values)
        copies.append((copy_values, blocks))
    last_values, last_blocks = copies[-1]
    copy_blocks = entries[1:] + [b for _, blocks in copies for b in blocks.values()]
    first = copies[0][1][inside]
    last = (last_values, last_blocks[latch])
    return close_unrolled_loop(
        loop, factor, (uh, uh_phis, guard), first, last, new_blocks, copy_blocks
    )


def close_unrolled_loop(
    loop: Loop,
    factor: int,
    unrolled_header: tuple[ir.Block, dict, ir.Value],
    first: ir.Block,
    last: tuple[dict, ir.Block],
    new_blocks: list[ir.Block],
    copy_blocks: list[ir.Block],
    register: bool = True,
) -> UnrolledLoop:
    """Close the unrolled loop: UH (`unrolled_header` = UH, its phis by original phi, the
    guard) branches to the copies (from `first`) when the guard holds, else through a middle
    block to the original loop, the remainder; UH's phis get the initial values and what the
    last copy (`last` = its values, its latch) sends back; the new blocks go before the
    original header."""
    uh, uh_phis, guard = unrolled_header
    last_values, last_latch = last
    header, preheader, latch = loop.header, loop.preheader, loop.latch
    function = header.parent
    position = function.blocks.index(header)
    phis = list(uh_phis)
    ivs = {iv.phi: iv for iv in loop.induction_variables if iv.step is not None}
    middle = ir.Block(parent=function, name=f"{header.name}.middle")
    new_blocks.append(middle)
    to_remainder = ins.Branch(middle, "br", [header])
    to_remainder.metadata.update(header.terminator.metadata)
    middle.instructions.append(to_remainder)
    middle.terminator = to_remainder
    branch = ins.ConditionalBranch(uh, "br", [guard, first, middle])
    branch.metadata.update(header.terminator.metadata)
    uh.instructions.append(branch)
    uh.terminator = branch
    # UH's phis: the initial values and what the last copy sends back
    for phi in phis:
        incoming = dict((b, val) for val, b in phi.incomings)
        if phi in ivs:
            iv = ivs[phi]
            flags = ["nsw"] if iv.nsw else []
            terminator = last_latch.terminator
            last_latch.instructions.remove(terminator)
            back = append_add(
                last_latch,
                uh_phis[phi],
                ir.Constant(phi.type, factor * iv.step),
                flags,
                f"{phi.name}.next",
            )
            last_latch.instructions.append(terminator)
        else:
            value = incoming[latch]
            back = last_values.get(value, value)
        uh_phis[phi].add_incoming(incoming[preheader], preheader)
        uh_phis[phi].add_incoming(back, last_latch)
    # the original loop is the remainder: entered from UH instead of the preheader
    for phi in phis:
        phi.incomings = [
            (uh_phis[phi], middle) if b is preheader else (val, b) for val, b in phi.incomings
        ]
        phi._clear_string_cache()
    pre_term = preheader.terminator
    pre_term.operands = [uh if t is header else t for t in pre_term.operands]
    pre_term._clear_string_cache()
    function.blocks[position:position] = new_blocks
    marker = function.module.add_metadata([])
    header.terminator.set_metadata(REMAINDER, marker)
    copy_blocks.sort(key=new_blocks.index)
    record = UnrolledLoop(uh, factor, loop, uh_phis, copy_blocks, first, last_latch)
    if register:  # an innermost loop: its record is for SIMD binding
        unrolled_loops(function)[uh] = record
    return record


def _unroll_rotated(
    function: ir.Function, loop: Loop, factor: int, pred: str, v, bound, step: int
) -> UnrolledLoop:
    """`unroll_loop` for a rotated loop (exit test `v pred B` in the latch, the body runs once
    before it): UH, entered only when iteration j runs, recomputes the tested value `v` of
    iteration j from its phis and enters the copies when iterations j..j+N all run (the tests
    after iterations j..j+N-1 pass), so every copy's exit test is known to pass and the last
    copy branches back to UH unconditionally; otherwise the original loop runs the 1..N
    remaining iterations."""
    header, latch = loop.header, loop.latch
    phis = [i for i in header.instructions if isinstance(i, ins.PhiInstr)]
    ivs = {iv.phi: iv for iv in loop.induction_variables if iv.step is not None}
    latch_value = {p: dict((b, val) for val, b in p.incomings)[latch] for p in phis}
    new_blocks, new_block = block_maker(function)

    uh = new_block(f"{header.name}.unrolled")
    uh_phis = {}
    for phi in phis:
        uh_phis[phi] = ir.PhiInstr(uh, phi.type, phi.name + ".u")
        uh.instructions.append(uh_phis[phi])
    sliced = dict(uh_phis)
    v0 = clone_slice(v, loop, uh, sliced)
    b0 = clone_slice(bound, loop, uh, sliced)
    guard = build_guard(uh, pred, v0, b0, step, (factor - 1) * abs(step), latch.terminator.metadata)
    copy_values: dict = {}
    copy_blocks: list[ir.Block] = []
    previous_latch = first = None
    for k in range(factor):
        values = {}
        for phi in phis:
            if k == 0:
                values[phi] = uh_phis[phi]
            elif phi in ivs:
                iv = ivs[phi]
                offset = ir.Constant(phi.type, k * iv.step)
                flags = ["nsw"] if iv.nsw else []
                values[phi] = append_add(uh, uh_phis[phi], offset, flags, f"{phi.name}.u{k}")
            else:
                value = latch_value[phi]
                values[phi] = copy_values.get(value, value)
        copy_values, blocks = clone_iteration(loop, values, {}, new_block, f".u{k}")
        copy_blocks.extend(blocks.values())
        if previous_latch is not None:
            branch_to(previous_latch, blocks[header])
        first = first or blocks[header]
        previous_latch = blocks[latch]
    branch_to(previous_latch, uh)
    last = (copy_values, previous_latch)
    return close_unrolled_loop(
        loop, factor, (uh, uh_phis, guard), first, last, new_blocks, copy_blocks
    )


def append_add(block: ir.Block, a: ir.Value, b: ir.Value, flags: list[str], name: str):
    builder = ir.IRBuilder(block)
    builder.position_at_end(block)
    return builder.add(a, b, name=name, flags=flags)


def transform_loops(module: ir.Module, context: PassContext, wanted, transform, declined: str):
    """Run `transform(function, loop) -> passed-remark message` on each loop `wanted(loop)` of
    every function (loops found before the first change); a `Decline` becomes the missed-remark
    `declined: reason`."""
    for function in module.functions:
        if not function.blocks:
            continue
        changed = False
        for loop in list(loops_of(function).loops):
            if not wanted(loop):
                continue
            try:
                message = transform(function, loop)
            except Decline as reason:
                context.missed(f"{declined}: {reason}", at=loop.header)
                continue
            context.passed(message, at=loop.header)
            changed = True
        if changed:
            invalidate(function)


def transform_until_done(
    module: ir.Module,
    context: PassContext,
    wanted,
    transform,
    declined: str,
    enabling: bool = False,
):
    """Run `transform(function, loop) -> passed-remark message` on the first loop of a
    function with `wanted(function, loop)`, find the loops again, and repeat until no loop is
    left (for rewrites that make new loops or change the nesting); a loop that raises
    `Decline` gets the missed-remark `declined: reason` and is not offered again. `enabling`:
    the rewrites only prepare another pass's (`Remark.enabling`)."""
    for function in module.functions:
        if not function.blocks:
            continue
        refused: set[ir.Block] = set()
        while True:
            loop = next(
                (
                    lp
                    for lp in loops_of(function).loops
                    if lp.header not in refused and wanted(function, lp)
                ),
                None,
            )
            if loop is None:
                break
            try:
                message = transform(function, loop)
            except Decline as reason:
                refused.add(loop.header)
                context.missed(f"{declined}: {reason}", at=loop.header)
                continue
            context.passed(message, at=loop.header, enabling=enabling)
            invalidate(function)


@register("unroll", (UnrollFactor,))
def unroll(module: ir.Module, factor: int, *, context: PassContext) -> ir.Module:
    """Unroll every innermost loop of the supported shape by `factor`, with a remainder loop."""
    factor = int(factor)
    if factor < 1:
        raise ValueError(f"unroll factor must be >= 1, not {factor}")
    if factor == 1:
        return module

    def transform(function: ir.Function, loop: Loop) -> str:
        unroll_loop(function, loop, factor)
        return f"loop unrolled by {factor}"

    def wanted(loop: Loop) -> bool:  # outer loops: see unroll-jam
        return loop.innermost and not is_remainder(loop)

    transform_loops(module, context, wanted, transform, "loop not unrolled")
    return module
