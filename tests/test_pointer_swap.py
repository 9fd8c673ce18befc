"""Pointer-swap time loops (`tmp = a; a = b; b = tmp`) are unrolled by the period of the swap
(`swap-unroll`, run first by the time-tiling passes) and then time-tiled.

Every case is checked bit for bit against `cc` (check: JIT vs the cc-built original, guard
zones) AND by its remarks: the unroll must be reported (or refused with a reason), and where
the nest is a stencil, `time-tiled` must follow. Trip counts T = 0, 1, 2, 3, odd and larger;
extents odd/prime, smaller than a tile and not dividing it; tiles in reversed/shuffled order
and on 2 threads; aliasing arguments (a == b); pointers used after the loop; loops that must
stay as they are; and a program built by `pycc-stencil -O3` in place of cc.
"""

from __future__ import annotations

import re

import pytest
from corpus.manifest import KERNELS
from corpus_check import kernel_group, on_entry
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from test_tiling import (
    ORDERS,
    PYCC,
    _corpus_check,
    _grouped,
    _split_functions,
    assert_bit_exact,
    assert_same_output,
    assert_transformed,
    build_both,
    check_tiled,
    missed,
    passed,
)

HOST = host_target()

SWAP_C = r"""
/* 1-D jacobi, one sweep per step, then the pointers swap (tmp declared in the loop) */
void jacobi1d(int T, int n, double *a, double *b) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
    double *tmp = a; a = b; b = tmp;
  }
}
/* a long trip count: the exit test compares the sign-extended int counter */
void jacobi1d_long(long T, int n, double *a, double *b) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      b[i] = (a[i - 1] + 2.0 * a[i] + a[i + 1]) * 0.25;
    double *tmp = a; a = b; b = tmp;
  }
}
/* two sweeps per step, then the swap; the loop tests t != T (T >= 0: else C overflows) */
void two_then_swap(int T, int n, double *a, double *b, double *c) {
  for (int t = 0; t != T; t++) {
    for (int i = 1; i < n - 1; i++)
      c[i] = 0.5 * (a[i - 1] + a[i + 1]);
    for (int i = 1; i < n - 1; i++)
      b[i] = 0.5 * (c[i - 1] + c[i + 1]) + 0.125 * b[i];
    double *tmp = a; a = b; b = tmp;
  }
}
/* 2-D, VLA-typed pointers (the temporary declared before the loop) */
void jacobi2d(int T, int n, double (*a)[n], double (*b)[n]) {
  double (*tmp)[n];
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        b[i][j] = 0.2 * (a[i][j] + a[i][j - 1] + a[i][j + 1] + a[i - 1][j] + a[i + 1][j]);
    tmp = a; a = b; b = tmp;
  }
}
/* 3-D heat, VLA-typed pointers, float */
void heat3d(int T, int n, float (*a)[n][n], float (*b)[n][n]) {
  float (*tmp)[n][n];
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 1; k < n - 1; k++)
          b[i][j][k] = a[i][j][k]
              + 0.125f * (a[i + 1][j][k] - 2.0f * a[i][j][k] + a[i - 1][j][k])
              + 0.125f * (a[i][j + 1][k] - 2.0f * a[i][j][k] + a[i][j - 1][k])
              + 0.125f * (a[i][j][k + 1] - 2.0f * a[i][j][k] + a[i][j][k - 1]);
    tmp = a; a = b; b = tmp;
  }
}
/* local pointers *p, *q declared outside the loop; the swap through two locals; the loop
   runs from 1 to T inclusive and the counter is used in the sweep */
void damped(int T, int n, double *a, double *b) {
  double *p = a, *q = b;
  for (int t = 1; t <= T; t++) {
    for (int i = 1; i < n - 1; i++)
      q[i] = 0.5 * p[i] + 0.25 * (p[i - 1] + p[i + 1]) / (double)t;
    double *x = q;
    double *y = p;
    p = x;
    q = y;
  }
}
/* both planes in one buffer: p = buf, q = buf + n */
void halves(int T, int n, double *buf) {
  double *p = buf, *q = buf + n;
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      q[i] = 0.25 * (p[i - 1] + 2.0 * p[i] + p[i + 1]);
    double *tmp = p; p = q; q = tmp;
  }
}
/* three planes rotating: the newest is computed from the two before it */
void leapfrog(int T, int n, double *a, double *b, double *c) {
  double *old = a, *cur = b, *next = c;
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      next[i] = 2.0 * cur[i] - old[i] + 0.1 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1]);
    double *tmp = old; old = cur; cur = next; next = tmp;
  }
}
/* the final pointer read after the loop: which buffer holds the result depends on T % 2 */
double jacobi1d_result(int T, int n, double *a, double *b, double *out) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
    double *tmp = a; a = b; b = tmp;
  }
  for (int i = 0; i < n; i++)
    out[i] = a[i] - b[i];
  return a[n / 2];
}
/* the same buffer passed twice: the unrolled loop must replay exactly what the original does */
void jacobi1d_same(int T, int n, double *a) {
  jacobi1d(T, n, a, a);
}
"""

NOT_REWRITTEN_C = r"""
/* recursive: the passes' inliner keeps a call of it */
void record(double *p, int n) { if (n > 1) record(p + 1, n - 1); else p[0] += 1.0; }
/* the pointer escapes into a call */
void escapes(int T, int n, double *a, double *b) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
    record(b, n);
    double *tmp = a; a = b; b = tmp;
  }
}
/* the pointers are compared */
void compared(int T, int n, double *a, double *b) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
    int same = a == b;
    b[0] = same;
    double *tmp = a; a = b; b = tmp;
  }
}
/* the swap depends on the data */
void conditional(int T, int n, double *a, double *b) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
    if (b[1] > 0.5) {
      double *tmp = a; a = b; b = tmp;
    }
  }
}
"""


@pytest.fixture(scope="module")
def source(kernel_file):
    """The path of a C file holding the named kernel (and what it calls)."""
    kernels = _split_functions(SWAP_C)
    kernels["jacobi1d_same"] = kernels["jacobi1d"] + kernels["jacobi1d_same"]
    kernels.update(_split_functions(NOT_REWRITTEN_C))
    kernels["escapes"] = kernels["record"] + kernels["escapes"]
    return lambda name: kernel_file(name, kernels[name])


def swap_remarks(remarks) -> list[str]:
    return [m for m in passed(remarks) if m.startswith("pointer-swap loop unrolled")]


def check_swap(source, function: str, params: dict, passes: str, sweeps: str):
    """Bit-exact under `passes` (and for T > 0 on a non-empty iteration space), the unroll
    reported with `sweeps` and no pointer-swap SCoP remark left; the remarks."""
    result, remarks = check_tiled(source(function), function, params, passes)
    assert_bit_exact(result, remarks, nonempty=params["T"] > 0)
    (done,) = swap_remarks(remarks)
    assert f"into sweeps {sweeps}:" in done, done
    assert not any("pointer swap" in m for m in missed(remarks)), remarks
    return remarks


# --------------------------------------------------------------------------------------------
# 1. the unrolled loop alone replays the original exactly

#: (function, extra params, the sweeps the remark names)
KERNEL_SWEEPS = {
    "jacobi1d": "a->b, b->a",
    "jacobi1d_long": "a->b, b->a",
    "two_then_swap": "b,a->b, a,b->a",  # only the rotating pointers are named
    "jacobi2d": "a->b, b->a",
    "heat3d": "a->b, b->a",
    "damped": "a->b, b->a",
    "leapfrog": "a,b->c, b,c->a, c,a->b",
    "halves": "buf->q0, q0->buf",
    "jacobi1d_result": "a->b, b->a",
}
STEPS = [-3, 0, 1, 2, 3, 4, 7]
SWEPT = list(KERNEL_SWEEPS)


@pytest.mark.parametrize("steps", STEPS)
@pytest.mark.parametrize(
    "function", [pytest.param(f, marks=kernel_group(f)) for f in KERNEL_SWEEPS]
)
def test_swap_unroll_alone_is_bit_exact(source, function, steps):
    if function == "two_then_swap" and steps < 0:
        return  # t != T from 0 with T < 0 overflows the counter: no C semantics
    n = 9 if function == "heat3d" else 13
    check_swap(source, function, {"T": steps, "n": n}, "swap-unroll", KERNEL_SWEEPS[function])


@kernel_group("jacobi1d_same")
@pytest.mark.parametrize("passes", ["swap-unroll", "time-tile(2,5)"])
@pytest.mark.parametrize("steps", [0, 1, 2, 5])
def test_aliasing_arguments_stay_exact(source, steps, passes):
    """a == b: the unroll replays the same iterations; the tiled code's alias check falls
    back to the (unrolled) original."""
    result, remarks = check_tiled(
        source("jacobi1d_same"), "jacobi1d_same", {"T": steps, "n": 23}, passes
    )
    assert_bit_exact(result, remarks, nonempty=steps > 0)
    applied = run_passes(
        lower_file(source("jacobi1d_same")).module, parse_pipeline(passes), target=HOST
    )
    assert swap_remarks(r for r in applied.remarks if r.function == "jacobi1d"), applied.remarks


# --------------------------------------------------------------------------------------------
# 2. then time-tiled, bit-exact

TIME_TILE_CASES = [
    ("jacobi1d", {"T": 0, "n": 13}, "time-tile(4,16)"),
    ("jacobi1d", {"T": 1, "n": 61}, "time-tile(4,16)"),
    ("jacobi1d", {"T": 2, "n": 7}, "time-tile(3,5)"),
    ("jacobi1d", {"T": 9, "n": 61}, "time-tile(4,16)"),
    ("jacobi1d", {"T": 30, "n": 97}, "time-tile(6,11)"),
    ("jacobi1d", {"T": 13, "n": 200}, "time-tile"),
    ("jacobi1d_long", {"T": 7, "n": 41}, "time-tile(4,8)"),
    ("two_then_swap", {"T": 7, "n": 41}, "time-tile(4,8)"),
    ("two_then_swap", {"T": 0, "n": 5}, "time-tile(3,7)"),
    ("two_then_swap", {"T": 3, "n": 5}, "time-tile(3,7)"),
    ("jacobi2d", {"T": 0, "n": 11}, "time-tile(2,3,5)"),
    ("jacobi2d", {"T": 1, "n": 23}, "time-tile(2,3,5)"),
    ("jacobi2d", {"T": 3, "n": 4}, "time-tile(3,7,2)"),
    ("jacobi2d", {"T": 6, "n": 29}, "time-tile(4,5,7)"),
    ("jacobi2d", {"T": 11, "n": 17}, "time-tile"),
    ("heat3d", {"T": 2, "n": 7}, "time-tile(2,3,4,5)"),
    ("heat3d", {"T": 5, "n": 11}, "time-tile(2,3,5,4)"),
    ("damped", {"T": 7, "n": 37}, "time-tile(4,9)"),
    ("damped", {"T": 4, "n": 5}, "time-tile(3,7)"),
    ("leapfrog", {"T": 8, "n": 41}, "time-tile(3,7)"),
    ("halves", {"T": 9, "n": 37}, "time-tile(4,8)"),
    ("halves", {"T": 4, "n": 6}, "time-tile(3,5)"),
    ("leapfrog", {"T": 5, "n": 31}, "time-tile(6,5)"),
    ("jacobi1d_result", {"T": 5, "n": 29}, "time-tile(4,6)"),
    ("jacobi1d_result", {"T": 8, "n": 29}, "time-tile(4,6)"),
]


@pytest.mark.parametrize(
    "function, params, passes",
    [
        pytest.param(f, p, s, id=f"{f}-T={p['T']}-n={p['n']}-{s}", marks=kernel_group(f))
        for f, p, s in TIME_TILE_CASES
    ],
)
def test_swap_loops_are_time_tiled_bit_exact(source, function, params, passes):
    remarks = check_swap(source, function, params, passes, KERNEL_SWEEPS[function])
    assert_transformed(remarks, "time-tiled")
    # the main loop's sweeps: one per phase, two per phase for two_then_swap
    sweeps = KERNEL_SWEEPS[function].count("->") * (2 if function == "two_then_swap" else 1)
    (tiled,) = [m for m in passed(remarks) if m.startswith("time-tiled")]
    assert tiled.startswith(f"time-tiled {sweeps} sweep(s) per step"), tiled


def test_time_tile_large_and_the_two_sweep_form_get_the_same_schedule(source, tmp_path):
    """The unrolled swap loop is skewed like the hand-written A->B, B->A form."""
    two = tmp_path / "two.c"
    two.write_text(
        "void two(int T, int n, double *a, double *b) {\n"
        "  for (int t = 0; t < T; t++) {\n"
        "    for (int i = 1; i < n - 1; i++) b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;\n"
        "    for (int i = 1; i < n - 1; i++) a[i] = (b[i - 1] + b[i] + b[i + 1]) / 3.0;\n"
        "  }\n}\n"
    )
    messages = {}
    for path, function, steps in ((source("jacobi1d"), "jacobi1d", 6), (str(two), "two", 3)):
        result, remarks = check_tiled(path, function, {"T": steps, "n": 41}, "time-tile-large(4,8)")
        assert_bit_exact(result, remarks)
        (tiled,) = [m for m in passed(remarks) if m.startswith("time-tiled")]
        skew = tiled.split("schedule ")[1].split("]")[0]
        messages[function] = re.sub(r"[A-Za-z_]\w*", "x", skew)
    assert messages["jacobi1d"] == messages["two"] == "[1*(2*x + 0) - (x), 1*(2*x + 0) + (x)", (
        messages
    )


PARALLEL_CASES = [
    ("jacobi1d", {"T": 9, "n": 131}, "time-tile(4,16)"),
    ("jacobi2d", {"T": 5, "n": 31}, "time-tile(2,4,5)"),
    ("leapfrog", {"T": 7, "n": 83}, "time-tile(3,10)"),
]


@pytest.mark.parametrize("env", ORDERS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
@pytest.mark.parametrize("function, params, passes", _grouped(PARALLEL_CASES))
def test_tiles_in_any_order_are_bit_exact(source, monkeypatch, env, function, params, passes):
    monkeypatch.delenv("PYCC_PARALLEL_ORDER", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    remarks = check_swap(source, function, params, passes, KERNEL_SWEEPS[function])
    assert_transformed(remarks, "time-tiled")


SWAP_ENTRY = next(e for e in KERNELS if e["function"] == "kernel_jacobi_2d_swap")


@on_entry(SWAP_ENTRY, [])
def test_corpus_swap_kernel_is_time_tiled():
    entry = SWAP_ENTRY
    for params, passes in [
        ({"tsteps": 3, "n": 23}, "time-tile(2,3,5)"),
        (
            {"tsteps": 4, "n": 19},
            "time-tile",
        ),
    ]:
        result, remarks = _corpus_check(entry, [], params, passes)
        assert_bit_exact(result, remarks, nonempty=True)
        assert swap_remarks(remarks), remarks
        assert_transformed(remarks, "time-tiled")


# --------------------------------------------------------------------------------------------
# 3. loops that must stay as they are


NOT_REWRITTEN = [
    ("escapes", "pointer b is passed to a call in the loop"),
    ("compared", "pointer a is compared in the loop"),
    ("conditional", "a conditional swap"),
]


@pytest.mark.parametrize("passes", ["swap-unroll", "time-tile"])
@pytest.mark.parametrize("function, reason", NOT_REWRITTEN)
def test_swaps_that_are_not_rewritten_keep_the_loop(source, function, reason, passes):
    extents = {"a": 17, "b": 17}  # the conditional swap's footprint depends on the data
    result, remarks = check_tiled(
        source(function), function, {"T": 5, "n": 17}, passes, extents=extents
    )
    assert_bit_exact(result, remarks)
    assert not passed(remarks), remarks
    refused = [m for m in missed(remarks) if m.startswith("pointer-swap loop not unrolled: ")]
    assert refused and reason in refused[0], remarks
    module = run_passes(
        lower_file(source(function)).module, parse_pipeline("time-tile"), target=HOST
    )
    scop = [r.message for r in module.remarks if r.function == function]
    assert any("not a SCoP: pointer swap" in m for m in scop), scop


def test_a_swap_inside_another_loop_is_not_rewritten(tmp_path):
    path = tmp_path / "nested.c"
    path.write_text(
        "void nested(int R, int T, int n, double *a, double *b) {\n"
        "  for (int r = 0; r < R; r++)\n"
        "    for (int t = 0; t < T; t++) {\n"
        "      for (int i = 1; i < n - 1; i++) b[i] = (a[i - 1] + a[i + 1]) * 0.5;\n"
        "      double *tmp = a; a = b; b = tmp;\n"
        "    }\n}\n"
    )
    result, remarks = check_tiled(str(path), "nested", {"R": 2, "T": 3, "n": 11}, "time-tile")
    assert_bit_exact(result, remarks)
    assert any("inside another loop" in m for m in missed(remarks)), remarks


# --------------------------------------------------------------------------------------------
# 4. compiler mode: -O3 builds the swap kernel time-tiled, the program prints what cc's prints

PROGRAM_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
double *jacobi1d_ptr(int T, int n, double *a, double *b, double **other);
int main(int argc, char **argv) {
  int n = atoi(argv[1]), T = atoi(argv[2]);
  double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n), *other = 0;
  for (int i = 0; i < n; i++) {
    a[i] = (double)((i * 7) % 17) / 3.0;
    b[i] = (double)((i * 5) % 19) / 7.0;
  }
  double *result = jacobi1d_ptr(T, n, a, b, &other);
  double s = 0.0;
  for (int i = 0; i < n; i++) s = s * 1.0000001 + result[i] - 0.5 * other[i];
  printf("%s %s %a\n", result == a ? "a" : "b", other == a ? "a" : "b", s);
  return 0;
}
"""
KERNEL = r"""
double *jacobi1d_ptr(int T, int n, double *a, double *b, double **other) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
    double *tmp = a; a = b; b = tmp;
  }
  *other = b;
  return a;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_compiler_mode_O3_swap_program_matches_cc(tmp_path):
    env, compiled = build_both(tmp_path, PROGRAM_MAIN, KERNEL, ["-O3"], ["-O3"])
    kernel = compiled["jacobi1d_ptr"]
    assert kernel["compiled_by"] == "pycc-stencil", kernel
    assert any("pointer-swap loop unrolled by 2" in r for r in kernel["remarks"]), kernel
    assert any("remark: time-tiled" in r for r in kernel["remarks"]), kernel
    # 600000 doubles per array: beyond L2, the tiled code runs
    runs = [(600_001, 5), (600_000, 4), (37, 3), (2, 1), (13, 0)]
    assert_same_output(tmp_path, env, [[str(n), str(steps)] for n, steps in runs])


#: rows reached through tables of row pointers (a pointer loaded inside the loops: not a SCoP),
#: in a pointer-swap time loop
ROW_POINTERS = r"""
void steps(double **u, double **v, int nx, int ny, double c, int nsteps) {
  double **tmp;
  for (int t = 0; t < nsteps; t++) {
    for (int i = 1; i < nx + 1; i++)
      for (int j = 1; j < ny + 1; j++)
        u[i][j] = v[i][j] + c * (v[i + 1][j] + v[i - 1][j] + v[i][j + 1] + v[i][j - 1]
                                 - 4.0 * v[i][j]);
    tmp = u; u = v; v = tmp;
  }
}
"""
ROW_POINTERS_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
void steps(double **u, double **v, int nx, int ny, double c, int nsteps);
int main(int argc, char **argv) {
  int n = atoi(argv[1]), T = atoi(argv[2]);
  int size = (n + 2) * (n + 2);
  double *a = malloc(sizeof(double) * size), *b = malloc(sizeof(double) * size);
  double **ra = malloc(sizeof(double *) * (n + 2)), **rb = malloc(sizeof(double *) * (n + 2));
  for (int k = 0; k < size; k++) a[k] = b[k] = (double)(k % 101) * 0.5;
  for (int i = 0; i < n + 2; i++) { ra[i] = a + i * (n + 2); rb[i] = b + i * (n + 2); }
  steps(ra, rb, n, n, 0.2, T);
  double s = 0.0;
  for (int k = 0; k < size; k++) s = s * 1.0000001 + a[k] - 0.5 * b[k];
  printf("%a\n", s);
  return 0;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_a_swap_unrolled_for_tiles_that_do_not_come_is_no_improvement(tmp_path):
    """Unrolling the swap only prepares time tiling: when the nest then is no SCoP, nothing
    was improved and -O3 leaves the kernel to cc (found by a new-user review: the kernel was
    taken over with the unrolling alone)."""
    kernels = {}
    for policy, taken in (("all", "pycc-stencil"), ("", "cc")):  # ("": the default policy)
        (tmp_path / (policy or "improved")).mkdir()
        env, compiled = build_both(
            tmp_path / (policy or "improved"), ROW_POINTERS_MAIN, ROW_POINTERS, ["-O3"], ["-O3"],
            {"PYCC_TAKEOVER": policy},
        )  # fmt: skip
        kernels[policy] = compiled["steps"]
        assert kernels[policy]["compiled_by"] == taken, kernels[policy]
        assert_same_output(tmp_path / (policy or "improved"), env, [["7", "3"], ["30", "4"]])
    assert "nothing to improve" in kernels[""]["reason"], kernels[""]
    remarks = kernels["all"]["remarks"]  # (under `all`: what the passes did)
    assert any("pointer-swap loop unrolled by 2" in r for r in remarks), remarks
    assert not any("remark: time-tiled" in r for r in remarks), remarks
