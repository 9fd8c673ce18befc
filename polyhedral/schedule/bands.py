"""Operations on the bands of isl schedule trees shared by the tiling transformations.

The original schedule of a SCoP has one single-member band per loop (see scop.py); a
transformation merges a perfectly nested chain of them into one band, reschedules it (skews,
tiles, wavefronts) and marks the loops that may run in parallel. Nodes are addressed by their
path of child positions from the root, so a transformation of one subtree keeps the addresses
of the others valid.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import islpy as isl

from ..budget import BudgetExceeded, isl_budget
from ..codegen import PARALLEL_MARK, TwoLevel

Path = tuple[int, ...]
_BAND = isl.schedule_node_type.band


def node_at(schedule: isl.Schedule, path: Path) -> isl.ScheduleNode:
    node = schedule.get_root()
    for k in path:
        node = node.child(k)
    return node


def path_of(node: isl.ScheduleNode) -> Path:
    path = []
    while node.has_parent():
        path.append(node.get_child_position())
        node = node.parent()
    return tuple(reversed(path))


def chain_depth(node: isl.ScheduleNode) -> int:
    """How many single-member bands are perfectly nested from `node` down."""
    depth = 0
    while node.get_type() == _BAND:
        depth += node.band_n_member()
        if node.n_children() != 1:
            break
        node = node.child(0)
    return depth


def chain_starts(node: isl.ScheduleNode) -> Iterator[isl.ScheduleNode]:
    """The outermost bands below `node` (not `node` itself), in program order."""
    for k in range(node.n_children()):
        child = node.child(k)
        if child.get_type() == _BAND:
            yield child
        else:
            yield from chain_starts(child)


def below_chain(node: isl.ScheduleNode) -> isl.ScheduleNode:
    """The innermost band of the chain that starts at `node`."""
    while node.n_children() == 1 and node.child(0).get_type() == _BAND:
        node = node.child(0)
    return node


def merge_chain(node: isl.ScheduleNode, depth: int) -> isl.ScheduleNode:
    """Replace the `depth` perfectly nested one-member bands from `node` down (the loops of
    the original schedule) by one permutable band of `depth` members."""
    schedule = node.band_get_partial_schedule()
    walk = node
    for _ in range(depth - 1):
        walk = walk.child(0)
        schedule = schedule.flat_range_product(walk.band_get_partial_schedule())
    for _ in range(depth):
        node = node.delete()
    node = node.insert_partial_schedule(schedule)
    return node.band_set_permutable(1)


def replace_band(node: isl.ScheduleNode, schedule: isl.MultiUnionPwAff) -> isl.ScheduleNode:
    """The band at `node` with its partial schedule replaced (children kept)."""
    node = node.delete()
    node = node.insert_partial_schedule(schedule)
    return node.band_set_permutable(1)


def tile_band(node: isl.ScheduleNode, sizes: list[int]) -> isl.ScheduleNode:
    """Tile the band at `node`; returns the tile band (the point band is its child). Tile
    loops count tiles and point loops run over the original coordinates (isl's defaults
    would scale and shift them: more complex bounds, and AST generation that can take
    minutes for skewed bands)."""
    ctx = node.get_ctx()
    ctx.set_tile_scale_tile_loops(0)
    ctx.set_tile_shift_point_loops(0)
    space = node.band_get_space()
    values = isl.ValList.alloc(space.get_ctx(), len(sizes))
    for size in sizes:
        values = values.add(isl.Val(size))
    return node.band_tile(isl.MultiVal.from_val_list(space, values))


def atomic(schedule: isl.Schedule) -> isl.Schedule:
    """The schedule with every band generated "atomic": each loop once, with min/max bounds,
    instead of split into cases (isl's default separation multiplies the code of skewed and
    wavefront bands, and its generation can take minutes)."""
    paths = []

    def collect(node: isl.ScheduleNode) -> bool:
        if node.get_type() == _BAND:
            paths.append(path_of(node))
        return True

    schedule.get_root().foreach_descendant_top_down(collect)
    for path in paths:
        node = node_at(schedule, path)
        members = node.band_n_member()
        for k in range(members):
            node = node.band_member_set_ast_loop_type(k, isl.ast_loop_type.atomic)
        schedule = node.get_schedule()
    return schedule


#: isl operations `full_tiles` may spend before giving up (no full/partial separation): the
#: corpus needs up to 4 million (fdtd-2d's time tiles, about a second; heat-3d's default
#: time tiles 300 thousand); the default time tiles of scripts/bench_kernels/fdtd_2d.c need
#: 4 to 8 million and stay unseparated
FULL_TILES_BUDGET = 4_000_000


def full_tiles(node: isl.ScheduleNode) -> isl.Set | None:
    """The values of the outer schedule dimensions of the band at `node` (the tile loops; a
    set of parameters when the tile coordinates are parameters) for which the band's points
    are a full tile: a box in the band's coordinates, as long in each member as any tile is
    (an untiled member, whose extent is unbounded, only has to be a box side). None when isl
    needs more than FULL_TILES_BUDGET operations to tell, or fails: the tiles are then not
    separated, which changes no result.

    Every tile's points lie in its box, so the longest extents are the tile's; the box is then
    checked in each statement's own coordinates (all instances the box schedules must be in
    the statement's domain), where a skewed time band's `tau = K*t + k` is an affine
    constraint: in the band's coordinates the statements' images are lattices, and
    subtracting their union from the box took isl 20 s for 3-D time tiles."""
    try:
        with isl_budget(FULL_TILES_BUDGET):
            return _full_tiles(node)
    except (BudgetExceeded, isl.Error):
        return None


def _full_tiles(node: isl.ScheduleNode) -> isl.Set:
    domain = node.get_domain()
    prefix = node.get_prefix_schedule_union_map()
    band = node.band_get_partial_schedule_union_map()
    points = prefix.intersect_domain(domain).reverse().apply_range(band.intersect_domain(domain))
    points = isl.Map.from_union_map(points)
    # the statements' pieces multiply in dim_min/dim_max: coalesced into one (diamond tiles:
    # 20x faster), but not into several, whose bounds isl splits further (fdtd-2d: 5x slower)
    merged = points.coalesce()
    if merged.n_basic_map() == 1:
        points = merged
    full = points.domain()
    bounds = []
    for k in range(points.dim(isl.dim_type.out)):
        # coalesced: dim_min/dim_max split at every domain boundary, and the pieces multiply
        # in `full` below (5-7x faster for 2-D and 3-D time tiles)
        low, high = points.dim_min(k).coalesce(), points.dim_max(k).coalesce()
        extent = high.sub(low)
        longest = _maximum(extent)
        if not (longest.is_infty() or longest.is_nan()):
            full = full.intersect(extent.add_constant_val(longest.neg()).zero_set())
        bounds.append((low, high))
    full = full.coalesce()
    tile = None
    for low, high in bounds:
        side = _between(low.intersect_domain(full), high.intersect_domain(full))
        tile = side if tile is None else tile.flat_range_product(side)
    schedules: list[isl.Map] = []
    prefix.range_product(band).foreach_map(schedules.append)
    for schedule in schedules:
        instances = tile.wrap().apply(schedule.reverse())
        statement = domain.extract_set(instances.get_space())
        outer = schedule.range_factor_domain()
        for d in reversed(range(schedule.dim(isl.dim_type.in_))):
            if not schedule.involves_dims(isl.dim_type.in_, d, 1):  # a loop below the band
                instances = instances.project_out(isl.dim_type.set, d, 1)
                statement = statement.project_out(isl.dim_type.set, d, 1)
                outer = outer.project_out(isl.dim_type.in_, d, 1)
        full = full.subtract(instances.subtract(statement).apply(outer))
    return full.coalesce()


def _maximum(value: isl.PwAff) -> isl.Val:
    """The largest value of `value` over all parameters: the largest of its pieces' maxima
    (PwAff.max_val refuses the integer divisions of skewed bands; a piece with rational
    points only, which isl has not found empty, has a NaN maximum and is left out), or, where
    a piece fails, of its range as a set (the same value, up to 100x slower: fdtd-2d's time
    tiles 0.6 s)."""
    maxima: list[isl.Val] = []
    try:
        for where, aff in value.get_pieces():  # not in a callback: its errors print
            maximum = where.max_val(aff)
            if not maximum.is_nan():
                maxima.append(maximum)
    except isl.Error:
        maxima = []
    if not maxima:
        return isl.Map.from_pw_aff(value).range().dim_max_val(0)
    largest = maxima[0]
    for maximum in maxima[1:]:
        largest = largest.max(maximum)
    return largest


def separate_full_tiles(program: TwoLevel) -> TwoLevel:
    """`program` (its inner program one tile, the tile coordinates parameters) with the
    parameter values for which every outermost band of the inner program is a full tile
    (`full_tiles`): the code generator generates the inner program a second time under them,
    which is isl's `isolate` option without isl computing the complement of the full tiles
    (3-D time tiles: 0.04 s instead of 1.9 s of AST generation)."""
    full = isl.Set.universe(program.inner.get_domain().get_space().params())
    for node in chain_starts(program.inner.get_root()):
        band = full_tiles(node)
        if band is None:
            return program
        full = full.intersect(band.params())
    return dataclasses.replace(program, full=full.coalesce())


def _between(low: isl.PwAff, high: isl.PwAff) -> isl.Map:
    """x -> [p] with low(x) <= p <= high(x)."""
    above = isl.Map.from_pw_aff(low).apply_range(isl.Map("{ [a] -> [p] : p >= a }"))
    below = isl.Map.from_pw_aff(high).apply_range(isl.Map("{ [b] -> [p] : p <= b }"))
    return above.intersect(below)


def isolate_full_tiles(node: isl.ScheduleNode) -> isl.ScheduleNode:
    """Have isl generate the band at `node` (the point loops below tile loops) twice: for
    full tiles (`full_tiles`), with constant trip counts, and for the others, with min/max
    bounds; each loop once ("atomic") in both. isl emits `if (full) ... else ...` inside the
    tile loops."""
    full = full_tiles(node)
    if full is None or full.is_empty():
        return node
    points = isl.Set.universe(node.band_get_space())
    isolate = isl.Map.from_domain_and_range(full, points).wrap().set_tuple_name("isolate")
    options = node.band_get_ast_build_options().union(isl.UnionSet.from_set(isolate))
    node = node.band_set_ast_build_options(options)
    for k in range(node.band_n_member()):
        node = node.band_member_set_ast_loop_type(k, isl.ast_loop_type.atomic)
        node = node.band_member_set_isolate_ast_loop_type(k, isl.ast_loop_type.atomic)
    return node


def member_is_parallel(node: isl.ScheduleNode, dependences: isl.UnionMap, member: int) -> bool:
    """Whether no dependence between instances under `node` is carried by band member
    `member` (source and sink agree on the outer schedule and the earlier members but not on
    this one): its iterations may then run in any order, in parallel.

    A member with one value per value of the outer schedule is not: isl generates no loop for
    it, so a parallel mark above it would apply to the next loop in (a single column of tiles
    would make the tile loop inside it parallel, whatever that loop carries)."""
    domain = node.get_domain()
    deps = dependences.intersect_domain(domain).intersect_range(domain)
    outer = node.get_prefix_schedule_union_map().intersect_domain(domain)
    deps = deps.intersect(outer.apply_range(outer.reverse()))
    schedule = node.band_get_partial_schedule()
    for k in range(member + 1):
        value = isl.UnionMap.from_union_pw_aff(schedule.get_at(k)).intersect_domain(domain)
        same = value.apply_range(value.reverse())
        if k == member:
            degenerate = outer.reverse().apply_range(value).is_single_valued()
            return not degenerate and deps.subtract(same).is_empty()
        deps = deps.intersect(same)
        outer = outer.flat_range_product(value)
    return False


def mark_parallel(node: isl.ScheduleNode, member: int) -> isl.ScheduleNode:
    """Put band member `member` in a band of its own and mark that band's loop parallel for
    the code generator; returns the marked band's parent band (or the mark)."""
    if member:
        node = node.band_split(member).child(0)
    if node.band_n_member() > 1:
        node = node.band_split(1)
    return node.insert_mark(isl.Id(PARALLEL_MARK))


def tile_parameter_names(params, count: int) -> list[str]:
    """Names for the coordinates of one tile as isl parameters (`tile0`, ...), with
    underscores appended where a SCoP parameter already has that name."""
    names = []
    for k in range(count):
        name = f"tile{k}"
        while name in params:
            name += "_"
        names.append(name)
    return names
