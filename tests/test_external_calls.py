"""Calls of functions another object defines (the C library's, another file's).

Legacy stencil code times its loops (`clock_gettime`, `printf` of the elapsed time) in the
function that runs them, and calls helpers of other files between steps. Such calls are
lowered as opaque calls with the platform's calling convention (default argument promotions
for `...`, structs in registers or memory), so the nests around them can still be tiled; a
call inside a nest keeps it out of the model, and nothing is assumed unchanged across one.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from llvmlite import ir
from pycc_stencil.cli import main
from pycc_stencil.frontend import lower_file
from pycc_stencil.runtime.check import CheckOptions, check_file
from test_compiler_mode import SMALL_CACHES
from test_frontend import lower_source
from test_tiling import PYCC, assert_same_output, build_both

#: other-file helpers: a timer, a step's perturbation of the grid, a bound that changes
HELPERS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
struct pt { double x, y; };
int limit;
double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
void perturb(double *u, int n, int t) { u[n + 1] += 0.5 * t; }
void shrink(void) { limit -= 3; }
double norm1(struct pt p) { return (p.x < 0 ? -p.x : p.x) + (p.y < 0 ? -p.y : p.y); }
struct pt halve(struct pt p) { p.x /= 2; p.y /= 2; return p; }
"""

MAIN = (
    r"""
#define _POSIX_C_SOURCE 200809L  /* clock_gettime under -std=c99 */
#include <stdio.h>
#include <stdlib.h>
void timed(int n, int T, double *u, double *v);
void perturbed(int n, int T, double *u, double *v);
void bounded(int n, int T, double *u);
void scalars(int n, double *u);
extern int limit;
int main(int argc, char **argv) {
  int n = atoi(argv[1]), T = atoi(argv[2]);
  double *u = malloc(sizeof(double) * n * n), *v = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; i++) u[i] = v[i] = (i % 17) * 0.25;
  limit = n - 1;  /* bounded's rows: shrink() takes 3 off between its loops */
  timed(n, T, u, v);
  perturbed(n, T, u, v);
  bounded(n, T, u);
  scalars(n, u);
  double s = 0;
  for (int i = 0; i < n * n; i++) s = s * 1.0000001 + u[i] * (i % 7) - v[i];
  printf("%a\n", s);
  return 0;
}
"""
    + HELPERS
)

#: `{U}` and `{V}`: one sweep of the 5-point average from U into V
SWEEP = (
    "for (int i = 1; i < n - 1; i++) for (int j = 1; j < n - 1; j++)\n"
    "  {V}[i * n + j] = 0.2 * ({U}[i * n + j] + {U}[(i - 1) * n + j] + {U}[(i + 1) * n + j]"
    " + {U}[i * n + j - 1] + {U}[i * n + j + 1]);\n"
)
STEP = SWEEP.format(U="u", V="v") + SWEEP.format(U="v", V="u")

KERNELS = (
    r"""
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
struct pt { double x, y; };
extern int limit;
double seconds(void);
void perturb(double *u, int n, int t);
void shrink(void);
double norm1(struct pt p);
struct pt halve(struct pt p);

void timed(int n, int T, double *u, double *v) {
  double start = seconds();
  for (int t = 0; t < T; t++) {
"""
    + STEP
    + r"""  }
  double elapsed = seconds() - start;
  float f = 1.5f;
  char c = 'x';
  unsigned char uc = 200;
  short s = -7;
  _Bool b = elapsed >= 0;
  printf("%d steps %s %g %c %d %d %d %ld\n", T, elapsed >= 0 ? "ok" : "bad", f, c, uc, s,
         b, (long)n * n);
}

/* a step's grid is changed by another file's code: no time tiles across the call */
void perturbed(int n, int T, double *u, double *v) {
  for (int t = 0; t < T; t++) {
"""
    + STEP
    + r"""    perturb(u, n, t);
  }
}

/* a global bound that another file's call changes between the sweeps */
void bounded(int n, int T, double *u) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < limit; i++) u[i] = 0.5 * (u[i - 1] + u[i + 1]);
    shrink();
  }
  for (int i = 1; i < limit; i++) u[i] += 1;
  shrink();
  for (int i = 1; i < limit; i++) u[i] *= 2;
  int sum = 0;
  for (int i = 1; i < n - 1; i++) {
    sum += limit;
    shrink();
  }
  u[0] += sum;
}

/* structs by value both ways, errno, a library call's result used as a bound */
void scalars(int n, double *u) {
  struct pt p = {-1.5, 2.25};
  struct pt h = halve(p);
  errno = 0;
  long parsed = strtol("99999999999999999999", 0, 10);
  int overflowed = errno == ERANGE;
  div_t d = div(n, 3);
  for (int i = 0; i < d.quot; i++) u[i] += norm1(h) + overflowed + (parsed > 0);
  printf("%d %d %g\n", d.quot, d.rem, norm1(p));
}
"""
)

RUNS = [["37", "5"], ["101", "7"], ["2", "1"], ["5", "0"], ["13", "3"]]


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
@pytest.mark.parametrize("takeover", ["", "all"])
def test_a_timed_time_loop_is_tiled_and_the_calls_behave_as_cc_built(tmp_path, takeover):
    env, compiled = build_both(
        tmp_path, MAIN, KERNELS, ["-O3"], ["-O3"], dict(SMALL_CACHES, PYCC_TAKEOVER=takeover)
    )
    timed = compiled["timed"]
    assert timed["compiled_by"] == "pycc-stencil", timed
    assert any("remark: time-tiled" in r for r in timed["remarks"]), timed
    for name in ("perturbed", "bounded"):
        assert not any("remark: time-tiled" in r for r in compiled[name]["remarks"]), name
    if takeover:
        for name in ("perturbed", "bounded", "scalars"):
            assert compiled[name]["compiled_by"] == "pycc-stencil", compiled[name]
    assert_same_output(tmp_path, env, RUNS)


def test_calls_the_front_end_cannot_make_name_the_construct(tmp_path):
    lowered = lower_source(
        tmp_path,
        "#include <stdio.h>\nstruct pt { double x, y; };\nvoid log_value();\n"
        'void pass(struct pt p) { printf("%f", p); }\n'
        "void old(int n) { log_value(n); }\n"
        'void ok(double x) { printf("%f", x); }\n',
    )
    reasons = {s.name: s.reason for s in lowered.skipped}
    assert "a struct or vector passed to a '...' parameter" in reasons["pass"], reasons
    assert "'log_value' declared without a prototype" in reasons["old"], reasons
    assert list(lowered.functions) == ["ok"]


def test_check_skips_only_the_functions_calling_another_files_code(tmp_path, capsys):
    """The check runs the file alone: a function calling another file's helper is skipped,
    naming it, and the rest of the file is still checked (printf is the process's)."""
    path = tmp_path / "k.c"
    path.write_text(
        "#include <stdio.h>\nvoid log_row(int i);\n"
        "void logged(int n, double *a) {\n"
        "  for (int i = 1; i < n; i++) { a[i] += a[i - 1]; log_row(i); }\n}\n"
        "void printed(int n, double *a) {\n"
        "  for (int i = 1; i < n; i++) a[i] += a[i - 1];\n"
        '  printf("%d %.3f\\n", n, a[n - 1]);\n}\n'
    )
    main(["check", str(path), "--param", "n=19"])
    out = capsys.readouterr().out
    assert re.search(r"SKIPPED logged: .*calls 'log_row', which another object defines", out), out
    assert "OK printed: bit-exact" in out, out


ORDER_MAIN = r"""
#include <stdio.h>
void shown(double *out, int n);
int main(void) {
  double out[6];
  shown(out, 6);
  for (int i = 0; i < 6; i++) printf("%f ", out[i]);
  printf("\n");
  return 0;
}
"""

ORDER_KERNELS = r"""
#include <math.h>
#include <stdio.h>
int g;
static int bump(int *n) { *n += 3; return *n; }
static int setg(int v) { g = v; return v; }
static int two(int a, int b) { return a * 10 + b; }
static int f3(int a, int b, int c) { return a * 100 + b * 10 + c; }
static long long fl(long long a, long long b) { return a * 10 + b; }
static long fp(const int *a, void *b) { return (long)(b != (void *)a); }
void shown(double *out, int n) {
  static const double table[] = {0.0 / 0.0, 1.0 / 0.0, -1.0 / 0.0};  /* folded by gcc: nan */
  int k = 0, m = 5, p = 1, *q = &m;
  long L = 7;
  short s = 1;
  for (int i = 0; i < n; i++) out[i] = i;
  printf("%d %d %d\n", bump(&k), k, f3(k++, k++, k++));  /* k lives in memory */
  printf("%d %d %d %d\n", two(p, p++), two(p++, p), f3(p, p++, ++p), two(s, s++));
  printf("%d %d %d\n", two(m, m = 9), f3(m += 1, m, m *= 2), two(g, setg(4)));
  printf("%lld %ld %d %d %d\n", fl(L++, L), fp(q++, q), two(p++, p + 0), two(p++, (int)p),
         two(p++, +p));
  printf("%f %f %f\n", table[0], table[1], table[2]);
  out[0] = 0.0 / 0.0;                              /* the legacy NaN: cc computes it */
  out[1] = (double)INFINITY - (double)INFINITY;
  out[2] = 0.0f / 0.0f;
  out[3] = -(0.0 / 0.0);
  out[4] = 0.0 * INFINITY;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_arguments_run_last_to_first_and_invalid_constants_make_the_machines_nan(tmp_path):
    """gcc on x86-64 evaluates a call's arguments last to first (C leaves it open), but a
    variable it keeps in a register, passed as it is or assigned by the argument, is read by
    the call; and it leaves `0.0 / 0.0` to run time, where SSE makes a NaN with its sign bit
    set (`-nan`)."""
    env, compiled = build_both(
        tmp_path, ORDER_MAIN, ORDER_KERNELS, ["-O3", "-w"], ["-O3", "-w"], {"PYCC_TAKEOVER": "all"}
    )
    assert compiled["shown"]["compiled_by"] == "pycc-stencil", compiled["shown"]
    assert_same_output(tmp_path, env, [[]])
    done = subprocess.run([tmp_path / "ref"], capture_output=True, text=True)
    assert "-nan" in done.stdout, done.stdout  # (what the test compares)


def test_check_compares_what_a_function_prints(tmp_path, capfd):
    """A kernel that prints is compared on its output too (stdout and stderr, C's stdio
    flushed): a JIT module whose message differs from the reference's is a MISMATCH. What
    its other runs print (the footprint's dry run) never reaches the check's output."""
    path = tmp_path / "k.c"
    path.write_text(
        "#include <stdio.h>\n"
        "void said(double *a, int n) {\n"
        "  for (int i = 1; i < n; i++) a[i] += a[i - 1];\n"
        '  printf("sum %.3f\\n", a[n - 1]);\n  fprintf(stderr, "n %d\\n", n);\n}\n'
    )
    options = CheckOptions(params={"n": "13"}, extents={"a": 13})
    (result,) = check_file(path, [], options)
    assert result.status == "OK", result

    def misspelled(source: str, cflags: list[str]):
        lowered = lower_file(source, cflags)
        text = next(g for g in lowered.module.global_values if g.name.startswith(".str"))
        text.initializer = ir.Constant(text.value_type, bytearray(b"SUM %.3f\n\0"))
        return lowered

    (result,) = check_file(path, [], options, lower=misspelled)
    assert result.status == "MISMATCH", result
    assert "printed b'SUM" in result.message and "to stdout (line 1)" in result.message, result
    sized = tmp_path / "sized.c"  # (its buffer sized by a dry run: no stream is passed)
    sized.write_text(path.read_text().replace('  fprintf(stderr, "n %d\\n", n);\n', ""))
    capfd.readouterr()
    assert main(["check", str(sized), "--param", "n=13"]) == 0
    out, _ = capfd.readouterr()
    assert out.startswith("OK said:") and "sum" not in out, out


def test_the_front_end_loads_numpy_only_to_fold_an_invalid_constant():
    """A cold compile in compiler mode imports the front end; numpy would cost it ~0.1 s."""
    code = "import sys, pycc_stencil.frontend; assert 'numpy' not in sys.modules, 'numpy'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
