"""`tile(...)` and `time-tile(...)`: tiled code is bit-exact against `cc` and really tiled.

Every case runs the kernel through `check` (JIT after the pipeline vs the cc-built original on
the same buffers with guard zones) AND asserts the pass's remark: a check alone would pass if
the pass silently did nothing. Sizes are chosen not to divide the extents, smaller than one
tile, T = 0, 1 and odd; tiles run in reversed and shuffled order on 2 threads; illegal requests
are refused (and a test shows that without the legality check they would miscompile).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from corpus.manifest import KERNELS
from corpus_check import (
    by_file,
    case_label,
    check,
    check_case,
    compiled,
    kernel_group,
    on_entry,
    rotated,
    sweep_if,
)
from pycc_stencil.emit.targets import host_target
from pycc_stencil.ir_passes.registry import Remark
from pycc_stencil.runtime.check import CheckResult
from test_compiler_mode import clean_env

HOST = host_target()

TILING_PASSES = (
    "tile",
    "time-tile",
    "time-tile-large",
    "swap-unroll",
    "diamond-tile",
    "parallelogram-tile",
    "overlap-tile",
)


def check_tiled(
    path: str | Path,
    function: str,
    params: dict,
    passes: str,
    cflags: list[str] | None = None,
    extents: dict[str, int] | None = None,
    fresh: bool = False,
) -> tuple[CheckResult, list[Remark]]:
    """`check` of one function under `passes`, with the tiling passes' remarks about it: on
    the compile of (file, flags, pipeline) made once per process (tests/corpus_check.py), or
    with `fresh` on one made for this call alone (a test that patches the compiler)."""
    cflags = cflags or ["-std=c99"]
    result, remarks = check(path, function, params, passes, cflags, extents, fresh=fresh)
    return result, [r for r in remarks if r.pass_name in TILING_PASSES]


def passed(remarks: list[Remark]) -> list[str]:
    return [r.message for r in remarks if r.kind == "passed"]


def missed(remarks: list[Remark]) -> list[str]:
    return [r.message for r in remarks if r.kind == "missed"]


def assert_bit_exact(result: CheckResult, remarks: list[Remark], nonempty: bool = False) -> None:
    """OK; with `nonempty`, the run also changed some element (the tiled code ran on a
    non-empty iteration space)."""
    assert result.status == "OK", f"{result}\nremarks: {[str(r) for r in remarks]}"
    assert result.changed or not nonempty, f"{result}: the run changed nothing"


def assert_transformed(remarks: list[Remark], what: str) -> None:
    """A passed remark starting with `what` ("tiled" / "time-tiled")."""
    done = passed(remarks)
    assert any(m.startswith(what) for m in done), f"no '{what}' remark: {remarks}"


def assert_refused(remarks: list[Remark], words: str) -> None:
    """Nothing transformed, and a missed remark containing `words` says why."""
    assert not passed(remarks), remarks
    assert any(words in m for m in missed(remarks)), remarks


# --------------------------------------------------------------------------------------------
# 1. the PolyBench-shaped corpus

#: `time-tile` chooses diamond tiles where they are legal; `parallelogram-tile` keeps the
#: skewed parallelograms covered on every kernel too
TIME_TILE = ["time-tile(2,3,5,4)", "parallelogram-tile(3,7,2,3)", "time-tile"]
#: 3-D: the cache model's default tiles (8x8x16x256) make isl's AST generation run for minutes
#: (see test_default_time_tiles_of_heat_3d_compile_in_reasonable_time); a larger tile instead
TIME_TILE_3D = ["time-tile(2,3,5,4)", "parallelogram-tile(3,7,2,3)", "time-tile(2,3,4,11)"]
#: spatial tiles that divide none of the corpus extents, one per space dimensionality
SPATIAL_TILE = {1: "tile(5)", 2: "tile(4,5)", 3: "tile(3,7,5)"}

#: nests the SCoP extraction rejects, with the construct it must name (checked untouched):
#: for `tile`, which leaves pointer swaps alone (the time-tiling passes unroll them first:
#: tests/test_pointer_swap.py). (kernel_jacobi_2d_rows's row pointers r0/r1/r2, computed
#: per row in a block of their own, are recomputed by the statements using them.)
NOT_SCOP_FOR_TILE = {"kernel_jacobi_2d_swap": "is carried from one iteration to the next"}
#: fdtd-2d's time-tiling takes ~25 s per case (fixed sizes): one parameter set, one pipeline
FDTD_CASE = ("kernel_fdtd_2d", {"tmax": 5})


def _space_dims(entry: dict) -> int:
    name = os.path.basename(entry["file"])
    return 1 if "1d" in name or "1-d" in name else 3 if "3d" in name or "3-d" in name else 2


def _polybench_entries():
    return [e for e in KERNELS if e["file"].startswith("polybench/")]


#: PolyBench macro files' float and scalar-bound builds: the loops of their C99 double build,
#: with another element type or bound form; the passes on them are sweeps (the front end
#: still checks each build untransformed, test_corpus)
_SAME_LOOPS = ("-DDATA_TYPE_IS_FLOAT", "-DPOLYBENCH_USE_SCALAR_LB")


def _same_loops(entry: dict) -> bool:
    return any(flag in entry.get("cflags", []) for flag in _SAME_LOOPS)


def _time_tile_cases():
    """Each kernel under one of the pipelines (rotating over the files: each pipeline meets
    a third of them, of every dimensionality and form) on all its parameter sets (the busiest
    one a non-empty iteration space; T = 0, grids smaller than the stencil); the other
    pipelines on the busiest set are sweeps (docs/testing.md). fdtd-2d: one case."""
    entries = _polybench_entries()
    for index, entry in zip(by_file(entries), entries):
        variant = entry["variants"][0]
        mark = on_entry(entry, variant)
        if "fdtd" in entry["file"]:
            name, params = FDTD_CASE
            if entry["function"] == name:
                passes = TIME_TILE[0]
                label = case_label(entry, variant, params, passes)
                yield pytest.param(entry, variant, params, passes, True, id=label, marks=mark)
            continue
        pipelines = TIME_TILE_3D if _space_dims(entry) == 3 else TIME_TILE
        for params, passes, main, sweep in rotated(entry["params"], pipelines, 1, index):
            label = case_label(entry, variant, params, passes)
            marks = [mark, *sweep_if(sweep or _same_loops(entry))]
            yield pytest.param(entry, variant, params, passes, main, id=label, marks=marks)
        if len(entry["variants"]) > 1:  # the smallest fixed size (e.g. -DN=2), odd T
            variant = entry["variants"][-1]
            params = entry["params"][-1]
            passes = TIME_TILE[0]
            label = case_label(entry, variant, params, passes)
            marks = [on_entry(entry, variant), *sweep_if(_same_loops(entry))]
            yield pytest.param(entry, variant, params, passes, False, id=label, marks=marks)


def _tile_cases():
    """Each kernel under the spatial tiling of its dimensionality; every other file (in the
    manifest's order: each family's forms alternate) is a sweep (docs/testing.md)."""
    entries = _polybench_entries()
    for index, entry in zip(by_file(entries), entries):
        if "fdtd" in entry["file"] and entry["function"] != FDTD_CASE[0]:
            continue
        variant = entry["variants"][0]
        params = (
            FDTD_CASE[1]
            if "fdtd" in entry["file"]
            else entry["params"][min(2, len(entry["params"]) - 1)]
        )
        passes = SPATIAL_TILE[_space_dims(entry)]
        label = case_label(entry, variant, params)
        marks = [on_entry(entry, variant), *sweep_if(_same_loops(entry) or index % 2 == 1)]
        yield pytest.param(entry, variant, params, passes, id=label, marks=marks)


def _corpus_check(entry, variant, params, passes, fresh=False):
    """check_tiled of a manifest kernel."""
    result, remarks = check_case(entry, variant, params, passes, fresh)
    return result, [r for r in remarks if r.pass_name in TILING_PASSES]


def _scop_remarks(entry, variant, params, passes, nonempty=False) -> list[Remark] | None:
    """The remarks of a bit-exact check of a SCoP kernel (which changed something, with
    `nonempty`); None for a kernel that is not a SCoP (after asserting the remark names its
    construct)."""
    result, remarks = _corpus_check(entry, variant, params, passes)
    assert_bit_exact(result, remarks, nonempty)
    not_scop = NOT_SCOP_FOR_TILE if passes.startswith("tile") else {}
    if entry["function"] not in not_scop:
        return remarks
    assert_refused(remarks, "not a SCoP: ")
    assert any(not_scop[entry["function"]] in m for m in missed(remarks)), remarks
    return None


@pytest.mark.parametrize("entry, variant, params, passes, main", list(_time_tile_cases()))
def test_corpus_time_tiled_is_bit_exact(entry, variant, params, passes, main):
    remarks = _scop_remarks(entry, variant, params, passes, nonempty=main)
    if remarks is None:
        return
    if "-DN=2" in variant:
        # a compile-time empty interior: no dependence at all, nothing to time-tile
        assert_refused(remarks, "carries no dependence")
    else:
        assert_transformed(remarks, "time-tiled")


HEAT3D = next(e for e in KERNELS if e["function"] == "kernel_heat_3d_vla")


@on_entry(HEAT3D, [])
def test_default_time_tiles_of_heat_3d_compile_in_reasonable_time():
    result, remarks = _corpus_check(HEAT3D, [], {"tsteps": 3, "n": 11}, "time-tile")
    assert_bit_exact(result, remarks, nonempty=True)
    assert_transformed(remarks, "time-tiled")


def test_time_tiles_of_fdtd_2d_vla_compile_in_reasonable_time():
    entry = next(e for e in KERNELS if e["function"] == "kernel_fdtd_2d_vla")
    params = {"tmax": 5, "nx": 23, "ny": 37}
    result, remarks = _corpus_check(entry, [], params, "time-tile(2,3,5,4)")
    assert_bit_exact(result, remarks, nonempty=True)
    assert_transformed(remarks, "time-tiled")


def _tile_is_legal(entry) -> bool:
    """Rectangular tiles of the space loops are legal except for in-place Gauss-Seidel,
    whose (i, j) band carries the distance (1, -1)."""
    return "seidel" not in entry["file"]


@pytest.mark.parametrize("entry, variant, params, passes", list(_tile_cases()))
def test_corpus_tiled_is_bit_exact(entry, variant, params, passes):
    remarks = _scop_remarks(entry, variant, params, passes, nonempty=True)
    if remarks is None:
        return
    if _tile_is_legal(entry):
        assert_transformed(remarks, "tiled")
    else:
        assert_refused(remarks, "would violate a dependence")


# --------------------------------------------------------------------------------------------
# 2. iterated stencils in both forms (one %2 sweep, two sweeps A->B->A), heat-1d of the
#    flextended reference, a radius-2 3-D star, linearized pointers

STENCILS_C = r"""
void jacobi2d_mod2(int T, int n, double A[2][n][n]) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[(t + 1) % 2][i][j] = 0.2 * (A[t % 2][i][j] + A[t % 2][i][j - 1] + A[t % 2][i][j + 1]
                                      + A[t % 2][i - 1][j] + A[t % 2][i + 1][j]);
}
void jacobi2d_two(int T, int n, double A[n][n], double B[n][n]) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i - 1][j] + A[i + 1][j]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i - 1][j] + B[i + 1][j]);
  }
}
void heat2d_mod2(int T, int n, float A[2][n][n]) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[(t + 1) % 2][i][j] = A[t % 2][i][j]
            + 0.125f * (A[t % 2][i + 1][j] - 2.0f * A[t % 2][i][j] + A[t % 2][i - 1][j])
            + 0.125f * (A[t % 2][i][j + 1] - 2.0f * A[t % 2][i][j] + A[t % 2][i][j - 1]);
}
void heat2d_two(int T, int n, float A[n][n], float B[n][n]) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = A[i][j] + 0.125f * (A[i + 1][j] - 2.0f * A[i][j] + A[i - 1][j])
                          + 0.125f * (A[i][j + 1] - 2.0f * A[i][j] + A[i][j - 1]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = B[i][j] + 0.125f * (B[i + 1][j] - 2.0f * B[i][j] + B[i - 1][j])
                          + 0.125f * (B[i][j + 1] - 2.0f * B[i][j] + B[i][j - 1]);
  }
}
/* heat-1d of the flextended reference (Pluto's examples/heat-1d, modulo-2 time) */
void heat1d(int T, int N, double A[2][N + 2]) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < N + 1; i++)
      A[(t + 1) % 2][i] = 0.125 * (A[t % 2][i + 1] - 2.0 * A[t % 2][i] + A[t % 2][i - 1]);
}
/* the same with the extent as the parameter: A[2][n], i in 1..n-2 (n = N + 2) */
void heat1d_n(int T, int n, double A[2][n]) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < n - 1; i++)
      A[(t + 1) % 2][i] = 0.125 * (A[t % 2][i + 1] - 2.0 * A[t % 2][i] + A[t % 2][i - 1]);
}
/* radius-2 star in 3-D on two planes */
void star3d_r2(int T, int n, double A[2][n][n][n]) {
  for (int t = 0; t < T; t++)
    for (int i = 2; i < n - 2; i++)
      for (int j = 2; j < n - 2; j++)
        for (int k = 2; k < n - 2; k++)
          A[(t + 1) % 2][i][j][k] = 0.25 * A[t % 2][i][j][k]
              + 0.125 * (A[t % 2][i - 1][j][k] + A[t % 2][i + 1][j][k] + A[t % 2][i][j - 1][k]
                         + A[t % 2][i][j + 1][k] + A[t % 2][i][j][k - 1] + A[t % 2][i][j][k + 1])
              - 0.0625 * (A[t % 2][i - 2][j][k] + A[t % 2][i + 2][j][k] + A[t % 2][i][j - 2][k]
                          + A[t % 2][i][j + 2][k] + A[t % 2][i][j][k - 2] + A[t % 2][i][j][k + 2]);
}
/* fixed-size arrays walked to run-time extents (PolyBench's form): the model holds when
   n <= 12 (rows do not overflow), which the tiled code checks at run time */
void jacobi2d_fixed(int T, int m, int n, double A[12][12], double B[12][12]) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < m - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i - 1][j] + A[i + 1][j]);
    for (int i = 1; i < m - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i - 1][j] + B[i + 1][j]);
  }
}
/* linearized pointers, two sweeps */
void jacobi2d_lin(int T, int n, double *a, double *b) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        b[i * n + j] = 0.2 * (a[i * n + j] + a[i * n + j - 1] + a[i * n + j + 1]
                              + a[(i - 1) * n + j] + a[(i + 1) * n + j]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        a[i * n + j] = 0.2 * (b[i * n + j] + b[i * n + j - 1] + b[i * n + j + 1]
                              + b[(i - 1) * n + j] + b[(i + 1) * n + j]);
  }
}
/* linearized pointer holding both planes: a[((t % 2) * n + i) * n + j] */
void jacobi2d_lin_mod2(int T, int n, double *a) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        a[(((t + 1) % 2) * n + i) * n + j] =
            0.25 * (a[((t % 2) * n + i) * n + j - 1] + a[((t % 2) * n + i) * n + j + 1]
                    + a[((t % 2) * n + i - 1) * n + j] + a[((t % 2) * n + i + 1) * n + j]);
}
"""

#: (T, n): T = 0, 1, odd, even; n odd/prime, smaller than the stencil, smaller than one tile
SIZES_2D = [(0, 13), (1, 7), (5, 23), (4, 17), (3, 2), (2, 4)]
SIZES_3D = [(0, 7), (1, 9), (3, 11), (2, 4)]
NEW_KERNELS = {
    "jacobi2d_mod2": SIZES_2D,
    "jacobi2d_two": SIZES_2D,
    "heat2d_mod2": SIZES_2D,
    "heat2d_two": SIZES_2D,
    "jacobi2d_lin": SIZES_2D,
    "jacobi2d_lin_mod2": SIZES_2D,
    "star3d_r2": SIZES_3D,
}


def _split_functions(text: str) -> dict[str, str]:
    """{name: its source (with the comment above it)}: one file per kernel, so that each check
    transforms and JIT-compiles only the kernel it checks."""
    sources, comment = {}, ""
    for chunk in re.split(r"\n(?=/\*|[a-z])", text.strip()):  # a comment or a definition
        if chunk.startswith("/*"):
            comment += chunk + "\n"
            continue
        sources[re.match(r"[\w ]+?\**(\w+)\(", chunk).group(1)] = comment + chunk + "\n"
        comment = ""
    return sources


@pytest.fixture(scope="module")
def stencil(kernel_file):
    """The path of a C file holding only the named kernel of STENCILS_C (one file per kernel
    for the session: the modules that check it share its compiles)."""
    sources = _split_functions(STENCILS_C)
    return lambda name: kernel_file(name, sources[name])


def _new_kernel_cases():
    for name, sizes in NEW_KERNELS.items():
        pipelines = TIME_TILE_3D if name.startswith("star3d") else TIME_TILE
        sets = [{"T": steps, "n": n} for steps, n in sizes]
        for params, passes, main, _ in rotated(sets, pipelines):
            label = f"{name}-T={params['T']}-n={params['n']}-{passes}"
            yield pytest.param(name, params, passes, main, id=label, marks=kernel_group(name))


@pytest.mark.parametrize("function, params, passes, main", list(_new_kernel_cases()))
def test_iterated_stencils_are_time_tiled_bit_exact(stencil, function, params, passes, main):
    result, remarks = check_tiled(stencil(function), function, params, passes)
    assert_bit_exact(result, remarks, nonempty=main)
    assert_transformed(remarks, "time-tiled")


@pytest.mark.parametrize(
    "function",
    [
        pytest.param(f, marks=kernel_group(f))
        for f in ("jacobi2d_mod2", "jacobi2d_two", "heat2d_two")
    ],
)
@pytest.mark.parametrize("steps, n", [(3, 23), (1, 2)])
def test_iterated_stencils_space_tiled_bit_exact(stencil, function, steps, n):
    result, remarks = check_tiled(stencil(function), function, {"T": steps, "n": n}, "tile(4,5)")
    assert_bit_exact(result, remarks, nonempty=n > 2)
    assert_transformed(remarks, "tiled")


def test_both_forms_get_the_same_skewed_schedule(stencil):
    """Sweep k of step t is time step 2t+k: the two-sweep form is skewed like the %2 form."""
    skews = {}
    for function in ("jacobi2d_mod2", "jacobi2d_two"):
        _, remarks = check_tiled(stencil(function), function, {"T": 3, "n": 11}, "time-tile(2,3,5)")
        (message,) = [m for m in passed(remarks) if m.startswith("time-tiled")]
        skews[function] = message
    assert "1 sweep(s)" in skews["jacobi2d_mod2"] and "2 sweep(s)" in skews["jacobi2d_two"]
    for message in skews.values():
        assert "over 2-D space" in message


#: the reference's right-edge case: rectangle tiles h = 4 steps x W = 16 points, N = 59
HEAT1D_SIZES = [(9, 59), (4, 59), (1, 59), (0, 59), (7, 20), (5, 80), (3, 3)]


@kernel_group("heat1d")
@pytest.mark.parametrize("steps, N", HEAT1D_SIZES)
@pytest.mark.parametrize("passes", ["time-tile(4,16)", "time-tile(32,12)"])
def test_heat1d_of_the_flextended_reference(stencil, steps, N, passes):
    """Written with the extent N + 2 (the reference's form; the stride `N + 2` is a parameter
    of its own, defined from N): bit-exact and time-tiled."""
    result, remarks = check_tiled(stencil("heat1d"), "heat1d", {"T": steps, "N": N}, passes)
    assert_bit_exact(result, remarks, nonempty=steps > 0)
    assert_transformed(remarks, "time-tiled")


@kernel_group("heat1d_n")
@pytest.mark.parametrize("steps, N", HEAT1D_SIZES)
@pytest.mark.parametrize("passes", ["time-tile(4,16)", "time-tile(32,12)"])
def test_heat1d_with_the_extent_as_parameter_is_time_tiled(stencil, steps, N, passes):
    """The same iteration space as heat1d(N) with n = N + 2: really time-tiled."""
    result, remarks = check_tiled(stencil("heat1d_n"), "heat1d_n", {"T": steps, "n": N + 2}, passes)
    assert_bit_exact(result, remarks, nonempty=steps > 0)
    assert_transformed(remarks, "time-tiled")


@kernel_group("jacobi2d_fixed")
@pytest.mark.parametrize(
    "steps, m, n", [(3, 12, 12), (5, 7, 11), (0, 12, 12), (1, 2, 5), (4, 4, 20), (3, 12, 13)]
)
@pytest.mark.parametrize("passes", ["time-tile(2,3,5)", "tile(4,5)"])
def test_fixed_arrays_with_run_time_extents(stencil, steps, m, n, passes):
    """`double A[12][12]` walked to a run-time n: tiled under the assumption n <= 12 (named in
    the remark); a call with a larger n (rows overflow into the next ones: legal memory, not
    the model) runs the original nest: bit-exact either way."""
    params = {"T": steps, "m": m, "n": n}
    result, remarks = check_tiled(stencil("jacobi2d_fixed"), "jacobi2d_fixed", params, passes)
    assert_bit_exact(result, remarks, nonempty=steps > 0 and m > 2)
    assert_transformed(remarks, "time-tiled" if passes.startswith("time") else "tiled")
    assert any("when n <= 12, checked at run time" in m for m in passed(remarks)), remarks


# --------------------------------------------------------------------------------------------
# 3. independent tiles in any order and on real threads


def _outlined_parallel_loops(path: str, function: str, passes: str) -> list[str]:
    """Names of the functions outlined from `function` for `__pycc_parallel_for` (in the
    module of the compile the bit-exact tests of the same pipeline check)."""
    module = compiled(path, ["-std=c99"], passes).module
    names = [f.name for f in module.functions if f.name.startswith(f"{function}.par")]
    return names if "__pycc_parallel_for" in str(module) else []


ORDERS = [
    {"PYCC_PARALLEL_ORDER": "reverse"},
    {"PYCC_PARALLEL_ORDER": "shuffle:7"},
    {"PYCC_PARALLEL_ORDER": "shuffle:12345"},
    {"PYCC_NUM_THREADS": "2"},
]


def in_order(monkeypatch, env: dict[str, str]) -> None:
    """Run the tiles as `env` (one of ORDERS) says, whatever the caller's environment."""
    monkeypatch.delenv("PYCC_PARALLEL_ORDER", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


PARALLEL_CASES = [
    ("jacobi2d_mod2", {"T": 5, "n": 23}, "time-tile(2,3,5)"),
    ("heat2d_two", {"T": 3, "n": 19}, "time-tile(2,4,3)"),
    ("star3d_r2", {"T": 3, "n": 11}, "time-tile(2,3,3,4)"),
    ("heat1d_n", {"T": 9, "n": 61}, "time-tile(4,16)"),
    ("jacobi2d_two", {"T": 2, "n": 29}, "tile(4,5)"),
    # overlapped tiles: the space tiles of a time tile (private buffers, shadows)
    ("jacobi2d_mod2", {"T": 7, "n": 29}, "overlap-tile(3,5,4)"),
    ("heat2d_two", {"T": 3, "n": 19}, "overlap-tile(2,4,3)"),
    ("star3d_r2", {"T": 3, "n": 13}, "overlap-tile(2,7,3,4)"),  # test_overlap_tile's
    ("heat1d_n", {"T": 9, "n": 61}, "overlap-tile(4,16)"),
    ("jacobi2d_two", {"T": 4, "n": 31}, "overlap-tile(3,6,5)"),
]


def _grouped(cases):
    """pytest params of (function, params, passes) cases, each on its kernel's worker."""
    return [pytest.param(*case, marks=kernel_group(case[0])) for case in cases]


@pytest.mark.parametrize("function, params, passes", _grouped(PARALLEL_CASES))
def test_tiles_run_in_parallel_code(stencil, function, params, passes):
    """The wavefront / tile loop is outlined and run by the parallel runtime."""
    assert _outlined_parallel_loops(stencil(function), function, passes)


@pytest.mark.parametrize("env", ORDERS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
@pytest.mark.parametrize("function, params, passes", _grouped(PARALLEL_CASES))
def test_tiles_in_reversed_shuffled_or_threaded_order_are_bit_exact(
    stencil, monkeypatch, env, function, params, passes
):
    in_order(monkeypatch, env)
    result, remarks = check_tiled(stencil(function), function, params, passes)
    assert_bit_exact(result, remarks, nonempty=True)
    assert passed(remarks), remarks


@on_entry(HEAT3D, [])
@pytest.mark.parametrize("env", ORDERS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
def test_corpus_heat3d_in_any_tile_order_is_bit_exact(monkeypatch, env):
    in_order(monkeypatch, env)
    result, remarks = _corpus_check(HEAT3D, [], {"tsteps": 3, "n": 11}, "time-tile(2,3,5,4)")
    assert_bit_exact(result, remarks, nonempty=True)
    assert_transformed(remarks, "time-tiled")


SEIDEL_FIXED_C = r"""
void seidel_fixed(int T, double A[23][7][7]) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < 22; i++)
      for (int j = 1; j < 6; j++)
        for (int k = 1; k < 6; k++)
          A[i][j][k] = 0.1 * (A[i][j][k] + A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k]
                              + A[i][j + 1][k] + A[i][j][k - 1] + A[i][j][k + 1]);
}
"""


@kernel_group("seidel_fixed")
@pytest.mark.parametrize("env", ORDERS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
def test_a_single_column_of_tiles_leaves_the_next_tile_loop_serial(kernel_file, monkeypatch, env):
    """In-place Gauss-Seidel, legally tiled 5x7x5 in space: the j tiles are one column (5
    interior points) and carry nothing, but isl generates no loop for them; marked parallel,
    the mark fell on the k tile loop, which carries (0,0,1): a race (found by
    scripts/reliability.py, stencil-17). No tile loop of this nest is parallel."""
    in_order(monkeypatch, env)
    path = kernel_file("seidel_fixed", SEIDEL_FIXED_C)
    result, remarks = check_tiled(path, "seidel_fixed", {"T": 3}, "tile(5,7,5)")
    assert_bit_exact(result, remarks, nonempty=True)
    assert "tiled a 3-deep band with sizes 5x7x5" in passed(remarks)
    assert not _outlined_parallel_loops(path, "seidel_fixed", "tile(5,7,5)")


# --------------------------------------------------------------------------------------------
# 4. illegal requests are refused, and the legality check is what refuses them

ILLEGAL_C = r"""
void blur(int n, int m, const float *in, float *out) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      out[i * m + j] = (in[(i - 1) * m + j] + in[i * m + j - 1] + in[i * m + j]
                        + in[i * m + j + 1] + in[(i + 1) * m + j]) * 0.2f;
}
"""


@pytest.fixture(scope="module")
def illegal_c(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("tiling") / "illegal.c"
    path.write_text(ILLEGAL_C)
    return str(path)


def test_rectangular_tiles_across_the_time_loop_are_refused(stencil):
    """(t, i, j) rectangles break jacobi's (1, +-1) dependences; no inner band is 3 deep."""
    path = stencil("jacobi2d_mod2")
    result, remarks = check_tiled(path, "jacobi2d_mod2", {"T": 5, "n": 23}, "tile(4,4,4)")
    assert_bit_exact(result, remarks)
    assert_refused(remarks, "refused: tiling the loops")
    assert any("with sizes 4x4x4 would violate a dependence" in m for m in missed(remarks))


def test_time_tiling_a_single_sweep_filter_is_refused(illegal_c):
    result, remarks = check_tiled(illegal_c, "blur", {"n": 19, "m": 23}, "time-tile")
    assert_bit_exact(result, remarks)
    assert_refused(remarks, "refused: the outer loop carries no dependence")


def test_spatial_tiles_of_in_place_gauss_seidel_are_refused():
    entry = next(e for e in KERNELS if e["function"] == "kernel_seidel_2d_vla")
    result, remarks = _corpus_check(entry, [], {"tsteps": 3, "n": 23}, "tile(4,5)")
    assert_bit_exact(result, remarks)
    assert_refused(remarks, "with sizes 4x5 would violate a dependence")


def test_without_the_legality_check_the_illegal_tiling_miscompiles(stencil, monkeypatch):
    """The refusal above is not luck: accepting every schedule makes check report MISMATCH."""
    from pycc_stencil.polyhedral.schedule import tile as tile_module

    monkeypatch.setattr(tile_module, "is_legal", lambda deps, schedule: True)
    path = stencil("jacobi2d_mod2")
    params = {"T": 5, "n": 23}
    result, remarks = check_tiled(path, "jacobi2d_mod2", params, "tile(4,4,4)", fresh=True)
    assert any(m.startswith("tiled a 3-deep band") for m in passed(remarks)), remarks
    assert result.status == "MISMATCH", str(result)


# --------------------------------------------------------------------------------------------
# 6. compiler mode: a time-tiled program on 2 threads prints what the cc build prints

PROGRAM_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
void heat2d_mod2(int T, int n, float A[2][n][n]);
void jacobi2d_two(int T, int n, double A[n][n], double B[n][n]);
int main(int argc, char **argv) {
  int n = atoi(argv[1]), T = atoi(argv[2]);
  float (*F)[n][n] = malloc(sizeof(float) * 2 * n * n);
  double (*A)[n] = malloc(sizeof(double) * n * n), (*B)[n] = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      F[0][i][j] = F[1][i][j] = (float)((i * 7 + j * 13) % 17) / 3.0f;
      A[i][j] = B[i][j] = (double)((i * 5 + j * 11) % 19) / 7.0;
    }
  heat2d_mod2(T, n, F);
  jacobi2d_two(T, n, A, B);
  double s = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) s = s * 1.0000001 + F[T % 2][i][j] + A[i][j] * 3.0;
  printf("%a\n", s);
  return 0;
}
"""
PYCC = shutil.which(
    "pycc-stencil", path=os.pathsep.join([os.path.dirname(sys.executable), os.defpath])
)


def _build(compiler: str, out: Path, flags: list[str], env: dict[str, str]) -> None:
    sources = [out.parent / "main.c", out.parent / "kernels.c"]
    cmd = [compiler, "-O2", "-std=c99", *flags, *map(str, sources), "-o", str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"


def build_both(
    tmp_path: Path,
    main: str,
    kernels: str,
    cc_flags: list[str],
    flags: list[str],
    pycc_env: dict[str, str] | None = None,
):
    """Build main.c + kernels.c with cc (`cc_flags`) as `ref` and with pycc-stencil (`flags`,
    and `pycc_env` added to the environment, which has no other PYCC_* variable) as `pycc`;
    (the environment, pycc-stencil's report of kernels.c's functions by name)."""
    (tmp_path / "main.c").write_text(main)
    (tmp_path / "kernels.c").write_text(kernels)
    env = clean_env(tmp_path / "cache")
    report = tmp_path / "report.json"
    _build("cc", tmp_path / "ref", cc_flags, env)
    _build(PYCC, tmp_path / "pycc", flags, dict(env, PYCC_REPORT=str(report), **(pycc_env or {})))
    units = [json.loads(line) for line in report.read_text().splitlines() if line.strip()]
    (unit,) = [u for u in units if u.get("source", "").endswith("kernels.c")]
    return env, {f["name"]: f for f in unit["functions"]}


def assert_same_output(tmp_path: Path, env: dict[str, str], runs: list[list[str]]) -> None:
    """`pycc` (on 2 threads, if it was built for threads) prints what `ref` prints, for each
    argument list."""
    for args in runs:
        want = subprocess.run([tmp_path / "ref", *args], capture_output=True, text=True)
        got = subprocess.run(
            [tmp_path / "pycc", *args],
            capture_output=True,
            text=True,
            env=dict(env, OMP_NUM_THREADS="2"),
        )
        assert want.returncode == got.returncode == 0, got.stderr
        assert got.stdout == want.stdout, args


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_compiler_mode_time_tiled_program_matches_cc(tmp_path):
    flags = ["-fpycc-passes=time-tile(2,5,7)", "-fpycc-parallel"]
    env, compiled = build_both(tmp_path, PROGRAM_MAIN, STENCILS_C, [], flags)
    for name in ("heat2d_mod2", "jacobi2d_two"):
        assert compiled[name]["compiled_by"] == "pycc-stencil", compiled[name]
        assert any("remark: time-tiled" in r for r in compiled[name]["remarks"]), compiled[name]
    assert_same_output(
        tmp_path, env, [[str(n), str(t)] for n, t in [(37, 5), (2, 3), (13, 0), (29, 1)]]
    )
