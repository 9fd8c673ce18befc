"""pycc-stencil's part of one translation unit: lower, choose kernels, generate their code,
and rewrite the unit for `cc`. Every failure here only makes kernels fall back to `cc`."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace

from .diagnostics import CompilerError
from .dropin_command import (
    NO_LOCALITY_NEST,
    CompilerCommand,
    only_locality_passes,
    takeover_policy,
    transforms_sweeps,
)
from .dropin_original import make_try
from .dropin_prescan import locality_candidates
from .dropin_report import NOTHING_IMPROVED, FunctionRecord, UnitResult, internal_error_reason
from .dropin_split import may_dispatch, split_source
from .dropin_takeover import (
    Takeover,
    choose,
    global_symbols,
    kernel_module,
    unit_tag,
    used_inside_braces,
)
from .emit.cc_contraction import has_products, paired_fusion, unpredictable_fusion
from .emit.cc_machine import compiler_mode_target
from .emit.cc_target import TargetSpec, UnsupportedTarget, target_from_flags
from .emit.host_object import compile_to_assembly, compile_to_object
from .frontend import lower_file
from .frontend.declarations import apply_row_align
from .frontend.signature import LoweredModule
from .frontend.tbaa import strip_tbaa
from .ir_passes.core.call_graph import reachable_functions
from .ir_passes.pipeline import (
    PipelineResult,
    parse_pipeline,
    run_passes,
    verify_passes_default,
)


def compile_kernels(
    cc: str,
    command: CompilerCommand,
    flags: list[str],
    source: str,
    unit: str,
    stage: str,
    passes: str,
    row_align: int | None = None,
) -> UnitResult:
    """Lower the preprocessed unit `unit` (`cc -E` of `source` with the user's flags), take
    over its kernels and generate their code; the rest of the same unit is what cc compiles
    (`split_source`). A kernel whose code generation fails is retried alone, so one bad
    kernel costs only itself."""
    with open(unit, "rb") as handle:
        text = handle.read()

    # at -O3 only the functions that may have a nest the locality passes tile are lowered
    only = (
        locality_candidates(text, transforms_sweeps(command))
        if only_locality_passes(command)
        else None
    )

    def lower() -> LoweredModule:
        lowered = lower_file(
            unit, command.language_flags(), preprocessed=True, only=only, others=NO_LOCALITY_NEST
        )
        apply_row_align(lowered, row_align)
        return lowered

    started = time.perf_counter()
    try:
        lowered = lower()
    except CompilerError as exc:
        return UnitResult(failure=f"libclang does not accept the file ({exc.diagnostics[0]})")
    lowered_at = time.perf_counter()
    openmp = any(f in ("-fopenmp", "-fopenmp-simd") for f in flags)
    tag = unit_tag(os.path.abspath(source), flags)
    takeovers, refused = choose(lowered, text, tag, openmp)
    steps = parse_pipeline(passes)
    output, internal_error = None, False
    if takeovers:
        try:
            target = target_from_flags(cc, flags)
        except UnsupportedTarget as exc:
            refused.update((t.info.name, f"target not supported: {exc}") for t in takeovers)
            takeovers = []
        else:
            takeovers, with_products = _without_contraction_hazards(
                lowered, takeovers, text, target, refused
            )
            takeovers = _without_vector_fusion(lowered, takeovers, target, refused)
    generate = None  # (its passes' remarks say why, also when nothing was improved)
    if takeovers:
        generate = _CodeGenerator(target, steps, flags, stage, command.pycc_options, tag, source)
        generate.dispatchable = {t.info.name for t in takeovers if may_dispatch(text, t)}

        def screen(kept: list[Takeover]) -> list[Takeover]:
            return _unless_fusing_elsewhere(lowered, kept, with_products, target, refused)

        try:
            output, takeovers = generate(lowered, takeovers, refused, screen)
        except Exception:  # noqa: BLE001 - a code generation bug must not break the build
            working = []
            for takeover in takeovers:
                try:
                    working += generate(lower(), [takeover], refused)[1]
                except Exception as exc:  # noqa: BLE001
                    internal_error = True
                    refused[takeover.info.name] = internal_error_reason("code generation", exc)
            output, takeovers = (
                generate(lower(), working, refused, screen) if working else (None, [])
            )
    names = {t.info.name for t in takeovers}
    applied = None if generate is None else generate.applied
    time_ms = {
        "frontend": round((lowered_at - started) * 1000, 1),
        "codegen": round((time.perf_counter() - lowered_at) * 1000, 1),
    }
    if applied is not None and applied.records:
        time_ms["passes"] = round(sum(r.seconds for r in applied.records) * 1000, 1)
    result = UnitResult(
        functions=_records(lowered, names, refused, [n for n, _ in steps], applied),
        internal_error=internal_error,
        time_ms=time_ms,
    )
    if takeovers:
        result.split_source = split_source(text, takeovers, global_symbols(lowered, takeovers, tag))
        result.pycc_output = output
    return result


_OPT_IN = "(-ffp-contract=off or -std=c17 make it pycc-stencil's)"


def _without_contraction_hazards(
    lowered: LoweredModule,
    takeovers: list[Takeover],
    text: bytes,
    target: TargetSpec,
    refused: dict,
) -> tuple[list[Takeover], set[str]]:
    """The takeovers whose multiply-adds gcc's rule decides (`emit/cc_contraction`), and the
    lowered functions of the file that have multiply-adds."""
    if not target.contraction:
        return takeovers, set()
    module = lowered.module
    functions = {
        f.name: f for f in module.functions if not f.is_declaration and f.name in lowered.functions
    }
    with_products = {name for name, f in functions.items() if has_products(f)}
    kept = []
    used = used_inside_braces(text, takeovers)
    for takeover in takeovers:
        name = takeover.info.name
        reach = [functions[n] for n in reachable_functions(module, {name}) if n in functions]
        helper = next((f.name for f in reach if f.name != name and f.name in with_products), None)
        if name not in with_products and helper is None:
            kept.append(takeover)
            continue
        reason = next(filter(None, map(unpredictable_fusion, reach)), None)
        if reason is None and helper is not None:
            reason = (
                f"it calls '{helper}', whose multiply-adds gcc fuses with its own after "
                f"inlining under -ffp-contract=fast with FMA {_OPT_IN}"
            )
        if reason is None and name in used:
            reason = (
                "its own file calls it, and cc may inline or specialize it there, which "
                f"changes the multiply-adds gcc fuses under -ffp-contract=fast with FMA {_OPT_IN}"
            )
        if reason is None:
            kept.append(takeover)
        else:
            refused[name] = reason
    return kept, with_products


def _without_vector_fusion(
    lowered: LoweredModule, takeovers: list[Takeover], target: TargetSpec, refused: dict
) -> list[Takeover]:
    """The takeovers none of whose code gcc's vectorizer would fuse whatever the contraction
    mode (`cc_contraction.paired_fusion`), when it vectorizes with FMA."""
    if not target.vector_fma:
        return takeovers
    module = lowered.module
    kept = []
    for takeover in takeovers:
        reach = reachable_functions(module, {takeover.info.name})
        functions = [f for f in module.functions if f.name in reach and not f.is_declaration]
        reason = next(filter(None, map(paired_fusion, functions)), None)
        if reason is None:
            kept.append(takeover)
        else:
            refused[takeover.info.name] = reason
    return kept


def _unless_fusing_elsewhere(
    lowered: LoweredModule,
    takeovers: list[Takeover],
    with_products: set[str],
    target: TargetSpec,
    refused: dict,
) -> list[Takeover]:
    """`takeovers`, or none (each refused) when under contraction a function cc keeps may fuse
    multiply-adds (it multiplies floating-point values): taking over anything else in the
    file changes what gcc inlines into it, and so what it fuses there."""
    if not target.contraction or not takeovers:
        return takeovers
    taken = {t.info.name for t in takeovers}
    skipped = {s.name: s for s in lowered.skipped}
    elsewhere = next(
        (
            name
            for name in lowered.order
            if name not in taken
            and (name in with_products or (name in skipped and skipped[name].multiplies_floats))
        ),
        None,
    )
    if elsewhere is None:
        return takeovers
    for takeover in takeovers:
        refused[takeover.info.name] = (
            f"'{elsewhere}' stays with cc and may fuse multiply-adds (-ffp-contract=fast with "
            f"FMA): taking over any function of the file changes what gcc inlines into it, and "
            f"so its results {_OPT_IN}"
        )
    return []


class _CodeGenerator:
    """Passes, then LLVM, for a set of taken-over kernels of one lowered module."""

    def __init__(
        self,
        target: TargetSpec,
        steps: list,
        flags: list[str],
        stage: str,
        options: dict[str, str],
        tag: str,
        source: str,
    ):
        self.target, self.steps, self.stage, self.tag = target, steps, stage, tag
        self.source = source  # the C file (its object's `FILE` symbol)
        #: what the passes see: the CPU (`simd`'s width), the caches and threads of the flags
        self.machine = compiler_mode_target(target, flags, options)
        self.hidden = _hidden_by_default(flags)
        self.debug_info = _debug_info(flags) and stage != "assembly"
        #: every kernel it can lower, or only those a pass transformed (`takeover_policy`)
        self.everything = takeover_policy(options) == "all"
        #: the pipeline's result of the last call (its remarks go to the report)
        self.applied: PipelineResult | None = None
        #: the kernels whose definition cc may keep, calling their try (`dropin_original`)
        self.dispatchable: set[str] = set()

    def __call__(
        self,
        lowered: LoweredModule,
        takeovers: list[Takeover],
        refused: dict[str, str],
        screen: Callable[[list[Takeover]], list[Takeover]] = list,
    ) -> tuple[bytes | None, list[Takeover]]:
        """The code of the takeovers the policy and then `screen` keep (None if none), and
        those takeovers; the others get their reason in `refused`. LLVM compiles nothing
        when none is kept."""
        if not self.target.strict_aliasing:  # cc lets the code type-pun: so must LLVM
            strip_tbaa(lowered.module)
        # no LLVM verification after each pass unless asked: the object's compile verifies
        # the module (invalid IR leaves the file to cc), and a stencil's compile spent 5 %
        # of its time on it
        verify = verify_passes_default(unset=False)
        self.applied = run_passes(lowered.module, self.steps, verify=verify, target=self.machine)
        lowered.module = self.applied.module
        if not self.everything:
            takeovers = self._improved(lowered, takeovers, refused)
        takeovers = screen(takeovers)
        if not takeovers:
            return None, []
        takeovers = [self._try(lowered, t) for t in takeovers]
        module_text = kernel_module(
            lowered,
            takeovers,
            self.target,
            hidden=self.hidden,
            debug_info=self.debug_info,
            globals_as=global_symbols(lowered, takeovers, self.tag),
        )
        if self.stage == "assembly":
            assembly = compile_to_assembly(module_text, self.target, self.source)
            return assembly.encode(), takeovers
        return compile_to_object(module_text, self.target, self.source), takeovers

    def _try(self, lowered: LoweredModule, takeover: Takeover) -> Takeover:
        """`takeover` as a try that cc's definition calls, where it can be one."""
        name = takeover.info.name
        if name not in self.dispatchable or not make_try(lowered.module.get_global(name)):
            return takeover
        return replace(takeover, symbol=f"__pycc_{self.tag}_{name}", dispatched=True)

    def _improved(
        self, lowered: LoweredModule, takeovers: list[Takeover], refused: dict[str, str]
    ) -> list[Takeover]:
        """The takeovers on which a pass fired (in them or in the file's `static` functions
        they call, which exist in pycc-stencil's object only as its copies; not only a step
        that prepares another, `Remark.enabling`): the rest is compiled as well, or better,
        by cc itself. A caller of a transformed function the program can call by its name
        (`main` calling `run`) is not improved by it."""
        assert self.applied is not None
        fired = {r.function for r in self.applied.remarks if r.kind == "passed" and not r.enabling}
        kept = []
        for takeover in takeovers:
            reach = reachable_functions(lowered.module, {takeover.info.name}, internal_only=True)
            if fired & reach:
                kept.append(takeover)
            else:
                refused[takeover.info.name] = NOTHING_IMPROVED
        return kept


def _records(
    lowered: LoweredModule,
    taken: set[str],
    refused: dict[str, str],
    passes: list[str],
    applied: PipelineResult | None = None,
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
            where = skip.definition or skip.location
            kernel = skip.has_loops and not skip.not_a_kernel
            reason = str(skip) if skip.has_loops else "no loops (not a loop-nest kernel)"
        records.append(
            FunctionRecord(
                name=name,
                line=where.line,
                column=where.column,
                compiled_by="pycc-stencil" if name in taken else "cc",
                kernel=kernel,
                passes=list(passes) if name in taken else [],
                reason=None if name in taken else reason,
                # also of a kernel kept by cc: why no pass transformed it
                remarks=[str(r) for r in applied.remarks if r.function == name]
                if applied is not None
                else [],
            )
        )
    return records


def _debug_info(flags: list[str]) -> bool:
    levels = [f for f in flags if f.startswith("-g")]
    return bool(levels) and levels[-1] not in ("-g0", "-gno-record-gcc-switches")


def _hidden_by_default(flags: list[str]) -> bool:
    visibility = [f for f in flags if f.startswith("-fvisibility=")]
    return bool(visibility) and visibility[-1] == "-fvisibility=hidden"
