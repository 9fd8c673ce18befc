"""`unroll-full(L)`: constant-trip loops (filter windows) become straight-line code, bit-exact
against cc alone and followed by `unroll(4)` or SIMD binding of the pixel loop, for image sizes
that are odd, prime, and smaller than the window."""

from __future__ import annotations

import pytest
from corpus.manifest import KERNELS
from corpus_check import assert_fired, busiest, check, check_case, corpus_params, on_source
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.analyses import loops_of
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes

HOST = host_target()

PIPELINES = ["unroll-full", "unroll-full,unroll(4)", "unroll-full,simd(4)"]
#: corpus kernels with window loops (5×5 with a table, 3×3 signed, a window with an `if`
#: inside, a window gathered into a local array followed by a data-dependent sort)
WINDOWED = [
    (name, next(e for e in KERNELS if e["function"] == name)["params"][:3])
    for name in ("gauss5x5_u8", "gauss5x5_f32", "laplace_s8", "wrap_blur_1d_s16", "median3x3_u8")
]


#: (pipeline, kernel) -> the pass that must decline it and the words of its missed remark;
#: every other pass of every pipeline must leave a passed remark about the kernel
DECLINES = {
    # the sort's comparison loop exits early: neither unrolled nor vectorized
    ("unroll-full,unroll(4)", "median3x3_u8"): {"unroll": "only the header or the latch may exit"},
    ("unroll-full,simd(4)", "median3x3_u8"): {"simd": "control flow leaves the loop body early"},
    # the window wraps around with `%`: not affine
    ("unroll-full,simd(4)", "wrap_blur_1d_s16"): {"simd": "is not affine in the induction"},
    # `if (s > u)` on a value loaded under the condition
    ("unroll-full,simd(4)", "odd_steps"): {"simd": "a conditional load"},
}


@pytest.mark.parametrize("entry, params, passes", corpus_params(WINDOWED, PIPELINES))
def test_windowed_corpus_kernel_is_bit_exact(entry, params, passes):
    result, remarks = check_case(entry, entry["variants"][0], params, passes)
    assert result.status == "OK", str(result)
    assert result.changed or params != busiest(entry["params"]), "empty iteration space"
    assert_fired(remarks, passes, DECLINES.get((passes, entry["function"])))


WINDOWS = """
/* float reductions across a window with run-time weights: the order of the additions decides
 * the rounding, so any reordering by the pass shows up as a mismatch */
void window3(int w, int h, const float *in, const float *k, float *out) {
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++) {
      float sum = 0.0f;
      for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
          sum += k[j * 3 + i] * in[(y + j - 1) * w + x + i - 1];
      out[y * w + x] = sum;
    }
}

void window5(int w, int h, const float *in, const float *k, float *out) {
  for (int y = 2; y < h - 2; y++)
    for (int x = 2; x < w - 2; x++) {
      float sum = in[y * w + x] * 0.5f;
      for (int j = 2; j >= -2; j--)
        for (int i = -2; i <= 2; i++)
          sum += k[(j + 2) * 5 + i + 2] * in[(y + j) * w + x + i];
      out[y * w + x] = sum;
    }
}

/* steps other than 1, a loop that never runs, a window with a condition inside */
void odd_steps(int n, const double *in, double *out) {
  for (int x = 0; x < n; x++) {
    double s = 0.0;
    for (int t = 7; t > 0; t -= 3)
      s = s * 0.75 + in[x] * t;
    for (int e = 0; e < 0; e++)
      s += 1.0;
    for (unsigned u = 0; u < 4u; u++)
      if (s > u)
        s -= in[x] * 0.125;
    out[x] = s;
  }
}
"""

SIZES = [{"w": 13, "h": 11}, {"w": 4, "h": 4}, {"w": 2, "h": 3}]


@pytest.fixture(scope="module")
def windows_c(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("full_unroll") / "windows.c"
    path.write_text(WINDOWS)
    return str(path)


@on_source("windows.c")
@pytest.mark.parametrize("passes", PIPELINES)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['w']}x{s['h']}")
@pytest.mark.parametrize("function", ["window3", "window5", "odd_steps"])
def test_window_kernels_are_bit_exact(windows_c, function, size, passes):
    params = {"n": size["w"] * size["h"]} if function == "odd_steps" else size
    result, remarks = check(windows_c, function, params, passes, ["-std=c99"])
    assert result.status == "OK", str(result)
    if size["w"] * size["h"] > 16:  # an image with an interior
        assert result.changed, "the run changed nothing"
    assert_fired(remarks, passes, DECLINES.get((passes, function)))


@pytest.fixture
def windows(windows_c):
    return lower_file(windows_c)


def test_window_nest_becomes_one_block_of_the_pixel_loop(windows):
    result = run_passes(windows.module, parse_pipeline("unroll-full"), verify=True, target=HOST)
    for name in ("window3", "window5"):
        function = result.module.get_global(name)
        rows, pixels = loops_of(function).loops
        assert pixels.parent is rows and pixels.innermost
        assert len(pixels.blocks) == 2  # the header and one straight-line block
        loads = [i for b in pixels.blocks for i in b.instructions if i.opname == "load"]
        taps = 9 if name == "window3" else 25
        assert len(loads) == 2 * taps + (name == "window5")

    def passed(function):
        return [r.message for r in result.remarks if r.kind == "passed" and r.function == function]

    assert passed("window3") == ["loop fully unrolled (3 iterations)"] * 2
    assert passed("window5") == ["loop fully unrolled (5 iterations)"] * 2
    # t = 7, 4, 1; the empty loop; the unsigned loop with its `if`
    assert passed("odd_steps") == [f"loop fully unrolled ({n} iterations)" for n in (3, 0, 4)]
    function = result.module.get_global("odd_steps")
    assert len(loops_of(function).loops) == 1


def test_window_order_of_additions_is_kept(windows):
    """The scalar chain `sum = sum + k*in` stays one chain of fadds in iteration order."""
    run_passes(windows.module, parse_pipeline("unroll-full"), verify=True, target=HOST)
    function = windows.module.get_global("window3")
    _, pixels = loops_of(function).loops
    fadds = [i for b in pixels.blocks for i in b.instructions if i.opname == "fadd"]
    assert len(fadds) == 9
    for previous, current in zip(fadds, fadds[1:]):
        assert current.operands[0] is previous


def test_limit_declines_with_the_sizes(windows):
    result = run_passes(windows.module, parse_pipeline("unroll-full(40)"), verify=True, target=HOST)
    missed = [r for r in result.remarks if r.kind == "missed" and r.function == "window5"]
    assert any("exceeds the limit 40" in r.message for r in missed), [str(r) for r in missed]
    assert all(str(r).endswith("[-Rpass-missed=unroll-full]") for r in missed)
    # the inner 5-tap loops were too big: nothing of window5 was flattened
    assert len(loops_of(result.module.get_global("window5")).loops) == 4


def test_flattened_window_lets_simd_bind_the_pixel_loop(windows):
    result = run_passes(
        windows.module, parse_pipeline("unroll-full,simd(4)"), verify=True, target=HOST
    )
    for name in ("window3", "window5"):
        simd = [r for r in result.remarks if r.pass_name == "simd" and r.function == name]
        assert [r.kind for r in simd] == ["passed"], [str(r) for r in simd]
        assert simd[0].message.startswith("loop vectorized by SIMD binding, width 4")
