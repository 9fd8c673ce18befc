"""Drivers of the polyhedral passes: `tile(s1,...)`, `time-tile(st,s1,...)` (and its forced
shapes `diamond-tile`, `parallelogram-tile`), `overlap-tile(st,s1,...)`, `fuse-tile(s1,...)`,
`parallel-sweep`, and the `-large` forms `-O3` runs.

Each takes the SCoPs of every function and their dependences (polyhedral/analysis.py, cached
like the loops), asks the transformation (polyhedral/schedule/) for a new schedule, which is
legal or refused, and regenerates the nests from it (polyhedral/codegen.py). Sizes left out (or
0) come from the cache sizes of the module's Target, and parallel loops run on its
`parallel_runtime` (serial unless the build asks for threads). Remarks say what was tiled, what was
refused and why, and which nests are not SCoPs (and which construct makes them non-affine).
The time-tiling passes first unroll pointer-swap time loops (`swap_unroll.py`) into the
K-sweep form they tile.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from llvmlite import ir

from ..polyhedral.analysis import scop_analysis
from ..polyhedral.budget import BudgetExceeded, isl_budget
from ..polyhedral.codegen import constant_footprint, constant_touched, generate, values_in
from ..polyhedral.schedule.fuse_tile import fuse_tile as fuse_tile_schedule
from ..polyhedral.schedule.outcome import Outcome
from ..polyhedral.schedule.overlap_tile import overlap_tile as overlap_tile_schedule
from ..polyhedral.schedule.parallel_sweep import parallel_sweep as parallel_sweep_schedule
from ..polyhedral.schedule.stream_sweep import stream_sweep as stream_sweep_schedule
from ..polyhedral.schedule.stream_sweep import write_only
from ..polyhedral.schedule.tile import tile as tile_schedule
from ..polyhedral.schedule.time_tile import may_run_rows_together
from ..polyhedral.schedule.time_tile import time_tile as time_tile_schedule
from ..polyhedral.scop import Scop
from .core.counters import count_up_from_zero, widen_narrow_counters
from .core.hoisting import hoist_invariants
from .core.inlining import inline_calls_in_loops
from .core.loop_promotion import promote_scalars_in_loops
from .core.machine_model import SERIAL
from .core.rotation import test_before_the_body
from .registry import PassContext, bounded_int, register
from .simd import bind_generated, fence_streams
from .swap_unroll import remainder_blocks, unroll_pointer_swaps

#: bytes the arrays of a nest whose tiled code pays at any size (`Outcome.in_cache`) must still
#: span for it to run: on the tiniest grids the tile loops cost more than the few hundred
#: points save (seidel-2d, doubles: 0.43x gcc at 8^2, even at 16^2 = 2 KiB, 1.6x at 24^2;
#: docs/tiling_benchmarks.md). A nest of the -large passes that touches no more elements than
#: this, wherever they are, is refused too: `dropin_prescan.TINY_NEST_BYTES` relies on it
IN_CACHE_MIN_BYTES = 4096
#: bytes the arrays of a nest must span for `parallel-sweep-large`'s parallel code to run:
#: below, starting and joining the team costs about what the second core saves. A 5-point
#: double sweep on 2 threads against cc -O3 (AMD EPYC, libgomp; docs/tiling_benchmarks.md):
#: 0.6-0.8x at 64 KiB, 1.1x at 128 KiB, 1.2-1.5x at 256 KiB, 1.2-2.5x from 512 KiB on
PARALLEL_MIN_BYTES = 256 << 10
#: the last-level caches a nest's arrays must span for `stream-sweep-large`'s code to run:
#: below, the next call (or the next reader) finds plain stores in the L3, and streamed ones
#: in DRAM. A laplace-2d sweep on the Xeon guest (the L3 counted 32 MiB, `emit.cc_machine`;
#: docs/tiling_benchmarks.md, "Streaming stores on an Intel Xeon guest"), streamed against
#: plain: 0.70x at 23 MB of arrays, 0.73x at 28 MB, even at 52 MB, 1.12x at 64 MB, 1.9x at
#: 92 MB
STREAM_LLC_MULTIPLE = 2
#: a tile size: 0 for "from the cache model", at most a million points along a dimension
TileSize = bounded_int("tile size", 1 << 20, least=0)
_SIZES = (TileSize,) * 4


def _run(
    module: ir.Module,
    sizes: tuple[int, ...],
    transform: Callable[..., Outcome],
    context: PassContext,
    merge: bool = True,
    large: bool = False,
    swaps: bool = False,
    in_cache: Callable[..., bool] | None = None,
    threshold: int | None = None,
    floor: str = "the parallel code's minimum",
    by_cells: bool = False,
    whole: bool = False,
    finish: Callable[[Scop, list[ir.Block]], str | None] | None = None,
) -> ir.Module:
    """Transform every SCoP of the module; with `large`, the new code runs only when the
    nest's arrays span `threshold` bytes (`floor` names it; by default the target's locality
    threshold, `Target.locality_threshold`; with `by_cells`, the boxes of the cells it
    touches hold them), unless the transformation says it pays at any size
    (`Outcome.in_cache`; `in_cache(scop, deps)`: whether it may, asked before transforming a
    nest whose arrays are known to be smaller). With `whole`, a function is transformed only
    if every loop nest of it is (code earlier passes generated aside): taking it over compiles
    all of it, and nests no pass improves may run slower than cc's code. `finish(scop, new
    blocks)` completes a generated nest (its blocks in the function and in the functions its
    parallel loops were outlined into), or says why it did not (the nest is then refused)."""
    wanted = [s for s in sizes if s]
    l1, l2 = context.target.cache_bytes(1), context.target.cache_bytes(2)
    floor = "half the last-level cache" if threshold is None else floor
    if not large:
        threshold = 0
    elif threshold is None:
        threshold = context.target.locality_threshold()
    for function in module.functions:
        if function.blocks:
            kept: list = []
            inline_calls_in_loops(function, kept)  # index helpers, a sweep per step, swap(&u, &v)
            for call, reason in kept:
                context.missed(f"call to {call.callee.name} not inlined: {reason}", at=call)
            test_before_the_body(function)  # counted do-while time loops
            widen_narrow_counters(function)  # `short t` counting to a `short T`
            count_up_from_zero(function)  # time loops counting down, by two, in an unsigned
            promote_scalars_in_loops(function)  # grids in global pointers or struct members
            hoist_invariants(function)  # bounds read from globals: a swap loop's trip count
    if swaps:  # pointer-swap time loops become the K-sweep form first
        unroll_pointer_swaps(module, context, enabling=True)
    for function in list(module.functions):
        if not function.blocks:
            continue
        hoist_invariants(function)  # loop bounds read from globals become parameters
        try:
            with isl_budget():
                analysis = scop_analysis(function, merge)
        except BudgetExceeded as exc:
            context.missed(f"loop nests not modelled: {exc}", at=function)
            continue
        for why in analysis.rejected:
            if not _generated(why.at):  # (code an earlier pass generated: not the user's)
                context.missed(f"loop nest is not a SCoP: {why.reason}", at=why.at)
        pending: list[tuple[Scop, object, Outcome]] = []
        for scop in analysis.scops:
            if swaps and scop.entry in remainder_blocks(function):
                continue  # a remainder sweep of a swap loop: no time loop
            at = scop.entry.terminator
            fixed = constant_footprint(scop) if large else None
            touched = constant_touched(scop) if large else None
            if touched is not None and touched <= IN_CACHE_MIN_BYTES:
                context.missed(
                    f"refused: it touches {touched} bytes, which stay in the L1 cache in any order",
                    at=at,
                )
                continue
            small = fixed is not None and fixed < threshold
            too_small = (
                f"refused: its arrays span {fixed} bytes, less than {floor} ({threshold} "
                "bytes): the new code would never run"
            )
            try:
                with isl_budget():  # the code generator runs unbounded: it edits the IR
                    deps = analysis.dependences(scop)
                    tiny = fixed is not None and fixed < IN_CACHE_MIN_BYTES
                    if small and (tiny or not (in_cache and in_cache(scop, deps))):
                        context.missed(too_small, at=at)
                        continue
                    outcome = transform(scop, deps, wanted, l2=l2, l1=l1)
            except BudgetExceeded as exc:
                context.missed(f"refused: {exc}", at=at)
                continue
            for reason in outcome.refused:
                context.missed(f"refused: {reason}", at=at)
            if small and outcome.changed and not outcome.in_cache:
                context.missed(too_small, at=at)
                continue
            if outcome.changed:
                pending.append((scop, at, outcome))
        # a nest left as it is (the code earlier passes generated aside)
        kept = any(not _generated(why.at) for why in analysis.rejected)
        kept = kept or len(pending) < len(analysis.scops) or any(o.refused for *_, o in pending)
        if whole and kept and pending:
            context.missed(
                "refused: the function has loop nests this pass does not change; taking it "
                "over would compile them too",
                at=function,
            )
            continue
        for scop, at, outcome in pending:
            target = context.target
            runtime, team = target.parallel_runtime, target.parallel_team
            least = min(IN_CACHE_MIN_BYTES, threshold) if outcome.in_cache else threshold
            before = {b for f in module.functions for b in f.blocks}
            generate(scop, outcome.schedule, least, runtime, team, by_cells)
            if finish is not None:
                made = [b for f in module.functions for b in f.blocks if b not in before]
                refusal = finish(scop, made)
                if refusal:
                    context.missed(f"refused: {refusal}", at=at)
                    continue
            assumed = _assumption(scop)
            for message in outcome.done:
                context.passed(message + assumed, at=at)
    return module


def _generated(at: object) -> bool:
    """Is `at` (an instruction) in code an earlier polyhedral pass generated?"""
    block = getattr(at, "parent", None)
    return getattr(block, "name", "").startswith("poly.")


def _assumption(scop: Scop) -> str:
    """What the tiled code assumes of the parameters (checked at run time), for the remark."""
    if scop.assumed is None:
        return ""
    text = str(scop.assumed)
    return f" (when {text[text.index(':') + 1 : text.rindex('}')].strip()}, checked at run time)"


@register("tile", _SIZES, defaults=(0, 0, 0, 0))
def tile(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """Rectangular tiles of the outermost legally tileable band of each nest."""
    return _run(module, sizes, tile_schedule, context)


@register("time-tile", _SIZES, defaults=(0, 0, 0, 0))
def time_tile(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """Tiles across the time loop of iterated stencils, wavefronts in parallel: diamond tiles
    where legal, else skewed parallelograms (polyhedral/schedule/time_tile.py)."""
    transform = _time_tiles(context)
    return _run(module, sizes, transform, context, merge=False, swaps=True)


@register("diamond-tile", _SIZES, defaults=(0, 0, 0, 0))
def diamond_tile(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """`time-tile` with diamond tiles only (refused where they are illegal)."""
    transform = _time_tiles(context, shape="diamond")
    return _run(module, sizes, transform, context, merge=False, swaps=True)


@register("parallelogram-tile", _SIZES, defaults=(0, 0, 0, 0))
def parallelogram_tile(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """`time-tile` with skewed parallelogram tiles only."""
    transform = _time_tiles(context, shape="parallelogram")
    return _run(module, sizes, transform, context, merge=False, swaps=True)


@register("time-tile-large", _SIZES, defaults=(0, 0, 0, 0))
def time_tile_large(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """`time-tile` whose tiled code runs only when the nest's arrays exceed the L2 cache
    (else the original nest: at cache sizes the tile loops cost more than they save), except
    tiles that run their rows together (in-place sweeps), which pay at any size; what `-O3`
    and `auto` use."""
    return _run(
        module,
        sizes,
        _time_tiles(context),
        context,
        merge=False,
        large=True,
        swaps=True,
        in_cache=may_run_rows_together,
    )


def _time_tiles(context: PassContext, shape: str = "auto") -> Callable[..., Outcome]:
    """The time-tiling transformation for the pass's target (its measured sizes)."""
    return functools.partial(time_tile_schedule, shape=shape, tile_key=context.target.tile_key())


@register("fuse-tile", _SIZES, defaults=(0, 0, 0, 0))
def fuse_tile(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """Tiles of the last stage of a pipeline of loop nests, the producers fused into each
    tile (recomputed for it, halos overlapping)."""
    return _run(module, sizes, _fused_tiles(context), context)


@register("fuse-tile-large", _SIZES, defaults=(0, 0, 0, 0))
def fuse_tile_large(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """`fuse-tile` whose fused code runs only when the pipeline's arrays exceed the L2 cache
    (what `-O3` and `auto` use, like `time-tile-large`)."""
    return _run(module, sizes, _fused_tiles(context), context, large=True)


def _fused_tiles(context: PassContext) -> Callable[..., Outcome]:
    """The fused-tiling transformation for the pass's target (its measured sizes)."""
    return functools.partial(fuse_tile_schedule, tile_key=context.target.tile_key())


@register("parallel-sweep")
def parallel_sweep(module: ir.Module, context: PassContext) -> ir.Module:
    """The outer loop of each nest that carries no dependence runs on the build's threads
    (polyhedral/schedule/parallel_sweep.py), at any size; nothing without threads."""
    return _parallel_sweep(module, context, large=False)


@register("parallel-sweep-large")
def parallel_sweep_large(module: ir.Module, context: PassContext) -> ir.Module:
    """`parallel-sweep` whose parallel code runs only when the nest's arrays span
    `PARALLEL_MIN_BYTES`."""
    return _parallel_sweep(module, context, large=True)


def _parallel_sweep(module: ir.Module, context: PassContext, large: bool) -> ir.Module:
    if context.target.parallel_runtime == SERIAL:
        context.missed(
            "refused: the build runs no threads (-fopenmp, -ftree-parallelize-loops=N or "
            "-fpycc-parallel ask for them)"
        )
        return module

    def bind(scop: Scop, blocks: list[ir.Block]) -> None:
        """Each thread's rows bound at the target's width, with vector epilogues: LLVM's
        vectorizer left a row's remainder scalar (14 points of a 62-float row at 16 lanes),
        and rows of 46-62 floats ran 0.6-0.7x gcc's OpenMP code."""
        at = scop.entry.terminator
        for function in {block.parent: None for block in blocks}:  # (in order)
            bind_generated(context, function, set(blocks), at)

    return _run(
        module,
        (),
        parallel_sweep_schedule,
        context,
        large=large,
        threshold=PARALLEL_MIN_BYTES,
        whole=large,
        finish=bind,
    )


@register("stream-sweep")
def stream_sweep(module: ir.Module, context: PassContext) -> ir.Module:
    """The stores of each nest into arrays it does not read become non-temporal
    (polyhedral/schedule/stream_sweep.py), at any size, where the target has such stores."""
    return _stream_sweep(module, context, large=False)


@register("stream-sweep-large")
def stream_sweep_large(module: ir.Module, context: PassContext) -> ir.Module:
    """`stream-sweep` whose streaming code runs only when the nest's arrays span
    STREAM_LLC_MULTIPLE last-level caches, where the target's streaming stores pay (what
    `-O3` runs there): on data the caches hold, the next reader finds plain stores there."""
    return _stream_sweep(module, context, large=True)


def _stream_sweep(module: ir.Module, context: PassContext, large: bool) -> ir.Module:
    target = context.target
    if not target.streaming_stores(target.vector_bytes):
        context.missed(f"refused: {target.describe()} has no non-temporal stores")
        return module
    if large and not target.streaming_stores_pay():
        context.missed(f"refused: non-temporal stores do not pay on {target.describe()}")
        return module

    def bind(scop: Scop, blocks: list[ir.Block]) -> str | None:
        bases = {array.base for array in write_only(scop)}
        functions = {block.parent: None for block in blocks}  # (in order)
        at = scop.entry.terminator
        streamed = [
            f for f in functions if bind_generated(context, f, set(blocks), at, values_in(f, bases))
        ]
        if not streamed:
            return "no innermost loop of it could stream its stores"
        _fence_where_left(scop, blocks, streamed)
        return None

    team = target.parallel_runtime != SERIAL
    transform = functools.partial(stream_sweep_schedule, team=team)
    threshold = max(target.locality_threshold(), STREAM_LLC_MULTIPLE * target.cache_bytes(3))
    floor = f"{STREAM_LLC_MULTIPLE} times the last-level cache"
    return _run(
        module,
        (),
        transform,
        context,
        large=large,
        threshold=threshold,
        floor=floor,
        by_cells=True,  # a strip of a wide image that the caches hold spans its whole rows
        whole=large,
        finish=bind,
    )


def _fence_where_left(scop: Scop, blocks: list[ir.Block], streamed: list[ir.Function]) -> None:
    """One fence where the generated nest is left: on its edge to what follows the SCoP, and
    where each function outlined for its parallel loops returns (before the team's barrier)."""
    for block in blocks:
        if block.parent is scop.function and scop.exit in block.terminator.operands:
            fence_streams(block, scop.exit)
        elif block.parent in streamed and isinstance(block.terminator, ir.Ret):
            fence_streams(block)


@register("overlap-tile", _SIZES, defaults=(0, 0, 0, 0))
def overlap_tile(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """Overlapped time tiles of iterated stencils: the space tiles of a time tile run in
    parallel on private buffers, each recomputing the halo it needs."""
    return _run(module, sizes, overlap_tile_schedule, context, merge=False, swaps=True)
