"""Comparing two runs: bit-exact except that NaNs are equal, tolerance, readable differences."""

from __future__ import annotations

import numpy as np
import pytest
from pycc_stencil.runtime.compare import (
    Tolerance,
    compare_return_values,
    equal_elements,
    format_value,
)

POSITIVE_NAN, NEGATIVE_NAN, PAYLOAD_NAN = 0x7FC00000, 0xFFC00000, 0x7FC00123


def floats(*bits: int) -> np.ndarray:
    return np.array(bits, dtype=np.uint32).view(np.float32)


@pytest.mark.parametrize("tolerance", [Tolerance(), Tolerance.parse("ulp=4")])
def test_any_nan_equals_any_nan(tolerance):
    jit = floats(POSITIVE_NAN, POSITIVE_NAN, POSITIVE_NAN, 0x3F800000)
    ref = floats(NEGATIVE_NAN, PAYLOAD_NAN, 0x3F800000, 0x3F800000)
    assert equal_elements(jit, ref, tolerance).tolist() == [True, True, False, True]


def test_zeros_keep_their_sign_when_exact():
    assert equal_elements(floats(0x00000000), floats(0x80000000), Tolerance()).tolist() == [False]


def test_integers_stay_bit_exact():
    jit = np.array([0x7FC00000, 1], dtype=np.int32)
    ref = np.array([-0x3FFFFFFF, 1], dtype=np.int32)
    assert equal_elements(jit, ref, Tolerance()).tolist() == [False, True]


def test_nan_and_signed_zero_are_shown_distinctly():
    assert format_value(floats(NEGATIVE_NAN)[0]) == "-nan (0xffc00000)"
    assert format_value(floats(POSITIVE_NAN)[0]) == "nan (0x7fc00000)"
    assert format_value(np.float64("nan")) == "nan (0x7ff8000000000000)"
    assert format_value(floats(0x80000000)[0]) == "-0.0"


def test_return_values():
    f32 = np.dtype(np.float32)
    assert compare_return_values(float("nan"), -float("nan"), f32, Tolerance()) is None
    assert compare_return_values(None, None, None, Tolerance()) is None
    assert (
        compare_return_values(-0.0, 0.0, f32, Tolerance()) == "return value = -0.0 (reference 0.0)"
    )
    assert (
        compare_return_values(float("nan"), 1.5, f32, Tolerance())
        == "return value = nan (0x7fc00000) (reference 1.5)"
    )
    assert compare_return_values(3, 4, np.dtype(np.int64), Tolerance()) == (
        "return value = 3 (reference 4)"
    )
