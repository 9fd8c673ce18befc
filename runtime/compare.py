"""Comparing a JIT run with the reference run: every buffer byte, guard zones, return value.

Bit-exact by default, with one exception: any NaN equals any NaN. C fixes neither the sign nor
the payload of a NaN, and they do differ between a quotient LLVM folds at compile time and the
one the CPU computes (`0.0f / 0.0f`). A `Tolerance` (max ULP distance and/or relative error)
exists for passes that declare reassociation; it applies to floating-point values only. Guard
zones are always compared byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .buffers import GUARD_BYTE, BufferSet, BufferSpec


@dataclass(frozen=True)
class Tolerance:
    """Accepted difference of floating-point elements; both None means bit-exact."""

    max_ulp: int | None = None
    rel: float | None = None

    @property
    def exact(self) -> bool:
        return self.max_ulp is None and self.rel is None

    @classmethod
    def parse(cls, text: str) -> Tolerance:
        """`ulp=N`, `rel=X` or both, comma-separated."""
        fields: dict[str, str] = {}
        for item in text.split(","):
            key, sep, value = item.partition("=")
            if not sep or key.strip() not in ("ulp", "rel"):
                raise ValueError(f"bad tolerance {text!r}: expected ulp=N and/or rel=X")
            fields[key.strip()] = value.strip()
        try:
            max_ulp = int(fields["ulp"]) if "ulp" in fields else None
            rel = float(fields["rel"]) if "rel" in fields else None
        except ValueError:
            raise ValueError(f"bad tolerance {text!r}: expected ulp=N and/or rel=X") from None
        if (max_ulp is not None and max_ulp < 0) or (rel is not None and not rel >= 0):
            raise ValueError(f"bad tolerance {text!r}: values must be non-negative")
        return cls(max_ulp, rel)

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in (("ulp", self.max_ulp), ("rel", self.rel)) if v is not None]
        return "within " + ", ".join(parts) if parts else "bit-exact"


def _ordered(values: np.ndarray) -> np.ndarray:
    """Float bit patterns mapped to integers whose difference is the ULP distance."""
    signed = values.view(np.int32 if values.dtype == np.float32 else np.int64).astype(np.int64)
    bits = 8 * values.dtype.itemsize
    return np.where(signed < 0, np.int64(-(1 << (bits - 1))) - signed, signed)


def _bits(values: np.ndarray) -> np.ndarray:
    return values.view(np.dtype(f"u{values.dtype.itemsize}"))


def equal_elements(jit: np.ndarray, ref: np.ndarray, tolerance: Tolerance) -> np.ndarray:
    """Per element: are the two runs' values the same (any NaN equals any NaN; under
    `tolerance` for floats)? A record (a struct's members) is when each member is."""
    if jit.dtype.names:
        same = np.ones(jit.shape, bool)
        for name in jit.dtype.names:
            same &= equal_elements(jit[name], ref[name], tolerance)
        return same
    same = _bits(jit) == _bits(ref)
    if jit.dtype.kind != "f":
        return same
    same |= np.isnan(jit) & np.isnan(ref)
    if tolerance.exact:
        return same
    with np.errstate(all="ignore"):
        close = np.zeros_like(same)
        if tolerance.max_ulp is not None:
            distance = np.abs(_ordered(jit) - _ordered(ref))
            close |= distance <= tolerance.max_ulp
        if tolerance.rel is not None:
            close |= np.abs(jit.astype(np.float64) - ref) <= tolerance.rel * np.abs(
                ref.astype(np.float64)
            )
    return same | (close & np.isfinite(jit) & np.isfinite(ref))


def format_value(value: np.generic) -> str:
    """The value as a number; a NaN with its sign and bits, which `str` hides; a struct's
    as its members (`{.real = 1.5, .imag = nan (0x7ff8000000000000)}`)."""
    if value.dtype.names:
        members = (f".{name} = {format_value(value[name])}" for name in value.dtype.names)
        return "{" + ", ".join(members) + "}"
    if value.dtype.kind in "iub":
        return str(value.item())
    if np.isnan(value):
        bits = _bits(np.array([value]))[0]
        sign = "-" if np.signbit(value) else ""
        return f"{sign}nan (0x{int(bits):0{2 * value.dtype.itemsize}x})"
    return str(value)


def format_index(spec: BufferSpec, flat: int) -> str:
    """`name[i,j]` for declared arrays, `name[k]` (relative to the pointer) otherwise."""
    element = spec.lo + flat
    if spec.shape and 0 <= element < int(np.prod(spec.shape)):
        return (
            f"{spec.name}[{','.join(str(int(i)) for i in np.unravel_index(element, spec.shape))}]"
        )
    return f"{spec.name}[{element}]"


def guard_damage(buffers: BufferSet) -> str | None:
    """The first buffer whose guard zone is no longer intact, described; None if all are."""
    for name in buffers.specs:
        for side, guard in zip(("before", "after"), buffers.guards(name), strict=True):
            damaged = np.flatnonzero(guard != GUARD_BYTE)
            if damaged.size:
                where = damaged - guard.size if side == "before" else damaged
                return (
                    f"wrote outside buffer '{name}' ({damaged.size} guard byte(s) {side} it "
                    f"changed, at byte offsets {int(where[0])}..{int(where[-1])} from its "
                    f"{'start' if side == 'before' else 'end'})"
                )
    return None


@dataclass(frozen=True)
class Comparison:
    """The outcome for the buffers of one function."""

    differing: int  # elements
    total: int  # elements
    first: str | None  # "dst[3,17] = 0.4 (reference 0.41)"
    #: each buffer that differs: True where, in its declared shape (relative to the pointer,
    #: one dimension, without one)
    where: dict[str, np.ndarray] = field(default_factory=dict)


def compare_return_values(
    jit: object, ref: object, dtype: np.dtype | None, tolerance: Tolerance
) -> str | None:
    """None if the two runs returned the same value (as elements are compared), else the
    difference described; `dtype` is None for a void function."""
    if dtype is None:
        return None
    a, b = np.array([jit], dtype), np.array([ref], dtype)
    if equal_elements(a, b, tolerance)[0]:
        return None
    return f"return value = {format_value(a[0])} (reference {format_value(b[0])})"


def changed_elements(before: BufferSet, after: BufferSet) -> int:
    """How many elements of the buffers differ, byte for byte, between two states of the same
    buffers (the inputs and a run's outputs): 0 when the run wrote nothing visible."""
    changed = 0
    for name, spec in before.specs.items():
        old = before.data(name).view(np.uint8).reshape(-1, spec.dtype.itemsize)
        new = after.data(name).view(np.uint8).reshape(-1, spec.dtype.itemsize)
        changed += int(np.count_nonzero((old != new).any(axis=1)))
    return changed


def compare_buffers(jit: BufferSet, ref: BufferSet, tolerance: Tolerance) -> Comparison:
    """Compare every element of every buffer of two runs with the same layout."""
    differing, total, first, where = 0, 0, None, {}
    for name, spec in jit.specs.items():
        a, b = jit.data(name), ref.data(name)
        mismatch = np.flatnonzero(~equal_elements(a, b, tolerance))
        total += spec.count
        differing += mismatch.size
        if mismatch.size:
            where[name] = _difference_map(spec, mismatch)
        if mismatch.size and first is None:
            k = int(mismatch[0])
            first = (
                f"{format_index(spec, k)} = {format_value(a[k])} (reference {format_value(b[k])})"
            )
    return Comparison(differing, total, first, where)


def _difference_map(spec: BufferSpec, mismatch: np.ndarray) -> np.ndarray:
    """True at the differing elements, in the declared shape where the buffer has one."""
    elements = mismatch + spec.lo
    if spec.shape and spec.lo >= 0 and spec.hi <= int(np.prod(spec.shape)):
        where = np.zeros(int(np.prod(spec.shape)), dtype=bool)
        where[elements] = True
        return where.reshape(spec.shape)
    where = np.zeros(spec.count, dtype=bool)
    where[mismatch] = True
    return where
