"""The C66x dialect: C as TI's C6000 compiler (cl6x) expects it for the C66x DSP.

The DSP's SIMD is 64 bits wide and exists for two kinds of values, which the dialect keeps in
the compiler's own types and operates on with its intrinsics (TI's C6000 compiler guide,
SPRUI04, "Using intrinsics"):

- `<2 x float>` is a `__float2_t`: `_daddsp`, `_dsubsp`, `_dmpysp` (DADDSP, DSUBSP, DMPYSP),
  built by `_ftof2(high, low)` and read by `_hif2`/`_lof2`;
- `<2 x i32>` is a `long long`: `_dadd`, `_dsub` (DADD, DSUB: two wrapping 32-bit lanes),
  built by `_itoll(high, low)` and read by `_hill`/`_loll`;
- `<4 x i16>` is a `long long` of four halfwords (`_dadd2`, `_dsub2`), `<2 x i16>` and
  `<4 x i8>` one 32-bit word (`_add2`/`_sub2`, `_add4`/`_sub4`), built by `_pack2` (and
  `_packl4` for bytes), read by `_extu`, and accessed by `_amem4`/`_mem4` (LDW/LDNW); a
  `<2 x i32>` product of two sign-extended halfword pairs is one `_mpy2ll` (MPY2).

Lane 0 is the low word, the one at the lower address (little-endian C66x, the usual
configuration; `pycc_c66x.h` refuses a big-endian build). 64-bit loads and stores are
`_amem8_f2`/`_amem8` (LDDW/STDW) where the IR proves the access 8-byte aligned (`align` >= 8,
from the `align` pass's facts) and `_mem8_f2`/`_mem8` (LDNDW/STNDW) otherwise (4 bytes and
`_amem4`/`_mem4` for a one-word vector).
Every other vector (`<2 x double>`, masks, wider vectors) has no C66x
register form: it is a struct of its lanes, operated on lane by lane by `static inline`
helpers, which cl6x scalarizes; operations the two SIMD types lack (division, comparisons,
conversions) go lane by lane too.

Loops carry the pragmas cl6x's software pipeliner reads: `MUST_ITERATE(min, max, multiple)`
where the trip count is known (a constant count; the remainder of a loop unrolled or
vectorized by N runs at most N times, unless a run-time overlap check can send every
iteration there; a rotated loop at least once) and `UNROLL(1)` on a
loop the passes unrolled (the search chose that factor: cl6x must not unroll it again).
A function whose pointer parameters are declared aligned (`--row-align`, `aligned(N)`) starts
with `_nassert` of that alignment. The host emulation (`runtime/c66x/`) ignores the pragmas
and checks every `_nassert` and `_amem8` alignment at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir
from llvmlite.ir import instructions as ins

from ..ir_passes.core.loops import Loop
from ..ir_passes.unroll import is_remainder, unrolled_loops
from .c_dialect import Helpers, PortableDialect, _read_lane
from .c_expressions import Expr, atom, call
from .c_types import TypeTable, lane_suffix


@dataclass(frozen=True)
class _Packed:
    """A small vector the C66x holds in one register or a register pair."""

    c_type: str
    bytes: int  # 8: a register pair (LDDW/LDNDW), 4: one register (LDW/LDNW)
    make: Callable[[list[str]], str]  # the vector of the lanes (lane 0 first)
    lane: Callable[[str, int], str]  # lane k of a vector, as stored
    aligned: str  # the aligned access (an lvalue)
    unaligned: str
    operations: dict[str, str]
    tag: str  # its short name in helper names


def _halves(word: str, k: int) -> str:
    """Halfword k of a 32-bit word (EXTU: low half shifted up first)."""
    return f"(uint16_t)_extu({word}, {16 - 16 * k}, 16)"


def _bytes(word: str, k: int) -> str:
    return f"(uint8_t)_extu({word}, {24 - 8 * k}, 24)"


_PACKED = {
    "<2 x float>": _Packed(
        "__float2_t", 8, lambda x: f"_ftof2({x[1]}, {x[0]})",
        lambda v, k: f"{'_hif2' if k else '_lof2'}({v})", "_amem8_f2", "_mem8_f2",
        {"fadd": "_daddsp", "fsub": "_dsubsp", "fmul": "_dmpysp"}, "f2",
    ),
    "<2 x i32>": _Packed(
        "long long", 8, lambda x: f"_itoll({x[1]}, {x[0]})",
        lambda v, k: f"(uint32_t){'_hill' if k else '_loll'}({v})", "_amem8", "_mem8",
        {"add": "_dadd", "sub": "_dsub"}, "ll",
    ),
    "<4 x i16>": _Packed(
        "long long", 8, lambda x: f"_itoll(_pack2({x[3]}, {x[2]}), _pack2({x[1]}, {x[0]}))",
        lambda v, k: _halves(f"{'_hill' if k > 1 else '_loll'}({v})", k % 2), "_amem8",
        "_mem8", {"add": "_dadd2", "sub": "_dsub2"}, "h4",
    ),
    "<2 x i16>": _Packed(
        "int32_t", 4, lambda x: f"_pack2({x[1]}, {x[0]})", _halves, "_amem4", "_mem4",
        {"add": "_add2", "sub": "_sub2"}, "h2",
    ),
    "<4 x i8>": _Packed(
        "int32_t", 4, lambda x: f"_packl4(_pack2({x[3]}, {x[2]}), _pack2({x[1]}, {x[0]}))",
        _bytes, "_amem4", "_mem4", {"add": "_add4", "sub": "_sub4"}, "b4",
    ),
}  # fmt: skip

PRELUDE = """\
#include "pycc_c66x.h\""""


class C66xDialect(PortableDialect):
    """C for TI's cl6x with C66x intrinsics (and its host emulation, `runtime/c66x`)."""

    name = "c66x"
    #: cl6x inlines `static inline` functions when optimizing; no GCC attribute needed
    inline = "static inline"

    def __init__(self, types: TypeTable, helpers: Helpers):
        super().__init__(types, helpers)
        types.vector_spelling = self._spelling

    def _spelling(self, t: ir.VectorType) -> tuple[str, str | None]:
        pair = _PACKED.get(str(t))
        if pair is not None:
            return pair.c_type, None
        name = f"pycc_v{t.count}{lane_suffix(t.element)}"
        return name, f"typedef struct {{\n    {self.types.lane(t)} v[{t.count}];\n}} {name};"

    def tag(self, t: ir.Type) -> str:
        pair = _PACKED.get(str(t))
        return super().tag(t) if pair is None else pair.tag

    def prelude(self) -> str:
        return PRELUDE

    # memory

    def vector_load(self, t: ir.VectorType, pointer: Expr, align: int) -> Expr:
        pair = _PACKED.get(str(t))
        if pair is None:
            return super().vector_load(t, pointer, align)
        return call(pair.aligned if align >= pair.bytes else pair.unaligned, pointer)

    def vector_store(self, t: ir.VectorType, pointer: Expr, value: Expr, align: int) -> str:
        pair = _PACKED.get(str(t))
        if pair is None:
            return super().vector_store(t, pointer, value, align)
        access = pair.aligned if align >= pair.bytes else pair.unaligned
        return f"{access}({pointer.text}) = {value.text};"

    # lanes

    def lane_text(self, t: ir.VectorType, vector: Expr, index: str) -> str:
        packed = _PACKED.get(str(t))
        if packed is None:
            return f"{vector.at(16)}.v[{index}]"
        lanes = [packed.lane(vector.text, k) for k in range(t.count)]
        if index.isdigit():
            return lanes[int(index)]
        return _choose(index, lanes)

    def insert(self, t: ir.VectorType, name: str, index: Expr, lane: Expr) -> str:
        packed = _PACKED.get(str(t))
        if packed is None:
            return f"{name}.v[{index.text}] = {lane.text};"
        kept = [packed.lane(name, k) for k in range(t.count)]
        made = [packed.make([*kept[:k], lane.text, *kept[k + 1 :]]) for k in range(t.count)]
        if index.text.isdigit():
            return f"{name} = {made[int(index.text)]};"
        return f"{name} = {_choose(index.text, made)};"

    def vector_literal(self, t: ir.VectorType, lanes: list[str]) -> Expr:
        packed = _PACKED.get(str(t))
        if packed is None:
            return atom(f"({self.types.name(t)}){{{{{', '.join(lanes)}}}}}")
        return atom(packed.make(lanes))

    def zero(self, t: ir.VectorType) -> str:
        packed = _PACKED.get(str(t))
        return "{0}" if packed is None else packed.make(["0"] * t.count)

    def vector_operator(self, opname: str, t: ir.VectorType, a: Expr, b: Expr) -> Expr | None:
        pair = _PACKED.get(str(t))
        if pair is None or opname not in pair.operations:
            return None
        return call(pair.operations[opname], a, b)

    def vector_instruction(
        self, instr: ir.Instruction, expr: Callable[[ir.Value], Expr]
    ) -> Expr | None:
        """`_mpy2ll` (MPY2: two 16 x 16-bit products, each a 32-bit lane) for a `<2 x i32>`
        product of sign-extended halfword pairs or constants that fit a halfword; packed
        `_add4`, `_add2`, ... for sums and differences of extended narrow lanes truncated back
        to them (C computes `a[i] + b[i]` of bytes in `int`: its low byte is the bytes' sum)."""
        if instr.opname == "trunc":
            packed = _PACKED.get(str(instr.type))
            if packed is None or "add" not in packed.operations:
                return None
            return _narrowed(instr.operands[0], instr.type, packed, expr)
        if instr.opname != "mul" or str(instr.type) != "<2 x i32>":
            return None
        pairs = [_halfword_pair(value, expr) for value in instr.operands]
        if pairs[0] is None or pairs[1] is None:
            return None
        return call("_mpy2ll", pairs[0], pairs[1])

    def negate(self, t: ir.VectorType, a: Expr) -> Expr:
        return self.lanewise("fneg", t, [t], lambda lanes: Expr(f"-{lanes[0].at(15)}", 15), [a])

    def vector_cast(self, source: ir.VectorType, t: ir.VectorType, a: Expr) -> Expr:
        return self.bitcast(source, t, a)

    def _lanewise_body(
        self, result: ir.VectorType, operands: list[ir.Type], lane: Callable[[list[Expr]], Expr]
    ) -> str:
        """One statement per lane (a C66x register pair or a struct has no lane loop)."""
        lanes = []
        for k in range(result.count):
            reads = [
                _read_lane(t, self.lane_text(t, atom(f"a{i}"), str(k)), self.types)
                if isinstance(t, ir.VectorType) else atom(f"a{i}")
                for i, t in enumerate(operands)
            ]  # fmt: skip
            lanes.append(lane(reads).text)
        if str(result) in _PACKED:
            return f"return {self.vector_literal(result, lanes).text};"
        sets = "".join(f"r.v[{k}] = {text};\n" for k, text in enumerate(lanes))
        return f"{self.types.name(result)} r;\n{sets}return r;"

    def reduce(self, kind: str, t: ir.VectorType, arg: Expr) -> Expr:
        start, op = self._reduction(kind, t)
        vector, lane = self.types.name(t), self.types.lane(t)
        name = f"pycc_reduce_{kind}_{lane_suffix(t.element)}x{t.count}"
        scalar = self.types.name(t.element)
        steps = "".join(
            f"s = ({lane})(1u * s {op} {self.lane_text(t, atom('v'), str(k))});\n"
            for k in range(t.count)
        )
        body = f"{lane} s = ({lane}){start};\n{steps}return ({scalar})s;"
        return call(self._helper(name, scalar, f"{vector} v", lambda: body), arg)

    # loops and functions

    def loop_pragmas(self, loop: Loop) -> list[str]:
        """`MUST_ITERATE` from what the trip count is known to be, `UNROLL(1)` on a loop the
        passes unrolled."""
        function = loop.header.parent
        record = unrolled_loops(function).get(loop.header)
        lines = []
        bounds = _iteration_bounds(loop)
        if bounds is not None:
            low, high = bounds
            limits = f"{low}" if high is None else f"{low}, {high}"
            lines.append(f"#pragma MUST_ITERATE({limits})")
        if record is not None:
            lines.append("#pragma UNROLL(1)")
        return lines

    def function_prologue(self, parameters: list[tuple[str, int]]) -> list[str]:
        """`_nassert` of each pointer parameter's declared alignment (name, bytes)."""
        return [f"_nassert(((uintptr_t){name} & {align - 1}) == 0);" for name, align in parameters]


def _narrowed(
    value: ir.Value, t: ir.VectorType, packed: _Packed, expr: Callable[[ir.Value], Expr]
) -> Expr | None:
    """`value` (wider lanes) truncated to `t`, computed in `t`'s packed form, if it is a tree
    of additions and subtractions of values extended from `t` and constants (wrapping sums
    and differences keep their low bits), else None."""
    if isinstance(value, ins.CastInstr) and value.opname in ("zext", "sext"):
        source = value.operands[0]
        return expr(source) if str(source.type) == str(t) else None
    lanes = _integer_lanes(value)
    if lanes is not None:
        mask = (1 << t.element.width) - 1
        return atom(packed.make([f"{v & mask}u" for v in lanes]))
    if isinstance(value, ins.Instruction) and value.opname in ("add", "sub"):
        a, b = (_narrowed(v, t, packed, expr) for v in value.operands)
        if a is not None and b is not None:
            return call(packed.operations[value.opname], a, b)
    return None


def _halfword_pair(value: ir.Value, expr: Callable[[ir.Value], Expr]) -> Expr | None:
    """`value`, a `<2 x i32>`, as the packed `<2 x i16>` it sign-extends, if it is one."""
    if isinstance(value, ins.CastInstr) and value.opname == "sext":
        source = value.operands[0]
        return expr(source) if str(source.type) == "<2 x i16>" else None
    lanes = _integer_lanes(value)
    if lanes is not None and all(-(2**15) <= _signed32(v) < 2**15 for v in lanes):
        return atom(f"_pack2({_signed32(lanes[1])}, {_signed32(lanes[0])})")
    return None


def _integer_lanes(value: ir.Value) -> list[int] | None:
    """The lanes of a vector constant of integers (listed or a splat), None for anything
    else (an undefined lane included)."""
    if not isinstance(value, ir.Constant) or not isinstance(value.type, ir.VectorType):
        return None
    listed = value.constant
    if not isinstance(listed, (list, tuple)):
        listed = [listed] * value.type.count
    lanes = [lane.constant if isinstance(lane, ir.Constant) else lane for lane in listed]
    return lanes if all(isinstance(v, int) and not isinstance(v, bool) for v in lanes) else None


def _signed32(v: int) -> int:
    return v - 2**32 if v >= 2**31 else v


def _choose(index: str, lanes: list[str]) -> str:
    """`lanes[index]` for an index known only at run time."""
    text = lanes[0]
    for k in range(1, len(lanes)):
        text = f"{index} == {k} ? {lanes[k]} : ({text})"
    return f"({text})"


def _iteration_bounds(loop: Loop) -> tuple[int, int | None] | None:
    """(min, max or None) of the loop's iterations per entry, where they are known."""
    count = loop.trip_count
    if count is not None and count.no_wrap and count.constant is not None:
        return count.constant, count.constant
    if is_remainder(loop):
        for record in unrolled_loops(loop.header.parent).values():
            if record.original.header is loop.header and not record.checked:
                rotated = count is not None and count.minimum == 1
                return (1, record.factor) if rotated else (0, record.factor - 1)
    if count is not None and count.minimum == 1:
        return 1, None
    return None
