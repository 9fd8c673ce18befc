"""`simd(W)` (SIMD binding, Algorithm 3): bit-exact against cc on the whole corpus and several
pipelines and widths, vector IR visible, declines with reasons, aliasing guarded at run time,
if-conversion of saturating/thresholding kernels."""

from __future__ import annotations

import ctypes
import os
import re

import numpy as np
import pytest
from corpus.manifest import CORPUS_DIR, KERNELS
from corpus_check import (
    assert_fired,
    busiest,
    by_file,
    case_label,
    check,
    check_case,
    compiled,
    in_child,
    on_entry,
    on_source,
    passed_by,
    sweep_if,
)
from llvmlite import ir
from pycc_stencil.emit.host_jit import compile_module
from pycc_stencil.emit.targets import host_target, target_named
from pycc_stencil.emit.targets.portable_c import PortableC
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.alignment import declare_row_alignment
from pycc_stencil.ir_passes.core.analyses import loops_of
from pycc_stencil.ir_passes.core.target import set_target
from pycc_stencil.ir_passes.pipeline import PipelineError, parse_pipeline, run_passes

HOST = host_target()

#: corpus kernels SIMD binding leaves scalar, and the reason its missed remark must give
#: (the same on every x86 target: checked for SSE4.2, AVX2 and AVX-512 features); every
#: other kernel must be vectorized (a `passed` remark of simd about it)
SIMD_DECLINES = {
    **dict.fromkeys(
        ["kernel_seidel_2d", "kernel_seidel_2d_vla", "kernel_seidel_2d_ptr"],
        "touch the same memory 1 iteration(s) apart",  # in place: A[i][j-1] of this sweep
    ),
    **dict.fromkeys(
        ["kernel_star_3d", "kernel_star_3d_vla", "kernel_star_3d_ptr"],
        "is not affine in the induction variable (indirect access)",
    ),
    "apply_mask_f32": "a conditional load (it would need masking)",
    "median3_h_u8": "a conditional load (it would need masking)",
    "gauss5x5_f32": "floating-point value %acc carried across iterations (a reduction)",
    "conv1d_f32": "floating-point value %acc carried across iterations (a reduction)",
    "conv_col_f32": "floating-point value %acc carried across iterations (a reduction)",
    "sum_f32": "floating-point value %s carried across iterations (a reduction)",
    "mean_abs_diff_f32": "floating-point value %s carried across iterations (a reduction)",
    "max_abs_f64": "floating-point value %m carried across iterations (a reduction)",
    "residual_2d": "floating-point value %r carried across iterations (a reduction)",
    "sharpen_u8": "call to clamp_int in the loop body",
    "gain_clamp_f32": "call to clampf in the loop body",
    "downsample2_u8": "the address of a store is not affine in the induction variable",
    "prefix_sum_dowhile": "control flow leaves the loop body early",
    "row_diff_until_zero_u8": "control flow leaves the loop body early",
    "halve_ptrwalk_u8": "loop-carried value %src.1 (a recurrence",
    "checksum_u32": "loop-carried value %h (a recurrence",
    "laplace_s8": "loop-carried value %acc (a recurrence",
    "count_above_u8": "loop-carried value %count (a recurrence",
}


def _check(entry, variant, params, passes, declined=None):
    """Bit-exact against cc, on a run that changed something (or returned a value), and
    every pass of `passes` fired (or declined as `declined` says)."""
    result, remarks = check_case(entry, variant, params, passes)
    assert result.status == "OK", str(result)
    assert result.changed or entry["returns"], f"{result}: the run changed nothing"
    assert_fired(remarks, passes, declined)


def _label(entry, variant, params, passes):
    return case_label(entry, variant, params, passes)


def _corpus_cases():
    """Every corpus kernel with the target's width, on its busiest size set (odd/prime sizes,
    T > 0; the pipeline cases below take the smaller second set)."""
    for entry in KERNELS:
        params = busiest(entry["params"])
        variant = entry["variants"][0]
        yield pytest.param(
            entry,
            variant,
            params,
            "simd",
            id=_label(entry, variant, params, "simd"),
            marks=on_entry(entry, variant),
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
#: what each pipeline leaves undone on every chosen kernel: `unroll` after `simd` meets the
#: vector loop's guards (the exit condition, the overlap check), which it does not model
PIPELINE_DECLINES = {"simd(4),unroll(2)": {"unroll": "loop not unrolled: "}}


def _pipeline_cases():
    """Each chosen kernel under one of the pipelines (rotating over the files, so a file is
    compiled once: each pipeline meets about a fifth of the kernels); the other four are
    sweeps (docs/testing.md)."""
    entries = [
        entry
        for file, function in CHOSEN
        for entry in KERNELS
        if entry["file"] == file and function in (None, entry["function"])
    ]
    for index, entry in zip(by_file(entries), entries):
        params = entry["params"][min(1, len(entry["params"]) - 1)]
        variant = entry["variants"][-1]
        kept = {PIPELINES[index % len(PIPELINES)]}
        for passes in PIPELINES:
            yield pytest.param(
                entry,
                variant,
                params,
                passes,
                id=_label(entry, variant, params, passes),
                marks=[on_entry(entry, variant), *sweep_if(passes not in kept)],
            )


@pytest.mark.parametrize("entry, variant, params, passes", list(_corpus_cases()))
def test_corpus_kernel_is_bit_exact_with_simd(entry, variant, params, passes):
    declined = entry["function"] in SIMD_DECLINES
    _check(
        entry,
        variant,
        params,
        passes,
        {"simd": SIMD_DECLINES[entry["function"]]} if declined else None,
    )


@pytest.mark.parametrize("entry, variant, params, passes", list(_pipeline_cases()))
def test_pipelines_and_widths_are_bit_exact(entry, variant, params, passes):
    _check(entry, variant, params, passes, PIPELINE_DECLINES.get(passes))


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
void two_rows(int n, const float *a, float *b, float *c) {
  for (int i = 1; i < n - 1; i++) { b[i] = a[i - 1] + a[i + 1]; c[i] = a[i] * 0.5f; }
}
"""


@pytest.fixture(scope="module")
def kernels_c(module_c_file):
    return module_c_file("kernels", KERNELS_C)


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


def test_the_remainder_is_bound_at_halving_widths_down_to_4_lanes(kernels_c):
    """At most 3 iterations stay scalar after a 16-lane loop: 8- and 4-lane epilogues."""
    result = _run(kernels_c, "simd(16)")
    steps = sorted(
        iv.step
        for lp in loops_of(result.module.get_global("add")).loops
        for iv in lp.induction_variables
    )
    assert steps == [1, 4, 8, 16]
    (message,) = [r.message for r in result.remarks if r.function == "add"]
    assert message.endswith("and 8- and 4-wide epilogues"), message


def test_small_bodies_bind_several_vectors_per_iteration(kernels_c):
    """`simd` without a width interleaves small bodies on the host, as LLVM's vectorizer does
    (`c[i] = a[i] + b[i]`: 4 vectors); an explicit width, a large body or another target
    binds one."""
    assert [HOST.simd_interleave(n) for n in (6, 12, 13, 24, 25, 100)] == [4, 4, 2, 2, 1, 1]
    assert target_named("c66x").simd_interleave(6) == 1
    result = _run(kernels_c, "simd")
    (message,) = [r.message for r in result.remarks if r.function == "add"]
    assert ", 4 vectors per iteration" in message, message
    (explicit,) = [r.message for r in _run(kernels_c, "simd(8)").remarks if r.function == "add"]
    assert "vectors per iteration" not in explicit, explicit


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


#: the functions of KERNELS_C simd leaves scalar, and the reason its missed remark gives
KERNELS_C_DECLINES = {
    "shift_back": "touch the same memory 1 iteration(s) apart",
    "dot": "floating-point value %s carried across iterations (a reduction)",
    "prefix": "loop-carried value %s (a recurrence",
}
#: scalar arguments besides n
KERNELS_C_PARAMS = {"column": {"stride": 3}}


@on_source("simd-kernels.c")
@pytest.mark.parametrize("passes", ["simd(4)", "simd(8)", "unroll(4),simd(2)"])
@pytest.mark.parametrize("n", [0, 1, 7, 9, 101])
def test_small_kernels_are_bit_exact(kernels_c, passes, n):
    """Every function of KERNELS_C, n smaller than a vector, odd, prime: bit-exact against cc
    (buffers, guard zones, return values), each vectorized or declined as expected."""
    unit = compiled(kernels_c, [], passes)
    for name in unit.source.lowered.order:
        params = {"n": n, **KERNELS_C_PARAMS.get(name, {})}
        result, remarks = check(kernels_c, name, params, passes)
        assert result.status == "OK", str(result)
        declined = {"simd": KERNELS_C_DECLINES[name]} if name in KERNELS_C_DECLINES else None
        assert_fired(remarks, passes, declined)


@on_source("simd-kernels.c")
@pytest.mark.parametrize("stride", [-2, 0, 5])
def test_strided_columns_with_any_stride_are_bit_exact(kernels_c, stride):
    """`a[i * stride]`: backwards, one element for every lane, far apart."""
    result, remarks = check(kernels_c, "column", {"n": 23, "stride": stride}, "simd(4)")
    assert result.status == "OK", str(result)
    assert passed_by(remarks, "simd"), remarks


def _overlapping_runs(kernels_c, passes, name, n, input_bytes, offset):
    """`name(n, in, out)` run by pycc-stencil's and cc's builds with `out` at `in` plus
    `offset` bytes in one random buffer: the two buffers' final bytes, and the simd remark."""
    unit = compiled(kernels_c, [], passes)
    (done,) = [
        r.message
        for r in unit.remarks
        if r.function == name and r.kind == "passed" and r.pass_name == "simd"
    ]
    functions = {
        "pycc": unit.function(name),
        "cc": unit.source.reference_of(name).function(name),
    }
    margin = input_bytes + 128
    base = np.random.default_rng(7).integers(0, 256, 3 * margin, dtype=np.uint8)

    def run(function) -> bytes:
        memory = base.copy()
        address = memory.ctypes.data + margin
        function(n, address, address + offset)
        return memory.tobytes()

    return {side: in_child(lambda f=function: run(f)) for side, function in functions.items()}, done


@on_source("simd-kernels.c")
@pytest.mark.parametrize("passes", ["simd(8)", "unroll(16),simd(4,shuffle)", "simd(8,shuffle)"])
@pytest.mark.parametrize("offset", [-21, -8, -3, -1, 0, 1, 3, 9])
def test_overlapping_buffers_take_the_scalar_path_when_needed(kernels_c, offset, passes):
    """`smooth(in, out)` with out = in shifted by `offset` elements: the vector loop must give
    what cc's build of the C gives whatever the overlap (the run-time check falls back)."""
    results, done = _overlapping_runs(kernels_c, passes, "smooth", 41, 41 * 4, offset * 4)
    assert "with a run-time overlap check" in done, done
    assert results["pycc"] == results["cc"]


@on_source("simd-kernels.c")
@pytest.mark.parametrize("offset", [-90, -41, -40, -7, 0, 1, 40, 41, 50, 80, 81, 82])
def test_buffers_of_two_strides_are_tested_once_over_the_whole_loop(kernels_c, offset):
    """`saturate(a, b)` reads int16 and writes uint8 (strides 2 and 1): one test before the
    loop covers every iteration (no test per vector iteration), and an overlap only the
    loop's last vectors meet (b in the upper half of a) still sends the loop to its scalar
    path."""
    text = _function_text(_run(kernels_c, "simd(8)"), "saturate")
    assert "simd.check" not in text and "simd.guard" in text, text
    results, done = _overlapping_runs(kernels_c, "simd(8)", "saturate", 41, 41 * 2, offset)
    assert "with a run-time overlap check" in done, done
    assert results["pycc"] == results["cc"]


#: a row read at x-1, x, x+1 after one store and before another into one output
SHIFTED_ROW = """
void later(int n, const float *a, float *b) {
  for (int i = 1; i < n - 1; i++) { b[i] = 1.0f; b[i] = b[i] * a[i + 1] + a[i - 1] + a[i]; }
}
"""


@pytest.mark.parametrize("offset", [-9, -4, -3, -1, 0, 1, 3, 4, 9])
def test_a_row_against_a_store_is_tested_as_one_pair(module_c_file, offset):
    """The three loads of a row against each store are one distance test before the loop
    (not three), whether the store comes before or after them, and an overlap at any of
    the row's offsets still sends the loop to its scalar path."""
    path = module_c_file("shifted-row", SHIFTED_ROW)
    text = _function_text(_run(path, "simd(8)"), "later")
    guards = len(re.findall(r'%"simd\.guard[.\d]*" =', text))  # the loop's, its epilogue's
    assert guards and text.count("icmp sle i64") == 2 * guards, text
    results, done = _overlapping_runs(path, "simd(8)", "later", 37, 37 * 4, offset * 4)
    assert "with a run-time overlap check" in done, done
    assert results["pycc"] == results["cc"]


SHIFTED_TWO_STRIDES = """
void narrow(int n, const short *a, unsigned char *b) {
  for (int i = 1; i < n - 1; i++) b[i] = (unsigned char)((a[i - 1] + a[i] + a[i + 1]) >> 2);
}
"""


SHIFTED_COLUMN = """
void spread(int n, const float *a, float *b) {
  int s = n / 9;  /* a stride known at run time only: tested in every vector iteration */
  for (int i = 1; i < n - 1; i++) b[s * i] = a[s * i - 1] + a[s * i] + a[s * i + 40];
}
void spread_after(int n, const float *a, float *b) {  /* b stored before a is read */
  int s = n / 9;
  for (int i = 1; i < n - 1; i++) {
    b[s * i] = 2.0f;
    b[s * i + 2 * n] = a[s * i - 1] + a[s * i + 40];
  }
}
"""


@pytest.mark.parametrize("name", ["spread", "spread_after"])
# b[3i + 3k'] = a[3i + 3k + c], k < k' (spread_after) or k > k' (spread): the lanes that meet
@pytest.mark.parametrize("offset", [-22, -4, 0, 2, 19, 28, 37, 43, 52, 61])
def test_lanes_of_a_shifted_row_are_tested_as_one_range(module_c_file, offset, name):
    """`a[3i - 1], a[3i], a[3i + 40]` against `b[3i]` (a stride known at run time): the
    overlap test of each vector iteration covers the hull of the loads' lanes (wider than
    one load's lanes), so `b` at any offset from `a` gives cc's results."""
    path = module_c_file("shifted-column", SHIFTED_COLUMN)
    results, done = _overlapping_runs(path, "simd(8)", name, 29, 29 * 20, offset * 4)
    assert "with a run-time overlap check" in done, done
    assert results["pycc"] == results["cc"]


@pytest.mark.parametrize("offset", [-80, -77, -3, 0, 2, 72, 74])
def test_a_row_of_another_stride_is_tested_as_one_range(module_c_file, offset):
    """An int16 row read at x-1, x, x+1 and a uint8 row written: one range test over the
    whole loop for the three loads (their hull), and an overlap at the hull's edges still
    sends the loop to its scalar path."""
    path = module_c_file("shifted-two-strides", SHIFTED_TWO_STRIDES)
    text = _function_text(_run(path, "simd(8)"), "narrow")
    guards = len(re.findall(r'%"simd\.guard[.\d]*" =', text))
    assert guards and text.count("icmp ule i64") == 2 * guards, text
    results, done = _overlapping_runs(path, "simd(8)", "narrow", 37, 37 * 2, offset)
    assert "with a run-time overlap check" in done, done
    assert results["pycc"] == results["cc"]


#: loops of every exit test over an int16 row read and a uint8 row written (two strides)
LAST_ITERATION = """
#define F(name) void name(int lo, int hi, const short *s, unsigned char *d)
F(lt) { for (int i = lo; i < hi; i++) d[i] = s[i] >> 1; }
F(le) { for (int i = lo; i <= hi; i++) d[i] = s[i] >> 1; }
F(gt) { for (int i = hi; i > lo; i--) d[i] = s[i] >> 1; }
F(ge) { for (int i = hi; i >= lo; i--) d[i] = s[i] >> 1; }
F(ne) { for (int i = lo; i != hi; i++) d[i] = s[i] >> 1; }
F(lt3) { for (int i = lo; i < hi; i += 3) d[i] = s[i] >> 1; }
F(ge3) { for (int i = hi; i >= lo; i -= 3) d[i] = s[i] >> 1; }
"""
#: the iterations each runs for (lo, hi), as C runs them
LAST_ITERATION_COUNTS = {
    "lt": lambda lo, hi: len(range(lo, hi)),
    "le": lambda lo, hi: len(range(lo, hi + 1)),
    "gt": lambda lo, hi: len(range(hi, lo, -1)),
    "ge": lambda lo, hi: len(range(hi, lo - 1, -1)),
    "ne": lambda lo, hi: len(range(lo, hi)),
    "lt3": lambda lo, hi: len(range(lo, hi, 3)),
    "ge3": lambda lo, hi: len(range(hi, lo - 1, -3)),
}


@pytest.mark.parametrize("name", sorted(LAST_ITERATION_COUNTS))
def test_the_whole_loop_range_ends_at_the_last_iteration(module_c_file, name):
    """The overlap test of two strides covers iterations 0..K, K exactly the last one (one
    more would make buffers that only touch look overlapping, and the loop run scalar): the
    pass's K, stored to a probe where it is computed, against the iterations C runs."""
    path = module_c_file("last_iteration", LAST_ITERATION)
    module = run_passes(lower_file(path).module, parse_pipeline("simd(8)"), target=HOST).module
    (last,) = [
        i for b in module.get_global(name).blocks for i in b.instructions if i.name == "simd.last"
    ]
    probe = ir.GlobalVariable(module, ir.IntType(64), "probe")
    probe.initializer = ir.Constant(ir.IntType(64), -1)
    builder = ir.IRBuilder(last.parent)
    builder.position_after(last)
    builder.store(builder.zext(last, ir.IntType(64)), probe)
    jit = compile_module(module, export=[name], opt_level=0)
    kernel = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    source = np.arange(200, dtype=np.int16)
    for lo, hi in [(0, 41), (3, 90), (1, 17), (5, 66), (0, 100)]:
        target = np.zeros(200, dtype=np.uint8)
        kernel(jit.function_address(name))(lo, hi, source.ctypes.data, target.ctypes.data)
        found = ctypes.c_int64.from_address(jit.global_address("probe")).value
        assert found == LAST_ITERATION_COUNTS[name](lo, hi) - 1, (lo, hi)


@on_source("simd-kernels.c")
@pytest.mark.parametrize("n", [10, 17, 40, 67, 131])
def test_two_store_rows_are_aligned_at_run_time_with_the_same_results(kernels_c, n):
    """With 512-bit vectors (16 floats: a store off a 64-byte line splits it) a loop that
    stores two rows runs its first vector unaligned and the rest from the first iteration
    whose store is aligned: bit-exact against cc at every start offset (a 16-float period),
    and where `b` or `c` overlaps `a` within a vector (the first vector then must not run,
    nor the vector loop: the scalar loop does it all)."""
    unit = compiled(kernels_c, [], "simd(16)")
    (done,) = [r.message for r in unit.remarks if r.function == "two_rows" and r.kind == "passed"]
    assert "its stores aligned to 64 bytes at run time" in done, done
    text = _function_text(_run(kernels_c, "simd(16)"), "two_rows")
    assert '"simd.align.peel"' in text and ".align.head" in text
    functions = {
        "pycc": unit.function("two_rows"),
        "cc": unit.source.reference_of("two_rows").function("two_rows"),
    }
    floats = 3 * n + 64
    base = np.random.default_rng(5).uniform(-1, 1, 2 * floats).astype(np.float32)
    layouts = [(start, start + floats // 2, start + floats) for start in range(16)]
    layouts += [(16, 17, 16 + floats), (16, 16 + floats, 23), (16, 30, 14)]  # overlaps

    def run(function) -> list[bytes]:
        results = []
        for a, b, c in layouts:
            memory = base.copy()
            address = memory.ctypes.data
            function(n, address + 4 * a, address + 4 * b, address + 4 * c)
            results.append(memory.tobytes())
        return results

    results = {side: in_child(lambda f=function: run(f)) for side, function in functions.items()}
    for layout, mine, theirs in zip(layouts, results["pycc"], results["cc"], strict=True):
        assert mine == theirs, layout


def test_width_from_the_target():
    assert host_target(features="+sse2,+sse4.2").vector_bytes == 16
    assert host_target(features="+avx,+avx2,+fma").vector_bytes == 32
    assert host_target(features="+avx,+avx512f,-prefer-128-bit,-prefer-256-bit").vector_bytes == 32
    assert host_target(features="+avx,+avx2,+prefer-128-bit,+prefer-256-bit").vector_bytes == 16
    assert host_target(features="+avx,-avx").vector_bytes == 16  # the last sign wins
    # the default binding: 512-bit vectors of 4- and 8-byte elements with AVX-512, as
    # LLVM's vectorizers; 256 bits of narrower ones, or where the flags prefer 256 or 128
    wide = host_target(features="+avx,+avx2,+avx512f,+avx512bw,-prefer-128-bit,-prefer-256-bit")
    assert [wide.simd_lanes(n) for n in (1, 2, 4, 8)] == [32, 16, 16, 8]
    for narrower in ("+prefer-256-bit", "-avx512f"):
        target = host_target(features=f"+avx,+avx2,+avx512f,+avx512bw,{narrower}")
        assert [target.simd_lanes(n) for n in (1, 2, 4, 8)] == [32, 16, 8, 4]
    assert host_target(features="+avx,+avx2").simd_lanes(4) == 8
    # the portable C's 16-byte vectors do not follow the host's ISA
    portable = PortableC(features="+avx,+avx2,+avx512f,-prefer-128-bit,-prefer-256-bit")
    assert [portable.simd_lanes(n) for n in (1, 4, 8)] == [16, 4, 2]
    assert portable.store_alignment(64) == 0 and host_target().store_alignment(64) == 64
    assert host_target(features="+avx512f,+prefer-128-bit,+prefer-256-bit").simd_lanes(4) == 4
    assert target_named("hexagon").vector_bytes == 128
    assert target_named("c66x").vector_bytes == 8


def test_neighbours_are_shuffled_from_shared_row_vectors(kernels_c):
    text = _function_text(_run(kernels_c, "unroll(16),simd(4,shuffle)"), "smooth")
    # in[i-1], in[i], in[i+1] over 4 groups: 3 row vectors shared, shifts by 1 and 2 lanes
    assert text.count("load <4 x float>") < 3 * 4
    assert "<4 x i32> <i32 1, i32 2, i32 3, i32 4>" in text
    assert "<4 x i32> <i32 2, i32 3, i32 4, i32 5>" in text
    # one vector an iteration: the row's vector from in[i+1], carried to the next iteration,
    # in[i-1] and in[i] shifted out of the previous one and it
    text = _function_text(_run(kernels_c, "simd(4,shuffle)"), "smooth")
    assert text.count("load <4 x float>") == 1
    assert "<4 x i32> <i32 2, i32 3, i32 4, i32 5>" in text  # in[i-1]
    assert "<4 x i32> <i32 3, i32 4, i32 5, i32 6>" in text  # in[i]
    assert re.search(r'= phi +<4 x float> \[%"\S+", %"\S+\.simd"\], \[%"\S+\.first", %"', text)
    unaligned = _function_text(_run(kernels_c, "unroll(16),simd(4,unaligned)"), "smooth")
    assert unaligned.count("load <4 x float>") == 3 * 4 and "shufflevector" not in unaligned


@on_source("simd-kernels.c")
@pytest.mark.parametrize(
    "passes", ["simd(4,shuffle)", "simd(8,shuffle)", "unroll(16),simd(8,shuffle)"]
)
@pytest.mark.parametrize("n", [0, 3, 4, 9, 17, 101])
def test_carried_rows_are_bit_exact_at_any_length(kernels_c, passes, n):
    """A row's neighbours from the vector the previous iteration loaded (its first lanes
    loaded one by one on the way in, only when the vector loop runs): rows shorter than a
    vector, of one vector and a few more, long."""
    for name in ("smooth", "two_rows"):
        result, remarks = check(kernels_c, name, {"n": n}, passes)
        assert result.status == "OK", str(result)
        (done,) = passed_by(remarks, "simd")
        assert "1 row(s) carried across iterations" in done, done


def test_rows_of_bytes_are_not_carried(module_c_file):
    """Widening bytes takes the shuffle port too: a uint8 row keeps its direct loads."""
    path = module_c_file(
        "bytes",
        "void smooth8(int n, const unsigned char *in, unsigned char *out) {\n"
        "  for (int i = 1; i < n - 1; i++) out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3;\n}\n",
    )
    result, remarks = check(path, "smooth8", {"n": 37}, "simd(16,shuffle)")
    assert result.status == "OK", str(result)
    (done,) = passed_by(remarks, "simd")
    assert "width 16" in done and "carried" not in done, done


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
#: the kernels whose loop starts one element into the row: one iteration is peeled
PEELS = {"mean_filter_1x3.c", "jacobi.c"}


@pytest.mark.parametrize("passes", ["simd(2),align", "unroll(8),simd(4),align"])
@pytest.mark.parametrize("file", [pytest.param(f, marks=on_source(f"c66x/{f}")) for f in PEELED])
@pytest.mark.parametrize("size_x, size_y", [(38, 5), (2, 3), (6, 2)])
def test_peeling_for_declared_alignment_is_bit_exact(file, passes, size_x, size_y):
    path = os.path.join(CORPUS_DIR, "c66x", file)
    (function,) = compiled(path, [], passes, row_align=8).source.lowered.order
    params = {"size_x": size_x, "size_y": size_y}
    result, remarks = check(path, function, params, passes, row_align=8)
    assert result.status == "OK", str(result)
    assert_fired(remarks, passes)
    (vectorized,) = passed_by(remarks, "simd")
    assert ("iteration(s) peeled" in vectorized) == (file in PEELS), vectorized
    assert any("align raised to 8 on" in m for m in passed_by(remarks, "align")), remarks


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
