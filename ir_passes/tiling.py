"""Drivers of the polyhedral passes: `tile(s1,...)`, `time-tile(st,s1,...)`, `fuse-tile(s1,...)`,
`overlap-tile(st,s1,...)`.

Each finds the SCoPs of every function (polyhedral/scop.py), computes their dependences,
asks the transformation (polyhedral/schedule/) for a new schedule, which is legal or refused,
and regenerates the nests from it (polyhedral/codegen.py). Sizes left out (or 0) come from the
host's cache sizes. Remarks say what was tiled, what was refused and why, and which nests are
not SCoPs (and which construct makes them non-affine).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ..polyhedral.cache_model import cache_bytes
from ..polyhedral.codegen import generate
from ..polyhedral.deps import compute_dependences
from ..polyhedral.schedule.fuse_tile import fuse_tile as fuse_tile_schedule
from ..polyhedral.schedule.outcome import Outcome
from ..polyhedral.schedule.overlap_tile import overlap_tile as overlap_tile_schedule
from ..polyhedral.schedule.tile import tile as tile_schedule
from ..polyhedral.schedule.time_tile import time_tile as time_tile_schedule
from ..polyhedral.scop import Scop, extract_scops
from .pipeline import PassContext, register


class TileSize(int):
    """A tile size: an integer >= 1, or 0 for "from the cache model"."""

    def __new__(cls, value: object) -> TileSize:
        number = int.__new__(cls, value)
        if number < 0:
            raise ValueError(f"tile size must be >= 0, not {number}")
        return number


TileSize.__name__ = "tile size (an integer >= 1, 0 = from the cache model)"
_SIZES = (TileSize,) * 4


def _run(
    module: ir.Module,
    sizes: tuple[int, ...],
    transform: Callable[[Scop, object, list[int]], Outcome],
    context: PassContext,
    merge: bool = True,
    min_bytes: int = 0,
) -> ir.Module:
    wanted = [s for s in sizes if s]
    for function in list(module.functions):
        if not function.blocks:
            continue
        scops, rejected = extract_scops(function, merge)
        for why in rejected:
            context.missed(f"loop nest is not a SCoP: {why.reason}", at=why.at)
        for scop in scops:
            outcome = transform(scop, compute_dependences(scop), wanted)
            at = scop.entry.terminator
            for reason in outcome.refused:
                context.missed(f"refused: {reason}", at=at)
            if outcome.changed:
                generate(scop, outcome.schedule, min_bytes)
                for message in outcome.done:
                    context.passed(message, at=at)
    return module


@register("tile", _SIZES, defaults=(0, 0, 0, 0))
def tile(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """Rectangular tiles of the outermost legally tileable band of each nest."""
    return _run(module, sizes, tile_schedule, context)


@register("time-tile", _SIZES, defaults=(0, 0, 0, 0))
def time_tile(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """Skewed tiles across the time loop of iterated stencils, wavefronts in parallel."""
    return _run(module, sizes, time_tile_schedule, context, merge=False)


@register("time-tile-large", _SIZES, defaults=(0, 0, 0, 0))
def time_tile_large(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """`time-tile` whose tiled code runs only when the nest's arrays exceed the L2 cache
    (else the original nest: at cache sizes the tile loops cost more than they save); what
    `-O3` and `auto` use."""
    return _run(module, sizes, time_tile_schedule, context, merge=False, min_bytes=cache_bytes(2))


@register("fuse-tile", _SIZES, defaults=(0, 0, 0, 0))
def fuse_tile(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """Tiles of the last stage of a pipeline of loop nests, the producers fused into each
    tile (recomputed for it, halos overlapping)."""
    return _run(module, sizes, fuse_tile_schedule, context)


@register("overlap-tile", _SIZES, defaults=(0, 0, 0, 0))
def overlap_tile(module: ir.Module, *sizes: int, context: PassContext) -> ir.Module:
    """Overlapped time tiles of iterated stencils: the space tiles of a time tile run in
    parallel on private buffers, each recomputing the halo it needs."""
    return _run(module, sizes, overlap_tile_schedule, context, merge=False)
