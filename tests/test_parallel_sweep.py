"""`parallel-sweep` and `parallel-sweep-large` (ir_passes/tiling.py,
polyhedral/schedule/parallel_sweep.py): the outer loop of each nest that carries no dependence
runs on the team, its points in their original order.

Checked here: bit-exact against cc through the JIT (whose pool runs the loop in reverse, in
shuffled orders and on two threads: a hidden dependence would change the result) for a 2-D
sweep (odd, prime and degenerate sizes), a 1-D triad, a 3-D star and a three-nest pipeline
(rows of 62 and 46 floats among them: shorter than LLVM's unrolled vector loop), each with
the pool's loop in the IR and its rows bound by SIMD binding; the refusals (a time loop, a
reduction into an array, a build without threads, a fixed-size nest below the minimum); and
compiler mode, where a program built with `-fpycc-parallel` runs the sweep on a team of two
above `PARALLEL_MIN_BYTES` only, with cc's output.
"""

from __future__ import annotations

import subprocess

import pytest
from corpus_check import check, compiled, kernel_group
from llvmlite import ir
from pycc_stencil.dropin_prescan import has_locality_nest, unexpanded_may_have_locality_nest
from pycc_stencil.emit.targets.host import HostX86
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.machine_model import SERIAL
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from pycc_stencil.ir_passes.tiling import PARALLEL_MIN_BYTES
from test_large_tiles import SHIM_C, TEAM_MARKER, preload_library
from test_tiling import ORDERS, PYCC, assert_same_output, build_both, in_order

KERNELS_C = r"""
void laplace(int n, int m, const double in[n][m], double out[n][m]) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      out[i][j] = 0.5 * in[i][j] + 0.125 * (in[i - 1][j] + in[i + 1][j] + in[i][j - 1]
                                             + in[i][j + 1]);
}

void triad(int n, double s, const double *b, const double *c, double *a) {
  for (int i = 0; i < n; i++)
    a[i] = b[i] + s * c[i];
}

void star3d(int n, const float in[n][n][n], float out[n][n][n]) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      for (int k = 1; k < n - 1; k++)
        out[i][j][k] = 0.25f * in[i][j][k] + 0.125f * (in[i - 1][j][k] + in[i + 1][j][k]
                       + in[i][j - 1][k] + in[i][j + 1][k] + in[i][j][k - 1] + in[i][j][k + 1]);
}

void pipeline(int h, int w, const float in[h][w], float bx[h][w], float out[h][w]) {
  for (int y = 0; y < h; y++)
    for (int x = 1; x < w - 1; x++)
      bx[y][x] = (in[y][x - 1] + in[y][x] + in[y][x + 1]) * (1.0f / 3.0f);
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      out[y][x] = (bx[y - 1][x] + bx[y][x] + bx[y + 1][x]) * (1.0f / 3.0f);
}

void heat(int T, int n, double A[n][n], double B[n][n]) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = B[i][j];
  }
}

void column_sums(int n, int m, const double a[n][m], double s[m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      s[j] += a[i][j];
}

void scale_then_sum(int n, int m, const double a[n][m], double b[n][m], double s[m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      b[i][j] = 2.0 * a[i][j];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      s[j] += b[i][j];
}

void small_fixed(double out[64][64], const double in[64][64]) {
  for (int i = 1; i < 63; i++)
    for (int j = 0; j < 64; j++)
      out[i][j] = in[i - 1][j] + in[i + 1][j];
}
"""

#: (function, parameter sets, nests the pass runs in parallel): odd and prime sizes, a grid
#: of no interior, a loop that runs once
CASES = [
    ("laplace", [{"n": 23, "m": 37}, {"n": 3, "m": 41}, {"n": 2, "m": 2}, {"n": 97, "m": 5}], 1),
    ("triad", [{"n": 101}, {"n": 1}, {"n": 0}], 1),
    ("star3d", [{"n": 11}, {"n": 4}], 1),
    ("pipeline", [{"h": 19, "w": 29}, {"h": 3, "w": 7}, {"h": 7, "w": 64}, {"h": 5, "w": 48}], 2),
]
GROUP = kernel_group("parallel_sweep")


@pytest.fixture
def kernels(kernel_file) -> str:
    return kernel_file("parallel_sweep", KERNELS_C)


def _passed(remarks) -> list[str]:
    return [r.message for r in remarks if r.kind == "passed"]


def _missed(remarks) -> list[str]:
    return [r.message for r in remarks if r.kind == "missed"]


@GROUP
@pytest.mark.parametrize("env", ORDERS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
@pytest.mark.parametrize("function, sets, nests", CASES, ids=[c[0] for c in CASES])
def test_sweeps_in_any_order_and_on_two_threads_are_bit_exact(
    kernels, monkeypatch, env, function, sets, nests
):
    in_order(monkeypatch, env)
    for params in sets:
        result, remarks = check(kernels, function, params, "parallel-sweep", ["-std=c99"])
        assert result.status == "OK", result
        done = _passed(remarks)
        parallel = [m for m in done if "runs in parallel" in m]
        bound = [m for m in done if m.startswith("loop vectorized by SIMD binding")]
        assert len(parallel) == len(bound) == nests and len(done) == 2 * nests, remarks
        # (the nest's own check proved the arrays apart: no row checks them again)
        assert not any("overlap check" in m for m in bound), bound
    module = compiled(kernels, ["-std=c99"], "parallel-sweep").module
    outlined = [f.name for f in module.functions if f.name.startswith(f"{function}.par")]
    assert len(outlined) == nests, outlined  # each nest's loop goes to the pool


@GROUP
@pytest.mark.parametrize(
    "function, params, reason",
    [
        ("heat", {"T": 3, "n": 13}, "carries a dependence"),
        ("column_sums", {"n": 31, "m": 7}, "carries a dependence"),
    ],
)
def test_nests_whose_outer_loop_carries_a_dependence_are_refused(kernels, function, params, reason):
    result, remarks = check(kernels, function, params, "parallel-sweep", ["-std=c99"])
    assert result.status == "OK", result
    assert not _passed(remarks) and any(reason in m for m in _missed(remarks)), remarks


@GROUP
def test_a_fixed_nest_below_the_minimum_is_refused_by_the_large_form(kernels):
    assert 2 * 64 * 64 * 8 < PARALLEL_MIN_BYTES  # the premise
    result, remarks = check(kernels, "small_fixed", {}, "parallel-sweep-large", ["-std=c99"])
    assert result.status == "OK", result
    assert not _passed(remarks), remarks
    assert any("less than the parallel code's minimum" in m for m in _missed(remarks)), remarks
    result, remarks = check(kernels, "small_fixed", {}, "parallel-sweep", ["-std=c99"])
    assert result.status == "OK" and _passed(remarks), remarks


def test_without_threads_nothing_changes(kernel_file):
    path = kernel_file("parallel_sweep", KERNELS_C)
    module = lower_file(path, ["-std=c99"]).module
    before = str(module)
    target = HostX86(parallel_runtime=SERIAL)
    result = run_passes(module, parse_pipeline("parallel-sweep"), target=target)
    assert str(result.module) == before
    (remark,) = result.remarks
    assert remark.kind == "missed" and "the build runs no threads" in remark.message


PROGRAM_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void laplace(int n, int m, const double in[n][m], double out[n][m]);
int main(int argc, char **argv) {
  int n = atoi(argv[1]), m = atoi(argv[2]);
  double *in = malloc(sizeof(double) * (n * m + 64));
  /* a third argument: out is in shifted by that many elements (C allows the overlap) */
  double *out = argc > 3 ? in + atoi(argv[3]) : malloc(sizeof(double) * n * m);
  unsigned s = 2463534242u;
  for (int k = 0; k < n * m + 64; k++) {  /* a recurrence: nothing for gcc's autopar */
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    in[k] = (double)(s % 100003u) / 1024.0;
  }
  for (int k = 0; argc <= 3 && k < n * m; k++)
    out[k] = -1.0;
  laplace(n, m, (const double (*)[m])in, (double (*)[m])out);
  unsigned long long h = 1469598103934665603ull, bits;
  for (int k = 0; k < n * m; k++) {
    memcpy(&bits, &out[k], 8); h = (h ^ bits) * 1099511628211ull;
  }
  printf("%016llx\n", h);
  return 0;
}
"""


LAPLACE_C = KERNELS_C[: KERNELS_C.index("void triad")]
#: the default policy: only the functions a pass improves are taken over
IMPROVED = {"PYCC_TAKEOVER": "improved"}


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
@pytest.mark.parametrize(
    "flags",
    [["-O3", "-fpycc-parallel", "-fpycc-passes=parallel-sweep-large"], ["-O3", "-fopenmp"]],
    ids=["the pass", "-O3 -fopenmp"],
)
def test_compiler_mode_runs_a_large_sweep_on_two_threads_with_ccs_output(tmp_path, flags):
    cc_flags = [f for f in flags if not f.startswith("-fpycc")]
    env, compiled_functions = build_both(
        tmp_path, PROGRAM_MAIN, LAPLACE_C, cc_flags, flags, pycc_env=IMPROVED
    )
    function = compiled_functions["laplace"]
    assert function["compiled_by"] == "pycc-stencil", function
    assert any("runs in parallel" in r for r in function["remarks"]), function
    shim = preload_library(tmp_path, SHIM_C)
    large = 2 * 8 * 401 * 333 > PARALLEL_MIN_BYTES
    assert large and 2 * 8 * 37 * 23 < PARALLEL_MIN_BYTES  # the premises
    runs = [(["401", "333"], "2", True), (["37", "23"], "2", False), (["2", "9"], "2", False)]
    runs.append((["401", "333"], "1", False))  # a team of one: no call of the runtime
    runs.append((["401", "333", "3"], "2", False))  # overlapping: the nest's check fails
    for args, threads, team in runs:
        run_env = dict(env, LD_PRELOAD=shim, OMP_NUM_THREADS=threads)
        want, got = (
            subprocess.run([tmp_path / name, *args], capture_output=True, text=True, env=run_env)
            for name in ("ref", "pycc")
        )
        assert want.returncode == got.returncode == 0, got.stderr
        assert got.stdout == want.stdout, args
        assert (TEAM_MARKER in got.stderr) == team, (args, got.stderr)


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_without_threads_o3_leaves_a_single_sweep_to_cc_unparsed(tmp_path):
    env, functions = build_both(tmp_path, PROGRAM_MAIN, LAPLACE_C, ["-O3"], ["-O3"], IMPROVED)
    assert not functions, functions  # the unit went to cc before its functions were parsed
    assert_same_output(tmp_path, env, [["41", "29"]])


@pytest.mark.parametrize("sweeps", [False, True])
def test_the_prescan_counts_single_sweeps_only_under_threads(sweeps):
    assert has_locality_nest(LAPLACE_C.encode(), sweeps) == sweeps
    assert unexpanded_may_have_locality_nest(LAPLACE_C.encode(), frozenset(), sweeps) == sweeps
    reads_only = b"double f(int n, const double *a) { double s = 0; "
    reads_only += b"for (int i = 0; i < n; i++) s += a[i]; return s; }"
    assert not has_locality_nest(reads_only, sweeps)


@GROUP
def test_the_large_form_takes_a_function_whole_or_not_at_all(kernels):
    """A function with a nest that is no sweep (a column sum) stays as it is under `-O3`'s
    `parallel-sweep-large`: taking it over would compile the sum too (PolyBench's correlation
    ran at 0.55x gcc so); `parallel-sweep` still runs its sweep in parallel."""
    params = {"n": 29, "m": 31}
    result, remarks = check(kernels, "scale_then_sum", params, "parallel-sweep", ["-std=c99"])
    parallel = [m for m in _passed(remarks) if "runs in parallel" in m]
    assert result.status == "OK" and len(parallel) == 1, remarks
    large = "parallel-sweep-large"
    result, remarks = check(kernels, "scale_then_sum", params, large, ["-std=c99"])
    assert result.status == "OK" and not _passed(remarks), remarks
    whole = "the function has loop nests this pass does not change"
    assert any(whole in m for m in _missed(remarks)), remarks


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
@pytest.mark.parametrize("name", ["parallel-sweep", "stream-sweep-large"])
def test_sizes_for_the_pass_are_a_diagnostic_and_no_output(tmp_path, name):
    (tmp_path / "k.c").write_text(LAPLACE_C)
    out = tmp_path / "k.o"
    command = [PYCC, "-O3", f"-fpycc-passes={name}(3)", "-c", "k.c", "-o", str(out)]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1 and not out.exists(), done
    assert f"error: pass {name} takes 0 argument(s), 1 given" in done.stderr


def test_a_fused_pipelines_code_stays_reachable_after_the_parallel_sweep(kernel_file, monkeypatch):
    """Under threads `-O3` runs `parallel-sweep-large` after `fuse-tile-large`: the sweep's
    code must take the fused code's fallback edge, not the check that chooses the fused code
    (which the sweep's check replaced until 2026-11-29: the fused tiles never ran)."""
    monkeypatch.setenv("PYCC_CACHE_L2", "16K")
    monkeypatch.setenv("PYCC_CACHE_L3", "32K")
    module = lower_file(kernel_file("parallel_sweep", KERNELS_C), ["-std=c99"]).module
    passes = parse_pipeline("fuse-tile-large,parallel-sweep-large")
    result = run_passes(module, passes, target=HostX86())
    done = [r.message for r in result.remarks if r.function == "pipeline" and r.kind == "passed"]
    assert sum("fused" in m for m in done) == 1 and sum("runs in parallel" in m for m in done) == 2
    function = result.module.get_global("pipeline")
    reached, work = set(), [function.entry_basic_block]
    while work:
        block = work.pop()
        if block not in reached:
            reached.add(block)
            work += [o for o in block.terminator.operands if isinstance(o, ir.Block)]
    starts = [b for b in function.blocks if b.name.startswith("poly.start")]
    assert len(starts) == 2 and all(b in reached for b in starts), [b.name for b in reached]
