"""Where independent work runs: local workers or a Dask cluster, behind one interface.

`batch` runs a job per file and `tune --jobs/--scheduler` a measurement per candidate
strategy through it. A task is a module-level function and its arguments (picklable: Dask
ships them to other machines); results come back as they finish, each with its key. On Dask
a task whose worker dies is retried elsewhere (up to `RETRIES` times), so a task must be
idempotent: a repeated batch job stores the same result, a repeated measurement gives it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from concurrent.futures import Executor as _PoolExecutor
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from typing import Any

#: times Dask runs a task again when its worker is lost
RETRIES = 3
#: seconds to wait for the Dask scheduler to answer before giving up
CONNECT_SECONDS = 10


class ClusterUnreachable(Exception):
    """`--scheduler` names no Dask scheduler that answers (or dask.distributed is missing)."""


Tasks = dict[str, tuple]  # key -> the function's arguments


class Executor(ABC):
    """Runs `function(*arguments)` for every task and yields (key, result) as they finish;
    a context manager: its workers (a pool, a cluster connection) last until it closes, so
    work sent in several rounds finds them warm."""

    @abstractmethod
    def run(self, function: Callable[..., Any], tasks: Tasks) -> Iterator[tuple[str, Any]]:
        """(key, result) of every task, in the order they finish."""

    @abstractmethod
    def close(self) -> None:
        """Release the workers."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class InProcess(Executor):
    """Every task in the calling process, one after the other (no workers asked for)."""

    def run(self, function: Callable[..., Any], tasks: Tasks) -> Iterator[tuple[str, Any]]:
        for key, arguments in tasks.items():
            yield key, function(*arguments)

    def close(self) -> None:
        """Nothing to release: the tasks ran here."""


class LocalExecutor(Executor):
    """`workers` threads (for tasks that start their own child process) or processes."""

    def __init__(self, workers: int, threads: bool = False):
        self.workers, self.threads = max(1, workers), threads
        self._pool: _PoolExecutor | None = None

    def run(self, function: Callable[..., Any], tasks: Tasks) -> Iterator[tuple[str, Any]]:
        if self._pool is None:
            kind = ThreadPoolExecutor if self.threads else ProcessPoolExecutor
            self._pool = kind(max_workers=self.workers)
        futures = {self._pool.submit(function, *arguments): key for key, arguments in tasks.items()}
        for future in as_completed(futures):
            yield futures[future], future.result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


class DaskExecutor(Executor):
    """The Dask distributed cluster whose scheduler listens at `scheduler` (tcp://HOST:PORT)."""

    def __init__(self, scheduler: str):
        self.scheduler = scheduler
        self._client = None

    def run(self, function: Callable[..., Any], tasks: Tasks) -> Iterator[tuple[str, Any]]:
        try:
            from distributed import Client, as_completed
        except ImportError:
            raise ClusterUnreachable(
                "--scheduler needs dask.distributed: pip install pycc-stencil[batch]"
            ) from None
        if self._client is None:
            try:
                self._client = Client(self.scheduler, timeout=CONNECT_SECONDS)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ClusterUnreachable(
                    f"cannot reach the Dask scheduler at '{self.scheduler}': {exc}"
                ) from None
        futures = {
            self._client.submit(function, *arguments, key=f"pycc-{key}", retries=RETRIES): key
            for key, arguments in tasks.items()
        }
        for future in as_completed(futures):
            yield futures[future], future.result()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def executor(jobs: int | None, scheduler: str | None, threads: bool = False) -> Executor:
    """The cluster at `scheduler` when given, else `jobs` local workers (default: the cores)."""
    import os

    if scheduler:
        return DaskExecutor(scheduler)
    return LocalExecutor(jobs or os.cpu_count() or 1, threads)
