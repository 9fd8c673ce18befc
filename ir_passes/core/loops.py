"""Natural loops, their nesting, canonical induction variables and symbolic trip counts.

Everything is computed from the IR alone (a llvmlite.ir function, whatever produced it): the
front end's top-tested loops (preheader -> header with the exit test -> body -> latch -> header)
as well as clang-style rotated loops (the exit test in the latch, `do`-while form).

- A **natural loop** is the set of blocks of one or more back edges `t -> h` (`h` dominates `t`)
  sharing the header `h`: `h` plus every block that reaches a `t` without passing through `h`.
- **Nesting**: a loop's parent is the smallest other loop containing its header; `depth` is 1
  for outermost loops; `innermost` loops have no children.
- `preheader`, `latch` and `exit` are set only when unique (LLVM's definitions: the preheader is
  the only predecessor of the header outside the loop and has the header as its only successor;
  the latch is the only block of the loop branching to the header; the exit is the only block
  outside the loop that a loop block branches to). Otherwise they are None.
- An **induction variable** is a header phi of type i32 or i64 whose value from the preheader is
  `init` and whose value along the latch edge is `add phi, step`, `add step, phi` or
  `sub phi, step` with `step` loop-invariant; the `nsw`/`nuw` flags of that instruction are noted.
- A **trip count** (`TripCount`) is the number of times the loop body runs per entry into the
  loop; see its docstring for the exact formula and assumptions. When it cannot be computed,
  `Loop.trip_count` is None and `Loop.trip_count_reason` says why.

`LoopInfo(cfg, dominators)` (`.loops` outer before inner in block order, `.top_level`,
`.innermost()`, `.loop_for(block)`); the cached one of a function is `analyses.loops_of`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from llvmlite import ir
from llvmlite.ir import instructions as ins

from .cfg import CFG
from .dominance import DominatorTree
from .symbolic import Expr, integer_expr, signed_int


def _is_trunc(value: ir.Value) -> bool:
    return getattr(value, "opname", None) == "trunc"


def invariant_expr(value: ir.Value, signed: bool = True) -> Expr:
    """A loop-invariant `value` as an Expr: constants, and add/sub/mul/shl-by-constant and
    sext/zext of instructions are looked through (a `trunc` stays an atom: it changes the
    value); anything else is an atom. Constants are read as signed (or unsigned with
    `signed=False`, or below a `zext`) integers of their width."""
    return integer_expr(value, _is_trunc, signed)


# --------------------------------------------------------------------------------------------
# Induction variables and trip counts


@dataclass(eq=False)
class InductionVariable:
    """`phi = [init, preheader], [update, latch]` with `update = phi + step` (or `phi - step`)."""

    phi: ins.PhiInstr
    init: ir.Value
    update: ins.Instruction
    #: the step as an IR value (for `sub` this is the subtrahend; `step_sign` is then -1)
    step_value: ir.Value
    step_sign: int
    nsw: bool
    nuw: bool

    @property
    def type(self) -> ir.IntType:
        return self.phi.type

    @property
    def step(self) -> int | None:
        """The signed constant step, or None when the step is a loop-invariant non-constant."""
        step = invariant_expr(self.step_value)  # `sext i32 2 to i64`: the front end's `t += 2`
        if step.is_constant:
            return self.step_sign * signed_int(step.value, self.type.width)
        return None

    @property
    def is_canonical(self) -> bool:
        """LLVM's canonical IV: starts at 0 and steps by 1."""
        init = self.init
        return self.step == 1 and isinstance(init, ir.Constant) and int(init.constant) == 0

    def __str__(self) -> str:
        flags = " ".join(f for f, on in (("nsw", self.nsw), ("nuw", self.nuw)) if on)
        step = (
            self.step if self.step is not None else f"{self.step_sign:+d}*%{self.step_value.name}"
        )
        return f"%{self.phi.name} = {{{_value_str(self.init)}, +, {step}}} {self.type} {flags}"


def _value_str(v: ir.Value) -> str:
    if isinstance(v, ir.Constant):
        return str(v.constant)
    return f"%{v.name}"


@dataclass(eq=False)
class TripCount:
    """The number of times the loop body runs per entry into the loop:

        T = max(minimum, ceil((bound - init) / step))

    on exact (unbounded) integers, with `init` the IV's value on entry, `step` its non-zero
    constant step (positive for `<`/`<=`, negative for `>`/`>=` tests), `bound` an exclusive
    bound derived from the exit test and `minimum` 0 for a loop whose test runs before the body
    (the header is the exiting block) and 1 for a rotated loop whose test runs after it (the latch
    is the exiting block: the body always runs once). `ceil` rounds towards +infinity.

    `bound` is built from the tested bound B of the stay-in-loop condition `v pred B`, where
    `v = phi + offset` (`offset` is 0 for the phi, `step` for the latch update, or an added
    constant): `B` for `<`, `>` and `!=`, `B + 1` for `<=`, `B - 1` for `>=`; minus `offset`;
    plus `step` when the test is in the latch.

    The formula is exact under these assumptions, which are the loop's own unless it overflows:
    the IV does not wrap in the tested width (guaranteed when the update has `nsw`, resp. `nuw`
    for unsigned tests, since wrapping would be poison), values are read as signed for signed
    and as unsigned for unsigned predicates, and for `!=` (accepted only for steps +1 and -1) the
    IV starts on the correct side of the bound (otherwise the C loop overflows and T is wrong).
    """

    init: Expr
    bound: Expr
    step: int
    minimum: int
    predicate: str  # the normalized stay-in-loop predicate, IV on the left
    no_wrap: bool  # the update carries the flag that rules out wrapping for this predicate

    def evaluate(self, env: Mapping | None = None) -> int:
        env = env or {}
        distance = self.bound.evaluate(env) - self.init.evaluate(env)
        return max(self.minimum, -((-distance) // self.step))

    @property
    def constant(self) -> int | None:
        """The trip count if it does not depend on any value, else None."""
        try:
            return self.evaluate({})
        except KeyError:
            return None

    def __str__(self) -> str:
        return f"max({self.minimum}, ceil(({self.bound - self.init}) / {self.step}))"


_PURE = frozenset({"add", "sub", "mul", "shl", "sext", "zext", "trunc"})

#: the predicate of the negated comparison
INVERSE_PREDICATE = {
    "eq": "ne", "ne": "eq", "slt": "sge", "sge": "slt", "sle": "sgt", "sgt": "sle",
    "ult": "uge", "uge": "ult", "ule": "ugt", "ugt": "ule",
}  # fmt: skip
#: the predicate with its operands exchanged
SWAPPED_PREDICATE = {
    "eq": "eq", "ne": "ne", "slt": "sgt", "sgt": "slt", "sle": "sge", "sge": "sle",
    "ult": "ugt", "ugt": "ult", "ule": "uge", "uge": "ule",
}  # fmt: skip


# --------------------------------------------------------------------------------------------
# Loops


@dataclass(eq=False)
class Loop:
    """One natural loop. Blocks are kept in function order."""

    header: ir.Block
    blocks: list[ir.Block]
    #: blocks of the loop that branch to the header
    latches: list[ir.Block]
    parent: Loop | None = None
    children: list[Loop] = field(default_factory=list)
    preheader: ir.Block | None = None
    #: blocks of the loop with a successor outside it
    exiting: list[ir.Block] = field(default_factory=list)
    #: blocks outside the loop that loop blocks branch to
    exits: list[ir.Block] = field(default_factory=list)
    induction_variables: list[InductionVariable] = field(default_factory=list)
    trip_count: TripCount | None = None
    trip_count_reason: str | None = None
    #: the IV the exit test compares, when the trip count was found
    trip_count_iv: InductionVariable | None = None

    def __post_init__(self) -> None:
        self._block_set = set(self.blocks)

    def __contains__(self, block: ir.Block) -> bool:
        return block in self._block_set

    def __repr__(self) -> str:
        return f"<Loop header={self.header.name} depth={self.depth} blocks={len(self.blocks)}>"

    @property
    def latch(self) -> ir.Block | None:
        return self.latches[0] if len(self.latches) == 1 else None

    @property
    def exit(self) -> ir.Block | None:
        return self.exits[0] if len(self.exits) == 1 else None

    @property
    def depth(self) -> int:
        depth, loop = 1, self.parent
        while loop is not None:
            depth, loop = depth + 1, loop.parent
        return depth

    @property
    def innermost(self) -> bool:
        return not self.children

    def is_invariant(self, value: ir.Value) -> bool:
        """Constants, arguments, globals, instructions defined outside the loop, and pure
        arithmetic inside it (`add`, `sub`, `mul`, `shl`, `sext`, `zext`, `trunc`) of invariant
        operands (the front end evaluates a `for` condition such as `i < (short)n - 1` in the
        header)."""
        if isinstance(value, ins.Instruction):
            if value.parent not in self._block_set:
                return True
            if value.opname == "shl" and not isinstance(value.operands[1], ir.Constant):
                return False
            if value.opname in _PURE and not isinstance(value, ins.PhiInstr):
                return all(self.is_invariant(op) for op in value.operands)
            return False
        return isinstance(value, (ir.Constant, ir.Argument, ir.GlobalValue))

    def induction_variable(self, phi_name: str) -> InductionVariable | None:
        for iv in self.induction_variables:
            if iv.phi.name == phi_name:
                return iv
        return None

    def descendants(self) -> list[Loop]:
        """This loop and all loops nested in it, outer before inner."""
        out = [self]
        for child in self.children:
            out.extend(child.descendants())
        return out


class LoopInfo:
    """All natural loops of a function, with their nesting."""

    def __init__(self, cfg: CFG, dom: DominatorTree):
        self.cfg = cfg
        order = {b: i for i, b in enumerate(cfg.blocks)}
        latches: dict[ir.Block, list[ir.Block]] = {}
        for block in cfg.blocks:
            if block not in dom:
                continue  # unreachable
            for succ in cfg.succs[block]:
                if dom.dominates(succ, block):
                    latches.setdefault(succ, []).append(block)
        loops = []
        for header, tails in latches.items():
            body = {header}
            work = [t for t in tails if t is not header]
            while work:
                block = work.pop()
                if block in body or block not in dom:
                    continue
                body.add(block)
                work.extend(cfg.preds[block])
            loop = Loop(header, sorted(body, key=order.__getitem__), sorted(tails, key=order.get))
            self._shape(loop)
            loops.append(loop)
        # nesting: the parent is the smallest other loop that contains the header
        for loop in loops:
            enclosing = [o for o in loops if o is not loop and loop.header in o]
            if enclosing:
                loop.parent = min(enclosing, key=lambda o: len(o.blocks))
                loop.parent.children.append(loop)
        for loop in loops:
            loop.children.sort(key=lambda o: order[o.header])
        #: outermost loops, in function order
        self.top_level: list[Loop] = sorted(
            (lp for lp in loops if lp.parent is None), key=lambda o: order[o.header]
        )
        #: every loop, outer loops before the loops they contain, in function order
        self.loops: list[Loop] = [d for lp in self.top_level for d in lp.descendants()]
        for loop in self.loops:
            loop.induction_variables = _induction_variables(loop)
            _trip_count(loop)

    def _shape(self, loop: Loop) -> None:
        cfg = self.cfg
        outside_preds = [p for p in cfg.preds[loop.header] if p not in loop]
        if len(outside_preds) == 1 and cfg.succs[outside_preds[0]] == [loop.header]:
            loop.preheader = outside_preds[0]
        exits: dict[ir.Block, None] = {}
        for block in loop.blocks:
            outside = [s for s in cfg.succs[block] if s not in loop]
            if outside:
                loop.exiting.append(block)
                exits.update(dict.fromkeys(outside))
        loop.exits = list(exits)

    def loop_for(self, block: ir.Block) -> Loop | None:
        """The innermost loop containing `block`."""
        best = None
        for loop in self.loops:
            if block in loop and (best is None or len(loop.blocks) < len(best.blocks)):
                best = loop
        return best

    def innermost(self) -> list[Loop]:
        return [lp for lp in self.loops if lp.innermost]

    def by_header(self, name: str) -> Loop:
        for loop in self.loops:
            if loop.header.name == name:
                return loop
        raise KeyError(name)

    def __iter__(self):
        return iter(self.loops)

    def __len__(self) -> int:
        return len(self.loops)


def _induction_variables(loop: Loop) -> list[InductionVariable]:
    if loop.preheader is None or loop.latch is None:
        return []
    out = []
    for phi in loop.header.instructions:
        if not isinstance(phi, ins.PhiInstr):
            break
        if not (isinstance(phi.type, ir.IntType) and phi.type.width in (32, 64)):
            continue
        incoming = dict((blk, val) for val, blk in phi.incomings)
        if set(incoming) != {loop.preheader, loop.latch}:
            continue
        init, update = incoming[loop.preheader], incoming[loop.latch]
        if not isinstance(update, ins.Instruction) or update.opname not in ("add", "sub"):
            continue
        a, b = update.operands
        if a is phi and loop.is_invariant(b):
            step, sign = b, 1 if update.opname == "add" else -1
        elif b is phi and update.opname == "add" and loop.is_invariant(a):
            step, sign = a, 1
        else:
            continue
        flags = getattr(update, "flags", [])
        out.append(InductionVariable(phi, init, update, step, sign, "nsw" in flags, "nuw" in flags))
    return out


def _iv_offset(value: ir.Value, loop: Loop) -> tuple[InductionVariable, int, bool] | None:
    """(iv, offset, is_update) when `value` is `phi + offset` (through sext/zext)."""
    while isinstance(value, ins.CastInstr) and value.opname in ("sext", "zext"):
        value = value.operands[0]
    for iv in loop.induction_variables:
        if value is iv.phi:
            return iv, 0, False
        if value is iv.update and iv.step is not None:
            return iv, iv.step, True
    if isinstance(value, ins.Instruction) and value.opname in ("add", "sub"):
        a, b = value.operands
        if isinstance(b, ir.Constant):
            for iv in loop.induction_variables:
                if a is iv.phi:
                    c = signed_int(int(b.constant), b.type.width)
                    return iv, c if value.opname == "add" else -c, False
    return None


def _fail(loop: Loop, reason: str) -> None:
    loop.trip_count, loop.trip_count_reason = None, reason


def _trip_count(loop: Loop) -> None:
    if loop.preheader is None:
        return _fail(loop, "no unique preheader")
    if loop.latch is None:
        return _fail(loop, f"{len(loop.latches)} latches")
    if len(loop.exiting) != 1:
        names = ", ".join(b.name for b in loop.exiting) or "none"
        return _fail(loop, f"{len(loop.exiting)} exiting blocks ({names}): early exit or no exit")
    exiting = loop.exiting[0]
    if exiting is not loop.latch and exiting is not loop.header:
        return _fail(loop, f"the exit test in {exiting.name} is neither in the header nor latch")
    term = exiting.terminator
    if not isinstance(term, ins.ConditionalBranch):
        return _fail(loop, f"{exiting.name} does not end in a conditional branch")
    cond, on_true, _ = term.operands
    if not isinstance(cond, ins.ICMPInstr):
        return _fail(loop, "the exit condition is not an icmp")
    pred = cond.op if on_true in loop else INVERSE_PREDICATE[cond.op]  # the stay-in-loop predicate
    left, right = cond.operands
    found_left, found_right = _iv_offset(left, loop), _iv_offset(right, loop)
    if found_left and loop.is_invariant(right):
        (iv, offset, _), bound_value = found_left, right
    elif found_right and loop.is_invariant(left):
        (iv, offset, _), bound_value = found_right, left
        pred = SWAPPED_PREDICATE[pred]
    else:
        return _fail(loop, "the exit test does not compare an induction variable with an invariant")
    step = iv.step
    if step is None:
        return _fail(loop, f"the step of %{iv.phi.name} is not a constant")
    if step == 0:
        return _fail(loop, "the step is zero")
    signed = pred[0] != "u"
    bound = invariant_expr(bound_value, signed=signed)
    init = invariant_expr(iv.init, signed=signed)
    kind = pred[1:] if pred[0] in "su" else pred
    if kind == "eq":
        return _fail(loop, "the loop continues while the IV equals the bound")
    if kind == "ne":
        if abs(step) != 1:
            return _fail(loop, f"!= test with step {step}: the count depends on divisibility")
    elif (kind in ("lt", "le")) != (step > 0):
        return _fail(loop, f"the test {pred} runs against the step {step}: zero or unbounded")
    adjust = {"lt": 0, "gt": 0, "ne": 0, "le": 1, "ge": -1}[kind]
    latch_tested = exiting is loop.latch
    bound = bound + (adjust - offset + (step if latch_tested else 0))
    no_wrap = iv.nuw if pred[0] == "u" else iv.nsw
    loop.trip_count = TripCount(init, bound, step, 1 if latch_tested else 0, pred, no_wrap)
    loop.trip_count_iv = iv
    loop.trip_count_reason = None
