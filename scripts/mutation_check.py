#!/usr/bin/env python3
"""Mutation check: do the tests notice when a pass does nothing, or when tiled code is wrong?

For each mutation it runs the test files PLAN lists for it (data: edit PLAN or give `--plan`)
with the mutation applied in the pytest process and in every process the tests start
(compiler-mode `pycc-stencil` builds included): scripts/mutation_hooks.py, copied as
`sitecustomize.py` into a temporary directory put on PYTHONPATH, reads MUTATION_CHECK. A
baseline run of the same files without a mutation comes first; a mutation is caught when some
test fails with it and passed in the baseline. Mutations:

  noop:PASS               PASS (its registry entry) returns the module unchanged, no remarks
  broken:last-iteration   generated polyhedral code: the first loop of every nest stops one
                          iteration early (the last wavefront / row of tiles never runs)
  broken:large-inverted   the `-large` passes' run-time size check is inverted (tiled code on
                          small data, the original nest on large data: both bit-exact, so only
                          a test that checks which code ran notices)
  broken:trap-tiled       the generated (tiled) branch traps: counts the tests that run it

Prints a Markdown table; the exit status is 1 when a mutation is not caught or a plan entry
selects no test (a renamed file or test), 0 otherwise.

    .venv/bin/python scripts/mutation_check.py                         # every mutation of PLAN
    .venv/bin/python scripts/mutation_check.py --only noop:tile,noop:time-tile -- -n 2
    .venv/bin/python scripts/mutation_check.py --plan plan.json    # {"noop:tile": ["tests/x.py"]}

Everything after `--` goes to every pytest run (`-n 2`, `-k EXPR`, ...). A plan entry is one
pytest run: a file, a node id, or a file with options (`"tests/test_tiling.py -k time"`).
The mutations act on the registry and the code generator only: a test that calls a pass
function directly (not through a pipeline) still gets the real pass.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_TILING = ["tests/test_tiling.py", "tests/test_diamond_tile.py", "tests/test_pointer_swap.py"]
#: mutation -> the pytest runs (files, node ids, options) that must notice it
PLAN: dict[str, list[str]] = {
    "noop:unroll": ["tests/test_unroll.py", "tests/test_unroll_rotated.py"],
    "noop:simd": ["tests/test_simd.py"],
    "noop:align": ["tests/test_align.py"],
    "noop:unroll-full": ["tests/test_full_unroll.py"],
    "noop:unroll-jam": ["tests/test_unroll_jam.py"],
    "noop:swap-unroll": ["tests/test_pointer_swap.py"],
    "noop:tile": ["tests/test_tiling.py"],
    "noop:time-tile": _TILING,
    "noop:time-tile-large": ["tests/test_large_tiles.py", "tests/test_pointer_swap.py"],
    "noop:diamond-tile": ["tests/test_diamond_tile.py"],
    "noop:parallelogram-tile": ["tests/test_tiling.py", "tests/test_diamond_tile.py"],
    "noop:overlap-tile": ["tests/test_overlap_tile.py", "tests/test_tiling.py"],
    "noop:fuse-tile": ["tests/test_fuse_tile.py"],
    "noop:fuse-tile-large": ["tests/test_fuse_tile.py"],
    "broken:last-iteration": ["tests/test_large_tiles.py", *_TILING, "tests/test_fuse_tile.py"],
    "broken:large-inverted": ["tests/test_large_tiles.py", "tests/test_pointer_swap.py"],
    "broken:trap-tiled": [
        "tests/test_large_tiles.py",
        "tests/test_diamond_tile.py",
        "tests/test_fuse_tile.py",
    ],
}


@dataclass
class Run:
    """One pytest run: which tests ran, which failed (or errored), how it ended."""

    ran: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    status: int = 0
    seconds: float = 0.0
    log: str = ""

    @property
    def problem(self) -> str | None:
        if self.status == 5 or (self.status == 0 and not self.ran):
            return "selects no test"
        if self.status not in (0, 1):
            return f"pytest exit status {self.status} (see {self.log})"
        return None


def run_pytest(entry: str, mutation: str | None, extra: list[str], scratch: str) -> Run:
    """`pytest entry extra` with `mutation` (None: none) in every Python process it starts."""
    name = f"{len(os.listdir(scratch))}-{mutation or 'baseline'}".replace(":", "-")
    site = os.path.join(scratch, "site")
    junit = os.path.join(scratch, name + ".xml")
    log = os.path.join(scratch, name + ".log")
    env = dict(os.environ)
    env.pop("MUTATION_CHECK", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [site, env.get("PYTHONPATH")] if p)
    if mutation:
        env["MUTATION_CHECK"] = mutation
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=line"]
    command += [f"--junitxml={junit}", *shlex.split(entry), *extra]
    started = time.perf_counter()
    with open(log, "w") as output:
        status = subprocess.run(command, cwd=ROOT, env=env, stdout=output, stderr=output).returncode
    run = Run(status=status, seconds=time.perf_counter() - started, log=log)
    if os.path.exists(junit):
        for case in ET.parse(junit).iter("testcase"):
            test = f"{case.get('classname')}::{case.get('name')}"
            if case.find("skipped") is not None:
                continue
            run.ran.add(test)
            if case.find("failure") is not None or case.find("error") is not None:
                run.failed.add(test)
    return run


def check_mutations(mutations: list[str]) -> None:
    """Every mutation is known and every noop:PASS names a registered pass (a typo would make
    every pipeline fail: a mutation caught for the wrong reason)."""
    from pycc_stencil.ir_passes.pipeline import REGISTRY, load_passes

    sys.path.insert(0, HERE)
    from mutation_hooks import BROKEN

    load_passes()
    for mutation in mutations:
        kind, _, what = mutation.partition(":")
        known = REGISTRY if kind == "noop" else BROKEN if kind == "broken" else {}
        if not what or any(name not in known for name in what.split("+")):
            sys.exit(f"mutation_check: unknown mutation {mutation!r}")


@dataclass
class Row:
    """One mutation's result over its plan entries."""

    mutation: str
    entries: list[str]
    ran: int = 0
    failed: int = 0
    new: list[str] = field(default_factory=list)  # fail with it, pass without it
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    #: (entry, tests, failed, failed and passing without it) of each pytest run
    runs: list[tuple[str, int, int, int]] = field(default_factory=list)

    @property
    def caught(self) -> bool:
        return bool(self.new) and not self.problems


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def measure(plan: dict[str, list[str]], extra: list[str], scratch: str) -> tuple[dict, list[Row]]:
    """The baseline run of every entry, then each mutation's runs."""
    baseline: dict[str, Run] = {}
    for entry in dict.fromkeys(e for entries in plan.values() for e in entries):
        _progress(f"baseline: {entry} ...")
        run = baseline[entry] = run_pytest(entry, None, extra, scratch)
        _progress(f"  {len(run.ran)} ran, {len(run.failed)} failed, {run.seconds:.0f} s")
    rows = []
    for mutation, entries in plan.items():
        row = Row(mutation, entries)
        for entry in entries:
            _progress(f"{mutation}: {entry} ...")
            run = run_pytest(entry, mutation, extra, scratch)
            problem = run.problem or baseline[entry].problem
            if problem:
                row.problems.append(f"{entry}: {problem}")
            fresh = sorted(run.failed - baseline[entry].failed)
            row.runs.append((entry, len(run.ran), len(run.failed), len(fresh)))
            row.ran += len(run.ran)
            row.failed += len(run.failed)
            row.new += fresh
            row.seconds += run.seconds
            _progress(f"  {len(run.ran)} ran, {len(run.failed)} failed, {run.seconds:.0f} s")
        rows.append(row)
    return baseline, rows


def report(baseline: dict[str, Run], rows: list[Row]) -> None:
    print("| mutation | test runs | tests | failed | failed, passing without it | caught | s |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        verdict = "yes" if row.caught else "**NO**"
        if row.problems:
            verdict += f" ({'; '.join(row.problems)})"
        print(
            f"| {row.mutation} | {' '.join(row.entries)} | {row.ran} | {row.failed} "
            f"| {len(row.new)} | {verdict} | {row.seconds:.0f} |"
        )
    print("\nPer test run (failed only with the mutation / tests):")
    for row in rows:
        parts = [f"{entry} {new}/{ran}" for entry, ran, _, new in row.runs]
        print(f"  {row.mutation}: {', '.join(parts)}")
    ran = sum(len(r.ran) for r in baseline.values())
    failing = sorted(t for r in baseline.values() for t in r.failed)
    seconds = sum(r.seconds for r in baseline.values())
    print(f"\nbaseline (no mutation): {ran} tests, {len(failing)} failed, {seconds:.0f} s")
    for test in failing:
        print(f"  baseline failure: {test}")
    for row in rows:
        for test in row.new[:3]:
            print(f"  {row.mutation} fails e.g. {test}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated mutations of the plan to run")
    parser.add_argument("--plan", help='JSON {"mutation": ["pytest run", ...]}, replaces PLAN')
    parser.add_argument("--keep", action="store_true", help="keep the logs and JUnit files")
    args = parser.parse_args(argv)
    plan = PLAN
    if args.plan:
        with open(args.plan) as handle:
            plan = json.load(handle)
    if args.only:
        wanted = args.only.split(",")
        missing = [m for m in wanted if m not in plan]
        if missing:
            parser.error(f"not in the plan: {', '.join(missing)} (plan: {', '.join(plan)})")
        plan = {m: plan[m] for m in wanted}
    check_mutations(list(plan))

    scratch = tempfile.mkdtemp(prefix="mutation-check-")
    site = os.path.join(scratch, "site")
    os.makedirs(site)
    shutil.copy(os.path.join(HERE, "mutation_hooks.py"), os.path.join(site, "sitecustomize.py"))
    baseline, rows = measure(plan, extra, scratch)
    report(baseline, rows)
    if args.keep:
        print(f"logs: {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if all(row.caught for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
