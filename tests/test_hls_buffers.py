"""The FPGA back end's buffer analysis (polyhedral/hls_buffers.py) against the numbers of the
IMPACT'24 paper (`../shared/reference/fpga-cache-buffers-and-ship.md` §2-§5, F4-F7, F11):
working-set boxes, buffer kinds, fusion, the order chosen by total on-chip words, halos."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycc_stencil.frontend import lower_file
from pycc_stencil.polyhedral.hls_buffers import (
    Buffer,
    NotPlannable,
    OuterLoop,
    Plan,
    access_groups,
    choose_order,
    fully_permutable,
    nest_tree,
    plan,
)
from pycc_stencil.polyhedral.scop import extract_scops
from test_scop import _only_scop

HLS_CORPUS = Path(__file__).parent / "corpus" / "hls"

NESTS_C = r"""
void running(int N, float V[N][N][N], float A[N][N][N]) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      for (int k = 1; k < N - 1; k++)
        V[i][k][j] = V[i][k][j] + A[i][j][k] + A[i + 1][j + 1][k + 1];
}
#define M 68
void running_fixed(float V[M][M][M], float A[M][M][M]) {
  for (int i = 1; i < M - 1; i++)
    for (int j = 1; j < M - 1; j++)
      for (int k = 1; k < M - 1; k++)
        V[i][k][j] = V[i][k][j] + A[i][j][k] + A[i + 1][j + 1][k + 1];
}
void two_j(int n, float A[n][128], float B[n][64]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 64; j++)
      B[i][j] = A[i][2 * j];
}
void row_reused(int n, float B[n][n], float C[n], float D[n][n]) {
  for (int i = 0; i < n - 1; i++)
    for (int j = 0; j < n; j++)
      B[i][j] = C[j] + D[i + 1][j] + D[j][i];
}
void far_apart(int n, float A[n], float B[n]) {
  for (int i = 0; i < n; i++)
    B[i] = A[i] + A[i + 4096];
}
void dependent_far(int n, float A[n]) {
  for (int i = 0; i < n; i++)
    A[i] = A[i + 2048] * 2.0f;
}
void skewed(int n, float A[n][n]) {
  for (int i = 1; i < n; i++)
    for (int j = 0; j < n - 1; j++)
      A[i][j] = A[i - 1][j + 1] + 1.0f;
}
void downward(int n, float A[n][n]) {
  for (int i = 1; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = A[i - 1][j] + 1.0f;
}
void timed(int T, int n, float A[2][n][n]) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[(t + 1) % 2][i][j] = A[t % 2][i - 1][j] + A[t % 2][i + 1][j] + A[t % 2][i][j];
}
void triangle(int n, float A[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      A[i][j] = 0.0f;
}
void imperfect(int n, float A[n][n], float B[n]) {
  for (int i = 0; i < n; i++) {
    B[i] = 0.0f;
    for (int j = 0; j < n; j++)
      A[i][j] = 1.0f;
  }
}
"""

#: Table 1's "shared buffers" (one per array)
TABLE1_BUFFERS = {
    "jacobi_1d": 2, "stencil5": 2, "stencil9": 2, "jacobi_2d": 2, "fdtd0": 2, "fdtd1": 2,
    "fdtd2": 3, "stencil19": 2, "stencil27": 2, "heat_3d": 2,
}  # fmt: skip
#: the paper's large tiles (§4, Step 1)
LARGE = {1: (1024,), 2: (128, 128), 3: (32, 32, 32)}


@pytest.fixture(scope="module")
def nests(kernel_file):
    return lower_file(kernel_file("nests", NESTS_C)).module


def _nest(module, name):
    (nest,) = nest_tree(_only_scop(module, name))
    return nest


def _shapes(found: Plan) -> list[str]:
    return [b.describe() for b in found.buffers]


def test_the_running_example_picks_i_j_k_by_its_costs(nests):
    """§3, Fig. 4: A's two reads fused; (i,k,j) costs 33^3 + 32^2, (i,j,k) 2*33^2 + 32^3."""
    nest = _nest(nests, "running")
    best, plans = choose_order(nest, (32, 32, 32))
    by_order = {p.order: p for p in plans}
    assert by_order[(0, 2, 1)].words == 36961
    assert _shapes(by_order[(0, 2, 1)]) == ["V: chunk [1,32,32]", "A: full [33,33,33]"]
    assert by_order[(0, 1, 2)].words == 34946
    assert _shapes(by_order[(0, 1, 2)]) == ["V: full [32,32,32]", "A: chunk [2,33,33]"]
    assert best.order == (0, 1, 2)
    assert len(plans) == 6


def test_fusion_is_decided_on_full_tiles_and_can_be_switched_off(nests):
    nest = _nest(nests, "running")
    assert access_groups(nest, (32, 32, 32)) == [((0, 3), ""), ((1, 2), "")]
    apart = access_groups(nest, (32, 32, 32), fusion=False)
    assert apart == [((0, 3), ""), ((1,), ""), ((2,), "")]  # V read and written: dependent
    assert _shapes(plan(nest, (32, 32, 32), (0, 1, 2), groups=apart)) == [
        "V: full [32,32,32]", "A: chunk [1,32,32]", "A: chunk [1,32,32]",
    ]  # fmt: skip


def test_bursts_add_the_left_halo_and_round_the_rows(nests):
    """§5.4: w = 4, tiles at k = 1 + 32m: left halo 1, A'' = [2,33,36]; rows of 68 are not
    a multiple of 8, so w = 8 falls back to 1; rows of N (a parameter) too."""
    nest = _nest(nests, "running_fixed")
    four = plan(nest, (32, 32, 32), (0, 1, 2), burst=4)
    assert _shapes(four) == ["V: full [32,32,36]", "A: chunk [2,33,36]"]
    assert [(b.left_halo, b.burst, b.box) for b in four.buffers] == [
        (1, 4, (32, 32, 32)), (1, 4, (2, 33, 33)),
    ]  # fmt: skip
    eight = plan(nest, (32, 32, 32), (0, 1, 2), burst=8)
    assert [b.burst for b in eight.buffers] == [1, 1] and eight.words == 34946
    parametric = plan(_nest(nests, "running"), (32, 32, 32), (0, 1, 2), burst=4)
    assert parametric.words == 34946


def test_a_strided_subscript_doubles_the_box(nests):
    """F4: A[i][2 * j] spans a box twice as wide; a stride is no burst (the contiguity rule
    needs the innermost loop to walk the row one element a step): a full buffer."""
    found = plan(_nest(nests, "two_j"), (32, 32), (0, 1))
    assert _shapes(found) == ["A: full [32,63]", "B: line [1,32]"]


def test_a_chunk_must_move_one_element_along_one_dimension_per_iteration(nests):
    """C[j] is the same in every iteration of i (loaded once: full); D[i + 1][j] moves down a
    row (a line); D[j][i] moves along its rows, which j does not walk (full)."""
    found = plan(
        _nest(nests, "row_reused"),
        (32, 32),
        (0, 1),
        groups=[((0,), ""), ((1,), ""), ((2,), ""), ((3,), "")],
    )
    assert _shapes(found) == ["C: full [32]", "D: line [1,32]", "D: full [32,32]", "B: line [1,32]"]


def test_accesses_that_share_no_data_are_not_fused(nests):
    found = plan(_nest(nests, "far_apart"), (1024,), (0,))
    assert _shapes(found) == ["A: full [1024]", "A: full [1024]", "B: full [1024]"]


def test_dependent_accesses_sharing_nothing_in_a_tile_are_not_cached(nests):
    """§3 rule 3: A[i] = A[i + 2048] with tiles of 1024: both nc."""
    found = plan(_nest(nests, "dependent_far"), (1024,), (0,))
    assert [b.kind for b in found.buffers] == ["nc"] and found.buffers[0].accesses == (0, 1)
    assert found.words == 0 and "share no data" in found.buffers[0].reason


def test_a_negative_distance_makes_rectangular_tiles_illegal(nests):
    """F7: distance (1,-1) refuses the nest; (1,0) keeps both orders."""
    with pytest.raises(NotPlannable, match="rectangular tiles are illegal"):
        nest_tree(_only_scop(nests, "skewed"))
    downward = _nest(nests, "downward")
    assert fully_permutable(downward)
    assert len(choose_order(downward, (32, 32))[1]) == 2


def test_a_time_loop_is_kept_around_its_sweep(nests):
    """(t,i,j) is not fully permutable (distance (1,-1,0)): t is kept, its sweep (i,j) is a
    nest in which t is a parameter; the planes t % 2 and (t + 1) % 2 do not meet in a step,
    so the read and the write are not dependent there (no nc)."""
    (loop,) = nest_tree(_only_scop(nests, "timed"))
    assert isinstance(loop, OuterLoop) and loop.iterator == "t" and loop.position == 0
    (sweep,) = loop.body
    assert sweep.iterators == ("i", "j") and sweep.outer == ("t",)
    found = plan(sweep, (8, 8), (0, 1))
    assert _shapes(found) == ["A: chunk [1,3,8]", "A: line [1,1,8]"]


@pytest.mark.parametrize(
    "name, words", [("triangle", "not rectangular"), ("imperfect", "not a perfect loop nest")]
)
def test_nests_outside_the_model_are_named(nests, name, words):
    (scop,), _ = extract_scops(nests.get_global(name))
    with pytest.raises(NotPlannable, match=words):
        nest_tree(scop)


def test_equal_sizes_prefer_the_faster_buffers():
    """§4 Step 2: ties go to line before chunk before full."""
    full = Plan((8, 8), (1, 0), (Buffer("A", (0,), "full", (8,), (8,)),))
    line = Plan((8, 8), (0, 1), (Buffer("A", (0,), "line", (1, 8), (1, 8)),))
    assert full.words == line.words
    assert min([full, line], key=Plan.rank) is line


@pytest.mark.parametrize("name", sorted(TABLE1_BUFFERS))
def test_the_papers_benchmarks_get_table_1s_buffers(name):
    """Table 1: every benchmark fully permutable, its accesses in one buffer per array, none
    nc; the natural order walks the rows (chunks and lines), the worst needs full buffers."""
    path = HLS_CORPUS / f"{name}.c"
    (scop,), _ = extract_scops(lower_file(str(path)).module.get_global(name))
    (nest,) = nest_tree(scop)
    best, plans = choose_order(nest, LARGE[nest.depth])
    assert len(best.buffers) == TABLE1_BUFFERS[name]
    assert all(b.kind != "nc" for b in best.buffers)
    assert best.order == tuple(range(nest.depth))
    if nest.depth > 1:
        assert {b.kind for b in best.buffers} <= {"chunk", "line"}
        assert max(plans, key=Plan.rank).words > 10 * best.words
