"""The `pycc-stencil` command: `check` kernels against the system compiler, `emit` their IR,
`tune` their unroll and SIMD strategy.

It speaks like a compiler: bad input gives `file:line:col: error: ...` (or `pycc-stencil:
error: ...`) and exit status 1, never a Python traceback; a bug in pycc-stencil itself is
reported as an internal error with status 70 (EX_SOFTWARE).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from .diagnostics import CompilerError, Diagnostic, print_diagnostics, stdout_write_error
from .executor import ClusterUnreachable
from .version import __version__

EXIT_INTERNAL = 70

#: cc flags taking a value, given either attached (`-Idir`) or as the next argument (`-I dir`).
_CC_VALUE_FLAGS = ("-I", "-D", "-U")


class _UsageError(Exception):
    """A bad command line; printed as `pycc-stencil: error: ...`, exit status 1."""


class _WriteError(Exception):
    """Standard output could not be written (a full device, a closed pipe): an I/O error,
    `pycc-stencil: error: write error: ...` and exit status 1, as `cat` reports it."""


@contextmanager
def _writing_stdout() -> Iterator[None]:
    """Print to standard output inside this block; a failed write or flush is a `_WriteError`."""
    try:
        try:
            yield
        finally:
            sys.stdout.flush()
    except OSError as exc:
        raise _WriteError(stdout_write_error(exc)) from None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # cc exits with 1 on bad options, not argparse's 2
        self.print_usage(sys.stderr)
        raise _UsageError(message)


_ALIASING = ("-fstrict-aliasing", "-fno-strict-aliasing")


def split_cc_flags(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Separate cc-style preprocessor flags (-I -D -U -std= -include) and the language's
    aliasing rules (-f[no-]strict-aliasing) from the rest."""
    cflags, rest = [], []
    args = iter(argv)
    for arg in args:
        if arg in _CC_VALUE_FLAGS or arg == "-include":
            value = next(args, None)
            if value is None:
                raise _UsageError(f"argument to '{arg}' is missing")
            cflags += [arg, value]
        elif arg.startswith(_CC_VALUE_FLAGS) or arg.startswith("-std=") or arg in _ALIASING:
            cflags.append(arg)
        else:
            rest.append(arg)
    return cflags, rest


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return key, value


def _non_negative(text: str) -> int | None:
    """`text` as an integer >= 0 (decimal, or with a 0x/0o/0b prefix); None if it is not one."""
    try:
        value = int(text, 0)
    except ValueError:
        return None
    return value if value >= 0 else None


def _extent(text: str) -> tuple[str, int]:
    key, value = _key_value(text)
    elements = _non_negative(value)
    if elements is None:
        raise argparse.ArgumentTypeError(f"expected NAME=ELEMENTS (an integer >= 0), got {text!r}")
    return key, elements


def _seed(text: str) -> int:
    seed = _non_negative(text)
    if seed is None:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return seed


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return seconds


def _tolerance(text: str):
    from .runtime.compare import Tolerance

    try:
        return Tolerance.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _remark_kinds(text: str) -> tuple[str, ...]:
    from .ir_passes.pipeline import parse_remark_kinds

    try:
        return parse_remark_kinds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_remarks_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--remarks",
        type=_remark_kinds,
        default="all",
        metavar="KINDS",
        help="pass remarks printed to stderr: all (default), none, or a comma-separated list of "
        "passed, missed, analysis (as clang's -Rpass, -Rpass-missed, -Rpass-analysis)",
    )


def _row_align(text: str) -> int:
    from .frontend.declarations import parse_row_align

    try:
        return parse_row_align(text)
    except CompilerError as exc:
        raise argparse.ArgumentTypeError(exc.diagnostics[0].message) from None


def _add_row_align_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--row-align",
        type=_row_align,
        metavar="N",
        help="declare every kernel's pointer parameters and rows N-byte aligned (a power of "
        "two), as '#pragma pycc row_align(N)' does for one function",
    )


def _print_remarks(remarks: list, kinds: tuple[str, ...]) -> None:
    from .ir_passes.pipeline import select_remarks

    for remark in select_remarks(remarks, kinds):
        print(remark, file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pycc-stencil",
        description="A compiler for the stencil loop nests of legacy C. Preprocessor flags "
        "(-I DIR, -D NAME[=VALUE], -U NAME, -std=STD, -include FILE) and -f[no-]strict-aliasing "
        "are accepted by every subcommand, as cc accepts them.",
    )
    parser.add_argument("--version", action="version", version=f"pycc-stencil {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check = commands.add_parser(
        "check",
        help="JIT every kernel and compare it bit for bit with the C built by cc",
        description="Lower each loop-nest kernel, JIT it, run it and the original C (cc -O0 "
        "-ffp-contract=off) on identical random inputs, compare every output byte.",
    )
    check.add_argument("file", metavar="FILE.c")
    check.add_argument(
        "--function",
        action="append",
        default=[],
        metavar="NAME",
        help="check only this function (repeatable)",
    )
    check.add_argument(
        "--param",
        action="append",
        default=[],
        type=_key_value,
        metavar="NAME=VALUE",
        help="value of a scalar parameter (repeatable)",
    )
    check.add_argument(
        "--extent",
        action="append",
        default=[],
        type=_extent,
        metavar="NAME=ELEMENTS",
        help="elements of a pointer parameter whose footprint depends on data",
    )
    check.add_argument(
        "--passes",
        metavar="PIPELINE",
        help="pass pipeline, e.g. 'unroll(4)' (default: none; c66x: 'auto,align')",
    )
    check.add_argument(
        "--target",
        default="host",
        help="the machine the passes build for: host (default, run through the JIT), or a C "
        "target, whose C is built by cc and run: c, c66x (with the host emulation of TI's "
        "intrinsics), hls[:tile=32x32x32,order=0x1x2,burst=16,padding=off,fusion=off,"
        "synthesis=on] (FPGA kernels with stencil caches, simulated in C), or aie[:style=api] "
        "(AI Engine kernels, built with c++ against the emulation of the intrinsics or of the "
        "AI Engine API)",
    )
    _add_row_align_option(check)
    _add_remarks_option(check)
    check.add_argument(
        "--seed", type=_seed, default=0, help="seed of the random inputs (an integer >= 0)"
    )
    check.add_argument(
        "--tolerance",
        type=_tolerance,
        metavar="ulp=N,rel=X",
        help="accept float differences up to N ulp and/or relative error X",
    )
    check.add_argument(
        "--timeout",
        type=_seconds,
        default=60.0,
        metavar="SECONDS",
        help="time limit of each run (default 60)",
    )
    check.add_argument(
        "-O",
        dest="opt_level",
        type=int,
        choices=range(4),
        default=3,
        metavar="LEVEL",
        help="-O0 .. -O3: LLVM optimization level (default 3)",
    )

    emit = commands.add_parser(
        "emit",
        help="print the lowered module, or the C a target's back end writes",
        description="Print the LLVM IR of a C file, verified by LLVM (--emit llvm), or the "
        "structured C of a C target (--target c: portable C99 with GCC vectors; --target "
        "c66x: C with TI C66x intrinsics and pragmas).",
    )
    emit.add_argument("file", metavar="FILE.c")
    emit.add_argument(
        "--emit",
        choices=["llvm", "c"],
        help="what to emit: llvm, or c (the default for a C target such as --target c)",
    )
    emit.add_argument(
        "--passes",
        metavar="PIPELINE",
        help="pass pipeline applied before printing (the IR is printed after it and before any "
        "LLVM optimization; default: none, for c66x 'auto,align')",
    )
    emit.add_argument(
        "--target",
        default="host",
        help="the machine the passes build for: host (default), c, hexagon, c66x, or "
        "hls[:tile=...,order=...,burst=W,padding=off,fusion=off] (HLS C for an FPGA; with "
        "-o DIR: the kernel, ship runtime, testbench, Makefile and Vitis script), or "
        "aie[:style=api] (AI Engine kernels in C++; with -o DIR: the kernel, an ADF graph, a "
        "testbench, the emulation headers, a Makefile)",
    )
    _add_row_align_option(emit)
    _add_remarks_option(emit)
    emit.add_argument(
        "-o",
        dest="output",
        default="-",
        metavar="OUT",
        help="output file ('-': standard output, the default); for --target c66x a directory "
        "(the kernel C, the headers it includes and a Makefile) unless it ends in '.c'",
    )
    _add_tune_parser(commands)
    _add_batch_parser(commands)
    return parser


def _positive(text: str) -> int:
    value = _non_negative(text)
    if not value:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def _unroll_factor(text: str) -> int:
    """An unroll factor within the search's limit (`tune --max-unroll 1000` ran for minutes)."""
    from .ir_passes.registry import ArgumentLimit
    from .ir_passes.strategy import SearchUnroll

    try:
        return SearchUnroll(text)
    except ArgumentLimit as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None


#: `pycc-stencil batch --help`
_BATCH_DESCRIPTION = (
    "Find the C files (a compile_commands.json where a tree has one, else every .c file with "
    "the -I/-D given), and for every function: lower it, decide whether it is a kernel, "
    "compile it with the target's strategy (or --passes), emit it and check it against cc. "
    "Writes OUT/report.json and OUT/report.html; results are kept in OUT/store, so a batch "
    "run again redoes only what changed."
)


def _add_batch_parser(commands) -> None:
    summary = "every C file of a tree through a target, checked, with one report"
    batch = commands.add_parser("batch", help=summary, description=_BATCH_DESCRIPTION)
    batch.add_argument("sources", nargs="+", metavar="SRC", help="C files, directories or "
                       "compile_commands.json files")  # fmt: skip
    batch.add_argument(
        "--target", default="host", help="host (default), c, c66x, hls, aie, or NAME:OPTIONS"
    )
    batch.add_argument("--out", default="pycc-batch", metavar="DIR", help="the report's folder")
    batch.add_argument("--passes", metavar="PIPELINE", help="instead of the target's strategy")
    batch.add_argument("--jobs", type=_positive, metavar="N", help="local processes (the cores)")
    batch.add_argument(
        "--scheduler", metavar="tcp://HOST:PORT", help="run the jobs on this Dask cluster"
    )
    batch.add_argument(
        "--timeout", type=float, default=600.0, metavar="S", help="seconds a file may take"
    )


def _add_tune_parser(commands) -> None:
    tune = commands.add_parser(
        "tune",
        help="search each kernel's best unroll factor x SIMD width with back-end feedback",
        description="For each kernel, try unroll(U) and simd(W),unroll(U) strategies and "
        "measure the innermost loop with the target's feedback (host: llvm-mca cycles; "
        "hexagon: LLVM's Hexagon back end; c66x: a resource model), stopping a width when the "
        "II converges, registers run out or software pipelining is lost.",
    )
    tune.add_argument("file", metavar="FILE.c")
    tune.add_argument(
        "--target", default="host", help="a registered target: host (default), hexagon, c66x"
    )
    tune.add_argument(
        "--function", action="append", default=[], metavar="NAME", help="tune only this kernel"
    )
    tune.add_argument("--max-unroll", type=_unroll_factor, default=8, metavar="N")
    tune.add_argument("--min-unroll", type=_unroll_factor, default=1, metavar="N")
    tune.add_argument(
        "--eps", type=_positive, default=2, metavar="N", help="UFs without II gain before stopping"
    )
    tune.add_argument("--json", action="store_true", help="machine-readable output")
    tune.add_argument(
        "--time",
        action="store_true",
        help="host: confirm the choice by JIT timing of the baseline and the chosen strategy",
    )
    tune.add_argument(
        "--param",
        action="append",
        default=[],
        type=_key_value,
        metavar="NAME=VALUE",
        help="with --time: a scalar parameter (integers default to 200)",
    )
    tune.add_argument(
        "--jobs", type=_positive, metavar="N",
        help="measure every candidate at once on N local processes (then the same search)",
    )  # fmt: skip
    tune.add_argument(
        "--scheduler", metavar="tcp://HOST:PORT", help="... on the workers of this Dask cluster"
    )


def _require_file(path: str) -> None:
    if not os.path.isfile(path):
        reason = "is a directory" if os.path.isdir(path) else "no such file or directory"
        raise CompilerError([Diagnostic("error", f"{reason}: '{path}'")])


def _run_check(args: argparse.Namespace, cflags: list[str]) -> int:
    from .runtime.check import CheckOptions, check_file, summary
    from .runtime.compare import Tolerance

    options = CheckOptions(
        functions=args.function,
        params=dict(args.param),
        extents=dict(args.extent),
        passes=_target(args.target).default_passes if args.passes is None else args.passes,
        row_align=args.row_align,
        seed=args.seed,
        tolerance=args.tolerance or Tolerance(),
        opt_level=args.opt_level,
        timeout=args.timeout,
        target=_checkable_target(args.target),
    )
    _require_file(args.file)
    results = check_file(
        args.file,
        cflags,
        options,
        warn=lambda m: print_diagnostics([Diagnostic("warning", m)]),
        remarks=lambda r: _print_remarks(r, args.remarks),
    )
    with _writing_stdout():
        for result in results:
            print(result)
        print(summary(results))
    failed = [
        r
        for r in results
        if r.status in ("MISMATCH", "ERROR") or (r.status == "SKIPPED" and r.name in args.function)
    ]
    return 1 if failed else 0


def _checkable_target(name: str) -> str:
    """A target `check` can run here: the host (JIT) or one whose C it builds with cc."""
    target = _target(name)
    if target.name != "host" and not target.c_dialect:
        raise _UsageError(
            "check runs code on this machine: --target host, or a C target (c, c66x, hls, "
            f"aie), not '{target.name}'"
        )
    return name


def _run_emit(args: argparse.Namespace, cflags: list[str]) -> int:
    from .dropin_command import same_file
    from .emit.host_jit import parse_verified
    from .emit.output_files import output_mode, write_atomically
    from .frontend import lower_file
    from .frontend.declarations import apply_row_align
    from .ir_passes.core.facts import describe
    from .ir_passes.core.target import set_target
    from .ir_passes.pipeline import parse_pipeline, run_passes

    target = _target(args.target)
    passes = target.default_passes if args.passes is None else args.passes
    steps = parse_pipeline(passes)
    _require_file(args.file)
    if args.output not in ("-", os.devnull) and same_file(args.output, args.file):
        raise _UsageError(f"input file '{args.file}' is the same as output file")
    lowered = lower_file(args.file, cflags)
    apply_row_align(lowered, args.row_align)
    module = lowered.module
    set_target(module, target)
    tiling: list = []
    tiled = target.c_tiling(module, tiling) if target.c_dialect else {}
    result = run_passes(module, steps, verify=True)
    _print_remarks(tiling + result.remarks, args.remarks)
    kind = args.emit or ("c" if target.c_dialect else "llvm")
    emitted = None
    if kind == "c":
        emitted = _emitted_c(args, target, result.module, tiled, lowered.functions)
        text = emitted.text
    else:
        text = "\n".join([*describe(result.module), str(result.module)])
        parse_verified(text)
    if args.output == "-":
        with _writing_stdout():
            sys.stdout.write(text)
        return 0
    try:
        if emitted is not None and _writes_bundle(target, args.output):
            kernels = [lowered.functions[name] for name in emitted.hls]
            defined = [name for name, info in lowered.functions.items() if not info.is_static]
            _write_bundle(args, target, text, cflags, kernels, emitted, defined)
        else:
            write_atomically(args.output, text.encode(), mode=output_mode())
    except OSError as exc:
        raise _UsageError(f"cannot write '{args.output}': {exc.strerror}") from None
    return 0


def _writes_bundle(target, output: str) -> bool:
    """Whether `-o OUTPUT` names a directory for the C, the runtime and a Makefile: for a
    target whose C needs headers of its own (c66x), unless OUTPUT is a `.c` file (`.cc`
    for the AI Engine's C++)."""
    from .runtime.emitted import HEADER_DIRS

    one_file = output.endswith(".cc" if target.c_dialect.startswith("aie") else ".c")
    return target.c_dialect in HEADER_DIRS and not one_file and output != os.devnull


def _write_bundle(
    args: argparse.Namespace,
    target,
    text: str,
    cflags: list[str],
    kernels: list,
    emitted,
    defined: list[str],
) -> None:
    from .runtime.aie_bundle import aie_bundle_files
    from .runtime.hls_bundle import hls_bundle_files
    from .runtime.target_bundle import BundleError, bundle_files, write_bundle

    directory = args.output.rstrip("/") or "/"
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise _UsageError(f"'{directory}' is not a directory (a '.c' output is one file)")
    stem = os.path.splitext(os.path.basename(args.file))[0]
    source = os.path.basename(args.file)
    if target.c_dialect == "hls":
        files = hls_bundle_files(stem, args.file, text, cflags, kernels, emitted.burst, defined)
    elif target.c_dialect.startswith("aie"):
        original = os.path.abspath(args.file)
        files = aie_bundle_files(stem, original, text, emitted.aie_ports, cflags)
    else:
        files = bundle_files(target.c_dialect, stem, source, text, target.runtime_defines())
    try:
        write_bundle(directory, files)
    except BundleError as exc:
        raise _UsageError(str(exc)) from None


def _emitted_c(args: argparse.Namespace, target, module, tiled: dict, functions: dict):
    """The C of `module` in the target's dialect; each function left out is a warning."""
    from .emit.c_module import emit_c

    if not target.c_dialect:
        raise _UsageError(f"target '{target.name}' has no C back end (use --emit llvm)")
    passes = target.default_passes if args.passes is None else args.passes
    pipeline = f", passes '{passes}'" if passes else ""
    header = f"/* {os.path.basename(args.file)} by pycc-stencil --target {target.name}{pipeline} */"
    emitted = emit_c(module, target.c_dialect, header, tiled, functions)
    what = "is " if target.c_dialect.startswith("aie") else "is not written as C: "
    for name, reason in emitted.skipped.items():
        print_diagnostics([Diagnostic("warning", f"function '{name}' {what}{reason}")])
    return emitted


def _run_tune(args: argparse.Namespace, cflags: list[str]) -> int:
    from .executor import InProcess, executor
    from .frontend import lower_file
    from .ir_passes.core.target import NoCostModel
    from .ir_passes.strategy import SearchOptions
    from .ir_passes.tuning import Tuner, tune_module
    from .tune_remote import timings_on, tune_on
    from .tune_report import print_tables, to_json

    target = _target(args.target)
    _require_file(args.file)
    lowered = lower_file(args.file, cflags)
    kernels = [n for n, info in lowered.functions.items() if info.is_kernel]
    unknown = [n for n in args.function if n not in lowered.functions]
    if unknown:
        raise _UsageError(f"no function '{unknown[0]}' in '{args.file}'")
    names = args.function or kernels
    if not names:
        raise _UsageError(f"no loop-nest kernel in '{args.file}'")
    if args.time and args.target != "host":
        raise _UsageError("--time measures the host; use it with --target host")
    options = SearchOptions(args.max_unroll, args.min_unroll, args.eps)
    remote = bool(args.jobs or args.scheduler)
    with executor(args.jobs, args.scheduler) if remote else InProcess() as workers:
        try:
            if remote:
                tuner = Tuner(lowered.module, target)
                tunings = tune_on(workers, tuner, args.file, cflags, names, options)
            else:
                tunings = tune_module(lowered.module, names, target, options)
        except NoCostModel as exc:
            raise _UsageError(f"{exc}: tune needs one (host, hexagon, c66x)") from None
        timings = {}
        if args.time:
            chosen = {t.function: t.best.strategy.pipeline for t in tunings if t.best}
            timings = timings_on(workers, args.file, cflags, chosen, dict(args.param))
    with _writing_stdout():
        if args.json:
            print(to_json(tunings, timings))
        else:
            print_tables(tunings, sys.stdout, timings)
    return 0


def _target(spec: str):
    """The target `--target` names (`NAME[:KEY=VALUE,...]`)."""
    from .emit.targets import target_from_spec

    try:
        return target_from_spec(spec)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None


def _run_batch(args: argparse.Namespace, cflags: list[str]) -> int:
    from .batch_run import run_command

    _target(args.target)  # an unknown target is a usage error before anything runs
    for source in args.sources:
        if not os.path.exists(source):
            raise _UsageError(f"{source}: no such file or directory")
    return run_command(args, cflags)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: sys.argv[1:]) and return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    from .ir_passes.pipeline import PipelineError
    from .runtime.check import CheckUsageError
    from .runtime.limits import limit_memory, memory_limit, memory_message, out_of_memory

    limit = memory_limit()
    try:
        cflags, rest = split_cc_flags(argv)
        args = build_parser().parse_args(rest)
        run = {"check": _run_check, "emit": _run_emit, "tune": _run_tune, "batch": _run_batch}[
            args.command
        ]
        limit_memory(limit)
        return run(args, cflags)
    except CompilerError as exc:
        print_diagnostics(exc.diagnostics)
        return 1
    except (_UsageError, _WriteError, PipelineError, CheckUsageError, ClusterUnreachable) as exc:
        print_diagnostics([Diagnostic("error", str(exc))])
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - a bug in pycc-stencil, never a traceback
        if out_of_memory(exc):
            print_diagnostics([Diagnostic("error", memory_message(limit))])
            return 1
        from .ir_passes.pipeline import PassVerificationError

        what = "" if isinstance(exc, PassVerificationError) else f"{type(exc).__name__}: "
        print(f"pycc-stencil: error: internal error: {what}{exc}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
