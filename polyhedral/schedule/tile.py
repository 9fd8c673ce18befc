"""`tile(s1,...,sk)`: rectangular tiling of the outermost k-deep band of each loop nest that
can legally be tiled (a nest whose outer loop carries a dependence that tiling would break,
such as a time loop, is tiled one level further in). Independent tiles are marked parallel."""

from __future__ import annotations

import islpy as isl

from ..cache_model import spatial_tile
from ..deps import Dependences, is_legal
from . import bands
from .outcome import Outcome


def tile(scop, deps: Dependences, sizes: list[int], *, l2: int, l1: int = 0) -> Outcome:
    schedule = scop.schedule()
    outcome = Outcome(schedule)
    pending = [bands.path_of(n) for n in bands.chain_starts(schedule.get_root())]
    while pending:
        path = pending.pop(0)
        node = bands.node_at(outcome.schedule, path)
        depth = bands.chain_depth(node)
        want = sizes or spatial_tile(depth, scop.bytes_per_point(), l2)
        if len(want) > depth:
            pending += _inner(node)
            outcome.refuse(f"band of depth {depth} is shallower than the {len(want)} tile sizes")
            continue
        tiled = bands.tile_band(bands.merge_chain(node, len(want)), want)
        candidate = tiled.get_schedule()
        if not is_legal(deps, candidate):
            outcome.refuse(
                f"tiling the loops at depth {len(path)} with sizes "
                f"{'x'.join(map(str, want))} would violate a dependence"
            )
            pending += _inner(node)
            continue
        tiled = _mark(bands.isolate_full_tiles(tiled.child(0)).parent(), deps.all)
        outcome.accept(
            bands.atomic(tiled.get_schedule()),
            f"tiled a {len(want)}-deep band with sizes {'x'.join(map(str, want))}",
        )
    return outcome


def _inner(node: isl.ScheduleNode) -> list:
    return [bands.path_of(n) for n in bands.chain_starts(node)]


def _mark(tile_band: isl.ScheduleNode, dependences: isl.UnionMap) -> isl.ScheduleNode:
    for member in range(tile_band.band_n_member()):
        if bands.member_is_parallel(tile_band, dependences, member):
            return bands.mark_parallel(tile_band, member)
    return tile_band
