"""Exact buffer extents of pointer parameters, measured by an instrumented dry run.

A C pointer parameter says nothing about how much memory the kernel touches; the harness must
allocate (and the API must check) exactly that. The dry run (see `probe`) passes fake addresses
and records, per parameter, the lowest and highest element read and written. For one parameter
it is exact when no address of an access to it, and no decision to make one, depends on buffer
contents, which `ir_passes.taint` proves first; the footprint of the other parameters must come
from elsewhere (declared shapes, the user). Their data-dependent accesses are recorded in their
own fake regions, which are ignored; a wild address there can only widen another parameter's
range, never hide one of its accesses.

A traced run executes the same instrumented code on real inputs (a copy), making every access
inside the buffers and recording all of them: the footprint at this data, to check given
extents against.

The instrumented module is built from a private, freshly lowered copy of the file (the caller
passes one): lowering again is deterministic and gives an independent object graph, where a
deep copy of a llvmlite.ir module would share or duplicate its metadata caches and type
objects by accident. Runs execute in a child process, so a runaway loop is stopped by the
access budget or the timeout without touching the caller.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from ..emit.host_jit import JitModule, compile_module
from ..frontend.abi import function_abi
from ..frontend.signature import FunctionInfo, LoweredModule, Param
from ..ir_passes.core.inlining import inline_calls_in_loops
from ..ir_passes.core.taint import DataDependence, analyse_footprint
from . import probe
from .buffers import BufferSet
from .globals import GlobalHome
from .isolate import ChildFailure, printing, run_isolated
from .marshal import element_size, is_buffer, prototype

DEFAULT_ACCESS_BUDGET = 1 << 30
DEFAULT_TIMEOUT = 120.0


class FootprintError(RuntimeError):
    """The footprint cannot be measured (too many accesses, a crash, a timeout)."""


@dataclass(frozen=True)
class ParamFootprint:
    """Element ranges [lo, hi) of one pointer parameter (lo may be negative); None if unused."""

    name: str
    read: tuple[int, int] | None
    written: tuple[int, int] | None

    @property
    def bounds(self) -> tuple[int, int] | None:
        """The union of the read and written ranges."""
        ranges = [r for r in (self.read, self.written) if r is not None]
        if not ranges:
            return None
        return min(lo for lo, _ in ranges), max(hi for _, hi in ranges)

    @property
    def access(self) -> str:
        kinds = [k for k, r in (("read", self.read), ("written", self.written)) if r is not None]
        return " and ".join(kinds) or "unused"

    def __str__(self) -> str:
        parts = [
            f"{kind} [{r[0]}, {r[1]})"
            for kind, r in (("read", self.read), ("written", self.written))
            if r
        ]
        return f"{self.name}: {', '.join(parts) or 'unused'}"


_FAR = 1 << 49  # bytes: farther from a buffer than any plausible kernel access


def _element_range(lo: int, end: int, size: int) -> tuple[int, int] | None:
    if lo > end:  # never accessed: the table still holds its initial (max, min)
        return None
    return lo // size, -(-end // size)


class FootprintProbe:
    """Measures footprints of the functions of one lowered file, cached per scalar arguments."""

    def __init__(
        self,
        lowered: LoweredModule,
        budget: int = DEFAULT_ACCESS_BUDGET,
        timeout: float = DEFAULT_TIMEOUT,
        home: GlobalHome | None = None,
    ):
        """`lowered` must be a private copy: its module is instrumented in place. The dry
        runs read and write the globals in `home` (as the caller left them; a footprint is
        measured for those values), by default a zeroed one of their own."""
        self.home = home if home is not None else GlobalHome(lowered.globals.values())
        self.functions = lowered.functions
        self.budget = budget
        self.timeout = timeout
        for function in lowered.module.functions:  # as the passes do: a grid swapped through
            if function.blocks:  # `swap(&u, &v)` is then a pointer in a register, not memory
                inline_calls_in_loops(function)
        analyses = {name: analyse_footprint(lowered.module, name) for name in lowered.functions}
        self._dependences = {
            name: _by_parameter(self.functions[name], lowered, a.dependences)
            for name, a in analyses.items()
        }
        shadows = {b: acc for a in analyses.values() for b, acc in a.shadows.items()}
        bounded = {i for a in analyses.values() for i in a.bounded}
        self._module = probe.instrument_module(lowered.module, shadows, bounded)
        self._jit: JitModule | None = None
        self._cache: dict[tuple, dict[str, ParamFootprint]] = {}

    def dependences(self, name: str) -> dict[str, DataDependence]:
        """The pointer parameters of `name` whose footprint depends on data, and why."""
        return self._dependences[name]

    def measure(self, name: str, scalars: dict[str, int | float]) -> dict[str, ParamFootprint]:
        """Footprints of the pointer and array parameters of `name` at these scalar values,
        except those that depend on data (if all do, there is no dry run)."""
        info = self.functions[name]
        key = (
            name,
            tuple(_hashable(scalars.get(p.name)) for p in info.params),
            self.home.digest(),
        )
        if key not in self._cache:
            exact = [p for p in _buffers(info) if p.name not in self._dependences[name]]
            footprints = self._run(info, scalars, None) if exact else {}
            for param in exact:
                bounds = footprints[param.name].bounds
                size = element_size(param)
                if bounds and (bounds[0] * size < -_FAR or bounds[1] * size > 4 * _FAR):
                    raise FootprintError(
                        f"dry run accessed {param.name} more than 2**49 bytes away from its start"
                    )
            self._cache[key] = {p.name: footprints[p.name] for p in exact}
        return self._cache[key]

    def trace(
        self, name: str, scalars: dict[str, int | float], buffers: BufferSet
    ) -> dict[str, ParamFootprint]:
        """Footprints of every pointer and array parameter of `name` in a run on the data of
        `buffers`, whose contents are not changed."""
        return self._run(self.functions[name], scalars, buffers.copy())

    def _compiled(self) -> JitModule:
        if self._jit is None:
            self._jit = compile_module(
                self._module,
                self.functions,
                opt_level=1,
                symbols=self.home.symbols(),
                codegen_level=0,  # a dry run: the values matter, not the speed
            )
        return self._jit

    def _run(
        self, info: FunctionInfo, scalars: dict[str, int | float], real: BufferSet | None
    ) -> dict[str, ParamFootprint]:
        """Run the instrumented `info`: a dry run, or traced on the buffers `real`."""
        jit = self._compiled()
        buffers = _buffers(info)
        args = [
            probe.fake_base(buffers.index(p)) if is_buffer(p) else scalars[p.name]
            for p in info.params
        ]
        function = prototype(info)(jit.function_address(info.name))
        table = (ctypes.c_int64 * (4 * probe.REGION_COUNT)).from_address(
            jit.global_address(probe.TABLE)
        )
        regions = (ctypes.c_int64 * (3 * probe.REGION_COUNT)).from_address(
            jit.global_address(probe.REAL)
        )
        shadowing, counter, budget = (
            ctypes.c_int64.from_address(jit.global_address(g))
            for g in (probe.SHADOWING, probe.COUNTER, probe.BUDGET)
        )

        def run() -> tuple[list[list[int]], bool]:
            """The table's rows of the buffers (row k for buffer k, from 1), and whether any
            other row recorded an access."""
            rows = np.frombuffer(table, dtype=np.int64).reshape(probe.REGION_COUNT, 4)
            rows[:, 0::2], rows[:, 1::2] = (1 << 63) - 1, -(1 << 63)  # (lo, end): none yet
            counter.value, budget.value = 0, self.budget
            shadowing.value = real is None
            if real is not None:
                for k, param in enumerate(buffers, start=1):
                    spec = real.specs[param.name]
                    size = spec.dtype.itemsize
                    regions[3 * k : 3 * k + 3] = [
                        real.pointer(param.name),
                        spec.lo * size,
                        spec.hi * size,
                    ]
            function(*args)
            recorded = (rows[:, 0] <= rows[:, 1]) | (rows[:, 2] <= rows[:, 3])
            stray = bool(recorded[0] or recorded[len(buffers) + 1 :].any())
            return rows[: len(buffers) + 1].tolist(), stray

        what = "dry run" if real is None else "traced run"
        try:
            # what the dry run prints is not the check's output
            (rows, stray), *_ = run_isolated(printing(run), self.timeout)
        except ChildFailure as failure:
            if failure.exit_status == probe.BUDGET_EXIT_STATUS:
                raise FootprintError(
                    f"{what} stopped after {self.budget} memory accesses; "
                    "pass the extents explicitly"
                ) from None
            raise FootprintError(f"{what} {failure}") from None
        if stray:
            raise FootprintError(
                f"{what} accessed memory more than 2**49 bytes away from a buffer parameter"
            )
        result = {}
        for k, param in enumerate(buffers, start=1):
            read_lo, read_end, write_lo, write_end = rows[k]
            size = element_size(param)
            result[param.name] = ParamFootprint(
                param.name,
                _element_range(read_lo, read_end, size),
                _element_range(write_lo, write_end, size),
            )
        return result


def _by_parameter(
    info: FunctionInfo, lowered: LoweredModule, dependences: dict[int, DataDependence]
) -> dict[str, DataDependence]:
    """The dependences of LLVM arguments, by the buffer parameter each one is (a struct's
    `byval` copy, a split struct or the `sret` slot are no buffer: their index differs)."""
    function = lowered.module.get_global(info.name)
    abi = function_abi(info.result, [p.ctype for p in info.params])
    groups = abi.arguments(range(len(function.args)))
    owner = {g[0]: p for p, g in zip(info.params, groups) if len(g) == 1 and is_buffer(p)}
    return {owner[i].name: d for i, d in dependences.items() if i in owner}


def _hashable(value: object) -> object:
    """A scalar argument, or the bytes of a struct passed by value."""
    return bytes(value) if isinstance(value, ctypes.Structure) else value


def _buffers(info: FunctionInfo) -> list[Param]:
    return [p for p in info.params if is_buffer(p)]
