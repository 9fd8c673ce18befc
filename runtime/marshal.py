"""From Python values to the C arguments of a lowered function, checked.

A wrong dtype, a too-small or non-contiguous array, an out-of-range integer or a wrong argument
count must be a Python exception, never memory corruption in JIT code. This module knows the
mapping from the front end's C types to ctypes and numpy and does every check that needs only
the values; the extents to check against come from the caller (declared types, footprints).
"""

from __future__ import annotations

import ctypes
import numbers

import numpy as np

from ..frontend.c_types import (
    ArrayType,
    CType,
    FloatType,
    IntType,
    PointerType,
    VoidType,
    numpy_dtype_name,
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
    raise TypeError(f"no ctypes representation of {t}")


def unsupported_reason(info: FunctionInfo) -> str | None:
    """Why `info`'s parameters or result cannot be passed from Python, or None if they can."""
    for param in info.params:
        t = param.ctype
        if is_buffer(param) and buffer_element(t) is None:
            return f"parameter '{param.name}' has type {t}, which cannot be passed as an array"
        if not isinstance(t, (IntType, FloatType, PointerType, ArrayType)):
            return f"parameter '{param.name}' has type {t}, which cannot be passed from Python"
    if not isinstance(info.result, (IntType, FloatType, VoidType)):
        return f"it returns {info.result}, which cannot be passed to Python"
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
