"""Small symbolic integer expressions over a function's scalar parameters.

They describe the extents that C's types give in terms of parameters (the VLA dimensions of
`float A[n][m+2]`), so the JIT harness can size and check buffers for any parameter values.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass


class SymExpr(ABC):
    """An integer expression; `evaluate` applies C's semantics (truncating division)."""

    @abstractmethod
    def evaluate(self, env: dict[str, int]) -> int:
        """The value for the given parameter values."""

    def variables(self) -> set[str]:
        return set()


@dataclass(frozen=True)
class Const(SymExpr):
    value: int

    def evaluate(self, env: dict[str, int]) -> int:
        return self.value

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Var(SymExpr):
    name: str

    def evaluate(self, env: dict[str, int]) -> int:
        return int(env[self.name])

    def variables(self) -> set[str]:
        return {self.name}

    def __str__(self) -> str:
        return self.name


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _c_div,
    "%": lambda a, b: a - _c_div(a, b) * b,
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
}


@dataclass(frozen=True)
class BinOp(SymExpr):
    op: str
    lhs: SymExpr
    rhs: SymExpr

    def evaluate(self, env: dict[str, int]) -> int:
        return _OPS[self.op](self.lhs.evaluate(env), self.rhs.evaluate(env))

    def variables(self) -> set[str]:
        return self.lhs.variables() | self.rhs.variables()

    def __str__(self) -> str:
        return f"({self.lhs} {self.op} {self.rhs})"


@dataclass(frozen=True)
class Neg(SymExpr):
    operand: SymExpr

    def evaluate(self, env: dict[str, int]) -> int:
        return -self.operand.evaluate(env)

    def variables(self) -> set[str]:
        return self.operand.variables()

    def __str__(self) -> str:
        return f"-{self.operand}"


SUPPORTED_OPERATORS = frozenset(_OPS)
