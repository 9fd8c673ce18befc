"""Tile sizes from the target's L2 cache size (`Target.cache_bytes(2)`: on the host read at
compile time from Linux sysfs, so a build on another machine picks sizes for that machine's
caches; `PYCC_CACHE_L2` overrides it)."""

from __future__ import annotations

import math


def spatial_tile(depth: int, bytes_per_point: int, l2: int, innermost: int = 256) -> list[int]:
    """Rectangular tile sizes whose data (`bytes_per_point` per iteration point, all arrays
    together) fill half the L2 cache: a long innermost extent for vector loops, the outer
    extents equal."""
    if depth == 1:
        return [max(64, l2 // 2 // max(1, bytes_per_point))]
    budget = l2 // 2 // max(1, bytes_per_point * innermost)
    side = max(4, int(budget ** (1 / (depth - 1))))
    return [side] * (depth - 1) + [innermost]


def time_tile(depth: int, bytes_per_point: int) -> list[int]:
    """Sizes (time, space...) of skewed time tiles for a `depth`-dimensional stencil: the
    tile's footprint (grown by the skew) within half the L2 cache."""
    if depth == 1:
        return [64, 2048]
    if depth == 2:
        return [64, 16, 1024]
    return [8, 8, 16, 256][: depth + 1] if depth == 3 else [4] * (depth + 1)


def diamond_tile(depth: int, bytes_per_point: int, l2: int) -> list[int]:
    """Sizes (time, space...) of diamond time tiles. A diamond of size S is S sweeps high and
    up to S points wide along x_1 (the second size repeats the first); its points run step by
    step, so what must stay cached is one step's slab: its width along x_1, S / 2 on average
    over the steps, times the extents of the other dimensions (the parallelogram's, with 512
    innermost for 2-D). S is the largest power of two (>= 8) for which that mean slab fits
    half the L2 cache. (Sized for the widest step, S, fdtd-2d's tiles were half as large and
    ran 14 % slower on an AMD EPYC with 512 KiB of L2: docs/tiling_benchmarks.md.)"""
    others = {1: [], 2: [512]}.get(depth) or time_tile(depth, bytes_per_point)[2:]
    budget = l2 // max(1, bytes_per_point * math.prod(others))
    side = max(8, 1 << max(0, budget.bit_length() - 1))
    return [side, side, *others]


def overlap_tile(depth: int) -> list[int]:
    """Sizes (time in sweeps, space...) of overlapped time tiles for a `depth`-dimensional
    stencil: the best sizes Zhao & Cohen report (heat-1d/2d/3d on a 32-core Xeon); few
    sweeps per time tile in 2-D and 3-D, where the recomputed halo grows with the tile's
    surface."""
    if depth == 1:
        return [32, 8192]
    if depth == 2:
        return [4, 64, 64]
    return [4, 16, 16, 256][: depth + 1] if depth == 3 else [2] * (depth + 1)
