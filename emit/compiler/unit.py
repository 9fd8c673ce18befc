"""pycc-stencil's part of one translation unit: lower, choose kernels, generate their code,
and rewrite the file for `cc`. Every failure here only makes kernels fall back to `cc`."""

from __future__ import annotations

import os

from ...diagnostics import CompilerError
from ...frontend import lower_file
from ...frontend.signature import LoweredModule
from ...ir_passes.pipeline import parse_pipeline, run_pipeline
from ..host_object import compile_to_assembly, compile_to_object
from ..target import UnsupportedTarget, target_from_flags
from .command_line import CompilerCommand
from .driver import UnitResult
from .report import FunctionRecord
from .split_source import split_source
from .takeover import choose, kernel_module, unit_tag


def compile_kernels(
    cc: str,
    command: CompilerCommand,
    flags: list[str],
    source: str,
    text: bytes,
    stage: str,
    passes: str,
) -> UnitResult:
    try:
        lowered = lower_file(source, command.preprocessor_flags())
    except CompilerError:
        return UnitResult(reason="libclang does not accept the file; cc compiles it")
    takeovers, refused = choose(lowered, text, unit_tag(os.path.abspath(source), flags))
    steps = parse_pipeline(passes)
    records = _records(lowered, {t.info.name for t in takeovers}, refused, [n for n, _ in steps])
    result = UnitResult(functions=records)
    if not takeovers:
        return result
    try:
        target = target_from_flags(cc, flags)
        lowered.module = run_pipeline(lowered.module, steps)
        module_text = kernel_module(
            lowered,
            takeovers,
            target.fp_flags,
            hidden=_hidden_by_default(flags),
            debug_info=_debug_info(flags) and stage != "assembly",
        )
        if stage == "assembly":
            output = compile_to_assembly(module_text, target).encode()
        else:
            output = compile_to_object(module_text, target)
    except UnsupportedTarget as exc:
        return _all_to_cc(result, f"target not supported: {exc}")
    except Exception as exc:  # noqa: BLE001 - a code generation bug must not break the build
        result.internal_error = True
        return _all_to_cc(
            result, f"internal error in code generation ({type(exc).__name__}: {exc})"
        )
    result.split_source = split_source(text, takeovers, source)
    result.pycc_output = output
    return result


def _records(
    lowered: LoweredModule, taken: set[str], refused: dict[str, str], passes: list[str]
) -> list[FunctionRecord]:
    records = []
    skipped = {s.name: s for s in lowered.skipped}
    for name in lowered.order:
        info = lowered.functions.get(name)
        if info is not None:
            where = info.location
            kernel = info.is_kernel
            reason = refused.get(name) if kernel else "no loops (not a loop-nest kernel)"
        else:
            skip = skipped[name]
            where = skip.location
            kernel = skip.has_loops and not skip.not_a_kernel
            reason = skip.reason if skip.has_loops else "no loops (not a loop-nest kernel)"
        records.append(
            FunctionRecord(
                name=name,
                line=where.line,
                column=where.column,
                compiled_by="pycc-stencil" if name in taken else "cc",
                kernel=kernel,
                passes=list(passes) if name in taken else [],
                reason=None if name in taken else reason,
            )
        )
    return records


def _all_to_cc(result: UnitResult, reason: str) -> UnitResult:
    for record in result.functions:
        if record.compiled_by == "pycc-stencil":
            record.compiled_by, record.reason = "cc", reason
    result.reason = reason
    return result


def _debug_info(flags: list[str]) -> bool:
    levels = [f for f in flags if f.startswith("-g")]
    return bool(levels) and levels[-1] not in ("-g0", "-gno-record-gcc-switches")


def _hidden_by_default(flags: list[str]) -> bool:
    visibility = [f for f in flags if f.startswith("-fvisibility=")]
    return bool(visibility) and visibility[-1] == "-fvisibility=hidden"
