"""Grids in local structs, swapped each step by a helper: legacy stencil codes' layout.

`field current, previous;` with the grid pointer and the sizes as members, the step done by
`evolve(&current, &previous)` and `swap_fields(&current, &previous)`, the grids allocated by
the same function: once the helpers are inlined, each struct is split into one scalar per
member (`ir_passes/core/promotion.split_local_structs`), the pointers' swap becomes header
phis, the grids `calloc` returned are arrays as arguments' are, and the time loop is tiled.
Bit-exact against cc in compiler mode; a struct whose address escapes, or whose bytes are read
as another type, stays in memory.
"""

from __future__ import annotations

import ctypes
import subprocess

import pytest
from pycc_stencil.emit.host_jit import compile_module
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.promotion import promote_local_scalars, split_local_structs
from test_compiler_mode import SMALL_CACHES, clean_env, functions_of, read_report, run
from test_tiling import PYCC, assert_same_output, build_both

KERNELS = r"""
#include <stdio.h>
#include <stdlib.h>
typedef struct { int nx, ny; double *data; } field;

void observe(const field *f);
double *identity(double *p);

static void swap_fields(field *a, field *b) {
  double *t = a->data;
  a->data = b->data;
  b->data = t;
}

static void evolve(field *curr, const field *prev, double a) {
  for (int i = 1; i < curr->nx + 1; i++)
    for (int j = 1; j < curr->ny + 1; j++) {
      int w = curr->ny + 2, k = i * w + j;
      curr->data[k] = prev->data[k] + a * (prev->data[k + w] + prev->data[k - w]
                      + prev->data[k + 1] + prev->data[k - 1] - 4.0 * prev->data[k]);
    }
}

/* heat-equation's own indexing: the row length written out in every subscript */
static void evolve_rows(field *curr, field *prev, double a) {
  int nx = curr->nx, ny = curr->ny;
  for (int i = 1; i < nx + 1; i++)
    for (int j = 1; j < ny + 1; j++)
      curr->data[i * (ny + 2) + j] = prev->data[i * (ny + 2) + j] + a * (
          prev->data[(i + 1) * (ny + 2) + j] + prev->data[(i - 1) * (ny + 2) + j]
          + prev->data[i * (ny + 2) + j + 1] + prev->data[i * (ny + 2) + j - 1]
          - 4.0 * prev->data[i * (ny + 2) + j]);
}

static void fill(field *f, int n) {
  f->nx = f->ny = n;
  f->data = calloc((size_t)(n + 2) * (n + 2), sizeof(double));
  for (int i = 0; i < (n + 2) * (n + 2); i++) f->data[i] = (i % 11) * 0.125 - 0.5;
}

static double sum(const field *f) {
  double s = 0;
  for (int i = 0; i < (f->nx + 2) * (f->ny + 2); i++) s = s * 0.999 + f->data[i] * (i % 13);
  return s;
}


/* a time loop over two fields: `step`, then `then`, each step */
#define STEPPED(name, step, then)           \
  double name(int n, int steps) {           \
    field current, previous;                \
    fill(&current, n);                      \
    fill(&previous, n);                     \
    for (int t = 0; t < steps; t++) {       \
      step;                                 \
      then;                                 \
    }                                       \
    double s = sum(&previous) - sum(&current); \
    free(current.data);                     \
    free(previous.data);                    \
    return s;                               \
  }

/* the structs split, the swap unrolled: time-tiled */
STEPPED(run, evolve(&current, &previous, 0.125), swap_fields(&current, &previous))
/* the same with heat-equation's subscripts: time-tiled */
STEPPED(run_rows, evolve_rows(&current, &previous, 0.125), swap_fields(&current, &previous))
/* another file sees the struct each step: it stays in memory */
STEPPED(run_observed, evolve(&current, &previous, 0.125),
        swap_fields(&current, &previous); observe(&current))

/* grids malloc returned, swapped as locals: arrays as arguments' are, time-tiled */
double run_malloc(int n, int steps) {
  int w = n + 2;
  double *u = malloc(sizeof(double) * w * w), *v = malloc(sizeof(double) * w * w);
  for (int i = 0; i < w * w; i++) u[i] = v[i] = (i % 7) * 0.25;
  for (int t = 0; t < steps; t++) {
    for (int i = 1; i < n + 1; i++)
      for (int j = 1; j < n + 1; j++)
        v[i * w + j] = 0.25 * (u[i * w + j - 1] + u[i * w + j + 1] + u[(i - 1) * w + j]
                               + u[(i + 1) * w + j]);
    double *tmp = u;
    u = v;
    v = tmp;
  }
  double s = 0;
  for (int i = 0; i < w * w; i++) s = s * 0.999 + u[i] * (i % 5) - v[i];
  free(u);
  free(v);
  return s;
}



/* a member's bytes changed through a char pointer in the loop: the member stays in memory */
double run_bytes(int n, int steps) {
  field current, previous;
  fill(&current, n);
  fill(&previous, n);
  for (int t = 0; t < steps; t++) {
    swap_fields(&current, &previous);
    ((unsigned char *)&current.nx)[1] ^= 1;
    current.nx += 3;
  }
  double s = current.nx + sum(&previous) * 0.0;
  free(current.data);
  free(previous.data);
  return s;
}

/* grids a call returns, beside a local array one of them may point into: not tiled */
double run_local(int n, int steps) {
  double local[256];
  for (int i = 0; i < 256; i++) local[i] = i * 0.25;
  double *u = identity(local), *v = malloc(sizeof(double) * 256);
  int m = n < 254 ? n : 254;
  for (int t = 0; t < steps; t++)
    for (int i = 1; i < m + 1; i++) {
      v[i] = 0.5 * (u[i - 1] + u[i + 1]);
      local[i] = v[i] + local[i - 1];
    }
  double s = v[1] * 0.0;
  for (int i = 1; i < m + 1; i++) s += local[i] * i + v[i];
  free(v);
  return s;
}
"""

MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
typedef struct { int nx, ny; double *data; } field;
double run(int n, int steps);
double run_observed(int n, int steps);
double run_local(int n, int steps);
double run_bytes(int n, int steps);
double run_malloc(int n, int steps);
double run_rows(int n, int steps);
static int seen;
void observe(const field *f) { seen += f->nx; if (seen == 2 * f->nx) f->data[f->ny + 3] = 1.0; }
double *identity(double *p) { return p; }
int main(int argc, char **argv) {
  int n = atoi(argv[1]), steps = atoi(argv[2]);
  printf("%a\n%a\n", run(n, steps), run_observed(n, steps));
  printf("%a\n%a\n", run_local(n, steps), run_bytes(n, steps));
  printf("%a\n%a\n", run_malloc(n, steps), run_rows(n, steps));
  return 0;
}
"""

RUNS = [["37", "5"], ["101", "9"], ["1", "3"], ["2", "1"], ["13", "0"], ["61", "2"]]


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
@pytest.mark.parametrize("takeover", ["", "all"])
def test_struct_grids_swapped_by_a_helper_are_time_tiled_bit_exact(tmp_path, takeover):
    env, compiled = build_both(
        tmp_path, MAIN, KERNELS, ["-O3"], ["-O3"], dict(SMALL_CACHES, PYCC_TAKEOVER=takeover)
    )
    for name in ("run", "run_malloc", "run_rows"):
        assert any("remark: time-tiled" in r for r in compiled[name]["remarks"]), compiled[name]
    for name in ("run_observed", "run_local", "run_bytes"):
        assert not any("time-tiled" in r for r in compiled[name]["remarks"]), compiled[name]
    assert_same_output(tmp_path, env, RUNS)


SLOTS = r"""
typedef struct { int a; double b; int c[2]; } mixed;
typedef struct { mixed in; short s; } outer;
int members(int x, int y) {
  mixed m = {x, 1.5, {0, 0}};
  for (int i = 0; i < y % 9; i++) {
    m.a += i; m.b *= 0.5; m.c[1] = m.a;
    if (i & 1) m.c[0] += 2;
  }
  return m.a * 3 + (int)m.b + m.c[0] - m.c[1];
}
int nested(int x, int y) {
  outer o;
  o.in.a = x; o.s = (short)y;
  for (int i = 0; i < y % 5; i++) { o.in.a += o.s; o.s = (short)(o.s - 1); }
  return o.in.a + o.s;
}
int punned(int x, int y) {
  mixed m = {x, y * 0.5 + x, {0, 0}};
  unsigned char *bytes = (unsigned char *)&m.b;  /* the double's bytes read as chars */
  return bytes[0] ^ bytes[7] ^ m.a;
}
int indexed(int x, int y) {
  mixed m = {x, 0.0, {y, -y}};
  return m.c[(x & 1)] + m.a;
}
"""
#: a table of more members than a slot is split into (`promotion.MAX_SPLIT_MEMBERS`)
SLOTS += (
    "int table(int x, int y) {\n  double t[70];\n"
    + "".join(f"  t[{k}] = x * {k} + y;\n" for k in range(70))
    + "  return (int)(t[3] - t[69]);\n}\n"
)
#: function -> structs split
SPLIT = {"members": 1, "nested": 1, "punned": 0, "indexed": 0, "table": 0}
INPUTS = [(0, 1), (3, 2), (-4, 5), (11, 3), (7, 9), (200, 13), (1, -2)]


def _run_split(tmp_path) -> dict[str, list[int]]:
    source = tmp_path / "slots.c"
    source.write_text(SLOTS)
    module = lower_file(str(source)).module
    counts = {f.name: split_local_structs(f) for f in module.functions if f.name in SPLIT}
    assert counts == SPLIT, counts
    for function in module.functions:
        if function.name in SPLIT:
            promote_local_scalars(function)
            assert (" alloca " in str(function)) == (SPLIT[function.name] == 0)
    jit = compile_module(module, list(SPLIT))
    signature = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int)
    return {
        name: [signature(jit.function_address(name))(a, b) for a, b in INPUTS] for name in SPLIT
    }


def test_split_structs_compute_what_the_slots_did(tmp_path):
    """Split and promoted, the functions return what cc's build of them returns; the slots
    the split must leave whole are left whole (`_run_split` counts them)."""
    library = tmp_path / "slots.so"
    (tmp_path / "cc.c").write_text(SLOTS)
    subprocess.run(
        ["cc", "-O2", "-shared", "-fPIC", "cc.c", "-o", library], cwd=tmp_path, check=True
    )
    built = ctypes.CDLL(str(library))
    want = {name: [getattr(built, name)(a, b) for a, b in INPUTS] for name in SPLIT}
    assert _run_split(tmp_path) == want
    assert len(set(want["members"])) > 3  # the inputs exercise the code


def test_a_local_member_is_written_back_without_a_test_of_its_old_value(tmp_path):
    """A local's member may be uninitialized before the loop: testing its old value (as a
    global's is tested, to store only if it changed) would branch on an undefined value,
    which LLVM takes as unreachable (csmith seed 9113 then never ended)."""
    from pycc_stencil.ir_passes.core.inlining import inline_calls_in_loops
    from pycc_stencil.ir_passes.core.loop_promotion import promote_scalars_in_loops

    path = tmp_path / "k.c"
    path.write_text(KERNELS)
    function = lower_file(str(path), ["-O3"]).module.get_global("run")
    inline_calls_in_loops(function, [])
    assert promote_scalars_in_loops(function) == 2
    names = {b.name for b in function.blocks}
    assert {"current.8.out", "previous.8.out"} <= names, names
    assert not any(name.endswith(".changed") for name in names), names


MEMBER_READ = r"""
#include <stdlib.h>
typedef struct { int n; double dx; double *data; } line;
static void init(line *f, int n) { f->n = n; f->dx = 0.5; f->data = calloc(n, sizeof(double)); }
static void relax(line *cur, line *prev) {
  double c = prev->dx * prev->dx;
  for (int i = 1; i < cur->n - 1; i++)
    cur->data[i] = prev->data[i] + c * (prev->data[i - 1] - 2.0 * prev->data[i]
                                        + prev->data[i + 1]);
}
static void flip(line *a, line *b) { double *t = a->data; a->data = b->data; b->data = t; }
double run_dx(int n, int steps) {
  line cur, prev;
  init(&cur, n);
  init(&prev, n);
  for (int t = 0; t < steps; t++) {
    relax(&cur, &prev);
    flip(&cur, &prev);
  }
  double s = prev.data[n / 2];
  free(cur.data);
  free(prev.data);
  return s;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_the_report_says_why_when_nothing_of_the_file_is_taken_over(tmp_path):
    """A `double` member read in the nest, which the grids' `double` stores may change (the
    struct's address went to `init`), stays a memory access of the struct, beside grids from
    memory: nothing of the file is taken over, and the report still gives the passes'
    remarks (it gave none when no function of the file was taken over)."""
    (tmp_path / "member.c").write_text(MEMBER_READ)
    report = tmp_path / "report.jsonl"
    env = clean_env(tmp_path / "cache", PYCC_TAKEOVER="", PYCC_REPORT=str(report))
    run([PYCC, "-O3", "-c", "member.c", "-o", "member.o"], tmp_path, env)
    (unit,) = read_report(report)
    kept = functions_of(unit)["run_dx"]
    assert kept["compiled_by"] == "cc" and "nothing to improve" in kept["reason"], kept
    assert any("beside a local array" in r for r in kept["remarks"]), kept
