"""C expressions with their precedence, and the C of LLVM's scalar operations.

One place knows how each scalar operation reads in C with LLVM's exact semantics: integers
are held signed (`intN_t`) and an operation that reads them unsigned casts at the use
(`udiv`, `lshr`, `icmp ult`, `zext`); wrapping arithmetic (no `nsw`) goes through the
unsigned type, where C defines overflow; narrow types compute in `int` after promotion and
are converted back; float comparisons keep LLVM's ordered/unordered meaning with NaN. The
function writer uses it for scalar values, and the dialects for each lane of a vector.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llvmlite import ir

from .c_types import Unexpressible, int_name

PRIMARY, UNARY, MUL, ADD, SHIFT, REL, EQ, BAND, BXOR, BOR, AND, OR, COND, ASSIGN = (
    16,
    15,
    13,
    12,
    11,
    10,
    9,
    8,
    7,
    6,
    5,
    4,
    3,
    2,
)
_BINARY_PREC = {
    "*": MUL, "/": MUL, "%": MUL, "+": ADD, "-": ADD, "<<": SHIFT, ">>": SHIFT,
    "<": REL, "<=": REL, ">": REL, ">=": REL, "==": EQ, "!=": EQ,
    "&": BAND, "^": BXOR, "|": BOR, "&&": AND, "||": OR,
}  # fmt: skip
#: operators whose operands gcc -Wparentheses wants parenthesized unless they are simple
_FUSSY = {"<<", ">>", "&", "^", "|", "==", "!=", "&&", "||"}


@dataclass(frozen=True)
class Expr:
    """C text of a value, the precedence of its outermost operator, and the variables it
    reads (the phi copies of an edge must not overwrite one an other copy still reads)."""

    text: str
    prec: int = PRIMARY
    refs: frozenset[str] = field(default_factory=frozenset)

    def at(self, prec: int) -> str:
        """The text as an operand that needs at least precedence `prec`."""
        return self.text if self.prec >= prec else f"({self.text})"


def atom(text: str, *parts: Expr) -> Expr:
    return Expr(text, PRIMARY, _refs(parts))


def _refs(parts) -> frozenset[str]:
    out: frozenset[str] = frozenset()
    for part in parts:
        out |= part.refs
    return out


def binary(op: str, a: Expr, b: Expr) -> Expr:
    prec = _BINARY_PREC[op]
    if op in _FUSSY:
        left_need = right_need = UNARY
    elif prec == REL:
        left_need = right_need = ADD  # `i < n - 1`, but parenthesized shifts and comparisons
    else:
        left_need, right_need = prec, prec + 1  # left-associative
    left, right = a.at(left_need), b.at(right_need)
    return Expr(f"{left} {op} {right}", prec, a.refs | b.refs)


def unary(op: str, a: Expr) -> Expr:
    return Expr(f"{op}{a.at(UNARY)}", UNARY, a.refs)


def cast(c_type: str, a: Expr) -> Expr:
    return Expr(f"({c_type}){a.at(UNARY)}", UNARY, a.refs)


def call(name: str, *args: Expr) -> Expr:
    return Expr(f"{name}({', '.join(a.text for a in args)})", PRIMARY, _refs(args))


def conditional(c: Expr, a: Expr, b: Expr) -> Expr:
    return Expr(f"{c.at(OR)} ? {a.at(OR)} : {b.at(COND)}", COND, c.refs | a.refs | b.refs)


# --------------------------------------------------------------------------------------------
# scalar operations


def _unsigned(t: ir.IntType, a: Expr) -> Expr:
    if a.text.isdigit() and t.width in (32, 64):  # a literal: `4u`, not `(uint32_t)4`
        return Expr(f"{a.text}u" if t.width == 32 else f"UINT64_C({a.text})")
    return cast(int_name(t.width, signed=False), a)


def _signed(t: ir.IntType, a: Expr) -> Expr:
    return cast(int_name(t.width), a)


_ARITH = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}
_FLOAT = {"fadd": "+", "fsub": "-", "fmul": "*", "fdiv": "/"}


def integer_binary(opname: str, flags: list[str], t: ir.IntType, a: Expr, b: Expr) -> Expr:
    """`a op b` of LLVM integer type `t` (operands held signed), as signed `intN_t`."""
    if t.width == 1:
        if opname in ("and", "or", "xor"):
            return binary({"and": "&", "or": "|", "xor": "!="}[opname], a, b)
        raise Unexpressible(f"'{opname}' on i1")
    narrow = t.width < 32  # promoted to int: no overflow in +, -, *; converted back
    if opname in _ARITH:
        op = _ARITH[opname]
        if op in "&|^" or narrow or "nsw" in flags:  # cannot overflow, or may not
            result = binary(op, a, b)
            return _signed(t, result) if narrow and op not in "&|^" else result
        return _signed(t, binary(op, _unsigned(t, a), _unsigned(t, b)))
    if opname in ("sdiv", "srem"):
        result = binary("/" if opname == "sdiv" else "%", a, b)
        return _signed(t, result) if narrow else result
    if opname in ("udiv", "urem"):
        op = "/" if opname == "udiv" else "%"
        return _signed(t, binary(op, _unsigned(t, a), _unsigned(t, b)))
    if opname == "shl":
        return _signed(t, binary("<<", _unsigned(t, a), b))
    if opname == "lshr":
        return _signed(t, binary(">>", _unsigned(t, a), b))
    if opname == "ashr":
        result = binary(">>", a, b)
        return _signed(t, result) if narrow else result
    raise Unexpressible(f"integer operation '{opname}'")


def float_binary(opname: str, a: Expr, b: Expr) -> Expr:
    if opname in _FLOAT:
        return binary(_FLOAT[opname], a, b)
    if opname == "frem":
        return call("fmod", a, b)
    raise Unexpressible(f"float operation '{opname}'")


_PREDICATE = {"eq": "==", "ne": "!=", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}


def predicate(name: str) -> tuple[str, str]:
    """An LLVM predicate (`slt`, `ult`, `oeq`, `une`, `ord`) as (C operator or 'ord'/'uno',
    its flavour: 's'/'u' for integers, 'o'/'u' for floats, '' for eq/ne)."""
    if name in ("ord", "uno"):
        return name, ""
    if name in ("eq", "ne"):
        return _PREDICATE[name], ""
    return _PREDICATE[name[1:]], name[0]


def integer_compare(op: str, signed: bool, t: ir.Type, a: Expr, b: Expr) -> Expr:
    """`icmp` with C operator `op`, read signed or unsigned."""
    if isinstance(t, ir.PointerType):
        if op in ("==", "!="):
            return binary(op, a, b)
        a, b = cast("uintptr_t", a), cast("uintptr_t", b)
        return binary(op, a, b)
    assert isinstance(t, ir.IntType)
    if signed or op in ("==", "!=") or t.width == 1:
        return binary(op, a, b)
    return binary(op, _unsigned(t, a), _unsigned(t, b))


_INVERSE = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def inverse_compare(op: str) -> str:
    """The integer comparison true exactly when `op` is false."""
    return _INVERSE[op]


def float_compare(op: str, ordered: bool, a: Expr, b: Expr) -> Expr:
    """llvmlite's `fcmp` (`op` a C operator or 'ord'/'uno', `ordered` its o/u flavour): an
    ordered comparison is false when either operand is NaN, an unordered one true, as LLVM."""
    if op == "ord":
        return binary("&&", binary("==", a, a), binary("==", b, b))
    if op == "uno":
        return binary("||", binary("!=", a, a), binary("!=", b, b))
    if op == "==" and not ordered:
        return unary("!", Expr(f"{a.at(ADD)} < {b.at(ADD)} || {a.at(ADD)} > {b.at(ADD)}", OR))
    if op == "!=" and ordered:
        return Expr(f"{a.at(ADD)} < {b.at(ADD)} || {a.at(ADD)} > {b.at(ADD)}", OR, a.refs | b.refs)
    if ordered or op == "!=":
        return binary(op, a, b)
    return unary("!", binary(_INVERSE[op], a, b))  # u< is !(>=): true on NaN


def convert(opname: str, source: ir.Type, target: ir.Type, a: Expr, target_c: str) -> Expr:
    """A conversion instruction from `source` to `target` (C type `target_c`)."""
    if opname == "trunc":
        if target.width == 1:
            return binary("!=", binary("&", a, Expr("1")), Expr("0"))
        return cast(target_c, a)
    if opname == "sext":
        if source.width == 1:
            return cast(target_c, unary("-", cast(target_c, a)))
        return cast(target_c, a)
    if opname == "zext":
        if source.width == 1:
            return cast(target_c, a)
        return cast(target_c, _unsigned(source, a))
    if opname in ("sitofp", "fpext", "fptrunc", "fptosi"):
        return cast(target_c, a)
    if opname == "uitofp":
        return cast(target_c, _unsigned(source, a) if source.width > 1 else a)
    if opname == "fptoui":
        return cast(target_c, cast(int_name(target.width, signed=False), a))
    if opname == "ptrtoint":
        return cast(target_c, cast("uintptr_t", a))
    if opname == "inttoptr":
        return cast("void *", cast("uintptr_t", a))
    raise Unexpressible(f"conversion '{opname}' from '{source}' to '{target}'")
