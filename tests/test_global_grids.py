"""Grids in global pointers, sizes in globals: legacy stencil codes' layout.

`double *u, *v;` allocated by `main`, swapped every step by the time loop, `N` and `STEPS` in
globals: the globals the time loop reads and writes are carried in SSA values through it
(`ir_passes/core/loop_promotion.py`), reads of the others leave the nest once
(`hoisting.py`), and the time loop is tiled. Bit-exact against cc in compiler mode; the
promotion must leave alone every global another access or a call of the loop may reach.
"""

from __future__ import annotations

import ctypes
import re

import pytest
from pycc_stencil.cli import main
from pycc_stencil.emit.host_jit import compile_module
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.hoisting import hoist_invariants
from pycc_stencil.ir_passes.core.inlining import inline_calls_in_loops
from pycc_stencil.ir_passes.core.loop_promotion import promote_scalars_in_loops
from test_compiler_mode import SMALL_CACHES
from test_tiling import PYCC, assert_same_output, build_both

KERNELS = r"""
#include <stdio.h>
#include <stdlib.h>
int N, STEPS;
static double *u, *v;
double *w;
double total = -0.0;
int count;
void note(int t);

void setup(int n, int steps) {
  N = n;
  STEPS = steps;
  u = malloc(sizeof(double) * n * n);
  v = malloc(sizeof(double) * n * n);
  w = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; i++) u[i] = v[i] = w[i] = (i % 17) * 0.25;
}

static void sweep(void) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      v[i * N + j] = 0.2 * (u[i * N + j] + u[(i - 1) * N + j] + u[(i + 1) * N + j]
                            + u[i * N + j - 1] + u[i * N + j + 1]);
}

/* the globals u and v swapped each step: time-tiled */
void run(void) {
  for (int t = 0; t < STEPS; t++) {
    sweep();
    double *tmp = u;
    u = v;
    v = tmp;
  }
}

/* a call in the loop may read or write the pointers: they stay in memory */
void run_noted(void) {
  for (int t = 0; t < STEPS; t++) {
    sweep();
    double *tmp = u;
    u = w;
    w = tmp;
    note(t);
  }
}

/* an access through another pointer of the global's type may reach it */
void run_aliased(double **grid) {
  for (int t = 0; t < STEPS; t++) {
    double *tmp = u;
    u = *grid;
    *grid = tmp;
    u[N + 1] += 1.0;
  }
}

/* a floating accumulator (promoted: the loop's other accesses are ints and longs) and an
   int counter (not: `cells` may point at it) */
void sums(const int *cells, long *p) {
  for (int i = 0; i < N; i++) {
    total += cells[i] * 0.5 - 0.25 * cells[i];
    count += cells[i];
    *p += count;
  }
}

void report(void) {
  double s = 0;
  for (int i = 0; i < N * N; i++) s = s * 1.0000001 + u[i] * (i % 7) - v[i] + w[i];
  printf("%a %a %d\n", s, total, count);
}
"""

MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
void setup(int n, int steps);
void run(void);
void run_noted(void);
void run_aliased(double **grid);
void sums(const int *cells, long *p);
void report(void);
extern double *w;
extern int count;
void note(int t) { if (t == 1) w[0] += 0.5; }
int main(int argc, char **argv) {
  setup(atoi(argv[1]), atoi(argv[2]));
  run();
  run_noted();
  run_aliased(&w);
  int n = atoi(argv[1]);
  int *cells = malloc(sizeof(int) * n);
  for (int i = 0; i < n; i++) cells[i] = i % 5 - 2;
  long k = 0;
  sums(cells, &k);
  report();
  printf("%ld\n", k);
  return 0;
}
"""

RUNS = [["37", "5"], ["101", "7"], ["2", "1"], ["5", "0"], ["13", "3"], ["1", "4"]]


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
@pytest.mark.parametrize("takeover", ["", "all"])
def test_global_grids_swapped_each_step_are_time_tiled_bit_exact(tmp_path, takeover):
    env, compiled = build_both(
        tmp_path, MAIN, KERNELS, ["-O3"], ["-O3"], dict(SMALL_CACHES, PYCC_TAKEOVER=takeover)
    )
    assert any("remark: time-tiled" in r for r in compiled["run"]["remarks"]), compiled["run"]
    for name in ("run_noted", "run_aliased"):
        assert not any("time-tiled" in r for r in compiled[name]["remarks"]), compiled[name]
    if not takeover:  # a caller of a transformed function the program can call is not improved
        assert compiled["setup"]["compiled_by"] == "cc", compiled["setup"]
    assert_same_output(tmp_path, env, RUNS)


def _promoted(tmp_path, name: str) -> tuple[int, str]:
    path = tmp_path / "k.c"
    path.write_text(KERNELS)
    function = lower_file(str(path), ["-O3"]).module.get_global(name)
    inline_calls_in_loops(function, [])
    count = promote_scalars_in_loops(function)
    hoist_invariants(function)
    return count, str(function)


def test_the_promoted_globals_are_read_once_and_written_if_changed(tmp_path):
    count, text = _promoted(tmp_path, "run")
    assert count == 2, text
    assert len(re.findall(r"load ptr, ptr @\"[uv]\"", text)) == 2, text  # before the loop
    assert len(re.findall(r"store ptr %\S+, ptr @\"[uv]\"", text)) == 2, text  # after it
    assert len(re.findall(r"load i32, ptr @\"N\"", text)) == 1, text  # one N for every row
    count, text = _promoted(tmp_path, "sums")
    assert count == 1 and "bitcast double" in text, text  # total, compared as its bits
    assert re.search(r"load i32, ptr @\"count\"", text.split("\nheader:")[1]), text
    assert _promoted(tmp_path, "run_noted")[0] == 0
    assert _promoted(tmp_path, "run_aliased")[0] == 0


def test_check_skips_a_function_using_a_global_pointer(tmp_path, capsys):
    path = tmp_path / "k.c"
    path.write_text(KERNELS)
    main(["check", str(path), "--param", "n=9", "--param", "steps=2"])
    out = capsys.readouterr().out
    assert re.search(r"SKIPPED run: .*uses the global pointer 'u'", out), out


COMPARED = r"""
int LIMIT;
void compared(double *a, int n) {
  for (int i = 0; i < n; i++)
    a[i] = (LIMIT < 5) + 2 * (LIMIT > 5) + 4 * (LIMIT <= 5) + 8 * (LIMIT != 5);
}
"""


def test_hoisted_comparisons_of_one_value_stay_apart(tmp_path):
    """The four comparisons of `LIMIT` leave the loop; one value per computation moved
    (`hoisting._same_computation`) must not make `<` and `>` one comparison."""
    path = tmp_path / "k.c"
    path.write_text(COMPARED)
    module = lower_file(str(path), ["-O3"]).module
    function = module.get_global("compared")
    assert hoist_invariants(function) >= 5  # the load and the four comparisons
    cell = ctypes.c_int(0)
    jit = compile_module(module, ["compared"], symbols={"LIMIT": ctypes.addressof(cell)})
    kernel = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_double), ctypes.c_int)(
        jit.function_address("compared")
    )
    for value, want in ((3, 1 + 4 + 8), (5, 4), (7, 2 + 8)):
        cell.value = value
        out = (ctypes.c_double * 3)()
        kernel(out, 3)
        assert list(out) == [want] * 3, (value, list(out))
