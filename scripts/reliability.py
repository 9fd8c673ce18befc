#!/usr/bin/env python3
"""Reliability of the drop-in compiler: random programs built with `cc` and with
`CC=pycc-stencil`, run, compared.

Programs come from csmith (when installed; every seed reproducible) and from the stencil
generator next to this script (scripts/stencil_gen.py: iterated stencils, pipelines and
reductions that pycc-stencil's passes are written for). Every program is built, as a user's
Makefile would, at -O2, -O3 and -O3 -march=native and with `-fpycc-passes=PIPELINE` forcing
pycc-stencil's passes onto its kernels (one pipeline per program, rotating; `--all-pipelines`
for every one), once with `cc` and once with `pycc-stencil`, in sibling directories. Then:

- a **break** is a pycc-stencil build that fails where cc's succeeds (or succeeds where cc's
  fails), a traceback or internal error, diagnostics other than cc's (fallback warnings
  `[-Wpycc-fallback]` aside), or build files whose names or modes differ from cc's;
- a **miscompile** is a run whose standard output, exit status or written files differ from
  the cc-built program's, or that does not finish when cc's does;
- a **timeout** is a program whose cc-built run does not finish: it proves nothing.

The `PYCC_REPORT` lines say how many functions pycc-stencil really compiled (a run where
everything went to cc proves little) and in how many a pass fired (`-Rpass=` remarks).

    .venv/bin/python scripts/reliability.py [--count N] [--seed S] [--jobs J] [--quick]
        [--sources stencil,csmith] [--configs O2,O3,...] [--all-pipelines] [--timeout SECONDS]
        [--keep DIR] [--markdown docs/reliability.md] [--program NAME]...

SIGINT or SIGTERM stops the run: the programs under way finish, the summary covers the
finished ones (it says how many of how many). Results: docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import stencil_gen  # noqa: E402  (scripts/ is not a package)
from machine import cpu_name  # noqa: E402

CSMITH = shutil.which("csmith")
CSMITH_INCLUDE = "/usr/include/csmith"
#: csmith options that keep its programs within what pycc-stencil takes over (no globals, no
#: volatile, structs, unions, bit-fields or goto); main then also checksums func_1's result
CSMITH_KERNEL_OPTIONS = (
    "--no-global-variables --no-volatiles --no-volatile-pointers --no-structs --no-unions "
    "--no-bitfields --no-packed-struct --no-jumps --max-funcs 4"
).split()
#: the optimization levels every program is built at
LEVELS = {
    "O2": ("-O2",),
    "O3": ("-O3",),
    "O3-native": ("-O3", "-march=native"),
    # threads: gcc runs the programs (no pragmas) serially, pycc-stencil its sweeps and tiles
    # on the OpenMP runtime
    "O3-openmp": ("-O3", "-march=native", "-fopenmp"),
}
#: pipelines forced onto every program's kernels (at -O2), and onto the stencil programs only
PIPELINES = ("auto", "unroll(4)", "unroll-jam(2),simd", "unroll-full,simd")
STENCIL_PIPELINES = (
    "time-tile(3,5,7,5)",
    "diamond-tile(2,7,5,5)",
    "overlap-tile(2,5,7,5)",
    "fuse-tile(5,7,5)",
    "tile(5,7,5)",
    "swap-unroll,time-tile(2,9,5,5)",
    "stream-sweep",
    "parallel-sweep",
)
FALLBACK = "[-Wpycc-fallback]"
#: the statuses the summary lists one by one, and that make the exit status 1
FAILURES = ("break", "miscompile", "error")
#: ... and the differences that are only floating-point contraction (listed, not failures)
LISTED = (*FAILURES, "contraction")
BUILD_TIMEOUT = 600.0


@dataclass(frozen=True)
class Program:
    """A generated C program and the flags it is built with."""

    name: str
    kind: str  # "stencil" or "csmith"
    seed: int
    source: str
    cflags: tuple[str, ...]
    origin: str  # how to make the source again


@dataclass(frozen=True)
class Config:
    """A configuration: the flags both compilers get, and pycc-stencil's own."""

    name: str
    flags: tuple[str, ...]
    pycc_flags: tuple[str, ...] = ()


@dataclass
class Build:
    """One side's build and run of one program in one configuration."""

    directory: Path
    commands: list[list[str]]
    returncode: int
    stderr: str
    files: dict[str, int] = field(default_factory=dict)  # name -> mode after the build
    run_code: int | None = None
    stdout: str = ""
    outputs: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    timed_out: bool = False


@dataclass
class Outcome:
    """The verdict for one (program, configuration)."""

    program: str
    kind: str
    config: str
    status: str  # ok, break, miscompile, contraction, timeout, cc-failed, error
    detail: str = ""
    built: bool = False  # by both compilers
    kernels: int = 0
    taken: int = 0
    fired: int = 0
    reproducer: str = ""


@dataclass(frozen=True)
class Task:
    """What a worker needs: the program's name, where to work, what to build it with."""

    name: str
    root: Path
    pycc: str
    cc: str
    configs: tuple[str, ...]
    all_pipelines: bool
    timeout: float


# --------------------------------------------------------------------------------------------
# Programs


def csmith_program(seed: int) -> Program:
    """csmith's program of `seed`: every third one as csmith makes it by default (globals,
    volatiles: mostly left to cc), the others restricted so that functions are taken over."""
    options = [] if seed % 3 == 0 else CSMITH_KERNEL_OPTIONS
    command = [CSMITH or "csmith", "--seed", str(seed), *options]
    with tempfile.TemporaryDirectory() as scratch:  # csmith writes platform.info there
        run = subprocess.run(command, cwd=scratch, capture_output=True, text=True, check=True)
    source = run.stdout
    if options:
        source = checksum_func_1(source)
    origin = shlex.join(["csmith", "--seed", str(seed), *options])
    return Program(f"csmith-{seed}", "csmith", seed, source, (f"-I{CSMITH_INCLUDE}",), origin)


def checksum_func_1(source: str) -> str:
    """Without global variables csmith's checksum is always 0: fold func_1's result in (when
    it is an integer, not a pointer)."""
    if not re.search(r"^static u?int\d+_t\s+func_1\(void\)", source, re.M):
        return source
    call = 'transparent_crc(func_1(), "func_1", print_hash_value);'
    return re.sub(r"^(\s*)func_1\(\);$", rf"\g<1>{call}", source, count=1, flags=re.M)


def stencil_program(seed: int) -> Program:
    generated = stencil_gen.generate(seed)
    origin = f"python3 scripts/stencil_gen.py {seed}"
    return Program(generated.name, "stencil", seed, generated.source, generated.cflags, origin)


SOURCES = {"stencil": stencil_program, "csmith": csmith_program}


def parse_name(name: str) -> tuple[str, int]:
    """`stencil-12` -> ("stencil", 12); ValueError for anything else."""
    kind, _, seed = name.rpartition("-")
    if kind not in SOURCES or not seed.isdigit():
        raise ValueError(f"unknown program '{name}' (expected stencil-SEED or csmith-SEED)")
    return kind, int(seed)


def program_named(name: str) -> Program:
    """The program of that name and seed."""
    kind, seed = parse_name(name)
    return SOURCES[kind](seed)


def program_names(count: int, seed: int, sources: list[str]) -> list[str]:
    """`count` programs from seed on, the sources taking turns."""
    return [f"{sources[i % len(sources)]}-{seed + i}" for i in range(count)]


def configs_for(program: Program, names: tuple[str, ...], all_pipelines: bool) -> list[Config]:
    """The optimization levels, then one forced pipeline (rotating by seed) or all of them."""
    configs = [Config(n, LEVELS[n]) for n in names if n in LEVELS]
    if "passes" not in names:
        return configs
    pipelines = PIPELINES + (STENCIL_PIPELINES if program.kind == "stencil" else ())
    turn = program.seed // 2  # the sources take turns by seed: every pipeline meets each
    chosen = pipelines if all_pipelines else (pipelines[turn % len(pipelines)],)
    forced = [Config(f"passes={p}", LEVELS["O2"], _forcing(p)) for p in chosen]
    return configs + forced


def _forcing(pipeline: str) -> tuple[str, ...]:
    """pycc-stencil's flags forcing `pipeline` (with threads for the parallel passes)."""
    threads = ("-fpycc-parallel",) if "parallel" in pipeline else ()
    return (f"-fpycc-passes={pipeline}", *threads)


# --------------------------------------------------------------------------------------------
# Building and running one side


def clean_env(cache: Path) -> dict[str, str]:
    """The caller's environment without PYCC_* or make variables; a private pycc cache."""
    drop = ("CC", "CFLAGS", "LDFLAGS", "MAKEFLAGS")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYCC_") and k not in drop}
    # every kernel pycc-stencil can compile, not only those a pass improves: its code is tested
    env.update(LC_ALL="C", PYCC_CACHE_DIR=str(cache), PYCC_TAKEOVER="all")
    return env


def build_commands(compiler: str, flags: tuple[str, ...], program: Program) -> list[list[str]]:
    """Half of the programs compile and link in one command, the others compile with -c,
    then link (by seed // 4: independent of the source and of the forced pipeline)."""
    if program.seed // 4 % 2 == 0:
        return [[compiler, *flags, *program.cflags, "prog.c", "-o", "prog"]]
    return [
        [compiler, *flags, *program.cflags, "-c", "prog.c", "-o", "prog.o"],
        [compiler, *flags, "prog.o", "-o", "prog"],
    ]


def modes(directory: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mode & 0o7777 for p in directory.iterdir()}


def build_and_run(
    directory: Path, commands: list[list[str]], env: dict[str, str], timeout: float, source: str
) -> Build:
    """Build in a fresh `directory`, then run `./prog` there if it built."""
    directory.mkdir(parents=True)
    (directory / "prog.c").write_text(source)
    stderr, code = "", 0
    for command in commands:
        proc = subprocess.run(
            command, cwd=directory, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT
        )
        stderr += proc.stderr
        code = proc.returncode
        if code:
            break
    build = Build(directory, commands, code, stderr, modes(directory))
    if code == 0:
        run_program_binary(build, env, timeout)
    return build


def run_program_binary(build: Build, env: dict[str, str], timeout: float) -> None:
    """Run the program; record its output, exit status and the files it wrote."""
    try:
        proc = subprocess.run(
            ["./prog"], cwd=build.directory, env=env, capture_output=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        build.timed_out = True
        return
    except OSError as error:  # not executable: shows as a difference from cc's run
        build.stdout = f"cannot run ./prog: {error.strerror}"
        return
    build.run_code, build.stdout = proc.returncode, proc.stdout.decode(errors="replace")
    for path in sorted(build.directory.iterdir()):
        if path.name not in build.files:
            build.outputs[path.name] = (path.stat().st_mode & 0o7777, path.read_bytes())


# --------------------------------------------------------------------------------------------
# Comparing the sides


def diagnostics_differ(cc: str, pycc: str) -> str:
    """The lines one side printed and the other did not (pycc's fallback warnings aside)."""
    extra = Counter(pycc.splitlines()) - Counter(cc.splitlines())
    missing = Counter(cc.splitlines()) - Counter(pycc.splitlines())
    extra = Counter({line: n for line, n in extra.items() if FALLBACK not in line})
    lines = [f"+ {line}" for line in extra] + [f"- {line}" for line in missing]
    return "\n".join(lines[:6])


def build_break(cc: Build, pycc: Build) -> str:
    """Why pycc-stencil's build is not cc's, or "" when it is."""
    if "Traceback" in pycc.stderr or "internal error" in pycc.stderr:
        return "crash: " + pycc.stderr.strip().splitlines()[-1]
    if pycc.returncode != cc.returncode:
        first = first_line_of(pycc.stderr)
        return f"exit status {pycc.returncode} (cc: {cc.returncode}): {first}"
    differ = diagnostics_differ(cc.stderr, pycc.stderr)
    if differ:
        return "diagnostics differ:\n" + differ
    if pycc.files != cc.files:
        return f"build files differ: {oct_modes(pycc.files)} (cc: {oct_modes(cc.files)})"
    return ""


def oct_modes(files: dict[str, int]) -> str:
    return ", ".join(f"{name} {mode:o}" for name, mode in sorted(files.items()))


def run_difference(cc: Build, pycc: Build) -> str:
    """How the pycc-built run differs from the cc-built one, or ""."""
    if pycc.timed_out:
        return "does not finish (cc's build does)"
    if pycc.stdout != cc.stdout:
        ours, theirs = pycc.stdout.splitlines(), cc.stdout.splitlines()
        first = next(
            (f"{a!r} (cc: {b!r})" for a, b in zip(ours, theirs) if a != b),
            f"{len(ours)} lines (cc: {len(theirs)})",
        )
        return "stdout differs: " + first
    if pycc.run_code != cc.run_code:
        return f"exit status {pycc.run_code} (cc: {cc.run_code})"
    if pycc.outputs != cc.outputs:
        return f"written files differ: {sorted(pycc.outputs)} (cc: {sorted(cc.outputs)})"
    return ""


def takeover(report: Path) -> tuple[int, int, int]:
    """(kernels, functions pycc-stencil compiled, functions in which a pass fired)."""
    kernels = taken = fired = 0
    if not report.exists():
        return 0, 0, 0
    for line in report.read_text().splitlines():
        for function in json.loads(line).get("functions", []):
            kernels += bool(function.get("kernel"))
            if function.get("compiled_by") == "pycc-stencil":
                taken += 1
                fired += any("[-Rpass=" in r for r in function.get("remarks", []))
    return kernels, taken, fired


def same_run(cc: Build, pycc: Build) -> bool:
    """Both built and ran to the same output, exit status and files (breaks aside)."""
    ran = cc.run_code is not None and pycc.run_code is not None
    return ran and not cc.timed_out and run_difference(cc, pycc) == ""


def verdict(cc: Build, pycc: Build) -> tuple[str, str]:
    """(status, detail) of one configuration: a miscompile outranks a break, which outranks
    a timeout; the detail names every problem found, so one does not hide another."""
    broken = build_break(cc, pycc)
    if cc.returncode or pycc.returncode:
        return ("break", broken) if broken else ("cc-failed", first_line_of(cc.stderr))
    if cc.timed_out:
        return ("break", broken) if broken else ("timeout", "the cc-built program does not finish")
    wrong = run_difference(cc, pycc)
    if wrong:
        return "miscompile", "\n".join(filter(None, [wrong, broken]))
    return ("break", broken) if broken else ("ok", "")


def first_line_of(text: str) -> str:
    return (text.strip().splitlines() or [""])[0]


def reproducer(program: Program, config: Config) -> str:
    """A shell command that builds the failing case again from nothing."""
    flags = (*config.flags, *config.pycc_flags, *program.cflags)
    return (
        f"{program.origin} > prog.c && pycc-stencil {shlex.join(flags)} prog.c -o prog && ./prog"
        f"   # or: scripts/reliability.py --program {program.name} --configs {config.name}"
    )


def sides(
    task: Task, program: Program, config: Config, builds: dict, extra: tuple[str, ...] = ()
) -> tuple[Build, Build, Path]:
    """cc's build and run (one per set of flags, shared by the configurations) and
    pycc-stencil's, with its report, of `program` in `config` (plus `extra` flags)."""
    root = task.root / program.name
    env = clean_env(task.root / "cache")
    flags = config.flags + extra
    if flags not in builds:
        side = root / ("cc" + "".join(flags).replace("=", "-"))
        commands = build_commands(task.cc, flags, program)
        builds[flags] = build_and_run(side, commands, env, task.timeout, program.source)
    cc = builds[flags]
    number = len(list(root.glob("pycc-*")))
    report = root / f"report-{number}.jsonl"
    commands = build_commands(task.pycc, flags + config.pycc_flags, program)
    # a pycc-built program that hangs is a miscompile: give it the time cc's took and more
    limit = task.timeout if cc.timed_out else task.timeout * 3
    pycc_env = dict(env, PYCC_REPORT=str(report))
    pycc = build_and_run(root / f"pycc-{number}", commands, pycc_env, limit, program.source)
    return cc, pycc, report


def run_task(task: Task) -> list[Outcome]:
    """Build and compare one program in every configuration (runs in a worker process).

    A run that differs is built again by both with -ffp-contract=off: where that makes them
    agree, the difference is only which a*b+c each compiler fused (gcc's GNU modes allow it,
    and so does pycc-stencil), reported apart as "contraction"."""
    program = program_named(task.name)
    builds: dict[tuple[str, ...], Build] = {}
    outcomes = []
    for config in configs_for(program, task.configs, task.all_pipelines):
        cc, pycc, report = sides(task, program, config, builds)
        status, detail = verdict(cc, pycc)
        if status == "miscompile" and "-ffp-contract=off" not in program.cflags:
            strict = sides(task, program, config, builds, ("-ffp-contract=off",))[:2]
            if same_run(*strict):
                status, detail = "contraction", f"{detail} (same with -ffp-contract=off)"
        built = cc.returncode == pycc.returncode == 0
        outcome = Outcome(program.name, program.kind, config.name, status, detail, built)
        outcome.kernels, outcome.taken, outcome.fired = takeover(report)
        if status in LISTED:
            outcome.reproducer = reproducer(program, config)
            (pycc.directory / "repro.sh").write_text(
                "#!/bin/sh\n# cc: " + shlex.join(cc.commands[0]) + "\n" + outcome.reproducer + "\n"
            )
        outcomes.append(outcome)
    return outcomes


# --------------------------------------------------------------------------------------------
# The run and its summary


def machine() -> str:
    """The CPU's name and the number of cores this process may use."""
    return f"{cpu_name()}, {len(os.sched_getaffinity(0))} cores"


def first_line(command: list[str]) -> str:
    """The first line `command` prints (run in a scratch directory: csmith writes files)."""
    try:
        with tempfile.TemporaryDirectory() as scratch:
            run = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
        out = run.stdout
    except OSError:
        return "not installed"
    return (out.strip().splitlines() or ["?"])[0]


def git_commit() -> str:
    head = first_line(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"])
    dirty = first_line(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"])
    return head + (" (with uncommitted changes)" if dirty not in ("?", "") else "")


@dataclass
class Row:
    """The counts of one configuration (of one source, or of all)."""

    programs: int = 0
    built: int = 0
    with_takeover: int = 0
    kernels: int = 0
    taken: int = 0
    fired: int = 0
    statuses: Counter = field(default_factory=Counter)

    def add(self, outcome: Outcome) -> None:
        self.programs += 1
        self.built += outcome.built
        self.with_takeover += outcome.taken > 0
        self.kernels += outcome.kernels
        self.taken += outcome.taken
        self.fired += outcome.fired
        self.statuses[outcome.status] += 1

    def cells(self) -> list[str]:
        rate = f"{100 * self.taken / self.kernels:.0f}%" if self.kernels else "-"
        return [
            str(self.programs),
            str(self.built),
            f"{self.with_takeover} ({rate} of {self.kernels} kernels)",
            f"{self.taken} / {self.fired}",
            str(self.statuses["break"]),
            str(self.statuses["miscompile"]),
            str(self.statuses["contraction"]),
            str(self.statuses["timeout"]),
        ]


HEADER = [
    "configuration",
    "programs",
    "built by both",
    "programs with takeover",
    "functions taken over / with a pass fired",
    "breaks",
    "miscompiles",
    "FP contraction only",
    "timeouts",
]


def rows_of(outcomes: list[Outcome]) -> dict[str, Row]:
    """One row per configuration (forced pipelines together), in order, then the total."""
    rows: dict[str, Row] = {}
    for outcome in outcomes:
        name = "passes=..." if outcome.config.startswith("passes=") else outcome.config
        rows.setdefault(name, Row()).add(outcome)
        rows.setdefault("all", Row()).add(outcome)
    return dict(sorted(rows.items(), key=lambda r: r[0] == "all"))


def markdown(outcomes: list[Outcome], requested: int, command: str, seconds: float) -> str:
    """The summary: when, where, what ran, the counts per source and configuration, failures."""
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    programs = sorted({o.program for o in outcomes})
    text = [
        "# Reliability of `CC=pycc-stencil` against `cc`",
        "",
        "Written by `scripts/reliability.py` (what it checks: its docstring).",
        "",
        f"- date: {when}; wall time {seconds / 60:.1f} min",
        f"- commit: {git_commit()}",
        f"- machine: {machine()}",
        f"- cc: {first_line(['cc', '--version'])}; csmith: {first_line(['csmith', '--version'])}",
        f"- command: `{command}`",
        f"- programs: {len(programs)} of {requested} "
        f"({sum(p.startswith('stencil') for p in programs)} generated stencil programs, "
        f"{sum(p.startswith('csmith') for p in programs)} csmith programs)",
        "",
    ]
    for kind in ("stencil", "csmith", None):
        chosen = [o for o in outcomes if kind in (None, o.kind)]
        if not chosen:
            continue
        text += [f"## {kind or 'all'} programs", "", table(rows_of(chosen)), ""]
    failures = [o for o in outcomes if o.status in LISTED]
    text += ["## Breaks, miscompiles, contraction differences, harness errors", ""]
    if not failures:
        text.append("None.")
    for o in failures:
        detail = o.detail.replace("\n", " / ")
        text += [f"- **{o.status}** `{o.program}` `{o.config}`: {detail}", f"  `{o.reproducer}`"]
    return "\n".join(text) + "\n"


def table(rows: dict[str, Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join([name, *row.cells()]) + " |" for name, row in rows.items()]
    return "\n".join(lines)


def write_markdown(path: Path, summary: str) -> None:
    """Replace the generated summary; keep what a person wrote below the marker line."""
    marker = "<!-- written by hand below this line: kept by scripts/reliability.py -->"
    kept = ""
    if path.exists() and marker in path.read_text():
        kept = path.read_text().split(marker, 1)[1]
    path.write_text(summary + "\n" + marker + kept)


def progress(total: int):
    """A rich progress bar when rich is installed, else a line per program on stderr."""
    try:
        from rich.progress import Progress
    except ImportError:
        return None
    bar = Progress(transient=False)
    return bar, bar.add_task("programs", total=total)


def run_all(tasks: list[Task], jobs: int) -> list[Outcome]:
    """Every task on `jobs` worker processes, with progress."""
    outcomes: list[Outcome] = []
    shown = progress(len(tasks))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_task, t): t.name for t in tasks}
        if shown:
            shown[0].start()
        try:
            for done, future in enumerate(as_completed(futures), 1):
                results = finished(future, futures[future])
                outcomes += results
                bad = [
                    f"{o.config}: {o.status} {first_line_of(o.detail)[:120]}"
                    for o in results
                    if o.status != "ok"
                ]
                line = f"{futures[future]}: " + ("; ".join(bad) or "ok")
                if shown:
                    shown[0].console.print(line)
                    shown[0].update(shown[1], completed=done)
                else:
                    print(f"[{done}/{len(tasks)}] {line}", file=sys.stderr)
        except KeyboardInterrupt:
            # summarize what finished: the programs still running end, the others never start
            print("interrupted: summarizing the finished programs", file=sys.stderr)
            pool.shutdown(wait=True, cancel_futures=True)
        finally:
            if shown:
                shown[0].stop()
    return sorted(outcomes, key=lambda o: (o.program, o.config))


def finished(future, name: str) -> list[Outcome]:
    """The outcomes of a task; a harness error (csmith missing, a full disk) is one too."""
    try:
        return future.result()
    except Exception as error:  # reported in the summary, the other programs still run
        kind = name.rpartition("-")[0]
        return [Outcome(name, kind, "-", "error", f"{type(error).__name__}: {error}")]


def keep_failures(outcomes: list[Outcome], root: Path, keep: Path) -> None:
    """Copy each failing program's directory (sources, both builds, repro.sh) to `keep`."""
    for name in sorted({o.program for o in outcomes if o.status in LISTED}):
        shutil.copytree(root / name, keep / name, dirs_exist_ok=True, symlinks=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, help="programs to generate (default 300)")
    parser.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--quick", action="store_true", help="20 programs")
    parser.add_argument("--sources", default="stencil,csmith", help="stencil, csmith or both")
    parser.add_argument(
        "--configs",
        default="O2,O3,O3-native,passes",
        help="of O2, O3, O3-native, O3-openmp, passes",
    )
    parser.add_argument("--all-pipelines", action="store_true", help="every forced pipeline")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per cc-built run")
    parser.add_argument("--keep", type=Path, help="copy failing cases (with repro.sh) here")
    parser.add_argument("--markdown", type=Path, help="write the summary here")
    parser.add_argument("--program", action="append", help="only this program (csmith-7)")
    parser.add_argument("--pycc", default=shutil.which("pycc-stencil", path=default_path()))
    parser.add_argument("--cc", default="cc")
    args = parser.parse_args(argv)
    if args.pycc is None:
        parser.error("pycc-stencil is not installed (pip install -e . in a venv)")
    unknown = set(args.configs.split(",")) - {*LEVELS, "passes"}
    if unknown:
        parser.error(f"unknown configuration(s) {', '.join(sorted(unknown))}")
    return args


def default_path() -> str:
    """The running Python's scripts directory first (the venv's pycc-stencil), then PATH."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sources = [s for s in args.sources.split(",") if s != "csmith" or CSMITH]
    if "csmith" in args.sources and not CSMITH:
        print("csmith is not installed: generated stencil programs only", file=sys.stderr)
    count = args.count or (20 if args.quick else 300)
    names = args.program or program_names(count, args.seed, sources)
    try:
        for name in names:
            parse_name(name)
    except ValueError as error:
        print(f"reliability.py: error: {error}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # summarize, clean up, as ^C
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pycc-reliability-") as tmp:
        root = Path(tmp)
        configs = tuple(args.configs.split(","))
        tasks = [
            Task(n, root, args.pycc, args.cc, configs, args.all_pipelines, args.timeout)
            for n in names
        ]
        outcomes = run_all(tasks, args.jobs)
        if args.keep:
            keep_failures(outcomes, root, args.keep)
    command = "scripts/reliability.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    summary = markdown(outcomes, len(names), command, time.monotonic() - started)
    if args.markdown:
        write_markdown(args.markdown, summary)
    print(summary)
    failed = any(o.status in FAILURES for o in outcomes)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
