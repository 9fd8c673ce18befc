"""Parallelogram time tiles of in-place sweeps run a tile's rows together
(polyhedral/schedule/time_tile.py): where the innermost point loop carries a dependence
(Gauss-Seidel's west neighbour), the point loops run the rows of a tile as a wavefront, each
row skewed behind the one before, so the points of one step are independent chains.

Checked here: the point schedule (its innermost loop runs down the rows, and carries no
dependence, where the skewed band's did), that stencils whose inner loop is free keep their
order, that `-O3`'s `time-tile-large` uses such tiles below its size threshold (they pay at any
size), and bit-exactness against cc with odd and prime sizes, sizes smaller than a tile, and
T = 0, 1, odd, in 2-D (every form of seidel-2d) and 3-D.
"""

from __future__ import annotations

import os

import islpy as isl
import pytest
from corpus.manifest import CORPUS_DIR
from corpus_check import assert_fired, check, kernel_group, on_source
from pycc_stencil.frontend import lower_file
from pycc_stencil.polyhedral.codegen import TwoLevel
from pycc_stencil.polyhedral.deps import compute_dependences
from pycc_stencil.polyhedral.schedule import bands
from pycc_stencil.polyhedral.schedule.time_tile import may_run_rows_together, time_tile
from pycc_stencil.polyhedral.scop import extract_scops

SEIDEL_VLA = os.path.join(CORPUS_DIR, "polybench", "seidel_2d_vla.c")
JACOBI_VLA = os.path.join(CORPUS_DIR, "polybench", "jacobi_2d_vla.c")

#: 3-D Gauss-Seidel, 7 points, in place
SEIDEL3D_C = r"""
void seidel3d(int T, int n, double A[n][n][n]) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 1; k < n - 1; k++)
          A[i][j][k] = (A[i - 1][j][k] + A[i][j - 1][k] + A[i][j][k - 1] + A[i][j][k]
                        + A[i][j][k + 1] + A[i][j + 1][k] + A[i + 1][j][k]) / 7.0;
}
"""


def _scop(path: str, function: str):
    return extract_scops(lower_file(path, ["-std=c99"]).module.get_global(function), False)[0][0]


def _point_band(program: TwoLevel) -> isl.ScheduleNode:
    (band,) = bands.chain_starts(program.inner.get_root())
    return band


def _member(band: isl.ScheduleNode, k: int) -> isl.UnionMap:
    schedule = band.band_get_partial_schedule().get_at(k)
    return isl.UnionMap.from_union_pw_aff(schedule).intersect_domain(band.get_domain())


def test_the_point_loops_of_seidel_2d_run_a_tiles_rows_together():
    scop = _scop(SEIDEL_VLA, "kernel_seidel_2d_vla")
    deps = compute_dependences(scop)
    outcome = time_tile(scop, deps, [4, 5, 16], l2=512 << 10)
    assert outcome.changed and outcome.in_cache, outcome.refused
    (message,) = outcome.done
    assert "parallelogram tiles" in message
    assert "the rows of a tile run together: 5, each 1 point(s) behind" in message, message
    band = _point_band(outcome.schedule)
    assert band.band_n_member() == 3
    # the innermost loop runs down the rows (y_1 = t + i) ...
    (statement,) = scop.nests[0].statements()
    rows = isl.UnionMap(f"{scop.param_prefix}{{ {statement.tuple_text()} -> [t + i] }}")
    innermost = _member(band, 2)
    rows = rows.align_params(innermost.get_space()).intersect_domain(band.get_domain())
    assert innermost.is_equal(rows), innermost
    # ... and carries no dependence: the points of one step of the wavefront are independent
    inside = deps.all.align_params(band.get_domain().get_space())
    assert bands.member_is_parallel(band, inside, 2)


def test_stencils_whose_inner_loop_is_free_keep_their_point_order():
    scop = _scop(JACOBI_VLA, "kernel_jacobi_2d_vla")
    deps = compute_dependences(scop)
    assert not may_run_rows_together(scop, deps)
    outcome = time_tile(scop, deps, [4, 5, 16], l2=512 << 10, shape="parallelogram")
    assert outcome.changed and not outcome.in_cache, outcome.refused
    assert "rows of a tile" not in outcome.done[0]


@on_source("polybench/seidel_2d_vla.c")
def test_in_place_sweeps_may_run_rows_together():
    scop = _scop(SEIDEL_VLA, "kernel_seidel_2d_vla")
    assert may_run_rows_together(scop, compute_dependences(scop))


#: (file, function, flags, parameter sets): every form of seidel-2d; odd and prime sizes, a
#: grid smaller than a tile, no inner point, T = 0, 1, odd
SEIDEL_CASES = [
    ("polybench/seidel_2d_vla.c", "kernel_seidel_2d_vla", [],
     [{"tsteps": 3, "n": 23}, {"tsteps": 5, "n": 4}, {"tsteps": 1, "n": 37},
      {"tsteps": 0, "n": 13}, {"tsteps": 2, "n": 2}]),
    ("polybench/seidel_2d_ptr.c", "kernel_seidel_2d_ptr", [],
     [{"tsteps": 7, "n": 19}, {"tsteps": 1, "n": 3}]),
    ("polybench/seidel_2d_fixed.c", "kernel_seidel_2d", ["-DN=23"], [{"tsteps": 3}]),
]  # fmt: skip
#: a tile's sizes: time, rows, columns; tiles of one row have no rows to run together
PIPELINES = ["parallelogram-tile(3,5,7)", "parallelogram-tile(8,1,16)", "time-tile-large"]
ONE_ROW = "parallelogram-tile(8,1,16)"


def _cases():
    for file, function, flags, sets in SEIDEL_CASES:
        for passes in PIPELINES:
            for params in sets:
                label = "-".join([function, passes, *(f"{k}={v}" for k, v in params.items())])
                mark = on_source(file, flags)
                yield pytest.param(file, function, flags, passes, params, id=label, marks=mark)


@pytest.mark.parametrize("file, function, flags, passes, params", list(_cases()))
def test_seidel_2d_with_rows_together_is_bit_exact(file, function, flags, passes, params):
    """`time-tile-large` included: the corpus grids are far below its size threshold, and
    its tiled code runs there all the same from 4 KiB (`tiling.IN_CACHE_MIN_BYTES`: n >= 23
    for these doubles; smaller grids run the original nest, also checked)."""
    path = os.path.join(CORPUS_DIR, file)
    result, remarks = check(path, function, params, passes, ["-std=c99", *flags])
    assert result.status == "OK", f"{result}\n{[str(r) for r in remarks]}"
    assert result.changed or params["tsteps"] == 0 or params.get("n", 3) < 3, str(result)
    assert_fired(remarks, passes)
    together = [r for r in remarks if "the rows of a tile run together" in r.message]
    assert bool(together) == (passes != ONE_ROW), [str(r) for r in remarks]


@kernel_group("seidel3d")
@pytest.mark.parametrize("params", [{"T": 3, "n": 11}, {"T": 2, "n": 5}, {"T": 1, "n": 13}])
def test_3d_gauss_seidel_with_rows_together_is_bit_exact(kernel_file, params):
    path = kernel_file("seidel3d", SEIDEL3D_C)
    passes = "parallelogram-tile(2,3,4,5)"
    result, remarks = check(path, "seidel3d", params, passes, ["-std=c99"])
    assert result.status == "OK" and result.changed, f"{result}\n{[str(r) for r in remarks]}"
    assert any("the rows of a tile run together: 4" in r.message for r in remarks), remarks


def test_the_tile_loops_of_seidel_2d_skip_the_tiles_without_points():
    """The wavefront's parallel loop runs over the tiles that have points, not over the
    bounding box of the tile coordinates: at 2 threads the box's empty tiles went to one thread
    in static chunks, and the other did 4 of every 5 tiles (docs/tiling_benchmarks.md)."""
    scop = _scop(SEIDEL_VLA, "kernel_seidel_2d_vla")
    outcome = time_tile(scop, compute_dependences(scop), [4, 5, 16], l2=512 << 10)
    fixed = isl.Set(f"{scop.param_prefix}{{ : tsteps = 8 and n = 60 }}")
    looped = outcome.schedule.outer.get_domain().intersect_params(fixed.align_params(
        outcome.schedule.outer.get_domain().get_space().params()))  # fmt: skip
    (statement,) = scop.nests[0].statements()
    tile_of = isl.UnionMap(
        f"{scop.param_prefix}{{ {statement.tuple_text()} -> "
        "TILE[floor(t / 4), floor((t + i) / 5), floor((2t + i + j) / 16)] }"
    )
    with_points = scop.domain().intersect_params(fixed).apply(tile_of)
    count = looped.as_set().count_val().to_python()
    needed = isl.Set.from_union_set(with_points).count_val().to_python()
    assert needed <= count <= needed * 5 // 4, (count, needed)
