"""`tune`: run the strategy search of `ir_passes.strategy` against one target's feedback.

Each strategy's pipeline runs on a copy of the kernel module; the result is measured once
per strategy for every function of the module (one compile) by the Target's cost model or
oracle (`Target.loop_costs`: the host's cycles, the Hexagon oracle, the C66x model).
A function whose loop a pass declined (a `-Rpass-missed` remark for it) gets no cost for that
strategy: its loop would be measured unchanged but divided by the wrong UF.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from llvmlite import ir

from .core.alignment import declared_pointer_alignment, row_alignment
from .core.analyses import loops_of
from .core.copying import fresh_copy
from .core.target import Cost, Target
from .pipeline import parse_pipeline, run_passes
from .strategy import (
    SearchOptions,
    SearchResult,
    Strategy,
    StrategyFailed,
    Trial,
    search,
)


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


def vector_widths(target: Target, function: ir.Function) -> list[int]:
    """VF = 1, then the widths the target offers for the kernel's widest element."""
    return target.vector_widths(_element_bytes(function))


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


#: one strategy's measurement of a module: each function's cost, and why a pass declined
#: each function it declined
Measurement = tuple[dict[str, Cost], dict[str, str]]


def measure(
    module: ir.Module, target: Target, strategy: Strategy, verify: bool | None = None
) -> Measurement:
    """`strategy`'s pipeline run on a copy of `module` and its loops costed by `target`
    (what each trial costs; `tune --jobs/--scheduler` runs it on workers)."""
    applied = run_passes(
        fresh_copy(module), parse_pipeline(strategy.pipeline), verify=verify, target=target
    )
    declined = {  # a missed `align` proof changes no trip, a declined loop does
        r.function: r.message
        for r in applied.remarks
        if r.kind == "missed" and r.function and r.pass_name in ("unroll", "simd")
    }
    kernels = {f.name for f in module.functions if f.blocks and loops_of(f).loops}
    if strategy.iterations_per_trip > 1 and kernels <= declined.keys():
        return {}, declined  # every loop declined: nothing to compile
    return target.loop_costs(applied.module, strategy.iterations_per_trip), declined


class _Unmeasured(Exception):
    """A replayed search reached a strategy nobody measured yet (its unroll factor)."""

    def __init__(self, uf: int):
        super().__init__(uf)
        self.uf = uf


class Tuner:
    """Measures strategies on one module for one target, each strategy compiled once."""

    def __init__(self, module: ir.Module, target: Target, verify: bool | None = None):
        """`verify`: LLVM-verify each trial pipeline (default: `PYCC_VERIFY_PASSES`)."""
        self.module, self.target, self.verify = module, target, verify
        self._measured: dict[Strategy, Measurement] = {}

    def record(self, strategy: Strategy, measurement: Measurement) -> None:
        """A measurement made elsewhere (on a worker): the search uses it as its own."""
        self._measured[strategy] = measurement

    def unmeasured(self, functions: Sequence[str], options: SearchOptions, ahead: int) -> set:
        """What the searches of `functions` would measure next (`tune` on workers measures a
        round of them at once): for every function and vector width, the search replayed on
        what is measured up to its first strategy that is not, and the `ahead - 1` after it.
        Each width is replayed alone: its stopping rules look at its own trials only, so its
        trials are those of the whole search."""
        found: set[Strategy] = set()
        for name in functions:
            kernel = self.module.get_global(name)
            align = declares_alignment(kernel)
            for vf in vector_widths(self.target, kernel):
                try:
                    search(functools.partial(self._replayed, name), [vf], options, align)
                except _Unmeasured as missing:
                    last = min(missing.uf + ahead - 1, options.max_unroll)
                    found.update(Strategy(uf, vf, align) for uf in range(missing.uf, last + 1))
        return found

    def _replayed(self, function: str, strategy: Strategy) -> Cost:
        if strategy not in self._measured:
            raise _Unmeasured(strategy.uf)
        return self.evaluate(function, strategy)

    def _measure(self, strategy: Strategy) -> Measurement:
        if strategy not in self._measured:
            self._measured[strategy] = measure(self.module, self.target, strategy, self.verify)
        return self._measured[strategy]

    def evaluate(self, function: str, strategy: Strategy) -> Cost:
        costs, declined = self._measure(strategy)
        if strategy.iterations_per_trip > 1 and function in declined:
            raise StrategyFailed(declined[function])
        if function not in costs:
            raise StrategyFailed(f"no innermost loop of {function} in the {self.target.name} code")
        return costs[function]

    def tune(self, function: str, options: SearchOptions | None = None) -> KernelTuning:
        kernel = self.module.get_global(function)
        result = search(
            lambda s: self.evaluate(function, s),
            vector_widths(self.target, kernel),
            options or SearchOptions(),
            align=declares_alignment(kernel),
        )
        return KernelTuning(function, self.target.name, result)


def tune_module(
    module: ir.Module,
    functions: Sequence[str],
    target: Target,
    options: SearchOptions | None = None,
) -> list[KernelTuning]:
    """The search for each of `functions` of `module` (the module is not changed)."""
    tuner = Tuner(module, target)
    return [tuner.tune(name, options) for name in functions]
