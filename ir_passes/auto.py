"""`auto`: apply to each function the strategy `tune --target host` chooses for it.

The one pass driven by back-end feedback: for every function with a loop it runs the strategy
search (`ir_passes.strategy`) with the host's cycles (`emit.x86_cost`: llvm-mca, or its
throughput model), then runs the winning pipeline (`unroll(U)`, `simd(W),unroll(U)`) on that
function alone. Every candidate is a pass pipeline that is itself bit-exact, so `auto` is too.
It returns a fresh copy of the module (`emit.tuning.fresh_copy`): the strategies are tried on
copies, and the winners are applied to one that no earlier printing has left stale names in.

Compile-time budget: each strategy costs a copy of the module, the pipeline (not verified:
the winner is, when it is applied), one -O3 compile and one llvm-mca run, about 150-200 ms
for a 3x3 filter here. So the search is kept short (UF <= 4, stop at the first UF that gains
less than 2 %): 0.3-0.8 s per kernel, on top of the compile. The choice is cached per
function IR (the function's text and the host CPU), so a kernel seen again in the same
process costs nothing. The compiler mode does not turn it on at -O3 (the
choice depends on the machine that compiles and on whether llvm-mca is installed there, and
builds must be reproducible); `-fpycc-passes=auto` asks for it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from llvmlite import ir

from .loops import invalidate, loops_of
from .pipeline import PassContext, parse_pipeline, register, run_passes
from .strategy import SearchOptions

OPTIONS = SearchOptions(max_unroll=4, min_unroll=1, eps=1, min_gain=0.02)
_chosen: dict[str, str | None] = {}


@contextmanager
def only(module: ir.Module, function: ir.Function) -> Iterator[None]:
    """Passes see `function` as the module's only definition (the others' bodies hidden)."""
    hidden = {f: f.blocks for f in module.functions if f is not function and f.blocks}
    for other in hidden:
        other.blocks = []
    try:
        yield
    finally:
        for other, blocks in hidden.items():
            other.blocks = blocks


def _key(function: ir.Function) -> str:
    import llvmlite.binding as llvm

    text = f"{llvm.get_host_cpu_name()}\n{llvm.get_host_cpu_features().flatten()}\n{function}"
    return hashlib.sha256(text.encode()).hexdigest()


@register("auto")
def auto(module: ir.Module, *, context: PassContext) -> ir.Module:
    """Tune each looping function for the host and apply its best strategy."""
    from ..emit.tuning import Tuner, forget_strings, fresh_copy

    module = fresh_copy(module)
    tuner = None
    for function in module.functions:
        if not function.blocks or not loops_of(function).loops:
            continue
        key = _key(function)
        forget_strings(function)
        if key not in _chosen:
            tuner = tuner or Tuner(module, "host", verify=False)
            best = tuner.tune(function.name, OPTIONS).best
            _chosen[key] = best.strategy.pipeline if best else None
            if best:
                context.analysis(
                    f"tuned for the host: {best.strategy.pipeline}, "
                    f"{best.cost.ii:.3g} cycles per iteration",
                    at=function,
                )
        pipeline = _chosen[key]
        if pipeline is None or pipeline == "unroll(1)":
            continue
        with only(module, function):
            applied = run_passes(module, parse_pipeline(pipeline))
        invalidate(function)
        context.remarks.extend(applied.remarks)
        context.passed(f"applied {pipeline}", at=function)
    return module
