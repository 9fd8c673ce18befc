#!/usr/bin/env python3
"""Benchmark pycc-stencil's compiler mode against gcc, clang, Polly and Graphite.

Builds the kernel corpus in scripts/bench_kernels/ as shared libraries (-shared -fPIC) with
every available compiler variant, loads them all into this one process with ctypes, checks
that every variant computes what `gcc -O3` computes, runs the variants round-robin (the order
rotates every repetition) and prints, per kernel, size, thread count and variant: the median
time of N repetitions, GStencil/s, GFLOP/s (the flop count per point the kernel's source
states), the achieved GB/s (compulsory traffic per the kernel's bytes/point model), the
fraction of the machine's memory bandwidth (a STREAM-like triad measured in the same run) and
the speed ratio to `gcc -O3`.

    python scripts/bench.py [--kernels jacobi-2d,heat-3d] [--sizes small,large] [--reps N]
                            [--threads 1,2] [--plot out.png] [--quick]

Only numpy is required; `rich` (tables) and `matplotlib` (--plot) are used when installed.
See docs/benchmarks.md for the method and a first table.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import math
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from machine import cpu_name  # scripts/ is on sys.path when a script runs

try:
    import numpy as np
except ImportError:  # pragma: no cover
    sys.exit(
        "bench.py needs numpy: run it with the project's venv (.venv/bin/python scripts/bench.py)"
    )

HERE = Path(__file__).resolve().parent
KERNEL_DIR = HERE / "bench_kernels"
REPO = HERE.parent
OPT = ["-O3", "-march=native"]
#: pycc-stencil's own flags: under gcc's default contraction (GNU C, FMA) compiler mode leaves
#: a kernel whose fusions it cannot reproduce bit for bit to cc (README, "Floating-point
#: contraction"), so its variants are built without contraction, to time its own code; their
#: check is then "=no-FMA" (bit-identical to gcc -ffp-contract=off)
PYCC_OPT = [*OPT, "-ffp-contract=off"]
SHARED = ["-shared", "-fPIC"]
TRIAD_N = 1 << 24  # 3 arrays x 128 MiB: 4x beyond any L3 this is likely to meet
SIZE_CLASSES = {
    "small": "cache-resident (PolyBench MEDIUM shapes, ~1 MB working set)",
    "l3": "last-level-cache sized (PolyBench LARGE shapes, 27-32 MB)",
    "large": "DRAM-sized (PolyBench EXTRALARGE shapes, 100-260 MB)",
    "tiling": "DRAM-sized, many time steps (issue 5: 64-270 MB; time-iterated stencils and "
    "multi-stage pipelines only)",
}
DRAM_SIZES = {"large", "tiling"}  # the classes whose working sets are well beyond the L3
DEFAULT_PYCC_PASSES = "time-tile"


# --------------------------------------------------------------------------------------------
# The kernel corpus


@dataclass(frozen=True)
class Array:
    name: str
    shape: tuple[int, ...]
    dtype: str
    written: bool = True


@dataclass(frozen=True)
class Kernel:
    name: str
    source: str  # a file in bench_kernels/, or an absolute path
    function: str
    elem: str  # element type, for the table
    stencil_points: int
    flops: int  # per point update, as the source writes them (integer ops for integer kernels)
    bytes: int  # per point update: compulsory traffic, each sweep streams its arrays once
    points_doc: str
    sizes: dict[str, dict[str, int]]
    args: Callable[[dict[str, int]], list]  # scalar ints and Array specs, in call order
    points: Callable[[dict[str, int]], int]
    integer: bool = False
    # a time loop sweeps the grid again and again: only temporal tiling can beat the DRAM
    # roofline on a grid beyond the caches (the roofline counts every sweep's own traffic)
    iterated: bool = False
    loads: int = 0  # per point update, for the in-cache roof (default: one per stencil point)
    # issue 19's goal on DRAM-sized grids: one thread this many times faster than gcc -O3,
    # and (2-D time-iterated stencils) this fraction of the in-cache roof
    goal: float = 1.3
    core_goal: float = 0.0

    @property
    def loads_per_point(self) -> int:
        return self.loads or self.stencil_points

    @property
    def path(self) -> Path:
        return KERNEL_DIR / self.source


def _k(name, source, elem, pts, flops, nbytes, points_doc, sizes, args, points, **flags):
    """A Kernel from a table row; `flags`: integer, iterated, loads, goal, core_goal."""
    return Kernel(
        name=name,
        source=source,
        function="kernel_" + source.removesuffix(".c"),
        elem=elem,
        stencil_points=pts,
        flops=flops,
        bytes=nbytes,
        points_doc=points_doc,
        sizes=sizes,
        args=args,
        points=points,
        **flags,
    )


D, F, U8 = "float64", "float32", "uint8"


def _grids2(p):
    """Two n x n double grids A and B: the two-sweep forms."""
    return [p["tsteps"], p["n"], Array("A", (p["n"],) * 2, D), Array("B", (p["n"],) * 2, D)]


def _cubes2(p):
    """Two n x n x n double grids A and B: the two-sweep 3-D forms."""
    return [p["tsteps"], p["n"], Array("A", (p["n"],) * 3, D), Array("B", (p["n"],) * 3, D)]


def _planes2(p):
    """One double A[2][n][n]: the two time planes of a `%2` form."""
    return [p["tsteps"], p["n"], Array("A", (2, p["n"], p["n"]), D)]


def _images(*written: str):
    """Float h x w images after the h, w parameters: the input, then the written ones."""
    return lambda p: (
        [p["h"], p["w"], Array("in", (p["h"], p["w"]), F, written=False)]
        + [Array(name, (p["h"], p["w"]), F) for name in written]
    )


KERNELS = [
    _k(
        "jacobi-1d", "jacobi_1d.c", "double", 3, 3, 16, "2*tsteps*(n-2)",
        {"small": dict(n=400, tsteps=1000), "l3": dict(n=2_000_000, tsteps=2),
         "large": dict(n=8_000_000, tsteps=1), "tiling": dict(n=4_000_000, tsteps=50)},
        lambda p: [p["tsteps"], p["n"], Array("A", (p["n"],), D), Array("B", (p["n"],), D)],
        lambda p: 2 * p["tsteps"] * (p["n"] - 2),
        iterated=True, goal=2.0,
    ),
    _k(
        "jacobi-2d", "jacobi_2d.c", "double", 5, 5, 16, "2*tsteps*(n-2)^2",
        {"small": dict(n=250, tsteps=20), "l3": dict(n=1300, tsteps=2),
         "large": dict(n=2800, tsteps=2), "tiling": dict(n=2800, tsteps=50)},
        _grids2,
        lambda p: 2 * p["tsteps"] * (p["n"] - 2) ** 2,
        iterated=True, goal=4.5, core_goal=0.7,
    ),
    _k(
        "jacobi-2d-mod2", "jacobi_2d_mod2.c", "double", 5, 5, 16, "tsteps*(n-2)^2",
        {"small": dict(n=250, tsteps=40), "l3": dict(n=1300, tsteps=4),
         "large": dict(n=2800, tsteps=4), "tiling": dict(n=2800, tsteps=100)},
        _planes2,
        lambda p: p["tsteps"] * (p["n"] - 2) ** 2,
        iterated=True, goal=4.5, core_goal=0.7,
    ),
    _k(
        "heat-2d", "heat_2d.c", "double", 5, 10, 16, "2*tsteps*(n-2)^2",
        {"small": dict(n=250, tsteps=20), "l3": dict(n=1300, tsteps=2),
         "large": dict(n=2800, tsteps=2), "tiling": dict(n=2600, tsteps=32)},
        _grids2,
        lambda p: 2 * p["tsteps"] * (p["n"] - 2) ** 2,
        iterated=True, goal=4.5, core_goal=0.7,
    ),
    _k(
        "heat-2d-mod2", "heat_2d_mod2.c", "double", 5, 10, 16, "tsteps*(n-2)^2",
        {"small": dict(n=250, tsteps=40), "l3": dict(n=1300, tsteps=4),
         "large": dict(n=2800, tsteps=4), "tiling": dict(n=2600, tsteps=64)},
        _planes2,
        lambda p: p["tsteps"] * (p["n"] - 2) ** 2,
        iterated=True, goal=4.5, core_goal=0.7,
    ),
    _k(
        "heat-2d-legacy", "heat_2d_legacy.c", "double", 5, 10, 16, "tsteps*(n-2)^2",
        {"small": dict(n=250, tsteps=40), "l3": dict(n=1300, tsteps=4),
         "large": dict(n=2800, tsteps=4), "tiling": dict(n=2600, tsteps=64)},
        _grids2,
        lambda p: p["tsteps"] * (p["n"] - 2) ** 2,
        iterated=True, goal=4.5, core_goal=0.7,
    ),
    _k(
        "heat-3d", "heat_3d.c", "double", 7, 15, 16, "2*tsteps*(n-2)^3",
        {"small": dict(n=40, tsteps=20), "l3": dict(n=120, tsteps=2),
         "large": dict(n=200, tsteps=1), "tiling": dict(n=200, tsteps=20)},
        _cubes2,
        lambda p: 2 * p["tsteps"] * (p["n"] - 2) ** 3,
        iterated=True, goal=3.0,
    ),
    _k(
        "fdtd-2d", "fdtd_2d.c", "double", 9, 11, 80, "tmax*nx*ny",
        {"small": dict(nx=200, ny=240, tmax=20), "l3": dict(nx=1000, ny=1200, tmax=2),
         "large": dict(nx=2000, ny=2600, tmax=2), "tiling": dict(nx=2000, ny=2600, tmax=40)},
        lambda p: [p["tmax"], p["nx"], p["ny"], Array("ex", (p["nx"], p["ny"]), D),
                   Array("ey", (p["nx"], p["ny"]), D), Array("hz", (p["nx"], p["ny"]), D),
                   Array("_fict_", (p["tmax"],), D, written=False)],
        lambda p: p["tmax"] * p["nx"] * p["ny"],
        iterated=True, goal=2.5, loads=11,
    ),
    _k(
        "seidel-2d", "seidel_2d.c", "double", 9, 9, 16, "tsteps*(n-2)^2",
        {"small": dict(n=400, tsteps=10), "l3": dict(n=2000, tsteps=1),
         "large": dict(n=4000, tsteps=1), "tiling": dict(n=4000, tsteps=8)},
        lambda p: [p["tsteps"], p["n"], Array("A", (p["n"],) * 2, D)],
        lambda p: p["tsteps"] * (p["n"] - 2) ** 2,
        iterated=True, goal=1.5,
    ),
    _k(
        "star-3d", "star_3d.c", "double", 7, 8, 16, "tsteps*(n-2)^3",
        {"small": dict(n=40, tsteps=40), "l3": dict(n=120, tsteps=4),
         "large": dict(n=200, tsteps=2), "tiling": dict(n=256, tsteps=8)},
        lambda p: [p["tsteps"], p["n"], Array("A", (2,) + (p["n"],) * 3, D)],
        lambda p: p["tsteps"] * (p["n"] - 2) ** 3,
        iterated=True, goal=3.0,
    ),
    _k(
        "box-3d27", "box_3d27.c", "double", 27, 27, 16, "2*tsteps*(n-2)^3",
        {"small": dict(n=40, tsteps=10), "l3": dict(n=120, tsteps=1),
         "large": dict(n=200, tsteps=1), "tiling": dict(n=200, tsteps=10)},
        _cubes2,
        lambda p: 2 * p["tsteps"] * (p["n"] - 2) ** 3,
        iterated=True, goal=3.0,
    ),
    _k(
        "laplace-2d", "laplace_2d.c", "double", 5, 6, 16, "(n-2)*(m-2), one sweep",
        {"small": dict(n=256, m=256), "l3": dict(n=1300, m=1300),
         "large": dict(n=4000, m=4000)},
        lambda p: [p["n"], p["m"], Array("in", (p["n"], p["m"]), D, written=False),
                   Array("out", (p["n"], p["m"]), D)],
        lambda p: (p["n"] - 2) * (p["m"] - 2),
    ),
    _k(
        "blur3x3-f32", "blur3x3_f32.c", "float", 9, 9, 8, "(h-2)*(w-2), one sweep",
        {"small": dict(h=320, w=320), "l3": dict(h=2048, w=2048),
         "large": dict(h=4096, w=4096)},
        _images("out"),
        lambda p: (p["h"] - 2) * (p["w"] - 2),
    ),
    _k(
        "gauss5x5-f32", "gauss5x5_f32.c", "float", 25, 50, 8, "(h-4)*(w-4), one sweep",
        {"small": dict(h=320, w=320), "l3": dict(h=2048, w=2048),
         "large": dict(h=4096, w=4096)},
        _images("out"),
        lambda p: (p["h"] - 4) * (p["w"] - 4),
    ),
    _k(
        "box3x3-u8", "box3x3_u8.c", "uint8", 9, 10, 2, "(h-2)*(w-2), one sweep",
        {"small": dict(h=640, w=640), "l3": dict(h=4096, w=4096),
         "large": dict(h=8192, w=8192)},
        lambda p: [p["h"], p["w"], Array("in", (p["h"], p["w"]), U8, written=False),
                   Array("out", (p["h"], p["w"]), U8)],
        lambda p: (p["h"] - 2) * (p["w"] - 2),
        integer=True,
    ),
    _k(
        "blur-sharpen-f32", "blur_sharpen_f32.c", "float", 11, 11, 24,
        "(h-4)*(w-4), three stages",
        {"small": dict(h=320, w=320), "l3": dict(h=1024, w=1024),
         "large": dict(h=4096, w=4096), "tiling": dict(h=4096, w=4096)},
        _images("bx", "by", "out"),
        lambda p: (p["h"] - 4) * (p["w"] - 4),
    ),
    _k(
        "unsharp-f32", "unsharp_f32.c", "float", 12, 23, 44, "(h-4)*(w-4), four stages",
        {"small": dict(h=320, w=320), "l3": dict(h=1024, w=1024),
         "large": dict(h=3072, w=3072), "tiling": dict(h=3072, w=3072)},
        _images("blurx", "blury", "sharpen", "out"),
        lambda p: (p["h"] - 4) * (p["w"] - 4),
    ),
]  # fmt: skip


# --------------------------------------------------------------------------------------------
# Compiler variants


@dataclass
class Variant:
    key: str
    label: str
    command: list[str]  # compiler and flags, before -shared -fPIC SRC -o OUT
    threads: int = 1
    link: list[str] = field(default_factory=list)
    pycc: bool = False
    omp_runtime: bool = False  # thread count set with omp_set_num_threads before each call
    # the thread count is a run-time knob of this pycc-stencil variant: built with
    # -fpycc-parallel, its tiles run on the OpenMP runtime (omp_runtime), one build for every
    # thread count
    pycc_threads: bool = False
    reference_only: bool = False  # built and checked against, never timed
    unavailable: str | None = None
    family: str = ""  # what --variants names it by (default: the key without its thread count)

    def __post_init__(self) -> None:
        self.family = self.family or re.sub(r"\d+$", "", self.key)

    @property
    def parallel(self) -> bool:
        return self.threads > 1

    def flags_text(self) -> str:
        return " ".join([Path(self.command[0]).name, *self.command[1:], *self.link])

    def env_text(self) -> str:
        """The environment the build and the calls run in, as a command-line prefix."""
        if not self.pycc:
            return ""
        threads = "OMP_NUM_THREADS=T " if self.pycc_threads else ""
        return f"PYCC_CC={os.environ.get('PYCC_CC', 'gcc')} {threads}"


def run(cmd, env=None, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def compiler_version(cc: str) -> str:
    try:
        return first_line(run([cc, "--version"], timeout=30).stdout)
    except (OSError, subprocess.SubprocessError):
        return "?"


def clang_major(path: str) -> int:
    m = re.search(r"clang version (\d+)", compiler_version(path))
    return int(m.group(1)) if m else 0


def find_clangs() -> list[tuple[int, str]]:
    """Every `clang` / `clang-NN` on PATH, newest first, one per real binary."""
    seen, found = set(), []
    for d in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            if not re.fullmatch(r"clang(-\d+)?", name):
                continue
            path = os.path.join(d, name)
            real = os.path.realpath(path)
            if real in seen or not os.access(path, os.X_OK):
                continue
            seen.add(real)
            major = clang_major(path)
            if major:
                found.append((major, path))
    return sorted(found, reverse=True)


def install_clang() -> bool:
    """apt-get install the newest clang-NN (14..19) Debian offers; root only."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("apt-get"):
        print("--install-compilers: needs root and apt-get", file=sys.stderr)
        return False
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    print("installing clang with apt-get (this takes a minute) ...", file=sys.stderr)
    run(["apt-get", "update", "-qq"], env=env, timeout=600)
    for major in range(19, 13, -1):
        policy = run(["apt-cache", "policy", f"clang-{major}"], env=env, timeout=60).stdout
        m = re.search(r"Candidate:\s*(\S+)", policy)
        if m and m.group(1) != "(none)":
            r = run(["apt-get", "install", "-y", "-qq", f"clang-{major}"], env=env, timeout=1800)
            if r.returncode == 0:
                print(f"installed clang-{major}", file=sys.stderr)
                return True
            print(first_line(r.stderr), file=sys.stderr)
    return False


def default_pycc() -> str | None:
    beside = Path(sys.executable).parent / "pycc-stencil"
    if beside.exists():
        return str(beside)
    return shutil.which("pycc-stencil")


def make_variants(args, gcc: str, clang: str | None, pycc: str | None) -> list[Variant]:
    vs = [
        Variant("gcc", "gcc", [gcc, *OPT]),
        Variant("gcc-nofma", "gcc -ffp-contract=off", [gcc, *OPT, "-ffp-contract=off"],
                reference_only=True),
        Variant("graphite", "gcc+graphite", [gcc, *OPT, "-floop-nest-optimize"]),
    ]  # fmt: skip
    if clang:
        vs += [
            Variant("clang", "clang", [clang, *OPT]),
            Variant("polly", "clang+polly", [clang, *OPT, "-mllvm", "-polly"]),
        ]
    if pycc:
        vs.append(Variant("pycc", "pycc-stencil", [pycc, *PYCC_OPT], pycc=True))
        vs += pycc_pass_variants(pycc, args.pycc_passes, args.threads)
    for t in args.threads:
        if t == 1:
            continue
        vs += [
            Variant(f"autopar{t}", "gcc autopar", [gcc, *OPT, f"-ftree-parallelize-loops={t}"],
                    threads=t),
            Variant(f"graphite-par{t}", "gcc+graphite autopar",
                    [gcc, *OPT, "-floop-nest-optimize", "-floop-parallelize-all",
                     f"-ftree-parallelize-loops={t}"], threads=t),
        ]  # fmt: skip
        if clang:
            polly_par = [clang, *OPT, "-mllvm", "-polly", "-mllvm", "-polly-parallel",
                         "-mllvm", f"-polly-num-threads={t}"]  # fmt: skip
            # Polly declines parallel loops it finds unprofitable (heat-3d, the `%2` forms):
            # -polly-parallel-force parallelizes every parallel loop it proves.
            vs += [
                Variant(f"polly-par{t}", "clang+polly parallel", polly_par, threads=t,
                        link=["-lgomp"]),
                Variant(f"polly-force{t}", "clang+polly parallel forced",
                        [*polly_par, "-mllvm", "-polly-parallel-force"], threads=t,
                        link=["-lgomp"]),
            ]  # fmt: skip
        vs.append(
            Variant(f"omp{t}", "gcc OpenMP", [gcc, *OPT, "-fopenmp"], threads=t,
                    omp_runtime=True)
        )  # fmt: skip
    if args.variants:
        keep = set(args.variants) | {"gcc", "gcc-nofma"}
        vs = [v for v in vs if v.key in keep or v.family in keep]
    return vs


def pycc_pass_variants(pycc: str, pipelines: list[str], threads: list[int]) -> list[Variant]:
    """pycc-stencil with `-fpycc-passes=PIPELINE`, per pipeline and thread count: family
    `pycc-tile`, keys pycc-tile, pycc-tile2 for the first pipeline, then pycc-tile-b, ...
    A pipeline may be followed by flags (`PIPELINE -mprefer-vector-width=256`), added to its
    build. A pipeline this pycc-stencil cannot run fails the probe and shows as unavailable."""
    vs = []
    for i, spec in enumerate(pipelines):
        pipeline, *flags = re.split(r"\s+(?=-)", spec.strip())
        stem = "pycc-tile" + ("" if i == 0 else "-" + chr(ord("a") + i))
        command = [pycc, *PYCC_OPT, "-fpycc-parallel", f"-fpycc-passes={pipeline}", *flags]
        for t in threads:
            key = stem if t == 1 else f"{stem}{t}"
            vs.append(Variant(key, f"pycc-stencil {spec}", command, threads=t, pycc=True,
                              pycc_threads=True, omp_runtime=True,
                              family="pycc-tile"))  # fmt: skip
    return vs


# A time loop: what the tiling pipelines of the pycc-tile variants are for
PROBE = """
void probe(int tsteps, int n, double A[n][n], double B[n][n])
{
  int t, i, j;
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i][j] = 0.25 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = 0.25 * (B[i - 1][j] + B[i + 1][j] + B[i][j - 1] + B[i][j + 1]);
  }
}
"""


def probe_variants(variants: list[Variant], build: Path) -> None:
    """Compile a small kernel with every variant; the ones that fail are unavailable."""
    src = build / "probe.c"
    src.write_text(PROBE)

    def one(v: Variant) -> None:
        out = build / f"probe-{v.key}.so"
        report = build / f"probe-{v.key}.jsonl"
        r = compile_variant(v, src, out, report)
        if r.returncode != 0 or not out.exists():
            text = (r.stderr or r.stdout).strip()
            v.unavailable = first_line(text.splitlines()[-1] if text else "") or "build failed"

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(one, variants))


def pycc_env(report: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYCC_DISABLE", None)
    env.setdefault("PYCC_CC", "gcc")
    env["PYCC_REPORT"] = str(report)
    env["PYCC_NO_CACHE"] = "1"
    env["PYCC_TAKEOVER"] = "all"  # its code even where no pass fired: the report says which
    return env


def compile_variant(v: Variant, src: Path, out: Path, report: Path) -> subprocess.CompletedProcess:
    cmd = [*v.command, *SHARED, str(src), "-o", str(out), *v.link]
    env = pycc_env(report) if v.pycc else None
    try:
        return run(cmd, env=env, timeout=900)
    except (OSError, subprocess.SubprocessError) as e:
        return subprocess.CompletedProcess(cmd, 1, "", str(e))


@dataclass
class Build:
    kernel: Kernel
    variant: Variant
    lib: Path | None = None
    error: str | None = None
    parallel_code: bool = False  # the library starts threads (has_parallel_code)
    pycc_status: str | None = None  # "pycc-stencil", "cc: REASON", "no report"
    pycc_ms: float | None = None
    pycc_version: str | None = None
    pycc_remarks: list[str] = field(default_factory=list)  # the passes' remarks on the kernel


PARALLEL_IMPORTS = re.compile(r"\b(GOMP_\w+|__kmpc_fork\w*|pthread_create\w*|_*pycc\w*)")


def has_parallel_code(lib: Path) -> bool:
    """The library starts threads: it calls into an OpenMP runtime (libgomp, libomp), creates
    threads itself or calls a pycc-stencil runtime function."""
    r = run(["nm", "-D", "--undefined-only", str(lib)], timeout=60)
    return bool(PARALLEL_IMPORTS.search(r.stdout))


def read_pycc_report(b: Build, report: Path) -> None:
    if not report.exists():
        b.pycc_status = "cc: no PYCC_REPORT written"
        return
    entries = [json.loads(line) for line in report.read_text().splitlines() if line.strip()]
    for entry in entries:
        b.pycc_version = entry.get("version")
        for fn in entry.get("functions", []):
            if fn.get("name") != b.kernel.function:
                continue
            b.pycc_ms = (entry.get("time_ms") or {}).get("total")
            b.pycc_remarks = fn.get("remarks", [])
            if fn.get("compiled_by") == "pycc-stencil":
                b.pycc_status = "pycc-stencil"
            else:
                why = fn.get("reason") or entry.get("reason") or entry.get("status")
                b.pycc_status = f"cc: {why}"
            return
    status = entries[-1].get("status") if entries else None
    reason = entries[-1].get("reason") if entries else None
    b.pycc_status = f"cc: {reason or status or 'kernel not in the report'}"


def cache_key(v: Variant, src: Path, versions: dict[str, str]) -> str:
    h = hashlib.sha256()
    for part in (versions[v.command[0]], os.path.realpath(v.command[0]), *v.command[1:], *v.link):
        h.update(part.encode() + b"\0")
    h.update(src.read_bytes())
    return h.hexdigest()[:32]


def build_all(kernels, variants, build: Path, cache: Path | None) -> dict[tuple[str, str], Build]:
    """Every kernel with every available variant. Libraries of the reference compilers are
    cached (key: compiler version and path, flags, source); pycc-stencil is always rebuilt."""
    jobs = [(k, v) for k in kernels for v in variants if not v.unavailable]
    versions = {v.command[0]: compiler_version(v.command[0]) for v in variants}
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)

    def one(kv) -> Build:
        k, v = kv
        b = Build(k, v)
        stem = re.sub(r"[^\w.-]", "_", f"{k.name}-{v.key}")
        out = build / f"{stem}.so"
        report = build / f"{stem}.jsonl"
        report.unlink(missing_ok=True)
        cached = None
        if cache is not None and not v.pycc:
            cached = cache / f"{cache_key(v, k.path, versions)}.so"
            if cached.exists():
                shutil.copyfile(cached, out)
                b.lib = out
                b.parallel_code = has_parallel_code(out)
                return b
        r = compile_variant(v, k.path, out, report)
        if r.returncode != 0 or not out.exists():
            text = (r.stderr or r.stdout).strip()
            b.error = first_line(text.splitlines()[-1]) if text else "build failed"
            return b
        if cached is not None:
            tmp = cached.with_suffix(f".{os.getpid()}.tmp")
            shutil.copyfile(out, tmp)
            os.replace(tmp, cached)
        b.lib = out
        b.parallel_code = has_parallel_code(out)
        if v.pycc:
            read_pycc_report(b, report)
        return b

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return {(b.kernel.name, b.variant.key): b for b in pool.map(one, jobs)}


# --------------------------------------------------------------------------------------------
# Memory and the triad


def aligned_empty(shape, dtype, align: int = 64) -> np.ndarray:
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(nbytes + align, dtype=np.uint8)
    offset = (-raw.ctypes.data) % align
    return raw[offset : offset + nbytes].view(dtype).reshape(shape)


def initial_values(spec: Array, seed: int) -> np.ndarray:
    """Deterministic data: seeded uniform [0.5, 1.5) for floats, full range for uint8."""
    rng = np.random.default_rng(seed)
    a = aligned_empty(spec.shape, spec.dtype)
    if np.dtype(spec.dtype).kind == "f":
        a[...] = rng.uniform(0.5, 1.5, size=spec.shape).astype(spec.dtype)
    else:
        a[...] = rng.integers(0, 256, size=spec.shape, dtype=spec.dtype)
    return a


class Gomp:
    """libgomp, to set the OpenMP variant's thread count before each call."""

    def __init__(self) -> None:
        try:
            self.lib = ctypes.CDLL("libgomp.so.1")
            self.lib.omp_set_num_threads.argtypes = [ctypes.c_int]
        except OSError:
            self.lib = None

    def set_threads(self, n: int) -> None:
        if self.lib is not None:
            self.lib.omp_set_num_threads(n)


@dataclass
class Triad:
    threads: int
    best: float  # GB/s
    median: float


def build_triad(gcc: str, build: Path, threads: list[int]) -> dict[int, ctypes.CDLL]:
    libs = {}
    for t in sorted(set(threads)):
        out = build / f"triad{t}.so"
        flags = ["-fopenmp"] if t > 1 else []
        r = run([gcc, *OPT, *flags, *SHARED, str(KERNEL_DIR / "stream_triad.c"), "-o", str(out)])
        if r.returncode != 0:
            sys.exit(f"bench.py: cannot build the triad: {first_line(r.stderr)}")
        lib = ctypes.CDLL(str(out))
        lib.stream_triad.argtypes = [ctypes.c_long] + [ctypes.c_void_p] * 3 + [ctypes.c_double]
        lib.stream_triad.restype = None
        libs[t] = lib
    return libs


def measure_triad(libs, gomp: Gomp, reps: int) -> dict[int, Triad]:
    n = TRIAD_N
    a, b, c = (aligned_empty((n,), np.float64) for _ in range(3))
    a[...] = 0.0
    b[...] = 1.0
    c[...] = 2.0
    out = {}
    for t, lib in libs.items():
        gomp.set_threads(t)
        lib.stream_triad(n, a.ctypes.data, b.ctypes.data, c.ctypes.data, 3.0)  # warm-up
        rates = []
        for _ in range(reps):
            t0 = time.perf_counter()
            lib.stream_triad(n, a.ctypes.data, b.ctypes.data, c.ctypes.data, 3.0)
            rates.append(24 * n / (time.perf_counter() - t0) / 1e9)
        out[t] = Triad(t, max(rates), statistics.median(rates))
    return out


# One core's in-cache rates (scripts/bench_kernels/core_peak.c)

CORE_FLOPS_REPS = 4_000_000  # one core_flops call: 2 x 48 x 4e6 flops, a few ms
CORE_LOADS_N = 48 * 64  # 24 KiB of 8-byte elements: within any L1 data cache of 32 KiB
CORE_LOADS_REPS = 20_000
ELEMENT_BYTES = {"double": 8, "float": 4}  # the element types with an in-cache roof


@dataclass(frozen=True)
class CorePeak:
    """One core's double-precision flop rate (independent multiplies and adds at the
    target's vector width) and its rate of 8-byte elements loaded from L1, measured."""

    gflops: float
    gloads: float

    def best_with(self, other: CorePeak) -> CorePeak:
        """The better of two measurements of each rate (before and after the run)."""
        return CorePeak(max(self.gflops, other.gflops), max(self.gloads, other.gloads))

    def roof(self, k: Kernel) -> float | None:
        """The GSt/s one core allows `k` with every operand in cache: the smaller of the flop
        rate over the flops per point and the load rate over the loads per point, both
        rates in `k`'s elements (a vector holds 8 / element-size of them). None for integer
        kernels: their operations are not measured."""
        size = ELEMENT_BYTES.get(k.elem)
        if k.integer or size is None:
            return None
        lanes = 8 / size
        return min(self.gflops * lanes / k.flops, self.gloads * lanes / k.loads_per_point)


def measure_core_peak(gcc: str, build: Path, reps: int) -> CorePeak:
    """The best of `reps` timings of each rate (other processes only ever slow it)."""
    out = build / "core_peak.so"
    source = KERNEL_DIR / "core_peak.c"
    r = run([gcc, *OPT, "-ffp-contract=off", *SHARED, str(source), "-o", str(out)])
    if r.returncode != 0:
        sys.exit(f"bench.py: cannot build the core peak: {first_line(r.stderr)}")
    lib = ctypes.CDLL(str(out))
    lib.core_flops.argtypes = [ctypes.c_long, ctypes.c_double, ctypes.c_double]
    lib.core_flops.restype = ctypes.c_double
    lib.core_loads.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p]
    lib.core_loads.restype = ctypes.c_long
    chains = lib.core_chains()
    data = aligned_empty((CORE_LOADS_N,), np.int64)
    data[...] = np.arange(CORE_LOADS_N)
    flops, loads = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        lib.core_flops(CORE_FLOPS_REPS, 0.999999, 1e-7)
        flops.append(2 * chains * CORE_FLOPS_REPS / (time.perf_counter() - t0) / 1e9)
        t0 = time.perf_counter()
        lib.core_loads(CORE_LOADS_REPS, CORE_LOADS_N, data.ctypes.data)
        loads.append(CORE_LOADS_N * CORE_LOADS_REPS / (time.perf_counter() - t0) / 1e9)
    return CorePeak(max(flops), max(loads))


@dataclass(frozen=True)
class Roofs:
    """What the tables compare every rate with, measured in the same run."""

    bandwidth: float  # GB/s: the best triad
    core: CorePeak | None = None

    def core_fraction(self, k: Kernel, gst: float, threads: int) -> float | None:
        """`gst` as a fraction of the in-cache roof of `threads` cores."""
        roof = self.core.roof(k) if self.core else None
        return gst / (roof * threads) if roof else None

    def line(self) -> str:
        if not self.core:
            return ""
        return (
            f"one core in cache (gcc -O3 -march=native, core_peak.c): {self.core.gflops:.1f} "
            f"GFLOP/s double (independent mul + add), {self.core.gloads:.1f} G 8-byte loads/s "
            "from L1; core column = GSt/s / the in-cache roof of T cores (T x min(GFLOP/s / flops "
            "per point, loads/s / loads per point))"
        )


def ctypes_call_cost(lib) -> float:
    lib.bench_nop.argtypes = []
    f = lib.bench_nop
    t0 = time.perf_counter()
    for _ in range(100_000):
        f()
    return (time.perf_counter() - t0) / 100_000


# --------------------------------------------------------------------------------------------
# Running one kernel at one size


@dataclass
class Result:
    kernel: str
    size: str
    params: dict[str, int]
    variant: str
    label: str
    threads: int
    flags: str
    points: int = 0
    inner: int = 1
    times: list[float] = field(default_factory=list)  # seconds per call
    check: str = ""
    wrong: bool = False
    note: str = ""
    pycc_status: str | None = None
    copied_from_serial: bool = False
    best: bool = False  # report the best repetition instead of the median (--best)

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def time(self) -> float | None:
        """The reported time per call: the median, or with --best the minimum."""
        return (min(self.times) if self.best else self.median) if self.times else None

    @property
    def spread(self) -> float | None:
        """Half the interquartile range, relative to the median."""
        if len(self.times) < 4:
            return (max(self.times) - min(self.times)) / 2 / self.median if self.times else None
        q = statistics.quantiles(self.times, n=4)
        return (q[2] - q[0]) / 2 / self.median


def compare(out: list[np.ndarray], ref: list[np.ndarray]) -> tuple[bool, float]:
    """(bit-identical, max |x - ref| / max |ref|)."""
    same = all(np.array_equal(o.view(np.uint8), r.view(np.uint8)) for o, r in zip(out, ref))
    if same:
        return True, 0.0
    worst = 0.0
    for o, r in zip(out, ref):
        if o.dtype.kind != "f":
            diff = np.abs(o.astype(np.int64) - r.astype(np.int64)).max()
            worst = max(worst, float(diff) / max(1.0, float(np.abs(r).max())))
            continue
        both_nan = np.isnan(o) & np.isnan(r)
        d = np.where(both_nan, 0.0, np.abs(o.astype(np.float64) - r.astype(np.float64)))
        scale = float(np.nanmax(np.abs(r))) or 1.0
        worst = max(worst, float(np.nanmax(d)) / scale if not np.isnan(d).all() else math.inf)
        if np.isnan(d).any():
            worst = math.inf
    return False, worst


def tolerance(k: Kernel) -> float:
    if k.integer:
        return 0.0
    return 1e-4 if k.elem == "float" else 1e-9


def bench_kernel_size(k: Kernel, size: str, builds, variants, args, gomp: Gomp, log):
    params = k.sizes[size]
    specs = k.args(params)
    pristine = []
    for i, s in enumerate(specs):
        pristine.append(initial_values(s, seed=1000 + i) if isinstance(s, Array) else s)
    work = [aligned_empty(p.shape, p.dtype) if isinstance(p, np.ndarray) else p for p in pristine]
    written = [i for i, s in enumerate(specs) if isinstance(s, Array) and s.written]
    call_args = [w.ctypes.data if isinstance(w, np.ndarray) else w for w in work]
    argtypes = [ctypes.c_void_p if isinstance(w, np.ndarray) else ctypes.c_int for w in work]

    def restore():
        for i, w in enumerate(work):
            if isinstance(w, np.ndarray):
                np.copyto(w, pristine[i])

    points = k.points(params)
    results: dict[str, Result] = {}
    funcs: dict[str, Callable] = {}
    for v in variants:
        r = Result(k.name, size, params, v.key, v.label, v.threads, v.flags_text(), points,
                   best=args.best)  # fmt: skip
        results[v.key] = r
        b = builds.get((k.name, v.key))
        if v.unavailable:
            r.note = f"unavailable: {v.unavailable}"
            continue
        if b is None or b.lib is None:
            r.note = f"build failed: {b.error if b else '?'}"
            continue
        if v.pycc:
            r.pycc_status = b.pycc_status
        if v.parallel and not b.parallel_code:
            r.note = "no parallel code generated: not run"
            continue
        lib = ctypes.CDLL(str(b.lib))
        f = getattr(lib, k.function)
        f.argtypes = argtypes
        f.restype = None
        funcs[v.key] = f

    def call(key: str, times: int = 1) -> float:
        v = next(v for v in variants if v.key == key)
        if v.omp_runtime:
            gomp.set_threads(v.threads)
        f = funcs[key]
        t0 = time.perf_counter()
        for _ in range(times):
            f(*call_args)
        return time.perf_counter() - t0

    # Correctness: one call each from the same inputs, compared with gcc -O3.
    refs: dict[str, list[np.ndarray]] = {}
    first_call: dict[str, float] = {}
    for key in ["gcc", "gcc-nofma"] + [x for x in funcs if x not in ("gcc", "gcc-nofma")]:
        if key not in funcs:
            continue
        restore()
        first_call[key] = call(key)
        outs = [work[i] for i in written]
        if key in ("gcc", "gcc-nofma"):
            refs[key] = [o.copy() for o in outs]
            if key == "gcc":
                results[key].check = "reference"
                continue
        if "gcc" not in refs:
            results[key].check = "unchecked (no gcc result)"
            continue
        same, diff = compare(outs, refs["gcc"])
        r = results[key]
        if same:
            r.check = "exact"
        elif "gcc-nofma" in refs and compare(outs, refs["gcc-nofma"])[0]:
            r.check = "=no-FMA"
        elif diff <= tolerance(k):
            r.check = f"~{diff:.0e}"
        else:
            r.check = f"WRONG {diff:.1e}"
            r.wrong = True
    del refs

    timed = [v.key for v in variants if v.key in funcs and not v.reference_only]
    timed = [key for key in timed if not results[key].wrong]
    if "gcc" not in timed:
        return list(results.values())
    for key in [x for x in timed if x != "gcc" and args.max_call]:
        if first_call[key] > args.max_call:  # its checked call is its one measurement
            results[key].times = [first_call[key]]
            results[key].check += " (1 call)"
            timed.remove(key)
    # Calibrate: repeat the call so that one measurement of the fastest variant takes at least
    # --min-time (every variant makes the same number of calls).
    fastest = math.inf
    for key in timed:
        restore()
        fastest = min(fastest, call(key))
    inner = max(1, math.ceil(args.min_time / max(fastest, 1e-9)))
    for key in timed:
        results[key].inner = inner
    for rep in range(args.reps):
        shift = rep % len(timed)
        for key in timed[shift:] + timed[:shift]:
            restore()
            results[key].times.append(call(key, inner) / inner)
    log(f"  {k.name} {size}: {len(timed)} variants x {args.reps} reps x {inner} calls")
    return list(results.values())


# --------------------------------------------------------------------------------------------
# Reporting


def metrics(r: Result, k: Kernel, base: Result | None, roofs: Roofs,
            polly: float | None = None):  # fmt: skip
    """The row's numbers; `polly` is the time it is compared with for "vs polly"."""
    t = r.time
    if t is None:
        return {}
    gst = r.points / t / 1e9
    gbs = gst * k.bytes
    return {
        "ms": t * 1e3,
        "spread": r.spread,
        "gstencil": gst,
        "gflops": gst * k.flops,
        "gbs": gbs,
        "bw_fraction": gbs / roofs.bandwidth if roofs.bandwidth else None,
        "core_fraction": roofs.core_fraction(k, gst, r.threads),
        "vs_gcc": (base.time / t) if base is not None and base.time else None,
        "vs_polly": polly / t if polly and not is_polly(r) else None,
    }


def is_polly(r: Result) -> bool:
    return r.variant.startswith("polly")


def polly_time(rs: list[Result], threads: int) -> float | None:
    """The fastest clang+polly time with at most `threads` threads: a user who may use that
    many cores takes the better of Polly's serial and parallel code."""
    times = [r.time for r in rs if is_polly(r) and r.threads <= threads and r.time]
    return min(times, default=None)


def variant_label(r: Result) -> str:
    label = r.label
    if r.threads > 1:
        label += f" {r.threads}T"
    if r.pycc_status and r.pycc_status != "pycc-stencil":
        label += " †cc"
    if r.copied_from_serial:
        label += " (serial)"
    return label


COLUMNS = ["kernel", "size", "T", "variant", "ms", "±", "GSt/s", "GFLOP/s", "GB/s", "BW",
           "core", "vs gcc", "check"]  # fmt: skip
POLLY_COLUMNS = COLUMNS[:-1] + ["vs polly", "check"]
TEXT_COLUMNS = {"kernel", "size", "variant", "check", "goals"}  # left-aligned


def group_results(results: list[Result]) -> dict[tuple[str, str], list[Result]]:
    """The results by (kernel, size), in their order."""
    groups: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        groups.setdefault((r.kernel, r.size), []).append(r)
    return groups


def ratio(x: float | None) -> str:
    return f"{x:.2f}x" if x else ""


def percent(x: float | None) -> str:
    return f"{100 * x:.0f}%" if x is not None else ""


def table_rows(results: list[Result], kernels: dict[str, Kernel], roofs: Roofs,
               vs_polly: bool = False) -> list[list]:  # fmt: skip
    """Rows of COLUMNS, or POLLY_COLUMNS with `vs_polly` (None = the start of a new
    kernel/size group)."""
    rows: list[list] = []
    for (kname, size), rs in group_results(results).items():
        k = kernels[kname]
        base = next((r for r in rs if r.variant == "gcc"), None)
        if rows:
            rows.append(None)
        for r in rs:
            if r.variant == "gcc-nofma" or r.note.startswith("no parallel code"):
                continue  # the latter are listed once below the tables (parallel_notes)
            m = metrics(r, k, base, roofs, polly_time(rs, r.threads))
            polly_cell = [ratio(m.get("vs_polly"))] if vs_polly else []
            if not m:
                note = r.note or (r.check if r.wrong else "")
                note = note if len(note) <= 70 else note[:69] + "…"
                rows.append([kname, size, str(r.threads), variant_label(r), "", "", "", "", "",
                             "", "", "", *polly_cell, note])  # fmt: skip
                continue
            gfl = f"{m['gflops']:.2f}" + (" op" if k.integer else "")
            rows.append([
                kname, size, str(r.threads), variant_label(r), f"{m['ms']:.3f}",
                f"{100 * m['spread']:.0f}%", f"{m['gstencil']:.3f}", gfl, f"{m['gbs']:.1f}",
                percent(m["bw_fraction"]), percent(m["core_fraction"]), ratio(m["vs_gcc"]),
                *polly_cell, r.check,
            ])  # fmt: skip
    return rows


SUMMARY_COLUMNS = ["kernel", "size", "variant", "vs gcc", "GSt/s", "roofline", "core",
                   "vs polly", "beats polly", "goals"]  # fmt: skip


def summary_rows(results: list[Result], kernels: dict[str, Kernel], roofs: Roofs) -> list[list]:
    """Every pycc-stencil row against issue 19's goals: on DRAM-sized grids, one thread
    `Kernel.goal` times faster than gcc -O3 (and the 2-D time-iterated stencils at 70 % of
    the in-cache roof), a single sweep at 80 % of the DRAM roofline, two threads 1.8x the
    same variant's one; never slower than gcc; ahead of Polly."""
    rows: list[list] = []
    for (kname, size), rs in group_results(results).items():
        k = kernels[kname]
        base = next((r for r in rs if r.variant == "gcc"), None)
        mine = [r for r in rs if r.variant.startswith("pycc") and not r.copied_from_serial
                and not r.note.startswith("no parallel code")]  # fmt: skip
        if rows and mine:
            rows.append(None)
        for r in mine:
            m = metrics(r, k, base, roofs, polly_time(rs, r.threads))
            if not m or not m["vs_gcc"]:
                note = r.note or r.check
                note = note if len(note) <= 70 else note[:69] + "…"
                rows.append([kname, size, variant_label(r), "", "", "", "", "", "", note])
                continue
            goals = []
            if size in DRAM_SIZES and r.threads == 1:
                goals.append(f"{k.goal:g}x gcc: {yes_no(m['vs_gcc'] >= k.goal)}")
                if k.core_goal and m["core_fraction"] is not None:
                    met = m["core_fraction"] >= k.core_goal
                    goals.append(f"{100 * k.core_goal:.0f}% core: {yes_no(met)}")
            if size in DRAM_SIZES and not k.iterated and m["bw_fraction"] is not None:
                goals.append(f"80% roofline: {yes_no(m['bw_fraction'] >= 0.8)}")
            own = next((x for x in mine if x.label == r.label and x.threads == 1), None)
            if size in DRAM_SIZES and r.threads > 1 and own is not None and own.time and r.time:
                goals.append(f"1.8x own 1T: {yes_no(own.time / r.time >= 1.8)}")
            goals.append(f"not slower than gcc: {yes_no(m['vs_gcc'] >= 1.0)}")
            beats = "" if m["vs_polly"] is None else yes_no(m["vs_polly"] > 1.0)
            rows.append([
                kname, size, variant_label(r), ratio(m["vs_gcc"]), f"{m['gstencil']:.3f}",
                percent(m["bw_fraction"]), percent(m["core_fraction"]), ratio(m["vs_polly"]),
                beats, "; ".join(goals),
            ])  # fmt: skip
    return rows


def yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


def print_table(rows, title: str, use_rich: bool, columns: list[str] = COLUMNS) -> None:
    if use_rich:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
        for c in columns:
            t.add_column(c, justify="left" if c in TEXT_COLUMNS else "right",
                         no_wrap=c not in ("check", "goals"))  # fmt: skip
        for row in rows:
            if row is None:
                t.add_section()
                continue
            style = "red" if row[-1].startswith("WRONG") else None
            t.add_row(*row, style=style)
        console = Console(width=max(140, shutil.get_terminal_size().columns))
        console.print(t)
        console.print()
        return
    print(title)
    body = [r for r in rows if r is not None]
    widths = [max(len(c), *(len(r[i]) for r in body)) for i, c in enumerate(columns)]
    fmt_row = lambda r: "  ".join(  # noqa: E731
        v.ljust(w) if columns[i] in TEXT_COLUMNS else v.rjust(w)
        for i, (v, w) in enumerate(zip(r, widths))
    )
    print(fmt_row(columns))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("" if row is None else fmt_row(row))
    print()


def markdown_table(rows, columns: list[str] = COLUMNS) -> str:
    out = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for row in rows:
        if row is not None:
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
    return "\n".join(out)


@contextmanager
def build_directory(keep: bool, prefix: str = "pycc-bench-"):
    """A temporary directory for the libraries, removed at the end unless `keep`."""
    build = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield build
    finally:
        if keep:
            print(f"build directory kept: {build}", file=sys.stderr)
        else:
            shutil.rmtree(build, ignore_errors=True)


def has_rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def machine_info(gcc: str, clang: str | None, pycc: str | None) -> list[str]:
    cpu = cpu_name()
    try:
        info = dict(
            (k.strip(), v.strip())
            for k, v in (
                line.split(":", 1)
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if ":" in line
            )
        )
        isa = [f for f in ("avx512f", "avx2", "fma") if f in info.get("flags", "").split()]
        cpu += f" (family {info.get('cpu family', '?')} model {info.get('model', '?')}"
        cpu += f", {' '.join(isa).upper() or 'no AVX2'})"
    except OSError:
        pass
    caches = []
    if shutil.which("lscpu"):
        for line in run(["lscpu"], timeout=30).stdout.splitlines():
            m = re.match(r"(L[123][di]?) cache:\s+(.*)", line)
            if m and m.group(1) != "L1i":
                caches.append(f"{m.group(1)} {m.group(2)}")
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    lines = [
        f"machine: {cpu}, {os.cpu_count()} cores{mem}; {'; '.join(caches)}",
        f"os: {platform.system()} {platform.release()}, python {platform.python_version()}, "
        f"numpy {np.__version__}",
        f"gcc: {compiler_version(gcc)}",
        f"clang: {compiler_version(clang) if clang else 'not found'}",
    ]
    if pycc:
        lines.append(f"pycc-stencil: {pycc_identity(pycc)}")
    return lines


def pycc_identity(pycc: str) -> str:
    """The version and source of the pycc-stencil that runs (its script's own interpreter)."""
    try:
        shebang = Path(pycc).read_text(errors="replace").splitlines()[0]
        python = shebang[2:].strip().split()[0] if shebang.startswith("#!") else sys.executable
        code = "import os, pycc_stencil as p; print(p.__version__, os.path.dirname(p.__file__))"
        version, where = run([python, "-c", code], timeout=60).stdout.split(maxsplit=1)
        where = where.strip()
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return f"{pycc} (version unknown)"
    rev = run(["git", "-C", where, "describe", "--always", "--dirty"], timeout=30).stdout.strip()
    return f"{pycc}, {version} from {where}" + (f" (git {rev})" if rev else "")


def plot(path: str, results: list[Result], kernels, sizes) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "--plot needs matplotlib (pip install matplotlib); no plot written"
    labels: list[str] = []
    for r in results:
        if r.time and not r.copied_from_serial and variant_label(r) not in labels:
            labels.append(variant_label(r))
    fig, axes = plt.subplots(len(sizes), 1, figsize=(13, 4.2 * len(sizes)), squeeze=False)
    width = 0.8 / max(1, len(labels))
    for ax, size in zip(axes[:, 0], sizes):
        names = [k.name for k in kernels]
        for j, label in enumerate(labels):
            ys = []
            for kname in names:
                rs = [r for r in results if r.kernel == kname and r.size == size]
                base = next((r for r in rs if r.variant == "gcc"), None)
                r = next((r for r in rs if variant_label(r) == label), None)
                ok = r is not None and r.time and base is not None and base.time
                ys.append(base.time / r.time if ok else 0.0)
            xs = [i + (j - (len(labels) - 1) / 2) * width for i in range(len(names))]
            ax.bar(xs, ys, width, label=label)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(names)), names, rotation=20)
        ax.set_ylabel("speed vs gcc -O3 (x)")
        ax.set_title(f"{size}: {SIZE_CLASSES[size]}")
    axes[0, 0].legend(ncol=4, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return None


# --------------------------------------------------------------------------------------------


def add_common_options(p: argparse.ArgumentParser) -> None:
    """Options of the timing, the compilers and the output (bench.py and bench_simd.py)."""
    p.add_argument("--reps", type=int, default=11, help="repetitions per variant (default 11)")
    p.add_argument(
        "--min-time",
        type=float,
        default=0.02,
        help="seconds one measurement lasts at least (repeated calls; default 0.02)",
    )
    p.add_argument(
        "--max-call",
        type=float,
        default=0,
        metavar="S",
        help="a variant whose checked call took over S seconds is not repeated: that call is "
        "its one measurement, marked '(1 call)' (default 0: no limit)",
    )
    p.add_argument(
        "--best",
        action="store_true",
        help="report the best (minimum) of the repetitions instead of the median: on a busy "
        "machine, other processes only ever add time",
    )
    p.add_argument("--gcc", default="gcc", help="gcc to use (default gcc)")
    p.add_argument("--clang", help="clang to use (default: the newest clang/clang-NN on PATH)")
    p.add_argument("--pycc", help="pycc-stencil to use (default: beside this python, or PATH)")
    p.add_argument("--markdown", metavar="PATH", help="write the tables as Markdown")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pycc-stencil-bench"
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=cache,
        help=f"where gcc/clang builds are cached (default {cache})",
    )
    p.add_argument("--no-cache", action="store_true", help="rebuild everything")
    p.add_argument("--keep", action="store_true", help="keep the build directory")
    p.add_argument("--plain", action="store_true", help="plain text tables even if rich is here")


def statistic_name(args) -> str:
    return "best of them" if args.best else "median"


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    names = [k.name for k in KERNELS]
    p.add_argument("--kernels", help=f"comma-separated subset of: {','.join(names)}")
    p.add_argument("--sizes", default="small,large",
                   help=f"comma-separated size classes: {', '.join(SIZE_CLASSES)} "
                        "(default small,large)")  # fmt: skip
    p.add_argument(
        "--threads",
        default=None,
        help="comma-separated thread counts (default 1,2 on 2+ cores, else 1)",
    )
    p.add_argument(
        "--variants",
        help="comma-separated subset of variant keys (gcc always runs): "
        "graphite, clang, polly, pycc, pycc-tile, autopar, graphite-par, polly-par, "
        "polly-force, omp",
    )
    p.add_argument(
        "--pycc-passes",
        default=DEFAULT_PYCC_PASSES,
        metavar="PIPELINES",
        help="';'-separated pycc-stencil pipelines, one `pycc-tile` variant each, built with "
        "-fpycc-parallel -fpycc-passes=PIPELINE and run on every --threads count "
        "(omp_set_num_threads); a pipeline may be followed by flags for its build "
        "('time-tile -mprefer-vector-width=256'); "
        f"'' for none (default {DEFAULT_PYCC_PASSES!r})",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="small size, 3 repetitions, 5 ms measurements (under a minute)",
    )
    p.add_argument("--no-pycc", action="store_true", help="leave the pycc-stencil variant out")
    p.add_argument(
        "--install-compilers",
        action="store_true",
        help="as root: apt-get install the newest clang-NN when no clang is found",
    )
    p.add_argument("--plot", metavar="PNG", help="bar chart of the speed ratios (matplotlib)")
    p.add_argument("--json", metavar="PATH", help="write every measurement as JSON")
    add_common_options(p)
    p.add_argument("--list", action="store_true", help="list the kernels and sizes, then exit")
    a = p.parse_args(argv)
    if a.quick:
        a.sizes = "small" if a.sizes == "small,large" else a.sizes
        a.threads = a.threads or "1"
        a.reps = min(a.reps, 3)
        a.min_time = min(a.min_time, 0.005)
    a.kernels = a.kernels.split(",") if a.kernels else names
    unknown = [k for k in a.kernels if k not in names]
    a.sizes = a.sizes.split(",")
    unknown += [s for s in a.sizes if s not in SIZE_CLASSES]
    if unknown:
        p.error(f"unknown kernel or size: {', '.join(unknown)}")
    if a.threads is None:
        a.threads = "1,2" if (os.cpu_count() or 1) >= 2 else "1"
    try:
        a.threads = sorted({int(t) for t in a.threads.split(",")})
    except ValueError:
        p.error("--threads: comma-separated integers")
    if a.reps < 1 or min(a.threads) < 1:
        p.error("--reps and --threads must be >= 1")
    a.variants = a.variants.split(",") if a.variants else None
    a.pycc_passes = [x.strip() for x in a.pycc_passes.split(";") if x.strip()]
    return a


def main(argv=None) -> int:
    args = parse_args(argv)
    kernels = [k for k in KERNELS if k.name in args.kernels]
    by_name = {k.name: k for k in KERNELS}
    if args.list:
        for k in kernels:
            sizes = "; ".join(
                f"{s}: " + " ".join(f"{n}={v}" for n, v in k.sizes[s].items()) for s in k.sizes
            )
            print(f"{k.name:16} {k.elem:6} {k.stencil_points:2} pts {k.flops:2} flop/pt "
                  f"{k.bytes:2} B/pt{' iterated' * k.iterated}  points/call {k.points_doc}  "
                  f"[{sizes}]")  # fmt: skip
        return 0
    kernels = [k for k in kernels if any(s in k.sizes for s in args.sizes)]
    t_start = time.perf_counter()
    load_start = loadavg()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    gcc = shutil.which(args.gcc)
    if not gcc:
        sys.exit(f"bench.py: {args.gcc} not found (gcc is the baseline)")
    clang = None
    if args.clang:
        clang = shutil.which(args.clang)
        if not clang:
            sys.exit(f"bench.py: {args.clang} not found")
    else:
        clangs = find_clangs()
        if not clangs and args.install_compilers and install_clang():
            clangs = find_clangs()
        if clangs:
            clang = clangs[0][1]
        else:
            log("bench.py: no clang on PATH: the clang and Polly variants are left out. On "
                "Debian/Ubuntu: apt-get install clang-19 (Debian's clang has Polly built in), "
                "or rerun as root with --install-compilers.")  # fmt: skip
    pycc = None if args.no_pycc else (args.pycc or default_pycc())
    if not args.no_pycc and not pycc:
        log("bench.py: pycc-stencil not found (pass --pycc PATH); its variant is left out")

    use_rich = not args.plain and has_rich()

    header = machine_info(gcc, clang, pycc)
    if load_start[0].isdigit() and float(load_start.split()[0]) > 0.5:
        log(f"bench.py: warning: the machine is busy (load average {load_start}); the timings "
            "will be noisy, the 2-thread ones most")  # fmt: skip
    with build_directory(args.keep) as build:
        variants = make_variants(args, gcc, clang, pycc)
        log(f"probing {len(variants)} compiler variants ...")
        probe_variants(variants, build)
        if next(v for v in variants if v.key == "gcc").unavailable:
            sys.exit("bench.py: gcc -O3 -march=native -shared -fPIC does not build")
        header += variant_lines(variants)
        print("\n".join(header), flush=True)
        t0 = time.perf_counter()
        log(f"building {len(kernels)} kernels x {sum(not v.unavailable for v in variants)} "
            f"variants in {build} ...")  # fmt: skip
        builds = build_all(kernels, variants, build, None if args.no_cache else args.cache_dir)
        build_s = time.perf_counter() - t0
        gomp = Gomp()
        triad_libs = build_triad(gcc, build, args.threads)
        nop_cost = ctypes_call_cost(
            triad_libs[1] if 1 in triad_libs else triad_libs[max(triad_libs)]
        )
        log("measuring the triad ...")
        triad_reps = 5 if args.quick else 10
        triads = measure_triad(triad_libs, gomp, triad_reps)
        log("measuring one core in cache ...")
        core = measure_core_peak(gcc, build, triad_reps)

        results: list[Result] = []
        for size in args.sizes:
            log(f"size {size}: {SIZE_CLASSES[size]}")
            for k in kernels:
                if size in k.sizes:  # the single sweeps have no `tiling` size
                    results += bench_kernel_size(k, size, builds, variants, args, gomp, log)
        triads_end = measure_triad(triad_libs, gomp, triad_reps)
        core = core.best_with(measure_core_peak(gcc, build, triad_reps))
        for t, tr in triads_end.items():
            best = max(tr.best, triads[t].best)
            triads[t] = Triad(t, best, statistics.median([tr.median, triads[t].median]))
        roofs = Roofs(max(tr.best for tr in triads.values()), core)

        # pycc-stencil is serial: show its 1-thread result among the parallel variants too.
        for t in args.threads:
            if t == 1:
                continue
            for r in [r for r in results if r.variant == "pycc"]:
                copy = Result(**{**r.__dict__, "threads": t, "copied_from_serial": True})
                i = max(i for i, x in enumerate(results) if x.kernel == r.kernel and
                        x.size == r.size)  # fmt: skip
                results.insert(i + 1, copy)
        elapsed = time.perf_counter() - t_start

        lines = (
            header
            + [
                "triad (gcc -O3 -march=native, 3 x 128 MiB arrays, 24 B/element): "
                + ", ".join(
                    f"{t} thread{'s' * (t > 1)} {tr.best:.1f} GB/s best, {tr.median:.1f} median"
                    for t, tr in sorted(triads.items())
                )  # fmt: skip
                + f"; BW column = achieved / {roofs.bandwidth:.1f} GB/s",
                roofs.line(),
                f"ctypes call overhead {nop_cost * 1e6:.2f} us; builds {build_s:.0f} s; "
                f"run {elapsed:.0f} s; {args.reps} repetitions, {statistic_name(args)}; "
                "round-robin order; "
                f"load average {load_start} at the start, {loadavg()} at the end",
                "command: " + shlex.join(["python", "scripts/bench.py", *(argv or sys.argv[1:])]),
            ]
        )
        print("\n".join(lines[len(header) :]))
        print()
        rows_by_size = {}
        polly = any(is_polly(r) and r.time for r in results)
        columns = POLLY_COLUMNS if polly else COLUMNS
        for size in args.sizes:
            rows = table_rows([r for r in results if r.size == size], by_name, roofs, polly)
            rows_by_size[size] = rows
            print_table(rows, f"{size}: {SIZE_CLASSES[size]}", use_rich, columns)
        summary = summary_rows(results, by_name, roofs)
        summary_title = "pycc-stencil against issue 19's goals (vs gcc: gcc -O3 on 1 thread)"
        if summary:
            print_table(summary, summary_title, use_rich, SUMMARY_COLUMNS)
        print_legend(kernels, args.sizes, results)
        notes = geomean_lines(results, args.sizes) + parallel_notes(builds, variants)
        notes += pycc_notes(builds) + pass_remark_lines(builds)
        for n in notes:
            print(n)
        if args.markdown:
            md = ["```", *lines, "```", ""]
            for size in args.sizes:
                md += [f"**{size}**: {SIZE_CLASSES[size]}", "",
                       markdown_table(rows_by_size[size], columns), ""]  # fmt: skip
            if summary:
                md += [f"**{summary_title}**", "", markdown_table(summary, SUMMARY_COLUMNS), ""]
            md += [f"- {n}" for n in notes]
            Path(args.markdown).write_text("\n".join(md) + "\n")
        if args.json:
            data = {
                "machine": header,
                "triad": {t: tr.__dict__ for t, tr in triads.items()},
                "bandwidth_gbs": roofs.bandwidth,
                "core": core.__dict__,
                "elapsed_s": elapsed,
                "variants": [v.__dict__ for v in variants],
                "results": [
                    {**r.__dict__, "median": r.median,
                     **metrics(r, by_name[r.kernel], next((x for x in group if x.variant == "gcc"),
                                                          None),
                               roofs, polly_time(group, r.threads))}
                    for group in group_results(results).values() for r in group
                ],
            }  # fmt: skip
            Path(args.json).write_text(json.dumps(data, indent=1, default=str))
        if args.plot:
            err = plot(args.plot, results, kernels, args.sizes)
            log(err or f"plot written to {args.plot}")
        log(f"total {time.perf_counter() - t_start:.0f} s")
    return 0


def print_legend(kernels, sizes, results) -> None:
    print(
        f"columns: ms = {'best' if any(r.best for r in results) else 'median'} time per call; "
        "± = half the interquartile range / median; GSt/s = "
        "stencil point updates per ns; GFLOP/s = GSt/s x the flops/point the source states"
    )
    print(
        "  (integer ops for uint8: 'op'); GB/s = GSt/s x the compulsory bytes/point (each "
        "sweep streams its arrays once, no write-allocate); BW = GB/s / triad best; vs gcc ="
    )
    print(
        "  gcc -O3 time / this time (>1 faster). check: exact = bit-identical to gcc -O3; "
        "=no-FMA = bit-identical to gcc -O3 -ffp-contract=off (gcc contracts a*b+c into FMA,"
    )
    print(
        "  this variant does not); ~1e-16 = max |difference| / max |value| vs gcc -O3 (other "
        "contraction or reassociation); WRONG = over tolerance: its numbers are not shown."
    )
    print(
        "  †cc = pycc-stencil fell back to cc for this kernel; (serial) = pycc-stencil has no "
        "parallel code: its 1-thread result, repeated."
    )
    print(
        "  BW is the fraction of the DRAM roofline (GSt/s / (triad GB/s / bytes/point)); vs "
        "polly = the fastest clang+polly time on at most as many threads / this time."
    )
    print(
        "  An `iterated` kernel (a time loop) is above 100 % BW on a DRAM-sized grid only when "
        "the code reuses data across time steps (temporal tiling)."
    )
    print(
        "  core = GSt/s / the in-cache roof of T cores (one core's measured flop and L1 load "
        "rates over the kernel's flops and loads per point): the speed its arithmetic and load "
        "ports allow with all data in L1; blank for integer kernels."
    )
    if any(r.check.endswith("(1 call)") for r in results):
        print("  (1 call) = the checked call took over --max-call seconds: it is the only one.")
    print("kernels:")
    for k in kernels:
        per = []
        for s in [s for s in sizes if s in k.sizes]:
            rs = [r for r in results if r.kernel == k.name and r.size == s and r.inner]
            inner = max((r.inner for r in rs), default=1)
            prm = " ".join(f"{n}={v}" for n, v in k.sizes[s].items())
            per.append(f"{s} {prm} ({k.points(k.sizes[s]) / 1e6:.2f} M pts/call, x{inner})")
        print(
            f"  {k.name:16} {k.elem:6} {k.stencil_points:2}-pt {k.flops:2} "
            f"{'op' if k.integer else 'flop'}/pt {k.bytes:2} B/pt{' iterated' * k.iterated}; "
            f"{'; '.join(per)}"
        )
    print()


def variant_lines(variants) -> list[str]:
    out, shown = ["variants:"], set()
    for v in variants:
        if v.reference_only or v.label in shown:
            continue
        shown.add(v.label)
        extra = f"  [unavailable: {v.unavailable}]" if v.unavailable else ""
        flags = v.flags_text().replace(f"-polly-num-threads={v.threads}", "-polly-num-threads=T")
        flags = flags.replace(f"-ftree-parallelize-loops={v.threads}", "-ftree-parallelize-loops=T")
        out.append(f"  {v.label:22} {v.env_text()}{flags} -shared -fPIC{extra}")
    return out


def geomean_lines(results: list[Result], sizes) -> list[str]:
    """Per size: the geometric mean over kernels of each variant's speed ratio to gcc -O3."""
    out = []
    for size in sizes:
        rs = [r for r in results if r.size == size and r.time and not r.copied_from_serial]
        base = {r.kernel: r.time for r in rs if r.variant == "gcc"}
        ratios: dict[str, list[float]] = {}
        for r in rs:
            if r.variant != "gcc" and r.kernel in base:
                ratios.setdefault(variant_label(r), []).append(base[r.kernel] / r.time)
        parts = [
            f"{label} {math.exp(sum(map(math.log, xs)) / len(xs)):.2f}x ({len(xs)})"
            for label, xs in ratios.items()
        ]
        out.append(f"geomean speed vs gcc -O3, {size} (kernels): " + ", ".join(parts))
    return out


def parallel_notes(builds, variants) -> list[str]:
    out = []
    for v in variants:
        if not v.parallel or v.unavailable:
            continue
        serial = [k for (k, key), b in builds.items() if key == v.key and b.lib and
                  not b.parallel_code]  # fmt: skip
        if serial:
            every = len(serial) == sum(1 for (_, key) in builds if key == v.key)
            names = "any kernel" if every else ", ".join(serial)
            out.append(f"{v.label} {v.threads}T: no parallel code (no OpenMP, thread or "
                       f"pycc-stencil runtime use) for {names}: not run")  # fmt: skip
    return out


def pass_remark_lines(builds) -> list[str]:
    """What the passes of each pycc-tile pipeline said (passed, missed) about each kernel, from
    the 1-thread build (the T-thread ones are the same code)."""
    out = []
    for (kname, _key), b in builds.items():
        v = b.variant
        if v.family != "pycc-tile" or v.threads != 1 or not b.lib:
            continue
        said = dict.fromkeys(
            r.split(" remark: ", 1)[-1] for r in b.pycc_remarks if "-Rpass-analysis" not in r
        )
        out.append(f"{v.label} / {kname}: " + ("; ".join(said) or "no remark"))
    return out


def pycc_notes(builds) -> list[str]:
    out = []
    for (kname, _key), b in sorted(builds.items()):
        if not b.variant.pycc:
            continue
        if b.error:
            out.append(f"{b.variant.label} {kname}: build failed: {b.error}")
        elif b.pycc_status != "pycc-stencil":
            out.append(f"{b.variant.label} {kname}: compiled by cc ({b.pycc_status})")
    return out


if __name__ == "__main__":
    sys.exit(main())
