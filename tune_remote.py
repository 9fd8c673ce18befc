"""`tune --jobs N` / `tune --scheduler tcp://HOST:PORT`: the search's measurements on workers.

Sequentially the search measures a strategy, looks at it and decides whether to go on; on
workers it goes in rounds: each round measures, a task each, the next few unroll factors of
every vector width whose search is not over (the widths are searched independently), and the
same search then runs over the measurements: the same choice, a few measurements more than
alone (at most `eps` per width past where its search stops). A worker lowers
the file itself (once per worker process: the file and its headers must be at the same path
there, as for `batch`) and measures with the target the command line resolved (for the host:
the worker's CPU is what llvm-mca and the JIT see, so workers should be the machine kind the
code is for). `--time` times each kernel's baseline and chosen strategy on a worker too,
both in the same task so that they are compared on one machine.
"""

from __future__ import annotations

import functools
import hashlib
import uuid
from collections.abc import Sequence

from .executor import Executor
from .ir_passes.core.target import Target
from .ir_passes.strategy import SearchOptions, Strategy
from .ir_passes.tuning import KernelTuning, Measurement, Tuner, measure


@functools.lru_cache(maxsize=4)
def _lowered_module(path: str, cflags: tuple[str, ...]):
    from .frontend import lower_file

    return lower_file(path, list(cflags)).module


def measure_on_worker(
    path: str, cflags: tuple[str, ...], target: Target, strategy: Strategy
) -> Measurement:
    """One strategy measured on a worker (a task)."""
    return measure(_lowered_module(path, cflags), target, strategy)


def time_on_worker(
    path: str, cflags: tuple[str, ...], function: str, pipelines: list[str], params: dict
) -> dict[str, float] | str:
    """Seconds per call of `function` under each pipeline, or why it was not timed (a task)."""
    from .runtime.footprint import FootprintError
    from .runtime.timing import TimingError, time_pipelines

    try:
        return time_pipelines(path, list(cflags), function, pipelines, params)
    except (TimingError, FootprintError) as exc:  # inputs it cannot size, too large a run
        return f"not timed: {exc}"


def tune_on(
    workers: Executor,
    tuner: Tuner,
    path: str,
    cflags: Sequence[str],
    functions: Sequence[str],
    options: SearchOptions,
) -> list[KernelTuning]:
    """The search of each of `functions` over measurements made by `workers`, in rounds:
    each round measures, for every vector width whose search goes on, its next `eps + 1`
    unroll factors (the fewest after which the convergence rule can stop it)."""
    while wanted := tuner.unmeasured(functions, options, options.eps + 1):
        ordered = sorted(wanted, key=lambda s: (s.vf, s.uf, s.align))
        tasks = {_task_key(s.pipeline): (path, tuple(cflags), tuner.target, s) for s in ordered}
        by_key = dict(zip(tasks, ordered))
        for key, measurement in workers.run(measure_on_worker, tasks):
            tuner.record(by_key[key], measurement)
    return [tuner.tune(name, options) for name in functions]


def timings_on(
    workers: Executor, path: str, cflags: Sequence[str], chosen: dict[str, str], params: dict
) -> dict[str, dict[str, float] | str]:
    """{function: {pipeline: seconds} or why not}: the baseline `unroll(1)` and each
    function's chosen pipeline (`chosen`), one task per function."""
    tasks = {
        _task_key(f"time {name}"): (
            path, tuple(cflags), name, list(dict.fromkeys(["unroll(1)", pipeline])), params
        )
        for name, pipeline in chosen.items()
    }  # fmt: skip
    names = dict(zip(tasks, chosen))
    return {names[key]: found for key, found in workers.run(time_on_worker, tasks)}


def _task_key(what: str) -> str:
    """A task's name on the cluster: unique to this run (another run's tasks, for another
    target or another version of the file, never stand in for it)."""
    return f"tune-{_RUN}-{hashlib.sha256(what.encode()).hexdigest()[:12]}"


_RUN = uuid.uuid4().hex[:12]
