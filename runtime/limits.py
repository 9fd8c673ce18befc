"""The memory pycc-stencil's own work may use (`PYCC_MEMORY_LIMIT`).

Compiler mode bounds its part of each file (a child process: beyond the limit the file is
cc's); `check`, `emit` and `tune` bound the whole command, so no input or pipeline can take
the machine's memory: past the limit the command stops with a diagnostic. RLIMIT_DATA counts
the heap and private mappings (Python, LLVM, libclang, isl), not shared libraries.
"""

from __future__ import annotations

import errno
import os
import resource

from ..ir_passes.core.machine_model import parse_size

MEMORY_LIMIT_VARIABLE = "PYCC_MEMORY_LIMIT"
DEFAULT_MEMORY_LIMIT = "4G"


def memory_limit() -> tuple[str, int] | None:
    """`PYCC_MEMORY_LIMIT` (`512M`, `8G`; a bad value: the default; `0`: none) as text and
    bytes."""
    text = os.environ.get(MEMORY_LIMIT_VARIABLE, "").strip() or DEFAULT_MEMORY_LIMIT
    try:
        size = parse_size(text)
    except ValueError:
        text, size = DEFAULT_MEMORY_LIMIT, parse_size(DEFAULT_MEMORY_LIMIT)
    return (text, size) if size > 0 else None


def limit_memory(limit: tuple[str, int] | None) -> None:
    """Lower this process's RLIMIT_DATA to `limit` (never above a hard limit already set)."""
    if limit is None:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    soft = limit[1] if hard == resource.RLIM_INFINITY else min(limit[1], hard)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def memory_message(limit: tuple[str, int] | None) -> str:
    """What to say when the work ran out of memory under `limit`."""
    if limit is None:
        return "pycc-stencil ran out of memory"
    return f"pycc-stencil needed more than {limit[0]} of memory ({MEMORY_LIMIT_VARIABLE})"


def out_of_memory(exc: BaseException) -> bool:
    """Did `exc` come from the memory limit: a MemoryError, a system call that failed with
    ENOMEM, or a library the loader could not map (its writable segments count in
    RLIMIT_DATA)?"""
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return True
    return isinstance(exc, MemoryError) or "failed to map segment" in str(exc)
