"""Recursion over deep inputs, on a stack made for it.

The front end descends a C expression recursively, and `copy.deepcopy` of a module (the
strategy search, `auto`) follows every branch from block to block: a 1000-term sum, 200
nested loops or a function of 30 loops in a row recurse deeper than Python's default limit of
1000 frames, and deeper than the main thread's 8 MB stack would hold with a raised limit.
`deep_call` runs such work in a thread with a large stack (only the pages it touches are
committed) and a raised recursion limit; the front end refuses nesting beyond `MAX_NESTING`
levels, so the limit is never reached and no RecursionError escapes from a libclang callback.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

#: deepest C syntax tree (expressions and statements) the front end lowers
MAX_NESTING = 10000
#: frames per nesting level, generously (a binary operator takes about 8 in the front end)
_FRAMES_PER_LEVEL = 40
RECURSION_LIMIT = MAX_NESTING * _FRAMES_PER_LEVEL
STACK_BYTES = 1 << 30

T = TypeVar("T")

_state = threading.local()
_lock = threading.Lock()
_users = 0
_saved_limit = 0


def deep_call(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`function(*args, **kwargs)` on a deep stack; its exception, if any, is re-raised here.

    Calls made from inside a deep call run directly, and so does everything when no thread
    with such a stack can be made (`ulimit -v`): deep input then fails as before, one function
    at a time. The caller only waits, so Ctrl-C still interrupts it (the thread is a daemon
    and ends with the process)."""
    if getattr(_state, "deep", False):
        return function(*args, **kwargs)
    outcome: dict[str, Any] = {}

    def run() -> None:
        _state.deep = True
        try:
            outcome["value"] = function(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller as it is
            outcome["error"] = exc

    previous = threading.stack_size(STACK_BYTES)
    worker: threading.Thread | None = threading.Thread(target=run, name="pycc-deep", daemon=True)
    _raise_limit()
    try:
        worker.start()
    except RuntimeError:  # no memory for such a stack
        _restore_limit()
        worker = None
    finally:
        threading.stack_size(previous)
    if worker is None:
        return function(*args, **kwargs)
    try:
        worker.join()
    finally:
        _restore_limit()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _raise_limit() -> None:
    global _users, _saved_limit
    with _lock:
        if _users == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
        _users += 1


def _restore_limit() -> None:
    global _users
    with _lock:
        _users -= 1
        if _users == 0:
            sys.setrecursionlimit(_saved_limit)
