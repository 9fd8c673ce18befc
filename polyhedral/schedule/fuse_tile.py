"""`fuse-tile(s1,...)`: tiling after fusion of a multi-stage pipeline (consecutive loop nests,
e.g. blur x -> blur y -> sharpen), after Zhao & Cohen (MICRO 2020).

Each loop nest of the SCoP is a *stage*. Only the last (live-out) stage is tiled, rectangularly
on its outer loops. A tile of it needs certain instances of the earlier stages: walking back
from the last stage, the instances of stage k a tile needs are the exact dataflow sources
(`compute_flow`) of the instances of later stages the tile needs (the upwards-exposed data
of the tile, mapped back through the producers' writes). Each tile runs the instances of every
stage it needs, in stage order, then its own points; neighbouring tiles recompute their halos
(overlapped tiles). Producer instances no tile needs (the intermediates are pointer arguments,
visible to the caller, so every element must still be written) run after the tiles.

Recomputation is correct only for pure stages: every array is written by one stage, each
element at most once, and a stage reads only arrays that earlier stages write or that the
SCoP never writes (no in-place update, no read of what a later stage overwrites). Then every
recomputed instance reads the same inputs and writes the same bits as the original one, and
anything else is refused.

The intermediates stay in the caller's arrays (the front end gives a SCoP no local arrays, so
there is nothing that could be contracted into per-tile scratch buffers). Overlapping tiles
write the same values to the shared halo elements; tiles run in any order, but two tiles that
write one element must not run at once (a data race, even with equal values). So rows of
tiles (the first tile coordinate t0) are coloured t0 mod k with the smallest k (up to
_MAX_COLOURS) for which rows of one colour write disjoint elements: the colours run one after
the other, the rows of a colour in parallel, the tiles of a row serially. Point-wise
pipelines need one colour, stencils with halos narrower than a tile two.
"""

from __future__ import annotations

import islpy as isl

from ..cache_model import spatial_tile
from ..codegen import PARALLEL_MARK, Contraction, TwoLevel
from ..deps import Dependences
from ..scop import LoopNode, Scop, Statement
from ..tuned_sizes import default_sizes, lost
from . import bands
from .footprint import with_sources
from .outcome import Outcome

_MAX_COLOURS = 3


def fuse_tile(
    scop: Scop, deps: Dependences, sizes: list[int], *, l2: int, l1: int = 0, tile_key: str = ""
) -> Outcome:
    """Fused tiles of the pipeline `scop` (the module docstring); tiles not given are those
    measured for the target `tile_key` names (`tuned_sizes`), else the cache model's strips;
    where the target's measurements say fused tiles lose to the untiled stages, no sizes given
    refuses."""
    outcome = Outcome(scop.schedule())
    stages = [nest.statements() for nest in scop.nests]
    if len(stages) < 2:
        outcome.refuse("a single loop nest: no producer stage to fuse (use tile)")
        return outcome
    why = _impure(scop, stages)
    if why:
        outcome.refuse(why)
        return outcome
    last = scop.nests[-1]
    depth = _perfect_depth(last)
    name = pipeline_class(scop)
    why = lost(tile_key, name, "fused tiles")
    if not sizes and why:
        outcome.refuse(why)
        return outcome
    want, origin = list(sizes), ""
    if not sizes:
        want, origin = default_sizes(tile_key, name, lambda: _strip(scop, l2))
    if len(want) > depth:
        outcome.refuse(
            f"the live-out loop nest is {depth} deep, shallower than the {len(want)} tile sizes"
        )
        return outcome
    tile_params = bands.tile_parameter_names(scop.params, len(want))
    owner = _tile_of(scop, stages[-1], want)
    needed = _needed(scop, deps, stages, owner)
    scratch, left = _contracted(scop, stages, needed, tile_params)
    private = {s.array.name for s in scratch}
    colours = _colours(scop, needed, len(want), private)
    program = TwoLevel(
        outer=_outer(scop, owner, left, tile_params, colours),
        inner=_inner(scop, needed, tile_params),
        tile_params=tile_params,
        contracted=scratch,
    )
    outcome.accept(
        bands.separate_full_tiles(program),
        f"fused {len(stages)} loop nests into tiles (sizes {'x'.join(map(str, want))}) of the last "
        f"one (producers recomputed per tile), {_how(colours)}"
        + (f", {', '.join(sorted(private))} contracted to buffers per tile" if private else "")
        + origin,
    )
    return outcome


def pipeline_class(scop: Scop) -> str:
    """The pipeline's class (`tuned_sizes`): its stages, the depth of its last one and its
    bytes per point."""
    return (
        f"pipeline of {len(scop.nests)} stages over {_perfect_depth(scop.nests[-1])}-D, "
        f"{scop.bytes_per_point()} bytes a point"
    )


def _contracted(
    scop: Scop, stages: list[list[Statement]], needed: isl.UnionMap, names: list[str]
) -> tuple[list[Contraction], isl.UnionSet]:
    """The intermediates that live in a buffer per tile, and the instances to run after the
    tiles (those no tile needs). An intermediate is contracted when it is a local array only
    the SCoP uses (dead after it) and the rows a tile touches are a window of constant height;
    its instances no tile needs are then dead too, unless a remaining one reads it (then
    nothing is contracted)."""
    left = scop.domain().subtract(needed.range()).coalesce()
    outputs = {a.array.name for s in stages[-1] for a in s.accesses if a.is_write}
    params = ", ".join([*scop.params, *names])
    tile = isl.UnionSet(f"[{params}] -> {{ TILE[{', '.join(names)}] }}").apply(needed)
    touched = {c.get_tuple_name(): c for c in _sets(tile.apply(scop.reads().union(scop.writes())))}
    scratch = []
    for array in scop.arrays:
        if array.name in outputs or array.name not in touched or not scop.is_private(array):
            continue
        first, last = touched[array.name].dim_min(0), touched[array.name].dim_max(0)
        rows = last.sub(first).max_val()
        if rows.is_int():
            scratch.append(Contraction(array, first.coalesce(), rows.to_python() + 1))
    if not scratch:
        return [], left
    private = {s.array.name for s in scratch}
    dead = [
        s.tuple_text()
        for s in scop.statements
        if all(a.array.name in private for a in s.accesses if a.is_write)
    ]
    if dead:
        left = left.subtract(isl.UnionSet(f"{scop.param_prefix}{{ {'; '.join(dead)} }}"))
    read = {c.get_tuple_name() for c in _sets(left.apply(scop.reads()))}
    if read & private:
        return [], scop.domain().subtract(needed.range()).coalesce()
    return scratch, left


def _sets(union: isl.UnionSet) -> list[isl.Set]:
    out: list[isl.Set] = []
    union.foreach_set(out.append)
    return out


def _strip(scop: Scop, l2: int) -> list[int]:
    """Default tiles: strips of whole rows (the outer loop tiled), as many rows as a 512-wide
    slice of all the arrays fits in the L2 cache. Tiles that also cut the rows turn the
    streams over the arrays into short runs: 64x256 tiles ran blur-sharpen at 4096^2 at 0.82x
    gcc's time, 64-row strips at 1.0-1.2x. A 1-D pipeline gets `tile`'s 1-D size."""
    if _perfect_depth(scop.nests[-1]) == 1:
        return spatial_tile(1, scop.bytes_per_point(), l2)
    return [max(8, min(256, l2 // (512 * scop.bytes_per_point())))]


def _perfect_depth(nest: LoopNode) -> int:
    """How many loops are perfectly nested from the top of `nest`."""
    depth = 1
    while len(nest.children) == 1 and isinstance(nest.children[0], LoopNode):
        nest = nest.children[0]
        depth += 1
    return depth


def _impure(scop: Scop, stages: list[list[Statement]]) -> str | None:
    """Why recomputing the stages per tile could change a value, or None."""
    writer: dict[str, int] = {}
    for k, stage in enumerate(stages):
        for access in (a for s in stage for a in s.accesses if a.is_write):
            name = access.array.name
            if writer.setdefault(name, k) != k:
                return f"{name} is written by loop nests {writer[name] + 1} and {k + 1}"
    for k, stage in enumerate(stages):
        for access in (a for s in stage for a in s.accesses if not a.is_write):
            name = access.array.name
            if writer.get(name, -1) == k:
                return f"loop nest {k + 1} updates {name} in place (reads what it writes)"
            if writer.get(name, -1) > k:
                return (
                    f"loop nest {k + 1} reads {name}, which a later loop nest "
                    f"({writer[name] + 1}) writes"
                )
    if not scop.writes().is_injective():
        return "an array element is written more than once"
    if not any(writer.get(a.array.name, k) < k for k, stage in enumerate(stages)
               for s in stage for a in s.accesses if not a.is_write):  # fmt: skip
        return "no loop nest reads what an earlier one writes: nothing to fuse"
    return None


def _tile_of(scop: Scop, stage: list[Statement], sizes: list[int]) -> isl.UnionMap:
    """The live-out stage's instances -> TILE[t0..]: the tile each belongs to."""
    parts = []
    for s in stage:
        coords = ", ".join(f"floor(({i}) / {z})" for i, z in zip(s.iterators, sizes))
        parts.append(f"{s.tuple_text()} -> TILE[{coords}]")
    tiles = isl.UnionMap(f"{scop.param_prefix}{{ {'; '.join(parts)} }}")
    return tiles.intersect_domain(scop.domain())


def _needed(
    scop: Scop, deps: Dependences, stages: list[list[Statement]], owner: isl.UnionMap
) -> isl.UnionMap:
    """TILE -> every instance the tile runs: its own points and, stage by stage backwards, the
    sources of the values those read (the producer instances it recomputes), widened to their
    bounding box within the stage's domain (simple loop bounds; the sources of the extra
    instances are needed too, so they compute the same values as the original ones)."""
    needed = owner.reverse()
    for stage in reversed(stages[:-1]):
        tuples = "; ".join(s.tuple_text() for s in stage)
        mine = isl.UnionSet(f"{scop.param_prefix}{{ {tuples} }}").intersect(scop.domain())
        needed = with_sources(needed, deps.flow, mine)
    return needed


def _colours(scop: Scop, needed: isl.UnionMap, dims: int, private: set[str]) -> int | None:
    """The fewest colours t0 mod k that make rows of tiles of one colour write disjoint
    elements (of the arrays not in buffers per tile), or None (the tiles run serially)."""
    shared = [a for a in scop.arrays if a.name not in private]
    cells = "; ".join(f"{a.name}[{', '.join(f'e{k}' for k in range(a.rank))}]" for a in shared)
    written = needed.apply_range(
        scop.writes().intersect_range(isl.UnionSet(f"{scop.param_prefix}{{ {cells} }}"))
    )
    shared = written.apply_range(written.reverse())
    t = ", ".join(f"t{k}" for k in range(dims))
    u = ", ".join(f"u{k}" for k in range(dims))
    for k in range(1, _MAX_COLOURS + 1):
        rows = f"TILE[{t}] -> TILE[{u}] : t0 != u0 and (t0 - u0) mod {k} = 0"
        if shared.intersect(isl.UnionMap(f"{scop.param_prefix}{{ {rows} }}")).is_empty():
            return k
    return None


def _how(colours: int | None) -> str:
    if colours is None:
        return "tiles run serially (rows of tiles too close to run apart)"
    if colours == 1:
        return "rows of tiles in parallel"
    return f"rows of tiles in parallel, in {colours} colours (their halos overlap)"


def _outer(
    scop: Scop,
    owner: isl.UnionMap,
    left: isl.UnionSet,
    names: list[str],
    colours: int | None,
) -> isl.Schedule:
    """The tile loops over TILE[...] (the colour, the rows of tiles, the other coordinates),
    then the producer instances no tile needs (in their original order: each reads only
    final values of earlier stages)."""
    tiles = owner.range().coalesce()
    tile = f"TILE[{', '.join(names)}]"
    first, *rest = names
    members = [f"floor({first} / {colours or 1})", *rest]
    if colours and colours > 1:
        members.insert(0, f"{first} mod {colours}")
    band = ", ".join(f"{{ {tile} -> [({m})] }}" for m in members)
    node = isl.Schedule.from_domain(tiles).get_root().child(0)
    node = node.insert_partial_schedule(isl.MultiUnionPwAff(f"{scop.param_prefix}[{band}]"))
    if colours:
        if colours > 1:
            node = node.band_split(1).child(0)
        if node.band_n_member() > 1:
            node = node.band_split(1)
        node = node.insert_mark(isl.Id(PARALLEL_MARK))
    outer = node.get_schedule()
    if left.is_empty():
        return outer
    return outer.sequence(scop.schedule().intersect_domain(left))


def _inner(scop: Scop, needed: isl.UnionMap, names: list[str]) -> isl.Schedule:
    """The instances of one tile (coordinates = parameters `names`) in the original order:
    the stages in sequence, each stage's own loops (its perfectly nested ones in one band,
    so that a full tile is one box per stage: see bands.separate_full_tiles)."""
    params = ", ".join([*scop.params, *names])
    point = isl.UnionSet(f"[{params}] -> {{ TILE[{', '.join(names)}] }}")
    instances = point.apply(needed).coalesce()
    schedule = scop.schedule().intersect_domain(instances)
    for path in [bands.path_of(n) for n in bands.chain_starts(schedule.get_root())]:
        node = bands.node_at(schedule, path)
        schedule = bands.merge_chain(node, bands.chain_depth(node)).get_schedule()
    return schedule
