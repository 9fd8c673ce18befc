"""scripts/bench.py: the kernel table agrees with the C files, parallel code is recognised, and
a quick run of the issue-5 kernels checks every pycc-stencil library against gcc."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
sys.path.insert(0, str(SCRIPTS))
import bench  # noqa: E402  (scripts/ is not a package)

ISSUE5_KERNELS = ["heat-2d", "heat-2d-mod2", "jacobi-2d-mod2", "blur-sharpen-f32", "unsharp-f32"]


@pytest.mark.parametrize("kernel", bench.KERNELS, ids=lambda k: k.name)
def test_kernel_table_matches_its_source(kernel):
    """The function exists with one parameter per argument, the header comment states the
    model, and the size classes are known ones (the time loop's count is a parameter exactly
    for the iterated kernels)."""
    source = kernel.path.read_text()
    header = source.split("*/", 1)[0]
    assert "Stencil:" in header and "per call:" in header
    assert re.search(rf"Bytes/\w+ \([^)]*\):[^.]*?\b{kernel.bytes}\b", header), kernel.name
    assert re.search(rf"Per \w+( update)?: {kernel.flops} (flops|integer ops)", header)
    signature = re.search(rf"void {kernel.function}\(([^)]*)\)", source)
    assert signature, kernel.function
    assert signature.group(1).count(",") + 1 == len(kernel.args(kernel.sizes["small"]))
    assert set(kernel.sizes) <= set(bench.SIZE_CLASSES) and "small" in kernel.sizes
    steps = {"tsteps", "tmax"} & set(kernel.sizes["small"])
    assert kernel.iterated == bool(steps), kernel.name


def test_every_issue5_time_loop_has_a_tiling_size():
    iterated = {k.name for k in bench.KERNELS if k.iterated}
    tiling = {k.name for k in bench.KERNELS if "tiling" in k.sizes}
    assert iterated <= tiling
    assert {"heat-2d", "jacobi-2d-mod2", "blur-sharpen-f32"} <= tiling


KERNELS = {k.name: k for k in bench.KERNELS}


def test_the_in_cache_roof_is_the_tighter_of_arithmetic_and_loads():
    """Flops and loads per point over one core's rates, in the kernel's element type."""
    core = bench.CorePeak(gflops=30.0, gloads=20.0)
    assert core.roof(KERNELS["jacobi-2d"]) == pytest.approx(4.0)  # 5 loads: 20 / 5
    assert core.roof(KERNELS["heat-2d"]) == pytest.approx(3.0)  # 10 flops: 30 / 10
    assert core.roof(KERNELS["fdtd-2d"]) == pytest.approx(20 / 11)  # 11 loads per point
    assert core.roof(KERNELS["blur3x3-f32"]) == pytest.approx(2 * 20 / 9)  # floats: 2 per double
    assert core.roof(KERNELS["box3x3-u8"]) is None
    roofs = bench.Roofs(30.0, core)
    assert roofs.core_fraction(KERNELS["jacobi-2d"], 2.0, threads=2) == pytest.approx(0.25)
    assert bench.Roofs(30.0).core_fraction(KERNELS["jacobi-2d"], 2.0, 1) is None


@pytest.mark.skipif(not shutil.which("gcc"), reason="needs gcc")
def test_the_core_peak_is_measured(tmp_path):
    core = bench.measure_core_peak("gcc", tmp_path, reps=1)
    # any core of this century: between 0.5 and 2000 G of either per second
    assert 0.5 < core.gflops < 2000 and 0.5 < core.gloads < 2000


def _result(variant: str, threads: int, seconds: float, size: str = "large") -> bench.Result:
    label = "gcc" if variant == "gcc" else "pycc-stencil"
    return bench.Result("jacobi-2d", size, {}, variant, label, threads, "", points=10**9,
                        times=[seconds])  # fmt: skip


def test_the_summary_states_issue_19s_goals():
    """One thread against the kernel's goal and the in-cache roof, two against one."""
    results = [_result("gcc", 1, 1.0), _result("pycc", 1, 0.5), _result("pycc2", 2, 0.25)]
    roofs = bench.Roofs(30.0, bench.CorePeak(gflops=40.0, gloads=10.0))  # roof 2 GSt/s
    rows = bench.summary_rows(results, KERNELS, roofs)
    one, two = (dict(zip(bench.SUMMARY_COLUMNS, row, strict=True)) for row in rows)
    assert one["vs gcc"] == "2.00x" and one["core"] == "100%"
    assert one["goals"] == "4.5x gcc: no; 70% core: yes; not slower than gcc: yes"
    assert two["core"] == "100%"  # 4 GSt/s on two cores
    assert two["goals"] == "1.8x own 1T: yes; not slower than gcc: yes"
    # a cache-sized grid: only "not slower than gcc" (the goals are for DRAM-sized grids)
    small = [_result(v, t, s, size="small") for v, t, s in (("gcc", 1, 1.0), ("pycc2", 2, 0.9))]
    (row,) = bench.summary_rows(small, KERNELS, roofs)
    assert row[-1] == "not slower than gcc: yes"


PARALLEL = (
    "void GOMP_parallel(void (*)(void *), void *, unsigned, unsigned);\n"
    "void run(void (*f)(void *)) { GOMP_parallel(f, 0, 0, 0); }\n"
)
SERIAL = "void scale(int n, double *a) { for (int i = 0; i < n; i++) a[i] *= 2; }\n"


@pytest.mark.skipif(not shutil.which("gcc"), reason="needs gcc")
@pytest.mark.parametrize("source, parallel", [(PARALLEL, True), (SERIAL, False)])
def test_parallel_code_is_recognised(tmp_path, source, parallel):
    (tmp_path / "k.c").write_text(source)
    lib = tmp_path / "k.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", str(tmp_path / "k.c"), "-o", str(lib)],
                   check=True)  # fmt: skip
    assert bench.has_parallel_code(lib) == parallel


def test_pass_variants_per_pipeline_and_thread_count():
    vs = bench.pycc_pass_variants("pycc-stencil", ["time-tile", "tile(32,32)"], [1, 2])
    assert [v.key for v in vs] == ["pycc-tile", "pycc-tile2", "pycc-tile-b", "pycc-tile-b2"]
    assert {v.family for v in vs} == {"pycc-tile"}
    assert vs[3].command[-1] == "-fpycc-passes=tile(32,32)" and vs[3].threads == 2
    assert "OMP_NUM_THREADS=T" in vs[1].env_text() and vs[1].omp_runtime
    assert "-fpycc-parallel" in vs[1].command
    (flagged,) = bench.pycc_pass_variants("p", ["time-tile -mprefer-vector-width=256"], [1])
    assert flagged.command[-2:] == ["-fpycc-passes=time-tile", "-mprefer-vector-width=256"]
    assert flagged.label == "pycc-stencil time-tile -mprefer-vector-width=256"
    (spaced,) = bench.pycc_pass_variants("p", [" time-tile(64, 2048) -O2 "], [1])
    assert spaced.command[-2:] == ["-fpycc-passes=time-tile(64, 2048)", "-O2"]


@pytest.mark.sweep  # a run of the benchmark script: scripts/run_sweeps.sh (docs/testing.md)
@pytest.mark.skipif(not shutil.which("gcc"), reason="needs gcc")
def test_quick_run_of_the_issue5_kernels(tmp_path):
    """pycc-stencil (compiler mode) computes gcc's results on the new kernels; a pipeline this
    pycc-stencil cannot run shows as an unavailable variant, not as a crash; --max-call keeps
    slow variants to their checked call."""
    markdown = tmp_path / "bench.md"
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "bench.py"), "--quick", "--kernels",
         ",".join(ISSUE5_KERNELS), "--variants", "pycc,pycc-tile", "--pycc-passes",
         "no_such_pass", "--reps", "1", "--min-time", "0.001", "--max-call", "1e-9",
         "--plain", "--no-cache",
         "--markdown", str(markdown)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "unavailable: pycc-stencil: error: unknown pass 'no_such_pass'" in done.stdout
    rows = [line.split(" | ") for line in markdown.read_text().splitlines()]
    checks = {
        (r[0].lstrip("| "), r[3]): r[-1].rstrip(" |")
        for r in rows
        if len(r) > 10 and r[2] == "1" and r[3] in ("gcc", "pycc-stencil")
    }
    for kernel in ISSUE5_KERNELS:
        assert checks[(kernel, "gcc")] == "reference"
        # --max-call: gcc is always repeated, every other variant timed by its checked call
        assert checks[(kernel, "pycc-stencil")] in ("exact (1 call)", "=no-FMA (1 call)"), kernel
    assert "pycc-stencil against issue 19's goals" in markdown.read_text()
