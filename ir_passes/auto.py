"""`auto`: time-tile the iterated stencils (on a target with caches), then apply to each other
function the strategy `tune` chooses for it on the module's target.

The one pass driven by back-end feedback: for every function with a loop it runs the strategy
search (`ir_passes.strategy`) with the cycles of the module's Target (the host's: llvm-mca, or its
throughput model), then runs the winning pipeline (`unroll(U)`, `simd(W),unroll(U)`) on that
function alone, if it beats the original loop as the JIT and the compiler mode build it: with
LLVM's own vectorizer (`Target.original_loop_cycles`), which vectorizes the original loop but not
an unrolled one (whose guard it cannot analyse), so scalar unrolling rarely wins against it.
Every candidate is a pass pipeline that is itself bit-exact, so `auto` is too.
It returns a fresh copy of the module (`ir_passes.copying.fresh_copy`): the strategies are
tried on copies, and the winners are applied to one that no earlier printing has left stale
names in.

Compile-time budget: each strategy costs a copy of the module, the pipeline (not verified: the
winner is, when it is applied), one -O3 compile and one llvm-mca run, about 150-200 ms for a
3x3 filter here. So the search is kept short (UF <= 4, stop at the first UF that gains less
than 2 %): 0.3-3 s per kernel on a 2-core VM with the SIMD widths, on top of the compile. The
choice is cached per function IR (the function's text and the host CPU), so a kernel seen again
in the same process costs nothing. The compiler mode does not turn it on at -O3 (the choice
depends on the machine that compiles and on whether llvm-mca is installed there, and builds
must be reproducible); `-fpycc-passes=auto` asks for it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from llvmlite import ir

from .core.analyses import loops_of
from .core.copying import forget_strings, fresh_copy
from .core.target import Target
from .pipeline import parse_pipeline, run_passes
from .presets import LOCALITY_PASSES
from .registry import PassContext, register
from .strategy import SearchOptions
from .tuning import Tuner

OPTIONS = SearchOptions(max_unroll=4, min_unroll=1, eps=1, min_gain=0.02)
_chosen: dict[str, tuple[str | None, str]] = {}


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


def _key(function: ir.Function, target: Target) -> str:
    text = f"{target.describe()}\n{function}"
    return hashlib.sha256(text.encode()).hexdigest()


def _as_built(module: ir.Module, functions: list[ir.Function], target: Target) -> dict[str, float]:
    """Cycles per iteration of each function's original innermost loop as the target's
    compiler builds it (the module's text is printed once; its cached strings are dropped
    afterwards)."""
    steps = {}
    for function in functions:
        found = [lp.trip_count.step for lp in loops_of(function).innermost() if lp.trip_count]
        if found:
            steps[function.name] = abs(found[0])
    text = str(module)
    for function in module.functions:
        forget_strings(function)
    return target.original_loop_cycles(text, steps)


def _choose(tuner, name: str, built: float | None, target: str) -> tuple[str | None, str]:
    """(pipeline to apply or None, the analysis remark saying why)."""
    best = tuner.tune(name, OPTIONS).best
    if best is None:
        return None, "kept the original loop: no strategy could be measured"
    if built is not None and built <= best.cost.ii:
        return None, (
            f"kept the original loop: LLVM's vectorizer makes it {built:.3g} cycles per "
            f"iteration, the best strategy ({best.strategy.pipeline}) {best.cost.ii:.3g}"
        )
    return best.strategy.pipeline, (
        f"tuned for {'the host' if target == 'host' else target}: {best.strategy.pipeline} "
        f"({best.cost.ii:.3g} cycles per iteration)"
    )


def _tile_for_locality(module: ir.Module, context: PassContext) -> set[str]:
    """Time-tile the iterated stencils and fuse-tile the pipelines, for data beyond the L2
    cache (memory-bound sweeps gain most from locality; the tiled loops are left to LLVM's
    vectorizer); the names of the functions tiled. Other nests stay as they are, silently."""
    applied = run_passes(
        module, parse_pipeline(LOCALITY_PASSES), verify=False, target=context.target
    )
    done = [r for r in applied.remarks if r.kind == "passed"]
    context.remarks.extend(done)
    # a pointer-swap loop unrolled but not time-tiled is still tuned
    return {r.function for r in done if r.message.startswith(("time-tiled", "fused"))}


@register("auto")
def auto(module: ir.Module, *, context: PassContext) -> ir.Module:
    """Tune each looping function for the module's target and apply its best strategy."""
    target = context.target
    module = fresh_copy(module)
    originals = {f.name for f in module.functions if f.blocks}
    tiled = _tile_for_locality(module, context) if target.cache_tiling else set()
    looping = [
        f
        for f in module.functions
        if f.blocks and f.name in originals - tiled and loops_of(f).loops
    ]
    keys = {f.name: _key(f, target) for f in looping}
    for function in looping:
        forget_strings(function)  # printed by _key
    todo = [f for f in looping if keys[f.name] not in _chosen]
    built_cycles = _as_built(module, todo, target) if todo else {}
    # strategies are tried on the module as it was: not on functions already given theirs
    tuner = Tuner(fresh_copy(module), target, verify=False) if todo else None
    for function in looping:
        key = keys[function.name]
        if key not in _chosen:
            built = built_cycles.get(function.name)
            _chosen[key] = _choose(tuner, function.name, built, target.name)
        pipeline, reason = _chosen[key]
        context.analysis(reason, at=function)
        if pipeline is None or pipeline == "unroll(1)":
            continue
        with only(module, function):  # verified whole, as auto's output, by run_passes
            applied = run_passes(module, parse_pipeline(pipeline), verify=False, target=target)
        context.remarks.extend(applied.remarks)
        context.passed(f"applied {pipeline}", at=function)
    return module
