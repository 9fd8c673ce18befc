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
    if kind == T.RECORD:
        return struct_type(t, where)
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


#: the structs being converted (a struct reaching itself through a pointer member)
_CONVERTING: set[tuple] = set()


def struct_type(t: ci.Type, where: ci.Cursor) -> ct.StructType:
    """A struct with its layout from clang (the target ABI's: padding, `aligned`), refused
    with the construct and its place where the model has no exact counterpart."""
    decl = t.get_declaration()
    name = decl.type.spelling  # the record itself: no qualifiers (`const struct s`)
    if decl.kind == ci.CursorKind.UNION_DECL:
        raise Unsupported(f"union type '{name}' is not supported", where)
    if t.get_size() < 0:
        raise Unsupported(f"incomplete struct type '{name}' is not supported", where)
    key = _key(decl)
    if key in _CONVERTING:
        raise Unsupported(f"recursive struct type '{name}' is not supported", where)
    _CONVERTING.add(key)
    try:
        members = _members(decl)
        fields = tuple(
            sorted(
                [_field(t, m, name) for m in members if not m.is_bitfield()]
                + _bit_field_storage(t, [m for m in members if m.is_bitfield()]),
                key=lambda f: f.offset,
            )
        )
    finally:
        _CONVERTING.discard(key)
    struct = ct.StructType(name, fields, t.get_size(), t.get_align())
    natural = max((ct.alignment_of(f.ctype) for f in fields), default=1)
    if not fields:
        raise Unsupported(f"empty struct type '{name}' is not supported", decl)
    if struct.align < natural or any(f.offset % ct.alignment_of(f.ctype) for f in fields):
        raise Unsupported(
            f"packed struct '{name}' (members below their natural alignment) is not supported",
            decl,
        )
    return struct


def _key(decl: ci.Cursor) -> tuple:
    return (decl.location.file.name if decl.location.file else "", decl.location.offset)


def _opaque_pointee(pointee: ci.Type) -> ct.StructType | None:
    """A pointer to an incomplete struct, or to a struct being converted (`struct node *next`
    inside `struct node`), points to an opaque struct: it can be passed on and compared, and
    the expressions that would need its layout refuse it."""
    t = pointee.get_canonical()
    if t.kind != T.RECORD or t.get_declaration().kind != ci.CursorKind.STRUCT_DECL:
        return None
    if t.get_size() >= 0 and _key(t.get_declaration()) not in _CONVERTING:
        return None
    return ct.StructType(t.get_declaration().type.spelling, (), 0, 0)


def _members(decl: ci.Cursor) -> list[ci.Cursor]:
    """The members of a struct, refusing the kinds the model does not have."""
    members = []
    for child in decl.get_children():
        if child.kind in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.UNION_DECL):
            continue  # a nested type declaration; an anonymous member is refused below
        if child.kind != ci.CursorKind.FIELD_DECL:
            continue
        if child.is_bitfield():
            if child.spelling and child.get_bitfield_width() > 0:
                members.append(child)
            continue  # an unnamed or zero-width bit-field: padding, alignment
        if not child.spelling:  # (a named member of an unnamed type is any other member)
            raise Unsupported("anonymous struct or union members are not supported", child)
        members.append(child)
    return members


#: how the name of a struct's field that holds bit-fields' bytes begins
BIT_FIELDS = "<bit-fields"


def _bit_field_storage(t: ci.Type, bit_fields: list[ci.Cursor]) -> list[ct.Field]:
    """The bytes the bit-fields of a struct occupy, one `unsigned char` array per run of
    bytes: copied, passed and compared as the struct's other bytes are, never read as a
    member (an access to a bit-field is refused where it is written)."""
    spans: list[list[int]] = []
    for member in bit_fields:
        first = t.get_offset(member.spelling)
        span = [first // 8, -(-(first + member.get_bitfield_width()) // 8)]
        if spans and span[0] <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], span[1])
        else:
            spans.append(span)
    return [
        ct.Field(f"{BIT_FIELDS} at byte {start}>", start, ct.ArrayType(ct.UCHAR, end - start))
        for start, end in spans
    ]


def _field(t: ci.Type, member: ci.Cursor, struct: str) -> ct.Field:
    ctype = ctype_of(member.type, member)
    if not ct.has_fixed_size(ctype):
        raise Unsupported(
            f"flexible array member '{member.spelling}' of '{struct}' is not supported", member
        )
    return ct.Field(member.spelling, t.get_offset(member.spelling) // 8, ctype)


def _pointee_type(pointee: ci.Type, where: ci.Cursor) -> ct.CType:
    opaque = _opaque_pointee(pointee)
    if opaque is not None:
        return opaque
    if pointee.get_canonical().kind in (T.FUNCTIONPROTO, T.FUNCTIONNOPROTO):
        # a callback member of a struct, a parameter passed on: an opaque pointee, as an
        # incomplete struct's; calling through it or taking a function's address is refused
        return ct.StructType(pointee.get_canonical().spelling, (), 0, 0)
    return ctype_of(pointee, where)
