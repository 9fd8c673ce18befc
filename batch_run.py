"""`pycc-stencil batch` and `pycc_stencil.batch(...)`: every C file of a tree through one
target, each file a job (`batch_job`) in its own process, on local processes or a Dask
cluster, with one report (`batch_report`).

Results are content-addressed (the file's bytes, its flags, the tool's identity: version and
source hash, the target, the passes) in OUT/store, framed and written atomically as the
compiler mode's cache is: a batch run again after an edit or an interruption redoes only
the files whose key has no result, and a job Dask runs twice (a worker lost) stores the same
result twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

from .batch_job import Job, Record, pipeline
from .batch_sources import find_sources
from .executor import executor

#: seconds one file's job may take before it is recorded as timed out
JOB_TIMEOUT = 600.0


@dataclass(frozen=True)
class BatchSummary:
    files: int
    reused: int  # files whose records came from the store
    seconds: float


def batch(
    sources: Iterable[str],
    target: str = "host",
    out: str = "pycc-batch",
    flags: Iterable[str] = (),
    passes: str | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    timeout: float = JOB_TIMEOUT,
    progress: bool = False,
) -> list[Record]:
    """Every function of the C files under `sources` for `target`: lowered, compiled with
    `passes` (the target's strategy by default), emitted and checked against cc; writes
    OUT/report.json and OUT/report.html and returns the records. `jobs` local processes
    (default: the cores), or the Dask scheduler at `scheduler` ("tcp://HOST:PORT")."""
    started = time.perf_counter()
    files = find_sources(list(sources), list(flags))
    store = os.path.join(out, "store")
    wanted = {_key(Job(f, target, passes)): Job(f, target, passes) for f in files}
    records: dict[str, list[Record]] = {}
    for key in wanted:
        stored = _load(store, key)
        if stored is not None:
            records[key] = stored
    pending = {k: j for k, j in wanted.items() if k not in records}
    tasks = {key: (job, timeout) for key, job in pending.items()}
    # each job starts its own child process: local threads are enough to wait on them
    workers = executor(jobs, scheduler, threads=True)
    with workers, _Progress(len(wanted), len(records), progress) as shown:
        for key, found in workers.run(run_isolated_job, tasks):
            found = [Record(**r) for r in found]
            records[key] = found
            _save(store, key, found)
            shown.advance(found)
    ordered = [r for key in wanted for r in records[key]]
    summary = BatchSummary(len(wanted), len(wanted) - len(pending), time.perf_counter() - started)
    from .batch_report import write_report

    write_report(out, ordered, target, pipeline(target, passes), summary)
    return ordered


def _key(job: Job) -> str:
    from .dropin_cache import cache_key, tool_identity

    with open(job.source.path, "rb") as handle:
        text = handle.read()
    return cache_key(
        "batch",
        tool_identity("", None),  # its arguments are for the compiler mode; unused
        job.target,
        job.passes or "",
        job.source.path,
        "\0".join(job.source.flags),
        text,
    )


def _load(store: str, key: str) -> list[Record] | None:
    from .runtime.private_cache import read_entry

    payload = read_entry(store, key)
    return None if payload is None else [Record(**r) for r in json.loads(payload)]


def _save(store: str, key: str, records: list[Record]) -> None:
    from .runtime.private_cache import write_entry

    os.makedirs(store, mode=0o700, exist_ok=True)
    write_entry(store, key, json.dumps([asdict(r) for r in records]).encode())


def run_isolated_job(job: Job, timeout: float) -> list[dict]:
    """The job in a child process: its records, or one record saying it crashed or timed
    out (a task of either executor: a Dask worker may die, the job is retried elsewhere)."""
    with tempfile.TemporaryDirectory(prefix="pycc-batch-") as scratch:
        job_file, result_file = (os.path.join(scratch, n) for n in ("job.json", "result.json"))
        with open(job_file, "w") as handle:
            json.dump(asdict(job), handle)
        command = [sys.executable, "-m", "pycc_stencil.batch_job", job_file, result_file]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return [asdict(_failed(job, "timed out", f"after {timeout:g} s"))]
        if done.returncode or not os.path.exists(result_file):
            why = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
            return [asdict(_failed(job, "crashed", why[0]))]
        with open(result_file) as handle:
            return json.load(handle)


def _failed(job: Job, status: str, reason: str) -> Record:
    return Record(job.source.path, "", 0, status, reason=reason)


class _Progress:
    """A rich progress bar on stderr (files, kernels, failures, ETA), or nothing."""

    def __init__(self, total: int, done: int, shown: bool):
        self.kernels = self.failures = 0
        self._bar: object | None = None
        if shown:
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("batch"),
                BarColumn(),
                TextColumn("{task.completed}/{task.total} files"),
                TextColumn("{task.fields[kernels]} kernels, {task.fields[failures]} failed"),
                TimeRemainingColumn(),
                transient=False,
            )
            self._task = self._bar.add_task("batch", total=total, completed=done, kernels=0,
                                            failures=0)  # fmt: skip

    def __enter__(self) -> _Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()

    def advance(self, records: list[Record]) -> None:
        self.kernels += sum(r.status in ("checked", "mismatch", "error") for r in records)
        self.failures += sum(r.status in FAILED for r in records)
        if self._bar is not None:
            self._bar.update(self._task, advance=1, kernels=self.kernels, failures=self.failures)


#: the statuses a team must look at
FAILED = ("mismatch", "error", "crashed", "timed out")


def run_command(args, cflags: list[str], echo: Callable[[str], None] = print) -> int:
    """`pycc-stencil batch`: exit status 0 when no job failed."""
    records = batch(
        args.sources,
        args.target,
        args.out,
        cflags,
        args.passes,
        args.jobs,
        args.scheduler,
        args.timeout,
        progress=sys.stderr.isatty(),
    )
    counts: dict[str, int] = {}
    for record in records:
        counts[record.status] = counts.get(record.status, 0) + 1
    echo(", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    echo(f"report: {os.path.join(args.out, 'report.html')}")
    return 1 if any(r.status in FAILED for r in records) else 0
