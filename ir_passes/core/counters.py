"""Loops whose counter only counts become `for (i64 k = 0; k < T; k++)`: a time loop counting
down (`for (t = n; t > 0; t--)`), by two (`t += 2`) or in an unsigned (`unsigned t`), whose
counter the body never reads, says only how often the body runs. The polyhedral model and
the pointer-swap unrolling read loops counting up by one under a signed, non-wrapping test;
this gives them the others.

The trip count T is computed once before the loop, exactly as C runs the loop: from the
first value of the counter, the tested bound and the step (`ceil(distance / step)`, 0 when
the first test fails), the distance taken in 64 bits (exact for 32-bit counters; for 64-bit
ones exact as an unsigned number when the first test passes). A `!=` test counts modulo the
counter's width, as an unsigned counter wraps. A counter that could wrap between two tests is
left alone (`t <= n` in an unsigned, a step other than one without the no-wrap flag, unless a
constant bound leaves room for the last step; an `unsigned t` tested as a wider value, `t !=
1UL`): C defines the wrap-around, and the loop may run forever or another number of times.
A 64-bit count above 2^63 - 1 is clamped to it: such a loop runs for centuries either way.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .analyses import invalidate, loops_of
from .loops import INVERSE_PREDICATE, SWAPPED_PREDICATE, Loop
from .rewrite import (
    copy_instruction,
    landing_block,
    remove_dead,
    remove_instruction,
    replace_uses,
    set_terminator,
    users_of,
)
from .symbolic import signed_int

I64 = ir.IntType(64)
#: stay-in-loop tests a counter cannot wrap under, whatever its flags: `t < n` by +1, `t > n`
#: by -1, and `t != n` by ±1 (counted modulo the width)
_CANNOT_WRAP = {("lt", 1), ("gt", -1), ("ne", 1), ("ne", -1)}


def count_up_from_zero(function: ir.Function) -> int:
    """Rewrite every loop of `function` whose counter only counts and does not already count
    up by one under a signed, non-wrapping test; returns how many were rewritten."""
    users = users_of(function)
    rewritten = sum(_rewrite(loop, users) for loop in loops_of(function).loops)
    if rewritten:
        invalidate(function)
    return rewritten


def widen_narrow_counters(function: ir.Function) -> int:
    """Counters of `short` or `char` loops (`for (short t = 0; t < T; t++)`) become counters of
    the width C computes them in; returns how many. C adds one to the promoted `t` and
    truncates; the front end's IR says just that (`trunc (add (sext t), 1)`), which no
    induction variable analysis reads. When the bound is no wider than the counter, `t < T`
    keeps `t + 1` within the counter's type (`t > T` keeps `t - 1`), the truncation never
    changes a value, and the counter is the promoted value counting by one without wrapping
    (`nsw`). Other bounds (`char c < n` with an int n: the counter may wrap) stay as they are."""
    users = users_of(function)
    widened = sum(_widen(loop, users) for loop in loops_of(function).loops)
    if widened:
        invalidate(function)
    return widened


def stay_test(loop: Loop, block: ir.Block, users: dict) -> tuple | None:
    """(compare, stay predicate, tested value, bound) of the loop's exit test at the end of
    `block`: a conditional branch on an integer compare only it uses, read as `tested pred
    bound` with the loop-invariant operand as the bound (true while the loop goes on); else
    None."""
    branch = block.terminator
    if not isinstance(branch, ins.ConditionalBranch):
        return None
    compare, on_true, _ = branch.operands
    if not isinstance(compare, ins.ICMPInstr) or users.get(compare) != [branch]:
        return None
    pred = compare.op if on_true in loop else INVERSE_PREDICATE[compare.op]
    tested, bound = compare.operands
    if loop.is_invariant(tested):
        tested, bound, pred = bound, tested, SWAPPED_PREDICATE[pred]
    return compare, pred, tested, bound


def _widen(loop: Loop, users: dict[ir.Value, list[ir.Instruction]]) -> bool:
    narrow = _narrow_counter(loop, users)
    if narrow is None:
        return False
    phi, update, promoted, step = narrow
    wide, kind = promoted.type, promoted.operands[0].opname  # how C promotes the counter
    init = dict((block, value) for value, block in phi.incomings)[loop.preheader]
    builder = ir.IRBuilder(loop.header.parent.blocks[0])
    if isinstance(init, ins.PhiInstr):  # extended where it is computed (the model wants an
        builder.position_before(init.parent.instructions[_first_non_phi(init.parent)])
    elif isinstance(init, ir.Instruction):  # empty preheader), after the phis of its block
        builder.position_after(init)
    else:
        builder.position_before(builder.block.terminator)
    first = builder.sext(init, wide) if kind == "sext" else builder.zext(init, wide)
    builder.position_at_start(loop.header)
    counter = builder.phi(wide, name=f"{phi.name}.wide")
    builder.position_before(update)
    after = builder.add(
        counter, ir.Constant(wide, step), name=f"{counter.name}.next", flags=["nsw"]
    )
    counter.add_incoming(first, loop.preheader)
    counter.add_incoming(after, loop.latch)
    mapping: dict[ir.Value, ir.Value] = {promoted: after}
    for user in users.get(phi, []):
        if user.opname == kind and user.type == wide:  # the test's, the update's, the body's
            mapping[user] = counter
    replace_uses(loop.header.parent, mapping)
    rest = [u for u in users.get(phi, []) if u not in mapping]
    if rest or [u for u in users.get(update, []) if u is not phi]:
        builder.position_before(loop.header.instructions[_first_non_phi(loop.header)])
        replace_uses(loop.header.parent, {phi: builder.trunc(counter, phi.type)})
        builder.position_before(update)
        replace_uses(loop.header.parent, {update: builder.trunc(after, phi.type)})
    for old in (phi, update, promoted, *mapping):
        if old.parent is not None and old in old.parent.instructions and old is not after:
            remove_instruction(old)
    return True


def _first_non_phi(block: ir.Block) -> int:
    return next(k for k, i in enumerate(block.instructions) if not isinstance(i, ins.PhiInstr))


def _narrow_counter(loop: Loop, users: dict) -> tuple | None:
    """(phi, its truncating update, the promoted sum, the step ±1) of a narrow counter that
    cannot wrap (see `widen_narrow_counters`), or None."""
    if loop.preheader is None or loop.latch is None or loop.exiting != [loop.header]:
        return None
    test = stay_test(loop, loop.header, users)
    if test is None:
        return None
    _, pred, tested, bound = test
    phi = tested.operands[0] if getattr(tested, "opname", None) in ("sext", "zext") else None
    if not (
        isinstance(phi, ins.PhiInstr)
        and phi.parent is loop.header
        and tested.opname in ("sext", "zext")
        and loop.is_invariant(bound)
    ):
        return None
    incoming = {block: value for value, block in phi.incomings}
    update = incoming.get(loop.latch)
    if getattr(update, "opname", None) != "trunc" or set(incoming) != {loop.preheader, loop.latch}:
        return None
    promoted = update.operands[0]
    if getattr(promoted, "opname", None) not in ("add", "sub") or users.get(promoted) != [update]:
        return None
    extended, amount = promoted.operands
    if not (
        getattr(extended, "opname", None) == tested.opname
        and extended.operands[0] is phi
        and extended.type == tested.type
        and isinstance(amount, ir.Constant)
    ):
        return None
    step = signed_int(int(amount.constant), amount.type.width)
    step = -step if promoted.opname == "sub" else step
    kind = pred[1:] if pred[0] in "su" else pred
    if (kind, step) not in (("lt", 1), ("gt", -1)) or (pred[0] == "u" and tested.opname == "sext"):
        return None
    return (phi, update, promoted, step) if _fits(bound, tested.opname, phi.type.width) else None


def _fits(bound: ir.Value, kind: str, width: int) -> bool:
    """Is the bound a value of the counter's type, as the counter is extended (so the counter
    stays within its type on its way to it)?"""
    if isinstance(bound, ir.Constant):
        value = signed_int(int(bound.constant), bound.type.width)
        low, high = (
            (-(1 << width - 1), (1 << width - 1) - 1) if kind == "sext" else (0, (1 << width) - 1)
        )
        return low <= value <= high
    return (
        getattr(bound, "opname", None) == kind
        and isinstance(bound.operands[0].type, ir.IntType)
        and bound.operands[0].type.width <= width
    )


def _rewrite(loop: Loop, users: dict[ir.Value, list[ir.Instruction]]) -> bool:
    test = _counter_test(loop, users)
    if test is None:
        return False
    compare, counter, pred, bound, inside = test
    iv, step = loop.trip_count_iv, loop.trip_count.step
    builder = ir.IRBuilder(loop.preheader)
    builder.position_before(loop.preheader.terminator)
    first = iv.init if counter is iv.phi else _cast_like(builder, counter, iv.init)
    trips = _trip_count(builder, pred, first, computed_before(builder, bound, loop), step)
    header, latch = loop.header, loop.latch
    builder.position_at_start(header)
    k = builder.phi(I64, name=f"{iv.phi.name}.count")
    builder.position_before(latch.terminator)
    k.add_incoming(ir.Constant(I64, 0), loop.preheader)
    k.add_incoming(builder.add(k, ir.Constant(I64, 1), name=f"{k.name}.next", flags=["nsw"]), latch)
    builder.position_before(header.terminator)
    stay = builder.icmp_signed("<", k, trips, name=f"{k.name}.stay")
    outside = next(b for b in header.terminator.operands[1:] if b is not inside)
    set_terminator(header, ins.ConditionalBranch(header, "br", [stay, inside, outside]))
    for old in (compare, counter, iv.update, iv.phi):
        if old.parent is not None and old in old.parent.instructions:
            remove_instruction(old)
    remove_dead(header.parent, [b for b in (bound,) if isinstance(b, ir.Instruction)])
    if loop.parent is None:  # the trip count is computed before an empty preheader
        landing_block(loop.preheader, header)
    return True


def _counter_test(loop: Loop, users: dict) -> tuple | None:
    """(compare, tested counter, stay predicate, bound, in-loop successor) when `loop` is
    top-tested, its counter is read only by its update and its exit test, and the test is
    one this module rewrites; else None."""
    tc, iv = loop.trip_count, loop.trip_count_iv
    if tc is None or iv is None or loop.preheader is None or loop.latch is None:
        return None
    if loop.exiting != [loop.header] or loop.exit is None or tc.minimum != 0:
        return None
    if tc.step == 1 and tc.predicate in ("slt", "sle", "ne") and tc.no_wrap:
        return None  # counts up already
    test = stay_test(loop, loop.header, users)
    if test is None:
        return None
    compare, pred, counter, bound = test
    if counter is not iv.phi and not (
        getattr(counter, "opname", None) in ("sext", "zext")
        and counter.operands[0] is iv.phi
        and users.get(counter) == [compare]
    ):
        return None
    if counter is not iv.phi and not (iv.nuw if counter.opname == "zext" else iv.nsw):
        return None  # it wraps in its own width, not in the width it is tested in
    if set(users.get(iv.phi, [])) - {iv.update, counter, compare}:
        return None  # the body reads the counter
    if users.get(iv.update) != [iv.phi] or not loop.is_invariant(bound):
        return None
    kind = pred[1:] if pred[0] in "su" else pred
    if counter is iv.phi and not tc.no_wrap and _may_wrap(pred, tc.step, bound):
        return None
    direction = {"lt": 1, "le": 1, "gt": -1, "ge": -1}.get(kind, tc.step)
    if (kind == "ne" and abs(tc.step) != 1) or direction * tc.step <= 0:
        return None
    _, on_true, on_false = loop.header.terminator.operands
    return compare, counter, pred, bound, on_true if on_true in loop else on_false


def _may_wrap(pred: str, step: int, bound: ir.Value) -> bool:
    """May a counter stepping by `step` under the stay test `c pred bound` wrap between two
    tests? Not by ±1 towards a `<`/`>`/`!=` bound, nor when a constant bound leaves room for
    the last step (`unsigned t >= 1; t--`, `t <= 100; t += 2`)."""
    kind = pred[1:] if pred[0] in "su" else pred
    if (kind, step) in _CANNOT_WRAP:
        return False
    if kind == "ne" or not isinstance(bound, ir.Constant):
        return True
    width = bound.type.width
    if pred[0] == "s":
        low, high = -(1 << width - 1), (1 << width - 1) - 1
        value = signed_int(int(bound.constant), width)
    else:
        low, high, value = 0, (1 << width) - 1, int(bound.constant) % (1 << width)
    extreme = {"lt": value - 1, "le": value, "gt": value + 1, "ge": value}[kind]
    return not low <= extreme + step <= high  # the counter's value after its last step


def _cast_like(builder: ir.IRBuilder, cast: ins.CastInstr, value: ir.Value) -> ir.Value:
    """`value` extended as the tested `cast` extends the counter."""
    extend = builder.sext if cast.opname == "sext" else builder.zext
    return extend(value, cast.type)


def computed_before(builder: ir.IRBuilder, value: ir.Value, loop: Loop) -> ir.Value:
    """`value` (invariant; the front end computes `n - 1` of a test in the header or, for a
    do-while loop, the latch) computed at the builder's place before the loop."""
    if not isinstance(value, ir.Instruction) or value.parent not in loop:
        return value
    copy = copy_instruction(value, builder.block)
    mapping = {op: computed_before(builder, op, loop) for op in value.operands}
    copy.operands = [mapping[op] for op in value.operands]
    block = builder.block
    block.instructions.insert(block.instructions.index(block.terminator), copy)
    builder.position_before(block.terminator)
    return copy


def _trip_count(builder: ir.IRBuilder, pred: str, first: ir.Value, bound: ir.Value, step: int):
    """How often the body of `for (c = first; c pred bound; c += step)` runs, as an i64."""
    kind = pred[1:] if pred[0] in "su" else pred
    width = first.type.width
    if kind == "ne":  # modulo the counter's width
        distance = builder.sub(bound, first) if step > 0 else builder.sub(first, bound)
        count = distance if width == 64 else builder.zext(distance, I64)
        return _clamped(builder, count)
    stay = builder.icmp_signed if pred[0] == "s" else builder.icmp_unsigned
    symbol = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}[kind]
    runs = stay(symbol, first, bound, name="trips.any")
    if width < 64:
        extend = builder.sext if pred[0] == "s" else builder.zext
        first, bound = extend(first, I64), extend(bound, I64)
    distance = builder.sub(bound, first) if step > 0 else builder.sub(first, bound)
    size = ir.Constant(I64, abs(step))
    whole = builder.udiv(distance, size)
    if kind in ("le", "ge"):  # the bound itself is a value of the loop
        extra = ir.Constant(I64, 1)
    else:
        rest = builder.urem(distance, size)
        extra = builder.zext(builder.icmp_unsigned("!=", rest, ir.Constant(I64, 0)), I64)
    count = _clamped(builder, builder.add(whole, extra))
    return builder.select(runs, count, ir.Constant(I64, 0), name="trips")


def _clamped(builder: ir.IRBuilder, count: ir.Value) -> ir.Value:
    """An unsigned 64-bit count as a non-negative i64 (counts above 2^63 - 1 saturate)."""
    over = builder.icmp_signed("<", count, ir.Constant(I64, 0))
    return builder.select(over, ir.Constant(I64, (1 << 63) - 1), count)
