"""One job of a batch: one C file for one target. Lower it, decide for every function whether
it is a kernel (and why not), compile the kernels with the pipeline (the target's strategy,
`auto` where it has none, or the user's), check each against the C built by cc, and keep
what the report shows: status, reason, remarks, the emitted code, the check's verdict and
times. Run in a child process (`python -m pycc_stencil.batch_job JOB.json RESULT.json`) so a
crash or a hang of one job is that job's record only."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field

from .batch_sources import SourceFile


@dataclass(frozen=True)
class Job:
    source: SourceFile
    target: str
    passes: str | None  # None: the target's strategy


@dataclass
class Record:
    """One function of a batch (or the file, when it could not be read)."""

    file: str
    function: str
    line: int
    status: str  # checked, mismatch, error, refused, not a kernel, crashed, timed out
    reason: str = ""
    passes: str = ""
    check: str = ""  # the check's message
    #: the host only: median time per call of the kernel compiled without pycc-stencil's
    #: passes (LLVM -O3) over with them, at mid sizes (`runtime.timing`); None elsewhere
    speedup: float | None = None
    compile_seconds: float = 0.0  # the file's lowering and compile, shared by its functions
    check_seconds: float = 0.0
    remarks: list[str] = field(default_factory=list)
    source: str = ""  # the function's definition
    emitted: str = ""  # its code as the target gets it (LLVM IR on the host, C elsewhere)


def pipeline(target: str, passes: str | None) -> str:
    """The passes of a job: the user's, else the target's own, else `auto` (the strategy
    `tune` chooses, per kernel)."""
    from .emit.targets import target_from_spec

    if passes is not None:
        return passes
    return target_from_spec(target).default_passes or "auto"


def run_job(job: Job) -> list[Record]:
    """The records of every function of the job's file."""
    from .diagnostics import CompilerError
    from .runtime.check import SourceUnit, refusal

    path, started = job.source.path, time.perf_counter()
    passes = pipeline(job.target, job.passes)
    try:
        source = SourceUnit(path, list(job.source.flags))
    except CompilerError as exc:
        return [Record(path, "", 0, "error", reason=str(exc).strip())]
    lowered = source.lowered
    text = _read(path)
    records, kernels = [], []
    for name in lowered.order:
        info = lowered.functions.get(name)
        line = info.location.line if info else 0
        reason = refusal(lowered, name)
        record = Record(path, name, line, "refused", passes=passes, source=_excerpt(text, info))
        if reason:
            record.reason = reason
        elif not info.is_kernel:
            record.status, record.reason = "not a kernel", "no loops"
        else:
            kernels.append(record)
        records.append(record)
    if kernels:
        _compile_and_check(source, job.target, passes, kernels)
    compiled = time.perf_counter() - started - sum(r.check_seconds for r in kernels)
    for record in kernels:
        record.compile_seconds = compiled
    if kernels and job.target == "host":
        _measure(job.source, passes, [r for r in kernels if r.status == "checked"])
    return records


def _compile_and_check(source, target: str, passes: str, kernels: list[Record]) -> None:
    from .ir_passes.pipeline import PipelineError

    try:
        unit = source.compile(passes, target=target)
    except PipelineError as exc:
        for record in kernels:
            record.status, record.reason = "error", str(exc)
        return
    remarks = unit.remarks or []
    for record in kernels:
        started = time.perf_counter()
        result = unit.check(record.function)
        record.check_seconds = time.perf_counter() - started
        record.check = f"{result.status}: {result.message}"
        record.status = {"OK": "checked", "MISMATCH": "mismatch", "SKIPPED": "refused"}.get(
            result.status, "error"
        )
        if result.status != "OK":
            record.reason = result.message
        record.remarks = [str(r) for r in remarks if r.function == record.function]
        record.emitted = _emitted(unit, record.function)


#: seconds the timing of a file's kernels may take (in a child: a crash loses only that)
MEASURE_TIMEOUT = 120.0


def _measure(source: SourceFile, passes: str, kernels: list[Record]) -> None:
    """Each checked kernel's speed-up: its file compiled with and without the passes, both
    timed on the same inputs (in a child process)."""
    from .runtime.isolate import run_isolated
    from .runtime.timing import time_functions

    names = [r.function for r in kernels]
    if not names or not passes:
        return
    try:
        times = run_isolated(
            lambda: time_functions(source.path, list(source.flags), names, ["", passes]),
            MEASURE_TIMEOUT,
        )
    except (RuntimeError, ValueError) as exc:  # a crash, a time-out, inputs it cannot size
        times = {name: str(exc) for name in names}
    for record in kernels:
        found = times[record.function]
        if isinstance(found, dict) and found[passes] > 0:
            record.speedup = found[""] / found[passes]
        elif isinstance(found, str):
            record.remarks.append(f"pycc-stencil: not timed: {found}")


def _emitted(unit, function: str) -> str:
    """The function as the target gets it: the emitted C file, or the IR after the passes."""
    if unit.emitted is not None:
        return unit.emitted.emitted.text
    if unit.module is not None:
        found = [f for f in unit.module.functions if f.name == function]
        return str(found[0]) if found else ""
    return ""


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _excerpt(text: str, info) -> str:
    """The function's definition in the file (its first 60 lines), where known."""
    definition = getattr(info, "definition", None)
    if definition is None:
        return ""
    encoded = text.encode()
    lines = encoded[definition.start : definition.body_end].decode(errors="replace").splitlines()
    return "\n".join(lines[:60] + (["..."] if len(lines) > 60 else []))


def main(argv: list[str]) -> int:
    """Run the job in JOB.json and write its records to RESULT.json."""
    job_file, result_file = argv
    with open(job_file) as handle:
        data = json.load(handle)
    data["source"] = SourceFile(data["source"]["path"], tuple(data["source"]["flags"]))
    records = run_job(Job(**data))
    with open(result_file, "w") as handle:
        json.dump([asdict(r) for r in records], handle)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
