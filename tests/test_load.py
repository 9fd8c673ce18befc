"""The Python API: load a C file, call kernels on numpy arrays, marshalling errors."""

from __future__ import annotations

import numpy as np
import pytest
from pycc_stencil import load
from pycc_stencil.runtime.library import DataDependentWarning

SOURCE = """
void scale(const float *in, float *out, int n) {
    for (int i = 0; i < n; i++) out[i] = 2.0f * in[i];
}
void smooth(const float *in, float *out, int n) {
    for (int i = 0; i < n; i++) out[i] = in[i - 1] + in[i + 1];
}
void jac(int n, int m, const double A[n][m], double B[n][m]) {
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < m - 1; j++)
            B[i][j] = 0.25 * (A[i-1][j] + A[i+1][j] + A[i][j-1] + A[i][j+1]);
}
int total(const unsigned char *p, unsigned char bias, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += p[i] + bias;
    return s;
}
void gather(const int *idx, const float *in, float *out, int n) {
    for (int i = 0; i < n; i++) out[i] = in[idx[i]];
}
void rows(float **r, int n) { for (int i = 0; i < n; i++) r[i][0] = 0; }
void weird(float *a) { goto x; x: a[0] = 1; }
"""


@pytest.fixture
def lib(c_file):
    return load(str(c_file(SOURCE)))


def test_calls_compute_like_c(lib):
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, dtype=np.float32)
    assert lib.scale(x, y, 8) is None
    assert np.array_equal(y, 2 * x)
    a = np.random.default_rng(1).random((5, 6))
    b = np.zeros((5, 6))
    lib.jac(5, 6, a, b)
    expected = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    assert np.array_equal(b[1:-1, 1:-1], expected)
    assert lib.total(np.full(10, 200, dtype=np.uint8), 3, 10) == 2030


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda lib: lib.scale(np.zeros(8), np.zeros(8, np.float32), 8),
            TypeError,
            "expected dtype float32, got float64",
        ),
        (
            lambda lib: lib.scale(np.zeros(7, np.float32), np.zeros(8, np.float32), 8),
            ValueError,
            "accesses 8 elements at these arguments, the array has only 7",
        ),
        (
            lambda lib: lib.scale(np.zeros(16, np.float32)[::2], np.zeros(8, np.float32), 8),
            ValueError,
            "not C-contiguous",
        ),
        (
            lambda lib: lib.scale(np.zeros(8, np.float32), 8),
            TypeError,
            "takes 3 arguments, 2 given",
        ),
        (
            lambda lib: lib.scale([0.0] * 8, np.zeros(8, np.float32), 8),
            TypeError,
            "expected a numpy array of float32, got list",
        ),
        (
            lambda lib: lib.scale(np.zeros(8, np.float32), np.zeros(8, np.float32), 2**31),
            ValueError,
            "out of range",
        ),
        (
            lambda lib: lib.scale(np.zeros(8, np.float32), np.zeros(8, np.float32), 8.0),
            TypeError,
            "expected an integer, got float",
        ),
        (
            lambda lib: lib.total(np.zeros(4, np.uint8), 256, 4),
            ValueError,
            r"256 is out of range \[0, 255\]",
        ),
        (
            lambda lib: lib.jac(5, 6, np.zeros((5, 5)), np.zeros((5, 6))),
            ValueError,
            "accesses 30 elements",
        ),
        (
            lambda lib: lib.smooth(np.zeros(10, np.float32), np.zeros(8, np.float32), 8),
            ValueError,
            "before the start of the array",
        ),
        (lambda lib: lib.rows(None, 3), TypeError, "cannot be called from Python"),
    ],
)
def test_marshalling_errors_are_exceptions(lib, call, error, message):
    with pytest.raises(error, match=message):
        call(lib)


def test_read_only_output_is_refused(lib):
    y = np.zeros(8, np.float32)
    y.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        lib.scale(np.zeros(8, np.float32), y, 8)
    x = np.zeros(8, np.float32)
    x.flags.writeable = False
    lib.scale(x, np.zeros(8, np.float32), 8)  # a read-only input is fine


def test_skipped_function_says_why(lib):
    with pytest.raises(AttributeError, match=r"weird was not compiled: .*goto is not supported"):
        _ = lib.weird
    with pytest.raises(AttributeError, match="no function named 'nothing'"):
        _ = lib.nothing
    assert "weird" in lib.skipped


def test_data_dependent_kernel_warns_and_runs(lib):
    idx = np.array([2, 0, 1], dtype=np.int32)
    out = np.zeros(3, np.float32)
    with pytest.warns(DataDependentWarning, match="gather: the size of in is not checked"):
        lib.gather(idx, np.array([5, 6, 7], np.float32), out, 3)
    assert out.tolist() == [7, 5, 6]
    with pytest.raises(ValueError, match="'idx': the kernel accesses 3 elements"):
        lib.gather(idx[:2], np.array([5, 6, 7], np.float32), out, 3)
