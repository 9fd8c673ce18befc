"""Run a callable in a forked child process, so a crash or a hang in generated code (or in the
reference) becomes an error report instead of killing the tool.

The child inherits everything (JIT code, loaded libraries, shared-memory buffers); only the
callable's return value comes back, pickled through a pipe.
"""

from __future__ import annotations

import ctypes
import faulthandler
import os
import pickle
import select
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class ChildFailure(RuntimeError):
    """The child crashed, hung, or exited without a result."""

    def __init__(self, message: str, exit_status: int | None = None):
        super().__init__(message)
        self.exit_status = exit_status


def _child(function: Callable[[], object], write_fd: int) -> None:
    status = 0
    faulthandler.disable()  # a crash is reported by the parent, not dumped as a traceback
    try:
        try:
            payload = pickle.dumps(("ok", function()))
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the parent
            try:
                payload = pickle.dumps(("raise", exc))
            except Exception:  # noqa: BLE001 - unpicklable exception
                payload = pickle.dumps(("raise", RuntimeError(f"{type(exc).__name__}: {exc}")))
        view = memoryview(payload)
        while view:
            view = view[os.write(write_fd, view) :]
    except BaseException:  # noqa: BLE001 - never return into the parent's code
        status = 1
    finally:
        os._exit(status)


def _describe_status(status: int) -> tuple[str, int | None]:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"crashed ({name})", None
    code = os.WEXITSTATUS(status)
    return f"exited with status {code}", code


def run_isolated(function: Callable[[], T], timeout: float) -> T:
    """Return `function()` computed in a child process; its exceptions are re-raised here.

    Raises ChildFailure if the child dies by a signal, exits early, or runs past `timeout`
    seconds (it is then killed).
    """
    sys.stdout.flush()
    sys.stderr.flush()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(function, write_fd)
    os.close(write_fd)
    chunks, deadline, timed_out = [], time.monotonic() + timeout, False
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([read_fd], [], [], remaining)[0]:
                timed_out = True
                os.kill(pid, signal.SIGKILL)
                break
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    except BaseException:  # interrupted (a signal): the child's work is not wanted any more
        os.kill(pid, signal.SIGKILL)
        raise
    finally:
        os.close(read_fd)
        _, status = os.waitpid(pid, 0)
    if timed_out:
        raise ChildFailure(f"timed out after {timeout:g} s")
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and chunks):
        message, code = _describe_status(status)
        raise ChildFailure(message, code)
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "raise":
        raise value
    return value


def printing(function: Callable[[], T]) -> Callable[[], tuple[T, bytes, bytes]]:
    """`function` made to return, with its result, what it wrote to the standard output and
    error (C's stdio flushed): run in a child, a kernel that prints is compared on that too."""

    def call() -> tuple[T, bytes, bytes]:
        libc = ctypes.CDLL(None)
        libc.fflush(None)
        saved = [os.dup(1), os.dup(2)]
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            try:
                result = function()
            finally:
                libc.fflush(None)
                for fd, copy in zip((1, 2), saved):
                    os.dup2(copy, fd)
                    os.close(copy)
            out.seek(0)
            err.seek(0)
            return result, out.read(), err.read()

    return call
