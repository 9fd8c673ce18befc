"""From Python values to the C arguments of a lowered function, checked.

A wrong dtype, a too-small or non-contiguous array, an out-of-range integer or a wrong argument
count must be a Python exception, never memory corruption in JIT code. This module knows the
mapping from the front end's C types to ctypes and numpy and does every check that needs only
the values; the extents to check against come from the caller (declared types, footprints).
"""

from __future__ import annotations

import ctypes
import functools
import numbers
from collections.abc import Callable

import numpy as np

from ..frontend.c_types import (
    ArrayType,
    CType,
    FloatType,
    IntType,
    PointerType,
    StructType,
    VoidType,
    numpy_dtype_name,
    scalar_leaves,
    size_of,
)
from ..frontend.signature import FunctionInfo, Param

_INT_CTYPES = {
    (8, True): ctypes.c_int8,
    (8, False): ctypes.c_uint8,
    (16, True): ctypes.c_int16,
    (16, False): ctypes.c_uint16,
    (32, True): ctypes.c_int32,
    (32, False): ctypes.c_uint32,
    (64, True): ctypes.c_int64,
    (64, False): ctypes.c_uint64,
}


def buffer_element(t: CType) -> IntType | FloatType | None:
    """The element type of a pointer or array parameter, or None if `t` is neither."""
    if isinstance(t, PointerType):
        return t.pointee if isinstance(t.pointee, (IntType, FloatType)) else None
    if isinstance(t, ArrayType):
        return t.scalar if isinstance(t.scalar, (IntType, FloatType)) else None
    return None


def is_buffer(param: Param) -> bool:
    return isinstance(param.ctype, (PointerType, ArrayType))


def buffer_dtype(param: Param) -> np.dtype:
    """The numpy dtype an array argument for `param` must have exactly."""
    return np.dtype(numpy_dtype_name(buffer_element(param.ctype)))


def element_size(param: Param) -> int:
    return size_of(buffer_element(param.ctype))


def scalar_ctype(t: CType) -> type | None:
    """The ctypes type that passes a value of C type `t` (pointers as addresses)."""
    if isinstance(t, IntType):
        return ctypes.c_bool if t.is_bool else _INT_CTYPES[(t.bits, t.signed)]
    if isinstance(t, FloatType):
        return ctypes.c_float if t.bits == 32 else ctypes.c_double
    if isinstance(t, (PointerType, ArrayType)):
        return ctypes.c_void_p
    if isinstance(t, VoidType):
        return None
    if isinstance(t, StructType) and struct_ctype(t) is not None:
        return struct_ctype(t)
    raise TypeError(f"no ctypes representation of {t}")


@functools.cache
def struct_ctype(t: StructType) -> type[ctypes.Structure] | None:
    """A ctypes mirror of a struct passed or returned by value (libffi then passes it in the
    registers or memory the calling convention says, independently of the front end's own
    lowering), or None if it has a pointer member or a layout ctypes does not reproduce."""
    fields = []
    for f in t.fields:
        member = _member_ctype(f.ctype)
        if member is None:
            return None
        fields.append((f.name, member))
    mirror = type(
        t.name.replace(" ", "_"),
        (ctypes.Structure,),
        {"_fields_": fields, "__reduce__": _pickled_as_bytes},
    )
    if ctypes.sizeof(mirror) != t.size or ctypes.alignment(mirror) != t.align:
        return None
    if any(getattr(mirror, f.name).offset != f.offset for f in t.fields):
        return None
    return mirror


def _member_ctype(t: CType) -> type | None:
    if isinstance(t, StructType):
        return struct_ctype(t)
    if isinstance(t, ArrayType):
        element = _member_ctype(t.element)
        return None if element is None else element * int(t.length)
    if isinstance(t, (IntType, FloatType)):
        return scalar_ctype(t)
    return None


def _pickled_as_bytes(self: ctypes.Structure) -> tuple:
    """A struct result crosses the pipe of a forked run as its bytes."""
    return (bytes, (bytes(self),))


def struct_dtype(t: StructType) -> np.dtype:
    """The numpy view of a struct's bytes: one field per scalar leaf (`in.v[2]`)."""
    leaves = scalar_leaves(t)
    return np.dtype(
        {
            "names": [leaf.path for leaf in leaves],
            "formats": [numpy_dtype_name(leaf.ctype) for leaf in leaves],
            "offsets": [leaf.offset for leaf in leaves],
            "itemsize": t.size,
        }
    )


def struct_value(t: StructType, value_of: Callable[[CType], int | float]) -> ctypes.Structure:
    """A struct argument whose every scalar leaf is `value_of(its type)` (padding zero)."""
    dtype = struct_dtype(t)
    data = np.zeros(1, dtype)
    for leaf in scalar_leaves(t):
        data[leaf.path] = value_of(leaf.ctype)
    return struct_ctype(t).from_buffer_copy(data.tobytes())


def _passing_reason(t: CType) -> str | None:
    """Why a value of type `t` cannot cross between Python and C, or None if it can."""
    if isinstance(t, StructType) and "(" in t.name:
        return "an unnamed struct, which the reference wrapper cannot name"
    if isinstance(t, StructType) and struct_ctype(t) is None:
        return "a struct with a pointer member or an over-aligned member"
    if not isinstance(t, (IntType, FloatType, PointerType, ArrayType, StructType)):
        return "not a scalar, an array or a struct"
    return None


def unsupported_reason(info: FunctionInfo) -> str | None:
    """Why `info`'s parameters or result cannot be passed from Python, or None if they can."""
    for param in info.params:
        t = param.ctype
        if is_buffer(param) and buffer_element(t) is None:
            return f"parameter '{param.name}' has type {t}, which cannot be passed as an array"
        why = _passing_reason(t)
        if why is not None:
            return (
                f"parameter '{param.name}' has type {t} ({why}), which cannot be passed from Python"
            )
    result = info.result
    why = None if isinstance(result, VoidType) else _passing_reason(result)
    if why is not None or isinstance(result, (PointerType, ArrayType)):
        return f"it returns {result}, which cannot be passed to Python"
    return None


def prototype(info: FunctionInfo) -> type:
    """The ctypes function type of `info` (buffers as addresses)."""
    return ctypes.CFUNCTYPE(
        scalar_ctype(info.result), *(scalar_ctype(p.ctype) for p in info.params)
    )


def convert_scalar(param: Param, value: object) -> int | float | bool:
    """Check a Python scalar against the parameter's C type and return the value to pass."""
    t = param.ctype
    if isinstance(t, IntType):
        if isinstance(value, (bool, np.bool_)) and not t.is_bool:
            raise TypeError(f"parameter '{param.name}' ({t}): expected an integer, got a bool")
        if not isinstance(value, (numbers.Integral, np.bool_)):
            raise TypeError(
                f"parameter '{param.name}' ({t}): expected an integer, got {type(value).__name__}"
            )
        number = int(value)
        low, high = (0, 1) if t.is_bool else (t.min_value, t.max_value)
        if not low <= number <= high:
            raise ValueError(
                f"parameter '{param.name}' ({t}): {number} is out of range [{low}, {high}]"
            )
        return bool(number) if t.is_bool else number
    if isinstance(t, FloatType):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(
                f"parameter '{param.name}' ({t}): expected a number, got {type(value).__name__}"
            )
        return float(value)
    raise TypeError(f"parameter '{param.name}' ({t}) is not a scalar")


def declared_shape(
    t: ArrayType, scalars: dict[str, int | float], outer: int | None = None
) -> tuple[int, ...] | None:
    """The dimensions of an array parameter at these scalar values. An unspecified outer one
    (`float A[][N]`) is `outer`, or makes the result None. Negative VLA extents count as 0."""
    dims = t.dims
    if dims[0] is None:
        if outer is None:
            return None
        dims = [outer, *dims[1:]]
    return tuple(max(0, d if isinstance(d, int) else d.evaluate(scalars)) for d in dims)


def inner_row_elements(t: ArrayType, scalars: dict[str, int | float]) -> int:
    """Elements per outermost index (the product of all but the first dimension)."""
    inner = 1
    for d in t.dims[1:]:
        inner *= max(0, d if isinstance(d, int) else d.evaluate(scalars))
    return inner


def check_array(param: Param, value: object, needed: int, written: bool) -> int:
    """Check an array argument and return its data address.

    `needed` is the number of elements from the start of the array that the call may access;
    `written` says whether the call may store into it.
    """
    dtype = buffer_dtype(param)
    if not isinstance(value, np.ndarray):
        raise TypeError(
            f"parameter '{param.name}' ({param.ctype}): expected a numpy array of {dtype}, "
            f"got {type(value).__name__}"
        )
    if value.dtype != dtype:
        raise TypeError(
            f"parameter '{param.name}' ({param.ctype}): expected dtype {dtype}, got {value.dtype}"
        )
    if not value.flags.c_contiguous:
        raise ValueError(
            f"parameter '{param.name}': the array is not C-contiguous "
            "(pass np.ascontiguousarray(...))"
        )
    if written and not value.flags.writeable:
        raise ValueError(
            f"parameter '{param.name}': the array is read-only but the kernel writes it"
        )
    if value.size < needed:
        raise ValueError(
            f"parameter '{param.name}': the kernel accesses {needed} elements at these "
            f"arguments, the array has only {value.size}"
        )
    return value.ctypes.data
