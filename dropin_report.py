"""What the drop-in compiler tells its user: `PYCC_REPORT` JSON lines, `PYCC_VERBOSE` remarks,
and the one warning per kernel left to cc."""

from __future__ import annotations

import fcntl
import json
import os
import sys
from types import SimpleNamespace

from .dropin_command import NO_LOCALITY_NEST
from .version import __version__


class _Record(SimpleNamespace):
    """A plain namespace, not a dataclass: every compile of a build imports this module, and
    `dataclasses` (with `inspect`) cost it a tenth of its start-up."""

    def __reduce__(self) -> tuple:  # pickled from the analysis's child process
        return _rebuilt, (type(self), vars(self))


def _rebuilt(kind: type, fields: dict) -> _Record:
    return kind(**fields)


class FunctionRecord(_Record):
    """One function of a unit: who compiled it, and why."""

    def __init__(
        self,
        name: str,
        line: int,
        column: int,
        compiled_by: str,  # "pycc-stencil" or "cc"
        kernel: bool,
        passes: list[str] | None = None,
        reason: str | None = None,
        remarks: list[str] | None = None,  # the passes' remarks about this function
    ):
        super().__init__(
            name=name,
            line=line,
            column=column,
            compiled_by=compiled_by,
            kernel=kernel,
            passes=passes or [],
            reason=reason,
            remarks=remarks or [],
        )


class UnitRecord(_Record):
    """One translation unit, as appended to the `PYCC_REPORT` file."""

    def __init__(
        self,
        source: str,
        output: str | None,
        status: str,  # "pycc" (some kernel compiled by pycc-stencil), "cc", or "passthrough"
        reason: str | None = None,
        cache: str | None = None,  # "hit", "miss" or None (not looked up)
        functions: list[FunctionRecord] | None = None,
        #: frontend, passes, codegen, total; cc: cc's compiles summed (they overlap the rest)
        time_ms: dict[str, float] | None = None,
    ):
        super().__init__(
            source=source,
            output=output,
            status=status,
            reason=reason,
            cache=cache,
            functions=functions or [],
            time_ms=time_ms or {},
        )

    def to_json(self) -> str:
        functions = [vars(f) for f in self.functions]
        record = {"tool": "pycc-stencil", "version": __version__, **vars(self)}
        return json.dumps({**record, "functions": functions}, sort_keys=False)


def append_report(path: str, unit: UnitRecord) -> None:
    """Append one JSON line; `make -j` jobs append to the same file, so lock it."""
    try:
        with open(path, "a", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.write(unit.to_json() + "\n")
    except OSError as exc:
        print(f"pycc-stencil: warning: cannot write report '{path}': {exc}", file=sys.stderr)


#: why a kernel no pass transformed is cc's (`-fpycc-takeover=all` compiles it anyway): the
#: normal case, so not a warning
NOTHING_IMPROVED = "kept by cc: nothing to improve (no pycc-stencil pass transformed it)"


#: the most of an exception's text a reason quotes (llvmlite's describe whole expression trees)
_QUOTED = 160


def internal_error_reason(stage: str, exc: BaseException) -> str:
    """The reason of a compile `exc` interrupted: `internal error in STAGE (Type: text)`, the
    text's first line, at most `_QUOTED` characters of it."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if len(text) > _QUOTED:
        text = text[:_QUOTED].rstrip() + "..."
    return f"internal error in {stage} ({type(exc).__name__}: {text})"


def nothing_improved(function: FunctionRecord) -> bool:
    """Was the kernel left to cc only because no pass would transform it (no warning)?"""
    reason = function.reason or ""
    return reason == NOTHING_IMPROVED or reason.endswith(NO_LOCALITY_NEST)


def warn_fallback(source: str, function: FunctionRecord) -> None:
    print(
        f"{source}:{function.line}:{function.column}: warning: '{function.name}' compiled by cc "
        f"instead of pycc-stencil: {function.reason} [-Wpycc-fallback]",
        file=sys.stderr,
    )


def remark(source: str, function: FunctionRecord, detail: str) -> None:
    if function.compiled_by == "pycc-stencil":
        what = f"compiled by pycc-stencil ({detail})"
    else:
        what = f"left to cc: {function.reason}"
    print(
        f"{source}:{function.line}:{function.column}: remark: '{function.name}' {what}",
        file=sys.stderr,
    )


def verbose() -> bool:
    return os.environ.get("PYCC_VERBOSE", "") not in ("", "0")


class UnitResult(_Record):
    """pycc-stencil's part of one translation unit (also what the cache stores)."""

    def __init__(
        self,
        functions: list[FunctionRecord] | None = None,
        split_source: bytes | None = None,  # None: the whole file goes to cc unchanged
        pycc_output: bytes | None = None,  # object file, or assembly text for -S
        reason: str | None = None,
        internal_error: bool = False,  # a pycc-stencil bug: not cached, so a fixed tool retries
        failure: str | None = None,  # pycc-stencil itself failed on the file (crash, timeout)
        time_ms: dict[str, float] | None = None,  # frontend, codegen
    ):
        super().__init__(
            functions=functions or [],
            split_source=split_source,
            pycc_output=pycc_output,
            reason=reason,
            internal_error=internal_error,
            failure=failure,
            time_ms=time_ms or {},
        )
