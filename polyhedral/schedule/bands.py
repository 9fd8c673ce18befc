"""Operations on the bands of isl schedule trees shared by the tiling transformations.

The original schedule of a SCoP has one single-member band per loop (see scop.py); a
transformation merges a perfectly nested chain of them into one band, reschedules it (skews,
tiles, wavefronts) and marks the loops that may run in parallel. Nodes are addressed by their
path of child positions from the root, so a transformation of one subtree keeps the addresses
of the others valid.
"""

from __future__ import annotations

from collections.abc import Iterator

import islpy as isl

from ..codegen import PARALLEL_MARK

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


def member_is_parallel(node: isl.ScheduleNode, dependences: isl.UnionMap, member: int) -> bool:
    """Whether no dependence between instances under `node` is carried by band member
    `member` (source and sink agree on the outer schedule and the earlier members but not on
    this one): its iterations may then run in any order, in parallel."""
    domain = node.get_domain()
    deps = dependences.intersect_domain(domain).intersect_range(domain)
    prefix = node.get_prefix_schedule_union_map()
    deps = deps.intersect(prefix.apply_range(prefix.reverse()))
    schedule = node.band_get_partial_schedule()
    for k in range(member + 1):
        value = isl.UnionMap.from_union_pw_aff(schedule.get_at(k)).intersect_domain(domain)
        same = value.apply_range(value.reverse())
        if k == member:
            return deps.subtract(same).is_empty()
        deps = deps.intersect(same)
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
