"""C library functions whose calls pycc-stencil never compiles. Shared by the front end and
the drop-in's pre-scan, which must tell them without loading the front end."""

from __future__ import annotations

#: functions that return twice (LLVM needs `returns_twice` on their callers) and the jumps
#: back to them
NONLOCAL_JUMPS: frozenset[str] = frozenset(
    (
        "setjmp",
        "_setjmp",
        "__sigsetjmp",
        "sigsetjmp",
        "savectx",
        "vfork",
        "getcontext",
        "longjmp",
        "_longjmp",
        "siglongjmp",
        "__longjmp_chk",
    )
)

#: the C library's streams: variables a program uses, which the C library defines
STREAMS: frozenset[str] = frozenset(("stdin", "stdout", "stderr"))
