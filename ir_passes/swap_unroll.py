"""`swap-unroll`: a time loop that rotates pointers (`tmp = a; a = b; b = tmp`) becomes a loop
over whole periods of the rotation, in which every pointer is loop-invariant.

After mem2reg the pointers of a swap loop are phis of its header that take each other's values
along the latch edge (`%a = phi [A, pre], [%b, latch]; %b = phi [B, pre], [%a, latch]`): a
permutation of the pointers, whose period p is the least common multiple of its cycle lengths
(2 for a swap, 3 for a 3-cycle). In iteration k the pointer `P` holds the initial value of
`rotation^k(P)`, which depends only on k mod p. So the loop (`t` from `init`, +1 per step, `tc`
iterations) is replaced by

    q = tc / p, r = tc % p                           (computed once, before the loop)
    for (s = 0; s < q; s++) { phase 0; phase 1; ... phase p-1 }   # t = init + p*s + k
    if (r > 0) phase 0;  if (r > 1) phase 1; ...     # the last r iterations, t = init + p*q + k
    final pointers: the initial values rotated r times (a select on r)

where phase k is a copy of one iteration with the pointers replaced by their values in phase
k. This only replays the original iterations in their order, so it is exact for all inputs,
aliasing ones included (a == b). The main loop is the K-sweep form `A -> B, B -> A` that
`time-tile` tiles; each guarded remainder copy is a nest of its own (no time loop).

A loop is rewritten only when it is a top-level loop in front-end form (top-tested, step +1,
signed or `!=` test: the shape a SCoP needs), its header carries nothing but the counter and
the pointers, and the pointers are used inside the loop only as the bases of addresses (GEPs,
loads, stores) and by each other's phis: a pointer that is compared, stored, passed to a call
or swapped under a condition keeps the loop as it is, with a missed remark saying which.
`time-tile` and `time-tile-large` run this before they extract SCoPs (`unroll_pointer_swaps`),
so a swap loop is time-tiled by them and by -O3 with no pass of its own in the pipeline; they
leave the remainder copies alone (`remainder_blocks`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .core.facts import fact
from .core.loops import InductionVariable, Loop
from .core.rewrite import (
    branch_to,
    remove_dead,
    replace_in,
    set_terminator,
    used_values,
    users_of,
)
from .registry import PassContext, register
from .unroll import (
    Decline,
    block_maker,
    clone_iteration,
    clone_slice,
    exit_test,
    transform_until_done,
)

#: the largest period unrolled: a loop body is copied 2p - 1 times (p in the main loop, p - 1
#: guarded for the remainder)
MAX_PERIOD = 4
#: header instructions that may be copied into every phase (the exit test's arithmetic)
_PURE_HEADER = frozenset("add sub mul shl sext zext trunc icmp and or xor select".split())


@dataclass(eq=False)
class SwapLoop:
    """A recognised pointer-swap time loop."""

    loop: Loop
    iv: InductionVariable
    #: the compared value `v` of the exit test `v pred bound` (the counter or its extension)
    tested: ir.Value
    predicate: str
    bound: ir.Value
    inside: ir.Block  # the header's successor in the loop
    #: pointer phi -> the pointer phi whose value it takes along the latch edge
    rotation: dict[ins.PhiInstr, ins.PhiInstr]
    initial: dict[ins.PhiInstr, ir.Value]
    period: int
    #: (pointers loaded through, pointers stored through), for the remark
    reads: list[ins.PhiInstr]
    writes: list[ins.PhiInstr]

    def phase(self, k: int) -> dict[ir.Value, ir.Value]:
        """The value of every pointer phi in iteration k: its rotation^k's initial value."""
        out: dict[ir.Value, ir.Value] = {}
        for phi in self.rotation:
            source = phi
            for _ in range(k % self.period):
                source = self.rotation[source]
            out[phi] = self.initial[source]
        return out

    def describe(self) -> str:
        """The phases as sweeps `reads->writes`, each pointer named by its initial value (an
        argument, or `q0` for the initial value of the C pointer `q`)."""
        names = {
            self.initial[p]: _name(self.initial[p])
            if isinstance(self.initial[p], (ir.Argument, ir.GlobalValue))
            else f"{_c_name(p)}0"
            for p in self.rotation
        }
        sweeps = []
        for k in range(self.period):
            values = self.phase(k)
            reads = ",".join(names[values[p]] for p in self.reads)
            writes = ",".join(names[values[p]] for p in self.writes)
            sweeps.append(f"{reads}->{writes}")
        return ", ".join(sweeps)


def remainder_blocks(function: ir.Function) -> set[ir.Block]:
    """The blocks of the guarded remainder sweeps built in `function`: the time-tiling passes
    leave their nests alone (a sweep has no time loop to tile)."""
    return fact(function, "swap remainder blocks", set)


def _name(value: ir.Value) -> str:
    return getattr(value, "name", "") or "?"


def _c_name(phi: ins.PhiInstr) -> str:
    """The C variable a pointer phi stands for (the front end names it `a.2` for `a`)."""
    return re.sub(r"\.\d+$", "", phi.name)


def _latch_value(phi: ins.PhiInstr, loop: Loop) -> ir.Value:
    return next(v for v, b in phi.incomings if b is loop.latch)


def is_candidate(loop: Loop) -> bool:
    """Whether `loop` looks like a pointer swap: a pointer phi of its header takes (maybe under
    a condition) the value of another one. Pointers that walk through memory (`p++`) are not."""
    if loop.latch is None:
        return False
    header_phis = {i for i in loop.header.instructions if isinstance(i, ins.PhiInstr)}
    for phi in header_phis:
        if not isinstance(phi.type, ir.PointerType):
            continue
        nxt = _latch_value(phi, loop)
        merged = [nxt]
        if nxt not in header_phis and isinstance(nxt, (ins.PhiInstr, ins.SelectInstr)):
            merged = used_values(nxt)  # chosen under a condition
        if any(v in header_phis and v is not phi for v in merged):
            return True
    return False


def recognise(loop: Loop, users: dict[ir.Value, list[ir.Instruction]]) -> SwapLoop:
    """The swap loop `loop` is, or Decline saying what keeps it from being rewritten."""
    if loop.parent is not None:
        raise Decline("the loop is inside another loop (only top-level time loops)")
    pred, tested, bound, step, inside = exit_test(loop, nested=True)
    if loop.exiting != [loop.header]:
        raise Decline("the loop does not test its condition before the body")
    iv = loop.trip_count_iv
    if step != 1 or pred not in ("slt", "sle", "ne") or not loop.trip_count.no_wrap:
        raise Decline("the counter does not step by +1 under a signed, non-wrapping test")
    if tested is not iv.phi and not (
        getattr(tested, "opname", None) == "sext" and tested.operands[0] is iv.phi
    ):
        raise Decline("the exit test does not compare the counter (or its sign extension)")
    header = loop.header
    phis = [i for i in header.instructions if isinstance(i, ins.PhiInstr)]
    rotation, initial = {}, {}
    for phi in phis:
        if phi is iv.phi:
            continue
        if not isinstance(phi.type, ir.PointerType):
            raise Decline(f"{_c_name(phi)} is also carried from one iteration to the next")
        nxt = _latch_value(phi, loop)
        if not (isinstance(nxt, ins.PhiInstr) and nxt.parent is header and nxt is not iv.phi):
            where = f" (chosen in {nxt.parent.name}: a conditional swap)" if _in(nxt, loop) else ""
            raise Decline(f"the next value of {_c_name(phi)} is not one of the pointers{where}")
        rotation[phi] = nxt
        initial[phi] = next(v for v, b in phi.incomings if b is loop.preheader)
    if len(set(rotation.values())) != len(rotation):
        raise Decline("the pointers are not permuted (two take the same pointer's value)")
    period = _period(rotation)
    if period > MAX_PERIOD:
        raise Decline(f"the pointers rotate with period {period} (at most {MAX_PERIOD})")
    for instr in header.instructions[len(phis) : -1]:
        if instr.opname not in _PURE_HEADER:
            raise Decline(f"the loop header computes '{instr.opname}'")
        if any(not _in(u, loop) for u in users.get(instr, [])):
            raise Decline(f"%{instr.name} of the loop header is used after the loop")
    reads: list[ins.PhiInstr] = []
    writes: list[ins.PhiInstr] = []
    for phi in rotation:
        loads, stores = _address_uses(phi, phi, loop, users, set(rotation))
        if loads:
            reads.append(phi)
        if stores:
            writes.append(phi)
    return SwapLoop(loop, iv, tested, pred, bound, inside, rotation, initial, period, reads, writes)


def _in(value: ir.Value, loop: Loop) -> bool:
    return isinstance(value, ir.Instruction) and value.parent in loop


def _period(rotation: dict) -> int:
    period = 1
    for start in rotation:
        length, phi = 1, rotation[start]
        while phi is not start:
            length, phi = length + 1, rotation[phi]
        period = math.lcm(period, length)
    return period


def _address_uses(pointer, value, loop, users, pointers) -> tuple[bool, bool]:
    """(loaded through, stored through) for `value` (`pointer` or a GEP of it); Decline if
    inside the loop it is used other than as an address or by the rotation's phis."""
    loads = stores = False
    for user in users.get(value, []):
        if not _in(user, loop):
            continue  # after the loop: replaced by the final value
        op = user.opname
        if isinstance(user, ins.PhiInstr) and user in pointers and user.parent is loop.header:
            continue
        if isinstance(user, ins.GEPInstr) and user.pointer is value and value not in user.indices:
            more = _address_uses(pointer, user, loop, users, pointers)
            loads, stores = loads or more[0], stores or more[1]
        elif op == "load":
            loads = True
        elif op == "store" and user.operands[1] is value and user.operands[0] is not value:
            stores = True
        else:
            what = {
                "icmp": "compared",
                "call": "passed to a call",
                "store": "stored to memory",
                "ptrtoint": "converted to an integer",
            }.get(op, f"used by '{op}'")
            raise Decline(f"pointer {_c_name(pointer)} is {what} in the loop, not an array base")
    return loads, stores


# --------------------------------------------------------------------------------------------
# The rewrite


def unroll_swap(function: ir.Function, swap: SwapLoop) -> None:
    """Replace the loop by the main loop over periods, the guarded remainder and the final
    values (see the module's docstring)."""
    loop, iv, p = swap.loop, swap.iv, swap.period
    header, preheader, exit_ = loop.header, loop.preheader, loop.exit
    metadata = header.terminator.metadata
    new_blocks, new_block = block_maker(function)
    outside = [i for b in function.blocks if b not in loop for i in b.instructions]

    # the trip count tc in the compared type, exact as an unsigned number, then q and r
    count = new_block(f"{header.name}.swap.count")
    branch_to(preheader, count)
    bound = clone_slice(swap.bound, loop, count, {})
    b = ir.IRBuilder(count)
    start = b.sext(iv.init, swap.tested.type) if swap.tested is not iv.phi else iv.init
    runs = b.icmp_signed("<=" if swap.predicate == "sle" else "<", start, bound)
    distance = b.sub(bound, start)
    if swap.predicate == "sle":
        distance = b.add(distance, ir.Constant(distance.type, 1))
    wide = distance.type
    trips = b.select(runs, distance, ir.Constant(wide, 0), name="swap.trips")
    periods = b.udiv(trips, ir.Constant(wide, p), name="swap.periods")
    rest = b.urem(trips, ir.Constant(wide, p), name="swap.rest")
    main_pre = new_block(f"{header.name}.swap.pre")
    branch_to(count, main_pre)

    # the main loop: s over [0, q), the p phases in its body
    main = new_block(f"{header.name}.swap")
    branch_to(main_pre, main)
    main_pre.terminator.metadata.update(preheader.terminator.metadata)
    s = ir.PhiInstr(main, wide, f"{iv.phi.name}.period")
    main.instructions.append(s)
    b = ir.IRBuilder(main)
    first = b.mul(s, ir.Constant(wide, p))
    counters = [_counter(b, iv, first, k) for k in range(p)]
    stay = b.icmp_signed("<", s, periods)
    phases = [_phase(loop, swap, k, counters[k], new_block, f".swap{k}")[:2] for k in range(p)]
    main_latch = new_block(f"{header.name}.swap.latch")
    s_next = ir.IRBuilder(main_latch).add(s, ir.Constant(wide, 1), f"{s.name}.next", ["nsw"])
    branch_to(main_latch, main)
    s.add_incoming(ir.Constant(wide, 0), main_pre)
    s.add_incoming(s_next, main_latch)
    for (_, last), (nxt, _) in zip(phases, phases[1:]):
        branch_to(last, nxt)
    branch_to(phases[-1][1], main_latch)

    # the remainder: phases 0..r-1, each under its own guard
    guards, rests = [], []
    for k in range(p - 1):
        guards.append(new_block(f"{header.name}.swap.rest{k}"))
        b = ir.IRBuilder(guards[k])
        counter = _counter(b, iv, b.mul(periods, ir.Constant(wide, p)), k)
        more = b.icmp_unsigned(">", rest, ir.Constant(wide, k), name="swap.more")
        entry, last, blocks = _phase(loop, swap, k, counter, new_block, f".rest{k}")
        remainder_blocks(function).update(blocks)
        rests.append((more, (entry, last)))
    done = new_block(f"{header.name}.swap.done")
    _terminate(main, [stay, phases[0][0], guards[0]], metadata)
    for k, (more, (entry, last)) in enumerate(rests):
        _terminate(guards[k], [more, entry, done], metadata)
        branch_to(last, guards[k + 1] if k + 1 < len(guards) else done)

    # the values after the loop: the counter init + tc, the pointers rotated r times
    b = ir.IRBuilder(done)
    final: dict[ir.Value, ir.Value] = {iv.phi: _counter(b, iv, trips, 0)}
    for phi in swap.rotation:
        value = swap.phase(p - 1)[phi]
        for k in range(p - 2, -1, -1):
            is_k = b.icmp_unsigned("==", rest, ir.Constant(wide, k))
            value = b.select(is_k, swap.phase(k)[phi], value)
        final[phi] = value
    branch_to(done, exit_)
    replace_in(outside, final)
    for phi in exit_.instructions:
        if not isinstance(phi, ins.PhiInstr):
            break
        phi.incomings = [(v, done if blk is header else blk) for v, blk in phi.incomings]
        phi._clear_string_cache()

    position = function.blocks.index(header)
    originals = set(loop.blocks)
    function.blocks[:] = [blk for blk in function.blocks if blk not in originals]
    function.blocks[position:position] = new_blocks
    remove_dead(function, [i for blk in new_blocks for i in blk.instructions])


def _counter(b: ir.IRBuilder, iv: InductionVariable, offset: ir.Value, k: int) -> ir.Value:
    """The counter `init + offset + k` (offset in the compared type, maybe wider)."""
    if k:
        offset = b.add(offset, ir.Constant(offset.type, k))
    if offset.type != iv.type:
        offset = b.trunc(offset, iv.type)
    return b.add(iv.init, offset, name=f"{iv.phi.name}.swap")


def _phase(loop: Loop, swap: SwapLoop, k: int, counter, new_block, suffix: str):
    """A copy of one iteration in phase k, entered at its header copy (which no longer tests);
    (entry block, latch copy, all its blocks) — the caller gives the latch copy a successor."""
    values = {**swap.phase(k), swap.iv.phi: counter}
    _, blocks = clone_iteration(loop, values, {}, new_block, suffix)
    branch_to(blocks[loop.header], blocks[swap.inside])
    return blocks[loop.header], blocks[loop.latch], list(blocks.values())


def _terminate(block: ir.Block, operands: list, metadata: dict) -> None:
    """End `block` with `br operands[0], operands[1], operands[2]` (the loop test's location)."""
    branch = ins.ConditionalBranch(block, "br", operands)
    branch.metadata.update(metadata)
    set_terminator(block, branch)


def unroll_pointer_swaps(module: ir.Module, context: PassContext, enabling: bool = False) -> None:
    """Rewrite every pointer-swap loop of `module` (remarks to `context`; `enabling`: as the
    time-tiling passes' first step, `Remark.enabling`)."""

    def transform(function: ir.Function, loop: Loop) -> str:
        swap = recognise(loop, users_of(function))
        unroll_swap(function, swap)
        return (
            f"pointer-swap loop unrolled by {swap.period} into sweeps {swap.describe()}: "
            f"(trip count) / {swap.period} periods, then (trip count) % {swap.period} "
            "guarded sweep(s)"
        )

    def wanted(function: ir.Function, loop: Loop) -> bool:
        return is_candidate(loop)

    transform_until_done(
        module, context, wanted, transform, "pointer-swap loop not unrolled", enabling
    )


@register("swap-unroll")
def swap_unroll(module: ir.Module, *, context: PassContext) -> ir.Module:
    """Unroll pointer-swap time loops by the period of the swap (see the module docstring)."""
    unroll_pointer_swaps(module, context)
    return module
