"""SCoP extraction (polyhedral/scop.py): exact isl domains and access relations of affine
nests (delinearized linear and VLA subscripts, `%2` planes), and a missed remark naming the
construct that makes a nest non-affine; such nests are left untouched and stay bit-exact."""

from __future__ import annotations

import islpy as isl
import pytest
from pycc_stencil.cli import main
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from pycc_stencil.polyhedral.codegen import without_assumed
from pycc_stencil.polyhedral.scop import extract_scops
from test_tiling import assert_bit_exact, assert_refused, check_tiled, missed

HOST = host_target()

AFFINE_C = r"""
void sweep(int n, int m, const double *a, double *b) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 0; j < m; j++)
      b[i * m + j] = a[(i - 1) * m + j] + a[(i + 1) * m + j];
}
void planes(int T, int n, double A[2][n][n]) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[(t + 1) % 2][i][j] = A[t % 2][i][j - 1] + A[t % 2][i][j + 1];
}
void vla(int n, int m, float A[n][m], float B[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 1; j < m; j++)
      B[i][j] = A[i][j - 1] * 0.5f;
}
void leaves_row(int n, double *a, double *b) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      b[i * n + j] = a[i * n + j + 1];
}
void padded_planes(int T, int N, double A[2][N + 2]) {
  for (int t = 0; t < T; t++)
    for (int i = 1; i < N + 1; i++)
      A[(t + 1) % 2][i] = A[t % 2][i - 1] + A[t % 2][i + 1];
}
void fixed_rows(int n, double A[17][17], double B[17][17]) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      B[i][j] = A[i - 1][j] + A[i][j + 1];
}
/* two planes of one buffer: the first access (p[i]) is seen before the array has rows */
void halves(int T, int n, double *buf) {
  double *p = buf, *q = buf + n;
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      q[i] = p[i - 1] + p[i + 1];
    for (int i = 1; i < n - 1; i++)
      p[i] = q[i - 1] + q[i + 1];
  }
}
void stays_in_row(int n, double *a, double *b) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n - 1; j++)
      b[i * n + j] = a[i * n + j + 1];
}
"""


@pytest.fixture(scope="module")
def affine_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("scop") / "affine.c"
    path.write_text(AFFINE_C)
    return lower_file(str(path)).module


def _only_scop(module, name):
    scops, rejected = extract_scops(module.get_global(name))
    assert not rejected, [r.reason for r in rejected]
    (scop,) = scops
    return scop


def _equal(found, expected: str) -> None:
    want = type(found)(expected)
    assert found.is_equal(want), f"{found}\n  !=\n{want}"


def test_domain_and_accesses_of_a_linearized_sweep(affine_module):
    scop = _only_scop(affine_module, "sweep")
    dom = "0 < i <= n - 2 and 0 <= j < m"
    _equal(scop.domain(), f"[n, m] -> {{ S0[i, j] : {dom} }}")
    _equal(
        scop.reads(),
        f"[n, m] -> {{ S0[i, j] -> a[i - 1, j] : {dom}; S0[i, j] -> a[i + 1, j] : {dom} }}",
    )
    _equal(scop.writes(), f"[n, m] -> {{ S0[i, j] -> b[i, j] : {dom} }}")
    assert [(a.name, a.sizes) for a in scop.arrays] == [("a", ["m"]), ("b", ["m"])]


def test_mod2_planes_are_isl_mod_constraints(affine_module):
    scop = _only_scop(affine_module, "planes")
    dom = "0 <= t < T and 0 < i <= n - 2 and 0 < j <= n - 2"
    _equal(scop.domain(), f"[T, n] -> {{ S0[t, i, j] : {dom} }}")
    _equal(scop.writes(), f"[T, n] -> {{ S0[t, i, j] -> A[(t + 1) mod 2, i, j] : {dom} }}")
    _equal(
        scop.reads(),
        f"[T, n] -> {{ S0[t, i, j] -> A[t mod 2, i, j - 1] : {dom}; "
        f"S0[t, i, j] -> A[t mod 2, i, j + 1] : {dom} }}",
    )


def test_vla_subscripts_are_delinearized(affine_module):
    scop = _only_scop(affine_module, "vla")
    dom = "0 <= i < n and 0 < j < m"
    _equal(scop.reads(), f"[n, m] -> {{ S0[i, j] -> A[i, j - 1] : {dom} }}")
    _equal(scop.writes(), f"[n, m] -> {{ S0[i, j] -> B[i, j] : {dom} }}")


def test_an_inner_subscript_that_may_leave_its_row_is_refused(affine_module):
    """a[i*n + j + 1] with j up to n-1 reads a[i+1][0]: not a[i][j+1], so no delinearization."""
    scops, rejected = extract_scops(affine_module.get_global("leaves_row"))
    assert not scops
    assert [r.reason for r in rejected] == ["subscript of a leaves its row"]


def test_an_access_seen_before_the_array_gets_rows_is_given_them(affine_module):
    """p = buf, q = buf + n: buf[?][n], p[i - 1] is buf[0][i - 1] (not a 1-D subscript)."""
    scop = _only_scop(affine_module, "halves")
    dom = "0 <= t < T and 0 < i <= n - 2"
    _equal(
        scop.writes(),
        f"[T, n] -> {{ S0[t, i] -> buf[1, i] : {dom}; S1[t, i] -> buf[0, i] : {dom} }}",
    )
    _equal(
        scop.reads(),
        f"[T, n] -> {{ S0[t, i] -> buf[0, i - 1] : {dom}; S0[t, i] -> buf[0, i + 1] : {dom}; "
        f"S1[t, i] -> buf[1, i - 1] : {dom}; S1[t, i] -> buf[1, i + 1] : {dom} }}",
    )


def test_the_same_subscript_within_its_row_is_delinearized(affine_module):
    scop = _only_scop(affine_module, "stays_in_row")
    dom = "0 <= i < n and 0 <= j < n - 1"
    _equal(scop.reads(), f"[n] -> {{ S0[i, j] -> a[i, j + 1] : {dom} }}")


def test_an_extent_computed_before_the_loops_is_a_stride_of_its_own(affine_module):
    """A[2][N + 2]: rows of N + 2 (a parameter defined as N + 2), not N with a subscript
    2*(t%2) + i that would leave its row."""
    scop = _only_scop(affine_module, "padded_planes")
    (array,) = scop.arrays
    (stride,) = array.sizes
    assert stride not in ("N", "T")
    dom = f"0 <= t < T and 0 < i <= N and {stride} = N + 2"
    _equal(
        scop.writes(),
        f"[T, N, {stride}] -> {{ S0[t, i] -> A[(t + 1) mod 2, i] : {dom} }}",
    )
    assert scop.assumed is None


def test_declared_rows_walked_to_a_run_time_extent_are_an_assumption(affine_module):
    """double A[17][17] walked to n: 2-D subscripts under the assumption n <= 17 (rows do
    not overflow), which joins the domain (and which the generated code checks)."""
    scop = _only_scop(affine_module, "fixed_rows")
    _equal(scop.assumed, "[n] -> { : n <= 17 }")
    dom = "0 < i <= n - 2 and 0 < j <= n - 2 and n <= 17"
    _equal(
        scop.reads(),
        f"[n] -> {{ S0[i, j] -> A[i - 1, j] : {dom}; S0[i, j] -> A[i, j + 1] : {dom} }}",
    )
    assert [(a.name, a.sizes) for a in scop.arrays] == [("A", ["17"]), ("B", ["17"])]


def test_the_code_generator_leaves_the_assumption_to_the_entry_check(affine_module):
    """The schedule isl turns into loops drops what the entry condition checks (`n <= 17`):
    isl spent up to a third of its AST generation on such constraints."""
    scop = _only_scop(affine_module, "fixed_rows")
    schedule = isl.Schedule.from_domain(scop.domain())
    assert not schedule.get_domain().is_equal(schedule.get_domain().gist_params(scop.assumed))
    _equal(
        without_assumed(scop, schedule).get_domain(),
        "[n] -> { S0[i, j] : 0 < i <= n - 2 and 0 < j <= n - 2 }",
    )


# --------------------------------------------------------------------------------------------
# non-affine nests: a missed remark naming the construct, the nest untouched and bit-exact

NOT_AFFINE_C = r"""
void swap_loop(int T, int n, double *a, double *b) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      b[i] = (a[i - 1] + a[i] + a[i + 1]) * 0.25;
    double *tmp = a; a = b; b = tmp;
  }
}
void ragged(int n, const int *len, const float *a, float *b) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < (len[i] & 7); j++)
      b[i * 8 + j] = a[i * 8 + j] * 2.0f;
}
/* a VLA: the passes' inliner keeps a call of it */
void bump(float *p, int k) { float scratch[k + 1]; scratch[k] = *p; *p = scratch[k] + 1.0f; }
void with_call(int n, const float *a, float *b) {
  for (int i = 0; i < n; i++) {
    b[i] = a[i];
    bump(&b[i], 1);
  }
}
void with_condition(int n, const float *a, float *b) {
  for (int i = 0; i < n; i++) {
    if (a[i] > 0.6f)
      b[i] = a[i];
  }
}
void row_pointers(int n, int m, float **rows, float *out) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 0; j < m; j++)
      out[i * m + j] = rows[i - 1][j] + rows[i + 1][j];
}
"""

NOT_AFFINE = [
    ("swap_loop", {"T": 3, "n": 17}, {}, "carried from one iteration to the next"),
    ("ragged", {"n": 5}, {"len": 5, "a": 40, "b": 40}, "loop bound is not computable"),
    ("with_call", {"n": 17}, {}, "call to bump"),
    ("with_condition", {"n": 17}, {}, "condition in the loop body"),
]
#: every nest under both passes, except the pointer swap, which the time-tiling passes unroll
#: into a SCoP first (tests/test_pointer_swap.py); `tile` does not
NOT_AFFINE_CASES = [
    pytest.param(*case, passes, id=f"{passes}-{case[0]}")
    for passes in ("time-tile", "tile(4,5)")
    for case in NOT_AFFINE
    if not (case[0] == "swap_loop" and passes == "time-tile")
]


@pytest.fixture(scope="module")
def not_affine_c(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("scop") / "not_affine.c"
    path.write_text(NOT_AFFINE_C)
    return str(path)


@pytest.mark.parametrize("function, params, extents, construct, passes", NOT_AFFINE_CASES)
def test_non_affine_nests_are_named_and_left_untouched(
    not_affine_c, function, params, extents, construct, passes
):
    result, remarks = check_tiled(not_affine_c, function, params, passes, extents=extents)
    assert_bit_exact(result, remarks)
    assert_refused(remarks, "loop nest is not a SCoP: ")
    assert any(construct in m for m in missed(remarks)), remarks


def test_row_pointers_are_named(not_affine_c):
    """`float **rows` cannot be checked by the harness (no array to pass): the remark only."""
    for passes in ("time-tile", "tile(4,5)"):
        result = run_passes(
            lower_file(not_affine_c).module, parse_pipeline(passes), verify=True, target=HOST
        )
        mine = [r for r in result.remarks if r.function == "row_pointers"]
        assert not [r for r in mine if r.kind == "passed"], mine
        reasons = [r.message for r in mine if r.kind == "missed"]
        assert any(
            m.startswith("loop nest is not a SCoP: ") and "pointer loaded from memory" in m
            for m in reasons
        ), mine


@pytest.mark.parametrize(
    "function, words", [("ragged", "data-dependent"), ("swap_loop", "pointer swap")]
)
def test_remarks_name_data_dependent_bounds_and_pointer_swaps(not_affine_c, function, words):
    result = run_passes(lower_file(not_affine_c).module, parse_pipeline("tile"), target=HOST)
    reasons = [r.message for r in result.remarks if r.function == function]
    assert any(words in m for m in reasons), reasons


def test_scop_info_prints_the_model_and_tile_reuses_it(not_affine_c, capsys, monkeypatch):
    """`emit --passes scop-info` prints domains, accesses, dependences and the schedules the
    tiling passes would choose; `tile` after it takes the cached SCoPs (one extraction)."""
    from pycc_stencil.polyhedral import analysis

    extractions = []
    real = analysis.extract_scops
    monkeypatch.setattr(
        analysis, "extract_scops", lambda f, merge: extractions.append(f.name) or real(f, merge)
    )
    path = not_affine_c.replace("not_affine.c", "planes.c")
    with open(path, "w") as handle:
        handle.write(AFFINE_C)
    passes = "scop-info,tile"
    assert main(["emit", path, "--emit", "llvm", "--passes", passes, "-o", "/dev/null"]) == 0
    err = capsys.readouterr().err
    (info,) = [block for block in err.split("remark: ")[1:] if block.startswith("SCoP of planes")]
    for line in (
        "  parameters: [T, n]",
        "    S0[t, i, j] : ",
        "  reads: [T, n] -> { S0[t, i, j] -> A[",
        "  writes: [T, n] -> { S0[t, i, j] -> A[",
        "    flow: [T, n] -> { S0[t, i, j] -> S0[t' = 1 + t, ",
        "    anti: ",
        "    output: ",
        "  schedule: [T, n] -> { S0[t, i, j] -> [t, i, j] }",
        "  tile: tiled a 2-deep band",
        "  time-tile: time-tiled 1 sweep(s) per step over 2-D space with diamond tiles",
        "  fuse-tile: refused: a single loop nest",
    ):
        assert line in info, (line, info)
    assert "remark: loop nest is not a SCoP: " not in info
    assert sorted(extractions) == sorted(set(extractions))  # scop-info's, reused by tile
    assert "remark: tiled a" in err
