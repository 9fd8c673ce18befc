"""Lowering of one C function: parameters, declarations and statements.

Loops come out in LLVM's canonical shape: a preheader, a header holding the induction phis,
one latch (the `continue` target) and one exit block (the `break` target), so the loop
passes find them without a loop-simplify step.
"""

from __future__ import annotations

import dataclasses
import itertools

import clang.cindex as ci
from llvmlite import ir

from ..ir_passes.core.cfg import reverse_postorder, successors
from ..ir_passes.core.deep import MAX_NESTING
from ..ir_passes.core.rewrite import opaque
from ..ir_passes.core.ssa import remove_trivial_phis
from ..ir_passes.core.symbolic import OPERATORS as SYMBOLIC_OPERATORS
from ..ir_passes.core.symbolic import Expr
from . import c_types as ct
from .abi import InMemory, InRegisters, Passing
from .clang_ast import (
    K,
    binary_operator,
    children,
    constant_value,
    declaration_key,
    expression_children,
    for_parts,
    location,
    presumed,
    strip_parens,
    unary_operator,
    var_initializer,
    walk_with_depth,
)
from .clang_types import ARRAY_KINDS, BIT_FIELDS, ctype_of
from .conversions import convert
from .declarations import aligned_attribute, type_alignment
from .expressions import (
    ExpressionLowering,
    FunctionState,
    LoopTargets,
    ModuleServices,
    RValue,
    Variable,
)
from .initializers import flatten, fold
from .signature import Param
from .tbaa import tag_access
from .unsupported import Unsupported

#: the largest function body lowered (a 10 000-statement function took minutes and
#: gigabytes in `check`): every later stage's work grows with it
MAX_NODES = 50_000

_REJECTED_STATEMENTS = {
    K.GOTO_STMT: "goto is not supported",
    K.INDIRECT_GOTO_STMT: "goto is not supported",
    K.ASM_STMT: "inline assembly is not supported",
    K.MS_ASM_STMT: "inline assembly is not supported",
}


def check_bounds(cursor: ci.Cursor) -> list[ci.Cursor]:
    """Refuse a function beyond MAX_NODES syntax nodes or MAX_NESTING levels, before any other
    walk of it: a 5 MB function took minutes and gigabytes only to be checked for volatiles.
    Returns its nodes in preorder, for the checks that follow (each walk through libclang
    costs a callback per node)."""
    nodes = []
    for count, (c, depth) in enumerate(walk_with_depth(cursor)):
        if count > MAX_NODES:
            raise Unsupported(f"function body larger than {MAX_NODES} syntax nodes", cursor)
        if depth > MAX_NESTING:
            what = "expression" if c.kind.is_expression() else "statement"
            raise Unsupported(f"{what} nesting deeper than {MAX_NESTING} levels", c)
        nodes.append(c)
    return nodes


class FunctionLowerer(ExpressionLowering):
    """Lowers the body of one FUNCTION_DECL into an already declared `ir.Function`."""

    def __init__(
        self,
        services: ModuleServices,
        state: FunctionState,
        cursor: ci.Cursor,
        nodes: list[ci.Cursor],  # the function's syntax nodes (`check_bounds`)
    ):
        super().__init__(services, state)
        self.cursor = cursor
        self.nodes = nodes
        self.result_type = ctype_of(cursor.type.get_result(), cursor)
        self.address_taken: set[tuple] = set()

    # ----------------------------------------------------------------- the function
    def lower(self) -> tuple[Param, ...]:
        """Lower the function; return its parameters as declared."""
        if (
            self.cursor.type.kind == ci.TypeKind.FUNCTIONPROTO
            and self.cursor.type.is_function_variadic()
        ):
            raise Unsupported("variadic functions are not supported", self.cursor)
        body = [c for c in children(self.cursor) if c.kind == K.COMPOUND_STMT][-1]
        self.prescan()
        entry = self.new_block("entry")
        self.start_block(entry)
        self.seal(entry)
        with self.at(self.cursor):
            params = self.bind_parameters()
        self.statement(body)
        end = body.extent.end  # just past the closing brace, where C returns implicitly
        where = dataclasses.replace(presumed(end), column=end.column - 1)
        self.b.debug_metadata = self.s.locate(where)
        self.finish()
        return params

    def prescan(self) -> None:
        """Reject what cannot be lowered before lowering anything; find address-taken locals."""
        for c in self.nodes:
            if c.kind in _REJECTED_STATEMENTS:
                raise Unsupported(_REJECTED_STATEMENTS[c.kind], c)
            if c.kind == K.UNARY_OPERATOR and unary_operator(c) == "&":
                target = strip_parens(children(c)[0])
                if target.kind == K.DECL_REF_EXPR and target.referenced is not None:
                    self.address_taken.add(declaration_key(target.referenced))

    def bind_parameters(self) -> tuple[Param, ...]:
        params: list[Param] = []
        pending: list[tuple[object, ci.Cursor]] = []
        decls = [c for c in children(self.cursor) if c.kind == K.PARM_DECL]
        ftype = self.cursor.type
        # `void f()` defines a function of no parameters without a prototype
        passed_types = (
            list(ftype.argument_types()) if ftype.kind == ci.TypeKind.FUNCTIONPROTO else []
        )
        abi = self.services.abi(self.s.function.name)
        received = abi.arguments(self.s.function.args)
        for decl, passing, args, passed in zip(decls, abi.params, received, passed_types):
            declared, vla_sizes = self.declared_type(decl)
            pending += vla_sizes
            arg = args[0]
            value: ir.Value = arg
            if isinstance(declared, ct.StructType):
                self.s.variables[declaration_key(decl)] = Variable(
                    decl.spelling, declared, self.struct_parameter(decl, passing, args)
                )
                params.append(Param(decl.spelling, declared, location(decl)))
                continue
            if isinstance(declared, ct.ArrayType):
                var_type: ct.CType = ct.PointerType(
                    declared.element, restrict="noalias" in arg.attributes
                )
            else:
                var_type = declared
                if arg.type != declared.llvm():
                    # a K&R definition receives its arguments promoted (float as double,
                    # char and short as int); the parameter converts them back
                    declared = ctype_of(passed, decl)
                    value = convert(self.b, arg, declared, var_type)
            params.append(Param(decl.spelling, declared, location(decl)))
            self.define(decl, var_type, value)
        for key, size in pending:
            self.s.vla_lengths[key] = self.index(size)
        return tuple(params)

    def struct_parameter(self, decl: ci.Cursor, passing: Passing, args: list[ir.Value]) -> ir.Value:
        """Where a struct parameter is: the caller's `byval` copy, or a slot of this frame
        holding the eightbytes it arrived in."""
        if isinstance(passing, InMemory):
            return args[0]
        assert isinstance(passing, InRegisters)
        slot = self.struct_slot(passing.struct, decl.spelling)
        self.store_struct_parts(slot, passing, args)
        return slot

    def define(self, decl: ci.Cursor, t: ct.CType, value: ir.Value | None) -> Variable:
        """Create a scalar variable (SSA unless its address is taken) with an initial value."""
        key = declaration_key(decl)
        if key in self.address_taken:
            var = Variable(decl.spelling, t, self.entry_alloca(t.llvm(), decl.spelling))
            if value is not None:
                stored = self.b.store(value, var.address, align=ct.size_of(t))
                tag_access(self.s.tags, stored, t)
        else:
            var = Variable(decl.spelling, t)
            self.s.ssa.declare(var, t.llvm())
            if value is not None:
                self.s.ssa.write(var, self.b.block, value)
        self.s.variables[key] = var
        return var

    def finish(self) -> None:
        if not self.b.block.is_terminated:
            returned = self.s.function.function_type.return_type
            if isinstance(returned, ir.VoidType):
                self.b.ret_void()
            elif isinstance(self.result_type, ct.StructType):  # indeterminate, as in C
                self.b.ret(ir.Constant(returned, ir.Undefined))
            elif self.s.function.name == "main":
                self.b.ret(ir.Constant(self.result_type.llvm(), 0))
            else:  # falling off the end: the value is indeterminate, as in C
                self.b.ret(ir.Constant(self.result_type.llvm(), ir.Undefined))
        keep_reachable_blocks_in_order(self.s.function)
        remove_trivial_phis(self.s.function)

    # ----------------------------------------------------------------- declarations
    def declared_type(self, decl: ci.Cursor) -> tuple[ct.CType, list[tuple[object, ci.Cursor]]]:
        """The C type of a declaration, with variable-length dimensions identified.

        Returns the type and, for each VLA dimension, its key and size expression (which C
        evaluates where the declaration is).
        """
        levels: list[ci.Type] = []
        t = decl.type
        pointee = (
            t.get_canonical().get_pointee()
            if t.get_canonical().kind == ci.TypeKind.POINTER
            else None
        )
        to_array = pointee is not None and pointee.get_canonical().kind in ARRAY_KINDS
        if to_array:  # `float (*A)[m]`
            t = pointee
        while t.get_canonical().kind in ARRAY_KINDS:
            levels.append(t.get_canonical())
            t = t.get_canonical().element_type
        if not levels:
            return ctype_of(decl.type, decl), []
        element = ctype_of(t, decl)
        variable = [lv.kind == ci.TypeKind.VARIABLEARRAY for lv in levels]
        sizes: list[ci.Cursor | None] = [None] * len(levels)
        if any(variable):
            init = var_initializer(decl)
            exprs = [e for e in expression_children(decl) if init is None or e != init]
            sized = [i for i, lv in enumerate(levels) if lv.kind != ci.TypeKind.INCOMPLETEARRAY]
            if len(exprs) != len(sized):
                raise Unsupported("cannot find the size expressions of this array", decl)
            for i, expr in zip(sized, reversed(exprs)):  # libclang lists the innermost first
                sizes[i] = expr
        pending: list[tuple[object, ci.Cursor]] = []
        result: ct.CType = element
        for depth in reversed(range(len(levels))):
            level = levels[depth]
            if level.kind == ci.TypeKind.CONSTANTARRAY:
                result = ct.ArrayType(result, level.get_array_size())
            elif level.kind == ci.TypeKind.INCOMPLETEARRAY:
                result = ct.ArrayType(result, None)
            else:
                key = (declaration_key(decl), depth)
                size = sizes[depth]
                result = ct.ArrayType(result, symbolic(size), vla_key=key)
                pending.append((key, size))
        if to_array:  # as a parameter, `float (*A)[m]` is the same as `float A[][m]`
            result = (
                ct.ArrayType(result, None) if decl.kind == K.PARM_DECL else ct.PointerType(result)
            )
        return result, pending

    def local_declaration(self, decl: ci.Cursor) -> None:
        storage = decl.storage_class
        if storage == ci.StorageClass.STATIC:
            var = self.services.global_variable(decl, decl)
            self.s.variables[declaration_key(decl)] = var
            return
        if storage == ci.StorageClass.EXTERN:
            raise Unsupported("extern declarations inside functions are not supported", decl)
        t, pending = self.declared_type(decl)
        for key, size in pending:
            if self.s.loops:
                raise Unsupported(
                    "variable-length array declared inside a loop is not supported", decl
                )
            self.s.vla_lengths[key] = self.index(size)
        init = var_initializer(decl)
        if isinstance(t, ct.StructType):
            self.struct_local(decl, t, init)
            return
        if isinstance(t, ct.ArrayType):
            if t.is_vla:
                count = self.scalars_in(t, decl)
                address = opaque(self.b.alloca(t.scalar.llvm(), size=count, name=decl.spelling))
            else:
                address = self.entry_alloca(t.llvm(), decl.spelling)
            alignment = max(aligned_attribute(decl), type_alignment(decl.type))
            if isinstance(t.scalar, ct.StructType):  # its LLVM type is bytes: say how aligned
                alignment = max(alignment, t.scalar.align)
            if alignment > 1:
                address.align = alignment
            var = Variable(decl.spelling, t, address)
            self.s.variables[declaration_key(decl)] = var
            if init is not None:
                self.initialize_array(var, init)
            return
        value = None
        if init is not None:
            rv = self.rvalue(init)
            value = self.assignable(rv, t, init)
        self.define(decl, t, value)

    def struct_local(self, decl: ci.Cursor, t: ct.StructType, init: ci.Cursor | None) -> None:
        """A struct variable, always in memory: initialized by a braced list or a struct value."""
        address = self.struct_slot(t, decl.spelling)
        alignment = max(aligned_attribute(decl), type_alignment(decl.type))
        if alignment > t.align:
            address.align = alignment
        self.s.variables[declaration_key(decl)] = Variable(decl.spelling, t, address)
        if init is None:
            return
        if strip_parens(init).kind == K.INIT_LIST_EXPR:
            self.zero(address, t)
            self.initialize_at(address, t, strip_parens(init))
        else:
            value = self.rvalue(init)
            self.copy_struct(address, self.assignable(value, t, init), t)

    def initialize_array(self, var: Variable, init: ci.Cursor) -> None:
        t = var.ctype
        assert isinstance(t, ct.ArrayType)
        if t.is_vla:
            raise Unsupported("variable-length arrays cannot be initialized", init)
        if isinstance(t.scalar, ct.StructType):
            self.zero(var.address, t)
            self.initialize_at(var.address, t, init)
            return
        slots = flatten(init, t)
        if len(slots) < ct.size_of(t) // ct.size_of(t.scalar):
            self.zero(var.address, t)
        self.store_slots(var.address, t, slots)

    def zero(self, address: ir.Value, t: ct.CType) -> None:
        """Zero an object (what an initializer list leaves out is zero, padding included)."""
        memset = self.b.module.declare_intrinsic("llvm.memset", [ir.PointerType(), ir.IntType(64)])
        size = ir.Constant(ir.IntType(64), ct.size_of(t))
        self.b.call(
            memset, [address, ir.Constant(ir.IntType(8), 0), size, ir.Constant(ir.IntType(1), 0)]
        )

    def store_slots(self, address: ir.Value, t: ct.ArrayType, slots: dict[int, ci.Cursor]) -> None:
        """Store the initialized scalar slots (row-major) of an array of scalars."""
        scalar = t.scalar
        for slot, expr in sorted(slots.items()):
            value = self.rvalue(expr)
            converted = convert(self.b, value.value, value.ctype, scalar)
            target = self.b.gep(
                address,
                [ir.Constant(ir.IntType(64), slot)],
                inbounds=True,
                source_etype=scalar.llvm(),
            )
            stored = self.b.store(converted, target, align=ct.size_of(scalar))
            tag_access(self.s.tags, stored, scalar)

    def initialize_at(self, address: ir.Value, t: ct.CType, init: ci.Cursor) -> None:
        """Store a (zeroed) object's initializer: fully braced lists for its structs and arrays
        of structs, as C reads them; `{0}` zeroes any aggregate. Designators and brace
        elision inside a struct are refused."""
        if init.kind != K.INIT_LIST_EXPR:
            if isinstance(t, (ct.StructType, ct.ArrayType)):
                if isinstance(t, ct.StructType) and ct.same_struct(ctype_of(init.type, init), t):
                    self.copy_struct(address, self.assignable(self.rvalue(init), t, init), t)
                    return
                raise Unsupported("brace-elided initializers of structs are not supported", init)
            value = self.rvalue(init)
            self.b.store(self.assignable(value, t, init), address, align=ct.alignment_of(t))
            return
        items = children(init)
        if any(_designated(item) for item in items):
            raise Unsupported("designated initializers are not supported", init)
        if len(items) == 1 and _is_zero(items[0]) and isinstance(t, ct.StructType):
            if isinstance(t.fields[0].ctype, (ct.StructType, ct.ArrayType)):
                return  # `{0}`: all zero, as the object already is
        if isinstance(t, ct.ArrayType) and not isinstance(t.scalar, ct.StructType):
            self.store_slots(address, t, flatten(init, t))
            return
        if isinstance(t, ct.ArrayType):
            members = [(k * ct.size_of(t.element), t.element) for k in range(int(t.length))]
        elif isinstance(t, ct.StructType):
            if any(f.name.startswith(BIT_FIELDS) for f in t.fields):
                raise Unsupported(f"initializer of '{t}', which has bit-fields", init)
            members = [(f.offset, f.ctype) for f in t.fields]
        else:
            raise Unsupported("braces around a scalar initializer are not supported", init)
        for (offset, member), item in zip(members, items):
            self.initialize_at(self.at_offset(address, offset), member, item)
        if len(items) > len(members):
            raise Unsupported(f"too many initializers for '{t}'", init)

    # ----------------------------------------------------------------- statements
    def statement(self, c: ci.Cursor) -> None:
        with self.at(c):
            self._statement(c)

    def _statement(self, c: ci.Cursor) -> None:
        kind = c.kind
        if kind == K.COMPOUND_STMT:
            for child in children(c):
                self.statement(child)
        elif kind == K.DECL_STMT:
            for decl in children(c):
                if decl.kind == K.VAR_DECL:
                    self.local_declaration(decl)
        elif kind == K.IF_STMT:
            self.if_statement(c)
        elif kind == K.FOR_STMT:
            self.for_statement(c)
        elif kind == K.WHILE_STMT:
            self.while_statement(c)
        elif kind == K.DO_STMT:
            self.do_statement(c)
        elif kind == K.RETURN_STMT:
            self.return_statement(c)
        elif kind in (K.BREAK_STMT, K.CONTINUE_STMT):
            targets = self.s.loops[-1]
            target = targets.break_to if kind == K.BREAK_STMT else targets.continue_to
            if target is None:
                raise Unsupported("continue outside a loop", c)
            self.branch(target)
            self.start_dead_block()
        elif kind in (K.CASE_STMT, K.DEFAULT_STMT):
            self.case_label(c)
        elif kind == K.LABEL_STMT:
            for child in children(c):
                self.statement(child)
        elif kind == K.NULL_STMT:
            return
        elif kind == K.SWITCH_STMT:
            self.switch_statement(c)
        elif kind.is_expression():
            self.discard(c)
        elif kind == K.UNEXPOSED_STMT:
            self.attributed_statement(c)
        else:
            raise Unsupported(f"statement '{kind.name.lower()}' is not supported", c)

    def attributed_statement(self, c: ci.Cursor) -> None:
        """clang's AttributedStmt (the C statement libclang does not expose): a statement
        with `__attribute__((fallthrough))`, `[[likely]]` or `#pragma clang loop` (a pragma
        gcc ignores). These are hints: the statement is lowered without them."""
        tokens = [t.spelling for t in itertools.islice(c.get_tokens(), 8)]
        kids = children(c)
        if tokens[:1] not in (["__attribute__"], ["["], ["#"]) or len(kids) != 1:
            raise Unsupported(f"statement '{' '.join(tokens)}' is not supported", c)
        self.statement(kids[0])

    def statement_expression(self, c: ci.Cursor) -> RValue:
        """GNU `({ s1; ...; e; })` has the value of its last expression statement (none if
        it is void): what glibc's `assert` and many min/max macros expand to."""
        body = children(c)[-1]
        parts = children(body)
        valued = parts and parts[-1].kind.is_expression() and c.type.kind != ci.TypeKind.VOID
        for part in parts[:-1] if valued else parts:
            self.statement(part)
        return self.rvalue(parts[-1]) if valued else RValue(None, ct.VOID)

    def start_dead_block(self) -> None:
        """Code after break/continue/return is unreachable; it goes to a block of its own."""
        dead = self.new_block("unreachable")
        self.seal(dead)
        self.start_block(dead)

    def return_statement(self, c: ci.Cursor) -> None:
        kids = children(c)
        if kids and isinstance(self.result_type, ct.StructType):
            self.return_struct(self.assignable(self.rvalue(kids[0]), self.result_type, c))
        elif kids and not isinstance(self.result_type, ct.VoidType):
            value = self.rvalue(kids[0])
            self.b.ret(self.assignable(value, self.result_type, c))
        elif kids or isinstance(self.result_type, ct.VoidType):
            if kids:  # `return f();` in a void function (gcc warns if f's value is not void)
                self.discard(kids[0])
            self.b.ret_void()
        else:  # `return;` in an `int` function (old code; gcc warns): the value is garbage
            self.b.ret(ir.Constant(self.result_type.llvm(), ir.Undefined))
        self.start_dead_block()

    def return_struct(self, address: ir.Value) -> None:
        """Return a struct: through the caller's `sret` slot, or in its eightbytes."""
        result = self.services.abi(self.s.function.name).result
        if isinstance(result, InMemory):
            self.copy_struct(self.s.function.args[0], address, result.struct)
            self.b.ret_void()
            return
        assert isinstance(result, InRegisters)
        parts = self.struct_parts(address, result)
        if len(parts) == 1:
            self.b.ret(parts[0])
            return
        value = ir.Constant(self.s.function.function_type.return_type, ir.Undefined)
        for k, part in enumerate(parts):
            value = self.b.insert_value(value, part, k)
        self.b.ret(value)

    def if_statement(self, c: ci.Cursor) -> None:
        kids = children(c)
        cond, then = kids[0], kids[1]
        otherwise = kids[2] if len(kids) > 2 else None
        then_block = self.new_block("if.then")
        else_block = self.new_block("if.else") if otherwise is not None else None
        end = self.new_block("if.end")
        self.condition(cond, then_block, else_block or end)
        self.seal(then_block)
        self.start_block(then_block)
        self.statement(then)
        self.branch(end)
        if else_block is not None:
            self.seal(else_block)
            self.start_block(else_block)
            self.statement(otherwise)
            self.branch(end)
        self.seal(end)
        self.start_block(end)

    def switch_statement(self, c: ci.Cursor) -> None:
        """`switch` as an LLVM switch; each case label starts a block that falls through."""
        cond, body = [k for k in children(c) if k.kind != K.DECL_STMT][-2:]
        value = self.rvalue(cond)
        labels = list(_case_labels(body))
        exit_block = self.new_block("switch.end")
        blocks = {}
        default = exit_block
        for label in labels:
            blocks[label.hash] = self.new_block("case" if label.kind == K.CASE_STMT else "default")
            if label.kind == K.DEFAULT_STMT:
                default = blocks[label.hash]
        switch = self.b.switch(value.value, default)
        self.s.ssa.add_edge(self.b.block, default)
        seen: set[int] = set()
        for label in labels:
            if label.kind == K.CASE_STMT:
                kids = children(label)
                if len(kids) != 2:
                    raise Unsupported("case ranges are not supported", label)
                constant = int(fold(kids[0], value.ctype))
                if constant in seen:
                    raise Unsupported("duplicate case value", label)
                seen.add(constant)
                switch.add_case(ir.Constant(value.ctype.llvm(), constant), blocks[label.hash])
                self.s.ssa.add_edge(self.b.block, blocks[label.hash])
        self.start_dead_block()
        enclosing = self.s.loops[-1].continue_to if self.s.loops else None
        self.s.loops.append(LoopTargets(break_to=exit_block, continue_to=enclosing))
        self.s.case_blocks.append(blocks)
        self.statement(body)
        self.s.case_blocks.pop()
        self.s.loops.pop()
        self.branch(exit_block)
        self.seal(exit_block)
        self.start_block(exit_block)

    def case_label(self, c: ci.Cursor) -> None:
        block = self.s.case_blocks[-1][c.hash]
        self.branch(block)  # fall through from the previous case
        self.seal(block)
        self.start_block(block)
        self.statement(children(c)[-1])

    def enter_loop(self) -> ir.Block:
        """Emit the preheader and open the header (not sealed: the latch comes later)."""
        self.s.loop_count += 1
        preheader = self.new_block("preheader")
        self.branch(preheader)
        self.seal(preheader)
        self.start_block(preheader)
        header = self.new_block("header")
        self.branch(header)
        self.start_block(header)
        return header

    def loop_body(self, body: ci.Cursor, exit_block: ir.Block, latch: ir.Block) -> None:
        self.s.loops.append(LoopTargets(break_to=exit_block, continue_to=latch))
        self.statement(body)
        self.s.loops.pop()
        self.branch(latch)
        self.seal(latch)
        self.start_block(latch)

    def for_statement(self, c: ci.Cursor) -> None:
        parts = for_parts(c)
        if parts.init is not None:
            self.statement(parts.init)
        header = self.enter_loop()
        body, latch, exit_block = (
            self.new_block("body"),
            self.new_block("latch"),
            self.new_block("exit"),
        )
        if parts.cond is not None:
            self.condition(parts.cond, body, exit_block)
        else:
            self.branch(body)
        self.seal(body)
        self.start_block(body)
        self.loop_body(parts.body, exit_block, latch)
        if parts.inc is not None:
            with self.at(parts.inc):
                self.discard(parts.inc)
        self.branch(header)
        self.seal(header, exit_block)
        self.start_block(exit_block)

    def while_statement(self, c: ci.Cursor) -> None:
        cond, body_stmt = children(c)
        header = self.enter_loop()
        body, latch, exit_block = (
            self.new_block("body"),
            self.new_block("latch"),
            self.new_block("exit"),
        )
        self.condition(cond, body, exit_block)
        self.seal(body)
        self.start_block(body)
        self.loop_body(body_stmt, exit_block, latch)
        self.branch(header)
        self.seal(header, exit_block)
        self.start_block(exit_block)

    def do_statement(self, c: ci.Cursor) -> None:
        body_stmt, cond = children(c)
        header = self.enter_loop()  # the body's first block is the header
        latch, exit_block = self.new_block("latch"), self.new_block("exit")
        self.loop_body(body_stmt, exit_block, latch)
        with self.at(cond):
            self.condition(cond, header, exit_block)
        self.seal(header, exit_block)
        self.start_block(exit_block)


def symbolic(c: ci.Cursor | None) -> Expr | None:
    """A size expression over parameters as an `Expr`, or None if it is not of that form."""
    if c is None:
        return None
    c = strip_parens(c)
    if c.kind in (K.INTEGER_LITERAL, K.CHARACTER_LITERAL):
        value = constant_value(c)
        return Expr.constant(int(value)) if value is not None else None
    if c.kind == K.DECL_REF_EXPR:
        decl = c.referenced
        if decl.kind == K.PARM_DECL:
            return Expr.symbol(decl.spelling)
        if decl.kind == K.ENUM_CONSTANT_DECL:
            return Expr.constant(decl.enum_value)
        return None
    if c.kind in (K.UNEXPOSED_EXPR, K.CSTYLE_CAST_EXPR):
        inner = expression_children(c)
        return symbolic(inner[-1]) if inner else None
    if c.kind == K.UNARY_OPERATOR and unary_operator(c) in ("-", "+"):
        operand = symbolic(children(c)[0])
        if operand is None:
            return None
        return -operand if unary_operator(c) == "-" else operand
    if c.kind == K.BINARY_OPERATOR and binary_operator(c) in SYMBOLIC_OPERATORS:
        lhs, rhs = (symbolic(k) for k in children(c))
        if lhs is None or rhs is None:
            return None
        return Expr.binary(binary_operator(c), lhs, rhs)
    return None


def _case_labels(body: ci.Cursor):
    """The case/default labels of a switch body (which may itself be one), in source order,
    not those of switches nested in it."""
    if body.kind in (K.CASE_STMT, K.DEFAULT_STMT):
        yield body
    if body.kind != K.SWITCH_STMT:
        for child in children(body):
            yield from _case_labels(child)


def keep_reachable_blocks_in_order(function: ir.Function) -> None:
    """Put the blocks in reverse postorder (so the IR reads top-down) and drop those no path
    from the entry reaches, with the phi inputs that came from them."""
    # successors are visited last-first so that a loop body comes before the loop's exit
    function.blocks = reverse_postorder(
        function.entry_basic_block, lambda block: successors(block)[::-1]
    )
    reachable = set(function.blocks)
    for block in function.blocks:
        for instr in block.instructions:
            if isinstance(instr, ir.PhiInstr):
                instr.incomings = [(v, b) for v, b in instr.incomings if b in reachable]


def _designated(item: ci.Cursor) -> bool:
    """`.x = 1` or `[2] = 1` in an initializer list (libclang shows the syntactic form)."""
    first = next(iter(item.get_tokens()), None)
    return item.kind == K.UNEXPOSED_EXPR and first is not None and first.spelling in (".", "[")


def _is_zero(item: ci.Cursor) -> bool:
    value = constant_value(strip_parens(item))
    while value is None and item.kind == K.UNEXPOSED_EXPR and len(children(item)) == 1:
        item = children(item)[0]
        value = constant_value(strip_parens(item))
    return value == 0
