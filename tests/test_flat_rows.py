"""Hand-flattened rows (`u[i*(ny + 2) + j]`, the layout of heat-equation codes with ghost
cells) and grids held in a struct are delinearized and time-tiled like C's 2-D arrays.

The row length `ny + 2` may be written at every access (computed inside the loops: the SCoP
names it once and the generated code computes it before them), kept in a local and cast, or
reached from one index `k` as `k + ny + 2` (the next row: `ny` counted as `(ny + 2) - 2`).
Each kernel is checked bit for bit against cc (`check`) at odd and prime extents, extents
smaller than a tile and T = 0, 1 and odd, and must be reported time-tiled; an access past the
end of its row stays outside the model (its remark names it) and exact. A program whose grids
sit in a struct (`field->data`, as heat-equation's `evolve`) is built in compiler mode by the
default policy and runs as cc's build does.
"""

from __future__ import annotations

import pytest
from corpus_check import compiled, kernel_cases
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from test_compiler_mode import SMALL_CACHES
from test_tiling import (
    PYCC,
    _split_functions,
    assert_bit_exact,
    assert_same_output,
    assert_transformed,
    build_both,
    check_tiled,
    missed,
    passed,
)

FLAT_C = r"""
/* heat-equation's ghost layout: rows of ny + 2 written at each access, j < ny + 1 */
void ghost_rows(double *A, double *B, int nx, int ny, int T) {
  double *tmp;
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < nx + 1; i++)
      for (int j = 1; j < ny + 1; j++)
        B[i*(ny+2)+j] = 0.2*(A[i*(ny+2)+j] + A[i*(ny+2)+j-1] + A[i*(ny+2)+j+1]
                             + A[(i+1)*(ny+2)+j] + A[(i-1)*(ny+2)+j]);
    tmp = A; A = B; B = tmp;
  }
}
/* the row length in a local, the subscript in long */
void local_rows(float *A, float *B, int nx, int ny, int T) {
  int m = ny + 2;
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < nx + 1; i++)
      for (int j = 1; j < m - 1; j++)
        B[(long)i*m+j] = 0.25f*(A[(long)i*m+j-1] + A[(long)i*m+j+1] + A[(long)(i+1)*m+j]
                                + A[(long)(i-1)*m+j]);
    for (int i = 1; i < nx + 1; i++)
      for (int j = 1; j < m - 1; j++)
        A[(long)i*m+j] = B[(long)i*m+j];
  }
}
/* one index, the neighbour rows k + ny + 2 and k - ny - 2 */
void index_rows(double *u, double *v, int nx, int ny, double c, int T) {
  double *tmp;
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < nx + 1; i++)
      for (int j = 1; j < ny + 1; j++) {
        int k = i * (ny + 2) + j;
        u[k] = v[k] + c * (v[k + ny + 2] + v[k - ny - 2] + v[k + 1] + v[k - 1] - 4.0 * v[k]);
      }
    tmp = u; u = v; v = tmp;
  }
}
/* 3-D: planes of (ny + 2) * (nz + 2) */
void ghost_planes(double *A, double *B, int nx, int ny, int nz, int T) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < nx + 1; i++)
      for (int j = 1; j < ny + 1; j++)
        for (int k = 1; k < nz + 1; k++) {
          long p = ((long)i * (ny + 2) + j) * (nz + 2) + k;
          B[p] = 0.5 * A[p] + 0.125 * (A[p - 1] + A[p + 1] + A[p - (nz + 2)] + A[p + (nz + 2)])
               + 0.0625 * (A[p - (long)(ny + 2) * (nz + 2)] + A[p + (long)(ny + 2) * (nz + 2)]);
        }
    for (int i = 1; i < nx + 1; i++)
      for (int j = 1; j < ny + 1; j++)
        for (int k = 1; k < nz + 1; k++) {
          long p = ((long)i * (ny + 2) + j) * (nz + 2) + k;
          A[p] = 0.5 * B[p] + 0.125 * (B[p - 1] + B[p + 1] + B[p - (nz + 2)] + B[p + (nz + 2)])
               + 0.0625 * (B[p - (long)(ny + 2) * (nz + 2)] + B[p + (long)(ny + 2) * (nz + 2)]);
        }
  }
}
/* j < ny + 2: j + 1 reads the first cell of the next row (legal C, not a 2-D array) */
void past_the_row(double *A, double *B, int nx, int ny, int T) {
  double *tmp;
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < nx + 1; i++)
      for (int j = 1; j < ny + 2; j++)
        B[i*(ny+2)+j] = 0.5*(A[i*(ny+2)+j-1] + A[i*(ny+2)+j+1]);
    tmp = A; A = B; B = tmp;
  }
}
"""

HOST = host_target()


@pytest.fixture(scope="module")
def flat(kernel_file):
    sources = _split_functions(FLAT_C)
    return lambda name: kernel_file(name, sources[name])


#: (function, params, pipeline): odd and prime extents, one smaller than a tile, T = 0, 1, odd
TILED = [
    ("ghost_rows", {"nx": 13, "ny": 17, "T": 5}, "time-tile(4,5,7)"),
    ("ghost_rows", {"nx": 2, "ny": 3, "T": 1}, "time-tile(4,5,7)"),
    ("ghost_rows", {"nx": 29, "ny": 11, "T": 0}, "time-tile(4,5,7)"),
    ("local_rows", {"nx": 11, "ny": 13, "T": 3}, "time-tile(2,3,5)"),
    ("local_rows", {"nx": 1, "ny": 5, "T": 2}, "parallelogram-tile(3,7,2)"),
    ("index_rows", {"nx": 19, "ny": 7, "T": 9}, "time-tile(4,5,7)"),
    ("index_rows", {"nx": 3, "ny": 31, "T": 1}, "time-tile"),
    ("ghost_planes", {"nx": 7, "ny": 5, "nz": 9, "T": 3}, "time-tile(2,3,4,5)"),
]


@pytest.mark.parametrize(
    "function, params, passes",
    kernel_cases(TILED),
)
def test_flat_rows_are_time_tiled_bit_exact(flat, function, params, passes):
    params = dict(params, c=0.2) if function == "index_rows" else params
    result, remarks = check_tiled(flat(function), function, params, passes)
    assert_bit_exact(result, remarks, nonempty=params["T"] > 0)
    assert_transformed(remarks, "time-tiled")


def test_an_access_past_its_row_stays_outside_the_model(flat):
    result, remarks = check_tiled(
        flat("past_the_row"), "past_the_row", {"nx": 9, "ny": 7, "T": 3}, "time-tile(4,5,7)"
    )
    assert_bit_exact(result, remarks, nonempty=True)
    assert not any(m.startswith("time-tiled") for m in passed(remarks)), remarks
    assert any("subscript of A leaves its row" in m for m in missed(remarks)), remarks


#: heat-equation's `evolve` over its time steps (cschpc/heat-equation, the serial 2-D solver):
#: the grids in a struct, read into locals before the loops, swapped, and stored back
FIELD_KERNEL = r"""
typedef struct { int nx, ny; double dx, dy; double *data; } field;
void evolve_steps(field *curr, field *prev, double a, double dt, int nsteps) {
  double *currdata = curr->data, *prevdata = prev->data, *tmp;
  int nx = curr->nx, ny = curr->ny;
  double dx2 = prev->dx * prev->dx, dy2 = prev->dy * prev->dy;
  for (int t = 0; t < nsteps; t++) {
    for (int i = 1; i < nx + 1; i++)
      for (int j = 1; j < ny + 1; j++) {
        int ind = i * (ny + 2) + j;
        int ip = (i + 1) * (ny + 2) + j, im = (i - 1) * (ny + 2) + j;
        int jp = i * (ny + 2) + j + 1, jm = i * (ny + 2) + j - 1;
        currdata[ind] = prevdata[ind] + a * dt *
          ((prevdata[ip] - 2.0 * prevdata[ind] + prevdata[im]) / dx2 +
           (prevdata[jp] - 2.0 * prevdata[ind] + prevdata[jm]) / dy2);
      }
    tmp = currdata; currdata = prevdata; prevdata = tmp;
  }
  curr->data = currdata;
  prev->data = prevdata;
}
/* a row buffer on the stack beside the grid: a pointer loaded from memory may hold its
   address, which the overlap check of the tiled code would not see */
void smooth_rows(field *f, int T) {
  double *u = f->data, row[64];
  int n = f->ny + 2 < 64 ? f->ny + 2 : 64;
  for (int t = 0; t < T; t++) {
    for (int j = 0; j < n; j++) row[j] = u[j];
    for (int j = 1; j < n - 1; j++) u[j] = 0.5 * (row[j - 1] + row[j + 1]);
  }
}
"""
FIELD_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
typedef struct { int nx, ny; double dx, dy; double *data; } field;
void evolve_steps(field *curr, field *prev, double a, double dt, int nsteps);
void smooth_rows(field *f, int T);
int main(int argc, char **argv) {
  int nx = atoi(argv[1]), ny = atoi(argv[2]), T = atoi(argv[3]);
  int size = (nx + 2) * (ny + 2);
  field c = {nx, ny, 0.01, 0.01, malloc(sizeof(double) * size)};
  field p = {nx, ny, 0.01, 0.01, malloc(sizeof(double) * size)};
  for (int k = 0; k < size; k++) c.data[k] = p.data[k] = (double)(k % 97) * 0.25;
  evolve_steps(&c, &p, 0.5, 0.00002, T);
  smooth_rows(&p, T);
  double s = 0.0;
  for (int k = 0; k < size; k++) s = s * 1.0000001 + c.data[k] - 0.5 * p.data[k];
  printf("%a %d\n", s, c.data == p.data);
  return 0;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_grids_in_a_struct_are_time_tiled_by_the_default_policy(tmp_path):
    """-O3 with the default policy takes the kernel over because it is time-tiled; a small
    cache model makes the tiled code run at test sizes."""
    env, compiled = build_both(
        tmp_path, FIELD_MAIN, FIELD_KERNEL, ["-O3"], ["-O3"],
        dict(SMALL_CACHES, PYCC_TAKEOVER=""),
    )  # fmt: skip
    kernel = compiled["evolve_steps"]
    assert kernel["compiled_by"] == "pycc-stencil", kernel
    assert any("remark: time-tiled" in r for r in kernel["remarks"]), kernel
    kept = compiled["smooth_rows"]  # the report says why no pass transformed it
    assert kept["compiled_by"] == "cc" and "nothing to improve" in kept["reason"], kept
    assert any(
        "pointer loaded from memory or returned by a call beside a local array" in r
        for r in kept["remarks"]
    )
    runs = [(61, 47, 9), (60, 60, 8), (7, 3, 1), (1, 1, 3), (13, 11, 0)]
    assert_same_output(tmp_path, env, [[str(v) for v in run] for run in runs])


def test_a_pointer_loaded_beside_a_local_array_is_not_tiled(tmp_path):
    source = tmp_path / "field.c"
    source.write_text(FIELD_KERNEL)
    applied = run_passes(lower_file(str(source)).module, parse_pipeline("time-tile"), target=HOST)
    remarks = {r.function: [] for r in applied.remarks}
    for r in applied.remarks:
        remarks[r.function].append(r.message)
    assert any(m.startswith("time-tiled") for m in remarks["evolve_steps"]), remarks
    assert not any(m.startswith("time-tiled") for m in remarks["smooth_rows"]), remarks
    assert (
        "loop nest is not a SCoP: pointer loaded from memory or returned by a call beside a "
        "local array" in (remarks["smooth_rows"])
    ), remarks


def test_flat_rows_get_the_fpgas_line_buffers_bit_exact(flat):
    """The HLS back end reads the row length computed at each access (`(long)i*m + j`) as
    the SCoP does: line buffers of rows, and its C runs as the original does."""
    unit = compiled(flat("local_rows"), target="hls")
    assert unit.setup_error is None, unit.setup_error
    remarks = [r.message for r in unit.remarks if r.function == "local_rows"]
    assert any(m.startswith("tiled") and "for the FPGA" in m for m in remarks), remarks
    assert "local_rows" in unit.emitted.emitted.hls
    for params in ({"nx": "13", "ny": "11", "T": "3"}, {"nx": "1", "ny": "2", "T": "1"}):
        result = unit.check("local_rows", params)
        assert result.status == "OK" and result.message.startswith("bit-exact"), result


#: member reads in the loops (`i <= f->nx`): under C's effective-type rules a loop that
#: stores only doubles keeps them, so they are read once before it, when that cannot fault
MEMBERS_KERNEL = r"""
typedef struct { int nx, ny; double dx, dy; double *data; } field;
/* the bounds read through the struct at every test; the grid and its row before the loops */
void bounds_in_struct(field *f, double *v, int nsteps) {
  double *u = f->data;
  int m = f->ny + 2;
  for (int t = 0; t < nsteps; t++) {
    for (int i = 1; i <= f->nx; i++)
      for (int j = 1; j <= f->ny; j++)
        v[i * m + j] = 0.25 * (u[(i - 1) * m + j] + u[(i + 1) * m + j] + u[i * m + j - 1]
                               + u[i * m + j + 1]);
    double *w = u; u = v; v = w;
  }
  f->data = u;
}
/* f is not read before the loops: with no step, f may be NULL */
double sum_rows(field *f, int nsteps) {
  double s = 0.0;
  for (int t = 0; t < nsteps; t++)
    for (int i = 0; i < f->nx; i++)
      s += f->data[i] * (double)t;
  return s;
}
/* the bound is an int that the loop writes through an int pointer (p == &f->nx) */
void shrinking(field *f, int *p, double *v) {
  int n0 = f->nx;
  for (int i = 0; i < f->nx; i++) {
    v[i] = 2.0 * v[i];
    p[0] = n0 - 2 * i;
  }
}
"""
MEMBERS_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
typedef struct { int nx, ny; double dx, dy; double *data; } field;
void bounds_in_struct(field *f, double *v, int nsteps);
double sum_rows(field *f, int nsteps);
void shrinking(field *f, int *p, double *v);
int main(int argc, char **argv) {
  int nx = atoi(argv[1]), ny = atoi(argv[2]), T = atoi(argv[3]);
  int size = (nx + 2) * (ny + 2);
  field f = {nx, ny, 0.1, 0.1, malloc(sizeof(double) * size)};
  double *v = malloc(sizeof(double) * size);
  for (int k = 0; k < size; k++) f.data[k] = v[k] = (double)(k % 89) * 0.5;
  bounds_in_struct(&f, v, T);
  double s = 0.0;
  for (int k = 0; k < size; k++) s = s * 1.0000001 + f.data[k] - 0.5 * v[k];
  printf("%a %a %a\n", s, sum_rows(&f, T), sum_rows(NULL, 0));
  shrinking(&f, &f.nx, v);
  for (int k = 0; k < size; k++) s = s * 1.0000001 + v[k];
  printf("%a %d\n", s, f.nx);
  return 0;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_members_read_in_the_loops_are_read_once_where_that_is_safe(tmp_path):
    env, compiled = build_both(
        tmp_path, MEMBERS_MAIN, MEMBERS_KERNEL, ["-O3"], ["-O3"],
        dict(SMALL_CACHES, PYCC_TAKEOVER="all"),
    )  # fmt: skip
    tiled = compiled["bounds_in_struct"]
    assert any("remark: time-tiled" in r for r in tiled["remarks"]), tiled
    for name in ("sum_rows", "shrinking"):
        assert compiled[name]["compiled_by"] == "pycc-stencil", compiled[name]
    runs = [(61, 47, 9), (30, 30, 4), (7, 3, 1), (1, 1, 3), (13, 11, 0)]
    assert_same_output(tmp_path, env, [[str(v) for v in run] for run in runs])
