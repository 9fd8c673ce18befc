"""Lowering of C expressions to LLVM IR with C semantics.

clang has already made every implicit conversion explicit (as UNEXPOSED_EXPR cursors whose
type is the target type), so binary operands arrive in their common type; the front end
applies the conversions itself only where the AST does not show them (compound assignment,
shifts, ++/--). Array and pointer types are carried in the front end's own model because
libclang cannot tell a variable-length array's runtime extent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

import clang.cindex as ci
from llvmlite import ir

from ..diagnostics import SourceLocation
from ..ir_passes.core.alignment import assume_aligned, is_power_of_two, power_of_two_dividing
from ..ir_passes.core.rewrite import opaque
from ..ir_passes.core.ssa import SSABuilder
from . import c_types as ct
from . import fp_builtins
from .abi import Direct, ExternalFunction, FunctionAbi, InMemory, InRegisters, Passing
from .clang_ast import (
    K,
    binary_operator,
    children,
    constant_value,
    declaration_key,
    expression_children,
    location,
    macro_at,
    spelled_tokens,
    string_value,
    strip_implicit,
    strip_parens,
    unary_operator,
    walk,
)
from .clang_types import ARRAY_KINDS, ctype_of
from .conversions import convert, int_result, to_index, truth_value
from .fp_constants import machine_nan
from .math_calls import (
    ASSERT_FAIL,
    EXACT_INTRINSICS,
    FORBIDDEN_CALLS,
    INFINITIES,
    INTEGER_ABS,
    KNOWN_LIBRARY_CALLS,
    LIBM_FUNCTIONS,
    PASS_THROUGH_BUILTINS,
    canonical_math_name,
)
from .tbaa import TypeTags, tag_access
from .unsupported import Unsupported

I64 = ir.IntType(64)

_COMPARISON = {"<", ">", "<=", ">=", "==", "!="}


@dataclass(eq=False)
class Variable:
    """A C object: in memory (`address` set) or an SSA variable (the SSABuilder's key)."""

    name: str
    ctype: ct.CType
    address: ir.Value | None = None


@dataclass
class RValue:
    value: ir.Value | None  # None for void
    ctype: ct.CType


@dataclass
class LValue:
    """A designated object: a memory address, or an SSA variable."""

    ctype: ct.CType
    address: ir.Value | None = None
    var: Variable | None = None


@dataclass
class LoopTargets:
    """Where `break` and `continue` go (a switch has no `continue` target of its own)."""

    break_to: ir.Block
    continue_to: ir.Block | None


class ModuleServices(Protocol):
    """What a function lowering needs from the module it is part of (see module.py)."""

    def callee(self, definition: ci.Cursor, call: ci.Cursor) -> ir.Function:
        """The lowered function for a call to a function defined in the file."""

    def global_variable(self, decl: ci.Cursor, where: ci.Cursor) -> Variable:
        """The module's copy of a file-scope constant."""

    def libm_function(self, name: str, ftype: ct.FunctionType) -> ir.Function:
        """The declaration of a libm function."""

    def abi(self, name: str) -> FunctionAbi:
        """How the arguments and result of a function defined in the file are passed."""

    def external_function(self, decl: ci.Cursor, call: ci.Cursor) -> ExternalFunction:
        """The declaration of a function another object defines."""

    def implicitly_declared(self, decl: ci.Cursor) -> bool:
        """Is `decl` the declaration a call to an undeclared function made (C89's `int f()`,
        or clang's builtin of a library function)?"""


@dataclass
class FunctionState:
    """The mutable state of one function's lowering, shared by expressions and statements."""

    function: ir.Function
    builder: ir.IRBuilder
    locate: Callable[[SourceLocation], ir.DIValue]  # the !dbg node of a source position
    variables: dict[tuple, Variable] = field(default_factory=dict)
    vla_lengths: dict[int, ir.Value] = field(default_factory=dict)
    loops: list[LoopTargets] = field(default_factory=list)
    case_blocks: list[dict[int, ir.Block]] = field(default_factory=list)
    loop_count: int = 0
    #: the module's TBAA tags; None when C's aliasing rules may not be assumed
    tags: TypeTags | None = None
    ssa: SSABuilder = field(init=False)

    def __post_init__(self) -> None:
        self.ssa = SSABuilder(self.builder)


class ExpressionLowering:
    """Expression half of the function lowerer (statements.py adds statements)."""

    def __init__(self, services: ModuleServices, state: FunctionState):
        self.services = services
        self.s = state
        self.b = state.builder

    # ----------------------------------------------------------------- blocks and edges
    def new_block(self, name: str) -> ir.Block:
        return self.s.function.append_basic_block(name)

    def start_block(self, block: ir.Block) -> None:
        self.b.position_at_end(block)

    def branch(self, target: ir.Block) -> None:
        if not self.b.block.is_terminated:
            self.s.ssa.add_edge(self.b.block, target)
            self.b.branch(target)

    def cbranch(self, flag: ir.Value, if_true: ir.Block, if_false: ir.Block) -> None:
        self.s.ssa.add_edge(self.b.block, if_true)
        self.s.ssa.add_edge(self.b.block, if_false)
        self.b.cbranch(flag, if_true, if_false)

    def seal(self, *blocks: ir.Block) -> None:
        for block in blocks:
            self.s.ssa.seal(block)

    # ----------------------------------------------------------------- variables
    def read_var(self, var: Variable) -> ir.Value:
        return self.s.ssa.read(var, self.b.block)

    def load(self, lv: LValue) -> RValue:
        if lv.var is not None:
            return RValue(self.read_var(lv.var), lv.ctype)
        t = lv.ctype
        loaded = self.b.load(lv.address, typ=t.llvm(), align=_alignment(t))
        tag_access(self.s.tags, loaded, t)
        return RValue(loaded, t)

    def store(self, lv: LValue, value: ir.Value) -> None:
        if isinstance(lv.ctype, ct.StructType):
            self.copy_struct(lv.address, value, lv.ctype)
        elif lv.var is not None:
            self.s.ssa.write(lv.var, self.b.block, value)
        else:
            stored = self.b.store(value, lv.address, align=_alignment(lv.ctype))
            tag_access(self.s.tags, stored, lv.ctype)

    def value_of(self, lv: LValue, where: ci.Cursor) -> RValue:
        """An lvalue used as a value: arrays decay to a pointer to their first element; a
        struct's value is its address (aggregates are only ever copied, member by member of
        memory)."""
        if isinstance(lv.ctype, ct.StructType):
            return RValue(lv.address, _complete(lv.ctype, where))
        if isinstance(lv.ctype, ct.ArrayType):
            return RValue(lv.address, ct.PointerType(lv.ctype.element))
        if isinstance(lv.ctype, ct.FunctionType):
            raise Unsupported("function pointers are not supported", where)
        return self.load(lv)

    # ----------------------------------------------------------------- structs
    def copy_struct(self, destination: ir.Value, source: ir.Value, t: ct.StructType) -> None:
        """`*destination = *source` for a struct: llvm.memcpy (the passes treat it as an
        unknown call, so a loop that copies structs is left as it is)."""
        memcpy = self.b.module.declare_intrinsic(
            "llvm.memcpy", [ir.PointerType(), ir.PointerType(), I64]
        )
        size = ir.Constant(I64, t.size)
        self.b.call(memcpy, [destination, source, size, ir.Constant(ir.IntType(1), 0)])

    def struct_slot(self, t: ct.StructType, name: str) -> ir.Value:
        """A struct object of the function's frame (a local, a by-value parameter, a result)."""
        slot = self.entry_alloca(t.llvm(), name)
        slot.align = t.align
        return slot

    def entry_alloca(self, typ: ir.Type, name: str, count: ir.Value | None = None) -> ir.Value:
        entry = self.s.function.entry_basic_block
        builder = ir.IRBuilder(entry)
        builder.position_at_start(entry)
        slot = opaque(builder.alloca(typ, size=count, name=name))
        if self.b.block is entry:
            self.b.position_at_end(entry)  # the insertion index of the main builder moved
        return slot

    def member(self, c: ci.Cursor) -> LValue:
        """`s.m` and `p->m`: the member at its constant byte offset from the struct."""
        base = self.rvalue(children(c)[0])
        t = base.ctype.pointee if isinstance(base.ctype, ct.PointerType) else base.ctype
        if not isinstance(t, ct.StructType):
            raise Unsupported("member access on a non-struct", c)
        field = next((f for f in _complete(t, c).fields if f.name == c.spelling), None)
        if field is None:  # its bytes are in a `clang_types.BIT_FIELDS` field, or it is a
            # member of an anonymous struct or union member, which libclang does not list
            declared = c.referenced
            if declared is not None and declared.kind == K.FIELD_DECL and declared.is_bitfield():
                raise Unsupported(f"bit-field '{c.spelling}' is not supported", c)
            raise Unsupported(
                f"member '{c.spelling}' of an anonymous struct or union member is not supported",
                c,
            )
        address = base.value
        if field.offset:
            address = self.b.gep(
                address, [ir.Constant(I64, field.offset)], inbounds=True, source_etype=ir.IntType(8)
            )
        return LValue(field.ctype, address=address)

    def struct_parts(self, address: ir.Value, passing: InRegisters) -> list[ir.Value]:
        """The eightbytes of a struct in memory, as its registers carry them."""
        values = []
        for offset, typ in passing.parts:
            values.append(
                self.b.load(
                    self.at_offset(address, offset), typ=typ, align=_part_align(passing, offset)
                )
            )
        return values

    def store_struct_parts(
        self, address: ir.Value, passing: InRegisters, values: list[ir.Value]
    ) -> None:
        """Write the eightbytes a struct arrived in (registers) back to its memory."""
        for (offset, _), value in zip(passing.parts, values):
            self.b.store(value, self.at_offset(address, offset), align=_part_align(passing, offset))

    def at_offset(self, address: ir.Value, offset: int) -> ir.Value:
        if not offset:
            return address
        return self.b.gep(
            address, [ir.Constant(I64, offset)], inbounds=True, source_etype=ir.IntType(8)
        )

    def lookup(self, cursor: ci.Cursor) -> Variable:
        decl = cursor.referenced
        var = self.s.variables.get(declaration_key(decl))
        if var is not None:
            return var
        if decl.kind == K.VAR_DECL:
            return self.services.global_variable(decl, cursor)
        raise Unsupported(f"reference to '{cursor.spelling}' is not supported", cursor)

    # ----------------------------------------------------------------- sizes
    def length_of(self, array: ct.ArrayType, where: ci.Cursor) -> ir.Value:
        """The (i64) number of elements of one array dimension."""
        if array.vla_key is not None:
            return self.s.vla_lengths[array.vla_key]
        if array.length is None:
            raise Unsupported("array of unknown size used where its size matters", where)
        return ir.Constant(I64, array.length)

    def scalars_in(self, t: ct.CType, where: ci.Cursor) -> ir.Value:
        """The (i64) number of innermost scalars in one object of type `t`."""
        if isinstance(t, ct.ArrayType):
            inner = self.scalars_in(t.element, where)
            return _mul_nsw(self.b, self.length_of(t, where), inner)
        return ir.Constant(I64, 1)

    def pointer_offset(self, pointer: RValue, index: ir.Value, where: ci.Cursor) -> ir.Value:
        """`pointer + index` (index an i64 count of pointees), as a GEP inbounds."""
        assert isinstance(pointer.ctype, ct.PointerType)
        pointee = pointer.ctype.pointee
        if isinstance(pointee, ct.StructType):
            _complete(pointee, where)
        if isinstance(pointee, ct.VoidType):
            return self.b.gep(pointer.value, [index], inbounds=True, source_etype=ir.IntType(8))
        if ct.has_fixed_size(pointee):
            return self.b.gep(pointer.value, [index], inbounds=True, source_etype=pointee.llvm())
        assert isinstance(pointee, ct.ArrayType)
        offset = _mul_nsw(self.b, index, self.scalars_in(pointee, where))
        return self.b.gep(
            pointer.value, [offset], inbounds=True, source_etype=pointee.scalar.llvm()
        )

    # ----------------------------------------------------------------- entry points
    def rvalue(self, c: ci.Cursor) -> RValue:
        """Evaluate an expression for its value."""
        with self.at(c):
            return self._rvalue(c)

    def lvalue(self, c: ci.Cursor) -> LValue:
        """Evaluate an expression for the object it designates."""
        with self.at(c):
            return self._lvalue(c)

    @contextmanager
    def at(self, c: ci.Cursor) -> Iterator[None]:
        """Attribute the instructions emitted inside to the source location of `c`."""
        saved = self.b.debug_metadata
        self.b.debug_metadata = self.s.locate(location(c))
        try:
            yield
        finally:
            self.b.debug_metadata = saved

    def _rvalue(self, c: ci.Cursor) -> RValue:
        kind = c.kind
        if kind in (K.INTEGER_LITERAL, K.CHARACTER_LITERAL, K.FLOATING_LITERAL, K.CXX_UNARY_EXPR):
            return self.constant(c)
        if kind == K.PAREN_EXPR:
            return self.rvalue(children(c)[0])
        if kind == K.UNEXPOSED_EXPR:
            return self.implicit(c)
        if kind == K.CSTYLE_CAST_EXPR:
            return self.cast(c)
        if kind == K.DECL_REF_EXPR:
            decl = c.referenced
            if decl.kind == K.ENUM_CONSTANT_DECL:
                t = ctype_of(c.type, c)
                return RValue(ir.Constant(t.llvm(), _wrap(decl.enum_value, t)), t)
            if decl.kind == K.FUNCTION_DECL:
                raise Unsupported("function pointers are not supported", c)
            return self.value_of(self.lvalue(c), c)
        if kind in (K.ARRAY_SUBSCRIPT_EXPR, K.MEMBER_REF_EXPR):
            return self.value_of(self.lvalue(c), c)
        if kind == K.BINARY_OPERATOR:
            return self.binary(c)
        if kind == K.COMPOUND_ASSIGNMENT_OPERATOR:
            return self.compound_assignment(c)
        if kind == K.UNARY_OPERATOR:
            return self.unary(c)
        if kind == K.CONDITIONAL_OPERATOR:
            return self.conditional(c)
        if kind == K.CALL_EXPR:
            return self.call(c)
        if kind == K.STRING_LITERAL:
            return self.string_literal(c)
        if kind == K.StmtExpr:
            return self.statement_expression(c)
        raise Unsupported(_unsupported_expression(c), c)

    def _lvalue(self, c: ci.Cursor) -> LValue:
        kind = c.kind
        if kind == K.PAREN_EXPR:
            return self.lvalue(children(c)[0])
        if kind == K.DECL_REF_EXPR:
            var = self.lookup(c)
            if var.address is None:
                return LValue(var.ctype, var=var)
            return LValue(var.ctype, address=var.address)
        if kind == K.ARRAY_SUBSCRIPT_EXPR:
            base, index = children(c)
            pointer = self.rvalue(base)
            if not isinstance(pointer.ctype, ct.PointerType):  # `i[a]`
                base, index = index, base
                pointer = self.rvalue(base)
            address = self.pointer_offset(pointer, self.index(index), c)
            return LValue(pointer.ctype.pointee, address=address)
        if kind == K.UNARY_OPERATOR and unary_operator(c) == "*":
            pointer = self.rvalue(children(c)[0])
            if not isinstance(pointer.ctype, ct.PointerType):
                raise Unsupported("dereference of a non-pointer", c)
            return LValue(pointer.ctype.pointee, address=pointer.value)
        if kind == K.MEMBER_REF_EXPR:
            return self.member(c)
        if kind == K.UNEXPOSED_EXPR and len(children(c)) == 1:
            return self.lvalue(children(c)[0])
        if kind in (K.CALL_EXPR, K.CONDITIONAL_OPERATOR, K.BINARY_OPERATOR):
            value = self.rvalue(c)  # a struct value lives in memory: `f().m`, `(c ? a : b).m`
            if isinstance(value.ctype, ct.StructType):
                return LValue(value.ctype, address=value.value)
        raise Unsupported(_unsupported_expression(c), c)

    def statement_expression(self, c: ci.Cursor) -> RValue:
        """GNU `({ ... })`: lowered where statements are (statements.FunctionLowerer)."""
        raise Unsupported("GNU statement expressions are not supported here", c)

    def discard(self, c: ci.Cursor) -> None:
        """Evaluate an expression statement for its side effects."""
        self.rvalue(c)

    # ----------------------------------------------------------------- leaves and casts
    def constant(self, c: ci.Cursor) -> RValue:
        value = constant_value(c)
        if value is None and c.kind == K.CXX_UNARY_EXPR:
            return self.runtime_sizeof(c)
        if value is None:
            raise Unsupported("literal is not supported", c)
        t = ctype_of(c.type, c)
        if isinstance(t, ct.FloatType):
            return RValue(ir.Constant(t.llvm(), float(value)), t)
        return RValue(ir.Constant(t.llvm(), _wrap(int(value), t)), t)

    def runtime_sizeof(self, c: ci.Cursor) -> RValue:
        """`sizeof` of an object of variable-length array type, computed at run time."""
        operand = expression_children(c)
        if not operand or next(c.get_tokens()).spelling != "sizeof":
            raise Unsupported("sizeof of a variable-length array type name is not supported", c)
        t = self.lvalue(operand[0]).ctype
        scalar = t.scalar if isinstance(t, ct.ArrayType) else t
        size = _mul_nsw(self.b, self.scalars_in(t, c), ir.Constant(I64, ct.size_of(scalar)))
        result = ctype_of(c.type, c)
        return RValue(convert(self.b, size, ct.ULONG, result), result)

    def implicit(self, c: ci.Cursor) -> RValue:
        """An implicit conversion (or another node libclang does not expose)."""
        kids = children(c)
        if not kids:  # implicit value initialization
            t = ctype_of(c.type, c)
            return RValue(ir.Constant(t.llvm(), None), t)
        if len(kids) != 1:
            raise Unsupported(_unsupported_expression(c), c)
        if kids[0].kind == K.STRING_LITERAL and c.type.get_canonical().kind in ARRAY_KINDS:
            # `__func__`, `__FUNCTION__`, `__PRETTY_FUNCTION__`: gcc's are all the name in C
            # (clang's pretty one is a signature)
            return self.string_literal(kids[0], self.s.function.name.encode())
        return self.convert_to(self.rvalue(kids[0]), c.type, c)

    def cast(self, c: ci.Cursor) -> RValue:
        operand = expression_children(c)[-1]
        value = self.rvalue(operand)
        if c.type.get_canonical().kind == ci.TypeKind.VOID:
            return RValue(None, ct.VOID)
        return self.convert_to(value, c.type, c)

    def convert_to(self, value: RValue, clang_type: ci.Type, where: ci.Cursor) -> RValue:
        """Convert to the type clang gives a node, keeping our own pointer/array types."""
        kind = clang_type.get_canonical().kind
        if kind in ARRAY_KINDS:
            return value  # a parameter declared as an array: already its pointer
        if kind == ci.TypeKind.POINTER and _pointee_is_vla(clang_type):
            # only a pointer that already has this VLA shape (a VLA parameter passed on) can
            # keep its type; a cast that would give one new dimensions is not modelled
            if isinstance(value.ctype, ct.PointerType) and isinstance(
                value.ctype.pointee, ct.ArrayType
            ):
                return value
            raise Unsupported(
                "casts to pointers to variable-length arrays are not supported", where
            )
        target = ctype_of(clang_type, where)
        if isinstance(target, ct.VoidType):
            return RValue(None, ct.VOID)
        if isinstance(target, ct.StructType):
            return value  # the value of a struct lvalue: its address
        if isinstance(target, ct.PointerType) and isinstance(value.ctype, ct.PointerType):
            if _same_shape(target.pointee, value.ctype.pointee):
                return RValue(value.value, value.ctype)
        return RValue(convert(self.b, value.value, value.ctype, target), target)

    def index(self, c: ci.Cursor) -> ir.Value:
        """An integer expression used as an array index, computed in i64.

        Signed int arithmetic cannot overflow in a valid C program, so `i*w + j` evaluated as
        sext(i)*sext(w) + sext(j) with `nsw` is the same value; LLVM then sees one affine i64
        expression per access instead of a sign-extension per load.
        """
        c = strip_parens(c)
        t = ctype_of(c.type, c)
        assert isinstance(t, ct.IntType), t
        if t.signed and t.bits >= 32:
            if c.kind == K.BINARY_OPERATOR and binary_operator(c) in ("+", "-", "*"):
                lhs, rhs = children(c)
                a, b = self.index(lhs), self.index(rhs)
                op = {"+": self.b.add, "-": self.b.sub, "*": self.b.mul}[binary_operator(c)]
                result = op(a, b)
                result.flags.append("nsw")
                return result
            if c.kind == K.UNEXPOSED_EXPR and len(children(c)) == 1:
                inner = children(c)[0]
                inner_t = ctype_of(inner.type, inner)
                if (
                    isinstance(inner_t, ct.IntType)
                    and inner_t.signed
                    and 32 <= inner_t.bits <= t.bits
                ):
                    return self.index(inner)
            if c.kind in (K.INTEGER_LITERAL, K.CHARACTER_LITERAL):
                return ir.Constant(I64, int(constant_value(c)))
        value = self.rvalue(c)
        return to_index(self.b, value.value, value.ctype)

    # ----------------------------------------------------------------- operators
    def binary(self, c: ci.Cursor) -> RValue:
        op = binary_operator(c)
        lhs, rhs = children(c)
        if op == "=":
            target = self.lvalue(lhs)
            value = self.rvalue(rhs)
            converted = self.assignable(value, target.ctype, c)
            self.store(target, converted)
            return RValue(converted, target.ctype)
        if op == ",":
            self.discard(lhs)
            return self.rvalue(rhs)
        if op in ("&&", "||"):
            return self.logical_value(c)
        negated = _negated_float(lhs) if op == "+" else None
        if negated is not None and not _has_effects(rhs):
            # gcc folds `(-A) + B` into `B - A` before anything else (the same value), so
            # B's products come first in its block, which decides the multiply-adds it fuses
            # under contraction (`emit/cc_contraction`)
            b = self.rvalue(rhs)
            return self.arithmetic("-", b, self.rvalue(negated), c)
        a = self.rvalue(lhs)
        b = self.rvalue(rhs)
        return self.arithmetic(op, a, b, c)

    def arithmetic(self, op: str, a: RValue, b: RValue, c: ci.Cursor) -> RValue:
        """`a op b` for operands already in their common type (pointers handled here)."""
        if op in _COMPARISON:
            return RValue(int_result(self.b, self.compare(op, a, b)), ct.INT)
        if isinstance(a.ctype, ct.PointerType) or isinstance(b.ctype, ct.PointerType):
            return self.pointer_arithmetic(op, a, b, c)
        if op in ("<<", ">>"):
            assert isinstance(a.ctype, ct.IntType)
            amount = convert(self.b, b.value, b.ctype, a.ctype)
            if op == "<<":
                return RValue(self.b.shl(a.value, amount), a.ctype)
            shift = self.b.ashr if a.ctype.signed else self.b.lshr
            return RValue(shift(a.value, amount), a.ctype)
        if isinstance(a.ctype, ct.FloatType):
            fop = {"+": self.b.fadd, "-": self.b.fsub, "*": self.b.fmul, "/": self.b.fdiv}.get(op)
            if fop is None:
                raise Unsupported(f"operator '{op}' on floating point", c)
            invalid = machine_nan(op, a.value, b.value)
            if invalid is not None:
                return RValue(invalid, a.ctype)
            return RValue(fop(a.value, b.value), a.ctype)
        t = a.ctype
        assert isinstance(t, ct.IntType)
        b_value = convert(self.b, b.value, b.ctype, t)
        if op in ("+", "-", "*"):
            result = {"+": self.b.add, "-": self.b.sub, "*": self.b.mul}[op](a.value, b_value)
            if t.signed:
                result.flags.append("nsw")
            return RValue(result, t)
        if op == "/":
            return RValue((self.b.sdiv if t.signed else self.b.udiv)(a.value, b_value), t)
        if op == "%":
            return RValue((self.b.srem if t.signed else self.b.urem)(a.value, b_value), t)
        bitwise = {"&": self.b.and_, "|": self.b.or_, "^": self.b.xor}[op]
        return RValue(bitwise(a.value, b_value), t)

    def compare(self, op: str, a: RValue, b: RValue) -> ir.Value:
        """`a op b` as an i1, for operands in their common type (or pointers)."""
        if isinstance(a.ctype, ct.FloatType):
            if op == "!=":
                return self.b.fcmp_unordered("!=", a.value, b.value)
            return self.b.fcmp_ordered(op, a.value, b.value)
        if isinstance(a.ctype, ct.PointerType) or isinstance(b.ctype, ct.PointerType):
            left, right = self._as_pointer(a), self._as_pointer(b)
            return self.b.icmp_unsigned(op, left.value, right.value)
        assert isinstance(a.ctype, ct.IntType)
        cmp = self.b.icmp_signed if a.ctype.signed else self.b.icmp_unsigned
        return cmp(op, a.value, convert(self.b, b.value, b.ctype, a.ctype))

    def _as_pointer(self, value: RValue) -> RValue:
        if isinstance(value.ctype, ct.PointerType):
            return value
        return RValue(self.b.inttoptr(value.value, ir.PointerType()), ct.PointerType(ct.VOID))

    def pointer_arithmetic(self, op: str, a: RValue, b: RValue, c: ci.Cursor) -> RValue:
        if (
            op == "-"
            and isinstance(a.ctype, ct.PointerType)
            and isinstance(b.ctype, ct.PointerType)
        ):
            diff = self.b.sub(self.b.ptrtoint(a.value, I64), self.b.ptrtoint(b.value, I64))
            size = _mul_nsw(
                self.b, self.scalars_in(a.ctype.pointee, c), ir.Constant(I64, _scalar_size(a.ctype))
            )
            quotient = self.b.sdiv(diff, size)
            quotient.flags.append("exact")
            return RValue(quotient, ct.LONG)
        if op not in ("+", "-"):
            raise Unsupported(f"operator '{op}' on pointers", c)
        pointer, offset = (a, b) if isinstance(a.ctype, ct.PointerType) else (b, a)
        index = to_index(self.b, offset.value, offset.ctype)
        if op == "-":
            index = self.b.sub(ir.Constant(I64, 0), index)
            index.flags.append("nsw")
        return RValue(self.pointer_offset(pointer, index, c), pointer.ctype)

    def assignable(self, value: RValue, target: ct.CType, where: ci.Cursor) -> ir.Value:
        if isinstance(target, ct.PointerType) and isinstance(value.ctype, ct.PointerType):
            return value.value
        if isinstance(target, ct.StructType) and ct.same_struct(value.ctype, target):
            return value.value
        if isinstance(target, (ct.ArrayType, ct.FunctionType)) or value.value is None:
            raise Unsupported("assignment of this type is not supported", where)
        return convert(self.b, value.value, value.ctype, target)

    def compound_assignment(self, c: ci.Cursor) -> RValue:
        op = binary_operator(c)[:-1]
        lhs, rhs = children(c)
        target = self.lvalue(lhs)
        old = self.load(target)
        operand = self.rvalue(rhs)
        if isinstance(old.ctype, ct.PointerType):
            result = self.pointer_arithmetic(op, old, operand, c)
            self.store(target, result.value)
            return result
        if op in ("<<", ">>"):
            common = ct.promote(old.ctype)
        else:
            common = ct.usual_arithmetic_conversion(old.ctype, operand.ctype)
        a = RValue(convert(self.b, old.value, old.ctype, common), common)
        if op not in ("<<", ">>"):
            operand = RValue(convert(self.b, operand.value, operand.ctype, common), common)
        result = self.arithmetic(op, a, operand, c)
        stored = convert(self.b, result.value, result.ctype, old.ctype)
        self.store(target, stored)
        return RValue(stored, old.ctype)

    def unary(self, c: ci.Cursor) -> RValue:
        op = unary_operator(c)
        (operand,) = children(c)
        if op in ("pre++", "pre--", "post++", "post--"):
            return self.increment(c, operand, op)
        if op == "&":
            target = self.lvalue(operand)
            if target.address is None:
                raise Unsupported("address of a register variable", c)
            return RValue(target.address, ct.PointerType(target.ctype))
        if op == "*":
            return self.value_of(self.lvalue(c), c)
        if op in ("+", "__extension__"):
            return self.rvalue(operand)
        value = self.rvalue(operand)
        t = value.ctype
        if op == "-":
            if isinstance(t, ct.FloatType):
                return RValue(self.b.fneg(value.value), t)
            result = self.b.sub(ir.Constant(t.llvm(), 0), value.value)
            if isinstance(t, ct.IntType) and t.signed:
                result.flags.append("nsw")
            return RValue(result, t)
        if op == "~":
            return RValue(self.b.xor(value.value, ir.Constant(t.llvm(), -1)), t)
        if op == "!":
            return RValue(
                int_result(self.b, self.b.not_(truth_value(self.b, value.value, t))), ct.INT
            )
        raise Unsupported(f"unary operator '{op}' is not supported", c)

    def increment(self, c: ci.Cursor, operand: ci.Cursor, op: str) -> RValue:
        target = self.lvalue(operand)
        old = self.load(target)
        t = old.ctype
        delta = 1 if op.endswith("++") else -1
        if isinstance(t, ct.PointerType):
            new = self.pointer_offset(old, ir.Constant(I64, delta), c)
        elif isinstance(t, ct.FloatType):
            new = self.b.fadd(old.value, ir.Constant(t.llvm(), float(delta)))
        elif isinstance(t, ct.IntType) and t.is_bool:
            new = (
                ir.Constant(t.llvm(), 1)
                if delta > 0
                else self.b.xor(old.value, ir.Constant(t.llvm(), 1))
            )
        else:
            assert isinstance(t, ct.IntType)
            wide = ct.promote(t)
            widened = convert(self.b, old.value, t, wide)
            new = self.b.add(widened, ir.Constant(wide.llvm(), delta))
            if wide.signed:
                new.flags.append("nsw")
            new = convert(self.b, new, wide, t)
        self.store(target, new)
        return RValue(new if op.startswith("pre") else old.value, t)

    # ----------------------------------------------------------------- control in expressions
    def condition(self, c: ci.Cursor, if_true: ir.Block, if_false: ir.Block) -> None:
        """Branch on a C condition, short-circuiting && and || as C requires."""
        c = strip_parens(c)
        if c.kind == K.BINARY_OPERATOR and binary_operator(c) in ("&&", "||"):
            lhs, rhs = children(c)
            rest = self.new_block("land.rhs" if binary_operator(c) == "&&" else "lor.rhs")
            if binary_operator(c) == "&&":
                self.condition(lhs, rest, if_false)
            else:
                self.condition(lhs, if_true, rest)
            self.seal(rest)
            self.start_block(rest)
            self.condition(rhs, if_true, if_false)
            return
        if c.kind == K.UNARY_OPERATOR and unary_operator(c) == "!":
            self.condition(children(c)[0], if_false, if_true)
            return
        if c.kind == K.BINARY_OPERATOR and binary_operator(c) in _COMPARISON:
            with self.at(c):
                lhs, rhs = children(c)
                a, b = self.rvalue(lhs), self.rvalue(rhs)
                self.cbranch(self.compare(binary_operator(c), a, b), if_true, if_false)
            return
        value = self.rvalue(c)
        self.cbranch(truth_value(self.b, value.value, value.ctype), if_true, if_false)

    def split_on(self, c: ci.Cursor, prefix: str) -> tuple[ir.Block, ir.Block, ir.Block]:
        """Branch on condition `c` into new true/false blocks; also return their join block."""
        yes, no = self.new_block(f"{prefix}.true"), self.new_block(f"{prefix}.false")
        self.condition(c, yes, no)
        self.seal(yes, no)
        return yes, no, self.new_block(f"{prefix}.end")

    def logical_value(self, c: ci.Cursor) -> RValue:
        yes, no, end = self.split_on(c, "bool")
        self.start_block(yes)
        self.branch(end)
        self.start_block(no)
        self.branch(end)
        self.seal(end)
        self.start_block(end)
        phi = self.b.phi(ir.IntType(32))
        phi.add_incoming(ir.Constant(ir.IntType(32), 1), yes)
        phi.add_incoming(ir.Constant(ir.IntType(32), 0), no)
        return RValue(phi, ct.INT)

    def conditional(self, c: ci.Cursor) -> RValue:
        kids = children(c)
        if len(kids) != 3:
            raise Unsupported("the GNU '?:' operator is not supported", c)
        cond, then, otherwise = kids
        yes, no, end = self.split_on(cond, "cond")
        results = []
        for block, expr in ((yes, then), (no, otherwise)):
            self.start_block(block)
            value = self.rvalue(expr)
            results.append((value, self.b.block))
            self.branch(end)
        self.seal(end)
        self.start_block(end)
        (first, first_block), (second, second_block) = results
        if first.value is None or isinstance(first.ctype, ct.VoidType):
            return RValue(None, ct.VOID)
        phi = self.b.phi(first.value.type)
        phi.add_incoming(first.value, first_block)
        phi.add_incoming(second.value, second_block)
        return RValue(phi, first.ctype)

    # ----------------------------------------------------------------- calls
    def call(self, c: ci.Cursor) -> RValue:
        decl = c.referenced
        if decl is None or decl.kind != K.FUNCTION_DECL:
            raise Unsupported("calls through function pointers are not supported", c)
        name = decl.spelling
        if name in FORBIDDEN_CALLS:
            raise Unsupported(FORBIDDEN_CALLS[name], c)
        if name == ASSERT_FAIL:
            return self.assertion_failure(c)
        definition = decl.get_definition()
        known = canonical_math_name(name) in KNOWN_LIBRARY_CALLS
        if definition is None and not known and name.startswith("__builtin_"):
            raise Unsupported(f"the builtin '{name}' is not supported", c)
        undeclared = definition is None and self.services.implicitly_declared(decl)
        if undeclared and known:  # gcc's builtin, or `int sqrt()` under -fno-builtin, -std=c90
            raise Unsupported(
                f"call to undeclared library function '{name}' (its meaning depends on "
                "-fno-builtin and -std; include its header)",
                c,
            )
        if definition is None and not known and undeclared:
            raise Unsupported(
                f"call to undeclared function '{name}' (gcc assumes 'int {name}()'; "
                "unknown side effects) is not supported",
                c,
                not_a_kernel=True,
            )
        if definition is None and not known:
            return self.external_call(decl, c)
        if canonical_math_name(name) in ("nan", "nanf"):
            return self.quiet_nan(canonical_math_name(name), c)
        args = self.arguments(c)
        if definition is None:
            return self.library_call(canonical_math_name(name), args, c)
        function = self.services.callee(definition, c)
        abi = self.services.abi(name)
        if len(args) != len(abi.params) or not all(map(_passes_as, args, abi.params)):
            # only through a declaration without a prototype (`int f();`, or an implicit
            # one): the definition takes other arguments, undefined behaviour in C
            raise Unsupported(
                f"calls '{name}' with arguments that do not match its definition at "
                f"{location(definition)} (no prototype in scope)",
                c,
            )
        return self.call_with_abi(function, abi, args, ctype_of(c.type, c))

    def arguments(self, c: ci.Cursor) -> list[RValue]:
        """The arguments of call `c`, evaluated as gcc does on x86-64 (C leaves the order
        open, and programs print what it gives): last to first, except that a variable gcc
        keeps in a register, passed unconverted, is read by the call itself, after every
        other argument, also when the argument assigns it (`f(k++, k)` passes the new `k`,
        `f(k, ++k)` it twice; `f(next(&n), n)` the old `n`, which lives in memory)."""
        arguments = children(c)[1:]
        registers = [self._register_argument(a) for a in arguments]
        values: dict[int, RValue] = {}
        try:
            for k in reversed(range(len(arguments))):
                if registers[k] is None:
                    values[k] = self.rvalue(arguments[k])
                elif registers[k] is not arguments[k]:
                    self.rvalue(arguments[k])  # the assignment, for its effect
            for k, variable in enumerate(registers):
                if variable is not None:
                    values[k] = self.rvalue(variable)
        except Unsupported:  # the function is given up: report the leftmost construct
            for argument in arguments:
                self.rvalue(argument)
            raise
        return [values[k] for k in range(len(arguments))]

    def _register_argument(self, argument: ci.Cursor) -> ci.Cursor | None:
        """The variable a call reads for `argument` when gcc keeps it in a register: a local
        variable or parameter in SSA form, of the argument's own type, as the argument
        (returned as it is) or assigned by it (`k = 3`, `k += 2`, `++k`: its reference)."""
        node = _folded(strip_implicit(argument))
        if (
            node.kind == K.BINARY_OPERATOR
            and binary_operator(node) == "="
            or (node.kind == K.COMPOUND_ASSIGNMENT_OPERATOR)
        ):
            target = strip_implicit(children(node)[0])
        elif node.kind == K.UNARY_OPERATOR and unary_operator(node) in ("pre++", "pre--"):
            target = strip_implicit(children(node)[0])
        else:
            target = node
        if target.kind != K.DECL_REF_EXPR or target.referenced is None:
            return None
        decl = target.referenced
        if decl.kind not in (K.VAR_DECL, K.PARM_DECL):
            return None
        if decl.semantic_parent.kind == K.TRANSLATION_UNIT:
            return None  # a global: memory
        if not _same_register(ctype_of(target.type, target), ctype_of(argument.type, argument)):
            return None  # converted: gcc computes the conversion where it evaluates it
        if self.lookup(target).address is not None:
            return None
        return argument if target is node else target

    def external_call(self, decl: ci.Cursor, c: ci.Cursor) -> RValue:
        """A call of a function another object defines (the C library's, another file's):
        opaque, it may read and write any memory the program can reach."""
        external = self.services.external_function(decl, c)
        args = self.arguments(c)
        fixed = len(external.abi.params)
        if not all(map(_passes_as, args[:fixed], external.abi.params)):
            raise Unsupported(f"arguments of '{decl.spelling}' that do not match its prototype", c)
        extra = [self.variadic_argument(a, c) for a in args[fixed:]]
        return self.call_with_abi(
            external.function, external.abi, args[:fixed], ctype_of(c.type, c), extra
        )

    def variadic_argument(self, arg: RValue, c: ci.Cursor) -> ir.Value:
        """An argument of a `...` parameter, after C's default argument promotions."""
        t = arg.ctype
        if isinstance(t, ct.FloatType) and t.bits < 64:
            return convert(self.b, arg.value, t, ct.DOUBLE)
        if isinstance(t, ct.IntType) and t.bits < 32:
            return convert(self.b, arg.value, t, ct.INT)
        if isinstance(t, ct.StructType) or isinstance(arg.value.type, ir.VectorType):
            raise Unsupported("a struct or vector passed to a '...' parameter", c)
        return arg.value

    def call_with_abi(
        self,
        function: ir.Function,
        abi: FunctionAbi,
        args: list[RValue],
        result_t: ct.CType,
        extra: Sequence[ir.Value] = (),
    ) -> RValue:
        """A call, structs passed as the convention says; `extra`: arguments of `...`."""
        values: list[ir.Value] = []
        result_slot = None
        if isinstance(abi.result, (InMemory, InRegisters)):
            result_slot = self.struct_slot(abi.result.struct, "call.result")
        if isinstance(abi.result, InMemory):
            values.append(result_slot)
        for passing, arg in zip(abi.params, args):
            if isinstance(passing, InRegisters):
                values += self.struct_parts(arg.value, passing)
            else:  # a scalar, or the address of a struct the callee receives `byval`
                values.append(arg.value)
        call = self.b.call(function, [*values, *extra])
        if isinstance(abi.result, InRegisters):
            parts = abi.result.parts
            returned = (
                [call]
                if len(parts) == 1
                else [self.b.extract_value(call, k) for k in range(len(parts))]
            )
            self.store_struct_parts(result_slot, abi.result, returned)
        if result_slot is not None:
            return RValue(result_slot, result_t)
        return RValue(None if isinstance(result_t, ct.VoidType) else call, result_t)

    def assertion_failure(self, c: ci.Cursor) -> RValue:
        """A failing `assert(e)`: glibc's macro calls `__assert_fail("e", __FILE__, __LINE__,
        __PRETTY_FUNCTION__)`, which prints the message and aborts; the cc-built program
        passes the same strings (cc -E already made the first two literals)."""
        arguments = [a.value for a in self.arguments(c)]
        callee = self.b.module.globals.get(ASSERT_FAIL)
        if callee is None:
            signature = ir.FunctionType(ir.VoidType(), [a.type for a in arguments])
            callee = ir.Function(self.b.module, signature, name=ASSERT_FAIL)
            for attribute in ("noreturn", "nounwind", "cold"):
                callee.attributes.add(attribute)
        if [a.type for a in arguments] != [a.type for a in callee.args]:
            raise Unsupported(f"call to '{ASSERT_FAIL}' with other arguments than glibc's", c)
        self.b.call(callee, arguments)
        return RValue(None, ct.VOID)

    def string_literal(self, c: ci.Cursor, value: bytes | None = None) -> RValue:
        """A string literal (or `value`) as a private constant, decayed to its pointer."""
        if value is None:
            value = string_value(c)
        if value is None:
            raise Unsupported("wide and prefixed string literals are not supported", c)
        t = ctype_of(c.type, c)
        assert isinstance(t, ct.ArrayType)
        data = bytearray(value + b"\0")
        text = ir.Constant(ir.ArrayType(ir.IntType(8), len(data)), data)
        module = self.b.module
        constant = ir.GlobalVariable(module, text.type, name=module.get_unique_name(".str"))
        constant.linkage = "private"
        constant.global_constant = True
        constant.unnamed_addr = True
        constant.initializer = text
        return RValue(opaque(constant), ct.PointerType(t.element, const_pointee=True))

    def quiet_nan(self, name: str, c: ci.Cursor) -> RValue:
        """`nan("")` / `nanf("")` (what the NAN macro expands to): the default quiet NaN."""
        argument = strip_parens(children(c)[-1])
        while argument.kind == K.UNEXPOSED_EXPR and children(argument):
            argument = children(argument)[0]
        if argument.kind != K.STRING_LITERAL or argument.spelling != '""':
            raise Unsupported(f"{name} with a payload is not supported", c)
        t = ct.FLOAT if name == "nanf" else ct.DOUBLE
        return RValue(ir.Constant(t.llvm(), math.nan), t)

    def library_call(self, name: str, args: list[RValue], c: ci.Cursor) -> RValue:
        if name == "__builtin_assume_aligned":
            alignment = _assumed_alignment(args)
            if alignment > 1:
                return RValue(assume_aligned(self.b, args[0].value, alignment), args[0].ctype)
        if name in PASS_THROUGH_BUILTINS:
            return args[0]
        if name in EXACT_INTRINSICS:
            stem, kind = EXACT_INTRINSICS[name]
            t = ct.FLOAT if kind == "f32" else ct.DOUBLE
            operand = convert(self.b, args[0].value, args[0].ctype, t)
            fn = self.b.module.declare_intrinsic(stem, [t.llvm()])
            return RValue(self.b.call(fn, [operand]), t)
        if name in INTEGER_ABS:
            bits = INTEGER_ABS[name]
            t = ct.INT if bits == 32 else ct.LONG
            operand = convert(self.b, args[0].value, args[0].ctype, t)
            fnty = ir.FunctionType(t.llvm(), [t.llvm(), ir.IntType(1)])
            fn = self.b.module.declare_intrinsic("llvm.abs", [t.llvm()], fnty=fnty)
            return RValue(self.b.call(fn, [operand, ir.Constant(ir.IntType(1), 0)]), t)
        if name in INFINITIES:
            t = ct.FLOAT if name.endswith("f") else ct.DOUBLE
            return RValue(ir.Constant(t.llvm(), math.inf), t)
        if name in fp_builtins.NAMES:
            value, t = fp_builtins.lower(self.b, name, [a.value for a in args])
            return RValue(value, t)
        if name == "isnan":
            a = args[0]
            return RValue(
                int_result(self.b, self.b.fcmp_unordered("uno", a.value, a.value)), ct.INT
            )
        decl_type = ctype_of(c.referenced.type, c)
        assert isinstance(decl_type, ct.FunctionType) and name in LIBM_FUNCTIONS
        fn = self.services.libm_function(name, decl_type)
        values = [convert(self.b, a.value, a.ctype, p) for a, p in zip(args, decl_type.params)]
        return RValue(self.b.call(fn, values), decl_type.result)


def _assumed_alignment(args: list[RValue]) -> int:
    """The alignment `__builtin_assume_aligned(p, N[, offset])` gives `p` (1 if not constant):
    with an offset, `p - offset` is N-aligned, so p is as aligned as the offset allows."""
    constants = [a.value for a in args[1:]]
    if not all(isinstance(v, ir.Constant) for v in constants):
        return 1
    alignment = int(constants[0].constant)
    if not is_power_of_two(alignment):
        return 1
    if len(constants) > 1:
        alignment = min(alignment, power_of_two_dividing(int(constants[1].constant)))
    return alignment


def _alignment(t: ct.CType) -> int:
    return ct.alignment_of(t)


def _complete(t: ct.StructType, where: ci.Cursor) -> ct.StructType:
    """`t`, whose layout is known here (not a struct seen through a pointer member of its
    own definition, nor an incomplete one)."""
    if t.is_opaque and not t.name.startswith("struct "):  # a function (`clang_types`)
        raise Unsupported(f"dereferencing a function pointer ('{t} *') is not supported", where)
    if t.is_opaque:
        raise Unsupported(
            f"'{t}' reached through a pointer member of its own definition is not supported",
            where,
        )
    return t


def _same_register(variable: ct.CType, argument: ct.CType) -> bool:
    """Does gcc pass a register variable of type `variable` as an argument of type `argument`
    unconverted? For integers of the same width and signedness (`long` as `long long`), but
    not below int (gcc promotes `short` and `char` arguments), floats of one width, and any
    pointer as another pointer."""
    if isinstance(variable, ct.IntType) and isinstance(argument, ct.IntType):
        same = (variable.bits, variable.signed) == (argument.bits, argument.signed)
        return same and variable.bits >= 32
    if isinstance(variable, ct.FloatType) and isinstance(argument, ct.FloatType):
        return variable.bits == argument.bits
    return isinstance(variable, ct.PointerType) and isinstance(argument, ct.PointerType)


#: integer operations gcc folds away with this right operand (`k + 0`, `k * 1`)
_IDENTITIES = {"+": 0, "-": 0, "*": 1, "/": 1, "|": 0, "^": 0, "<<": 0, ">>": 0}


def _folded(node: ci.Cursor) -> ci.Cursor:
    """What gcc folds `node` to before it evaluates arguments, as far as a variable's read
    goes: through casts between types of one register, `+x`, `-(-x)`, `(0, x)`, `1 ? x : y`
    and integer identities (`x + 0`, `x * 1`); `node` itself otherwise."""
    while True:
        parts = children(node)
        if not parts:
            return node
        inner = strip_implicit(parts[-1])
        if node.kind == K.CSTYLE_CAST_EXPR:
            if not _same_register(ctype_of(inner.type, inner), ctype_of(node.type, node)):
                return node
        elif node.kind == K.UNARY_OPERATOR and unary_operator(node) == "+":
            pass
        elif node.kind == K.UNARY_OPERATOR and unary_operator(node) == "-":
            if not (inner.kind == K.UNARY_OPERATOR and unary_operator(inner) == "-"):
                return node
            inner = strip_implicit(children(inner)[0])
        elif node.kind == K.BINARY_OPERATOR and binary_operator(node) == ",":
            if constant_value(strip_implicit(parts[0])) is None:
                return node
        elif node.kind == K.CONDITIONAL_OPERATOR:
            test = constant_value(strip_implicit(parts[0]))
            if test is None:
                return node
            inner = strip_implicit(parts[1] if test else parts[2])
        elif node.kind == K.BINARY_OPERATOR and binary_operator(node) in _IDENTITIES:
            right = constant_value(strip_implicit(parts[1]))
            identity = _IDENTITIES[binary_operator(node)]
            if isinstance(right, float) or right != identity:
                return node
            if not isinstance(ctype_of(node.type, node), ct.IntType):
                return node
            inner = strip_implicit(parts[0])
        else:
            return node
        node = strip_implicit(inner)


def _passes_as(arg: RValue, passing: Passing) -> bool:
    """Does an argument fit the parameter the definition declares (as LLVM passes it)?"""
    if isinstance(passing, Direct):
        return not isinstance(arg.ctype, ct.StructType) and arg.value.type == passing.type
    return ct.same_struct(arg.ctype, passing.struct)


def _part_align(passing: InRegisters, offset: int) -> int:
    """The alignment of an eightbyte of a struct: the struct's, or 8 past its start."""
    return min(passing.struct.align, 8) if offset else passing.struct.align


def _scalar_size(t: ct.PointerType) -> int:
    pointee = t.pointee
    if isinstance(pointee, ct.ArrayType):
        return ct.size_of(pointee.scalar)
    return 1 if isinstance(pointee, ct.VoidType) else ct.size_of(pointee)


def _mul_nsw(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    if isinstance(y, ir.Constant) and y.constant == 1:
        return x
    if isinstance(x, ir.Constant) and isinstance(y, ir.Constant):
        return ir.Constant(I64, x.constant * y.constant)
    product = b.mul(x, y)
    product.flags.append("nsw")
    return product


def _wrap(value: int, t: ct.CType) -> int:
    """An integer in the signed range of its LLVM width (how LLVM prints constants)."""
    assert isinstance(t, ct.IntType)
    mask = (1 << t.bits) - 1
    value &= mask
    return value - (1 << t.bits) if value >> (t.bits - 1) else value


def _pointee_is_vla(clang_type: ci.Type) -> bool:
    t = clang_type.get_canonical()
    while t.kind == ci.TypeKind.POINTER:
        t = t.get_pointee().get_canonical()
    while t.kind in ARRAY_KINDS:
        if t.kind == ci.TypeKind.VARIABLEARRAY:
            return True
        t = t.element_type.get_canonical()
    return False


def _same_shape(a: ct.CType, b: ct.CType) -> bool:
    """Pointees that differ only in qualifiers or in what we know of their VLA extents."""
    if isinstance(a, ct.ArrayType) and isinstance(b, ct.ArrayType):
        return _same_shape(a.element, b.element)
    return type(a) is type(b) and (
        not isinstance(a, ct.IntType) or (a.bits, a.signed) == (b.bits, b.signed)
    )


def _unsupported_expression(c: ci.Cursor) -> str:
    names = {
        K.INIT_LIST_EXPR: "initializer lists outside declarations are not supported",
        K.COMPOUND_LITERAL_EXPR: "compound literals are not supported",
    }
    if c.kind in names:
        return names[c.kind]
    tokens = spelled_tokens(c)
    if c.kind == K.UNEXPOSED_EXPR and tokens[:1] in (["."], ["["]):
        return "designated initializers are not supported"
    if c.kind == K.UNEXPOSED_EXPR and any(
        a == "?" and b == ":" for a, b in zip(tokens, tokens[1:])
    ):
        return "the GNU '?:' operator is not supported"
    if tokens and _KEYWORD_OPERATOR.fullmatch(tokens[0]):  # _Generic, __builtin_offsetof
        return f"'{tokens[0]}' is not supported"
    if tokens:
        return f"expression '{' '.join(tokens[:8])}' is not supported"
    macro = macro_at(c)
    if macro is not None:
        return f"the expansion of macro '{macro}' is not supported here"
    return f"expression ({c.kind.name.lower()} of type '{c.type.spelling}') is not supported"


#: operators spelled as keywords or builtins (the construct has that name)
_KEYWORD_OPERATOR = re.compile(r"_Generic|_Alignof|__builtin_\w+|__real__|__imag__")


_FLOATING = frozenset({ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE, ci.TypeKind.LONGDOUBLE})
_EFFECTS = frozenset({K.CALL_EXPR, K.COMPOUND_ASSIGNMENT_OPERATOR})


def _negated_float(cursor: ci.Cursor) -> ci.Cursor | None:
    """The operand of `-X` (in parentheses or not) of a floating type without side effects,
    or None."""
    cursor = strip_parens(cursor)
    if cursor.kind != K.UNARY_OPERATOR or unary_operator(cursor) != "-":
        return None
    if cursor.type.get_canonical().kind not in _FLOATING or _has_effects(cursor):
        return None
    return children(cursor)[0]


def _has_effects(cursor: ci.Cursor) -> bool:
    """May evaluating `cursor` have side effects (a call, an assignment, `++`/`--`)?"""
    for node in walk(cursor):
        if node.kind in _EFFECTS:
            return True
        if node.kind == K.BINARY_OPERATOR and binary_operator(node) == "=":
            return True
        if node.kind == K.UNARY_OPERATOR and unary_operator(node).endswith(("++", "--")):
            return True
    return False
