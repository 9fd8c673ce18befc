"""How C values cross a call in the x86-64 System V calling convention (psABI 3.2.3).

A kernel compiled in compiler mode is called by code gcc compiled, so a struct passed or
returned by value must sit in exactly the registers or stack bytes gcc uses. Scalars and
pointers map to LLVM types the back end already places correctly; structs are lowered here,
as clang's CodeGen does for the same C:

* a struct of at most 16 bytes is classified per eightbyte: INTEGER if an integer or pointer
  lies in it, else SSE. Each eightbyte becomes one LLVM argument (`iN` for INTEGER, `float`,
  `<2 x float>` or `double` for SSE), or one member of the returned `{a, b}`. If the
  registers left for the arguments cannot hold all its eightbytes, the whole struct goes to
  memory instead;
* a larger struct is MEMORY: an argument is a `byval` pointer to the caller's copy, a result
  is written through a hidden `sret` pointer (the first argument) that the callee returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llvmlite import ir
from llvmlite.ir.values import ArgumentAttributes

from . import c_types as ct

#: argument registers of the convention: rdi rsi rdx rcx r8 r9, xmm0-7
_INTEGER_REGISTERS, _SSE_REGISTERS = 6, 8
#: beyond this alignment gcc and clang disagree on where a by-value struct goes
_MAX_BY_VALUE_ALIGN = 16


class AbiRefused(Exception):
    """A struct the convention's lowering here does not cover (the caller names the place)."""


@dataclass(frozen=True)
class Direct:
    """A scalar or pointer, passed as its own LLVM type."""

    type: ir.Type


@dataclass(frozen=True)
class InRegisters:
    """A small struct: one LLVM value per eightbyte that holds data, with its byte offset."""

    struct: ct.StructType
    parts: tuple[tuple[int, ir.Type], ...]


@dataclass(frozen=True)
class InMemory:
    """A struct passed `byval` (an argument) or through the hidden `sret` pointer (a result)."""

    struct: ct.StructType

    @property
    def align(self) -> int:
        return max(self.struct.align, 8)


Passing = Direct | InRegisters | InMemory


@dataclass(frozen=True)
class FunctionAbi:
    """The LLVM signature of a C function and which LLVM arguments carry each C parameter."""

    result: Passing | None  # None: void
    params: tuple[Passing, ...]

    @property
    def has_sret(self) -> bool:
        return isinstance(self.result, InMemory)

    def llvm_type(self) -> ir.FunctionType:
        if self.result is None or self.has_sret:
            result: ir.Type = ir.VoidType()
        elif isinstance(self.result, InRegisters):
            result = _joined(self.result)
        else:
            result = self.result.type
        args = [ir.PointerType()] if self.has_sret else []
        for p in self.params:
            args += [t for _, t in p.parts] if isinstance(p, InRegisters) else [_llvm(p)]
        return ir.FunctionType(result, args)

    def arguments(self, values: Sequence[ir.Value]) -> list[list[ir.Value]]:
        """Group a function's (or a call's) LLVM arguments by C parameter (sret excluded)."""
        position = 1 if self.has_sret else 0
        grouped = []
        for p in self.params:
            count = len(p.parts) if isinstance(p, InRegisters) else 1
            grouped.append(list(values[position : position + count]))
            position += count
        return grouped

    def add_attributes(self, function: ir.Function) -> None:
        """`sret`/`byval` with their types and alignments, as clang declares them."""
        if isinstance(self.result, InMemory):
            sret = function.args[0]
            sret.name = "agg.result"
            _typed_attribute(sret, "sret", self.result.struct)
            sret.add_attribute("noalias")
            sret.attributes.align = self.result.struct.align
        for p, args in zip(self.params, self.arguments(function.args)):
            if isinstance(p, InMemory):
                _typed_attribute(args[0], "byval", p.struct)
                args[0].attributes.align = p.align


@dataclass(frozen=True)
class ExternalFunction:
    """A function another object defines, as the module declares and calls it."""

    function: ir.Function
    abi: FunctionAbi
    variadic: bool


def function_abi(result: ct.CType, params: Sequence[ct.CType]) -> FunctionAbi:
    """The lowering of a prototype; arrays among `params` are passed as pointers.
    Raises `AbiRefused` for a struct the lowering does not cover."""
    returned = None if isinstance(result, ct.VoidType) else _classify(result)
    integer = _INTEGER_REGISTERS - (1 if isinstance(returned, InMemory) else 0)
    sse = _SSE_REGISTERS
    passing: list[Passing] = []
    for t in params:
        p = _classify(t)
        if isinstance(p, InRegisters):
            need_int, need_sse = _registers(p)
            if need_int > integer or need_sse > sse:
                p = InMemory(p.struct)  # psABI: all of it in registers, or all in memory
            else:
                integer, sse = integer - need_int, sse - need_sse
        elif isinstance(p, Direct):
            if isinstance(t, ct.FloatType):
                sse = max(0, sse - 1)
            else:
                integer = max(0, integer - 1)
        passing.append(p)
    return FunctionAbi(returned, tuple(passing))


def _classify(t: ct.CType) -> Passing:
    if not isinstance(t, ct.StructType):
        return Direct(ir.PointerType() if isinstance(t, ct.ArrayType) else t.llvm())
    if t.align > _MAX_BY_VALUE_ALIGN:
        raise AbiRefused(f"struct '{t}' aligned to {t.align} bytes passed by value")
    if t.size > 16:
        return InMemory(t)
    leaves = ct.scalar_leaves(t)
    parts = []
    for start in range(0, t.size, 8):
        inside = [leaf.ctype for leaf in leaves if start <= leaf.offset < start + 8]
        if inside:
            parts.append((start, _eightbyte_type(inside, min(8, t.size - start))))
    return InRegisters(t, tuple(parts))


def _eightbyte_type(leaves: list[ct.CType], size: int) -> ir.Type:
    """INTEGER if any integer or pointer is in the eightbyte (as many bits as the struct has
    left in it), else SSE: `float` (alone or before padding), two floats, or a double."""
    if any(not isinstance(leaf, ct.FloatType) for leaf in leaves):
        return ir.IntType(8 * size)
    if size <= 4 or leaves == [ct.FLOAT]:  # a float, then padding
        return ir.FloatType()
    if leaves == [ct.DOUBLE]:
        return ir.DoubleType()
    return ir.VectorType(ir.FloatType(), 2)


def _registers(p: InRegisters) -> tuple[int, int]:
    integer = sum(isinstance(t, ir.IntType) for _, t in p.parts)
    return integer, len(p.parts) - integer


def _joined(p: InRegisters) -> ir.Type:
    types = [t for _, t in p.parts]
    return types[0] if len(types) == 1 else ir.LiteralStructType(types)


def _llvm(p: Passing) -> ir.Type:
    return p.type if isinstance(p, Direct) else ir.PointerType()


class _FrameAttributes(ArgumentAttributes):
    """Argument attributes that also hold `byval(<ty>)`/`sret(<ty>)` with the type written
    out: llvmlite takes the type from a typed pointer, and the module's pointers are opaque.
    (A subclass, so that copies of the module keep them.)"""

    def add(self, name: str) -> None:
        if name.startswith(("byval(", "sret(")):
            set.add(self, name)
        else:
            super().add(name)


def _typed_attribute(arg: ir.Argument, name: str, struct: ct.StructType) -> None:
    arg.attributes = _FrameAttributes()
    arg.attributes.add(f"{name}({struct.llvm()})")
