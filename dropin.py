"""The front door of compiler mode, kept light: every step of a build runs it.

Only `os`, `sys`, `re` and the command-line reader are imported here. Commands that are not
C compilations (`-E`, `--version`, links of objects), `PYCC_DISABLE=1`, files without a
single loop keyword and, at -O3, files whose text has no nest the locality passes could
transform (`dropin_textscan`) are handed to `cc` with `exec` right away; only the rest
loads the driver (and, on a cache miss, libclang and LLVM).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Collection

from .dropin_command import (
    TAKEOVER_POLICIES,
    TAKEOVER_VARIABLE,
    CompilerCommand,
    expand_response_files,
    gcc_quoted,
    may_have_kernels,
    nothing_to_improve,
    only_locality_passes,
    parse_command,
    same_file,
    takeover_policy,
    transforms_sweeps,
    unrecognized_option_message,
)

_SOURCE_SUFFIXES = (".c", ".i", ".cc", ".cpp", ".cxx", ".C", ".s", ".S", ".o", ".a", ".so")


#: variables with which cc writes dependency rules as -MD does (gcc's cpp manual)
DEPENDENCY_VARIABLES = ("DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES")


def run_compiler(
    argv: list[str],
    served: Callable[[list[str], list[str]], int | None] | None = None,
    on_miss: Callable[[], None] | None = None,
    scanned: Collection[str] = (),
) -> int:
    """Behave as `cc argv` (or `argv[0] argv[1:]` when argv[0] names a compiler). The work
    past the front door goes to `served` first (the warm server, `dropin_server`, told which
    inputs the text scan kept), which returns the step's status or None to let this process
    do it; `on_miss` runs when this process then has to analyse a unit the cache does not
    hold (not for one the scan of its preprocessed tokens clears). `scanned`: inputs the
    server's client already found may have a locality nest (`dropin_textscan`, not run
    again)."""
    cc, args = _underlying_compiler(argv)
    command = parse_command(expand_response_files(args))
    refused = _refused_command(command)
    if refused:
        return refused
    if os.environ.get("PYCC_DISABLE", "") not in ("", "0") or any(
        os.environ.get(v) for v in DEPENDENCY_VARIABLES
    ):  # (cc's dependency output the environment asks for would list pycc-stencil's steps)
        return exec_cc(cc, command.args)
    error = _option_error(command.pycc_options)
    if error is not None:
        print(f"pycc-stencil: error: {error}", file=sys.stderr)
        return 1
    inputs = command.c_inputs
    dry_run = "-###" in command.args  # cc only prints its commands: nothing for pycc-stencil
    if command.stage not in ("link", "object", "assembly") or not inputs or dry_run:
        return exec_cc(cc, command.args)
    if (
        any(i.path == "-" for i in command.inputs)
        or command.output == "-"  # stdout: an assembly listing, or cc's error for an object
        or (command.output is not None and os.path.isdir(command.output))  # cc's error
        or command.missing_value
        or (command.output and command.stage != "link" and len(command.inputs) > 1)
    ):
        return exec_cc(cc, command.args)  # stdin, stdout, or an error cc reports itself
    observed = "report" in command.pycc_options or os.environ.get("PYCC_REPORT")
    if not observed and nothing_to_improve(command):  # no pass: nothing to load at all
        return exec_cc(cc, command.args)
    if not observed and not any(_may_have_kernels(i.path) for i in inputs):
        return exec_cc(cc, command.args)
    if not observed and only_locality_passes(command):
        from .dropin_textscan import may_have_locality_nest

        flags = command.compile_flags()
        sweeps = transforms_sweeps(command)
        scanned = [
            i.path
            for i in inputs
            if i.path in scanned or may_have_locality_nest(i.path, flags, sweeps)
        ]
        if not scanned:
            return exec_cc(cc, command.args)  # no `cc -E` either
    status = None if served is None else served(argv, list(scanned))
    if status is not None:
        return status
    from .dropin_driver import Driver

    try:
        return Driver(cc, command, on_miss, frozenset(scanned)).run()
    except Exception as exc:  # noqa: BLE001 - a pycc-stencil bug must not break the build
        print(
            f"pycc-stencil: warning: internal error ({type(exc).__name__}: {exc}); "
            "the command is run by cc unchanged [-Wpycc-fallback]",
            file=sys.stderr,
        )
        return exec_cc(cc, command.args)


def _option_error(options: dict[str, str]) -> str | None:
    """What is wrong with the value of a `-fpycc-*` option, if anything (each parser is
    imported only when its option is given)."""
    if "passes" in options:
        from .ir_passes.pipeline import PipelineError, parse_pipeline

        try:
            parse_pipeline(options["passes"])
        except PipelineError as exc:
            return str(exc)
    if "row-align" in options:
        from .diagnostics import CompilerError
        from .frontend.declarations import parse_row_align

        try:
            parse_row_align(options["row-align"])
        except CompilerError as exc:
            return f"-fpycc-row-align={options['row-align']}: {exc.diagnostics[0].message}"
    policy = takeover_policy(options)
    if policy not in TAKEOVER_POLICIES:
        chosen = "-fpycc-takeover" if "takeover" in options else f"${TAKEOVER_VARIABLE}"
        return f"{chosen}={policy}: valid values are {', '.join(TAKEOVER_POLICIES)}"
    if "cache-size" in options:
        from .emit.cc_machine import BadCacheSize, parse_cache_size

        try:
            parse_cache_size(options["cache-size"])
        except BadCacheSize as exc:
            return str(exc)
    return None


def _refused_command(command: CompilerCommand) -> int:
    """gcc's exit status for a command line it refuses before compiling anything (after its
    diagnostics), or 0: unknown `-fpycc-*` options; `-o` naming a C input, which would
    otherwise be overwritten by its own object."""
    for option in command.unknown_options:
        print(f"pycc-stencil: error: {unrecognized_option_message(option)}", file=sys.stderr)
    if command.unknown_options:
        return 1
    output = command.output
    if output in (None, "-", os.devnull) or command.stage == "information":
        return 0
    if any(same_file(output, i.path) for i in command.c_inputs):
        print(
            f"pycc-stencil: fatal error: input file {gcc_quoted(output)} is the same as output "
            "file\n"
            "compilation terminated.",
            file=sys.stderr,
        )
        return 1
    return 0


def _may_have_kernels(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return may_have_kernels(handle.read())
    except OSError:
        return False  # cc reports it


def _underlying_compiler(argv: list[str]) -> tuple[str, list[str]]:
    """ccache style: `pycc-stencil gcc-12 -c f.c` uses gcc-12; otherwise `$PYCC_CC` or cc."""
    if argv and not argv[0].startswith(("-", "@")) and not argv[0].endswith(_SOURCE_SUFFIXES):
        if os.path.basename(argv[0]) != "pycc-stencil" and _runnable(argv[0]):
            return argv[0], argv[1:]
    return os.environ.get("PYCC_CC", "cc"), argv


def _runnable(name: str) -> bool:
    """`shutil.which(name)` is not None (shutil costs every build step 4 ms of imports)."""
    if os.sep in name:
        return os.access(name, os.X_OK) and not os.path.isdir(name)
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(directory or os.curdir, name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return True
    return False


def exec_cc(cc: str, args: list[str]) -> int:
    """Become `cc args` (exit status, signals and output are then exactly cc's)."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(cc, [cc, *args])
    except OSError as exc:
        print(f"pycc-stencil: error: cannot run '{cc}': {exc.strerror}", file=sys.stderr)
        return 127
