"""`pycc-stencil check`: run every kernel of a file through the JIT and the reference, compare.

Per function: scalar arguments (from --param, else small distinct defaults), buffer extents
(declared array types, --extent, or the measured footprint), identical random inputs with guard
zones, one JIT run and one reference run (each in a forked child, so a crash or hang is an
ERROR line), then every buffer byte, the guard zones and the return value are compared.
"""

from __future__ import annotations

import ctypes
import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from llvmlite import ir

from ..emit.c_module import emit_c
from ..emit.host_jit import IRVerificationError, JitModule, compile_module
from ..emit.targets import target_from_spec
from ..frontend.c_types import (
    ArrayType,
    CType,
    FloatType,
    IntType,
    PointerType,
    StructType,
    VoidType,
    numpy_dtype_name,
)
from ..frontend.declarations import apply_row_align
from ..frontend.signature import FunctionInfo, GlobalInfo, LoweredModule
from ..ir_passes.core.alignment import declared_pointer_alignment, row_alignment
from ..ir_passes.core.copying import fresh_copy
from ..ir_passes.pipeline import PassVerificationError, parse_pipeline, run_passes
from ..ir_passes.registry import Remark
from .align_check import AlignmentCheck
from .buffers import BufferSet, BufferSizeError, BufferSpec, check_budget, make_inputs
from .compare import (
    Comparison,
    Tolerance,
    changed_elements,
    compare_buffers,
    compare_return_values,
    guard_damage,
)
from .emitted import EDMA_BACKENDS, EmittedBuildError, EmittedLibrary
from .footprint import FootprintError, FootprintProbe, ParamFootprint
from .globals import GlobalHome, bind_addresses, buffer_name
from .isolate import ChildFailure, printing, run_isolated
from .marshal import (
    buffer_dtype,
    convert_scalar,
    declared_shape,
    inner_row_elements,
    is_buffer,
    prototype,
    struct_dtype,
    struct_value,
    unsupported_reason,
)
from .reference import Reference, ReferenceBuildError
from .unresolved import without_unresolved_calls

DEFAULT_INTS = (37, 23, 29, 31, 19, 17, 13, 11, 7, 5, 3)
DEFAULT_FLOATS = (0.75, 0.5, 1.25, 0.375, 1.5)

Lower = Callable[[str, list[str]], LoweredModule]


class CheckUsageError(ValueError):
    """A command-line request that cannot be honoured (unknown function, bad --param)."""


@dataclass
class CheckOptions:
    functions: list[str] = field(default_factory=list)  # empty: every kernel
    params: dict[str, str] = field(default_factory=dict)
    extents: dict[str, int] = field(default_factory=dict)
    passes: str | None = None
    #: `--row-align N`: declared for every kernel without its own `#pragma pycc row_align`
    row_align: int | None = None
    seed: int = 0
    tolerance: Tolerance = field(default_factory=Tolerance)
    opt_level: int = 3
    timeout: float = 60.0
    #: the machine the passes build for; a C target's code is checked as the C it emits
    target: str = "host"


@dataclass(frozen=True)
class CheckResult:
    status: str  # OK, MISMATCH, SKIPPED, ERROR
    name: str
    message: str
    #: OK only: how many buffer elements the call changed (the reference run): 0 when the
    #: iteration space is empty (T = 0, an interior of nothing) and the check proves little
    changed: int | None = field(default=None, compare=False)
    #: MISMATCH of buffers only: where each differing buffer differs (`Comparison.where`)
    where: dict = field(default_factory=dict, compare=False)

    def __str__(self) -> str:
        return f"{self.status} {self.name}: {self.message}"


class _Failed(Exception):
    """Ends the check of one function with a result."""

    def __init__(self, status: str, message: str, where: dict | None = None):
        super().__init__(message)
        self.status = status
        self.where = where or {}


def summary(results: list[CheckResult]) -> str:
    counts = [sum(r.status == s for r in results) for s in ("OK", "MISMATCH", "SKIPPED", "ERROR")]
    return "{} OK, {} MISMATCH, {} SKIPPED, {} ERROR".format(*counts)


def _parse_scalar(ctype: CType, text: str) -> int | float:
    try:
        return float(text) if isinstance(ctype, FloatType) else int(text, 0)
    except ValueError:
        kind = "a number" if isinstance(ctype, FloatType) else "an integer"
        raise ValueError(f"{text!r} is not {kind}") from None


def scalar_arguments(info: FunctionInfo, given: dict[str, str]) -> dict[str, int | float]:
    """Values of the scalar parameters: from `given`, else distinct small defaults (a struct
    passed by value: its members, as a ctypes mirror)."""
    values: dict[str, int | float] = {}
    ints, floats = iter(DEFAULT_INTS), iter(DEFAULT_FLOATS)

    def default(t: CType) -> int | float:
        if isinstance(t, FloatType):
            return next(floats, 1.0)
        assert isinstance(t, IntType)
        return 1 if t.is_bool else min(next(ints, 2), t.max_value)

    for param in info.params:
        if is_buffer(param):
            continue
        t = param.ctype
        if isinstance(t, StructType):  # by value: every member a default, in order
            if param.name in given:
                raise ValueError(f"parameter '{param.name}' is a struct: its members are defaults")
            values[param.name] = struct_value(t, default)
            continue
        value = _parse_scalar(t, given[param.name]) if param.name in given else default(t)
        values[param.name] = convert_scalar(param, value)
    return values


@dataclass(frozen=True)
class _Run:
    """What one call of a checked function is made with."""

    params: dict[str, str]
    extents: dict[str, int]
    seed: int
    tolerance: Tolerance
    timeout: float


class SourceUnit:
    """What checking a C file needs whatever the pass pipeline: its lowering (prototypes,
    skipped functions, declared alignments), the footprint probe (its own lowering,
    instrumented) and the reference built by cc. Each `compile` gives a `CompiledUnit` of one
    pipeline; any number of them share this.

    `row_align` is `--row-align`, declared for every kernel without its own pragma; `timeout`
    limits each dry run of the probe.
    """

    def __init__(
        self,
        path: str | Path,
        cflags: Iterable[str] = (),
        lower: Lower | None = None,
        row_align: int | None = None,
        timeout: float = 60.0,
    ):
        if lower is None:
            from ..frontend import lower_file as lower
        self.path, self.cflags, self.row_align = Path(path), list(cflags), row_align
        self.timeout = timeout
        self._lower = lambda *args: without_unresolved_calls(lower(*args))
        #: the lowering whose order, functions and skipped functions every compile shares; its
        #: module goes to the first compile (the passes change a module in place)
        self.lowered = self.lower()
        self._module_taken = False
        #: declared pointer alignment of each function (its buffers are allocated so)
        self.buffer_alignment = {
            name: declared_pointer_alignment(self.lowered.module.get_global(name))
            for name in self.lowered.functions
        }
        self.external = [i.name for i in self.lowered.functions.values() if not i.is_static]
        #: the JIT's storage of the file's globals (every compile's symbols resolve to it)
        self.home = GlobalHome(self.lowered.globals.values())
        self._probe: FootprintProbe | None = None
        self._references: dict[tuple[str, ...], Reference | ReferenceBuildError] = {}

    def lower(self) -> LoweredModule:
        """A fresh lowering of the file, with `row_align` declared."""
        lowered = self._lower(str(self.path), self.cflags)
        apply_row_align(lowered, self.row_align)
        return lowered

    def compile(
        self, passes: str | None = None, opt_level: int = 3, target: str = "host"
    ) -> CompiledUnit:
        """The file's kernels after the pipeline `passes` for `target`, JIT-compiled at
        `opt_level` (a C target: emitted as C and built by cc). Raises PipelineError for a
        malformed pipeline."""
        return CompiledUnit(self, passes, opt_level, target)

    def take_module(self) -> ir.Module:
        """A module of the file for a pipeline to transform: the first lowering's, then fresh
        ones (lowering is deterministic and gives independent object graphs)."""
        if not self._module_taken:
            self._module_taken = True
            return self.lowered.module
        return self.lower().module

    def probe(self) -> FootprintProbe:
        if self._probe is None:
            self._probe = FootprintProbe(
                self._lower(str(self.path), self.cflags), timeout=self.timeout, home=self.home
            )
        return self._probe

    def reference(self, names: Iterable[str]) -> Reference:
        """The cc build of the functions `names` (one library, built once); raises
        ReferenceBuildError if the file does not compile."""
        key = tuple(names)
        if key not in self._references:
            infos = [self.lowered.functions[n] for n in key]
            try:
                self._references[key] = Reference(
                    self.path, self.cflags, infos, self.external, self.lowered.globals
                )
            except ReferenceBuildError as exc:
                self._references[key] = exc
        built = self._references[key]
        if isinstance(built, ReferenceBuildError):
            raise built
        return built

    def reference_of(self, name: str) -> Reference:
        """A reference build holding `name`: one already made, else one of `name` alone."""
        key = next((k for k in self._references if name in k), (name,))
        return self.reference(key)


class CompiledUnit:
    """One C file after one pass pipeline: the remarks of the passes and the JIT module (for
    a C target, the library built from the emitted C), checked function by function against
    the file's reference (`check`)."""

    def __init__(
        self,
        source: SourceUnit,
        passes: str | None = None,
        opt_level: int = 3,
        target: str = "host",
    ):
        self.source, self.passes, self.opt_level = source, passes, opt_level
        steps = parse_pipeline(passes or "")
        #: the pipeline's remarks (None if a pass failed verification)
        self.remarks: list[Remark] | None = None
        #: the module the passes made, as JIT-compiled (with `align`, instrumented for the
        #: run-time alignment check); None if a pass failed verification
        self.module: ir.Module | None = None
        self.alignment_check: AlignmentCheck | None = None
        self.jit: JitModule | None = None
        #: a C target's emitted C, built (None: JIT-compiled)
        self.emitted: EmittedLibrary | None = None
        #: a C target's module JIT-compiled with the alignment check, where a declared row
        #: alignment is relied on: it says which declaration fails, not just where the C stops
        self.alignment_probe: JitModule | None = None
        self.setup_error: str | None = None
        machine = target_from_spec(target)
        #: what runs the transformed code, in messages
        self.runner = "emitted C" if machine.c_dialect else "JIT code"
        self.integer_inputs = machine.integer_inputs
        try:
            module = source.take_module()
            tiling: list[Remark] = []
            tiled = machine.c_tiling(module, tiling)  # what the back end tiles, before the passes
            result = run_passes(module, steps, target=machine)
            self.remarks = tiling + result.remarks
            module = self.module = result.module
            relied_on = any(name == "align" for name, _ in steps)
            if machine.c_dialect:
                if relied_on and any(row_alignment(f) for f in module.functions if f.blocks):
                    probe = fresh_copy(module)
                    self.alignment_check = AlignmentCheck(probe)
                    self.alignment_probe = self._proof_compile(probe, source)
                functions = source.lowered.functions
                emitted = emit_c(module, machine.c_dialect, tiled=tiled, functions=functions)
                variables = source.lowered.globals.values()
                self.emitted = EmittedLibrary(emitted, variables, machine.runtime_defines())
                return
            if relied_on:
                self.alignment_check = AlignmentCheck(module)
            self.jit = self._proof_compile(module, source)
        except (IRVerificationError, PassVerificationError) as exc:
            self.setup_error = f"internal error: {exc}"
        except EmittedBuildError as exc:
            self.setup_error = f"the emitted C does not build: {exc}"

    def _proof_compile(self, module: ir.Module, source: SourceUnit) -> JitModule:
        """JIT code that runs only to be compared: the IR optimized at this unit's level, the
        machine code selected at -O0 (the same values, without Loop Strength Reduction)."""
        return compile_module(
            module,
            source.lowered.functions,
            self.opt_level,
            symbols=source.home.symbols(),
            codegen_level=0,
        )

    def function(self, name: str):
        """The compiled `name` as a ctypes function with its lowered prototype."""
        if self.setup_error:
            raise RuntimeError(self.setup_error)
        code = self.emitted or self.jit
        return prototype(self.source.lowered.functions[name])(code.function_address(name))

    def _bound(self, info: FunctionInfo, globals_values: BufferSet):
        """The compiled `info` run on the globals `globals_values` (copied in and out)."""
        if self.emitted is None:
            address = self.jit.function_address(info.name)
            return self.source.home.bind(prototype(info)(address), globals_values)
        if info.name in self.emitted.emitted.skipped:
            reason = self.emitted.emitted.skipped[info.name]
            what = "" if self.emitted.emitted.dialect.startswith("aie") else "not written as C: "
            raise _Failed("SKIPPED", f"{info.location}: {what}{reason}")
        storage = {g: self.emitted.global_address(g) for g in info.globals}
        function = prototype(info)(self.emitted.function_address(info.name))
        return bind_addresses(function, storage, globals_values)

    def check(
        self,
        name: str,
        params: dict[str, str] | None = None,
        extents: dict[str, int] | None = None,
        *,
        seed: int = 0,
        tolerance: Tolerance | None = None,
        timeout: float = 60.0,
    ) -> CheckResult:
        """Run `name` on random inputs (scalars from `params`, else the defaults; buffer sizes
        from `extents`, declared types or the footprint) through the JIT and the reference,
        and compare every buffer, the guard zones and the return value."""
        info = self.source.lowered.functions[name]
        run = _Run(dict(params or {}), dict(extents or {}), seed, tolerance or Tolerance(), timeout)
        backends = self.emitted.edma_backends(name) if self.emitted else []
        if not backends:
            try:
                return self._check(info, run)
            except _Failed as failure:
                return CheckResult(failure.status, info.name, str(failure), where=failure.where)
        for backend in backends:  # a tiled kernel: bit-exact under every EDMA host backend
            self.emitted.set_edma_backend(backend)
            try:
                result = self._check(info, run)
            except _Failed as failure:
                backend_name = f" (EDMA backend {EDMA_BACKENDS[backend]})"
                return CheckResult(
                    failure.status, info.name, f"{failure}{backend_name}", where=failure.where
                )
        names = ", ".join(EDMA_BACKENDS[b] for b in backends)
        return replace(result, message=f"{result.message}, under EDMA backends {names}")

    def buffer_specs(self, info: FunctionInfo, scalars: dict, run: _Run) -> list[BufferSpec]:
        """Extents from --extent, declared array types, or the measured footprint, which must
        then stay inside the other two."""
        buffers = [p for p in info.params if is_buffer(p)]
        if not buffers:
            return []
        probe = self.source.probe()
        dependences = probe.dependences(info.name)
        unsized = [
            p.name
            for p in buffers
            if p.name not in run.extents and _declared(p.ctype, scalars) is None
        ]
        needed = [name for name in unsized if name in dependences]
        if needed:
            hint = f"{needed[0]}=ELEMENTS" if len(needed) == 1 else "NAME=ELEMENTS for each"
            raise _Failed(
                "ERROR",
                f"cannot size {', '.join(needed)}: the footprint depends on data "
                f"({dependences[needed[0]]}); pass --extent {hint}",
            )
        _refuse_absurd_sizes(buffers, scalars, run)
        try:
            footprints = probe.measure(info.name, scalars)
        except FootprintError as exc:
            if unsized:
                raise _Failed("ERROR", str(exc)) from None
            footprints = {}  # only wanted to check the given extents
        specs = []
        for param in buffers:
            footprint = footprints.get(param.name)
            shape = _declared(param.ctype, scalars)
            if param.name in run.extents:
                lo, hi, shape = 0, run.extents[param.name], None
            elif shape is not None:
                lo, hi = 0, math.prod(shape)
            else:
                lo, hi = footprint.bounds or (0, 0)
                if isinstance(param.ctype, ArrayType) and lo >= 0:  # `A[][N]`: whole rows
                    inner = inner_row_elements(param.ctype, scalars)
                    rows = -(-hi // inner) if inner else 0
                    lo, hi = 0, rows * inner
                    shape = (rows, *declared_shape(param.ctype, scalars, outer=rows)[1:])
            read = footprint is None or footprint.read is not None
            dtype = buffer_dtype(param)
            values = self.integer_inputs if dtype.kind in "iu" else None
            if values is not None and dtype.kind == "u":
                values = (0, values[1])
            specs.append(BufferSpec(param.name, dtype, lo, hi, read, shape, values))
        _check_bounds(specs, footprints, run)
        return specs

    def _check(self, info: FunctionInfo, run: _Run) -> CheckResult:
        if self.setup_error:
            raise _Failed("ERROR", self.setup_error)
        self._screen_globals(info)
        try:
            reference = self.source.reference_of(info.name)
        except ReferenceBuildError as exc:
            raise _Failed("ERROR", f"the reference does not build: {exc}") from None
        if info.name in reference.errors:
            message = reference.errors[info.name]
            raise _Failed("ERROR", f"the reference does not build: {message}")
        try:
            scalars = scalar_arguments(info, run.params)
        except (TypeError, ValueError) as exc:
            raise _Failed("ERROR", f"bad --param: {exc}") from None
        global_inputs = self._global_inputs(info, reference, run)
        self.source.home.buffers.restore(global_inputs)  # what the footprint probe runs on
        specs = self.buffer_specs(info, scalars, run)
        try:
            jit_buffers = make_inputs(
                specs, run.seed, info.name, self.source.buffer_alignment.get(info.name, 1)
            )
        except BufferSizeError as exc:
            raise _Failed("ERROR", str(exc)) from None
        probe = self.source.probe() if specs else None
        if probe is not None and probe.dependences(info.name):  # extents given, check them
            try:
                _check_bounds(specs, probe.trace(info.name, scalars, jit_buffers), run)
            except FootprintError as exc:
                raise _Failed("ERROR", str(exc)) from None
        inputs = _Memory(jit_buffers, global_inputs)
        if self.alignment_probe is not None:
            self._probe_alignment(info, inputs, scalars, run)
        jit_memory, ref_memory = inputs.copy(), inputs.copy()
        jit_fn = self._bound(info, jit_memory.globals)
        ref_storage = {g: reference.global_address(info.name, g) for g in info.globals}
        ref_fn = bind_addresses(reference.function(info.name), ref_storage, ref_memory.globals)
        (jit_result, *jit_printed), (ref_result, *ref_printed) = self._run_both(
            (jit_fn, jit_memory), (ref_fn, ref_memory), inputs, info, scalars, run
        )
        ref_buffers = ref_memory.buffers
        damage = guard_damage(ref_buffers)
        if damage:
            raise _Failed("ERROR", f"the reference {damage}: the buffer extent is too small")
        damage = guard_damage(jit_memory.buffers) or guard_damage(jit_memory.globals)
        if damage:
            raise _Failed("MISMATCH", f"{self.runner} {damage}")
        comparison = _compare(jit_memory, ref_memory, run.tolerance)
        if comparison.differing:
            raise _Failed(
                "MISMATCH",
                f"{comparison.first}, {comparison.differing} of {comparison.total} elements differ",
                comparison.where,
            )
        difference = _compare_results(jit_result, ref_result, info.result, run.tolerance)
        if difference:
            raise _Failed("MISMATCH", difference)
        difference = _printed_difference(jit_printed, ref_printed)
        if difference:
            raise _Failed("MISMATCH", f"{self.runner} {difference}")
        used = f", {_count(len(info.globals), 'global')}" if info.globals else ""
        if self.integer_inputs and any(s.dtype.kind in "iu" for s in specs):
            low, high = self.integer_inputs
            used += f", integer inputs in [{low}, {high}] (where its sums saturate, C's wrap)"
        changed = changed_elements(inputs.buffers, ref_buffers) + changed_elements(
            inputs.globals, ref_memory.globals
        )
        idle = not changed and isinstance(info.result, VoidType)
        return CheckResult(
            "OK",
            info.name,
            f"{run.tolerance.describe()}, {_count(len(specs), 'buffer')}{used}, "
            f"{_count(comparison.total, 'element')}"
            + (" (the call changed none: these sizes test nothing it computes)" if idle else ""),
            changed,
        )

    def _probe_alignment(self, info: FunctionInfo, inputs: _Memory, scalars: dict, run: _Run):
        """Run the instrumented JIT code on `inputs` first: a declared row alignment these
        arguments break is the error, named as on the host (the emitted C would stop at the
        first aligned access it breaks, with only its line)."""
        memory = inputs.copy()
        address = self.alignment_probe.function_address(info.name)
        function = self.source.home.bind(prototype(info)(address), memory.globals)
        self.alignment_check.reset()
        try:
            call_isolated(function, info, scalars, memory.buffers, run.timeout)
        except ChildFailure:
            pass  # the emitted C's own run says what fails
        violation = self.alignment_check.violation()
        if violation is not None:
            raise _Failed("ERROR", violation)

    def _screen_globals(self, info: FunctionInfo) -> None:
        """The globals of `info` check cannot make (before the reference is built: one of
        unknown size would only make its link fail)."""
        variables = self.source.lowered.globals
        for name in info.globals:
            if isinstance(variables[name].ctype, PointerType):
                raise _Failed(
                    "SKIPPED",
                    f"{info.location}: uses the global pointer '{name}' "
                    f"({variables[name].location}): what it points to is the program's "
                    "(compiler mode compiles such a function; check cannot make its memory)",
                )
            if variables[name].size is None:
                raise _Failed(
                    "ERROR",
                    f"global '{name}' ({variables[name].location}) is an array of unknown size: "
                    "its definition (another file) is needed to check the function",
                )

    def _global_inputs(self, info: FunctionInfo, reference: Reference, run: _Run) -> BufferSet:
        """The globals a run starts from (runtime/globals.py), the same for both sides."""
        variables = self.source.lowered.globals

        def initial(name: str) -> bytes:
            address = reference.global_address(info.name, name)
            return ctypes.string_at(address, variables[name].size)

        try:
            values = self.source.home.inputs(info.globals, run.seed, info.name, initial)
        except BufferSizeError as exc:
            raise _Failed("ERROR", str(exc)) from None
        for name in info.globals:
            if name in run.params and not any(p.name == name for p in info.params):
                _set_global(values, variables[name], run.params[name])
        return values

    def _run_both(
        self, jit: tuple, ref: tuple, inputs: _Memory, info: FunctionInfo, scalars: dict, run
    ):
        """The JIT run and the reference run ((function, memory) each, both equal to
        `inputs`; the functions bound to their globals) in one forked child: a fork costs as
        much as a small kernel's run. If that child fails (a crash, a hang), both runs are made
        again from `inputs`, each in its own child, so that the failure is reported as one of the
        JIT code or of the reference."""
        jit_args = kernel_arguments(info, scalars, jit[1].buffers)
        ref_args = kernel_arguments(info, scalars, ref[1].buffers)
        if self.alignment_check is not None:
            self.alignment_check.reset()
        try:
            both = (printing(lambda: jit[0](*jit_args)), printing(lambda: ref[0](*ref_args)))
            results = run_isolated(lambda: (both[0](), both[1]()), 2 * run.timeout)
        except ChildFailure:
            jit[1].restore(inputs)
            ref[1].restore(inputs)
            results = (
                self._run_jit(jit[0], info, scalars, jit[1].buffers, run),
                _run("the reference", ref[0], info, scalars, ref[1].buffers, run),
            )
        if self.alignment_check is not None:
            violation = self.alignment_check.violation()
            if violation is not None:
                raise _Failed("ERROR", violation)
        return results

    def _run_jit(self, function, info: FunctionInfo, scalars: dict, buffers: BufferSet, run):
        """The JIT run; with `align` in the pipeline, a violated alignment declaration is the
        error (before any crash or mismatch it caused)."""
        if self.alignment_check is None:
            return _run(self.runner, function, info, scalars, buffers, run)
        self.alignment_check.reset()
        try:
            result = _run(self.runner, function, info, scalars, buffers, run)
        finally:
            violation = self.alignment_check.violation()
            if violation is not None:
                raise _Failed("ERROR", violation)
        return result


@dataclass(frozen=True)
class _Memory:
    """What one side of a check runs on: the pointer buffers and the globals."""

    buffers: BufferSet
    globals: BufferSet

    def copy(self) -> _Memory:
        return _Memory(self.buffers.copy(), self.globals.copy())

    def restore(self, other: _Memory) -> None:
        self.buffers.restore(other.buffers)
        self.globals.restore(other.globals)


def _compare(jit: _Memory, ref: _Memory, tolerance: Tolerance) -> Comparison:
    """Buffers, then globals: the first difference, and the counts of both."""
    buffers = compare_buffers(jit.buffers, ref.buffers, tolerance)
    variables = compare_buffers(jit.globals, ref.globals, tolerance)
    return Comparison(
        buffers.differing + variables.differing,
        buffers.total + variables.total,
        buffers.first or variables.first,
        buffers.where | variables.where,
    )


def _set_global(values: BufferSet, variable: GlobalInfo, text: str) -> None:
    """`--param NAME=VALUE` for a global scalar the function uses."""
    if isinstance(variable.ctype, ArrayType):
        raise _Failed("ERROR", f"bad --param: '{variable.name}' is a global array, not a scalar")
    try:
        value = _parse_scalar(variable.ctype, text)
    except ValueError as exc:
        raise _Failed("ERROR", f"bad --param: {exc}") from None
    values.data(buffer_name(variable.name))[0] = value


def _refuse_absurd_sizes(buffers: list, scalars: dict, run: _Run) -> None:
    """Buffers whose size is known without a dry run (declared or --extent) are checked
    against the memory budget first, so an absurd size is refused before the dry run."""
    known = []
    for param in buffers:
        shape = _declared(param.ctype, scalars)
        count = run.extents.get(param.name, math.prod(shape) if shape else None)
        if count is not None:
            known.append(BufferSpec(param.name, buffer_dtype(param), 0, count, True, None))
    try:
        check_budget(known)
    except BufferSizeError as exc:
        raise _Failed("ERROR", str(exc)) from None


def _check_bounds(
    specs: list[BufferSpec], footprints: dict[str, ParamFootprint], run: _Run
) -> None:
    """ERROR if a footprint leaves its buffer (an extent too small, an off-by-one)."""
    for spec in specs:
        footprint = footprints.get(spec.name)
        if footprint is None:
            continue
        for verb, elements in (("reads", footprint.read), ("writes", footprint.written)):
            if elements and (elements[0] < spec.lo or elements[1] > spec.hi):
                given = f" (--extent {spec.name}={spec.count})" if spec.name in run.extents else ""
                raise _Failed(
                    "ERROR",
                    f"{verb} {spec.name}[{elements[0]}..{elements[1] - 1}] but {spec.name} "
                    f"has {_count(spec.count, 'element')}{given}",
                )


def _run(who: str, function, info: FunctionInfo, scalars: dict, buffers: BufferSet, run: _Run):
    """(result, stdout, stderr) of one side's run in a child of its own."""
    args = kernel_arguments(info, scalars, buffers)
    try:
        return run_isolated(printing(lambda: function(*args)), run.timeout)
    except ChildFailure as failure:
        raise _Failed("ERROR", f"{who} {failure}") from None


def _printed_difference(got: list[bytes], want: list[bytes]) -> str | None:
    """How what one side printed ([stdout, stderr]) differs from the reference's."""
    for stream, mine, theirs in zip(("stdout", "stderr"), got, want):
        if mine != theirs:
            lines, reference = mine.splitlines(), theirs.splitlines()
            k = next((i for i, (a, b) in enumerate(zip(lines, reference)) if a != b), None)
            if k is None:
                k = min(len(lines), len(reference))
            line = lines[k] if k < len(lines) else b"(nothing)"
            expected = reference[k] if k < len(reference) else b"(nothing)"
            return (
                f"printed {line!r} to {stream} (line {k + 1}) where the reference printed "
                f"{expected!r}"
            )
    return None


def call_isolated(
    function: Callable, info: FunctionInfo, scalars: dict, buffers: BufferSet, timeout: float
) -> int | float | None:
    """Call `function` (a ctypes function with `info`'s prototype: the JIT's, the reference's,
    or any `reference.KernelLibrary`'s) on `scalars` and the addresses of `buffers` in a
    forked child, as every check run is made, and return its result; the child writes the
    buffers in place; what it prints is dropped (runs besides the compared ones must not
    print into the check's own output). Raises ChildFailure if it crashes or runs past
    `timeout` seconds."""
    args = kernel_arguments(info, scalars, buffers)
    return run_isolated(printing(lambda: function(*args)), timeout)[0]


def kernel_arguments(info: FunctionInfo, scalars: dict, buffers: BufferSet) -> list:
    """The arguments of a call of `info`: its scalars by value, its buffers by address."""
    return [buffers.pointer(p.name) if is_buffer(p) else scalars[p.name] for p in info.params]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _declared(ctype: CType, scalars: dict) -> tuple[int, ...] | None:
    """The declared shape of an array parameter; None for pointers and `A[][N]`."""
    return declared_shape(ctype, scalars) if isinstance(ctype, ArrayType) else None


def _compare_results(jit: object, ref: object, result: CType, tolerance: Tolerance) -> str | None:
    """The difference of two return values; a struct's member by member (bytes of its own)."""
    if not isinstance(result, StructType):
        return compare_return_values(jit, ref, _result_dtype(result), tolerance)
    dtype = struct_dtype(result)
    a, b = np.frombuffer(bytes(jit), dtype)[0], np.frombuffer(bytes(ref), dtype)[0]
    for name in dtype.names:
        difference = compare_return_values(a[name], b[name], dtype[name], tolerance)
        if difference:
            return f"member {name} of the {difference}"
    return None


def _result_dtype(result: CType) -> np.dtype | None:
    return None if isinstance(result, VoidType) else np.dtype(numpy_dtype_name(result))


def check_file(
    path: str | Path,
    cflags: list[str],
    options: CheckOptions,
    lower: Lower | None = None,
    warn: Callable[[str], None] = warnings.warn,
    remarks: Callable[[list[Remark]], None] | None = None,
) -> list[CheckResult]:
    """Check the functions of one C file; raises CompilerError for input the front end rejects
    and CheckUsageError for options that name nothing in the file. Options that name only
    something not checked are passed to `warn`; the pass pipeline's remarks to `remarks`.

    A thin wrapper: one `SourceUnit`, one `CompiledUnit` of `options.passes`, one `check` per
    function (tests that check many parameter sets of one compile use those directly)."""
    path = Path(path)
    source = SourceUnit(path, cflags, lower, options.row_align, options.timeout)
    parse_pipeline(options.passes or "")  # a malformed pipeline before anything else
    lowered = source.lowered
    for name in options.functions:
        if name not in lowered.order:
            raise CheckUsageError(f"{path}: no function named '{name}'")
    selected = options.functions or lowered.order
    results: dict[str, CheckResult] = {}
    to_check = []
    for name in selected:
        reason = refusal(lowered, name)
        if reason:
            results[name] = CheckResult("SKIPPED", name, reason)
            continue
        info = lowered.functions[name]
        if not info.is_kernel and name not in options.functions:
            results[name] = CheckResult(
                "SKIPPED", name, f"{info.location}: not a loop-nest kernel (no loops)"
            )
        else:
            to_check.append(info)
    _check_names(options, to_check, lowered, warn)
    if to_check:
        unit = source.compile(options.passes, options.opt_level, options.target)
        if remarks is not None and unit.remarks is not None:
            remarks(unit.remarks)
        try:
            source.reference([info.name for info in to_check])
        except ReferenceBuildError:
            pass  # each check reports it
        for info in to_check:
            results[info.name] = unit.check(
                info.name,
                options.params,
                options.extents,
                seed=options.seed,
                tolerance=options.tolerance,
                timeout=options.timeout,
            )
    return [results[name] for name in selected]


def refusal(lowered: LoweredModule, name: str) -> str | None:
    """Why function `name` of the file is not compiled (and so not checked), with its
    location; None when it is."""
    skipped = {s.name: s for s in lowered.skipped}
    if name in skipped:
        return str(skipped[name])
    info = lowered.functions[name]
    reason = unsupported_reason(info)
    return f"{info.location}: {reason}" if reason else None


def _check_names(
    options: CheckOptions,
    checked: list[FunctionInfo],
    lowered: LoweredModule,
    warn: Callable[[str], None],
) -> None:
    """--param and --extent must name a parameter of a function being checked.

    A name only unchecked functions have is ignored with a warning, and so is an unknown
    name in a file where the front end skipped functions (their parameters are not known);
    any other name is an error (a typo).
    """
    for flag, names, buffers in (
        ("--param", options.params, False),
        ("--extent", options.extents, True),
    ):
        kind = "pointer or array" if buffers else "scalar"
        for name in names:
            if _having(checked, name, buffers):
                continue
            owners = _having(lowered.functions.values(), name, buffers)
            if owners:
                warn(
                    f"{flag} {name} is ignored: only {', '.join(owners)}, which "
                    f"{'is' if len(owners) == 1 else 'are'} not checked, "
                    f"{'has' if len(owners) == 1 else 'have'} a {kind} parameter named '{name}'"
                )
            elif lowered.skipped:
                warn(
                    f"{flag} {name} is ignored: no lowered function has a {kind} parameter "
                    f"named '{name}' (the parameters of skipped functions are not known)"
                )
            else:
                raise CheckUsageError(
                    f"{flag} {name}: no checked function has a {kind} parameter named '{name}'"
                )


def _having(infos: Iterable[FunctionInfo], name: str, buffer: bool) -> list[str]:
    """The functions among `infos` with a parameter `name` (a buffer one, or a scalar one,
    or for a scalar a global variable they use: `--param` sets a global scalar too)."""
    return [
        info.name
        for info in infos
        if any(p.name == name and is_buffer(p) == buffer for p in info.params)
        or (not buffer and name in info.globals)
    ]
