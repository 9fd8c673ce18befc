"""What the libclang 18 Python bindings do not expose, reached safely.

Operator kinds, literal values and variable initializers come from libclang C functions the
bindings do not wrap (see reference/toolchain.md); `for` statements lose their empty parts
in the bindings and are recovered from the tokens. Everything else about a cursor is read
through the bindings directly by the lowering code.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import clang.cindex as ci

from ..diagnostics import SourceLocation
from .columns import unit_memo, user_column

K = ci.CursorKind
_lib = ci.conf.lib


def _declare(name: str, argtypes: list, restype, errcheck=None) -> None:
    func = getattr(_lib, name)
    func.argtypes = argtypes
    func.restype = restype
    if errcheck is not None:
        func.errcheck = errcheck


_declare("clang_getCursorBinaryOperatorKind", [ci.Cursor], ctypes.c_int)
_declare("clang_getBinaryOperatorKindSpelling", [ctypes.c_int], ci._CXString)
_declare("clang_getCursorUnaryOperatorKind", [ci.Cursor], ctypes.c_int)
_declare("clang_Cursor_getVarDeclInitializer", [ci.Cursor], ci.Cursor, ci.Cursor.from_result)
_declare("clang_Cursor_Evaluate", [ci.Cursor], ctypes.c_void_p)
_declare("clang_EvalResult_getKind", [ctypes.c_void_p], ctypes.c_int)
_declare("clang_EvalResult_isUnsignedInt", [ctypes.c_void_p], ctypes.c_uint)
_declare("clang_EvalResult_getAsUnsigned", [ctypes.c_void_p], ctypes.c_ulonglong)
_declare("clang_EvalResult_getAsLongLong", [ctypes.c_void_p], ctypes.c_longlong)
_declare("clang_EvalResult_getAsDouble", [ctypes.c_void_p], ctypes.c_double)
_declare("clang_EvalResult_dispose", [ctypes.c_void_p], None)
_declare("clang_getFunctionTypeCallingConv", [ci.Type], ctypes.c_int)
_declare(
    "clang_getPresumedLocation",
    [
        ci.SourceLocation,
        ctypes.POINTER(ci._CXString),
        ctypes.POINTER(ctypes.c_uint),
        ctypes.POINTER(ctypes.c_uint),
    ],
    None,
)

#: CXCallingConv_C: the platform's default calling convention
DEFAULT_CALLING_CONVENTION = 1

_EVAL_INT, _EVAL_FLOAT = 1, 2

# CXUnaryOperatorKind (libclang 17+)
UNARY_KINDS = {
    1: "post++",
    2: "post--",
    3: "pre++",
    4: "pre--",
    5: "&",
    6: "*",
    7: "+",
    8: "-",
    9: "~",
    10: "!",
    11: "__real",
    12: "__imag",
    13: "__extension__",
}

#: literal kinds on which clang_Cursor_Evaluate is safe (it crashes on some implicit nodes)
_EVALUABLE = {K.INTEGER_LITERAL, K.FLOATING_LITERAL, K.CHARACTER_LITERAL, K.CXX_UNARY_EXPR}


def binary_operator(cursor: ci.Cursor) -> str:
    """The operator of a BINARY_OPERATOR or COMPOUND_ASSIGNMENT_OPERATOR, e.g. '+', '+='."""
    kind = _lib.clang_getCursorBinaryOperatorKind(cursor)
    return ci._CXString.from_result(_lib.clang_getBinaryOperatorKindSpelling(kind))


def unary_operator(cursor: ci.Cursor) -> str:
    """The operator of a UNARY_OPERATOR, with 'pre'/'post' distinguished for ++ and --."""
    return UNARY_KINDS.get(_lib.clang_getCursorUnaryOperatorKind(cursor), "?")


def var_initializer(cursor: ci.Cursor) -> ci.Cursor | None:
    """The initializer expression of a VAR_DECL, or None."""
    return _lib.clang_Cursor_getVarDeclInitializer(cursor)


def constant_value(cursor: ci.Cursor) -> int | float | None:
    """The value of a literal or sizeof/alignof expression (None if not a constant)."""
    if cursor.kind not in _EVALUABLE:
        return None
    result = _lib.clang_Cursor_Evaluate(cursor)
    if not result:
        return None
    try:
        kind = _lib.clang_EvalResult_getKind(result)
        if kind == _EVAL_INT:
            if _lib.clang_EvalResult_isUnsignedInt(result):
                return int(_lib.clang_EvalResult_getAsUnsigned(result))
            return int(_lib.clang_EvalResult_getAsLongLong(result))
        if kind == _EVAL_FLOAT:
            return float(_lib.clang_EvalResult_getAsDouble(result))
        return None
    finally:
        _lib.clang_EvalResult_dispose(result)


_STRING_PART = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]+|[0-7]{1,3}|.)", re.DOTALL)
_SIMPLE_ESCAPES = dict(zip("ntrabfve\\'\"?", b"\n\t\r\a\b\f\v\x1b\\'\"?"))


def string_value(literal: ci.Cursor) -> bytes | None:
    """The bytes of a plain string literal (`"a\\n" "b"`), without the final NUL; None
    for a wide or prefixed one (`L"..."`, `u8"..."`)."""
    if not literal.spelling.startswith('"'):
        return None
    value = bytearray()
    for part in _STRING_PART.findall(literal.spelling):
        position = 0
        for escape in _ESCAPE.finditer(part):
            value += part[position : escape.start()].encode()
            code = escape.group(1)
            if code[0] == "x":
                value.append(int(code[1:], 16) & 0xFF)
            elif code[0] in "01234567":
                value.append(int(code, 8) & 0xFF)
            else:
                value.append(_SIMPLE_ESCAPES.get(code, ord(code) if len(code) == 1 else 0))
            position = escape.end()
        value += part[position:].encode()
    return bytes(value)


def calling_convention(function_type: ci.Type) -> int:
    """The CXCallingConv of a function type (ms_abi, regparm, ... differ from the default)."""
    return _lib.clang_getFunctionTypeCallingConv(function_type)


def volatile_use(nodes: Iterable[ci.Cursor]) -> ci.Cursor | None:
    """The first of `nodes` whose type is, or points to, a volatile object."""
    for node in nodes:
        t = node.type
        while t.kind != ci.TypeKind.INVALID:
            if t.is_volatile_qualified():
                return node
            if t.kind == ci.TypeKind.POINTER:
                t = t.get_pointee()
            elif t.kind in (
                ci.TypeKind.CONSTANTARRAY,
                ci.TypeKind.INCOMPLETEARRAY,
                ci.TypeKind.VARIABLEARRAY,
            ):
                t = t.element_type
            else:
                break
    return None


def spelled_tokens(cursor: ci.Cursor) -> list[str]:
    """The tokens of `cursor` as written, without the line markers `cc -E` puts inside an
    expression it spreads over lines (`# 7 "k.c"`); none for an expression a macro of
    another file expanded (libclang gives a macro expansion's tokens only in its file)."""
    tokens, marker_line = [], -1
    for token in cursor.get_tokens():
        where = token.location
        if token.spelling == "#" and where.column == 1:
            marker_line = where.line
        elif where.line != marker_line:
            tokens.append(token.spelling)
    return tokens


def macro_at(cursor: ci.Cursor) -> str | None:
    """The name of the macro whose expansion `cursor` comes from: the token where it is
    reported (the expansion point; `cursor.location` may be in the macro's definition)."""
    where, tu = location(cursor), cursor.translation_unit
    if not _lib.clang_getFile(tu, where.file.encode()):
        return None  # not a file of the unit (the user's file of a preprocessed unit)
    file = tu.get_file(where.file)
    loc = ci.SourceLocation.from_position(tu, file, where.line, where.column)
    extent = ci.SourceRange.from_locations(loc, loc)
    first = next(iter(tu.get_tokens(extent=extent)), None)
    if first is None or first.kind != ci.TokenKind.IDENTIFIER:
        return None
    return first.spelling


def location(cursor: ci.Cursor) -> SourceLocation:
    """Where a cursor is, as a compiler would report it (the macro expansion point)."""
    return presumed(cursor.location)


def presumed(loc: ci.SourceLocation) -> SourceLocation:
    """`loc` as compilers report it: after `#line` directives and the line markers of a
    preprocessed unit, so positions name the user's file and line, not the `.i` file."""
    if loc.file is None:
        return SourceLocation("<unknown>", loc.line, loc.column)
    name, line, column = ci._CXString(), ctypes.c_uint(), ctypes.c_uint()
    _lib.clang_getPresumedLocation(
        loc, ctypes.byref(name), ctypes.byref(line), ctypes.byref(column)
    )
    user = ci._CXString.from_result(name)
    where = column.value
    file = loc.file
    unit = unit_memo(("file", ctypes.cast(file.obj, ctypes.c_void_p).value), lambda: file.name)
    if user != unit:  # a preprocessed unit (or `#line`): the user's column
        where = user_column(unit, loc.line, user, line.value, where)
    return SourceLocation(user, line.value, where)


def children(cursor: ci.Cursor) -> list[ci.Cursor]:
    return list(cursor.get_children())


def walk_with_depth(cursor: ci.Cursor) -> Iterator[tuple[ci.Cursor, int]]:
    """Every node under `cursor` (itself at depth 0), in preorder, with its depth. Iterative:
    the bindings' `walk_preorder` recurses once per level, and a 1000-term sum overflows
    Python's recursion limit inside libclang's callbacks, which print the error and go on."""
    stack = [(cursor, 0)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        stack.extend((kid, depth + 1) for kid in reversed(children(node)))


def walk(cursor: ci.Cursor) -> Iterator[ci.Cursor]:
    """Every node under `cursor` (itself included), in preorder (see `walk_with_depth`)."""
    return (node for node, _ in walk_with_depth(cursor))


def expression_children(cursor: ci.Cursor) -> list[ci.Cursor]:
    """Children that are expressions (drops TYPE_REF and other reference cursors)."""
    return [c for c in cursor.get_children() if c.kind.is_expression()]


@dataclass
class ForParts:
    init: ci.Cursor | None
    cond: ci.Cursor | None
    inc: ci.Cursor | None
    body: ci.Cursor


def for_parts(cursor: ci.Cursor) -> ForParts:
    """Split a FOR_STMT into init/cond/inc/body; the bindings omit the parts that are empty."""
    kids = children(cursor)
    if len(kids) == 4:
        return ForParts(*kids)
    # Find the two ';' at parenthesis depth 1 after `for (`; place each child by its offset.
    depth = 0
    semicolons: list[int] = []
    close = None
    for token in cursor.get_tokens():
        text = token.spelling
        if text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
            if depth == 0:
                close = token.extent.start.offset
                break
        elif text == ";" and depth == 1:
            semicolons.append(token.extent.start.offset)
    if len(semicolons) != 2 or close is None:
        raise ValueError("cannot find the parts of this for statement")
    parts: dict[str, ci.Cursor] = {}
    for kid in kids:
        start = kid.extent.start.offset
        if start >= close:
            parts["body"] = kid
        elif start > semicolons[1]:
            parts["inc"] = kid
        elif start > semicolons[0]:
            parts["cond"] = kid
        else:
            parts["init"] = kid
    return ForParts(parts.get("init"), parts.get("cond"), parts.get("inc"), parts["body"])


def strip_parens(cursor: ci.Cursor) -> ci.Cursor:
    while cursor.kind == K.PAREN_EXPR:
        cursor = children(cursor)[0]
    return cursor


def strip_implicit(cursor: ci.Cursor) -> ci.Cursor:
    """`cursor` without parentheses and libclang's unexposed single-child wrappers (implicit
    conversions and reads of an lvalue)."""
    while cursor.kind in (K.PAREN_EXPR, K.UNEXPOSED_EXPR) and len(children(cursor)) == 1:
        cursor = children(cursor)[0]
    return cursor


def declaration_key(cursor: ci.Cursor) -> tuple[str, int, str]:
    """A stable identity for a declaration (cursors are re-created on every traversal)."""
    loc = cursor.location
    return (loc.file.name if loc.file else "", loc.offset, cursor.spelling)
