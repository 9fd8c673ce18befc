"""Check-run buffers: alignment, guard zones, sentinels, identical copies, the memory budget."""

from __future__ import annotations

import numpy as np
import pytest
from pycc_stencil.runtime.buffers import (
    GUARD_BYTE,
    SENTINEL_BYTE,
    BufferSizeError,
    BufferSpec,
    make_inputs,
)
from pycc_stencil.runtime.compare import guard_damage

SPECS = [
    BufferSpec("in", np.dtype(np.float32), -1, 10, read=True),
    BufferSpec("out", np.dtype(np.int16), 0, 7, read=False, shape=(7,)),
]


def test_layout_guards_and_contents():
    buffers = make_inputs(SPECS, seed=1)
    for spec in SPECS:
        assert buffers.pointer(spec.name) % 64 == 0
        before, after = buffers.guards(spec.name)
        assert before.size >= 64 and after.size >= 64
        assert (before == GUARD_BYTE).all() and (after == GUARD_BYTE).all()
    values = buffers.data("in")
    assert values.size == 11 and ((values >= 0.5) & (values < 2)).all()
    assert (buffers.data("out").view(np.uint8) == SENTINEL_BYTE).all()
    assert buffers.data("in").ctypes.data == buffers.pointer("in") - 4  # element -1


def test_copies_are_identical_and_seeds_reproducible():
    first, second = make_inputs(SPECS, seed=7), make_inputs(SPECS, seed=7)
    twin = first.copy()
    assert np.array_equal(first.data("in"), second.data("in"))
    assert np.array_equal(first.data("in"), twin.data("in"))
    assert not np.array_equal(first.data("in"), make_inputs(SPECS, seed=8).data("in"))


def test_integer_inputs_cover_the_full_range():
    spec = BufferSpec("p", np.dtype(np.uint8), 0, 4096, read=True)
    values = make_inputs([spec], seed=0).data("p")
    assert values.min() == 0 and values.max() == 255


def test_guard_damage_is_found():
    buffers = make_inputs(SPECS, seed=1)
    assert guard_damage(buffers) is None
    buffers.guards("out")[1][0] = 0
    assert "wrote outside buffer 'out'" in guard_damage(buffers)


def test_absurd_sizes_are_refused():
    huge = BufferSpec("A", np.dtype(np.float64), 0, 1 << 40, read=True)
    with pytest.raises(BufferSizeError, match=r"buffer 'A' needs 8796093022208 bytes"):
        make_inputs([huge], seed=0)


def test_a_value_range_bounds_the_random_inputs():
    ints = BufferSpec("i", np.dtype(np.int32), 0, 4096, read=True, value_range=(-3, 3))
    floats = BufferSpec("f", np.dtype(np.float64), 0, 4096, read=True, value_range=(0.0, 0.25))
    buffers = make_inputs([ints, floats], seed=0)
    assert buffers.data("i").min() == -3 and buffers.data("i").max() == 3
    values = buffers.data("f")
    assert ((values >= 0.0) & (values < 0.25)).all() and values.max() > 0.2
