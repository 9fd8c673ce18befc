"""`tune`: run the strategy search of `ir_passes.strategy` against one target's feedback.

Each strategy's pipeline runs on a copy of the kernel module; the result is measured once
per strategy for every function of the module (one compile), by the Hexagon oracle
(`emit.hexagon`), the host's cycles (`emit.x86_cost`) or the C66x model (`emit.c66x_model`).
A function whose loop a pass declined (a `-Rpass-missed` remark for it) gets no cost for that
strategy: its loop would be measured unchanged but divided by the wrong UF.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from llvmlite import ir

from ..ir_passes.alignment import declared_pointer_alignment, row_alignment
from ..ir_passes.copying import fresh_copy
from ..ir_passes.loops import loops_of
from ..ir_passes.pipeline import REGISTRY, _load_passes, parse_pipeline, run_passes
from ..ir_passes.strategy import (
    Cost,
    SearchOptions,
    SearchResult,
    Strategy,
    StrategyFailed,
    Trial,
    search,
)
from ..ir_passes.target_info import C66X_VECTOR_BYTES, HEXAGON_VECTOR_BYTES, vector_bytes

TARGETS = ("host", "hexagon", "c66x")


def _hexagon(module: ir.Module, ipt: int) -> dict[str, Cost]:
    from .hexagon import hexagon_loops

    return {
        name: Cost(
            ii=loop.packets / ipt,
            registers=loop.registers + loop.vector_registers,
            pipelined=loop.pipelined,
            instructions=loop.instructions,
            registers_exceeded=loop.registers_exceeded,
        )
        for name, loop in hexagon_loops(module).items()
    }


def _c66x(module: ir.Module, ipt: int) -> dict[str, Cost]:
    from .c66x_model import REGISTER_LIMIT, c66x_loops

    return {
        name: Cost(
            ii=loop.cycles / ipt,
            registers=loop.registers,
            pipelined=loop.pipelined,
            instructions=loop.instructions,
            registers_exceeded=loop.registers > REGISTER_LIMIT,
        )
        for name, loop in c66x_loops(module).items()
    }


def _host(module: ir.Module, ipt: int) -> dict[str, Cost]:
    from .x86_cost import host_loops

    return {
        name: Cost(
            ii=loop.cycles / ipt,
            registers=loop.registers,
            pipelined=None,
            instructions=loop.instructions,
            registers_exceeded=loop.spills > 0,
        )
        for name, loop in host_loops(module).items()
    }


_MEASURE: dict[str, Callable[[ir.Module, int], dict[str, Cost]]] = {
    "host": _host,
    "hexagon": _hexagon,
    "c66x": _c66x,
}


def _vector_bytes(target: str, module: ir.Module) -> int:
    if target == "hexagon":
        return HEXAGON_VECTOR_BYTES
    if target == "c66x":
        return C66X_VECTOR_BYTES
    return vector_bytes(module)  # the host: what `simd` with no width uses


def _scalar_bytes(kind: ir.Type) -> int | None:
    if isinstance(kind, ir.DoubleType):
        return 8
    if isinstance(kind, ir.FloatType):
        return 4
    if isinstance(kind, ir.IntType):
        return max(1, kind.width // 8)
    return None


def _element_bytes(function: ir.Function) -> int:
    """The widest scalar the kernel loads (4 for float kernels, 8 for double)."""
    sizes = [
        _scalar_bytes(i.type)
        for block in function.blocks
        for i in block.instructions
        if isinstance(i, ir.LoadInstr)
    ]
    return max((size for size in sizes if size), default=4)


def vector_widths(target: str, function: ir.Function) -> list[int]:
    """VF = 1, then the target's natural width and (on Hexagon) the smaller powers of two;
    only VF = 1 while the `simd` pass is not registered."""
    _load_passes()
    if "simd" not in REGISTRY:
        return [1]
    lanes = max(1, _vector_bytes(target, function.module) // _element_bytes(function))
    widths = [lanes]
    if target == "hexagon":
        widths += [w for w in (16, 8, 4, 2) if w < lanes]
    return [1] + [w for w in widths if w > 1]


def declares_alignment(function: ir.Function) -> bool:
    """Whether `function` declares alignment (`#pragma pycc row_align`, `aligned`, ...):
    then every strategy ends with `align`, which proves what the declaration allows."""
    return row_alignment(function) is not None or declared_pointer_alignment(function) > 1


@dataclass
class KernelTuning:
    """The search of one function: every trial and the chosen strategy."""

    function: str
    target: str
    result: SearchResult

    @property
    def best(self) -> Trial | None:
        return self.result.best


class Tuner:
    """Measures strategies on one module for one target, each strategy compiled once."""

    def __init__(self, module: ir.Module, target: str, verify: bool | None = None):
        """`verify`: LLVM-verify each trial pipeline (default: `PYCC_VERIFY_PASSES`)."""
        if target not in _MEASURE:
            raise ValueError(f"unknown target {target!r} (valid: {', '.join(TARGETS)})")
        self.module, self.target, self.verify = module, target, verify
        self._measured: dict[Strategy, tuple[dict[str, Cost], dict[str, str]]] = {}

    def _measure(self, strategy: Strategy) -> tuple[dict[str, Cost], dict[str, str]]:
        if strategy not in self._measured:
            applied = run_passes(
                fresh_copy(self.module), parse_pipeline(strategy.pipeline), verify=self.verify
            )
            declined = {  # a missed `align` proof changes no trip, a declined loop does
                r.function: r.message
                for r in applied.remarks
                if r.kind == "missed" and r.function and r.pass_name in ("unroll", "simd")
            }
            kernels = {f.name for f in self.module.functions if f.blocks and loops_of(f).loops}
            if strategy.iterations_per_trip > 1 and kernels <= declined.keys():
                costs = {}  # every loop declined: nothing to compile
            else:
                costs = _MEASURE[self.target](applied.module, strategy.iterations_per_trip)
            self._measured[strategy] = (costs, declined)
        return self._measured[strategy]

    def evaluate(self, function: str, strategy: Strategy) -> Cost:
        costs, declined = self._measure(strategy)
        if strategy.iterations_per_trip > 1 and function in declined:
            raise StrategyFailed(declined[function])
        if function not in costs:
            raise StrategyFailed(f"no innermost loop of {function} in the {self.target} code")
        return costs[function]

    def tune(self, function: str, options: SearchOptions | None = None) -> KernelTuning:
        _load_passes()
        widths = vector_widths(self.target, self.module.get_global(function))
        align = "align" in REGISTRY and declares_alignment(self.module.get_global(function))
        result = search(
            lambda s: self.evaluate(function, s), widths, options or SearchOptions(), align=align
        )
        return KernelTuning(function, self.target, result)


def tune_module(
    module: ir.Module,
    functions: Sequence[str],
    target: str,
    options: SearchOptions | None = None,
) -> list[KernelTuning]:
    """The search for each of `functions` of `module` (the module is not changed)."""
    tuner = Tuner(module, target)
    return [tuner.tune(name, options) for name in functions]
