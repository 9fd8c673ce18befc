"""Memory stalls of an image kernel on the C66x, run through the caches (the dissertation's
"baseline (cache, no tiling)", §5.5 and Figs. 5.11-5.16) or tile by tile out of L2 SRAM.

The C66x is in order: a load that misses L1D stalls the CPU until the line arrives. The stalls
are found by replaying the kernel's accesses (`ImageKernel.stages`, each element read once per
output as the compiled loop issues them) through set-associative LRU caches of TI's documented
geometry, and charging each miss its documented cost:

- the baseline: images in DDR3, one after the other (as a heap lays out large blocks), read
  through L1D (32 KiB, 2-way, 64-byte lines, read-allocate: a store that misses goes to L2
  through the write buffer) and L2 configured as cache (256 KiB, 4-way, 128-byte lines, read
  and write allocate, write-back);
- tiled: the tiles' buffers in L2 SRAM (laid out as `pycc_tiles.c` allocates them), read
  through the same L1D; the EDMA's transfers are `c66x_tile_model`'s.

A cache's steady state is replayed, not the whole image: one output row to warm the caches,
one counted (the row before has touched every line a row reuses: the rows of its window but
the new one), times the rows; a tile's first row counted cold (its buffer is new to L1D).

Modelled: capacity and conflict misses, the stall per miss, dirty lines written back. Not
modelled: the miss pipelining TI's L1D does for consecutive misses (charged one by one: the
estimate is an upper bound on stalls), L2 bank conflicts, the EDMA's traffic competing with
the CPU's in L2, prefetching by the XMC (off here).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..polyhedral.image_stencil import ImageKernel, Stage
from .tile_geometry import NOMINAL_IMAGE, allocated_bytes


@dataclass(frozen=True)
class CacheGeometry:
    size: int  # bytes
    ways: int
    line: int  # bytes

    @property
    def sets(self) -> int:
        return self.size // (self.ways * self.line)


#: L1D: 32 KiB of cache (all of it, as at reset and under SYS/BIOS), 2-way, 64-byte lines
L1D = CacheGeometry(32 * 1024, 2, 64)
#: L2 as cache: 4-way, 128-byte lines; 256 KiB of the 512 KiB (what TI's Linux port sets)
L2_CACHE = CacheGeometry(256 * 1024, 4, 128)
#: cycles of an L1D read (1 issue + 3 delay slots) and its bytes per cycle (two 64-bit .D
#: ports); L2 SRAM delivers at half L1's peak (the dissertation's §3, "L2 peak speed is half")
L1D_LATENCY, L1D_BYTES_PER_CYCLE = 4, 16
#: stall of an L1D miss served by L2: the latency and the line at L2's speed (4 + 64 / 8 = 12)
L1D_MISS_STALL = L1D_LATENCY + L1D.line / (L1D_BYTES_PER_CYCLE / 2)
#: "scratchpad is 3-4 times faster than off-chip memory" (the dissertation's §3): an access
#: served from DDR3 costs 3.5 times one served from L2
OFF_CHIP_SLOWDOWN = 3.5
#: extra stall of an L2 miss (the line from DDR3) over an L2 hit
L2_MISS_STALL = (OFF_CHIP_SLOWDOWN - 1) * L1D_MISS_STALL
#: DDR3 bytes per CPU cycle for a dirty line written back: 64-bit DDR3-1333 (TI's VLFFT demo)
#: for a core at 1 GHz (the EVM6678 platform's clock)
DDR_BYTES_PER_CYCLE = 8 * 1333 / 1000
#: where the baseline's images start (C6678 DDR3 is mapped at 0x80000000)
DDR_BASE = 0x8000_0000


class LruCache:
    """A set-associative LRU cache of lines; counts misses and dirty lines written back."""

    def __init__(self, geometry: CacheGeometry, write_allocate: bool) -> None:
        self.shift = geometry.line.bit_length() - 1
        self.mask = geometry.sets - 1
        self.ways = geometry.ways
        self.write_allocate = write_allocate
        self.sets: list[list[int]] = [[] for _ in range(geometry.sets)]  # LRU first
        self.dirty: set[int] = set()
        self.misses = 0
        self.writebacks = 0
        self.victims: list[int] = []  # addresses of the dirty lines evicted, for the next level

    def access(self, address: int, write: bool = False) -> bool:
        """Whether `address` hits; a miss allocates unless it is a store that does not."""
        line = address >> self.shift
        lines = self.sets[line & self.mask]
        if lines and lines[-1] == line:
            hit = True
        elif line in lines:
            lines.remove(line)
            lines.append(line)
            hit = True
        else:
            self.misses += 1
            hit = False
            if write and not self.write_allocate:
                return False
            lines.append(line)
            if len(lines) > self.ways:
                victim = lines.pop(0)
                if victim in self.dirty:
                    self.dirty.remove(victim)
                    self.writebacks += 1
                    self.victims.append(victim << self.shift)
        if write:
            self.dirty.add(line)
        return hit

    def counts(self) -> tuple[int, int]:
        return self.misses, self.writebacks


@dataclass(frozen=True)
class Stalls:
    """Misses of one kernel call and the cycles they stall."""

    l1d_misses: float
    l2_misses: float
    writebacks: float

    @property
    def cycles(self) -> float:
        return (
            self.l1d_misses * L1D_MISS_STALL
            + self.l2_misses * L2_MISS_STALL
            + self.writebacks * L2_CACHE.line / DDR_BYTES_PER_CYCLE
        )

    def __add__(self, other: Stalls) -> Stalls:
        return Stalls(*(a + b for a, b in zip(self.astuple(), other.astuple())))

    def scaled(self, factor: float) -> Stalls:
        return Stalls(*(a * factor for a in self.astuple()))

    def astuple(self) -> tuple[float, float, float]:
        return self.l1d_misses, self.l2_misses, self.writebacks


def _replay_row(stage: Stage, row: int, cols: range, base: dict[str, int], stride: int,
                element: int, l1d: LruCache, l2: LruCache | None) -> Stalls:  # fmt: skip
    """One output row of `stage`: its misses in L1D and, behind it, in L2 (when cached)."""
    reads = list(dict.fromkeys(stage.reads))
    writes = sorted(stage.writes)
    l2_before = l2.counts() if l2 else (0, 0)
    read_misses = 0  # a store that misses L1D waits in the write buffer, not the CPU
    for j in cols:
        for image, di, dj in reads:
            address = base[image] + ((row + di) * stride + j + dj) * element
            if not l1d.access(address):
                read_misses += 1
                if l2:
                    l2.access(address)
        for image in writes:
            address = base[image] + (row * stride + j) * element
            if not l1d.access(address, write=True) and l2:
                l2.access(address, write=True)
        if l2:  # L1D's dirty victims are written to L2 (L2's own go to DDR3: counted)
            for victim in l1d.victims:
                l2.access(victim, write=True)
            l2.victims.clear()
        l1d.victims.clear()
    l2_after = l2.counts() if l2 else (0, 0)
    return Stalls(read_misses, l2_after[0] - l2_before[0], l2_after[1] - l2_before[1])


def _steady_rows(stage: Stage, rows: range, cols: range, base: dict[str, int], stride: int,
                 element: int, cached: bool) -> Stalls:  # fmt: skip
    """The stalls of `stage` over `rows`: a warm-up row, then one counted, times the rows."""
    l1d = LruCache(L1D, write_allocate=False)
    l2 = LruCache(L2_CACHE, write_allocate=True) if cached else None
    middle = rows[len(rows) // 2]
    if len(rows) > 1:
        _replay_row(stage, middle - 1, cols, base, stride, element, l1d, l2)
    return _replay_row(stage, middle, cols, base, stride, element, l1d, l2).scaled(len(rows))


def untiled_stalls(
    kernel: ImageKernel, image: tuple[int, int] = (NOMINAL_IMAGE, NOMINAL_IMAGE)
) -> Stalls:
    """The baseline: every stage over the whole images in DDR, through L1D and L2 cache."""
    height, width = image
    e = kernel.element_bytes
    images = [*kernel.inputs, *kernel.outputs]
    base = {name: DDR_BASE + k * height * width * e for k, name in enumerate(images)}
    total = Stalls(0, 0, 0)
    for stage in kernel.stages:
        m = stage.margins
        rows, cols = range(m.top, height - m.bottom), range(m.left, width - m.right)
        total += _steady_rows(stage, rows, cols, base, width, e, cached=True)
    return total


def tile_stalls(kernel: ImageKernel, rows: int, cols: int) -> Stalls:
    """One tile of `rows` x `cols` points: every stage over the tile's view in L2 SRAM,
    through L1D; the first row cold."""
    view = kernel.view
    view_rows, stride = rows + view.top + view.bottom, cols + view.left + view.right
    e = kernel.element_bytes
    step = allocated_bytes(view_rows * stride * e)
    images = [*kernel.inputs, *kernel.outputs]
    base = {name: 2 * k * step for k, name in enumerate(images)}  # buffer[0] of each
    total = Stalls(0, 0, 0)
    for stage in kernel.stages:
        m = stage.margins
        inside, points = range(m.top, view_rows - m.bottom), range(m.left, stride - m.right)
        l1d = LruCache(L1D, write_allocate=False)
        total += _replay_row(stage, inside[0], points, base, stride, e, l1d, None)
        if len(inside) > 1:
            total += _steady_rows(stage, inside[1:], points, base, stride, e, cached=False)
    return total
