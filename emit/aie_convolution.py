"""Convolution nests as the AI Engine back end sees them: Vyasa's triplet form (step 1).

After `unroll-reductions` a filter, a CONV2D or a stencil written in C is a nest of output
loops whose innermost body stores, at each point, a sum of products `weight * data` (plus,
for `+=`, the old output). Each product is one triplet (output, weight, data): the weight is
the operand the innermost loop does not move (a scalar the shuffle network broadcasts), the
data moves one element per iteration (the lanes of the vector loop). Addresses come from the
IR (`ir_passes.core.affine`): a base argument plus a byte offset affine in the loop counters.

Recognized: one store per function, of int16, int32 or float, in a loop nest whose loops have
constant trip counts and step 1; every operand of the stored type (C's int arithmetic on int16
included). Anything else is refused with the construct named. Which loop the lanes run along
is the schedule's choice (`aie_schedule`): `reordered` puts it innermost, `vectorized` then
takes in each product the operand it moves as the data (at unit stride: `aie_layout` makes it
so) and the other as the weight.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from llvmlite import ir

from ..ir_passes.core.affine import address_of
from ..ir_passes.core.analyses import loops_of
from ..ir_passes.core.loops import Loop
from ..ir_passes.core.symbolic import Expr

#: the element types of the AIE datapaths: int16 (16 x 2), int32 (8 x 1), float (8 lanes)
ELEMENTS = {"i16": "int16", "i32": "int32", "float": "float"}
ELEMENT_BYTES = {"int16": 2, "int32": 4, "float": 4}


class NotAConvolution(Exception):
    """Why a function is not a convolution the AIE back end writes."""


@dataclass(frozen=True)
class Stream:
    """An array operand: argument `base` at byte `offset` + sum(stride * counter) (the
    strides of the output loops, outermost first; the innermost one is the element size for
    data and output)."""

    base: str
    offset: int
    strides: tuple[int, ...]


@dataclass(frozen=True)
class Tap:
    """One triplet's operands: the weight (a lane-invariant element, or a constant) and the
    data it multiplies."""

    weight: Stream | float | int
    data: Stream


@dataclass(frozen=True)
class OutputLoop:
    """An output loop: its trip count, first value (step 1) and counter's name."""

    trips: int
    start: int
    name: str = ""


@dataclass
class Convolution:
    function: str
    element: str  # int16, int32 or float
    loops: list[OutputLoop]  # outermost first; the last is vectorized
    output: Stream
    taps: list[Tap]  # in the source's order of summation (after the old output, if added)
    accumulates: bool  # the old output is added (`+=`)
    arguments: list[str]  # the function's parameters, in order
    starts_with_zero: bool = True  # the sum starts from 0, not from its first product
    #: the source's index of each loop (`reordered`)
    order: tuple[int, ...] = ()
    #: arrays the kernel reads or writes in another order of their dimensions than C's
    #: (`aie_layout.Layout`, packed and unpacked on the host)
    layouts: tuple = ()

    def __post_init__(self) -> None:
        self.order = self.order or tuple(range(len(self.loops)))


def convolution(function: ir.Function) -> Convolution:
    """The triplet form of `function` (after `unroll-reductions`), or NotAConvolution; its
    taps' roles are those of the source's innermost loop until `vectorized` says which loop
    the lanes run along."""
    stores = [i for b in function.blocks for i in b.instructions if i.opname == "store"]
    if len(stores) != 1:
        raise NotAConvolution(f"{len(stores)} stores (a convolution stores one output)")
    store = stores[0]
    nest = _nest(function, store.parent)
    value, pointer = store.operands
    element = _element(value.type)
    counters = [loop.trip_count_iv.phi for loop in nest]
    output = _stream(pointer, counters)
    builder = _Terms(element, counters, output)
    builder.walk(value)
    for tap in builder.taps:
        for stream in (tap.data, tap.weight):
            if isinstance(stream, Stream) and stream.base == output.base:
                raise NotAConvolution(
                    f"'{output.base}' is read as well as written (beyond `acc = out[...]`): "
                    "the kernel's arrays must not overlap"
                )
    if not builder.taps:
        raise NotAConvolution("the stored value has no product of a weight and data")
    loops = [
        OutputLoop(loop.trip_count.constant, loop.trip_count.init.value, counter.name)
        for loop, counter in zip(nest, counters)
    ]
    return Convolution(
        function.name,
        element,
        loops,
        output,
        builder.taps,
        builder.accumulates,
        [a.name for a in function.args],
        builder.starts_with_zero,
    )


def reordered(conv: Convolution, order: tuple[int, ...]) -> Convolution:
    """`conv` with its output loops in `order` (indices of `conv.loops`, outermost first):
    every output is a sum of its own, so any order computes the same."""

    def moved(stream: Stream) -> Stream:
        return replace(stream, strides=tuple(stream.strides[i] for i in order))

    def tap(t: Tap) -> Tap:
        weight = moved(t.weight) if isinstance(t.weight, Stream) else t.weight
        return Tap(weight, moved(t.data))

    return replace(
        conv,
        loops=[conv.loops[i] for i in order],
        output=moved(conv.output),
        taps=[tap(t) for t in conv.taps],
        order=tuple(conv.order[i] for i in order),
    )


def vectorized(conv: Convolution) -> Convolution:
    """`conv` with the lanes along its innermost loop: in each tap the operand that moves
    with it is the data, the other the weight; NotAConvolution where that loop does not move
    the output and every data at unit stride."""
    width = ELEMENT_BYTES[conv.element]
    if not conv.output.strides[-1]:
        raise NotAConvolution(
            "the output is written at the same element by every iteration of the innermost "
            "loop (a sum kept in memory, `out[y][x] += ...` in the tap loop: sum into a local "
            "variable instead)"
        )
    if conv.output.strides[-1] != width:
        raise NotAConvolution("the output is not written at unit stride in the innermost loop")
    taps = []
    for tap in conv.taps:
        operands = [o for o in (tap.weight, tap.data) if isinstance(o, Stream)]
        moving = [o for o in operands if o.strides[-1]]
        if len(moving) != 1:
            raise NotAConvolution(
                "a product whose operands both move with the innermost loop, or neither"
            )
        data = moving[0]
        weight = tap.data if tap.weight is data else tap.weight
        if data.strides[-1] != width:
            raise NotAConvolution(f"'{data.base}' is not read at unit stride in the innermost loop")
        taps.append(Tap(weight, data))
    return replace(conv, taps=taps)


def _nest(function: ir.Function, block: ir.Block) -> list[Loop]:
    """The loops around `block`, outermost first, each with a constant trip count and step 1."""
    info = loops_of(function)
    inner = next((lp for lp in info.loops if block in lp and lp.innermost), None)
    if inner is None:
        raise NotAConvolution("the store is not in a loop")
    nest, loop = [], inner
    while loop is not None:
        nest.insert(0, loop)
        loop = loop.parent
    if len(info.loops) != len(nest):
        raise NotAConvolution("loops outside the output nest remain (a reduction not unrolled?)")
    for loop in nest:
        trips = loop.trip_count
        if trips is None or trips.constant is None or not trips.init.is_constant:
            raise NotAConvolution(
                "a loop without a constant trip count (the AIE kernel's windows have fixed sizes)"
            )
        if trips.step != 1:
            raise NotAConvolution(f"a loop steps by {trips.step}")
    return nest


def _element(t: ir.Type) -> str:
    name = "float" if isinstance(t, ir.FloatType) else str(t)
    if name not in ELEMENTS:
        raise NotAConvolution(f"the output's type {t} has no AIE datapath (int16, int32, float)")
    return ELEMENTS[name]


def _stream(pointer: ir.Value, counters: list[ir.Value]) -> Stream:
    """The operand at `pointer` as a base argument, a constant offset and its strides."""
    address = address_of(pointer)
    if not isinstance(address.base, ir.Argument):
        raise NotAConvolution(f"'{address.base.name}' is not a parameter array")
    offset: Expr = address.offset
    strides = []
    for counter in counters:
        stride = offset.coefficient(counter)
        if not stride.is_constant:
            raise NotAConvolution(
                f"'{address.base.name}' has rows of a run-time length (fixed sizes are needed)"
            )
        strides.append(stride.value)
        offset = offset - Expr.symbol(counter).scaled(stride.value)
    if not offset.is_constant:
        raise NotAConvolution(f"'{address.base.name}' is not at an affine address")
    return Stream(address.base.name, offset.value, tuple(strides))


class _Terms:
    """The stored value as a sum of products (`walk`): `taps`, and whether the old output is
    one of the summands (`accumulates`)."""

    def __init__(self, element: str, counters: list[ir.Value], output: Stream):
        self.element, self.counters, self.output = element, counters, output
        self.taps: list[Tap] = []
        self.accumulates = False
        #: the sum starts from 0 (`float sum = 0`), not from its first product: float
        #: -0.0 + -0.0 is -0.0, 0.0 + -0.0 is 0.0
        self.starts_with_zero = False

    def walk(self, value: ir.Value) -> None:
        """The summands of `value`, left to right (iteratively: a sum of a thousand taps is
        a chain a thousand adds deep)."""
        pending = [value]
        while pending:
            value = _uncast(pending.pop(), self.element)
            op = getattr(value, "opname", None)
            if op in ("add", "fadd"):
                left, right = value.operands
                if op == "fadd" and getattr(_uncast(right, self.element), "opname", None) == "fadd":
                    raise NotAConvolution(
                        "a float sum that is not summed term after term (the kernel keeps C's "
                        "order of summation)"
                    )
                pending += [right, left]
            elif op in ("mul", "fmul"):
                self.taps.append(self._tap(*(_uncast(v, self.element) for v in value.operands)))
            elif op == "load":
                self._summand(self._load(value))
            elif _zero(value):
                self.starts_with_zero = self.starts_with_zero or not self.taps
            elif isinstance(value, ir.CastInstr):
                raise NotAConvolution(
                    f"the sum converts {value.operands[0].type} to {value.type} ('{op}'): "
                    f"not C's {self.element} arithmetic"
                )
            else:
                what = op or _constant_text(value)
                raise NotAConvolution(f"the stored value computes '{what}', not a sum of products")

    def _summand(self, stream: Stream) -> None:
        """A load added without a weight: the old output (`acc = out[y][x]; acc += ...`), or
        data with weight 1."""
        if stream != self.output:
            self.taps.append(Tap(1.0 if self.element == "float" else 1, stream))
        elif self.accumulates:
            raise NotAConvolution("the old output is added twice")
        elif self.taps and self.element == "float":
            raise NotAConvolution("the old output is added after other terms (C's float order)")
        else:
            self.accumulates = True

    def _tap(self, left: ir.Value, right: ir.Value) -> Tap:
        """A product; the data is the operand the innermost loop moves where one does."""
        weight, data = self._operand(left), self._operand(right)
        if not isinstance(data, Stream) or isinstance(weight, Stream) and any(weight.strides[-1:]):
            weight, data = data, weight
        if not isinstance(data, Stream):
            raise NotAConvolution("a product of two constants")
        return Tap(weight, data)

    def _operand(self, value: ir.Value) -> Stream | float | int:
        constant = _constant(value)
        if constant is not None:
            return constant
        if getattr(value, "opname", None) == "load":
            return self._load(value)
        what = getattr(value, "opname", None) or "a scalar parameter"
        raise NotAConvolution(f"a product of '{what}', not of array elements and constants")

    def _load(self, load: ir.Instruction) -> Stream:
        if _element(load.type) != self.element:
            raise NotAConvolution(f"operands of type {load.type} with an output of {self.element}")
        return _stream(load.operands[0], self.counters)


def _uncast(value: ir.Value, element: str) -> ir.Value:
    """`value` without the conversions C's int arithmetic on int16 adds: an int16 widened to
    int (sext) or an int narrowed to int16 (trunc); never a narrowing to 8 bits, which
    changes values."""
    while element == "int16":
        op = getattr(value, "opname", None)
        inner = value.operands[0] if op in ("sext", "trunc") else None
        if op == "sext" and str(inner.type) == "i16" or op == "trunc" and str(value.type) == "i16":
            value = inner
        else:
            return value
    return value


def _constant(value: ir.Value) -> float | int | None:
    """A constant operand, also negated (`-2` and `-0.5f` are `sub 0, 2` and `fneg 0.5`)."""
    if isinstance(value, ir.Constant):
        return value.constant
    op = getattr(value, "opname", None)
    if op == "sub" and _zero(value.operands[0]) and isinstance(value.operands[1], ir.Constant):
        return -value.operands[1].constant
    if op == "fneg" and isinstance(value.operands[0], ir.Constant):
        return -value.operands[0].constant
    return None


def _constant_text(value: ir.Value) -> str:
    """A value as its C spelling where it has one (a constant), else its IR kind."""
    return str(value.constant) if isinstance(value, ir.Constant) else type(value).__name__


def _zero(value: ir.Value) -> bool:
    """A constant 0, also as the front end writes `float sum = 0` (sitofp of 0)."""
    if getattr(value, "opname", None) in ("sitofp", "uitofp"):
        value = value.operands[0]
    return isinstance(value, ir.Constant) and not value.constant
