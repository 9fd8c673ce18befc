"""`overlap-tile(...)`: overlapped time tiles are bit-exact against `cc` and really overlapped.

Every case runs the kernel through `check` (JIT after the pipeline vs the cc-built original on
the same buffers with guard zones) AND asserts the pass's remark. Sizes do not divide the
extents, are larger than the arrays, smaller than the halo; T = 0, 1, odd and even (an odd or
even number of time tiles: the final state ends in the caller's array or in the shadow);
tiles run in reversed and shuffled order and on 2 threads; private buffers and shadows filled
with NaN show a missing copy-in; what the model does not cover is refused.
"""

from __future__ import annotations

import pytest
from corpus.manifest import KERNELS
from corpus_check import by_file, case_label, kernel_group, on_entry, rotated, sweep_if
from pycc_stencil.polyhedral.scratch import Buffer
from test_tiling import (
    HEAT1D_SIZES,
    ILLEGAL_C,
    SIZES_2D,
    SIZES_3D,
    STENCILS_C,
    _corpus_check,
    _grouped,
    _split_functions,
    assert_bit_exact,
    assert_refused,
    assert_transformed,
    check_tiled,
    passed,
)
from test_tiling import (
    PARALLEL_CASES as TILED_IN_PARALLEL,
)

DONE = "overlap-tiled"
#: the radius-2 3-D star's overlapped tiles whose schedule takes isl most of a minute to
#: build (one compile each: 55 s and 25 s on a 2-core VM); the opt-in sweeps run them
#: (scripts/run_sweeps.sh); the default run keeps star3d_r2 under overlap-tile(2,7,3,4): one
#: compile its iterated, halo and parallel-order tests share, and one with poisoned scratch
STAR3D_SWEEP = {"overlap-tile(3,5,4,3)", "overlap-tile"}
#: sizes for 1-D, 2-D, 3-D alike (the extra ones are ignored): odd, smaller than the halo
#: (2x2 tiles of 5 sweeps), the cache model's defaults
OVERLAP = [
    "overlap-tile(3,5,4,3)",
    "overlap-tile(2,7,3,4)",
    "overlap-tile(5,2,2,2)",
    "overlap-tile",
]

EXTRA_C = r"""
/* a 3-D array whose two inner extents differ (the private buffer's and shadow's layout) */
void rect_mod2(int T, int n, int m, double A[2][n][m]) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < m - 1; j++)
        A[(t + 1) % 2][i][j] = 0.2 * (A[t % 2][i][j] + A[t % 2][i][j - 1] + A[t % 2][i][j + 1]
                                      + A[t % 2][i - 1][j] + A[t % 2][i + 1][j]);
}
/* jacobi-1d, two sweeps, the time loop starting at 1 */
void jacobi1d(int T, int n, double A[n], double B[n]) {
  for (int t = 1; t <= T; t++) {
    for (int i = 1; i < n - 1; i++)
      B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    for (int i = 1; i < n - 1; i++)
      A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }
}
"""


@pytest.fixture(scope="module")
def stencil(kernel_file):
    """The path of a C file holding only the named kernel (of test_tiling's or EXTRA_C; one
    file per kernel for the session, shared with the other modules)."""
    sources = {**_split_functions(STENCILS_C), **_split_functions(EXTRA_C)}
    return lambda name: kernel_file(name, sources[name])


def _entry(function: str) -> dict:
    return next(e for e in KERNELS if e["function"] == function)


# --------------------------------------------------------------------------------------------
# 1. the corpus's iterated stencils in VLA and pointer form (fdtd-2d included)


#: corpus files whose overlap tiles are sweeps (docs/testing.md): each family keeps one form
#: (star-3d and fdtd-2d their pointer form, heat-3d and jacobi-2d their VLA form) and each
#: pipeline one or more
SWEEP_FILES = {
    "polybench/star_3d_vla.c",
    "polybench/heat_3d_ptr.c",
    "polybench/fdtd_2d_vla.c",
    "polybench/jacobi_2d_ptr.c",
}


def _corpus_cases():
    """Each kernel under one of the pipelines (rotating over the files: each pipeline meets
    a quarter of them, of every dimensionality and form) on all its parameter sets; the other
    three pipelines on the busiest set, and SWEEP_FILES, are sweeps (docs/testing.md)."""
    entries = [
        entry
        for entry in KERNELS
        if entry["file"].startswith("polybench/")
        and not any(word in entry["file"] for word in ("fixed", "macro", "seidel"))
    ]
    for index, entry in zip(by_file(entries), entries):
        variant = entry["variants"][0]
        for params, passes, main, sweep in rotated(entry["params"], OVERLAP, 1, index):
            label = case_label(entry, variant, params, passes)
            marks = [on_entry(entry, variant), *sweep_if(sweep or entry["file"] in SWEEP_FILES)]
            yield pytest.param(entry, variant, params, passes, main, id=label, marks=marks)


@pytest.mark.parametrize("entry, variant, params, passes, main", list(_corpus_cases()))
def test_corpus_overlap_tiled_is_bit_exact(entry, variant, params, passes, main):
    result, remarks = _corpus_check(entry, variant, params, passes)
    assert_bit_exact(result, remarks, nonempty=main)
    assert_transformed(remarks, DONE)


# --------------------------------------------------------------------------------------------
# 2. both forms of jacobi/heat, linearized pointers, a radius-2 3-D star, unequal extents


def _stencil_cases():
    """Each kernel under one of the four pipelines (rotating over the kernels: each meets
    one or two of the six 2-D ones; the others are sweeps) on all its sizes."""
    kernels = {
        "jacobi2d_mod2": SIZES_2D,
        "jacobi2d_two": SIZES_2D,
        "heat2d_mod2": SIZES_2D,
        "heat2d_two": SIZES_2D,
        "jacobi2d_lin": SIZES_2D,
        "jacobi2d_lin_mod2": SIZES_2D,
        "star3d_r2": SIZES_3D,
    }
    for index, (name, sizes) in enumerate(kernels.items()):
        pipelines, keep, offset = OVERLAP, 1, index  # the other three pipelines: sweeps
        if name == "star3d_r2":  # radius 2, 5 sweeps: minutes of AST generation
            pipelines = [p.replace("(5,2,2,2)", "(2,3,4,5)") for p in OVERLAP]
            keep, offset = 1, 1  # (2,7,3,4); the other three opt-in (sweep)
        sets = [{"T": steps, "n": n} for steps, n in sizes]
        for params, passes, main, sweep in rotated(sets, pipelines, keep, offset):
            label = f"{name}-{params['T']}-{params['n']}-{passes}"
            marks = [kernel_group(name), *sweep_if(sweep)]
            yield pytest.param(name, params, passes, main, id=label, marks=marks)
    rect = [{"T": 5, "n": 13, "m": 29}, {"T": 4, "n": 31, "m": 7}]
    for k, params in enumerate(rect):
        mark = kernel_group("rect_mod2")
        yield pytest.param("rect_mod2", params, OVERLAP[k], True, id=f"rect_mod2-{k}", marks=mark)
    sets = [{"T": steps, "n": 37} for steps in [0, 1, 2, 5, 8]]
    for params, passes, main, _ in rotated(sets, OVERLAP):
        label = f"jacobi1d-{params['T']}-{passes}"
        yield pytest.param(
            "jacobi1d", params, passes, main, id=label, marks=kernel_group("jacobi1d")
        )


@pytest.mark.parametrize("function, params, passes, main", list(_stencil_cases()))
def test_iterated_stencils_are_overlap_tiled_bit_exact(stencil, function, params, passes, main):
    result, remarks = check_tiled(stencil(function), function, params, passes)
    assert_bit_exact(result, remarks, nonempty=main)
    assert_transformed(remarks, DONE)


def _heat1d_cases():
    """Every size under the reference's tiles (4,16); under (32,12), a time tile longer than
    most T, only in the sweep (its compile is 7-9 s of isl)."""
    for passes in ["overlap-tile(4,16)", "overlap-tile(32,12)"]:
        for steps, n in HEAT1D_SIZES:
            slow = passes == "overlap-tile(32,12)"
            yield pytest.param(steps, n, passes, marks=[pytest.mark.sweep] if slow else [])


@kernel_group("heat1d_n")
@pytest.mark.parametrize("steps, N, passes", list(_heat1d_cases()))
def test_heat1d_of_the_flextended_reference(stencil, steps, N, passes):
    """The reference's right-edge case (h = 4, W = 16, N = 59: pitfall P2, a last tile whose
    late rows own points its early rows do not), with the extent as parameter n = N + 2."""
    result, remarks = check_tiled(stencil("heat1d_n"), "heat1d_n", {"T": steps, "n": N + 2}, passes)
    assert_bit_exact(result, remarks, nonempty=steps > 0)
    assert_transformed(remarks, DONE)


@pytest.mark.parametrize(
    "function, passes, halos",
    _grouped(
        [
            ("heat1d_n", "overlap-tile(4,16)", "halos 4+4"),  # 3 rows recomputed + the input
            ("jacobi1d", "overlap-tile(4,16)", "halos 4+4"),  # 4 sweeps = 2 steps
            ("jacobi2d_mod2", "overlap-tile(3,8,8)", "halos 3+3x3+3"),
            ("jacobi2d_two", "overlap-tile(3,8,8)", "halos 3+3x3+3"),  # both forms alike
            ("star3d_r2", "overlap-tile(2,7,3,4)", "halos 4+4x4+4x4+4"),  # radius 2
        ]
    ),
)
def test_halos_grow_with_the_time_tile_and_the_radius(stencil, function, passes, halos):
    """The recomputed halo is radius x sweeps per time tile, the same in both forms."""
    result, remarks = check_tiled(stencil(function), function, {"T": 5, "n": 40}, passes)
    assert_bit_exact(result, remarks, nonempty=True)
    assert any(halos in m for m in passed(remarks)), remarks


# --------------------------------------------------------------------------------------------
# 3. tiles of a time tile are independent: any order, real threads, private buffers


#: test_tiling runs these in reversed, shuffled and threaded order and checks they are outlined
PARALLEL_CASES = [c for c in TILED_IN_PARALLEL if c[2].startswith("overlap-tile")]


#: the 3-D radius-2 case's compile of its overlapped tiles takes ~5 s of isl: a sweep (the
#: poison meets the 1-D and 2-D buffers in every run, and star3d_r2's tiles run bit-exact)
POISONED_CASES = [
    pytest.param(*case, marks=[kernel_group(case[0]), *sweep_if(case[0] == "star3d_r2")])
    for case in PARALLEL_CASES
]


@pytest.mark.parametrize("function, params, passes", POISONED_CASES)
def test_with_poisoned_scratch_memory_is_bit_exact(stencil, monkeypatch, function, params, passes):
    """Shadows and private buffers start as NaN: every value read was copied in."""
    monkeypatch.setenv("PYCC_POISON_SCRATCH", "1")
    monkeypatch.setenv("PYCC_PARALLEL_ORDER", "reverse")
    result, remarks = check_tiled(stencil(function), function, params, passes)
    assert_bit_exact(result, remarks, nonempty=True)
    assert_transformed(remarks, DONE)


@pytest.mark.parametrize("function, params, passes", PARALLEL_CASES[:2] + PARALLEL_CASES[4:])
def test_poison_shows_a_missing_copy_in(stencil, monkeypatch, function, params, passes):
    """The poison test can fail: copying in one element less per tile gives NaN results."""
    box_text = Buffer.box_text
    monkeypatch.setattr(Buffer, "box_text", lambda self, t: box_text(self, t).replace("<=", "<", 1))
    monkeypatch.setenv("PYCC_POISON_SCRATCH", "1")
    result, remarks = check_tiled(stencil(function), function, params, passes, fresh=True)
    assert_transformed(remarks, DONE)
    assert result.status != "OK", result


# --------------------------------------------------------------------------------------------
# 4. refusals


def test_in_place_gauss_seidel_is_refused():
    """seidel-2d reads values of its own sweep: a tile would need everything before it."""
    result, remarks = _corpus_check(
        _entry("kernel_seidel_2d_vla"), [], {"tsteps": 3, "n": 23}, "overlap-tile(2,4,5)"
    )
    assert_bit_exact(result, remarks)
    assert_refused(remarks, "a sweep reads values of the same sweep")


def test_a_nest_without_time_loop_is_refused(tmp_path):
    path = tmp_path / "blur.c"
    path.write_text(ILLEGAL_C)
    result, remarks = check_tiled(str(path), "blur", {"n": 19, "m": 23}, "overlap-tile")
    assert_bit_exact(result, remarks)
    assert_refused(remarks, "carries no dependence: not an iterated stencil")


def test_constant_size_arrays_keep_their_declared_rows():
    """[N][N][N] arrays with a constant N: the declared rows give each space loop its
    dimension, so the tiles own their elements."""
    entry = _entry("kernel_heat_3d")
    result, remarks = _corpus_check(entry, ["-DN=11"], {"tsteps": 3}, "overlap-tile(2,4,4,4)")
    assert_bit_exact(result, remarks)
    assert_transformed(remarks, DONE)
