"""What an overlapped tile must run, shared by `fuse-tile` and `overlap-tile`: the exact
dataflow sources of the instances it runs (recomputed in the tile instead of read from a
neighbour), widened to boxes so that the tile's loops get simple bounds. The extra instances
of a box read values too, so their sources are added in turn."""

from __future__ import annotations

import islpy as isl


def box(relation: isl.UnionMap, exact: int = 0) -> isl.UnionMap:
    """Each map of `relation` widened, for each domain point and each value of its first
    `exact` output dimensions, to the box of its other output dimensions."""
    maps: list[isl.Map] = []
    relation.foreach_map(maps.append)
    out = isl.UnionMap.empty(relation.get_space())
    for m in maps:
        m = m.coalesce()
        n = m.dim(isl.dim_type.out)
        widened = m
        if n > exact:
            sides = []
            for k in range(exact, n):
                side = m
                for other in range(exact, n):
                    if other != k:
                        side = side.eliminate(isl.dim_type.out, other, 1)
                sides.append(side)
            widened = sides[0]
            for side in sides[1:]:
                widened = widened.intersect(side)
        out = out.union(isl.UnionMap.from_map(widened))
    return out


def sources(
    needed: isl.UnionMap, flow: isl.UnionMap, within: isl.UnionSet, exact: int = 0
) -> isl.UnionMap:
    """The flow sources of the instances of `needed` (tile -> instances) that lie in
    `within`, widened by `box` (with `exact`) and kept within `within`."""
    found = needed.apply_range(flow.reverse()).intersect_range(within)
    return box(found, exact).intersect_range(within)


def with_sources(
    needed: isl.UnionMap, flow: isl.UnionMap, within: isl.UnionSet, exact: int = 0
) -> isl.UnionMap:
    """`needed` with `sources` of its instances."""
    return needed.union(sources(needed, flow, within, exact)).coalesce()
