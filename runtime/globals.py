"""Global variables in a check: each side's own copy, seeded alike, compared like buffers.

The JIT code and the reference library each have their own storage for every global a kernel
uses: the reference's is in its library (cc's definition, or the wrapper's for a global the
file only declares), the JIT's is a `GlobalHome`, one guarded shared buffer set that the JIT
module's external declarations resolve to (`llvm.add_symbol` before each compile). A run's
global inputs are a `BufferSet` of their own (`global NAME` buffers, guard zones around each):
in the child that runs a side, `bind` copies them into that side's storage before the call and
back after it, so the parent compares them bit for bit, and for the JIT side the home's guard
bytes come back too, so a write outside a global is caught like one outside a pointer buffer.
(The reference's globals sit in its data segment, without guards: the reference is the
original program.)

Inputs: a global whose initial value in the reference (the file's initializer) is not all
zero starts from it on both sides: sizes, coefficients, tables. A zero-initialized one gets
random data like a read buffer; integer ones small values (1..31), since such globals are
typically sizes, counters or indices in the codes that use them (NAS: `nx`, `it`), and so do
a struct's integer members (its floating ones the usual floats); a constant
table another file defines, values below its own length (a table of indices into itself).
"""

from __future__ import annotations

import ctypes
import hashlib
from collections.abc import Callable, Iterable

import numpy as np

from ..c_library import STREAMS
from ..frontend.c_types import ArrayType, IntType, StructType, numpy_dtype_name
from ..frontend.signature import GlobalInfo
from .buffers import BufferSet, BufferSpec, make_inputs
from .marshal import struct_dtype

PREFIX = "global "
#: the values a zero-initialized integer global is seeded with (inclusive)
INTEGER_RANGE = (1, 31)


def buffer_name(name: str) -> str:
    """The name of global `name`'s buffer in reports (`global u[3,4]`)."""
    return PREFIX + name


def global_spec(info: GlobalInfo) -> BufferSpec:
    """The buffer of one global: its elements, with its declared shape (none for a scalar;
    an array of unknown size gets no elements: a function using it is not checked)."""
    t = info.ctype
    scalar = t.scalar if isinstance(t, ArrayType) else t
    if isinstance(scalar, StructType):  # its scalar members, each drawn as its own type
        dtype = struct_dtype(scalar)
    else:
        dtype = np.dtype(numpy_dtype_name(scalar) or "uint64")  # a pointer: never run with
    count = 0 if info.size is None else info.size // dtype.itemsize
    shape = tuple(int(d) for d in t.dims) if isinstance(t, ArrayType) and count else None
    integers = isinstance(scalar, StructType) or isinstance(scalar, IntType) and not scalar.is_bool
    value_range = INTEGER_RANGE if integers else None  # (a struct's integer members only)
    if value_range and info.read_only and count > 1:  # a lookup table: often indices into
        value_range = (1, min(INTEGER_RANGE[1], count - 1))  # itself (`t[t[i]]`), in bounds
    return BufferSpec(buffer_name(info.name), dtype, 0, count, True, shape, value_range)


class GlobalHome:
    """The JIT's storage of the globals of one file: what its symbols resolve to."""

    def __init__(self, infos: Iterable[GlobalInfo]):
        self.infos = {info.name: info for info in infos}
        self.buffers = BufferSet([global_spec(info) for info in self.infos.values()])

    def symbols(self) -> dict[str, int]:
        """Symbol -> address, for `compile_module`; the C library's streams are the
        process's own (`fprintf(stderr, ...)` writes where the reference's does)."""
        import llvmlite.binding as llvm

        streams = {name: llvm.address_of_symbol(name) for name in STREAMS}
        own = {name: self.buffers.pointer(buffer_name(name)) for name in self.infos}
        return {**{k: v for k, v in streams.items() if v}, **own}

    def digest(self) -> bytes:
        """The home's current contents (a footprint measured on them holds for them)."""
        return hashlib.sha256(self.buffers._bytes.tobytes()).digest()

    def bind(self, function: Callable, values: BufferSet) -> Callable:
        """`function` run on the globals `values` (a set of this home's layout), which
        receive the globals (and the guard bytes) as the call left them."""

        def call(*args):
            self.buffers.restore(values)
            try:
                return function(*args)
            finally:
                values.restore(self.buffers)

        return call

    def inputs(self, names: Iterable[str], seed: int, salt: str, initial: Callable) -> BufferSet:
        """Seeded globals of a run of a function using `names` (the other globals of the
        file keep their guard bytes only), in this home's layout; `initial(name)` gives the
        global's bytes in the reference before any run."""
        values = make_inputs(list(self.buffers.specs.values()), seed, salt)
        for name in names:
            start = initial(name)
            if any(start):
                values.data(buffer_name(name)).view(np.uint8)[:] = np.frombuffer(start, np.uint8)
        return values


def bind_addresses(function: Callable, addresses: dict[str, int], values: BufferSet) -> Callable:
    """`function` (the reference's) run on the globals `values`: copied to `addresses` (name
    -> the reference's storage) before the call and back after it."""

    def call(*args):
        for name, address in addresses.items():
            ctypes.memmove(address, values.pointer(buffer_name(name)), _size(values, name))
        try:
            return function(*args)
        finally:
            for name, address in addresses.items():
                ctypes.memmove(values.pointer(buffer_name(name)), address, _size(values, name))

    return call


def _size(values: BufferSet, name: str) -> int:
    return values.specs[buffer_name(name)].nbytes
