"""Input buffers for a check run: random contents, guard zones, sentinels, identical copies.

Each buffer sits in one shared anonymous mapping (so a forked child's writes are visible to the
parent) between guard zones of at least `GUARD_BYTES` filled with `GUARD_BYTE`; element 0 of
each buffer (the address passed to the kernel) is 64-byte aligned. Buffers the kernel reads
get random data; buffers it only writes are pre-filled with `SENTINEL_BYTE`, so elements that
one side writes and the other does not still differ.

Random floats are uniform in [0.5, 2): no zeros or denormals to divide by, no negative
arguments for sqrt/log/pow, and products or quotients of hundreds of such values stay far from
overflow and underflow, so outputs carry information instead of NaN or Inf. Integer elements
cover their type's full range (integer kernels must handle wrap-around as C does), _Bool is 0/1.
A spec's `value_range` overrides both for a kernel whose inputs must stay within bounds (e.g.
so that integer arithmetic cannot overflow).
"""

from __future__ import annotations

import mmap
import os
import zlib
from dataclasses import dataclass

import numpy as np

GUARD_BYTES = 64
ALIGNMENT = 64
GUARD_BYTE = 0xA5
SENTINEL_BYTE = 0x5A
FLOAT_RANGE = (0.5, 2.0)
DEFAULT_MEMORY_BUDGET = 2 << 30
BUDGET_VARIABLE = "PYCC_STENCIL_MEMORY_BUDGET"


class BufferSizeError(ValueError):
    """The buffers a check needs exceed the memory budget."""


@dataclass(frozen=True)
class BufferSpec:
    """One buffer parameter: element range [lo, hi) relative to the pointer passed."""

    name: str
    dtype: np.dtype
    lo: int
    hi: int
    read: bool
    shape: tuple[int, ...] | None = None  # declared array shape, for multi-dimensional indices
    #: [lo, hi] the random inputs are drawn from (inclusive for integers, [lo, hi) for
    #: floats) instead of the defaults; None: the defaults
    value_range: tuple[int | float, int | float] | None = None

    @property
    def count(self) -> int:
        return max(0, self.hi - self.lo)

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize


def _align(n: int, alignment: int = ALIGNMENT) -> int:
    return -(-n // alignment) * alignment


def memory_budget() -> int:
    value = os.environ.get(BUDGET_VARIABLE)
    return int(value) if value else DEFAULT_MEMORY_BUDGET


def check_budget(specs: list[BufferSpec], copies: int = 2, budget: int | None = None) -> None:
    """Refuse buffers whose total size (for `copies` runs) exceeds the memory budget."""
    budget = memory_budget() if budget is None else budget
    total = copies * sum(s.nbytes + 2 * GUARD_BYTES + ALIGNMENT for s in specs)
    if total > budget:
        largest = max(specs, key=lambda s: s.nbytes)
        raise BufferSizeError(
            f"buffer '{largest.name}' needs {largest.nbytes} bytes ({largest.count} elements of "
            f"{largest.dtype}); all buffers need {total} bytes, over the memory budget of "
            f"{budget} bytes (set {BUDGET_VARIABLE} to change it)"
        )


class BufferSet:
    """The buffers of one run, laid out in one shared mapping."""

    def __init__(self, specs: list[BufferSpec], alignment: int = ALIGNMENT):
        #: element 0 of every buffer is aligned to this (at least ALIGNMENT; more for a
        #: declared `row_align` or `aligned` beyond it)
        self.alignment = max(ALIGNMENT, alignment)
        self.specs = {s.name: s for s in specs}
        self._layout: dict[str, tuple[int, int, int]] = {}  # name -> (guard start, data, end)
        cursor = 0
        for spec in specs:
            item = spec.dtype.itemsize
            pointer = _align(cursor + GUARD_BYTES - min(spec.lo, 0) * item, self.alignment)
            data = pointer + spec.lo * item
            self._layout[spec.name] = (cursor, data, data + spec.nbytes)
            cursor = _align(data + spec.nbytes + GUARD_BYTES)
        # the mapping is page-aligned; a larger alignment needs that much slack at the start
        slack = _align(self.alignment, mmap.PAGESIZE) - mmap.PAGESIZE
        self._arena = mmap.mmap(-1, max(cursor + slack, mmap.PAGESIZE))
        whole = np.frombuffer(self._arena, dtype=np.uint8)
        skip = (-whole.ctypes.data) % self.alignment
        self._bytes = whole[skip:]
        self._base = self._bytes.ctypes.data

    def pointer(self, name: str) -> int:
        """The address of element 0 (what the kernel receives)."""
        spec = self.specs[name]
        return self._base + self._layout[name][1] - spec.lo * spec.dtype.itemsize

    def data(self, name: str) -> np.ndarray:
        """Elements [lo, hi) as a flat array (a view)."""
        _, data, end = self._layout[name]
        return self._bytes[data:end].view(self.specs[name].dtype)

    def guards(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The guard bytes before and after the buffer (views)."""
        start, data, end = self._layout[name]
        names = list(self._layout)
        following = names.index(name) + 1
        stop = self._layout[names[following]][0] if following < len(names) else len(self._bytes)
        return self._bytes[start:data], self._bytes[end:stop]

    def copy(self) -> BufferSet:
        """A new set with the same layout and bytes."""
        twin = BufferSet(list(self.specs.values()), self.alignment)
        twin._bytes[:] = self._bytes
        return twin

    def restore(self, other: BufferSet) -> None:
        """Give every byte (buffers and guard zones) the value it has in `other`, a set with
        the same layout (e.g. a copy of this one made earlier)."""
        self._bytes[:] = other._bytes


def random_elements(
    rng: np.random.Generator,
    dtype: np.dtype,
    count: int,
    value_range: tuple[int | float, int | float] | None = None,
) -> np.ndarray:
    """Random values for a buffer the kernel reads (see the module docstring for the ranges);
    `value_range` replaces the default range of ints and floats (see `BufferSpec`). Records
    (a struct's scalar members, `marshal.struct_dtype`) get each member drawn as its own
    type, `value_range` for the integer ones only; padding stays zero."""
    if dtype.names:
        records = np.zeros(count, dtype)
        for name in dtype.names:
            member = dtype.fields[name][0]
            integer = member.kind in "iu"
            records[name] = random_elements(rng, member, count, value_range if integer else None)
        return records
    if value_range is not None and dtype != np.bool_:
        lo, hi = value_range
        if dtype.kind == "f":
            return rng.uniform(lo, hi, count).astype(dtype)
        return rng.integers(int(lo), int(hi), count, dtype=dtype, endpoint=True)
    if dtype == np.bool_:
        return rng.integers(0, 2, count).astype(np.bool_)
    if dtype.kind == "f":
        return rng.uniform(*FLOAT_RANGE, count).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)


def make_inputs(
    specs: list[BufferSpec], seed: int, salt: str = "", alignment: int = ALIGNMENT
) -> BufferSet:
    """Buffers filled for a run: guards, random inputs, sentinel outputs (deterministic);
    element 0 of each is `alignment`-aligned (at least ALIGNMENT)."""
    check_budget(specs)
    buffers = BufferSet(specs, alignment)
    buffers._bytes[:] = GUARD_BYTE
    rng = np.random.default_rng([seed, zlib.crc32(salt.encode())])
    for spec in specs:
        if spec.read:
            buffers.data(spec.name)[:] = random_elements(
                rng, spec.dtype, spec.count, spec.value_range
            )
        else:
            buffers.data(spec.name).view(np.uint8)[:] = SENTINEL_BYTE
    return buffers
