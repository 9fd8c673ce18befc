"""Threads and cache sizes of compiler mode (issue 13 §3): what the flags say, never the host.

- Tiled code is single-threaded unless the flags ask for threads: `-fopenmp`,
  `-ftree-parallelize-loops=N`, `-fpycc-parallel`. Each is built, linked and run through
  `pycc-stencil` as a build system would, bit-exact against cc's build of the same flags;
  under OMP_NUM_THREADS=2 an LD_PRELOAD shim of `omp_get_num_threads` shows a team of two ran
  (only the generated chunk function asks, the test's main has no OpenMP code and nothing gcc
  auto-parallelizes), under OMP_NUM_THREADS=1 too with `-ftree-parallelize-loops=2` (gcc's
  teams of N); without those flags the program references no thread runtime.
- The reported crash: a `-O3 -shared` library whose tiled kernel ran on threads, dlopen'ed,
  called and dlclose'd 50 times in one process.
- `-O3` objects do not depend on the build machine's caches without `-march=native` (a fake
  sysfs), do with it, and follow `-fpycc-cache-size=` and gcc's `--param l2-cache-size=`,
  also past pycc-stencil's result cache; a bad size is cc-style error.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from pycc_stencil.dropin_command import parse_command, requested_passes
from pycc_stencil.dropin_unit import compile_kernels
from pycc_stencil.emit import cc_machine
from pycc_stencil.emit.cc_threads import LINK_OPENMP, wants_threads
from pycc_stencil.ir_passes import pipeline
from test_compiler_mode import clean_env
from test_large_tiles import OVERRIDE, RUNTIME_SYMBOL, THREADS, preload_library
from test_tiling import PYCC, STENCILS_C, _split_functions, build_both

pytestmark = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")

KERNEL_C = _split_functions(STENCILS_C)["jacobi2d_two"]

MAIN_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void jacobi2d_two(int T, int n, double A[n][n], double B[n][n]);
int main(int argc, char **argv) {
  int n = atoi(argv[1]), T = atoi(argv[2]);
  double *A = malloc(sizeof(double) * n * n), *B = malloc(sizeof(double) * n * n);
  unsigned s = 2463534242u;
  for (int k = 0; k < n * n; k++) {  /* a recurrence: nothing for gcc's autopar */
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    A[k] = (double)(s % 100003u) / 1024.0;
    B[k] = A[k] / 3.0;
  }
  jacobi2d_two(T, n, (double (*)[n])A, (double (*)[n])B);
  unsigned long long h = 1469598103934665603ull, bits;
  for (int k = 0; k < n * n; k++) {
    memcpy(&bits, &A[k], 8); h = (h ^ bits) * 1099511628211ull;
    memcpy(&bits, &B[k], 8); h = (h ^ bits) * 1099511628211ull;
  }
  printf("%016llx\n", h);
  return 0;
}
"""

#: a team of more than one thread asked the OpenMP runtime for its size
SHIM_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>
int omp_get_num_threads(void) {
  int n = ((int (*)(void))dlsym(RTLD_NEXT, "omp_get_num_threads"))();
  static int said;
  if (n > 1 && !said) said = write(2, "[team]\n", 7);
  return n;
}
"""
TEAM = "[team]"


@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> str:
    return preload_library(tmp_path_factory.mktemp("shim"), SHIM_C)


def _run(program: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([program, *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize(
    "asked",
    [[], ["-fopenmp"], ["-ftree-parallelize-loops=2"], ["-fpycc-parallel"]],
    ids=["none", "fopenmp", "ftree-parallelize-loops", "fpycc-parallel"],
)
def test_threads_only_when_the_flags_ask(tmp_path, shim, asked):
    flags = ["-O3", *asked]
    cc_flags = [f for f in flags if f != "-fpycc-parallel"]
    env, compiled = build_both(tmp_path, MAIN_C, KERNEL_C, cc_flags, flags, pycc_env=OVERRIDE)
    function = compiled["jacobi2d_two"]
    assert function["compiled_by"] == "pycc-stencil", function
    assert any("remark: time-tiled" in r for r in function["remarks"]), function
    # the runtime's helpers the tiled code calls are ours: no remark names them
    assert not any("__pycc_" in r for r in function["remarks"]), function["remarks"]
    run_env = dict(env, LD_PRELOAD=shim, **THREADS)
    for args in (["101", "9"], ["37", "5"], ["29", "1"], ["7", "3"]):
        want, got = (_run(tmp_path / name, args, run_env) for name in ("ref", "pycc"))
        assert want.returncode == got.returncode == 0, got.stderr
        assert got.stdout == want.stdout, args
        assert TEAM not in want.stderr  # the premise: nothing else runs a team
        if args[0] == "101":
            assert (TEAM in got.stderr) == bool(asked), got.stderr
            # gcc's auto-parallelized loops run on N threads whatever OMP_NUM_THREADS says
            one = _run(tmp_path / "pycc", args, dict(run_env, OMP_NUM_THREADS="1"))
            assert one.stdout == want.stdout
            assert (TEAM in one.stderr) == (asked == ["-ftree-parallelize-loops=2"]), one.stderr
    symbols = subprocess.run(["nm", tmp_path / "pycc"], capture_output=True, text=True).stdout
    assert (RUNTIME_SYMBOL.search(symbols) is not None) == bool(asked)
    program = (tmp_path / "pycc").read_bytes()  # the JIT's pool and its test hook never ship
    assert b"__pycc_parallel_for" not in program and b"PYCC_PARALLEL_ORDER" not in program
    if asked == ["-fpycc-parallel"]:
        _link_objects_with_fpycc_parallel(tmp_path, env, shim)


def _link_objects_with_fpycc_parallel(tmp_path: Path, env: dict[str, str], shim: str) -> None:
    """`-fpycc-parallel` on a link of objects (no C input: cc runs it) adds libgomp; plain
    cc links the same objects (weak references) into a serial program. kernels.o is a hit in
    pycc-stencil's cache: the build just compiled kernels.c with these flags."""
    env = dict(env, **OVERRIDE)
    subprocess.run([PYCC, "-O3", "-fpycc-parallel", "-c", "kernels.c"], cwd=tmp_path, env=env)
    subprocess.run(["cc", "-O3", "-c", "main.c"], cwd=tmp_path, check=True)
    link = [PYCC, "-fpycc-parallel", "main.o", "kernels.o", "-o", "program"]
    subprocess.run(link, cwd=tmp_path, env=env, check=True)
    subprocess.run(["cc", "main.o", "kernels.o", "-o", "serial"], cwd=tmp_path, check=True)
    run_env = dict(env, LD_PRELOAD=shim, **THREADS)
    threaded, serial = (_run(tmp_path / p, ["101", "9"], run_env) for p in ("program", "serial"))
    assert threaded.stdout == serial.stdout and threaded.returncode == serial.returncode == 0
    assert TEAM in threaded.stderr and TEAM not in serial.stderr


@pytest.mark.parametrize(
    "args, threads",
    [
        ([], False),
        (["-fopenmp"], True),
        (["-fopenmp", "-fno-openmp"], False),
        (["-fno-openmp", "-fopenmp"], True),
        (["-fopenmp-simd"], False),
        (["-ftree-parallelize-loops=1"], False),
        (["-ftree-parallelize-loops=4", "-ftree-parallelize-loops=1"], False),
        (["-ftree-parallelize-loops=3"], True),
        (["-fpycc-parallel"], True),
    ],
)
def test_which_flags_ask_for_threads(args, threads):
    command = parse_command(["-O3", *args, "-c", "k.c"])
    assert wants_threads(command.args, command.pycc_options) == threads
    link = parse_command(["-O3", *args, "k.o", "-o", "k"])
    assert (link.args[-3:] == list(LINK_OPENMP)) == threads  # libgomp, whatever --as-needed
    assert "-fpycc-parallel" not in command.args + link.args  # cc never sees it


HOST_C = r"""
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef void kernel(int, int, double *, double *);
int main(int argc, char **argv) {
  int n = 61, T = 9;
  double *A = malloc(sizeof(double) * n * n), *B = malloc(sizeof(double) * n * n);
  unsigned long long h = 1469598103934665603ull, bits;
  for (int round = 0; round < 50; round++) {
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    kernel *k = (kernel *)dlsym(library, "jacobi2d_two");
    for (int i = 0; i < n * n; i++) { A[i] = (i * 7919 % 1000) / 100.0 + round; B[i] = 0; }
    k(T, n, A, B);
    for (int i = 0; i < n * n; i++) { memcpy(&bits, &A[i], 8); h = (h ^ bits) * 1099511628211ull; }
    if (dlclose(library)) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  }
  printf("%016llx\n", h);
  int threads = 0;  /* the process's threads now: the OpenMP runtime's stay, idle */
  DIR *tasks = opendir("/proc/self/task");
  for (struct dirent *e; tasks && (e = readdir(tasks));) threads += e->d_name[0] != '.';
  fprintf(stderr, "threads=%d\n", threads);
  return 0;
}
"""


def test_a_threaded_shared_library_survives_50_dlopen_dlclose(tmp_path):
    """The reported crash: the private pool's threads outlived the library's code. The
    OpenMP runtime's threads stay in the runtime, which the generated code pins, so they
    are still there after the last dlclose (the proof that a team ran)."""
    (tmp_path / "kernels.c").write_text(KERNEL_C)
    (tmp_path / "host.c").write_text(HOST_C)
    env = clean_env(tmp_path / "cache", **OVERRIDE)
    env["PYCC_REPORT"] = str(tmp_path / "report.json")
    flags = ["-O3", "-shared", "-fPIC", "-fopenmp", "kernels.c", "-o"]
    subprocess.run([PYCC, *flags, "libpycc.so"], cwd=tmp_path, env=env, check=True)
    subprocess.run(["cc", *flags, "libcc.so"], cwd=tmp_path, check=True)
    subprocess.run(["cc", "host.c", "-o", "host", "-ldl"], cwd=tmp_path, check=True)
    report = [json.loads(line) for line in (tmp_path / "report.json").read_text().splitlines()]
    (function,) = [f for unit in report for f in unit["functions"]]
    assert any("remark: time-tiled" in r for r in function["remarks"]), function
    want = _run(tmp_path / "host", [str(tmp_path / "libcc.so")], dict(env, **THREADS))
    assert want.returncode == 0 and want.stderr == "threads=1\n", want
    for _ in range(3):
        got = _run(tmp_path / "host", [str(tmp_path / "libpycc.so")], dict(env, **THREADS))
        assert got.returncode == 0 and got.stdout == want.stdout, got
        assert got.stderr == "threads=2\n", got


# ------------------------------------------------------------------ the cache model
def _fake_sysfs(folder: Path, l2_bytes: int, l3: tuple[str, str | None] | None = None) -> Path:
    """A /sys/devices/system/cpu/cpu0/cache with a 32 KiB L1d, an `l2_bytes` L2 and, with
    `l3` = (size, shared_cpu_list or None), an L3."""
    caches = [(1, "Data", "32K", "0"), (1, "Instruction", "32K", "0")]
    caches.append((2, "Unified", f"{l2_bytes >> 10}K", "0"))
    if l3 is not None:
        caches.append((3, "Unified", *l3))
    for index, (level, kind, size, sharing) in enumerate(caches):
        entry = folder / f"index{index}"
        entry.mkdir(parents=True, exist_ok=True)
        (entry / "level").write_text(f"{level}\n")
        (entry / "type").write_text(f"{kind}\n")
        (entry / "size").write_text(f"{size}\n")
        if sharing is not None:
            (entry / "shared_cpu_list").write_text(f"{sharing}\n")
    return folder


@pytest.fixture
def pycc_part(tmp_path, monkeypatch):
    """`compile(args, l2_bytes)`: pycc-stencil's object for kernels.c compiled with `args` on
    a machine whose sysfs reports an `l2_bytes` L2, and the kernel's remarks."""
    for name in OVERRIDE:
        monkeypatch.delenv(name, raising=False)
    source = tmp_path / "kernels.c"
    source.write_text(KERNEL_C)

    def compile(args: list[str], l2_bytes: int) -> tuple[bytes, list[str]]:
        monkeypatch.setattr(
            cc_machine, "_SYSFS", _fake_sysfs(tmp_path / f"sys{l2_bytes}", l2_bytes)
        )
        cc_machine.sysfs_cache_bytes.cache_clear()
        command = parse_command([*args, "-c", str(source)])
        flags = command.compile_flags()
        unit = tmp_path / "kernels.i"  # the preprocessed unit the driver lowers
        subprocess.run(["cc", *flags, "-E", str(source), "-o", str(unit)], check=True)
        try:
            result = compile_kernels(
                "cc", command, flags, str(source), str(unit), "object", requested_passes(command)
            )
        finally:
            cc_machine.sysfs_cache_bytes.cache_clear()
        (function,) = [f for f in result.functions if f.name == "jacobi2d_two"]
        assert result.pycc_output and function.compiled_by == "pycc-stencil", result
        return result.pycc_output, function.remarks

    return compile


def _tiles(remarks: list[str]) -> list[str]:
    return re.findall(r"time-tiled .* of ([0-9x]+), wave", "\n".join(remarks))


def test_o3_objects_do_not_depend_on_the_build_machine(pycc_part):
    small, remarks = pycc_part(["-O3"], 64 << 10)
    large, _ = pycc_part(["-O3"], 8 << 20)
    assert small == large and _tiles(remarks)  # (a flag changes them: the tests below)


def test_the_compile_leaves_verifying_to_the_object(pycc_part, monkeypatch):
    """No LLVM verification after each pass unless PYCC_VERIFY_PASSES asks: the object's
    compile verifies the module (it was 5 % of a stencil's compile)."""
    calls = []
    monkeypatch.setattr(pipeline, "_verify", lambda module, name: calls.append(name))
    monkeypatch.delenv("PYCC_VERIFY_PASSES")
    pycc_part(["-O3"], 8 << 20)
    assert calls == []
    monkeypatch.setenv("PYCC_VERIFY_PASSES", "1")
    pycc_part(["-O3"], 8 << 20)
    assert "time-tile-large" in calls


def test_the_cache_model_of_the_flags(tmp_path, monkeypatch):
    """gcc's -mtune=generic model by default; the host's caches only under -march=native or
    -mtune=native; gcc's --param (KiB) and -fpycc-cache-size over both, the last one winning."""
    monkeypatch.setattr(cc_machine, "_SYSFS", _fake_sysfs(tmp_path, 8 << 20))
    cc_machine.sysfs_cache_bytes.cache_clear()
    try:
        default = {1: 32 << 10, 2: 512 << 10, 3: 8 << 20}
        assert cc_machine.cache_model(["-O3", "-march=x86-64-v3"], {}) == default
        for native in ("-march=native", "-mtune=native"):
            assert cc_machine.cache_model(["-O3", native], {})[2] == 8 << 20
        params = ["-march=native", "--param", "l2-cache-size=64", "--param=l1-cache-size=16"]
        model = cc_machine.cache_model(params, {})
        assert (model[1], model[2]) == (16 << 10, 64 << 10)
        later = cc_machine.cache_model([*params, "--param=l2-cache-size=128"], {})
        assert later[2] == 128 << 10
        ours = cc_machine.cache_model(params, {"cache-size": "1M"})
        assert ours[2] == 1 << 20
    finally:
        cc_machine.sysfs_cache_bytes.cache_clear()


@pytest.mark.parametrize(
    "l3, counted",
    [
        (("307200K", "0-1"), 32 << 20),  # a 2-vCPU guest told of its host socket's L3
        (("307200K", "0-63,128-191"), 300 << 20),
        (("32768K", "0"), 16 << 20),
        (("307200K", None), 300 << 20),  # no sharing reported: the size as it is
        (("307200K", ""), 300 << 20),  # nor a list
        (("307200K", "x"), 300 << 20),
    ],
)
def test_a_shared_cache_counts_16_mib_per_cpu_sharing_it(tmp_path, monkeypatch, l3, counted):
    monkeypatch.setattr(cc_machine, "_SYSFS", _fake_sysfs(tmp_path, 2 << 20, l3))
    cc_machine.sysfs_cache_bytes.cache_clear()
    try:
        assert cc_machine.cache_model(["-O3", "-march=native"], {})[3] == counted
        assert cc_machine.cache_model(["-O3", "-march=native"], {})[2] == 2 << 20
    finally:
        cc_machine.sysfs_cache_bytes.cache_clear()


def test_the_cache_size_flag_reaches_compiler_mode_past_its_cache(tmp_path):
    """The same file and cache, with and without -fpycc-cache-size: other tiles."""
    (tmp_path / "kernels.c").write_text(KERNEL_C)
    report = tmp_path / "report.json"
    env = clean_env(tmp_path / "cache", PYCC_REPORT=str(report))
    sizes = []
    for extra in ([], ["-fpycc-cache-size=16K"]):
        report.unlink(missing_ok=True)
        command = [PYCC, "-O3", *extra, "-c", "kernels.c"]
        subprocess.run(command, cwd=tmp_path, env=env, check=True)
        (unit,) = [json.loads(line) for line in report.read_text().splitlines()]
        sizes.append(_tiles(unit["functions"][0]["remarks"]))
    assert unit["cache"] == "miss" and sizes[0] != sizes[1] == ["8x8x512"], sizes


@pytest.mark.parametrize("value", ["lots", "0", "-4K", ""])
def test_a_bad_cache_size_is_an_error(tmp_path, value):
    (tmp_path / "kernels.c").write_text(KERNEL_C)
    command = [PYCC, "-O3", f"-fpycc-cache-size={value}", "-c", "kernels.c", "-o", "kernels.o"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1 and not (tmp_path / "kernels.o").exists()
    assert done.stderr == (
        f"pycc-stencil: error: '-fpycc-cache-size={value}' is not a size (bytes, or 512K, 1M)\n"
    )
