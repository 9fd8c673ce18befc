"""The one symbolic algebra of integer expressions every stage uses.

An `Expr` is a polynomial with integer coefficients over atoms, kept in a normal form (like
terms merged, zero terms dropped, a readable order), so two ways of writing one value compare
equal. An atom is

- an IR value (an argument, a loop phi, an instruction the arithmetic starts from): the
  addresses of loads and stores (`affine.py`), trip counts and loop bounds (`loops.py`);
- a parameter name (`"n"`): the extents C's types give in terms of a function's parameters
  (`float A[n][m + 2]`), which the JIT harness evaluates for any parameter values;
- a C operation the polynomial form cannot hold (`Operation`: `/` and `%` truncating as C does,
  `<<`, `>>`), folded when its operands are constants.

`evaluate` gives the exact integer for values of the atoms (an IR value is looked up by itself
or by its name); the polyhedral bridge prints an Expr in isl's syntax (`polyhedral/scop.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from llvmlite import ir

#: a parameter name, an IR value, or a C operation on two expressions
Atom = object
#: the atoms multiplied together (the constant term: ())
Monomial = tuple[Atom, ...]


def c_div(a: int, b: int) -> int:
    """C's `/`: truncation towards zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_OPERATIONS: dict[str, Callable[[int, int], int]] = {
    "/": c_div,
    "%": lambda a, b: a - c_div(a, b) * b,
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
}
#: every C binary operator an Expr can be built with
OPERATORS = frozenset({"+", "-", "*", *_OPERATIONS})


@dataclass(frozen=True)
class Expr:
    """Σ coefficient · monomial, integer coefficients, over atoms."""

    terms: tuple[tuple[Monomial, int], ...] = ()

    @staticmethod
    def constant(value: int) -> Expr:
        return Expr((((), int(value)),) if value else ())

    @staticmethod
    def symbol(atom: Atom) -> Expr:
        """The atom itself: an IR value, a parameter name, or an `Operation`."""
        return Expr((((atom,), 1),))

    @staticmethod
    def of(value: Expr | int) -> Expr:
        return value if isinstance(value, Expr) else Expr.constant(value)

    @staticmethod
    def binary(op: str, left: Expr | int, right: Expr | int) -> Expr:
        """`left op right` for any C operator in OPERATORS (C's semantics for `/` and `%`)."""
        left, right = Expr.of(left), Expr.of(right)
        if op == "+":
            return left + right
        if op == "-":
            return left - right
        if op == "*":
            return left * right
        if left.is_constant and right.is_constant and not (op in "/%" and right.value == 0):
            return Expr.constant(_OPERATIONS[op](left.value, right.value))
        return Expr.symbol(Operation(op, left, right))

    def as_dict(self) -> dict[Monomial, int]:
        return dict(self.terms)

    def __add__(self, other: Expr | int) -> Expr:
        total = self.as_dict()
        for monomial, coefficient in Expr.of(other).terms:
            total[monomial] = total.get(monomial, 0) + coefficient
        return _normalized(total)

    __radd__ = __add__

    def __neg__(self) -> Expr:
        return Expr(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: Expr | int) -> Expr:
        return self + (-Expr.of(other))

    def __rsub__(self, other: int) -> Expr:
        return Expr.of(other) - self

    def __mul__(self, other: Expr | int) -> Expr:
        total: dict[Monomial, int] = {}
        for left, a in self.terms:
            for right, b in Expr.of(other).terms:
                monomial = tuple(sorted(left + right, key=_atom_key))
                total[monomial] = total.get(monomial, 0) + a * b
        return _normalized(total)

    __rmul__ = __mul__

    def scaled(self, factor: int) -> Expr:
        return self * factor

    @property
    def is_constant(self) -> bool:
        return all(not monomial for monomial, _ in self.terms)

    @property
    def value(self) -> int:
        """The value of a constant expression."""
        if not self.is_constant:
            raise ValueError(f"{self} is not a constant")
        return self.constant_term

    @property
    def constant_term(self) -> int:
        return self.as_dict().get((), 0)

    def atoms(self) -> list[Atom]:
        """The atoms the expression is built from, outermost (operations not opened)."""
        seen: dict[int, Atom] = {}
        for monomial, _ in self.terms:
            for atom in monomial:
                seen.setdefault(id(atom), atom)
        return list(seen.values())

    def variables(self) -> set[str]:
        """The names of the parameters (and named IR values) it depends on."""
        names: set[str] = set()
        for atom in self.atoms():
            if isinstance(atom, Operation):
                names |= atom.left.variables() | atom.right.variables()
            else:
                names.add(_name(atom))
        return names

    def coefficient(self, atom: Atom) -> Expr:
        """The factor multiplying `atom` (in monomials of degree 1 in it)."""
        parts: dict[Monomial, int] = {}
        for monomial, c in self.terms:
            if sum(a is atom for a in monomial) == 1:
                rest = tuple(a for a in monomial if a is not atom)
                parts[rest] = parts.get(rest, 0) + c
        return _normalized(parts)

    def is_affine_in(self, atoms: set) -> bool:
        """At most one of `atoms`, to the first power, in every monomial."""
        return all(sum(a in atoms for a in m) <= 1 for m, _ in self.terms)

    def evaluate(self, env: Mapping | None = None) -> int:
        """The value for the integers `env` gives the atoms: by the atom itself, or by the
        name of an IR value (`"n"` for `%n`); KeyError names a missing one."""
        env = env or {}
        total = 0
        for monomial, coefficient in self.terms:
            product = coefficient
            for atom in monomial:
                product *= _atom_value(atom, env)
            total += product
        return total

    @property
    def known(self) -> int | None:
        """The value if it does not depend on any atom, else None."""
        return self.constant_term if self.is_constant else None

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for monomial, c in self.terms:
            names = "*".join(_text(a) for a in monomial)
            factor = {1: "", -1: "-"}.get(c, f"{c}*") if names else str(c)
            parts.append(factor + names)
        return " + ".join(parts).replace("+ -", "- ")


@dataclass(frozen=True)
class Operation:
    """`left op right` for a C operator that is not a polynomial one (`/`, `%`, `<<`, `>>`)."""

    op: str
    left: Expr
    right: Expr

    def evaluate(self, env: Mapping) -> int:
        return _OPERATIONS[self.op](self.left.evaluate(env), self.right.evaluate(env))

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


def _atom_value(atom: Atom, env: Mapping) -> int:
    if isinstance(atom, Operation):
        return atom.evaluate(env)
    if atom in env:
        return int(env[atom])
    name = _name(atom)
    if name in env:
        return int(env[name])
    raise KeyError(f"no value given for {_text(atom)}")


def _name(atom: Atom) -> str:
    return atom if isinstance(atom, str) else getattr(atom, "name", "") or ""


def _text(atom: Atom) -> str:
    """Parameters by name, IR values as LLVM writes them (`%i`)."""
    if isinstance(atom, (str, Operation)):
        return str(atom)
    return f"%{_name(atom) or '<unnamed>'}"


def _atom_key(atom: Atom) -> tuple:
    """Readable order (names); identities break ties between equally named values."""
    return (_text(atom), 0 if isinstance(atom, (str, Operation)) else id(atom))


def _normalized(total: dict[Monomial, int]) -> Expr:
    """Higher degrees first, positive terms before negative ones of the same degree, the
    constant last: `64*%i + 24`, `%n - %i`, `n + 2`."""
    ordered = sorted(
        ((m, c) for m, c in total.items() if c),
        key=lambda mc: (-len(mc[0]), mc[1] < 0, tuple(_atom_key(a) for a in mc[0])),
    )
    return Expr(tuple(ordered))


def signed_int(value: int, bits: int) -> int:
    """The `bits`-wide two's complement `value` as a signed integer (i1 stays 0/1)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if bits > 1 and value >> (bits - 1) else value


_INTEGER_CASTS = {"sext": True, "zext": False}


def integer_expr(
    value: ir.Value, atom: Callable[[ir.Value], bool] | None = None, signed: bool = True
) -> Expr:
    """The integer IR `value` as an Expr over the SSA values its arithmetic starts from: `add`,
    `sub`, `mul`, `shl` by a constant and integer casts are looked through (exact under the
    IR's no-overflow promises, `nsw` and `inbounds`, which the front end emits); constants are
    read as signed (or, below a `zext` or with `signed=False`, unsigned) integers of their
    width. Values `atom` accepts stay atoms (a loop bound keeps a `trunc`; the polyhedral
    bridge keeps a VLA's extent `n + 2`, computed before the loops, as one stride)."""
    if isinstance(value, ir.Constant) and isinstance(value.type, ir.IntType):
        raw = int(value.constant)
        bits = value.type.width
        return Expr.constant(signed_int(raw, bits) if signed else raw & ((1 << bits) - 1))
    if atom is not None and atom(value):
        return Expr.symbol(value)
    opname = getattr(value, "opname", None)
    operands = getattr(value, "operands", ())
    if opname in _INTEGER_CASTS:
        return integer_expr(operands[0], atom, _INTEGER_CASTS[opname])
    if opname == "trunc":
        return integer_expr(operands[0], atom, signed)
    if opname in ("add", "sub", "mul") and len(operands) == 2:
        left, right = (integer_expr(o, atom, signed) for o in operands)
        return {"add": left + right, "sub": left - right, "mul": left * right}[opname]
    if opname == "shl" and isinstance(operands[1], ir.Constant):
        return integer_expr(operands[0], atom, signed).scaled(1 << int(operands[1].constant))
    if opname in _FOLDED and len(operands) == 2:  # `k & 3` of an inlined helper's constant k
        left, right = (integer_expr(o, atom, signed) for o in operands)
        if left.is_constant and right.is_constant:
            folded = _FOLDED[opname](left.value, right.value)
            if folded is not None:
                return Expr.constant(folded)
    return Expr.symbol(value)


#: operations on two constants computed here (two's complement values: Python's `&`, `|`,
#: `^` and `>>` on negative integers agree); None where C leaves it undefined
_FOLDED: dict[str, Callable[[int, int], int | None]] = {
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "ashr": lambda a, b: a >> b if b >= 0 else None,
    "sdiv": lambda a, b: c_div(a, b) if b else None,
    "srem": lambda a, b: a - c_div(a, b) * b if b else None,
}
