"""Lowering a whole C file: which functions, in what order, and what they share.

Every function defined in the file is lowered on its own; one that uses an unsupported
construct is skipped with the construct and its location, and so is any function that calls
it, while the rest of the file still lowers. Helpers are lowered on demand when a kernel calls
them, wherever they are defined (the file or its headers).
"""

from __future__ import annotations

import dataclasses
import math
import os
import traceback
from collections.abc import Callable, Collection, Sequence

import clang.cindex as ci
import llvmlite.binding as llvm
from llvmlite import ir

from ..diagnostics import SourceLocation
from ..ir_passes.core.alignment import declare_row_alignment
from ..ir_passes.core.deep import deep_call
from ..ir_passes.core.rewrite import opaque
from . import c_types as ct
from .abi import AbiRefused, ExternalFunction, FunctionAbi, function_abi
from .clang_ast import (
    DEFAULT_CALLING_CONVENTION,
    K,
    binary_operator,
    calling_convention,
    declaration_key,
    location,
    var_initializer,
    volatile_use,
    walk,
)
from .clang_types import ARRAY_KINDS, ctype_of
from .columns import one_unit
from .debuginfo import DebugInfo
from .declarations import aligned_attribute, row_align_pragmas, type_alignment
from .expressions import FunctionState, Variable
from .globals import declare_global
from .initializers import flatten, fold
from .line_markers import LineMarkers, without_markers
from .math_calls import ASSERT_FAIL, KNOWN_LIBRARY_CALLS, canonical_math_name
from .parse import Parsed, parse
from .signature import DefinitionText, FunctionInfo, LoweredModule, SkippedFunction
from .statements import MAX_NODES, FunctionLowerer, check_bounds
from .tbaa import TypeTags, strict_aliasing
from .unsupported import Unsupported


def lower_file(
    path: str,
    cflags: Sequence[str] = (),
    preprocessed: bool = False,
    only: Collection[str] | None = None,
    others: str = "",
) -> LoweredModule:
    """Parse `path` with `cflags` and lower every function it defines to LLVM IR (or only
    those named in `only` and what they call; the others are skipped for the reason
    `others`).

    Raises `CompilerError` (with clang's diagnostics) if the file is not valid C (errors in
    system headers are tolerated, see `parse`). A `preprocessed` file is a `cc -E` unit: the
    functions of its main file are those its line markers place outside every header.
    """
    parsed = parse(path, list(cflags), preprocessed)
    markers = None
    if preprocessed:
        with open(path, "rb") as handle:
            markers = LineMarkers(handle.read())
    lowerer = ModuleLowerer(parsed, path, list(cflags), markers)

    def lower_all() -> LoweredModule:
        with one_unit():  # (in the thread `deep_call` runs it in: contexts are per thread)
            return lowerer.lower_all(only, others)

    return deep_call(lower_all)


class ModuleLowerer:
    """Owns the LLVM module of one file and implements `ModuleServices` for its functions."""

    def __init__(
        self,
        parsed: Parsed,
        path: str,
        cflags: list[str],
        markers: LineMarkers | None = None,
    ):
        source = markers.main_file if markers is not None else path
        self.module = ir.Module(name=os.path.basename(source))
        self.module.triple = llvm.get_process_triple()
        self.debug = DebugInfo(self.module, source)
        self.result = LoweredModule(path, cflags, self.module, markers=markers)
        self.definitions: dict[str, ci.Cursor] = {}
        self.main_file = os.path.realpath(path)
        self.markers = markers
        self.parsed = parsed
        #: the declarations of each variable at file scope
        self._file_scope_variables: dict[str, list[ci.Cursor]] = {}
        for cursor in parsed.tu.cursor.get_children():
            if cursor.kind == K.VAR_DECL:
                self._file_scope_variables.setdefault(cursor.spelling, []).append(cursor)
            if cursor.kind == K.FUNCTION_DECL and cursor.is_definition():
                self.definitions[cursor.spelling] = cursor
                if self.in_main_file(cursor.location):
                    self.result.order.append(cursor.spelling)
        self._stack: list[str] = []
        self._calls: dict[str, set[str]] = {}
        self._skipped: dict[str, SkippedFunction] = {}
        self._walked: dict[str, _FunctionFacts] = {}  # (`_facts`)
        self._globals: dict[tuple, Variable] = {}
        self.abis: dict[str, FunctionAbi] = {}
        self._externals: dict[str, ExternalFunction] = {}
        #: function -> the mutable globals its own body uses
        self._global_uses: dict[str, set[str]] = {}
        self._row_align = self._row_align_pragmas()
        self._tags = TypeTags(self.module) if strict_aliasing(cflags) else None

    def in_main_file(self, where: ci.SourceLocation) -> bool:
        """Is `where` written in the file being compiled (not in a header it includes)?"""
        if where.file is None:
            return False
        if self.markers is not None:  # everything is in the unit: its markers say
            return self.markers.origin(where.line).in_main_file
        return os.path.realpath(where.file.name) == self.main_file

    def _row_align_pragmas(self) -> dict[str, int]:
        """`#pragma pycc row_align(N)` before the definitions written in the main file."""
        starts = {
            name: self.definitions[name].extent.start.line
            for name in self.result.order
            if self.in_main_file(self.definitions[name].extent.start)
        }
        with open(self.main_file, encoding="utf-8", errors="replace") as source:
            text = source.read()
        markers = self.markers
        if markers is None:
            return row_align_pragmas(self.result.source_path, text, starts)

        def origin(line: int, column: int) -> SourceLocation:
            return SourceLocation(markers.main_file, markers.origin(line).line, column)

        # cc -E puts a line marker between a pragma and the definition after it
        return row_align_pragmas(self.result.source_path, without_markers(text), starts, origin)

    def lower_all(self, only: Collection[str] | None = None, others: str = "") -> LoweredModule:
        for name in self.result.order:
            if only is not None and name not in only:
                continue
            try:
                self.lower_function(name)
            except Unsupported:
                pass  # recorded in self._skipped
        for name in self.result.order:  # what `only` left out and no lowered function calls
            if name not in self.result.functions and name not in self._skipped:
                self._skip(name, Unsupported(others, self.definitions[name]))
        self.result.skipped = [self._skipped[n] for n in self.result.order if n in self._skipped]
        for name, info in self.result.functions.items():
            self.result.functions[name] = dataclasses.replace(
                info, globals=self._globals_used(name, set())
            )
        return self.result

    # ----------------------------------------------------------------- functions
    def lower_function(self, name: str) -> ir.Function:
        if name in self.result.functions or name in self._stack:
            return self.module.get_global(name)
        if name in self._skipped:
            skip = self._skipped[name]
            raise Unsupported(skip.reason, skip.location)
        cursor = self.definitions[name]
        try:
            body = [c for c in cursor.get_children() if c.kind == K.COMPOUND_STMT]
            if body and body[-1].extent.start.offset in self.parsed.blanked:
                raise Unsupported(  # header_bodies missed a use of the function: a bug
                    f"internal front-end error: the body of '{name}' was skipped as unused; "
                    "please report it",
                    cursor,
                )
            unreadable = self.parsed.error_in(cursor.extent)
            if unreadable is not None:
                diagnostic = unreadable.diagnostic()
                raise Unsupported(
                    f"libclang cannot read its definition: {diagnostic.message}",
                    diagnostic.location,
                )
            nodes = check_bounds(cursor)
            function = self.declare(cursor, nodes)
        except Unsupported as exc:
            self._skip(name, exc)
            raise
        self._stack.append(name)
        try:
            state = FunctionState(
                function, ir.IRBuilder(), self._locator(function, cursor), tags=self._tags
            )
            params = FunctionLowerer(self, state, cursor, nodes).lower()
        except Unsupported as exc:
            self._skip(name, exc)
            raise
        except Exception as exc:  # a front-end bug must cost one function, not the file
            failure = Unsupported(
                f"internal front-end error ({_describe(exc)}); please report it", cursor
            )
            self._skip(name, failure)
            raise failure from None
        finally:
            self._stack.pop()
        self.result.functions[name] = FunctionInfo(
            name=name,
            params=params,
            result=ctype_of(cursor.type.get_result(), cursor),
            location=location(cursor),
            is_static=cursor.linkage == ci.LinkageKind.INTERNAL,
            loop_count=state.loop_count,
            definition=_definition_text(cursor, self.in_main_file),
            attributes=tuple(
                "".join(t.spelling for t in a.get_tokens())
                for a in cursor.get_children()
                if a.kind.is_attribute()
            ),
            row_align=self._row_align.get(name),
        )
        if name in self._row_align:
            declare_row_alignment(function, self._row_align[name])
        return function

    def declare(self, cursor: ci.Cursor, nodes: list[ci.Cursor]) -> ir.Function:
        """The LLVM declaration of a C function (of syntax nodes `nodes`), with the ABI
        attributes clang would emit."""
        ftype = cursor.type
        if ftype.kind == ci.TypeKind.FUNCTIONNOPROTO and any(
            c.kind == K.PARM_DECL for c in cursor.get_children()
        ):
            raise Unsupported("K&R-style function definitions are not supported", cursor)
        if calling_convention(ftype) != DEFAULT_CALLING_CONVENTION:
            raise Unsupported("functions with a non-default calling convention", cursor)
        volatile = volatile_use(nodes)
        if volatile is not None:
            raise Unsupported("volatile objects are not supported", volatile)
        result, arg_types, params, passed, abi = _prototype(cursor, cursor)
        function = ir.Function(self.module, abi.llvm_type(), name=cursor.spelling)
        self.abis[cursor.spelling] = abi
        if cursor.linkage == ci.LinkageKind.INTERNAL:
            function.linkage = "internal"
        function.attributes.add("nounwind")
        abi.add_attributes(function)
        _extension_attribute(function.return_value, result)
        for arg, decl, t, ir_args in zip(arg_types, params, passed, abi.arguments(function.args)):
            for k, ir_arg in enumerate(ir_args):
                ir_arg.name = (decl.spelling or "arg") + (f".{k}" if len(ir_args) > 1 else "")
            ir_arg = ir_args[0]
            if not _passed_as_pointer(arg):
                _extension_attribute(ir_arg, t)
            elif is_restrict_parameter(decl, arg):
                ir_arg.add_attribute("noalias")
            if arg.kind == ci.TypeKind.POINTER and type_alignment(arg.get_pointee()) > 1:
                ir_arg.attributes.align = type_alignment(arg.get_pointee())
        return function

    def _locator(self, function: ir.Function, cursor: ci.Cursor):
        """The `!dbg` node of a position in `function`, one per position (the front end asks
        once per expression: llvmlite's own interning hashes every operand each time)."""
        program = self.debug.subprogram(function, location(cursor))
        nodes: dict[SourceLocation, ir.DIValue] = {}

        def locate(where: SourceLocation) -> ir.DIValue:
            node = nodes.get(where)
            if node is None:
                node = nodes[where] = self.debug.location(program, where)
            return node

        return locate

    def _skip(self, name: str, exc: Unsupported) -> None:
        """Record a skipped function; drop it and, transitively, every lowered caller."""
        cursor = self.definitions[name]
        facts = self._facts(name)
        not_a_kernel = exc.not_a_kernel or self._runs_unknown_code(name, set())
        self._skipped[name] = SkippedFunction(
            name,
            exc.location,
            exc.message,
            facts.has_loops,
            not_a_kernel,
            location(cursor),
            facts.multiplies_floats,
        )
        if name in self.module.globals:
            del self.module.globals[name]
        self.result.functions.pop(name, None)
        for caller, callees in list(self._calls.items()):
            if name in callees and caller in self.result.functions:
                skip = self._skipped[name]
                self._skip(
                    caller,
                    Unsupported(
                        f"calls '{name}', which is skipped: {skip}",
                        skip.location,
                        not_a_kernel=skip.not_a_kernel,
                    ),
                )

    def _runs_unknown_code(self, name: str, visiting: set[str]) -> bool:
        """Does the function (or one it calls) call code outside the file other than the math
        library, or call through a pointer? Then it is application code (I/O, allocation,
        dispatch), not a stencil kernel, whatever construct made the front end stop first."""
        visiting.add(name)
        facts = self._facts(name)
        if facts.calls_unknown:
            return True
        return any(
            callee not in visiting and self._runs_unknown_code(callee, visiting)
            for callee in facts.callees
        )

    def _facts(self, name: str) -> _FunctionFacts:
        """What the report and the contraction screen ask of a skipped function, from one
        walk of its body (a unit lowered `only` in part skips most of its functions)."""
        facts = self._walked.get(name)
        if facts is None:
            facts = self._walked[name] = _FunctionFacts(self.definitions[name], self.definitions)
        return facts

    # ----------------------------------------------------------------- ModuleServices
    def callee(self, definition: ci.Cursor, call: ci.Cursor) -> ir.Function:
        name = definition.spelling
        self._calls.setdefault(self._stack[-1], set()).add(name)
        header = _intrinsics_header(location(definition))
        if header is not None:
            raise Unsupported(f"the intrinsic '{name}' of <{header}> is not supported", call)
        try:
            return self.lower_function(name)
        except Unsupported:
            skip = self._skipped[name]
            raise Unsupported(
                f"calls '{name}', which is skipped: {skip}", call, not_a_kernel=skip.not_a_kernel
            ) from None

    def abi(self, name: str) -> FunctionAbi:
        return self.abis[name]

    def external_function(self, decl: ci.Cursor, call: ci.Cursor) -> ExternalFunction:
        name = decl.spelling
        if name not in self._externals:
            if calling_convention(decl.type) != DEFAULT_CALLING_CONVENTION:
                raise Unsupported(f"call to '{name}' of a non-default calling convention", call)
            if decl.type.kind != ci.TypeKind.FUNCTIONPROTO:
                raise Unsupported(
                    f"call to external function '{name}' declared without a prototype "
                    "(its arguments' types are not known)",
                    call,
                )
            result, _, _, passed, abi = _prototype(decl, call)
            signature = abi.llvm_type()
            variadic = decl.type.is_function_variadic()
            if variadic:
                signature = ir.FunctionType(signature.return_type, signature.args, var_arg=True)
            existing = self.module.globals.get(name)
            if existing is not None:  # the name is taken by a definition or another kind
                raise Unsupported(f"call to external function '{name}' of another type", call)
            function = ir.Function(self.module, signature, name=name)
            # the platform's library does what it does in the cc-built program: LLVM must not
            # replace or drop the call as it would a builtin it knows
            function.attributes.add("nobuiltin")
            abi.add_attributes(function)
            _extension_attribute(function.return_value, result)
            for t, ir_args in zip(passed, abi.arguments(function.args)):
                _extension_attribute(ir_args[0], t)
            self._externals[name] = ExternalFunction(function, abi, variadic)
        return self._externals[name]

    def implicitly_declared(self, decl: ci.Cursor) -> bool:
        where = decl.location
        return where.file is not None and (where.file.name, where.offset) in self.parsed.implicit

    def libm_function(self, name: str, ftype: ct.FunctionType) -> ir.Function:
        existing = self.module.globals.get(name)
        if isinstance(existing, ir.Function):
            return existing
        signature = ir.FunctionType(ftype.result.llvm(), [p.llvm() for p in ftype.params])
        function = ir.Function(self.module, signature, name=name)
        function.attributes.add("nounwind")
        # the platform's libm computes it, as in the cc-built program: without `nobuiltin` LLVM
        # rewrites pow(x, 2.0) to x*x and fminf to an `nsz` minnum, which round or sign
        # differently
        function.attributes.add("nobuiltin")
        return function

    def global_variable(self, decl: ci.Cursor, where: ci.Cursor) -> Variable:
        """A file-scope or static local constant, copied into the module with its value; a
        mutable static local, the module's own (see `_static_local`); a mutable global, or a
        constant whose value another file defines, declared by its own symbol
        (frontend/globals.py)."""
        mutable = not _is_const(decl.type)
        local = decl.semantic_parent.kind != K.TRANSLATION_UNIT
        if mutable and not local:
            return self._mutable_global(decl, where)
        key = declaration_key(decl)
        if key in self._globals:
            return self._globals[key]
        name = decl.spelling
        init = var_initializer(decl)
        definition = decl.get_definition()
        if init is None and definition is not None:  # `extern const int t[8]; ... = {...}`
            init = var_initializer(definition)
        if init is None and not (mutable or local):  # a table another file defines: its symbol
            return self._mutable_global(decl, where, read_only=True)
        if mutable:
            self._static_local(decl, where)
        t = ctype_of(decl.type, decl)
        aggregate = isinstance(t, ct.StructType) or (
            isinstance(t, ct.ArrayType) and isinstance(t.scalar, (ct.StructType, ct.PointerType))
        )
        if init is None:  # a static local without one: zero, as C starts it
            initializer = ir.Constant(t.llvm(), None)
        elif aggregate:
            what = "static local" if mutable else "constant"
            raise Unsupported(f"{what} '{name}' of struct type is not supported", where)
        elif isinstance(t, ct.ArrayType):
            if not ct.has_fixed_size(t):
                raise Unsupported(f"constant array '{name}' has no fixed size", decl)
            scalar = t.scalar
            slots = flatten(init, t)
            count = ct.size_of(t) // ct.size_of(scalar)
            values = [fold(slots[i], scalar) if i in slots else 0 for i in range(count)]
            initializer = _nested_constant(t, values)
        else:
            initializer = ir.Constant(t.llvm(), fold(init, t))
        owner = (
            ""
            if decl.semantic_parent.kind == K.TRANSLATION_UNIT
            else decl.semantic_parent.spelling + "."
        )
        g = ir.GlobalVariable(self.module, t.llvm(), name=self.module.get_unique_name(owner + name))
        opaque(g)
        g.linkage = "internal"
        g.global_constant = not mutable
        g.initializer = initializer
        alignment = max(aligned_attribute(decl), type_alignment(decl.type))
        if alignment > 1:
            g.align = alignment
        var = Variable(name, t, g)
        self._globals[key] = var
        return var

    def _static_local(self, decl: ci.Cursor, where: ci.Cursor) -> None:
        """A mutable static local keeps its state between calls in the module's own storage.
        That is its only storage when its function has one definition, pycc-stencil's: an
        external function, which cc's object then no longer defines and every caller reaches
        by its symbol (the inliner does not copy one: the linker may replace it). A `static`
        function may also be copied into the module beside the one cc keeps for its own
        callers (inlined, or called by a function taken over), each copy with its own
        state; so may an `inline` one: refused."""
        function = decl.semantic_parent
        copied = function.kind != K.FUNCTION_DECL or function.linkage == ci.LinkageKind.INTERNAL
        if copied or _inline(function):
            raise Unsupported(
                f"static local variable '{decl.spelling}' of a static or inline function is not "
                "supported (state kept between calls, in each copy of the function)",
                where,
            )
        if decl.tls_kind != ci.TLSKind.NONE:
            raise Unsupported(f"thread-local variable '{decl.spelling}' is not supported", where)

    def _mutable_global(
        self, decl: ci.Cursor, where: ci.Cursor, read_only: bool = False
    ) -> Variable:
        """The global's symbol, recorded as used by the function being lowered."""
        file_scope = self._file_scope_variables.get(decl.spelling, [])
        info = declare_global(self.module, decl, where, file_scope, read_only)
        self.result.globals[info.name] = info
        self._global_uses.setdefault(self._stack[-1], set()).add(info.name)
        return Variable(info.name, info.ctype, self.module.get_global(info.name))

    def _globals_used(self, name: str, seen: set[str]) -> tuple[str, ...]:
        """The mutable globals `name` and the functions it calls, directly or not (recursion
        included), use, sorted."""
        seen.add(name)
        used = set(self._global_uses.get(name, ()))
        for callee in self._calls.get(name, ()):
            if callee not in seen:
                used.update(self._globals_used(callee, seen))
        return tuple(sorted(used))


_LOOP_KINDS = (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT)


def _describe(exc: Exception) -> str:
    """`AssertionError: ` says nothing: without a message, where it was raised."""
    if str(exc):
        return f"{type(exc).__name__}: {exc}"
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return f"{type(exc).__name__} at {os.path.basename(frame.filename)}:{frame.lineno}"


def _intrinsics_header(where: SourceLocation) -> str | None:
    """<xmmintrin.h>, <immintrin.h>, ... (vector types and target builtins: not lowered)."""
    name = os.path.basename(where.file)
    return name if name.endswith("intrin.h") or name == "arm_neon.h" else None


_FLOATING_KINDS = frozenset(
    {ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE, ci.TypeKind.LONGDOUBLE, ci.TypeKind.FLOAT128}
)


class _FunctionFacts:
    """One walk of a function's body: its loops (OpenMP loop and parallel directives
    included: libclang does not expose their bodies) and calls within the first MAX_NODES
    nodes (what a function too large to lower is classified by), and whether it multiplies
    floating-point values anywhere (`*`, `*=`: the products of a skipped function are cc's,
    and under FP contraction gcc may fuse them)."""

    def __init__(self, cursor: ci.Cursor, definitions: dict[str, ci.Cursor]):
        self.has_loops = self.multiplies_floats = self.calls_unknown = False
        self.callees: list[str] = []  # functions of the file it calls
        for count, node in enumerate(walk(cursor)):
            kind = node.kind
            if count < MAX_NODES:
                self._classify(node, kind, definitions)
            elif self.multiplies_floats:
                break
            if not self.multiplies_floats and kind in _PRODUCTS:
                self.multiplies_floats = _floating_product(node)

    def _classify(self, node: ci.Cursor, kind: ci.CursorKind, definitions: dict) -> None:
        if kind in _LOOP_KINDS or _openmp_region(kind):
            self.has_loops = True
        elif kind == K.CALL_EXPR and not self.calls_unknown:
            callee = node.referenced
            if callee is None or callee.kind != K.FUNCTION_DECL:
                self.calls_unknown = True
            elif callee.spelling in definitions:
                self.callees.append(callee.spelling)
            elif canonical_math_name(callee.spelling) not in KNOWN_LIBRARY_CALLS and not (
                callee.spelling.startswith("__builtin_") or callee.spelling == ASSERT_FAIL
            ):
                self.calls_unknown = True


_PRODUCTS = (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR)
#: OpenMP directives whose body libclang does not expose and that may hold the loops (`omp
#: for`, `omp parallel` around `omp for`s, `omp simd`, `omp taskloop`, ...)
_OPENMP_REGIONS = ("FOR", "PARALLEL", "LOOP", "SIMD", "DISTRIBUTE", "TARGET", "TEAMS")


def _openmp_region(kind: ci.CursorKind) -> bool:
    return kind.name.startswith("OMP_") and any(word in kind.name for word in _OPENMP_REGIONS)


def _floating_product(node: ci.Cursor) -> bool:
    if binary_operator(node) not in ("*", "*="):
        return False
    kind = node.type.get_canonical().kind
    return kind in _FLOATING_KINDS or kind == ci.TypeKind.COMPLEX


def _definition_text(
    cursor: ci.Cursor, in_main_file: Callable[[ci.SourceLocation], bool]
) -> DefinitionText | None:
    """The definition's byte offsets, if it is written out in the main file."""
    bodies = [c for c in cursor.get_children() if c.kind == K.COMPOUND_STMT]
    if not bodies:
        return None
    body = bodies[-1].extent
    points = (cursor.extent.start, cursor.location, body.start, body.end)
    if not all(in_main_file(p) for p in points):
        return None
    return DefinitionText(
        start=cursor.extent.start.offset,
        name_start=cursor.location.offset,
        name_end=cursor.location.offset + len(cursor.spelling),
        body_start=body.start.offset,
        body_end=body.end.offset,
    )


def _prototype(
    cursor: ci.Cursor, where: ci.Cursor
) -> tuple[ct.CType, list[ci.Type], list[ci.Cursor], list[ct.CType], FunctionAbi]:
    """A function declaration's result, parameter types (libclang's and as passed) and
    parameter declarations, and the ABI lowering of its prototype."""
    ftype = cursor.type
    result = ctype_of(ftype.get_result(), where)
    arg_types = list(ftype.argument_types()) if ftype.kind == ci.TypeKind.FUNCTIONPROTO else []
    params = [c for c in cursor.get_children() if c.kind == K.PARM_DECL]
    if len(params) != len(arg_types):  # a prototype through a typedef: `fn_t f;`
        params = [where] * len(arg_types)
    passed = [
        ct.PointerType(ct.VOID) if _passed_as_pointer(arg) else ctype_of(arg, decl)
        for arg, decl in zip(arg_types, params)
    ]
    try:
        abi = function_abi(result, passed)
    except AbiRefused as exc:
        raise Unsupported(f"{exc} is not supported", where) from None
    return result, arg_types, params, passed, abi


def _extension_attribute(value: ir.Argument | ir.ReturnValue, t: ct.CType) -> None:
    """x86-64 SysV passes small integers extended to 32 bits; say how, as clang does."""
    if isinstance(t, ct.IntType) and t.bits < 32:
        value.add_attribute("signext" if t.signed else "zeroext")


def _passed_as_pointer(arg: ci.Type) -> bool:
    """Pointer parameters, and array parameters (libclang reports them unadjusted)."""
    return arg.get_canonical().kind in (ci.TypeKind.POINTER, *ARRAY_KINDS)


def is_restrict_parameter(decl: ci.Cursor, arg: ci.Type) -> bool:
    """`float *restrict p`, or `float a[restrict n]` (whose qualifier libclang hides)."""
    canonical = arg.get_canonical()
    if canonical.kind == ci.TypeKind.POINTER:
        return canonical.is_restrict_qualified()
    spellings = [t.spelling for t in decl.get_tokens()]
    if "[" not in spellings:
        return False
    first_dimension = spellings[spellings.index("[") : spellings.index("]") + 1]
    return any(s in ("restrict", "__restrict", "__restrict__") for s in first_dimension)


def _inline(function: ci.Cursor) -> bool:
    """Is the function declared `inline` (its tokens before its body say so)?"""
    for token in function.get_tokens():
        if token.spelling == "{":
            return False
        if token.spelling in ("inline", "__inline", "__inline__"):
            return True
    return False


def _is_const(clang_type: ci.Type) -> bool:
    """Whether an object (or every element of an array) is const-qualified."""
    t = clang_type
    while not t.is_const_qualified():
        if t.kind in ARRAY_KINDS:
            t = t.element_type
        elif t.get_canonical().kind in ARRAY_KINDS:
            t = t.get_canonical().element_type
        else:
            return t.get_canonical().is_const_qualified()
    return True


def _nested_constant(t: ct.CType, values: list) -> ir.Constant:
    if not isinstance(t, ct.ArrayType):
        return ir.Constant(t.llvm(), values[0])
    stride = math.prod(int(d) for d in t.dims[1:])
    rows = [values[i * stride : (i + 1) * stride] for i in range(int(t.length))]
    return ir.Constant(t.llvm(), [_nested_constant(t.element, row) for row in rows])
