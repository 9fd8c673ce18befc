"""The tiled code of the `-large` passes, run on small grids through compiler mode.

`-O3` runs `time-tile-large,fuse-tile-large`: their tiled code runs only when the nest's arrays
span at least half the last-level cache (else the original nest). `PYCC_CACHE_L2=16K` and
`PYCC_CACHE_L3=32K` make that threshold (and the tile sizes) small, so grids of a few tens of
points per side take the tiled branch.

One program (main.c: guarded arrays, deterministic data, an FNV hash of every array) holds
2-D jacobi in both forms (`%2` and two sweeps) and heat-3d, which get diamond tiles, and
seidel-2d, whose in-place sweep diamond tiles refuse, so it gets parallelogram tiles. It is
built once by `pycc-stencil -O3` (single-threaded tiles) and `-O3 -march=native -fopenmp`
(tiles on the OpenMP runtime) with the override and by `cc` with the same flags, then run for
every (kernel, n, T): n odd or prime, below and above the threshold, T = 0, 1, odd, more sweeps
than one tile is high. The outputs must be identical, the report must name the tile shape, and
in the OpenMP build a GOMP_parallel shim (LD_PRELOAD) tells whether the parallel loops ran,
which only tiled code has: for T > 0 they must run exactly when the arrays span at least
16 KiB. The serial build must reference no thread runtime at all. (The tiles of a wavefront in
reverse and shuffled orders are tests of the JIT: test_tiling.py.) `scripts/mutation_check.py`
shows these tests fail when tiling is broken. First, the override must reach compiler mode,
also past pycc-stencil's result cache.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from corpus.manifest import CORPUS_DIR
from pycc_stencil.dropin_cache import CODEGEN_ENVIRONMENT
from pycc_stencil.ir_passes.core.machine_model import CACHE_OVERRIDE
from pycc_stencil.ir_passes.tiling import IN_CACHE_MIN_BYTES
from pycc_stencil.polyhedral.codegen import POISON_SCRATCH
from test_compiler_mode import SMALL_CACHES
from test_tiling import PYCC, STENCILS_C, _split_functions, build_both

pytestmark = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")

L2 = 16 << 10
OVERRIDE = SMALL_CACHES

_STENCILS = _split_functions(STENCILS_C)
KERNELS_C = "\n".join(
    [
        _STENCILS["jacobi2d_mod2"],
        _STENCILS["jacobi2d_two"],
        Path(CORPUS_DIR, "polybench", "seidel_2d_vla.c").read_text(),
        Path(CORPUS_DIR, "polybench", "heat_3d_vla.c").read_text(),
    ]
)

MAIN_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jacobi2d_mod2(int T, int n, double A[2][n][n]);
void jacobi2d_two(int T, int n, double A[n][n], double B[n][n]);
void kernel_seidel_2d_vla(int tsteps, int n, double A[n][n]);
void kernel_heat_3d_vla(int tsteps, int n, double A[n][n][n], double B[n][n][n]);

enum { GUARD = 64 };

static double *guarded(size_t count, unsigned seed) {
  size_t bytes = count * sizeof(double);
  unsigned char *p = malloc(bytes + 2 * GUARD);
  if (!p) { perror("malloc"); exit(2); }
  memset(p, 0xA5, GUARD);
  memset(p + GUARD + bytes, 0xA5, GUARD);
  double *x = (double *)(p + GUARD);
  uint32_t s = 2463534242u ^ (seed * 2654435761u);
  for (size_t k = 0; k < count; k++) {
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    x[k] = (double)(s % 100003u) / 1024.0 - 40.0;
  }
  return x;
}

static void show(const char *name, const double *x, size_t count) {
  const unsigned char *p = (const unsigned char *)x, *guard = p - GUARD;
  size_t bytes = count * sizeof(double);
  uint64_t h = 1469598103934665603ull;
  for (size_t k = 0; k < bytes; k++) h = (h ^ p[k]) * 1099511628211ull;
  int intact = 1;
  for (size_t k = 0; k < GUARD; k++)
    intact &= guard[k] == 0xA5 && p[bytes + k] == 0xA5;
  printf("%s %016llx %s\n", name, (unsigned long long)h,
         intact ? "guards-intact" : "GUARDS-DAMAGED");
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: %s KERNEL n T\n", argv[0]); return 2; }
  const char *kernel = argv[1];
  int n = atoi(argv[2]), T = atoi(argv[3]);
  size_t plane = (size_t)n * n, cube = plane * n;
  if (!strcmp(kernel, "jacobi2d_mod2")) {
    double *A = guarded(2 * plane, 1);
    jacobi2d_mod2(T, n, (double (*)[n][n])A);
    show("A", A, 2 * plane);
  } else if (!strcmp(kernel, "jacobi2d_two")) {
    double *A = guarded(plane, 2), *B = guarded(plane, 3);
    jacobi2d_two(T, n, (double (*)[n])A, (double (*)[n])B);
    show("A", A, plane);
    show("B", B, plane);
  } else if (!strcmp(kernel, "kernel_seidel_2d_vla")) {
    double *A = guarded(plane, 4);
    kernel_seidel_2d_vla(T, n, (double (*)[n])A);
    show("A", A, plane);
  } else if (!strcmp(kernel, "kernel_heat_3d_vla")) {
    double *A = guarded(cube, 5), *B = guarded(cube, 6);
    kernel_heat_3d_vla(T, n, (double (*)[n][n])A, (double (*)[n][n])B);
    show("A", A, cube);
    show("B", B, cube);
  } else {
    fprintf(stderr, "unknown kernel %s\n", kernel);
    return 2;
  }
  return 0;
}
"""

#: LD_PRELOAD'ed into the OpenMP build of pycc-stencil's program: every parallel loop of tiled
#: code asks omp_get_max_threads for its team, and calls GOMP_parallel for a team of two or
#: more (polyhedral/parallel.py); nothing else in the program does either
SHIM_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>
typedef void parallel(void (*)(void *), void *, unsigned, unsigned);
void GOMP_parallel(void (*fn)(void *), void *data, unsigned threads, unsigned flags) {
  static int said;
  if (!said) said = write(2, "[GOMP_parallel]\n", 16);
  ((parallel *)dlsym(RTLD_NEXT, "GOMP_parallel"))(fn, data, threads, flags);
}
int omp_get_max_threads(void) {
  static int said;
  if (!said) said = write(2, "[parallel loop]\n", 16);
  return ((int (*)(void))dlsym(RTLD_NEXT, "omp_get_max_threads"))();
}
"""
#: the tiled code ran (a parallel loop, on a team of any size)
MARKER = "[parallel loop]"
#: the OpenMP runtime ran a team
TEAM_MARKER = "[GOMP_parallel]"

#: kernel -> (shape and sizes in its time-tile-large remark with a 16 KiB L2, bytes its
#: arrays span at extent n: the run-time check's measure, from the first to the last cell
#: accessed)
KERNELS = {
    "jacobi2d_mod2": ("with diamond tiles", "of 8x8x512,", lambda n: 2 * n * n * 8),
    "jacobi2d_two": ("with diamond tiles", "of 8x8x512,", lambda n: 2 * n * n * 8),
    "kernel_seidel_2d_vla": ("with parallelogram tiles", "of 64x16x1024,", lambda n: n * n * 8),
    "kernel_heat_3d_vla": ("with diamond tiles", "of 8x8x16x256,", lambda n: 2 * n**3 * 8),
}
#: in-place sweeps: their parallelogram tiles run their rows together, which pays at every
#: size (polyhedral/schedule/time_tile.py), so their tiled code runs below the threshold too,
#: from IN_CACHE_MIN_BYTES on (seidel-2d's n = 12 below it)
ANY_SIZE = {"kernel_seidel_2d_vla"}
#: (n, T): the first below the 16 KiB threshold (the original nest runs, except ANY_SIZE's),
#: the others above it; T = 0, 1, odd, more sweeps than a tile is high (diamonds: 8 sweeps;
#: parallelograms: 64)
CASES = {
    "jacobi2d_mod2": [(29, 5), (3, 2), (37, 0), (37, 1), (37, 5), (53, 13), (101, 9)],
    "jacobi2d_two": [(29, 5), (2, 1), (37, 0), (37, 1), (37, 5), (53, 13), (101, 9)],
    "kernel_seidel_2d_vla": [(43, 5), (2, 3), (12, 3), (47, 0), (47, 1), (61, 7), (67, 70)],
    "kernel_heat_3d_vla": [(9, 3), (3, 1), (11, 0), (11, 1), (17, 5), (23, 9)],
}
#: flags, and whether the tiles run on the OpenMP runtime (2 threads)
VARIANTS = {
    "O3": (["-O3"], False),
    "O3-native-openmp": (["-O3", "-march=native", "-fopenmp"], True),
}
THREADS = {"OMP_NUM_THREADS": "2"}
#: what a program whose tiled code is serial must not reference (`nm`)
RUNTIME_SYMBOL = re.compile(r"\b(GOMP_\w+|omp_\w+|__pycc_\w*(parallel|omp)\w*|pthread_create)\b")


def preload_library(folder: Path, source: str) -> str:
    """`source` built by cc into a library for LD_PRELOAD (it may call dlsym)."""
    (folder / "shim.c").write_text(source)
    library = folder / "shim.so"
    command = ["cc", "-O2", "-shared", "-fPIC", folder / "shim.c", "-o", library, "-ldl"]
    subprocess.run(command, check=True)
    return str(library)


@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> str:
    return preload_library(tmp_path_factory.mktemp("shim"), SHIM_C)


def test_the_drop_in_cache_key_has_every_codegen_variable():
    """Variables read while kernels are compiled change the code: a build with another value
    must not reuse a cached result (test_the_cache_l2_override_reaches_compiler_mode)."""
    assert set(CACHE_OVERRIDE.values()) | {POISON_SCRATCH} <= set(CODEGEN_ENVIRONMENT)


def _tile_sizes(function: dict) -> list[str]:
    return re.findall(r"time-tiled .* of ([0-9x]+), wave", "\n".join(function["remarks"]))


def test_the_cache_l2_override_reaches_compiler_mode(tmp_path):
    """`PYCC_CACHE_L2` changes the tiles of `-O3`, also when a result for the same file and
    flags without it is in pycc-stencil's cache."""
    main, kernel = "int main(void) { return 0; }\n", _STENCILS["jacobi2d_two"]
    sizes = []
    for extra in [{}, OVERRIDE]:  # the same source path and cache (tmp_path/cache)
        (tmp_path / "report.json").unlink(missing_ok=True)
        _, compiled = build_both(tmp_path, main, kernel, [], ["-O3"], pycc_env=extra)
        sizes.append(_tile_sizes(compiled["jacobi2d_two"]))
    assert sizes[0] != sizes[1] == ["8x8x512"], sizes


@pytest.mark.parametrize("variant", VARIANTS)
def test_o3_tiled_code_on_small_grids_matches_cc(tmp_path, shim, variant):
    flags, threads = VARIANTS[variant]
    env, compiled = build_both(tmp_path, MAIN_C, KERNELS_C, flags, flags, pycc_env=OVERRIDE)
    symbols = subprocess.run(["nm", tmp_path / "pycc"], capture_output=True, text=True).stdout
    assert (RUNTIME_SYMBOL.search(symbols) is not None) == threads, symbols
    for name, (shape, sizes, _) in KERNELS.items():
        function = compiled[name]
        assert function["compiled_by"] == "pycc-stencil", function
        (remark,) = [r for r in function["remarks"] if "[-Rpass=time-tile-large]" in r]
        assert "remark: time-tiled" in remark and shape in remark and sizes in remark, remark
        assert ("not diamond tiles" in remark) == ("parallelogram" in shape), remark
        assert ("the rows of a tile run together" in remark) == (name in ANY_SIZE), remark
    failures, runs = [], 0
    for name, cases in CASES.items():
        span = KERNELS[name][2]
        for n, steps in cases:
            args = [name, str(n), str(steps)]
            want = subprocess.run([tmp_path / "ref", *args], capture_output=True, text=True)
            assert want.returncode == 0 and "GUARDS-DAMAGED" not in want.stdout, want
            # T = 0 or no inner point (n <= 2): the tiled code may start, with no points to
            # run (seidel-2d's tile box)
            idle = steps == 0 or n <= 2
            least = IN_CACHE_MIN_BYTES if name in ANY_SIZE else L2
            tiled = None if idle or not threads else span(n) >= least
            runs += 1
            run_env = dict(env, LD_PRELOAD=shim, **THREADS) if threads else env
            got = subprocess.run(
                [tmp_path / "pycc", *args], capture_output=True, text=True, env=run_env
            )
            if got.returncode != 0 or got.stdout != want.stdout:
                failures.append(f"{args}: {got.stdout!r} {got.stderr[-300:]!r}")
            elif tiled is not None and (MARKER in got.stderr) != tiled:
                ran = "ran" if MARKER in got.stderr else "did not run"
                failures.append(f"{args}: the tiled code {ran} (span {span(n)})")
    assert not failures, f"{len(failures)} of {runs} runs: " + "\n".join(failures)
