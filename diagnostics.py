"""Compiler-style diagnostics: every message a user sees says `file:line:col: severity: text`.

One exception type, `CompilerError`, carries already-formatted diagnostics from any stage
to the command line, which prints them and exits with `cc`'s status (1) instead of
letting a Python traceback reach the user.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A position in a source file (1-based line and column, as clang counts them)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    """One message in the format compilers use."""

    severity: str  # "error", "warning", "note" or "remark"
    message: str
    location: SourceLocation | None = None

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else "pycc-stencil: "
        return f"{where}{self.severity}: {self.message}"


class CompilerError(Exception):
    """Input the compiler cannot accept; carries the diagnostics to print (exit status 1)."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("\n".join(str(d) for d in diagnostics))
        self.diagnostics = diagnostics


def error(message: str, location: SourceLocation | None = None) -> CompilerError:
    """Build a one-diagnostic `CompilerError`."""
    return CompilerError([Diagnostic("error", message, location)])


def print_diagnostics(diagnostics: list[Diagnostic], stream=None) -> None:
    """Print diagnostics to stderr, one per line, as clang does."""
    out = stream or sys.stderr
    for diagnostic in diagnostics:
        print(diagnostic, file=out)


def stdout_write_error(exc: OSError) -> str:
    """The message for standard output that cannot be written (a full device, a closed pipe),
    `write error: No space left on device` as `cat` says it. What is still buffered can never
    be written: it is dropped, or the interpreter's final flush would fail and report again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # stdout was closed from the start: nothing is buffered
    return f"write error: {exc.strerror or exc}"
