"""Exact buffer extents of pointer parameters, measured by an instrumented dry run.

A C pointer parameter says nothing about how much memory the kernel touches; the harness must
allocate (and the API must check) exactly that. The dry run (see `probe`) passes fake addresses
and records, per parameter, the lowest and highest element read and written. It is exact when
no address and no decision to access a buffer depends on buffer contents, which
`ir_passes.taint` proves first; otherwise the extent must come from the user.

The instrumented module is built from a private, freshly lowered copy of the file (the caller
passes one): lowering again is deterministic and gives an independent object graph, where a
deep copy of a llvmlite.ir module would share or duplicate its metadata caches and type
objects by accident. The dry run executes in a child process, so a runaway loop is stopped by
the access budget or the timeout without touching the caller.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from ..emit.host_jit import JitModule, compile_module
from ..frontend.signature import FunctionInfo, LoweredModule
from ..ir_passes.taint import DataDependence, analyse_footprint
from . import probe
from .isolate import ChildFailure, run_isolated
from .marshal import element_size, is_buffer, prototype

DEFAULT_ACCESS_BUDGET = 1 << 30
DEFAULT_TIMEOUT = 120.0


class FootprintError(RuntimeError):
    """The footprint cannot be measured (data-dependent, too many accesses, crash)."""


class DataDependentFootprint(FootprintError):
    """Addresses or accessed buffers depend on buffer contents: no dry run can be exact."""

    def __init__(self, function: str, dependence: DataDependence):
        super().__init__(f"the footprint of {function} depends on data: {dependence}")
        self.dependence = dependence


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


def _recorded(row: list[int]) -> list[tuple[int, int]]:
    """The (lo, end) byte ranges a table row recorded: read first, then written."""
    return [(lo, end) for lo, end in (row[0:2], row[2:4]) if lo <= end]


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
    ):
        """`lowered` must be a private copy: its module is instrumented in place."""
        self.functions = lowered.functions
        self.budget = budget
        self.timeout = timeout
        analyses = {name: analyse_footprint(lowered.module, name) for name in lowered.functions}
        self._dependences = {name: a.dependence for name, a in analyses.items()}
        shadows = {b: acc for a in analyses.values() for b, acc in a.shadows.items()}
        bounded = {i for a in analyses.values() for i in a.bounded}
        self._module = probe.instrument_module(lowered.module, shadows, bounded)
        self._jit: JitModule | None = None
        self._cache: dict[tuple, dict[str, ParamFootprint]] = {}

    def dependence(self, name: str) -> DataDependence | None:
        """Why the footprint of `name` depends on data, or None if a dry run is exact."""
        return self._dependences[name]

    def measure(self, name: str, scalars: dict[str, int | float]) -> dict[str, ParamFootprint]:
        """Footprints of every pointer and array parameter of `name` at these scalar values."""
        info = self.functions[name]
        key = (name, tuple(scalars.get(p.name) for p in info.params))
        if key not in self._cache:
            dependence = self._dependences[name]
            if dependence is not None:
                raise DataDependentFootprint(name, dependence)
            self._cache[key] = self._dry_run(info, scalars)
        return self._cache[key]

    def _compiled(self) -> JitModule:
        if self._jit is None:
            self._jit = compile_module(self._module, self.functions, opt_level=1)
        return self._jit

    def _dry_run(self, info: FunctionInfo, scalars: dict[str, int | float]) -> dict:
        jit = self._compiled()
        buffers = [p for p in info.params if is_buffer(p)]
        args = []
        for param in info.params:
            if is_buffer(param):
                args.append(probe.fake_base(buffers.index(param)))
            else:
                args.append(scalars[param.name])
        function = prototype(info)(jit.function_address(info.name))
        table_type = ctypes.c_int64 * (4 * probe.REGION_COUNT)
        table = table_type.from_address(jit.global_address(probe.TABLE))
        counter = ctypes.c_int64.from_address(jit.global_address(probe.COUNTER))
        budget = ctypes.c_int64.from_address(jit.global_address(probe.BUDGET))

        def run() -> list[int]:
            table[:] = [(1 << 63) - 1, -(1 << 63)] * (2 * probe.REGION_COUNT)
            counter.value, budget.value = 0, self.budget
            function(*args)
            return list(table)

        try:
            raw = run_isolated(run, self.timeout)
        except ChildFailure as failure:
            if failure.exit_status == probe.BUDGET_EXIT_STATUS:
                raise FootprintError(
                    f"dry run stopped after {self.budget} memory accesses; "
                    "pass the extents explicitly"
                ) from None
            raise FootprintError(f"dry run {failure}") from None
        rows = [raw[4 * r : 4 * r + 4] for r in range(probe.REGION_COUNT)]
        stray = any(_recorded(row) for r, row in enumerate(rows) if not 0 < r <= len(buffers))
        far = any(
            lo < -_FAR or end > 4 * _FAR
            for row in rows[1 : len(buffers) + 1]
            for lo, end in _recorded(row)
        )
        if stray or far:
            raise FootprintError(
                "dry run accessed memory more than 2**49 bytes away from a buffer parameter"
            )
        result = {}
        for k, param in enumerate(buffers):
            read_lo, read_end, write_lo, write_end = rows[k + 1]
            size = element_size(param)
            result[param.name] = ParamFootprint(
                param.name,
                _element_range(read_lo, read_end, size),
                _element_range(write_lo, write_end, size),
            )
        return result
