"""libclang types -> the front end's C type model (`c_types`)."""

from __future__ import annotations

import clang.cindex as ci

from . import c_types as ct
from .unsupported import Unsupported

T = ci.TypeKind

#: the kinds of array types (VLAs and `[]` included)
ARRAY_KINDS = (T.CONSTANTARRAY, T.INCOMPLETEARRAY, T.VARIABLEARRAY)

_SCALARS = {
    T.BOOL: ct.BOOL,
    T.CHAR_S: ct.CHAR,
    T.SCHAR: ct.SCHAR,
    T.CHAR_U: ct.UCHAR,
    T.UCHAR: ct.UCHAR,
    T.SHORT: ct.SHORT,
    T.USHORT: ct.USHORT,
    T.INT: ct.INT,
    T.UINT: ct.UINT,
    T.LONG: ct.LONG,
    T.ULONG: ct.ULONG,
    T.LONGLONG: ct.LONGLONG,
    T.ULONGLONG: ct.ULONGLONG,
    T.FLOAT: ct.FLOAT,
    T.DOUBLE: ct.DOUBLE,
    T.VOID: ct.VOID,
}

_UNSUPPORTED_MESSAGES = {
    T.LONGDOUBLE: "long double is not supported",
    T.RECORD: "struct and union types are not supported",
    T.INT128: "__int128 is not supported",
    T.UINT128: "unsigned __int128 is not supported",
    T.COMPLEX: "complex types are not supported",
    T.VECTOR: "vector types are not supported",
    T.BLOCKPOINTER: "blocks are not supported",
}


def ctype_of(clang_type: ci.Type, where: ci.Cursor) -> ct.CType:
    """Convert a clang type without variable-length arrays (those need their declaration)."""
    t = clang_type.get_canonical()
    kind = t.kind
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == T.ENUM:
        return ctype_of(t.get_declaration().enum_type, where)
    if kind == T.POINTER:
        pointee = t.get_pointee()
        return ct.PointerType(
            _pointee_type(pointee, where),
            restrict=t.is_restrict_qualified(),
            const_pointee=pointee.is_const_qualified(),
        )
    if kind == T.CONSTANTARRAY:
        return ct.ArrayType(ctype_of(t.element_type, where), t.get_array_size())
    if kind == T.INCOMPLETEARRAY:
        return ct.ArrayType(ctype_of(t.element_type, where), None)
    if kind == T.VARIABLEARRAY:
        raise Unsupported("variable-length array types are only supported in declarations", where)
    if kind in (T.FUNCTIONPROTO, T.FUNCTIONNOPROTO):
        params = (
            tuple(ctype_of(a, where) for a in t.argument_types()) if kind == T.FUNCTIONPROTO else ()
        )
        variadic = kind == T.FUNCTIONNOPROTO or t.is_function_variadic()
        return ct.FunctionType(ctype_of(t.get_result(), where), params, variadic)
    message = _UNSUPPORTED_MESSAGES.get(kind, f"type '{clang_type.spelling}' is not supported")
    raise Unsupported(message, where)


def _pointee_type(pointee: ci.Type, where: ci.Cursor) -> ct.CType:
    if pointee.get_canonical().kind == T.RECORD:
        raise Unsupported(f"pointer to struct '{pointee.spelling}' is not supported", where)
    if pointee.get_canonical().kind in (T.FUNCTIONPROTO, T.FUNCTIONNOPROTO):
        raise Unsupported("function pointers are not supported", where)
    return ctype_of(pointee, where)
