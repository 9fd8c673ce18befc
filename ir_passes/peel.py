"""Peeling a few iterations off the front of a vectorized loop so its accesses start aligned.

With `row_align(N)` declared, the address of a unit-stride access at iteration n is
`row start (N-aligned) + c + stride * (j0 + n)`; whether the vector loop's accesses are aligned
depends on where it starts. For the 1×3 mean filter (j0 = 1, 2-wide floats, N = 8) the loads at
x-1 and x+1 are aligned and the load and store at x are not; one peeled iteration turns that
round. `peel_count` picks the number of iterations p (below one vector) that aligns the most
accesses, a store counting twice (an unaligned store that splits a cache line costs two
accesses and cannot be combined; on the C66x STNDW vs STDW), and `peel_before` runs those p
iterations with a copy of the scalar loop before the vector loop, which then starts at the
constant `j0 + p` (so `align` can prove it). If the loop ends within the p iterations, the
scalar remainder loop is entered directly and finishes.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .core.loops import Loop
from .core.rewrite import copy_instruction, remap_operands
from .core.symbolic import Expr
from .unroll import UnrolledLoop


@dataclass(frozen=True)
class Stream:
    """A unit-stride access: its byte offset, bytes per iteration and access size."""

    offset: Expr
    stride: int
    size: int
    is_store: bool


def _phase(stream: Stream, starts: dict[ir.Value, int], alignment: int) -> int | None:
    """The stream's address modulo `alignment` at iteration 0 (row terms being multiples of
    the row alignment), or None if an induction variable's start is not a constant."""
    total = stream.offset.constant_term
    for monomial, coefficient in stream.offset.terms:
        if not monomial:
            continue
        ivs = [v for v in monomial if v in starts]
        if not ivs:
            continue  # a row term: a multiple of the row alignment
        if len(monomial) != 1 or starts[ivs[0]] is None:
            return None
        total += coefficient * starts[ivs[0]]
    return total % alignment


def peel_count(
    streams: list[Stream], starts: dict[ir.Value, int | None], row_align: int, width: int
) -> tuple[int, tuple[int, int], tuple[int, int]]:
    """(p, (aligned loads, aligned stores) without peeling, the same after peeling p
    iterations); p = 0 when peeling does not pay."""
    phases = []
    for stream in streams:
        alignment = min(row_align, width * stream.size)
        if alignment <= stream.size:
            continue
        phase = _phase(stream, starts, alignment)
        if phase is None:
            return 0, (0, 0), (0, 0)
        phases.append((phase, stream.stride, alignment, stream.is_store))
    if not phases:
        return 0, (0, 0), (0, 0)

    def aligned(p: int) -> tuple[int, int]:
        hits = [store for phase, stride, a, store in phases if (phase + p * stride) % a == 0]
        return hits.count(False), hits.count(True)

    def weight(p: int) -> int:
        loads, stores = aligned(p)
        return loads + 2 * stores

    period = max(a // abs(stride) for _, stride, a, _ in phases)
    best = max(range(period), key=lambda p: (weight(p), -p))
    return best, aligned(0), aligned(best)


def peel_before(record: UnrolledLoop, loop: Loop, iv: ins.PhiInstr, step: int, count: int) -> None:
    """Run `count` iterations of the scalar `loop` (the remainder of `record`) before the
    vector loop. Every header phi of `loop` must be an induction variable; `iv` (step
    `step`, constant start) is the one whose value decides when the peel is complete."""
    function = loop.header.parent
    uh = record.header
    some_phi = next(iter(record.phis.values()))
    preheader = next(b for _, b in some_phi.incomings if b is not record.latch)
    start = next(v for v, b in record.phis[iv].incomings if b is preheader)
    target = ir.Constant(iv.type, int(start.constant) + count * step)
    blocks = {b: ir.Block(function, f"{b.name}.peel") for b in loop.blocks}
    done = ir.Block(function, f"{loop.header.name}.peeled")
    skip = ir.Block(function, f"{loop.header.name}.peel.exit")
    values: dict[ir.Value, ir.Value] = {}
    copies = []
    for block in loop.blocks:
        for instr in block.instructions:
            new = copy_instruction(instr, blocks[block])
            blocks[block].instructions.append(new)
            if isinstance(instr, ins.Terminator):
                blocks[block].terminator = new
            values[instr] = new
            copies.append(new)
    initial = {
        phi: next(v for v, b in new.incomings if b is preheader) for phi, new in record.phis.items()
    }
    for instr, new in zip([i for b in loop.blocks for i in b.instructions], copies):
        remap_operands(new, lambda v: values.get(v, v))
        if isinstance(instr, ins.PhiInstr) and instr.parent is loop.header:
            latch_value = next(v for v, b in instr.incomings if b is loop.latch)
            new.incomings = [
                (initial[instr], preheader),
                (values.get(latch_value, latch_value), blocks[loop.latch]),
            ]
        elif isinstance(new, ins.PhiInstr):
            new.incomings = [(v, blocks[b]) for v, b in new.incomings]
        elif isinstance(new, (ins.Branch, ins.ConditionalBranch)):
            new.operands = [
                (blocks.get(t, done) if isinstance(t, ir.Block) else t) for t in new.operands
            ]
        new._clear_string_cache()
    # the peeled header stays in the loop only while fewer than `count` iterations ran
    header = blocks[loop.header]
    branch = header.terminator
    builder = ir.IRBuilder(header)
    builder.position_before(branch)
    more = builder.icmp_unsigned("!=", values[iv], target)
    cond, on_true, on_false = branch.operands
    inside_true = on_true in blocks.values()
    stay = builder.select(cond, more, ir.Constant(ir.IntType(1), 0)) if inside_true else None
    if inside_true:
        branch.operands = [stay, on_true, done]
    else:  # the condition says "leave"
        leave = builder.select(cond, ir.Constant(ir.IntType(1), 1), builder.not_(more))
        branch.operands = [leave, done, on_false]
    branch._clear_string_cache()
    # all `count` iterations ran: the vector loop starts at the constant; else the remainder
    vector_entry = ir.Block(function, f"{uh.name}.entry")  # the vector loop's preheader
    builder = ir.IRBuilder(done)
    completed = builder.icmp_unsigned("==", values[iv], target)
    builder.cbranch(completed, vector_entry, skip)
    ir.IRBuilder(vector_entry).branch(uh)
    ir.IRBuilder(skip).branch(loop.header)
    for phi, new in record.phis.items():
        advanced = values[phi] if phi is not iv else target
        new.incomings = [
            ((advanced, vector_entry) if b is preheader else (v, b)) for v, b in new.incomings
        ]
        new._clear_string_cache()
    for phi in loop.header.instructions:
        if isinstance(phi, ins.PhiInstr):
            phi.add_incoming(values[phi], skip)
            phi._clear_string_cache()
    term = preheader.terminator
    term.operands = [blocks[loop.header] if t is uh else t for t in term.operands]
    term._clear_string_cache()
    position = function.blocks.index(uh)
    function.blocks[position:position] = [*blocks.values(), done, skip, vector_entry]
