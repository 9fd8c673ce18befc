"""Calls inside loops to functions of the same file are inlined before the polyhedral passes
(ir_passes/core/inlining.py): an index helper (`*IDX(g, w, i, j)`) and a time loop calling a
sweep function are time-tiled like the code written inline, bit-exact against cc at odd and
prime extents, extents smaller than a tile and T = 0, 1, odd. Callees with several returns,
a local array, a call of their own or recursion are inlined (or stay a call) and stay exact;
the -O3 token scan (dropin_prescan) sees through the calls, and a program built with the
default policy runs as cc's build does.
"""

from __future__ import annotations

import ctypes
import subprocess

import pytest
from corpus_check import kernel_cases, kernel_group
from pycc_stencil.dropin_prescan import has_locality_nest, locality_candidates
from pycc_stencil.emit.host_jit import compile_module
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.inlining import MAX_CALLER_INSTRUCTIONS, inline_calls_in_loops
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from test_compiler_mode import SMALL_CACHES
from test_tiling import (
    PYCC,
    assert_bit_exact,
    assert_same_output,
    assert_transformed,
    build_both,
    check_tiled,
    passed,
)

HOST = host_target()

CALLS_C = r"""
typedef unsigned char cell_t;
/* parallel-etudes' anneal: an index helper instead of a macro */
static cell_t *IDX(cell_t *g, int w, int i, int j) { return g + i * w + j; }
void ca_steps(cell_t *cur, cell_t *next, int w, int h, int nsteps) {
  for (int s = 0; s < nsteps; s++) {
    for (int i = 1; i < h - 1; i++)
      for (int j = 1; j < w - 1; j++)
        *IDX(next, w, i, j) = (*IDX(cur, w, i - 1, j) + *IDX(cur, w, i + 1, j)
                               + *IDX(cur, w, i, j - 1) + *IDX(cur, w, i, j + 1)
                               + *IDX(cur, w, i, j)) >= 3;
    cell_t *t = cur; cur = next; next = t;
  }
}
/* heat-equation's time loop calling its sweep, which calls a helper of its own */
static long at(int i, int j, int ny) { return (long)i * (ny + 2) + j; }
static void sweep(const double *u, double *v, int nx, int ny) {
  for (int i = 1; i <= nx; i++)
    for (int j = 1; j <= ny; j++)
      v[at(i, j, ny)] = 0.25 * (u[at(i - 1, j, ny)] + u[at(i + 1, j, ny)] + u[at(i, j - 1, ny)]
                                + u[at(i, j + 1, ny)]);
}
void heat_steps(double *u, double *v, int nx, int ny, int nsteps) {
  for (int t = 0; t < nsteps; t++) { sweep(u, v, nx, ny); double *w = u; u = v; v = w; }
}
/* a table indexed by the helper's constant argument: `k & 3` folds once inlined */
static double coef(int k) {
  static const double tab[4] = {0.25, 0.5, 0.125, 0.125};
  return tab[k & 3];
}
void weights(double *u, double *v, int n, int T) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++) v[i] = coef(1) * u[i - 1] + coef(2) * u[i] + coef(5) * u[i + 1];
    double *w = u; u = v; v = w;
  }
}
/* a sweep computing its row length once (`int m = ny + 2;`, a block of its own before its
   loops once inlined: no statement) and an int index helper (a new user's review) */
static inline int at_row(int i, int j, int w) { return i * w + j; }
static void sweep_idx(const double *u, double *v, int nx, int ny) {
  int m = ny + 2;
  for (int i = 1; i <= nx; i++)
    for (int j = 1; j <= ny; j++)
      v[at_row(i, j, m)] = 0.25 * (u[at_row(i - 1, j, m)] + u[at_row(i + 1, j, m)]
                                   + u[at_row(i, j - 1, m)] + u[at_row(i, j + 1, m)]);
}
void idx_steps(double *u, double *v, int nx, int ny, int nsteps) {
  for (int t = nsteps; t > 0; t--) { sweep_idx(u, v, nx, ny); sweep_idx(v, u, nx, ny); }
}
/* a helper of several returns called with constants: once inlined its tests are of constants,
   and the branches that always go one way are taken (ir_passes/core/branches.py) */
static double weight(int k) { if (k == 0) return 0.5; if (k < 3) return 0.25; return 0.125; }
void weight_steps(double *u, double *v, int nx, int ny, int nsteps) {
  int m = ny + 2;
  for (int t = 0; t < nsteps; t++) {
    for (int i = 1; i <= nx; i++)
      for (int j = 1; j <= ny; j++)
        v[i * m + j] = weight(0) * u[i * m + j] + weight(2) * (u[(i - 1) * m + j]
                       + u[(i + 1) * m + j]) + weight(7) * (u[i * m + j - 1] + u[i * m + j + 1]);
    double *w = u; u = v; v = w;
  }
}
/* the time loop swaps its grids through a helper given their addresses: once it is inlined,
   u and v live in registers again (ir_passes/core/promotion.py) and the swap is seen */
static void swap_grids(double **a, double **b) { double *t = *a; *a = *b; *b = t; }
void swap_steps(double *u, double *v, int nx, int ny, int nsteps) {
  for (int t = 0; t < nsteps; t++) {
    sweep(u, v, nx, ny);
    swap_grids(&u, &v);
  }
}
/* several returns, a local array, recursion: inlined or kept, always exact */
static int clamp_index(int x, int n) { if (x < 0) return 0; if (x >= n) return n - 1; return x; }
static double weighted(const double *p) {
  double w[3] = {0.25, 0.5, 0.25};
  return w[0] * p[-1] + w[1] * p[0] + w[2] * p[1];
}
static int depth(int n) { return n <= 0 ? 0 : depth(n - 1) + 1; }
void helpers(const double *a, double *b, int *c, int n) {
  for (int i = 1; i < n - 1; i++) {
    b[i] = weighted(a + i) + a[clamp_index(i - 2, n)];
    c[i] = depth(i % 5);
  }
}
/* a switch in the block of the call: the inlined code splits that block before it */
static int twice(int x) { return 2 * x; }
void switched(const double *a, double *b, int n) {
  for (int i = 0; i < n; i++) {
    int v = twice((int)a[i]);
    double r = a[i];
    switch (v & 6) { case 0: r = r + 1.0; break; case 2: r = r - 1.0; break; default: break; }
    b[i] = r;
  }
}
/* a struct by value: the callee's own copy, which it writes (not inlined) */
typedef struct { double c[6]; } coeffs;
static double bump(coeffs k, const double *p) { k.c[0] += p[0]; return k.c[0] + k.c[5]; }
void by_value(const double *a, double *b, int n) {
  coeffs k = {{1, 2, 3, 4, 5, 6}};
  for (int i = 0; i < n; i++) b[i] = bump(k, a + i);
}
"""

#: (function, params, pipeline)
#: (function, params, pipeline); one compile of the file per pipeline, on one worker
TILE = "time-tile(4,5,7)"
TILED = [
    ("ca_steps", {"w": 13, "h": 11, "nsteps": 5}, TILE),
    ("ca_steps", {"w": 3, "h": 4, "nsteps": 1}, TILE),
    ("ca_steps", {"w": 37, "h": 29, "nsteps": 8}, TILE),
    ("heat_steps", {"nx": 13, "ny": 11, "nsteps": 7}, TILE),
    ("heat_steps", {"nx": 2, "ny": 3, "nsteps": 1}, "parallelogram-tile(3,7,2)"),
    ("heat_steps", {"nx": 19, "ny": 23, "nsteps": 0}, TILE),
    ("weights", {"n": 37, "T": 7}, TILE),
    ("weights", {"n": 3, "T": 1}, TILE),
    ("idx_steps", {"nx": 13, "ny": 11, "nsteps": 3}, TILE),
    ("idx_steps", {"nx": 2, "ny": 5, "nsteps": 1}, "parallelogram-tile(3,7,2)"),
    ("weight_steps", {"nx": 17, "ny": 9, "nsteps": 4}, TILE),
    ("weight_steps", {"nx": 3, "ny": 3, "nsteps": 1}, TILE),
]
#: swap_steps: `check` measures its grids with the swap inlined (runtime/footprint.py), as
#: the passes see it
SWAPPED = [
    ("swap_steps", {"nx": 13, "ny": 11, "nsteps": 5}, TILE),
    ("swap_steps", {"nx": 3, "ny": 2, "nsteps": 1}, TILE),
    ("swap_steps", {"nx": 17, "ny": 7, "nsteps": 4}, "parallelogram-tile(3,7,2)"),
]


CALLS_GROUP = kernel_group("calls")


@pytest.fixture(scope="module")
def calls_file(kernel_file):
    return kernel_file("calls", CALLS_C)


@pytest.mark.parametrize(
    "function, params, passes",
    kernel_cases(TILED, "calls"),
)
def test_stencils_through_calls_are_time_tiled_bit_exact(calls_file, function, params, passes):
    result, remarks = check_tiled(calls_file, function, params, passes)
    steps = params.get("nsteps", params.get("T"))
    assert_bit_exact(result, remarks, nonempty=steps > 0)
    assert_transformed(remarks, "time-tiled")


@pytest.mark.parametrize("function, params, passes", kernel_cases(SWAPPED, "calls"))
def test_a_swap_through_a_helper_is_time_tiled_bit_exact(calls_file, function, params, passes):
    result, remarks = check_tiled(calls_file, function, params, passes)
    assert_bit_exact(result, remarks, nonempty=True)
    assert_transformed(remarks, "time-tiled")
    assert any("pointer-swap loop unrolled" in r.message for r in remarks), remarks


@CALLS_GROUP
@pytest.mark.parametrize("function", ["helpers", "by_value", "switched"])
@pytest.mark.parametrize("n", [3, 4, 17])
def test_callees_with_returns_locals_recursion_or_copies_stay_exact(calls_file, function, n):
    result, remarks = check_tiled(calls_file, function, {"n": n}, TILE)
    assert_bit_exact(result, remarks, nonempty=True)
    assert not passed(remarks), remarks


def test_the_calls_are_inlined_but_a_recursive_one(tmp_path):
    """The IR after the pass: no call of a helper left in the loops but of the recursive
    one (inlined a few levels deep), and LLVM verifies the inlined debug locations."""
    source = tmp_path / "calls.c"
    source.write_text(CALLS_C)
    module = lower_file(str(source)).module
    applied = run_passes(module, parse_pipeline("time-tile"), target=HOST)
    text = {f.name: str(f) for f in module.functions}
    helpers = ("IDX", "sweep", "at", "weighted", "clamp_index")
    for caller in ("ca_steps", "heat_steps", "helpers"):
        calls = [line for line in text[caller].splitlines() if " call " in line]
        assert not [c for c in calls if any(f'@"{h}"' in c for h in helpers)], calls
    assert "inlinedAt" in str(module)
    # weighted's local array is not allocated on every iteration: indexed by constants only,
    # its elements are split into scalars (`promotion.split_local_structs`)
    (helpers,) = [f for f in module.functions if f.name == "helpers"]
    allocas = [[i for i in b.instructions if i.opname == "alloca"] for b in helpers.blocks]
    assert not any(allocas), allocas
    assert '@"depth"' in text["helpers"]
    assert '@"bump"' in text["by_value"]  # its struct copy is its own
    assert '@"twice"' not in text["switched"]
    # the calls left say why, as the nest's remark only names the call
    kept = {r.function: r.message for r in applied.remarks if "not inlined" in r.message}
    assert kept == {
        "helpers": "call to depth not inlined: calls nested deeper than 3 levels (recursion)",
        "by_value": "call to bump not inlined: it takes a struct by value (its own copy)",
    }, kept


def test_the_o3_scan_sees_through_the_calls():
    """The scan keeps the nests the passes reach through calls, and names the callees among
    the functions to lower (a callee not lowered could not be inlined)."""
    assert has_locality_nest(CALLS_C.encode())
    candidates = locality_candidates(CALLS_C.encode())
    assert {"ca_steps", "IDX", "heat_steps", "sweep", "at"} <= candidates, candidates
    assert "helpers" not in candidates  # its callees branch, or recurse: no SCoP
    alone = CALLS_C.split("/* heat-equation's")[0]
    assert has_locality_nest(alone.encode())
    # without the helper's definition, the subscripts call another object's function
    external = alone.replace(
        "static cell_t *IDX(cell_t *g, int w, int i, int j) { return g + i * w + j; }",
        "cell_t *IDX(cell_t *g, int w, int i, int j);",
    )
    assert not has_locality_nest(external.encode())


CALLS_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
void ca_steps(unsigned char *cur, unsigned char *next, int w, int h, int nsteps);
void heat_steps(double *u, double *v, int nx, int ny, int nsteps);
void swap_steps(double *u, double *v, int nx, int ny, int nsteps);
int main(int argc, char **argv) {
  int n = atoi(argv[1]), m = atoi(argv[2]), T = atoi(argv[3]);
  int size = (n + 2) * (m + 2);
  double *u = malloc(sizeof(double) * size), *v = malloc(sizeof(double) * size);
  unsigned char *c = malloc(size), *d = malloc(size);
  for (int k = 0; k < size; k++) {
    u[k] = v[k] = (double)(k % 97) * 0.25;
    c[k] = d[k] = (k * 7 + k / 5) % 3 == 0;
  }
  heat_steps(u, v, n, m, T);
  ca_steps(c, d, m + 2, n + 2, T);
  swap_steps(v, u, n, m, T + 1);
  double s = 0.0;
  long cells = 0;
  for (int k = 0; k < size; k++) { s = s * 1.0000001 + u[k] - 0.5 * v[k]; cells += c[k] * k; }
  printf("%a %ld\n", s, cells);
  return 0;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_a_program_with_calls_in_its_stencils_is_time_tiled_by_the_default_policy(tmp_path):
    env, compiled = build_both(
        tmp_path, CALLS_MAIN, CALLS_C, ["-O3"], ["-O3"],
        dict(SMALL_CACHES, PYCC_TAKEOVER=""),
    )  # fmt: skip
    for name in ("ca_steps", "heat_steps", "swap_steps"):
        kernel = compiled[name]
        assert kernel["compiled_by"] == "pycc-stencil", kernel
        assert any("remark: time-tiled" in r for r in kernel["remarks"]), kernel
    runs = [(61, 47, 9), (60, 60, 8), (7, 3, 1), (1, 1, 3), (13, 11, 0)]
    assert_same_output(tmp_path, env, [[str(v) for v in run] for run in runs])


def test_inlining_stops_where_the_caller_would_grow_too_large(tmp_path):
    """A 300-instruction callee called 20 times in a loop: inlined while the caller stays
    under MAX_CALLER_INSTRUCTIONS (the passes' time grows with the function); the rest stay
    calls, and the function computes what cc's does."""
    terms = " + ".join(f"x * {k + 1}.5" for k in range(100))
    calls = " + ".join(f"big(a[i] + {k})" for k in range(20))
    code = (
        f"static double big(double x) {{ return {terms}; }}\n"
        f"void many(const double *a, double *b, int n) {{\n"
        f"  for (int i = 0; i < n; i++) b[i] = {calls};\n}}\n"
    )
    source = tmp_path / "many.c"
    source.write_text(code)
    module = lower_file(str(source)).module
    (many,) = [f for f in module.functions if f.name == "many"]
    inlined = inline_calls_in_loops(many)
    size = sum(len(b.instructions) for b in many.blocks)
    assert 0 < inlined < 20, inlined
    assert size <= MAX_CALLER_INSTRUCTIONS, size
    kept: list = []
    assert inline_calls_in_loops(many, kept) == 0
    assert kept and all("the caller would grow past 4000" in why for _, why in kept), kept
    result, remarks = check_tiled(str(source), "many", {"n": 13}, TILE)
    assert_bit_exact(result, remarks, nonempty=True)


WEAK_KERNEL = r"""
/* a default sweep the program may replace (weak), and an external one a shared library's
   user may interpose (-fPIC): the calls must stay calls */
__attribute__((weak)) void sweep(const double *u, double *v, int n) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1]
                             + u[i * n + j + 1]);
}
void heat(double *u, double *v, int n, int T) {
  for (int t = 0; t < T; t++) { sweep(u, v, n); double *w = u; u = v; v = w; }
}
"""
WEAK_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
void heat(double *u, double *v, int n, int T);
/* the strong definition replaces the weak one of kernels.c */
void sweep(const double *u, double *v, int n) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++) v[i * n + j] = u[i * n + j] + 1.0;
}
int main(int argc, char **argv) {
  int n = atoi(argv[1]), T = atoi(argv[2]);
  double *u = calloc(n * n, 8), *v = calloc(n * n, 8);
  for (int k = 0; k < n * n; k++) u[k] = v[k] = k % 7;
  heat(u, v, n, T);
  double s = 0;
  for (int k = 0; k < n * n; k++) s += u[k] + 2 * v[k];
  printf("%a\n", s);
  return 0;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_an_external_callee_stays_a_call_the_linker_may_replace(tmp_path):
    env, compiled = build_both(
        tmp_path, WEAK_MAIN, WEAK_KERNEL, ["-O3"], ["-O3"],
        dict(SMALL_CACHES, PYCC_TAKEOVER="all"),
    )  # fmt: skip
    remarks = compiled["heat"]["remarks"]
    assert not any("time-tiled" in r for r in remarks), remarks
    assert any("call to sweep not inlined: it is not static" in r for r in remarks), remarks
    assert_same_output(tmp_path, env, [["40", "6"], ["9", "3"]])


FOLDED = r"""
static int depth(int n) { return n <= 0 ? 0 : depth(n - 1) + 1; }
static int pick(int k) { return k > 2; }
void folded(int *a, int n) {
  int flag[2] = {0, 1};
  for (int i = 0; i < n; i++) {
    if (flag[0]) a[i] = depth(i);
    a[i] += pick(i) + flag[1];
  }
}
"""


def test_a_kept_call_a_folded_branch_took_away_is_not_reported(tmp_path):
    """`flag[0]`, split into a scalar and promoted, is 0: the branch to the recursive call
    folds away with its block, and the calls said to be kept are those still there (a remark
    about a call of no function was an internal error that left the file to cc)."""
    path = tmp_path / "folded.c"
    path.write_text(FOLDED)
    module = lower_file(str(path)).module
    function = module.get_global("folded")
    kept: list = []
    assert inline_calls_in_loops(function, kept) >= 1
    assert '@"depth"' not in str(function) and not kept, kept
    run_passes(module, parse_pipeline("time-tile-large,fuse-tile-large"), target=host_target())


COUNTER_IN_A_SLOT = r"""
static void sweep(const double *u, double *v, int n) {
  for (int i = 1; i < n - 1; i++) v[i] = 0.5 * (u[i - 1] + u[i + 1]);
}
void swapped(double *u, double *v, int n, int steps) {
  int t, *pt = &t;
  for (*pt = 0; *pt < steps; (*pt)++) {
    sweep(u, v, n);
    double *w = u; u = v; v = w;
  }
}
"""


def test_a_counter_promoted_after_inlining_leaves_no_stale_loop_analysis(tmp_path, monkeypatch):
    """`t` lives in a slot until `sweep` is inlined; promoted then, the time loop's exit test
    compares a value, no longer a load: the loops are analysed again (a stale analysis read
    the removed load, "trip count unknown", and once made invalid IR: csmith seed 9128)."""
    for name, size in {"L1": "128", "L2": "256", "L3": "256"}.items():
        monkeypatch.setenv(f"PYCC_CACHE_{name}", size)
    path = tmp_path / "slot.c"
    path.write_text(COUNTER_IN_A_SLOT)
    module = lower_file(str(path)).module
    steps = parse_pipeline("time-tile-large,fuse-tile-large")
    applied = run_passes(module, steps, target=host_target(), verify=True)
    messages = [r.message for r in applied.remarks]
    assert any(m.startswith("pointer-swap loop unrolled") for m in messages), messages
    assert any(m.startswith("time-tiled") for m in messages), messages
    # ... and the tiled function computes what cc's build computes (odd, prime, tiny sizes)
    (tmp_path / "cc.c").write_text(COUNTER_IN_A_SLOT)
    command = ["cc", "-O2", "-shared", "-fPIC", "cc.c", "-o", "cc.so"]
    subprocess.run(command, cwd=tmp_path, check=True)
    reference = ctypes.CDLL(str(tmp_path / "cc.so")).swapped
    jit = compile_module(applied.module, ["swapped"])
    tiled = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 2, ctypes.c_int, ctypes.c_int)(
        jit.function_address("swapped")
    )
    for n, steps in ((1, 3), (2, 1), (37, 0), (37, 5), (101, 7), (257, 11)):
        grids = []
        for _ in (reference, tiled):
            u = (ctypes.c_double * n)(*[(k % 7) * 0.5 - 1 for k in range(n)])
            v = (ctypes.c_double * n)(*[(k % 5) * 0.25 for k in range(n)])
            grids.append((u, v))
        reference(grids[0][0], grids[0][1], n, steps)
        tiled(grids[1][0], grids[1][1], n, steps)
        assert [list(g) for g in grids[0]] == [list(g) for g in grids[1]], (n, steps)
