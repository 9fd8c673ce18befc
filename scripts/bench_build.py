"""What compiler mode costs a build: C files compiled with `cc` and with `pycc-stencil` (result
cache cold without and with the compile server, then warm), `--jobs` at a time as `make -jN`
would, in one run on one machine.

    .venv/bin/python scripts/bench_build.py [--flags="-O3 ..."] [--jobs 2] [--rounds 3] [FILE ...]

Without files it compiles the sources bundled here (`scripts/polybench/*.c`,
`tests/corpus/legacy/*.c`, `scripts/bench_kernels/*.c`): PolyBench-shaped kernels with their
`main`, legacy loop code, stencils. Each file is compiled on its own (`-c`, its directory on the
include path). Reported: wall time and the CPU time of the compilers (children's user + system,
and the benchmark's own compile server's with the steps it served), best of `--rounds`, the
ratios to cc's, and how many functions pycc-stencil took over (its report). The project's cost
targets (issue 14): 1.3x cc where nothing is taken over, 2x where kernels are.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ["scripts/polybench/*.c", "tests/corpus/legacy/*.c", "scripts/bench_kernels/*.c"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _server_cpu(pycc: str, env: dict, settle: bool = True) -> float:
    """CPU seconds of the compile server of `env` and of the steps it served (its reaped
    children, once they are: `settle`); 0 if none runs."""
    done = subprocess.run([pycc, "server", "status"], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return 0.0
    pid = done.stdout.split()[-1]
    if settle:
        time.sleep(1.5)  # the server reaps its finished children at least once a second
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _stop_server(pycc: str, env: dict) -> None:
    subprocess.run([pycc, "server", "stop"], env=env, capture_output=True)
    time.sleep(1.5)  # it notices within a second


def build(compiler: str, files: list[Path], flags: list[str], jobs: int, env: dict) -> tuple:
    """Compile every file; (wall seconds, CPU seconds of the compilers, the compile server's
    included: its steps are not this process's children)."""
    with tempfile.TemporaryDirectory(prefix="bench-build-") as out:

        def one(index_file: tuple[int, Path]) -> None:
            index, path = index_file
            command = [compiler, *flags, "-I", str(path.parent), "-c", str(path)]
            command += ["-o", f"{out}/{index}.o"]
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"{shlex.join(command)} failed:\n{done.stderr}")

        served = "PYCC_CACHE_DIR" in env and env.get("PYCC_SERVER") != "0"
        server = _server_cpu(compiler, env, settle=False) if served else 0.0
        cpu, started = _children_cpu(), time.perf_counter()
        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, enumerate(files)))
        wall, used = time.perf_counter() - started, _children_cpu() - cpu
        if served:
            used += _server_cpu(compiler, env) - server
        return wall, used


def taken_over(report: Path) -> tuple[int, int]:
    """(functions pycc-stencil compiled, loop functions) in a compiler-mode report."""
    taken = kernels = 0
    for line in report.read_text().splitlines():
        for function in json.loads(line)["functions"]:
            kernels += function["kernel"]
            taken += function["compiled_by"] == "pycc-stencil"
    return taken, kernels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--flags", default="-O3", help="the build's CFLAGS (--flags='-O2 -g')")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cc", default=os.environ.get("PYCC_CC", "cc"))
    parser.add_argument("--pycc", default=str(Path(sys.executable).parent / "pycc-stencil"))
    args = parser.parse_args()
    files = args.files or sorted(p for pattern in BUNDLED for p in ROOT.glob(pattern))
    flags = shlex.split(args.flags)
    base = {k: v for k, v in os.environ.items() if not k.startswith("PYCC_")}
    base["PYCC_CC"] = args.cc
    rows: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-build-cache-") as scratch:
        cache = Path(scratch, "cache")
        runtime = Path(scratch, "run")  # a compile server of the benchmark's own
        runtime.mkdir(mode=0o700)
        env = dict(base, PYCC_CACHE_DIR=str(cache), XDG_RUNTIME_DIR=str(runtime))
        alone = dict(env, PYCC_SERVER="0")
        for _ in range(args.rounds):
            for name, compiler, environment in (
                ("cc", args.cc, base),
                ("pycc-stencil, cache cold, no server", args.pycc, alone),
                ("pycc-stencil, cache cold, server started by the build", args.pycc, env),
                ("pycc-stencil, cache cold, server running", args.pycc, env),
                ("pycc-stencil, cache warm", args.pycc, env),
            ):
                if "cold" in name:
                    shutil.rmtree(cache, ignore_errors=True)
                if "started by the build" in name:
                    _stop_server(args.pycc, env)
                wall, cpu = build(compiler, files, flags, args.jobs, environment)
                best = rows.get(name, (wall, cpu))
                rows[name] = (min(best[0], wall), min(best[1], cpu))
        report = Path(scratch, "report.jsonl")  # untimed: a report makes every file analysed
        build(args.pycc, files, flags, args.jobs, dict(env, PYCC_REPORT=str(report)))
        taken, kernels = taken_over(report) if report.exists() else (0, 0)
        _stop_server(args.pycc, env)
    cpu_name = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if "model name" in line),
        "unknown CPU",
    )
    cc_version = subprocess.run([args.cc, "--version"], capture_output=True, text=True).stdout
    print(f"command: {shlex.join(sys.argv)}")
    print(f"machine: {cpu_name}, {os.cpu_count()} CPUs; cc: {cc_version.splitlines()[0]}")
    print(f"{len(files)} files, flags {args.flags!r}, {args.jobs} jobs, best of {args.rounds}")
    print(f"functions taken over: {taken} of {kernels} loop functions\n")
    print("| build | wall s | CPU s | wall / cc | CPU / cc |\n|---|---|---|---|---|")
    cc_wall, cc_cpu = rows["cc"]
    for name, (wall, cpu) in rows.items():
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {wall / cc_wall:.2f} | {cpu / cc_cpu:.2f} |")


if __name__ == "__main__":
    main()
