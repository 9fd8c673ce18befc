"""The FPGA kernels' data movement (runtime/hls/pycc_ship.h, F9 of the IMPACT'24 digest):
boxes of 1 to 3 dimensions copied DDR -> buffer, buffer -> DDR and within a buffer (shifts,
both ways), clamped to the windows of both arrays, and Fig. 6's ship(S, os, D, od, di, R),
each against an element-by-element numpy reference; built as C and as C++."""

from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest
from pycc_stencil.runtime.emitted import HEADER_DIRS, VENDOR_QUIET
from pycc_stencil.runtime.hls_vendor import ap_types_dir
from pycc_stencil.runtime.reference import compiler

#: the tests share the three builds of the wrappers (the ap_uint one costs g++ seconds): one
#: worker makes each once
pytestmark = pytest.mark.xdist_group("hls-ship")

_WRAPPERS = r"""
#include "pycc_ship.h"

static pycc_array described(float *base, int rank, const long *extent, const long *lo,
                            const long *hi)
{
    return pycc_array_window(pycc_array_of(base, sizeof *base, rank, extent), lo, hi);
}

#ifdef __cplusplus
extern "C" {
#endif
void box(float *dst, const long *dst_shape, const long *dst_lo, const long *dst_hi,
         const long *dst_at, float *src, const long *src_shape, const long *src_lo,
         const long *src_hi, const long *src_at, const long *size, int rank)
{
    pycc_array d = described(dst, rank, dst_shape, dst_lo, dst_hi);
    pycc_array s = src == dst ? d : described(src, rank, src_shape, src_lo, src_hi);
    pycc_ship_box(&d, dst_at, &s, src_at, size);
}

void memory_box(float *dst, const long *dst_shape, int dst_memory, const long *dst_at,
                float *src, const long *src_shape, int src_memory, const long *src_at,
                const long *size, int rank)
{
    pycc_array d = (dst_memory ? pycc_memory_of : pycc_array_of)(dst, sizeof *dst, rank, dst_shape);
    pycc_array s = (src_memory ? pycc_memory_of : pycc_array_of)(src, sizeof *src, rank, src_shape);
    pycc_ship_box(&d, dst_at, &s, src_at, size);
}

void fig6(float *S, const long *s_shape, const long *os, float *D, const long *d_shape,
          const long *od, int di, long R, const long *segment, int rank)
{
    pycc_array s = pycc_array_of(S, sizeof *S, rank, s_shape);
    pycc_array d = S == D ? s : pycc_array_of(D, sizeof *D, rank, d_shape);
    pycc_ship(&s, os, &d, od, di, R, segment);
}
#ifdef __cplusplus
}
#endif
"""

Longs = ctypes.c_long * 8


@pytest.fixture(scope="module", params=["c", "c++", "c++ ap_uint<4 x 32>"])
def ship(request, tmp_path_factory):
    """The wrappers built as C (`cc -std=c99`), as C++ (`c++`), strictly, and in the w-wide
    form against Vitis HLS's ap_int.h (memory rows moved as words of 4 elements)."""
    folder = tmp_path_factory.mktemp("ship")
    source = folder / "wrappers.c"
    source.write_text(_WRAPPERS)
    language = ["-x", "c++", "-std=c++14"] if request.param != "c" else ["-std=c99"]
    if request.param.endswith(">"):
        assert ap_types_dir() is not None, "hls4ml (a test dependency) ships ap_int.h"
        language += [f"-isystem{ap_types_dir()}", "-DPYCC_SHIP_BURST=4", *VENDOR_QUIET]
    tool = ["c++"] if request.param != "c" else compiler()
    library = folder / "ship.so"
    subprocess.run(
        [*tool, *language, "-Wall", "-Wextra", "-Werror", f"-I{HEADER_DIRS['hls']}",
         "-fPIC", "-shared", str(source), "-o", str(library)],
        check=True,
    )  # fmt: skip
    return ctypes.CDLL(str(library))


def _longs(values) -> Longs:
    return Longs(*[int(v) for v in values])


def _pointer(array: np.ndarray):
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


def _clamped(size, dst_at, dst_window, src_at, src_window):
    """Per dimension, the range of box positions inside both windows (None: empty)."""
    ranges = []
    for k, n in enumerate(size):
        low = max(0, dst_window[0][k] - dst_at[k], src_window[0][k] - src_at[k])
        high = min(n - 1, dst_window[1][k] - dst_at[k], src_window[1][k] - src_at[k])
        if low > high:
            return None
        ranges.append((low, high))
    return ranges


def _expected_box(dst, dst_at, dst_window, src, src_at, src_window, size):
    expected = dst.copy()
    ranges = _clamped(size, dst_at, dst_window, src_at, src_window)
    if ranges is not None:
        to = tuple(slice(a + lo, a + hi + 1) for a, (lo, hi) in zip(dst_at, ranges))
        frm = tuple(slice(a + lo, a + hi + 1) for a, (lo, hi) in zip(src_at, ranges))
        expected[to] = src[frm].copy()  # the values before the copy, as in a shift
    return expected


def _call_box(ship, dst, dst_window, dst_at, src, src_window, src_at, size):
    same = src is dst
    ship.box(
        _pointer(dst), _longs(dst.shape), _longs(dst_window[0]), _longs(dst_window[1]),
        _longs(dst_at), _pointer(dst if same else src), _longs(src.shape),
        _longs(src_window[0]), _longs(src_window[1]), _longs(src_at), _longs(size),
        dst.ndim,
    )  # fmt: skip


def _whole(shape):
    return ([0] * len(shape), [n - 1 for n in shape])


def _random(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_random_boxes_between_two_arrays_match_numpy(ship, rank):
    """DDR -> buffer and buffer -> DDR with windows narrower than the arrays, offsets that
    put the box partly outside (negative, past the end) and boxes of one element."""
    rng = np.random.default_rng(rank)
    for _ in range(300):
        src_shape = tuple(rng.integers(1, 9, rank))
        dst_shape = tuple(rng.integers(1, 9, rank))
        src, dst = _random(rng, src_shape), _random(rng, dst_shape)
        src_window = (
            [int(rng.integers(0, n)) for n in src_shape],
            [int(rng.integers(n // 2, n)) for n in src_shape],
        )
        dst_window = _whole(dst_shape) if rng.random() < 0.5 else (
            [int(rng.integers(0, n)) for n in dst_shape], [n - 1 for n in dst_shape]
        )  # fmt: skip
        size = [int(rng.integers(1, 10)) for _ in range(rank)]
        src_at = [int(rng.integers(-3, n + 1)) for n in src_shape]
        dst_at = [int(rng.integers(-3, n + 1)) for n in dst_shape]
        expected = _expected_box(dst, dst_at, dst_window, src, src_at, src_window, size)
        _call_box(ship, dst, dst_window, dst_at, src, src_window, src_at, size)
        np.testing.assert_array_equal(dst, expected)


@pytest.mark.parametrize("down", [True, False], ids=["down", "up"])
def test_shifts_within_a_buffer_copy_the_values_before_the_shift(ship, down):
    """The chunk buffer's shift: slices 1.. to 0.. (down) and the reverse, overlapping."""
    rng = np.random.default_rng(7)
    for shape in [(3, 33, 36), (2, 5), (9,), (4, 1, 7)]:
        buffer = _random(rng, shape)
        size = [shape[0] - 1, *shape[1:]]
        src_at = [1 if down else 0] + [0] * (len(shape) - 1)
        dst_at = [0 if down else 1] + [0] * (len(shape) - 1)
        whole = _whole(shape)
        expected = _expected_box(buffer, dst_at, whole, buffer, src_at, whole, size)
        _call_box(ship, buffer, whole, dst_at, buffer, whole, src_at, size)
        np.testing.assert_array_equal(buffer, expected)


@pytest.mark.parametrize("di", [1, 2, 3])
def test_fig6_copies_r_segments_of_di_dimensions(ship, di):
    """ship(S, os, D, od, di, R): the segment is the buffer's shape in its di innermost
    dimensions, the R repetitions go along dimension di + 1, clamped at S's end."""
    rng = np.random.default_rng(di)
    S = _random(rng, (6, 7, 9))
    for repeat in (1, 2, 3):
        segment = (3, 4, 5)
        D = np.zeros(segment, np.float32)
        os, od = [2, 1, 6], [0, 0, 0]
        size = [segment[k] if 3 - k <= di else repeat if 3 - k == di + 1 else 1 for k in range(3)]
        expected = _expected_box(D, od, _whole(D.shape), S, os, _whole(S.shape), size)
        ship.fig6(
            _pointer(S), _longs(S.shape), _longs(os), _pointer(D), _longs(D.shape), _longs(od),
            di, ctypes.c_long(repeat), _longs(segment), 3,
        )  # fmt: skip
        np.testing.assert_array_equal(D, expected)
        assert (D[..., 3:] == 0).all(), "past S's rows (6 + 3 > 9): nothing copied"


@pytest.mark.parametrize("to_memory", [False, True], ids=["fill", "flush"])
def test_rows_of_memory_move_whole_words_bit_exact(ship, to_memory):
    """Memory rows of 8, 12 or 16 elements (whole words of 4 in the w-wide form) and of 7 (not:
    the plain form), boxes starting and ending inside a word: the same as numpy; a flush
    leaves the rest of each word it rewrites as it was."""
    rng = np.random.default_rng(11 + to_memory)
    for _ in range(200):
        rows = int(rng.choice([7, 8, 12, 16]))
        memory = _random(rng, (5, rows))
        buffer = _random(rng, (3, 9))
        size = [int(rng.integers(1, 4)), int(rng.integers(1, 10))]
        memory_at = [int(rng.integers(-1, 5)), int(rng.integers(-2, rows))]
        buffer_at = [0, int(rng.integers(0, 3))]
        if to_memory:
            dst, dst_at, src, src_at = memory, memory_at, buffer, buffer_at
        else:
            dst, dst_at, src, src_at = buffer, buffer_at, memory, memory_at
        expected = _expected_box(
            dst, dst_at, _whole(dst.shape), src, src_at, _whole(src.shape), size
        )
        ship.memory_box(
            _pointer(dst), _longs(dst.shape), int(to_memory), _longs(dst_at), _pointer(src),
            _longs(src.shape), int(not to_memory), _longs(src_at), _longs(size), 2,
        )  # fmt: skip
        np.testing.assert_array_equal(dst, expected)
