"""Tile sizes from the target's L1 and L2 cache sizes (`Target.cache_bytes`: the model the
compiler-mode flags select, or the host's from Linux sysfs for the JIT; `PYCC_CACHE_L1`,
`PYCC_CACHE_L2` override them)."""

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


#: the fewest steps a diamond sized for the L1 cache must span to be chosen over one sized for
#: the L2 (see `diamond_tile`): 16 times less DRAM traffic than the untiled sweeps
L1_DIAMOND_MIN = 32
#: the innermost tile of a 2-D diamond sized for the L1: 8 vectors of 512 bits of doubles (32
#: ran 1.5x slower on a Xeon, 128 1.05-1.15x slower; float stencils, 64x64x64, not measured)
L1_DIAMOND_ROW = 64


def diamond_tile(depth: int, bytes_per_point: int, l2: int, l1: int = 0) -> list[int]:
    """Sizes (time, space...) of diamond time tiles. A diamond of size S is S sweeps high and
    up to S points wide along x_1 (the second size repeats the first); its points run step by
    step, so what must stay cached is one step's slab: its width along x_1, S / 2 on average
    over the steps, times the extents of the other dimensions (the parallelogram's). S is the
    largest power of two for which that mean slab fits half the L1 cache (with rows of
    `L1_DIAMOND_ROW` points in 2-D), if that S is at least `L1_DIAMOND_MIN`; else half the L2
    (>= 8, rows of 512 in 2-D; 3-D slabs never fit the L1). On a Xeon with 48 KiB of L1 and
    2 MiB of L2 the L1's diamonds ran faster than the L2's: jacobi-1d's of 2048 2.6x faster
    than 131072, jacobi-2d's and heat-2d's of 32x32x64 1.2x faster than 256x256x512, fdtd-2d's
    1.1-1.4x faster than 128x128x512 (docs/tiling_benchmarks.md). An L2 set smaller than the
    L1 (`-fpycc-cache-size=`) bounds both. (Sized for the widest step, S, fdtd-2d's tiles were half
    as large and ran 14 % slower on an AMD EPYC with 512 KiB of L2.)"""

    def fitting(cache: int, others: list[int]) -> int:
        budget = cache // max(1, bytes_per_point * math.prod(others))
        return 1 << max(0, budget.bit_length() - 1)

    if depth <= 2:
        rows = [L1_DIAMOND_ROW] if depth == 2 else []
        side = fitting(min(l1, l2), rows)  # (an L2 set smaller than the L1 bounds both)
        if side >= L1_DIAMOND_MIN:
            return [side, side, *rows]
    others = {1: [], 2: [512]}.get(depth) or time_tile(depth, bytes_per_point)[2:]
    side = max(8, fitting(l2, others))
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
