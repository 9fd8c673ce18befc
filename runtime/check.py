"""`pycc-stencil check`: run every kernel of a file through the JIT and the reference, compare.

Per function: scalar arguments (from --param, else small distinct defaults), buffer extents
(declared array types, --extent, or the measured footprint), identical random inputs with guard
zones, one JIT run and one reference run (each in a forked child, so a crash or hang is an
ERROR line), then every buffer byte, the guard zones and the return value are compared.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..emit.host_jit import IRVerificationError, JitModule, compile_module
from ..emit.targets import host_target
from ..frontend.c_types import ArrayType, CType, FloatType, IntType, VoidType, numpy_dtype_name
from ..frontend.declarations import apply_row_align
from ..frontend.signature import FunctionInfo, LoweredModule
from ..ir_passes.core.alignment import declared_pointer_alignment
from ..ir_passes.pipeline import PassVerificationError, parse_pipeline, run_passes
from ..ir_passes.registry import Remark
from .align_check import AlignmentCheck
from .buffers import BufferSet, BufferSizeError, BufferSpec, check_budget, make_inputs
from .compare import Tolerance, compare_buffers, compare_return_values, guard_damage
from .footprint import FootprintError, FootprintProbe, ParamFootprint
from .isolate import ChildFailure, run_isolated
from .marshal import (
    buffer_dtype,
    convert_scalar,
    declared_shape,
    inner_row_elements,
    is_buffer,
    prototype,
    unsupported_reason,
)
from .reference import Reference, ReferenceBuildError

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


@dataclass(frozen=True)
class CheckResult:
    status: str  # OK, MISMATCH, SKIPPED, ERROR
    name: str
    message: str

    def __str__(self) -> str:
        return f"{self.status} {self.name}: {self.message}"


class _Failed(Exception):
    """Ends the check of one function with a result."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


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
    """Values of the scalar parameters: from `given`, else distinct small defaults."""
    values: dict[str, int | float] = {}
    ints, floats = iter(DEFAULT_INTS), iter(DEFAULT_FLOATS)
    for param in info.params:
        if is_buffer(param):
            continue
        t = param.ctype
        if param.name in given:
            value = _parse_scalar(t, given[param.name])
        elif isinstance(t, FloatType):
            value = next(floats, 1.0)
        else:
            assert isinstance(t, IntType)
            value = 1 if t.is_bool else min(next(ints, 2), t.max_value)
        values[param.name] = convert_scalar(param, value)
    return values


class _FileCheck:
    """State shared by the functions of one file: JIT, reference, footprint probe."""

    def __init__(
        self,
        path: Path,
        cflags: list[str],
        options: CheckOptions,
        lower: Lower,
        remarks: Callable[[list[Remark]], None] | None = None,
    ):
        self.path, self.cflags, self.options, self.lower = path, cflags, options, lower
        self.remarks = remarks
        self.lowered = lower(str(path), cflags)
        apply_row_align(self.lowered, options.row_align)
        self.steps = parse_pipeline(options.passes or "")
        #: declared pointer alignment of each function (its buffers are allocated so)
        self.buffer_alignment = {
            name: declared_pointer_alignment(self.lowered.module.get_global(name))
            for name in self.lowered.functions
        }
        self.alignment_check: AlignmentCheck | None = None
        self._probe: FootprintProbe | None = None
        self.jit: JitModule | None = None
        self.reference: Reference | None = None
        self.setup_error: str | None = None

    def prepare(self, names: list[str]) -> None:
        """Compile the JIT module and the reference for the functions to check."""
        try:
            result = run_passes(self.lowered.module, self.steps, target=host_target())
            if self.remarks is not None:
                self.remarks(result.remarks)
            module = result.module
            if any(name == "align" for name, _ in self.steps):
                self.alignment_check = AlignmentCheck(module)
            self.jit = compile_module(module, self.lowered.functions, self.options.opt_level)
        except (IRVerificationError, PassVerificationError) as exc:
            self.setup_error = f"internal error: {exc}"
            return
        infos = [self.lowered.functions[n] for n in names]
        external = [i.name for i in self.lowered.functions.values() if not i.is_static]
        try:
            self.reference = Reference(self.path, self.cflags, infos, external)
        except ReferenceBuildError as exc:
            self.setup_error = f"the reference does not build: {exc}"

    def probe(self) -> FootprintProbe:
        if self._probe is None:
            self._probe = FootprintProbe(
                self.lower(str(self.path), self.cflags), timeout=self.options.timeout
            )
        return self._probe

    def buffer_specs(self, info: FunctionInfo, scalars: dict) -> list[BufferSpec]:
        """Extents from --extent, declared array types, or the measured footprint, which must
        then stay inside the other two."""
        buffers = [p for p in info.params if is_buffer(p)]
        if not buffers:
            return []
        dependences = self.probe().dependences(info.name)
        unsized = [
            p.name
            for p in buffers
            if p.name not in self.options.extents and _declared(p.ctype, scalars) is None
        ]
        needed = [name for name in unsized if name in dependences]
        if needed:
            hint = f"{needed[0]}=ELEMENTS" if len(needed) == 1 else "NAME=ELEMENTS for each"
            raise _Failed(
                "ERROR",
                f"cannot size {', '.join(needed)}: the footprint depends on data "
                f"({dependences[needed[0]]}); pass --extent {hint}",
            )
        self._refuse_absurd_sizes(buffers, scalars)
        try:
            footprints = self.probe().measure(info.name, scalars)
        except FootprintError as exc:
            if unsized:
                raise _Failed("ERROR", str(exc)) from None
            footprints = {}  # only wanted to check the given extents
        specs = []
        for param in buffers:
            footprint = footprints.get(param.name)
            shape = _declared(param.ctype, scalars)
            if param.name in self.options.extents:
                lo, hi, shape = 0, self.options.extents[param.name], None
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
            specs.append(BufferSpec(param.name, buffer_dtype(param), lo, hi, read, shape))
        self._check_bounds(specs, footprints)
        return specs

    def _refuse_absurd_sizes(self, buffers: list, scalars: dict) -> None:
        """Buffers whose size is known without a dry run (declared or --extent) are checked
        against the memory budget first, so an absurd size is refused before the dry run."""
        known = []
        for param in buffers:
            shape = _declared(param.ctype, scalars)
            count = self.options.extents.get(param.name, math.prod(shape) if shape else None)
            if count is not None:
                known.append(BufferSpec(param.name, buffer_dtype(param), 0, count, True, None))
        try:
            check_budget(known)
        except BufferSizeError as exc:
            raise _Failed("ERROR", str(exc)) from None

    def _check_bounds(self, specs: list[BufferSpec], footprints: dict[str, ParamFootprint]) -> None:
        """ERROR if a footprint leaves its buffer (an extent too small, an off-by-one)."""
        for spec in specs:
            footprint = footprints.get(spec.name)
            if footprint is None:
                continue
            for verb, elements in (("reads", footprint.read), ("writes", footprint.written)):
                if elements and (elements[0] < spec.lo or elements[1] > spec.hi):
                    given = (
                        f" (--extent {spec.name}={spec.count})"
                        if spec.name in self.options.extents
                        else ""
                    )
                    raise _Failed(
                        "ERROR",
                        f"{verb} {spec.name}[{elements[0]}..{elements[1] - 1}] but {spec.name} "
                        f"has {_count(spec.count, 'element')}{given}",
                    )

    def check(self, info: FunctionInfo) -> CheckResult:
        try:
            return self._check(info)
        except _Failed as failure:
            return CheckResult(failure.status, info.name, str(failure))

    def _check(self, info: FunctionInfo) -> CheckResult:
        if self.setup_error:
            raise _Failed("ERROR", self.setup_error)
        if info.name in self.reference.errors:
            message = self.reference.errors[info.name]
            raise _Failed("ERROR", f"the reference does not build: {message}")
        try:
            scalars = scalar_arguments(info, self.options.params)
        except (TypeError, ValueError) as exc:
            raise _Failed("ERROR", f"bad --param: {exc}") from None
        specs = self.buffer_specs(info, scalars)
        try:
            jit_buffers = make_inputs(
                specs, self.options.seed, info.name, self.buffer_alignment.get(info.name, 1)
            )
        except BufferSizeError as exc:
            raise _Failed("ERROR", str(exc)) from None
        if specs and self.probe().dependences(info.name):  # extents given, check them here
            try:
                self._check_bounds(specs, self.probe().trace(info.name, scalars, jit_buffers))
            except FootprintError as exc:
                raise _Failed("ERROR", str(exc)) from None
        ref_buffers = jit_buffers.copy()
        jit_fn = prototype(info)(self.jit.function_address(info.name))
        jit_result = self._run_jit(jit_fn, info, scalars, jit_buffers)
        ref_result = self._run(
            "the reference", self.reference.function(info.name), info, scalars, ref_buffers
        )
        damage = guard_damage(ref_buffers)
        if damage:
            raise _Failed("ERROR", f"the reference {damage}: the buffer extent is too small")
        damage = guard_damage(jit_buffers)
        if damage:
            raise _Failed("MISMATCH", f"JIT code {damage}")
        comparison = compare_buffers(jit_buffers, ref_buffers, self.options.tolerance)
        if comparison.differing:
            raise _Failed(
                "MISMATCH",
                f"{comparison.first}, {comparison.differing} of {comparison.total} elements differ",
            )
        difference = compare_return_values(
            jit_result, ref_result, _result_dtype(info.result), self.options.tolerance
        )
        if difference:
            raise _Failed("MISMATCH", difference)
        return CheckResult(
            "OK",
            info.name,
            f"{self.options.tolerance.describe()}, {_count(len(specs), 'buffer')}, "
            f"{_count(comparison.total, 'element')}",
        )

    def _run_jit(self, function, info: FunctionInfo, scalars: dict, buffers: BufferSet):
        """The JIT run; with `align` in the pipeline, a violated alignment declaration is the
        error (before any crash or mismatch it caused)."""
        if self.alignment_check is None:
            return self._run("JIT code", function, info, scalars, buffers)
        self.alignment_check.reset()
        try:
            result = self._run("JIT code", function, info, scalars, buffers)
        finally:
            violation = self.alignment_check.violation()
            if violation is not None:
                raise _Failed("ERROR", violation)
        return result

    def _run(self, who: str, function, info: FunctionInfo, scalars: dict, buffers: BufferSet):
        try:
            return call_isolated(function, info, scalars, buffers, self.options.timeout)
        except ChildFailure as failure:
            raise _Failed("ERROR", f"{who} {failure}") from None


def call_isolated(
    function: Callable, info: FunctionInfo, scalars: dict, buffers: BufferSet, timeout: float
) -> int | float | None:
    """Call `function` (a ctypes function with `info`'s prototype: the JIT's, the reference's,
    or any `reference.KernelLibrary`'s) on `scalars` and the addresses of `buffers` in a
    forked child, as every check run is made, and return its result; the child writes the
    buffers in place. Raises ChildFailure if it crashes or runs past `timeout` seconds."""
    args = kernel_arguments(info, scalars, buffers)
    return run_isolated(lambda: function(*args), timeout)


def kernel_arguments(info: FunctionInfo, scalars: dict, buffers: BufferSet) -> list:
    """The arguments of a call of `info`: its scalars by value, its buffers by address."""
    return [buffers.pointer(p.name) if is_buffer(p) else scalars[p.name] for p in info.params]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _declared(ctype: CType, scalars: dict) -> tuple[int, ...] | None:
    """The declared shape of an array parameter; None for pointers and `A[][N]`."""
    return declared_shape(ctype, scalars) if isinstance(ctype, ArrayType) else None


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
    something not checked are passed to `warn`; the pass pipeline's remarks to `remarks`."""
    if lower is None:
        from ..frontend import lower_file as lower
    path = Path(path)
    file_check = _FileCheck(path, list(cflags), options, lower, remarks)
    lowered = file_check.lowered
    for name in options.functions:
        if name not in lowered.order:
            raise CheckUsageError(f"{path}: no function named '{name}'")
    selected = options.functions or lowered.order
    skipped = {s.name: s for s in lowered.skipped}
    results: dict[str, CheckResult] = {}
    to_check = []
    for name in selected:
        if name in skipped:
            results[name] = CheckResult("SKIPPED", name, str(skipped[name]))
            continue
        info = lowered.functions[name]
        reason = unsupported_reason(info)
        if reason:
            results[name] = CheckResult("SKIPPED", name, f"{info.location}: {reason}")
        elif not info.is_kernel and name not in options.functions:
            results[name] = CheckResult(
                "SKIPPED", name, f"{info.location}: not a loop-nest kernel (no loops)"
            )
        else:
            to_check.append(info)
    _check_names(options, to_check, lowered, warn)
    if to_check:
        file_check.prepare([info.name for info in to_check])
    for info in to_check:
        results[info.name] = file_check.check(info)
    return [results[name] for name in selected]


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
    """The functions among `infos` with a parameter `name` (a buffer one, or a scalar one)."""
    return [
        info.name
        for info in infos
        if any(p.name == name and is_buffer(p) == buffer for p in info.params)
    ]
