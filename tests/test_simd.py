"""`simd(W)` (SIMD binding, Algorithm 3): bit-exact against cc on the whole corpus and several
pipelines and widths, vector IR visible, declines with reasons, aliasing guarded at run time,
if-conversion of saturating/thresholding kernels."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from corpus.manifest import CORPUS_DIR, KERNELS
from corpus_check import case_label, check_case
from pycc_stencil import load
from pycc_stencil.emit.targets import host_target, target_named
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.alignment import declare_row_alignment
from pycc_stencil.ir_passes.core.analyses import loops_of
from pycc_stencil.ir_passes.core.target import set_target
from pycc_stencil.ir_passes.pipeline import PipelineError, parse_pipeline, run_passes
from pycc_stencil.runtime.check import CheckOptions, check_file

HOST = host_target()


def _check(entry, variant, params, passes):
    result = check_case(entry, variant, params, passes)
    assert result.status == "OK", str(result)


def _label(entry, variant, params, passes):
    return case_label(entry, variant, params, passes)


def _corpus_cases():
    """Every corpus kernel with the target's width, on its first size set (odd/prime sizes;
    the pipeline cases below take the smaller second set)."""
    for entry in KERNELS:
        for params in entry["params"][:1]:
            variant = entry["variants"][0]
            yield pytest.param(
                entry, variant, params, "simd", id=_label(entry, variant, params, "simd")
            )


CHOSEN = [
    ("c66x/matrix_add.c", None),
    ("c66x/mean_filter_1x3.c", None),
    ("c66x/jacobi.c", None),
    ("c66x/sobel.c", None),
    ("c66x/lucas_kanade.c", None),
    ("polybench/jacobi_2d_vla.c", "kernel_jacobi_2d_vla"),
    ("polybench/heat_3d_ptr.c", None),
    ("legacy/box_blur_u8.c", "box_blur3x3_u8"),
    ("legacy/threshold.c", "band_u8"),
    ("legacy/sobel_s16.c", None),
    ("legacy/int_arith.c", "frame_diff_u8"),
    ("legacy/int_arith.c", "pack_rgb565"),
    ("legacy/math_kernels.c", "grad_mag_f32"),
    ("legacy/math_kernels.c", "quantize_f64"),
]
PIPELINES = [
    "simd(2)",
    "simd(3)",
    "unroll(8),simd(4)",
    "simd(4),unroll(2)",
    "unroll(16),simd(4,shuffle)",
]


def _pipeline_cases():
    for file, function in CHOSEN:
        for entry in KERNELS:
            if entry["file"] != file or function not in (None, entry["function"]):
                continue
            for passes in PIPELINES:
                params = entry["params"][min(1, len(entry["params"]) - 1)]
                variant = entry["variants"][-1]
                yield pytest.param(
                    entry, variant, params, passes, id=_label(entry, variant, params, passes)
                )


@pytest.mark.parametrize("entry, variant, params, passes", list(_corpus_cases()))
def test_corpus_kernel_is_bit_exact_with_simd(entry, variant, params, passes):
    _check(entry, variant, params, passes)


@pytest.mark.parametrize("entry, variant, params, passes", list(_pipeline_cases()))
def test_pipelines_and_widths_are_bit_exact(entry, variant, params, passes):
    _check(entry, variant, params, passes)


KERNELS_C = r"""
void add(int n, const float *a, const float *b, float *c) {
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
}
void shift_back(int n, float *a) {            /* a[i] needs a[i-1] of this sweep */
  for (int i = 1; i < n; i++) a[i] = a[i - 1] * 0.5f + a[i];
}
void shift_fwd(int n, float *a) {             /* reads ahead of its writes: vectorizable */
  for (int i = 0; i < n - 1; i++) a[i] = a[i + 1] * 0.5f + a[i];
}
void smooth(int n, const float *in, float *out) {
  for (int i = 1; i < n - 1; i++) out[i] = (in[i - 1] + in[i] + in[i + 1]) * 0.33f;
}
float dot(int n, const float *a, const float *b) {
  float s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
void reverse(int n, const double *a, double *b) {
  for (int i = 0; i < n; i++) b[i] = a[n - 1 - i] * 2.0;
}
void strided(int n, const float *a, float *b) {
  for (int i = 0; i < n; i++) b[i] = a[2 * i] - a[2 * i + 1];
}
void saturate(int n, const short *a, unsigned char *b) {
  for (int i = 0; i < n; i++) {
    int v = a[i] / 4 + 128;
    if (v < 0) v = 0;
    if (v > 255) v = 255;
    b[i] = (unsigned char)v;
  }
}
int isum(int n, const int *a) {
  int s = 3;
  for (int i = 0; i < n; i++) s += a[i] * 2;
  return s;
}
unsigned hash(int n, const unsigned char *a, short *out) {
  unsigned h = 7, p = 1;
  for (int i = 0; i < n; i++) { h ^= a[i]; p *= a[i] | 1u; out[i] = a[i] * 3; }
  return h + p;
}
int prefix(int n, const int *a, int *b) {
  int s = 0;
  for (int i = 0; i < n; i++) { s += a[i]; b[i] = s; }
  return s;
}
void column(int n, int stride, const float *a, float *b) {
  for (int i = 0; i < n; i++) b[i] = a[i * stride] + 1.0f;
}
"""


@pytest.fixture(scope="module")
def kernels_c(tmp_path_factory):
    path = tmp_path_factory.mktemp("simd") / "kernels.c"
    path.write_text(KERNELS_C)
    return str(path)


_LIBRARIES: dict[tuple[str, str | None], object] = {}


def _load(path, passes=None):
    """JIT-compiled libraries, one per (file, pipeline) for the whole module."""
    if (path, passes) not in _LIBRARIES:
        _LIBRARIES[(path, passes)] = load(path, passes=passes)
    return _LIBRARIES[(path, passes)]


def _run(path, passes):
    module = lower_file(path).module
    return run_passes(module, parse_pipeline(passes), verify=True, target=HOST)


def _function_text(result, name):
    return str(result.module.get_global(name))


def test_vector_ir_is_visible_and_the_loop_steps_by_the_width(kernels_c):
    result = _run(kernels_c, "simd(8)")
    text = _function_text(result, "add")
    assert "load <8 x float>" in text and "store <8 x float>" in text
    assert "fadd <8 x float>" in text
    steps = sorted(
        iv.step
        for lp in loops_of(result.module.get_global("add")).loops
        for iv in lp.induction_variables
    )
    assert steps == [1, 4, 8]  # the scalar remainder, the 4-wide epilogue, the vector loop
    assert "!pycc.remainder" in text
    messages = [str(r) for r in result.remarks if r.pass_name == "simd"]
    assert any(
        "loop vectorized by SIMD binding, width 8" in m and "[-Rpass=simd]" in m for m in messages
    )


def test_unrolled_loop_is_bound_in_groups(kernels_c):
    text = _function_text(_run(kernels_c, "unroll(8),simd(4)"), "add")
    assert text.count("store <4 x float>") == 2


def test_declines_say_why(kernels_c):
    result = _run(kernels_c, "simd(4)")
    missed = {r.message for r in result.remarks if r.kind == "missed"}
    assert any("touch the same memory 1 iteration(s) apart" in m for m in missed), missed
    assert any("floating-point value %s carried across iterations" in m for m in missed), missed
    assert any("loop-carried value %s (a recurrence, or a running value" in m for m in missed)
    passed_functions = {
        r.location.line for r in result.remarks if r.kind == "passed" and r.location
    }
    assert len(passed_functions) >= 6  # add, shift_fwd, smooth, reverse, strided, saturate, column


def test_reverse_and_strided_accesses(kernels_c):
    result = _run(kernels_c, "simd(4)")
    reverse = _function_text(result, "reverse")
    assert "shufflevector <4 x double>" in reverse  # the reversed vector
    strided = _function_text(result, "strided")
    assert "insertelement <4 x float>" in strided  # gathered lane by lane


def test_saturation_is_if_converted(kernels_c):
    text = _function_text(_run(kernels_c, "simd(16)"), "saturate")
    assert re.search(r"select\s+<16 x i1>", text)
    assert "store <16 x i8>" in text


@pytest.mark.parametrize("passes", ["simd(4)", "simd(8)", "unroll(4),simd(2)"])
@pytest.mark.parametrize("n", [0, 1, 7, 9, 101])
def test_small_kernels_match_the_scalar_code(kernels_c, passes, n):
    rng = np.random.default_rng(n)
    scalar, vector = _load(kernels_c), _load(kernels_c, passes)
    a = rng.uniform(-1, 1, max(2 * n + 2, 1)).astype(np.float32)
    b = rng.uniform(-1, 1, max(n, 1)).astype(np.float32)
    for name in ("add",):
        out1, out2 = np.full(max(n, 1), np.nan, np.float32), np.full(max(n, 1), np.nan, np.float32)
        getattr(scalar, name)(n, a[: max(n, 1)], b, out1)
        getattr(vector, name)(n, a[: max(n, 1)], b, out2)
        assert out1.tobytes() == out2.tobytes()
    for name in ("shift_back", "shift_fwd"):
        x1, x2 = a[: max(n, 1)].copy(), a[: max(n, 1)].copy()
        getattr(scalar, name)(n, x1)
        getattr(vector, name)(n, x2)
        assert x1.tobytes() == x2.tobytes(), name
    out1, out2 = np.zeros(max(n, 1), np.float32), np.zeros(max(n, 1), np.float32)
    scalar.strided(n, a, out1)
    vector.strided(n, a, out2)
    assert out1.tobytes() == out2.tobytes()
    ints = rng.integers(-(2**31), 2**31, max(n, 1), dtype=np.int32)
    assert scalar.isum(n, ints) == vector.isum(n, ints)
    pixels = rng.integers(0, 256, max(n, 1), dtype=np.uint8)
    shorts1, shorts2 = np.zeros(max(n, 1), np.int16), np.zeros(max(n, 1), np.int16)
    assert scalar.hash(n, pixels, shorts1) == vector.hash(n, pixels, shorts2)
    assert shorts1.tobytes() == shorts2.tobytes()
    s = rng.integers(-(2**15), 2**15, max(n, 1), dtype=np.int16)
    u1, u2 = np.zeros(max(n, 1), np.uint8), np.zeros(max(n, 1), np.uint8)
    scalar.saturate(n, s, u1)
    vector.saturate(n, s, u2)
    assert u1.tobytes() == u2.tobytes()


@pytest.mark.parametrize("passes", ["simd(8)", "unroll(16),simd(4,shuffle)"])
@pytest.mark.parametrize("offset", [-21, -8, -3, -1, 0, 1, 3, 9])
def test_overlapping_buffers_take_the_scalar_path_when_needed(kernels_c, offset, passes):
    """`smooth(in, out)` with out = in shifted by `offset` elements: the vector loop must give
    what the scalar loop gives whatever the overlap (the run-time check falls back)."""
    n = 41
    scalar, vector = _load(kernels_c), _load(kernels_c, passes)
    rng = np.random.default_rng(7)
    base = rng.uniform(-1, 1, n + 60).astype(np.float32)
    results = []
    for library in (scalar, vector):
        memory = base.copy()
        src = memory[30 : 30 + n]
        dst = memory[30 + offset : 30 + offset + n]
        library.smooth(n, src, dst)
        results.append(memory.tobytes())
    assert results[0] == results[1]


def test_width_from_the_target():
    assert host_target(features="+sse2,+sse4.2").vector_bytes == 16
    assert host_target(features="+avx,+avx2,+fma").vector_bytes == 32
    assert target_named("hexagon").vector_bytes == 128
    assert target_named("c66x").vector_bytes == 8


def test_neighbours_are_shuffled_from_shared_row_vectors(kernels_c):
    text = _function_text(_run(kernels_c, "unroll(16),simd(4,shuffle)"), "smooth")
    # in[i-1], in[i], in[i+1] over 4 groups: 3 row vectors shared, shifts by 1 and 2 lanes
    assert text.count("load <4 x float>") < 3 * 4
    assert "<4 x i32> <i32 1, i32 2, i32 3, i32 4>" in text
    assert "<4 x i32> <i32 2, i32 3, i32 4, i32 5>" in text
    unaligned = _function_text(_run(kernels_c, "unroll(16),simd(4,unaligned)"), "smooth")
    assert unaligned.count("load <4 x float>") == 3 * 4 and "shufflevector" not in unaligned


def test_neighbour_mode_follows_the_target_costs(kernels_c):
    """auto: one unaligned load per offset on x86 (shifts across a vector cost 2 shuffles),
    shuffles on Hexagon HVX (valign is cheap, loads are one per packet)."""
    host = _function_text(_run(kernels_c, "unroll(32),simd(8)"), "smooth")
    assert "shufflevector <8 x float> %" not in host.replace("undef", "")
    module = lower_file(kernels_c).module
    set_target(module, target_named("hexagon"))
    hexagon = run_passes(module, parse_pipeline("unroll(32),simd(8)"), verify=True).module
    assert "shufflevector <8 x float>" in str(hexagon.get_global("smooth"))


def test_bad_simd_arguments_are_reported():
    with pytest.raises(PipelineError, match="neighbour mode"):
        parse_pipeline("simd(4,sideways)")
    with pytest.raises(PipelineError, match="takes 0 to 2 argument"):
        parse_pipeline("simd(4,shuffle,1)")


def test_integer_reductions_use_vector_accumulators(kernels_c):
    result = _run(kernels_c, "unroll(16),simd(8)")
    text = _function_text(result, "isum")
    assert "phi  <8 x i32>" in text and "llvm.vector.reduce.add.v8i32" in text
    assert "llvm.vector.reduce.xor.v8i32" in _function_text(result, "hash")
    missed = [r.message for r in result.remarks if r.kind == "missed"]
    assert any("%s (a recurrence, or a running value read in the loop)" in m for m in missed)


PEELED = ["mean_filter_1x3.c", "jacobi.c", "sobel.c", "matrix_add.c"]


@pytest.mark.parametrize("passes", ["simd(2),align", "unroll(8),simd(4),align"])
@pytest.mark.parametrize("file", PEELED)
@pytest.mark.parametrize("size_x, size_y", [(38, 5), (2, 3), (6, 2)])
def test_peeling_for_declared_alignment_is_bit_exact(file, passes, size_x, size_y):
    path = os.path.join(CORPUS_DIR, "c66x", file)
    params = {"size_x": str(size_x), "size_y": str(size_y)}
    options = CheckOptions(params=params, passes=passes, row_align=8)
    for result in check_file(path, [], options):
        assert result.status == "OK", str(result)


def test_peeling_makes_the_store_aligned():
    """1x3 mean filter, row_align(8), 2-wide: without peeling the loads at x-1, x+1 are
    aligned; one peeled iteration aligns the load and the store at x (the store counts more)."""
    lowered = lower_file(os.path.join(CORPUS_DIR, "c66x", "mean_filter_1x3.c"))
    declare_row_alignment(lowered.module.get_global("MeanFilter1x3"), 8)
    result = run_passes(lowered.module, parse_pipeline("simd(2),align"), verify=True, target=HOST)
    text = str(result.module.get_global("MeanFilter1x3"))
    assert re.search(r"store <2 x float> .*, align 8", text)
    assert any("1 iteration(s) peeled" in r.message for r in result.remarks)


def test_stores_in_both_arms_become_one_store_and_clamps_select_on_their_branch():
    """sobel_mag_s16 stores 255 or mag to the same pixel in the two arms of an `if`: one
    store of a select, so the loop is vectorized; the nested ternary clamp of
    sobel_sum_s16_sat selects on each branch's own condition (min/max for LLVM)."""
    lowered = lower_file(os.path.join(CORPUS_DIR, "legacy", "sobel_s16.c"))
    result = run_passes(lowered.module, parse_pipeline("simd(8)"), verify=True, target=HOST)
    passed = [r for r in result.remarks if r.kind == "passed"]
    assert {r.location.line for r in passed} == {14, 37}
    text = str(result.module.get_global("sobel_mag_s16"))
    assert text.count("store <8 x i8>") == 1
