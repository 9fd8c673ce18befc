"""Parsing C with libclang as legacy code is really built: the user's -I/-D/-U/-std flags, and
the system compiler's builtin header directory found at run time (the libclang wheel ships
no resource headers, so <stddef.h>, <stdint.h>, <math.h> would otherwise fail).

The drop-in compiler parses the unit `cc -E` made instead (`preprocessed=True`): cc's
macros, includes and pragmas are already applied, so libclang must not preprocess again:
no predefined macros of its own (`-undef`: `__clang__` and its `__GNUC__` would select
other code), no include paths, and its line markers name the user's files."""

from __future__ import annotations

import bisect
import functools
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, TypeVar

import clang.cindex as ci

from ..diagnostics import CompilerError, Diagnostic, error
from ..ir_passes.core.deep import deep_call
from .clang_ast import presumed
from .header_bodies import without_unused_header_bodies

T = TypeVar("T")

#: clang stops after this many errors too
MAX_ERRORS = 20

#: what gcc 12 only warns about and clang 16+ rejects: old code (implicit `int`, calls to
#: undeclared functions, `int` <-> pointer conversions, `return;` in an `int` function)
#: is read as gcc reads it, so the rest of such a file is still lowered; a function that
#: calls an undeclared function is judged on its own when it is lowered (`expressions.call`)
GCC_WARNINGS = tuple(
    f"-Wno-error={name}"
    for name in (
        "implicit-function-declaration",
        "implicit-int",
        "int-conversion",
        "incompatible-pointer-types",
        "incompatible-function-pointer-types",
        "return-type",
    )
)


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


@dataclass(frozen=True)
class HeaderError:
    """An error libclang found in a system header and recovered from."""

    file: str  # as libclang names it (the unit itself, for a preprocessed one)
    offset: int
    clang: ci.Diagnostic

    def diagnostic(self) -> Diagnostic:
        """As reported (computed when asked: a header has thousands of them)."""
        return _diagnostic(self.clang)


@dataclass
class Parsed:
    tu: ci.TranslationUnit
    #: by file, sorted by offset: a function whose definition has one is not lowered (clang
    #: drops what it cannot read, and the rest of the body would lower to other code)
    header_errors: dict[str, list[HeaderError]]
    #: the offsets of the `{` of the bodies blanked before parsing (`header_bodies`)
    blanked: frozenset[int] = frozenset()
    #: (file, offset) of each declaration a call to an undeclared function made: clang
    #: warns there (it is where the declaration is)
    implicit: frozenset[tuple[str, int]] = frozenset()

    def error_in(self, extent: ci.SourceRange) -> HeaderError | None:
        """The first header error inside `extent`."""
        if extent.start.file is None:
            return None
        errors = self.header_errors.get(extent.start.file.name, [])
        at = bisect.bisect_left([e.offset for e in errors], extent.start.offset)
        if at < len(errors) and errors[at].offset < extent.end.offset:
            return errors[at]
        return None


def _printing_to(sink: IO[bytes], call: Callable[[], T]) -> T:
    """`call()` with the process's stderr (where libclang prints a crash, such as "LLVM
    ERROR: out of memory") going to `sink`."""
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(sink.fileno(), 2)
    try:
        return call()
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def parse(path: str, cflags: list[str], preprocessed: bool = False) -> Parsed:
    """Parse a C file (or, `preprocessed`, a `cc -E` unit); raise `CompilerError` with
    clang's first diagnostics if it is not valid C.

    gcc's own headers (the intrinsics of <immintrin.h>, omp.h, some glibc headers) use
    builtins and GNU syntax clang rejects; errors inside system headers are tolerated
    (cc builds the file, or the reference, and reports errors that are real): clang
    recovers, and a function that used what it dropped fails to lower on its own (no
    error limit then: clang would stop at the 20th error, inside a header)."""
    if not os.path.exists(path):
        raise error(f"no such file or directory: '{path}'")
    if os.path.isdir(path):
        raise error(f"'{path}' is a directory, not a C source file")
    if not os.access(path, os.R_OK):
        raise error(f"cannot read '{path}': permission denied")
    if preprocessed:
        args = ["-x", "cpp-output", "-undef", *cflags, *GCC_WARNINGS]
    else:
        args = ["-x", "c", *cflags, *GCC_WARNINGS]
        for directory in builtin_include_dirs():
            args += ["-isystem", directory]
    args.append("-ferror-limit=0")
    unsaved, blanked = None, frozenset()
    if preprocessed:
        text, blanked = _unit_as_read(path)
        unsaved = [(path, text)]
    # clang's parser recurses too: a 20000-term sum overflowed the 8 MB stack of the thread
    # libclang parses on, unless it is told to parse on the caller's (here, the deep stack)
    os.environ["LIBCLANG_NOTHREADS"] = "1"
    with tempfile.TemporaryFile() as printed:
        try:
            tu = _printing_to(printed, lambda: deep_call(_index().parse, path, args=args,
                                                         unsaved_files=unsaved))  # fmt: skip
        except ci.TranslationUnitLoadError as exc:
            printed.seek(0)
            said = printed.read()
            if b"out of memory" in said:  # under PYCC_MEMORY_LIMIT: the caller reports it
                raise MemoryError("libclang ran out of memory") from None
            os.write(2, said)
            raise error(f"cannot parse '{path}': {exc}") from None
    errors, header_errors, implicit = [], {}, set()
    for d in tu.diagnostics:
        where = d.location
        if d.option == "-Wimplicit-function-declaration" and where.file is not None:
            implicit.add((where.file.name, where.offset))
        if d.severity < ci.Diagnostic.Error:
            continue
        if d.severity == ci.Diagnostic.Error and where.file and where.is_in_system_header:
            header = HeaderError(where.file.name, where.offset, d)
            header_errors.setdefault(where.file.name, []).append(header)
        else:
            errors.append(d)
    if errors:
        raise CompilerError([_diagnostic(d) for d in errors[:MAX_ERRORS]])
    for found in header_errors.values():
        found.sort(key=lambda e: e.offset)
    return Parsed(tu, header_errors, blanked, frozenset(implicit))


#: `cc -E` keeps `#define`/`#undef` lines with -g3 or -dD (for the debug info)
_MACRO_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(define|undef)\b[^\n]*", re.MULTILINE)


def _unit_as_read(path: str) -> tuple[bytes, frozenset[int]]:
    """A preprocessed unit as libclang reads it: its macro definitions blanked (cc has
    already expanded every macro, and libclang must not expand `#define x (4 + x)` a
    second time), and the bodies of system-header functions nothing calls (`header_bodies`:
    the intrinsic headers; their offsets too). Blanks of the same length keep every byte
    offset (the split cuts the unit at them)."""
    with open(path, "rb") as handle:
        text = handle.read()
    text = _MACRO_DIRECTIVE.sub(lambda m: b" " * len(m.group()), text)
    return without_unused_header_bodies(text)


def _diagnostic(d: ci.Diagnostic) -> Diagnostic:
    severity = "fatal error" if d.severity == ci.Diagnostic.Fatal else "error"
    where = presumed(d.location) if d.location.file else None
    return Diagnostic(severity, d.spelling, where)
