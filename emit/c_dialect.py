"""C dialects: how vectors, memory accesses and a target's intrinsics are spelled.

The portable dialect (`--target c`) writes vectors as GCC vector-extension values (gcc and
clang): wrapping lane arithmetic and float arithmetic as operators, everything else (lane
conversions, comparisons, selects, math intrinsics, reductions) through small `static inline`
helpers that apply the scalar operation lane by lane, so each lane means exactly what the
scalar C means (`c_expressions`). Vector loads and stores go through `memcpy`, which is what
LLVM's `load <N x T>, align A` means for any alignment and any effective type.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from llvmlite import ir

from ..ir_passes.core.loops import Loop
from .c_expressions import Expr, atom, binary, call, cast, unary
from .c_types import TypeTable, Unexpressible

#: lane operations written as C operators on GCC vectors (integer lanes are unsigned: wrap)
_VECTOR_OPERATORS = {
    "fadd": "+", "fsub": "-", "fmul": "*", "fdiv": "/",
    "add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^",
}  # fmt: skip


#: how helpers are declared: always inlined, so no out-of-line copy passes a vector wider
#: than the machine's registers (gcc's -Wpsabi, which a -Werror build would stop on)
INLINE = "static inline __attribute__((always_inline))"


#: integer vector reductions: (start value, C compound-assignment operator)
_REDUCTIONS = {"add": ("0", "+"), "mul": ("1", "*"), "and": ("~0", "&"), "or": ("0", "|"),
               "xor": ("0", "^")}  # fmt: skip


_PRELUDE = """\
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
/* vectors wider than the ISA's registers are passed to static inline helpers only */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif"""


class Helpers:
    """The `static inline` helpers one emitted file needs, each written once, in order."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def need(self, name: str, make: Callable[[], str]) -> str:
        if name not in self.texts:
            self.texts[name] = make()
        return name


class PortableDialect:
    """Plain C99 with GCC vector extensions."""

    name = "c"
    #: how its helpers are declared
    inline = INLINE

    def __init__(self, types: TypeTable, helpers: Helpers):
        self.types, self.helpers = types, helpers

    def prelude(self) -> str:
        """What the file includes or defines for this dialect, after the C headers."""
        return _PRELUDE

    def loop_pragmas(self, loop: Loop) -> list[str]:
        """Lines put before the loop's `for` (none in portable C)."""
        return []

    def function_prologue(self, parameters: list[tuple[str, int]]) -> list[str]:
        """Statements opening a function whose pointer parameters are declared aligned
        (name, bytes): none in portable C."""
        return []

    # memory

    def vector_load(self, t: ir.VectorType, pointer: Expr, align: int) -> Expr:
        name = self.types.name(t)
        body = f"{name} v;\nmemcpy(&v, p, sizeof v);\nreturn v;"
        helper = self._helper(f"pycc_load_{name[5:]}", name, "const void *p", lambda: body)
        return call(helper, pointer)

    def vector_store(self, t: ir.VectorType, pointer: Expr, value: Expr, align: int) -> str:
        name = self.types.name(t)
        body = "memcpy(p, &v, sizeof v);"
        helper = self._helper(f"pycc_store_{name[5:]}", "void", f"void *p, {name} v", lambda: body)
        return f"{helper}({pointer.text}, {value.text});"

    def _helper(self, name: str, result: str, params: str, body: Callable[[], str]) -> str:
        """The helper `name`, defined on first use with the lines `body()` gives."""

        def make() -> str:
            lines = "".join(f"    {line}\n" for line in body().split("\n"))
            return f"{self.inline} {result} {name}({params})\n{{\n{lines}}}"

        return self.helpers.need(name, make)

    # lanes

    def vector_instruction(
        self, instr: ir.Instruction, expr: Callable[[ir.Value], Expr]
    ) -> Expr | None:
        """The dialect's own form of a vector instruction together with its operands' (an
        intrinsic doing what several IR operations do), or None."""
        return None

    def vector_operator(self, opname: str, t: ir.VectorType, a: Expr, b: Expr) -> Expr | None:
        """`a op b` as a GCC vector operator, where the operator means LLVM's operation on
        every lane; None where it does not (the caller then goes lane by lane)."""
        op = _VECTOR_OPERATORS.get(opname)
        if op is None:
            return None
        return binary(op, a, b)

    def lanewise(
        self,
        key: str,
        result: ir.VectorType,
        operands: list[ir.Type],
        lane: Callable[[list[Expr]], Expr],
        args: list[Expr],
    ) -> Expr:
        """A helper applying the scalar C `lane(operand lanes)` to every lane (`key` names
        the operation and its types; each operand lane is read as the scalar C type)."""
        name, result_name, params = self._signature(key, result, operands)
        decls = ", ".join(f"{p} a{i}" for i, p in enumerate(params))
        body = functools.partial(self._lanewise_body, result, operands, lane)
        return call(self._helper(name, result_name, decls, body), *args)

    def _lanewise_body(
        self, result: ir.VectorType, operands: list[ir.Type], lane: Callable[[list[Expr]], Expr]
    ) -> str:
        """The statements of a lanewise helper: a loop over GCC vector lanes."""
        lanes = [
            _read_lane(t, f"a{i}[k]", self.types) if isinstance(t, ir.VectorType) else
            atom(f"a{i}")
            for i, t in enumerate(operands)
        ]  # fmt: skip
        return (
            f"{self.types.name(result)} r;\nfor (int k = 0; k < {result.count}; k++)\n"
            f"    r[k] = {lane(lanes).text};\nreturn r;"
        )

    def _signature(
        self, key: str, result: ir.VectorType, operands: list[ir.Type]
    ) -> tuple[str, str, list[str]]:
        """(helper name, result C type, parameter C types) of a lanewise helper."""
        result_name = self.types.name(result)
        params = [self.types.name(t) for t in operands]
        signature = "_".join([key, self.tag(result), *(self.tag(t) for t in operands)])
        return "pycc_" + "".join(c if c.isalnum() else "_" for c in signature), result_name, params

    def tag(self, t: ir.Type) -> str:
        """A type's short name in helper names (`v4f32`, `i32`)."""
        return self.types.name(t).replace("pycc_", "").replace("_t", "").replace(" ", "")

    def _reduction(self, kind: str, t: ir.VectorType) -> tuple[str, str]:
        """(start value, operator) of `llvm.vector.reduce.<kind>` of integer lanes (wrapping,
        associative and commutative on unsigned lanes, so in any order)."""
        if kind not in _REDUCTIONS or not isinstance(t.element, ir.IntType):
            raise Unexpressible(f"vector reduction '{kind}' of '{t}'")
        return _REDUCTIONS[kind]

    def reduce(self, kind: str, t: ir.VectorType, arg: Expr) -> Expr:
        """`llvm.vector.reduce.<kind>` of integer lanes, in lane order."""
        start, op = self._reduction(kind, t)
        vector, lane = self.types.name(t), self.types.lane(t)
        name = f"pycc_reduce_{kind}_{vector[5:]}"
        scalar = self.types.name(t.element)
        body = f"{lane} s = ({lane}){start};\nfor (int k = 0; k < {t.count}; k++)\n"
        body += f"    s = ({lane})(1u * s {op} v[k]);\nreturn ({scalar})s;"
        return call(self._helper(name, scalar, f"{vector} v", lambda: body), arg)

    def bitcast(self, source: ir.Type, target: ir.Type, value: Expr) -> Expr:
        """The bits of a value as another type of the same size (`memcpy`, as C allows)."""
        from_c, to_c = self.types.name(source), self.types.name(target)
        name = "pycc_bitcast_" + "_".join(n.replace("pycc_", "") for n in (from_c, to_c))
        body = f"{to_c} r;\nmemcpy(&r, &v, sizeof r);\nreturn r;"
        return call(self._helper(name, to_c, f"{from_c} v", lambda: body), value)

    def extract(self, t: ir.VectorType, vector: Expr, index: Expr) -> Expr:
        """Lane `index` of `vector`, as the scalar C type of its element."""
        return _read_lane(t, self.lane_text(t, vector, index.text), self.types, vector.refs)

    def lane_text(self, t: ir.VectorType, vector: Expr, index: str) -> str:
        """Lane `index` of `vector` as stored (unsigned integer lanes)."""
        return f"{vector.at(16)}[{index}]"

    def insert(self, t: ir.VectorType, name: str, index: Expr, lane: Expr) -> str:
        """The statement setting lane `index` of the variable `name` to `lane`."""
        return f"{name}[{index.text}] = {lane.text};"

    def vector_literal(self, t: ir.VectorType, lanes: list[str]) -> Expr:
        """The vector of the given lanes (C texts of the stored lane values)."""
        return atom(f"({self.types.name(t)}){{{', '.join(lanes)}}}")

    def zero(self, t: ir.VectorType) -> str:
        """The initializer of a vector variable before its first assignment."""
        return "{0}"

    def negate(self, t: ir.VectorType, a: Expr) -> Expr:
        """`fneg` of every lane (a GCC vector's unary minus flips the sign bits)."""
        return unary("-", a)

    def vector_cast(self, source: ir.VectorType, t: ir.VectorType, a: Expr) -> Expr:
        """The bits of vector `a` as another vector type of the same size."""
        return cast(self.types.name(t), a)


def _read_lane(t: ir.VectorType, text: str, types: TypeTable, refs=frozenset()) -> Expr:
    """One lane as the scalar C type of its element (lanes are stored unsigned)."""
    lane = Expr(text, 16, refs)
    e = t.element
    if isinstance(e, ir.IntType):
        return unary("(bool)", lane) if e.width == 1 else unary(f"({types.name(e)})", lane)
    return lane
