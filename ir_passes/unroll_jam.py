"""`unroll-jam(N)`: unroll an outer loop by N and jam the N copies of its inner loop into one.

For a nest `for y { pre; for x { body } post }` (both loops in front-end form, the outer loop's
other blocks two straight chains around the inner loop) the pass builds

    UH: the outer phis, the outer exit test for iterations y .. y+N-1, and a run-time check
        -> pre(y) .. pre(y+N-1)
        -> jammed inner loop: per iteration x, body(y, x) .. body(y+N-1, x)
        -> post(y) .. post(y+N-1) -> UH, y stepped by N*s
    UH (test or check false) -> the original nest, the remainder

Legality. The copies share the inner loop's exit test, so the inner trip count must not depend
on the outer loop (bound and start of the inner IV invariant in the outer loop). Jamming runs
`body(y+b, x')` before `body(y+a, x)` for a < b, x < x': that is only harmless when no copy
writes memory another copy touches. In C without `restrict`, `out[y][x]` and `in[y+1][x]` are
not provably distinct (the two pointers may overlap), so the pass does not guess: UH computes,
for the N copies, the byte range every store and every access of the inner loop covers (from
its affine address, see affine.py, with the inner IV at its first and last value) and enters
the jammed loop only when the stores of each copy are disjoint from the accesses of every other
copy. Otherwise — and always when a range check is not possible: `pre`/`post` touching memory,
an address that is not affine in the inner IV, a non-IV outer phi — the original nest runs
(resp. the loop is declined with a `-Rpass-missed=unroll-jam` remark naming the reason).
Scalar evaluation order inside each copy is unchanged, so results are bit-exact.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .core.affine import address_of, size_of
from .core.loops import Loop
from .core.rewrite import (
    branch_to,
    clone_instruction,
    merge_straight_line,
    remove_dead,
    replace_in,
)
from .core.symbolic import Expr
from .registry import PassContext, register
from .unroll import (
    Decline,
    UnrollFactor,
    append_add,
    block_maker,
    build_guard,
    check_growth,
    clone_slice,
    close_unrolled_loop,
    exit_test,
    is_remainder,
    transform_loops,
)

I64 = ir.IntType(64)


def _chain(start: ir.Block, stop: ir.Block, allowed: Loop) -> list[ir.Block]:
    """The blocks from `start` to `stop` (inclusive) joined by unconditional branches."""
    chain, block = [], start
    while True:
        if block not in allowed or block in chain:
            raise Decline("the outer loop's body is not straight-line code around the inner loop")
        chain.append(block)
        if block is stop:
            return chain
        term = block.terminator
        if not isinstance(term, ins.Branch) or isinstance(term, ins.ConditionalBranch):
            raise Decline(f"branch in {block.name} outside the inner loop")
        block = term.operands[0]


def _shape(outer: Loop):
    """(inner loop, pre chain, post chain, outer exit test) of a nest the pass supports."""
    if len(outer.children) != 1 or not outer.children[0].innermost:
        raise Decline("not a loop around exactly one innermost loop")
    inner = outer.children[0]
    test = _exit_test_of(outer)
    inner_test = exit_test(inner)
    if inner.trip_count.minimum != 0 or outer.trip_count.minimum != 0:
        raise Decline("rotated loops are not jammed")
    if any(isinstance(i, ins.PhiInstr) for i in test[4].instructions):
        raise Decline("phis in the outer loop's body")
    pre = _chain(test[4], inner.preheader, outer)
    post = _chain(inner.exit, outer.latch, outer)
    if len(outer.blocks) != 1 + len(pre) + len(inner.blocks) + len(post):
        raise Decline("the outer loop's body is not straight-line code around the inner loop")
    for block in [outer.header, *pre, *post]:
        for instr in block.instructions:
            if instr.opname in ("load", "store", "call"):
                raise Decline(f"{instr.opname} outside the inner loop")
    ivs = {iv.phi for iv in outer.induction_variables if iv.step is not None}
    for phi in outer.header.instructions:
        if isinstance(phi, ins.PhiInstr) and phi not in ivs:
            raise Decline(
                f"%{phi.name} is carried by the outer loop but is not an induction variable"
            )
    if any(isinstance(i, ins.PhiInstr) for i in inner_test[4].instructions):
        raise Decline("phis at the start of the inner loop's body")
    bound, iv = inner_test[2], inner.trip_count_iv
    if not (outer.is_invariant(bound) and outer.is_invariant(iv.init)):
        raise Decline("the inner trip count depends on the outer loop")
    return inner, pre, post, test


def _exit_test_of(outer: Loop):
    """`exit_test` for an outer loop."""
    if outer.exiting != [outer.header]:
        raise Decline("the outer loop is not in top-tested form")
    return exit_test(outer, nested=True)


def _inner_entry(inner: Loop) -> ir.Block:
    """The block the inner loop's header enters its body through."""
    return exit_test(inner)[4]


class _Ranges:
    """i64 arithmetic in UH for the run-time disjointness check."""

    def __init__(self, builder: ir.IRBuilder, outer: Loop, inner: Loop, uh_phis: dict):
        self.b, self.outer, self.inner, self.uh_phis = builder, outer, inner, uh_phis
        self.outer_steps = {iv.phi: iv.step for iv in outer.induction_variables}
        #: narrow values the nest zero-extends: affine.py's polynomials read every extension as
        #: the identity, the check sign-extends, so these are refused rather than misread
        self.unsigned = {
            i.operands[0] for b in outer.blocks for i in b.instructions if i.opname == "zext"
        }

    def wide(self, value: ir.Value) -> ir.Value:
        if isinstance(value.type, ir.PointerType):
            return self.b.ptrtoint(value, I64)
        if value.type.width < 64:
            return self.b.sext(value, I64)
        return value

    def symbol(self, value: ir.Value, copy: int, x: ir.Value) -> ir.Value:
        """A leaf of an address polynomial, in outer copy `copy` with the inner IV = `x`."""
        if value in self.unsigned and value.type.width < 64:
            raise Decline(f"an address depends on %{value.name} extended as unsigned")
        if value is self.inner.trip_count_iv.phi:
            return x
        if value in self.outer_steps:
            base = self.wide(self.uh_phis[value])
            return self.b.add(base, ir.Constant(I64, copy * self.outer_steps[value]))
        blocks = set(self.outer.blocks)
        if isinstance(value, ins.Instruction) and value.parent in blocks:
            raise Decline(f"an address depends on %{value.name}, defined in the nest")
        if not isinstance(value.type, (ir.IntType, ir.PointerType)):
            raise Decline(f"an address depends on a {value.type} value")
        return self.wide(value)

    def polynomial(self, poly: Expr, copy: int, x: ir.Value) -> ir.Value:
        total = ir.Constant(I64, 0)
        for monomial, coefficient in poly.terms:
            term = ir.Constant(I64, coefficient)
            for value in monomial:
                term = self.b.mul(term, self.symbol(value, copy, x))
            total = self.b.add(total, term)
        return total


def _disjoint_check(outer: Loop, inner: Loop, uh: ir.Block, uh_phis: dict, values: dict, factor):
    """The i1 value "the stores of each copy miss every access of every other copy"."""
    pred, v, bound, step, _ = exit_test(inner)
    iv = inner.trip_count_iv
    if v is not iv.phi or step <= 0 or pred not in ("slt", "sle", "ult", "ule", "ne"):
        raise Decline(f"inner exit test {pred} on %{v.name}: its last IV value is not computed")
    first = clone_slice(iv.init, outer, uh, values)
    limit = clone_slice(bound, outer, uh, values)
    builder = ir.IRBuilder(uh)
    builder.position_at_end(uh)  # after the copied instructions
    ranges = _Ranges(builder, outer, inner, uh_phis)
    extend = builder.zext if pred[0] == "u" else builder.sext
    first = extend(first, I64) if first.type.width < 64 else first
    limit = extend(limit, I64) if limit.type.width < 64 else limit
    if pred.endswith("le"):
        limit = builder.add(limit, ir.Constant(I64, 1))
    # last = first + ((limit - first - 1) / step) * step, meaningful when the loop runs
    count = builder.sdiv(
        builder.sub(builder.sub(limit, first), ir.Constant(I64, 1)), ir.Constant(I64, step)
    )
    last = builder.add(first, builder.mul(count, ir.Constant(I64, step)))
    accesses = []
    for block in inner.blocks:
        for instr in block.instructions:
            if instr.opname == "call":
                raise Decline("a call in the inner loop")
            if instr.opname not in ("load", "store"):
                continue
            is_store = instr.opname == "store"
            pointer = instr.operands[1] if is_store else instr.operands[0]
            value_type = instr.operands[0].type if is_store else instr.type
            address = address_of(pointer)
            x = iv.phi
            slope = address.offset.coefficient(x)
            if any(monomial for monomial, _ in slope.terms):
                raise Decline(
                    f"the address of {instr.opname} {pointer.name} is not affine in the inner IV"
                )
            accesses.append((is_store, address, slope.constant_term, size_of(value_type)))
    if not any(is_store for is_store, *_ in accesses):
        return ir.Constant(ir.IntType(1), 1)
    spans = []  # per copy: [(is_store, lo, hi)]
    for copy in range(factor):
        spans.append([])
        for is_store, address, slope, size in accesses:
            base = ranges.symbol(address.base, copy, first)
            low_x, high_x = (first, last) if slope >= 0 else (last, first)
            lo = builder.add(base, ranges.polynomial(address.offset, copy, low_x))
            hi = builder.add(base, ranges.polynomial(address.offset, copy, high_x))
            spans[-1].append((is_store, lo, builder.add(hi, ir.Constant(I64, size))))
    ok = ir.Constant(ir.IntType(1), 1)
    for a in range(factor):
        for b in range(factor):
            if a == b:
                continue
            for is_store, lo, hi in spans[a]:
                if not is_store:
                    continue
                for _, other_lo, other_hi in spans[b]:
                    apart = builder.or_(
                        builder.icmp_unsigned("<=", hi, other_lo),
                        builder.icmp_unsigned("<=", other_hi, lo),
                    )
                    ok = builder.and_(ok, apart)
    return ok


def jam_loop(function: ir.Function, outer: Loop, factor: int):
    """Unroll `outer` by `factor` and jam its inner loop (see the module docstring)."""
    if is_remainder(outer):
        raise Decline("a remainder loop")
    check_growth(outer, factor)
    inner, pre, post, (pred, v, bound, step, inside) = _shape(outer)
    span = (factor - 1) * abs(step)
    if span >= 1 << v.type.width:
        raise Decline(f"(factor - 1) * step = {span} does not fit in i{v.type.width}")
    header = outer.header
    phis = [i for i in header.instructions if isinstance(i, ins.PhiInstr)]
    rest = [i for i in header.instructions if not isinstance(i, ins.PhiInstr)][:-1]
    steps = {iv.phi: iv for iv in outer.induction_variables}
    new_blocks, new_block = block_maker(function)

    uh = new_block(f"{header.name}.jammed")
    uh_phis, values = {}, {}
    for phi in phis:
        uh_phis[phi] = values[phi] = ir.PhiInstr(uh, phi.type, phi.name + ".j")
        uh.instructions.append(uh_phis[phi])
    for instr in rest:
        values[instr] = clone_instruction(instr, uh, values, {})
    guard = build_guard(
        uh, pred, values.get(v, v), values.get(bound, bound), step, span, header.terminator.metadata
    )
    check = _disjoint_check(outer, inner, uh, uh_phis, dict(values), factor)
    builder = ir.IRBuilder(uh)
    builder.position_at_end(uh)
    guard = builder.and_(guard, check, name="jam.guard")

    # pre(y) .. pre(y+N-1), each copy's values from its own outer IVs
    copies: list[dict] = []
    tail = None
    first = None
    for k in range(factor):
        entry = new_block(f"{header.name}.j{k}")
        first = first or entry
        if tail is not None:
            branch_to(tail, entry)
        if k == 0:
            copy = dict(values)
        else:
            copy = {}
            for phi in phis:
                iv = steps[phi]
                copy[phi] = append_add(
                    entry,
                    uh_phis[phi],
                    ir.Constant(phi.type, k * iv.step),
                    ["nsw"] if iv.nsw else [],
                    f"{phi.name}.j{k}",
                )
            for instr in rest:
                copy[instr] = clone_instruction(instr, entry, copy, {})
        tail = entry
        for block in pre:
            clone = new_block(f"{block.name}.j{k}")
            branch_to(tail, clone)
            for instr in block.instructions[:-1]:
                copy[instr] = clone_instruction(instr, clone, copy, {})
            tail = clone
        copies.append(copy)

    # the jammed inner loop: per copy its header phis and header instructions, then the bodies
    jam = new_block(f"{inner.header.name}.jammed")
    branch_to(tail, jam)
    inner_phis = [i for i in inner.header.instructions if isinstance(i, ins.PhiInstr)]
    inner_rest = [i for i in inner.header.instructions if not isinstance(i, ins.PhiInstr)][:-1]
    # inner IVs starting from an outer-invariant value run in step in every copy: one phi
    shared = {
        iv.phi
        for iv in inner.induction_variables
        if iv.step is not None and outer.is_invariant(iv.init)
    }
    for k, copy in enumerate(copies):
        for phi in inner_phis:
            if k and phi in shared:
                copy[phi] = copies[0][phi]
                continue
            new = ir.PhiInstr(jam, phi.type, f"{phi.name}.j{k}")
            jam.instructions.append(new)
            init = {b: val for val, b in phi.incomings}[inner.preheader]
            new.add_incoming(copy.get(init, init), tail)
            copy[phi] = new
    for copy in copies:
        for instr in inner_rest:
            copy[instr] = clone_instruction(instr, jam, copy, {})
    body = [b for b in inner.blocks if b is not inner.header]
    inner_inside = _inner_entry(inner)
    previous_latch, body_entry = None, None
    for k, copy in enumerate(copies):
        blocks = {b: new_block(f"{b.name}.j{k}") for b in body}
        mapping = {**blocks, inner.header: jam}
        incoming = {**blocks, inner.header: jam}
        cloned = []
        for block in body:
            for instr in block.instructions:
                copy[instr] = clone_instruction(instr, blocks[block], copy, mapping, incoming)
                cloned.append(copy[instr])
        replace_in(cloned, copy)
        if previous_latch is not None:
            branch_to(previous_latch, blocks[inner_inside])
        body_entry = body_entry or blocks[inner_inside]
        previous_latch = blocks[inner.latch]
    for k, copy in enumerate(copies):
        for phi in inner_phis:
            if k and phi in shared:
                continue
            back = {b: val for val, b in phi.incomings}[inner.latch]
            copy[phi].add_incoming(copy.get(back, back), previous_latch)
    # the exit test of copy 0 decides for all copies (the trip count is the same)
    test = copies[0][inner.header.terminator.operands[0]]
    # post(y) .. post(y+N-1)
    post_entry = None
    tail = jam
    for k, copy in enumerate(copies):
        for block in post:
            clone = new_block(f"{block.name}.j{k}")
            if tail is jam:
                post_entry = clone
            else:
                branch_to(tail, clone)
            for instr in block.instructions[:-1]:
                copy[instr] = clone_instruction(instr, clone, copy, {})
            tail = clone
    condition = ins.ConditionalBranch(jam, "br", [test, body_entry, post_entry])
    condition.metadata.update(inner.header.terminator.metadata)
    jam.instructions.append(condition)
    jam.terminator = condition
    branch_to(tail, uh)
    copy_blocks = [b for b in new_blocks if b is not uh]
    last = (copies[-1], tail)
    close_unrolled_loop(
        outer, factor, (uh, uh_phis, guard), first, last, new_blocks, copy_blocks, False
    )
    # one block per straight-line stretch (the jammed body too), without the unused copies
    remove_dead(function, [i for b in new_blocks for i in b.instructions])
    merge_straight_line(function, new_blocks)


@register("unroll-jam", (UnrollFactor,))
def unroll_jam(module: ir.Module, factor: int, *, context: PassContext) -> ir.Module:
    """Unroll-and-jam every loop around exactly one innermost loop by `factor`."""
    factor = int(factor)
    if factor == 1:
        return module

    def transform(function: ir.Function, loop: Loop) -> str:
        jam_loop(function, loop, factor)
        return (
            f"loop unrolled by {factor} and its inner loop jammed (run-time check: the "
            f"copies' stores and accesses are disjoint, else the original nest)"
        )

    def wanted(loop: Loop) -> bool:
        return not loop.innermost

    transform_loops(module, context, wanted, transform, "loop not unrolled-and-jammed")
    return module
