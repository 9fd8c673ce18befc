"""Parsing C with libclang as legacy code is really built: the user's -I/-D/-U/-std flags, and
the system compiler's builtin header directory found at run time (the libclang wheel ships
no resource headers, so <stddef.h>, <stdint.h>, <math.h> would otherwise fail)."""

from __future__ import annotations

import functools
import os
import subprocess

import clang.cindex as ci

from ..diagnostics import CompilerError, Diagnostic, SourceLocation, error

#: clang stops after this many errors too
MAX_ERRORS = 20


@functools.lru_cache(maxsize=1)
def builtin_include_dirs() -> tuple[str, ...]:
    """The system C compiler's own header directory (stddef.h, stdarg.h, ...)."""
    cc = os.environ.get("PYCC_CC", "cc")
    try:
        out = subprocess.run(
            [cc, "-print-file-name=include"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    path = out.stdout.strip()
    return (path,) if out.returncode == 0 and os.path.isdir(path) else ()


@functools.lru_cache(maxsize=1)
def _index() -> ci.Index:
    return ci.Index.create()


def parse(
    path: str, cflags: list[str], tolerate_system_header_errors: bool = False
) -> ci.TranslationUnit:
    """Parse a C file; raise `CompilerError` with clang's diagnostics if it is not valid C.

    gcc's own headers (omp.h, some glibc headers) use GNU syntax clang rejects; when the
    system compiler has accepted the file, errors inside system headers can be tolerated:
    clang recovers, and a kernel that used what it dropped fails to lower on its own."""
    if not os.path.exists(path):
        raise error(f"no such file or directory: '{path}'")
    if os.path.isdir(path):
        raise error(f"'{path}' is a directory, not a C source file")
    if not os.access(path, os.R_OK):
        raise error(f"cannot read '{path}': permission denied")
    args = ["-x", "c", *cflags]
    for directory in builtin_include_dirs():
        args += ["-isystem", directory]
    try:
        tu = _index().parse(path, args=args)
    except ci.TranslationUnitLoadError as exc:
        raise error(f"cannot parse '{path}': {exc}") from None
    errors = [
        d
        for d in tu.diagnostics
        if d.severity >= ci.Diagnostic.Error
        and not (
            tolerate_system_header_errors
            and d.severity == ci.Diagnostic.Error
            and d.location.file is not None
            and d.location.is_in_system_header
        )
    ]
    if errors:
        raise CompilerError([_diagnostic(d) for d in errors[:MAX_ERRORS]])
    return tu


def _diagnostic(d: ci.Diagnostic) -> Diagnostic:
    severity = "fatal error" if d.severity == ci.Diagnostic.Fatal else "error"
    loc = d.location
    where = SourceLocation(loc.file.name, loc.line, loc.column) if loc.file else None
    return Diagnostic(severity, d.spelling, where)
