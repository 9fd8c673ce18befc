"""A traffic and cycle model of the FPGA kernels of `--target hls`, in place of an FPGA (there
is none here): per tile and per kernel, the on-chip words, the DDR words read and written and
the bursts, against the kernel Vitis HLS makes of the original loops by default (no buffers,
no bursts, the innermost loop pipelined: every access one DDR transaction), and a cycle
estimate of both.

What is modelled, per tile (every tile taken as full, as padding makes the innermost one):

- each shipped row (the innermost dimension of a buffer's box) is a burst of `w` words a
  cycle; rows shipped outside a pipelined loop (full buffers' fills and flushes, a chunk's
  first and last slices) run one after the other, each waiting `BURST_LATENCY` cycles for
  its first word; the rows a chunk ships once per iteration of the outermost intra-tile
  loop are inside the pipelined loop (Fig. 5), their latencies overlapped (the AXI master
  keeps requests outstanding) and that traffic overlapped with the computation;
- padded, the loop around the innermost one is pipelined at II = 1 and the innermost one is
  unrolled: one iteration of the loop around it per cycle after a fill of the statement's
  latency (its critical path: a cycle per load, store and integer operation,
  `FLOAT_LATENCY` per floating-point one); without padding the HLS tool neither unrolls nor
  pipelines (the paper: "sequential hardware"): each point costs the statement's latency;
  an nc access costs `DDR_ACCESS` cycles a point;
- the default kernel pipelines its innermost loop with one DDR access a cycle at most, each
  `DDR_ACCESS` cycles: (reads + writes) x `DDR_ACCESS` cycles a point.

Constants, documented and never set per kernel: `DDR_ACCESS` and `BURST_LATENCY` are
calibrated on 2D-5p's two published orders (70x for (i,j), 21x for (j,i), §6.3 of the
paper; `scripts/hls_model.py --calibrate`); `FLOAT_LATENCY` is assumed (a multi-stage
floating-point adder or multiplier). Everything else the paper reports is predicted: the
other nine benchmarks (43x-156x), small tiles (1.3x-2.5x slower), w = 8 against 16, no
padding (2x slower than the default): docs/hls_model.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llvmlite import ir
from llvmlite.ir import instructions as ins

from ..polyhedral.hls_buffers import constant_value
from .hls_kernel import HlsOptions, TiledNest, loop_bounds, value_slice

#: cycles from a burst's request to its first word (calibrated: 2D-5p's 70x against 21x)
BURST_LATENCY = 20.0
#: cycles of one single-word DDR access of the default kernel (calibrated: 2D-5p's 70x)
DDR_ACCESS = 1.92
#: cycles of a floating-point operation on a statement's critical path (assumed)
FLOAT_LATENCY = 4
_FLOAT = frozenset("fadd fsub fmul fdiv frem call".split())
_INTEGER = frozenset("add sub mul sdiv udiv srem urem shl lshr ashr and or xor select".split())


@dataclass(frozen=True)
class KernelModel:
    tiles: int
    points_per_tile: int
    words: int  # on-chip words of the buffers
    reads_per_tile: int  # DDR words read (halos included)
    writes_per_tile: int
    bursts_per_tile: int
    baseline_reads_per_tile: int
    baseline_writes_per_tile: int
    cycles: float
    baseline_cycles: float

    @property
    def speedup(self) -> float:
        return self.baseline_cycles / self.cycles


def kernel_model(kernel: TiledNest, options: HlsOptions, extents: list[int]) -> KernelModel:
    """The model of a tiled nest over a domain of `extents` points per loop."""
    plan = kernel.plan
    sizes, order, burst = plan.sizes, plan.order, options.burst
    tiles = math.prod(math.ceil(e / s) for e, s in zip(extents, sizes))
    points = math.prod(sizes)
    accesses = [a.is_write for a in kernel.nest.accesses]
    reads, writes = accesses.count(False), accesses.count(True)
    latency = sum(_critical_path(s.block) for s in kernel.nest.statements)
    before = after = per_step = 0.0  # cycles around the loops, and per iteration of l_1
    moved = [0, 0, 0]  # reads, writes, bursts of a tile
    uncached = 0
    for buffer, placement in zip(plan.buffers, kernel.placements):
        if placement is None:
            uncached += len(buffer.accesses)
            continue
        filled, written = placement.filled, placement.write_window is not None
        if buffer.kind == "full":
            before += _ship(buffer.extent, burst, moved, 0) if filled else 0
            after += _ship(buffer.box, burst, moved, 1) if written else 0
            continue
        s, steps = buffer.shift_dim, sizes[order[0]]
        slice_in = _sliced(buffer.extent, s, 1)
        slice_out = _sliced(buffer.box, s, 1)
        rest = buffer.extent[s] - 1
        if filled:
            before += _ship(_sliced(buffer.extent, s, rest), burst, moved, 0) if rest else 0
            per_step += _ship(slice_in, burst, moved, 0, steps, overlapped=True)
        if written:
            per_step += _ship(slice_out, burst, moved, 1, steps, overlapped=True)
            after += _ship(_sliced(buffer.box, s, rest), burst, moved, 1) if rest else 0
    per_point_nc = uncached * DDR_ACCESS
    moved[0] += uncached * points  # (reads and writes alike: a word each)
    compute = _compute_per_step(sizes, order, latency, options.padding, per_point_nc)
    cycles_per_tile = before + sizes[order[0]] * max(compute, per_step) + latency + after
    if len(sizes) == 1:  # one loop: its iterations are the whole tile's computation
        cycles_per_tile = before + compute + after
    return KernelModel(
        tiles=tiles,
        points_per_tile=points,
        words=plan.words,
        reads_per_tile=moved[0],
        writes_per_tile=moved[1],
        bursts_per_tile=moved[2],
        baseline_reads_per_tile=reads * points,
        baseline_writes_per_tile=writes * points,
        cycles=tiles * cycles_per_tile,
        baseline_cycles=tiles * points * (reads + writes) * DDR_ACCESS,
    )


def constant_extents(kernel: TiledNest) -> list[int]:
    """Each loop's trip count, when its bounds are constants (the sizes are macros)."""
    extents = []
    for low, high in loop_bounds(kernel.nest):
        values = [constant_value(value) for value in (low, high)]
        if None in values:
            raise ValueError("the loop bounds are not constants")
        extents.append(values[1] - values[0] + 1)
    return extents


def _sliced(extent: tuple[int, ...], dim: int, count: int) -> tuple[int, ...]:
    return tuple(count if k == dim else e for k, e in enumerate(extent))


def _ship(
    box: tuple[int, ...],
    burst: int,
    moved: list[int],
    side: int,
    times: int = 1,
    overlapped: bool = False,
) -> float:
    """Cycles of shipping `box` once (its rows' latencies overlapped or not), its words
    (`times` over) counted on `side` (0 read, 1 written) and its rows as bursts."""
    rows = math.prod(box[:-1])
    moved[side] += times * math.prod(box)
    moved[2] += times * rows
    return rows * (math.ceil(box[-1] / burst) + (0 if overlapped else BURST_LATENCY))


def _compute_per_step(
    sizes: tuple[int, ...], order: tuple[int, ...], latency: int, padded: bool, nc: float
) -> float:
    """Cycles of one iteration of the outermost intra-tile loop's computation."""
    inner = [sizes[x] for x in order[1:]]
    points = math.prod(inner) if inner else sizes[order[0]]
    if not padded:
        return points * (latency + nc)
    if len(sizes) == 1:
        return latency + nc * sizes[0]
    # the loop around the innermost is pipelined at II = 1, the innermost unrolled
    pipelined_trips = math.prod(inner[:-1]) if len(inner) > 1 else 1
    entries = math.prod(inner[:-2]) if len(inner) > 2 else 1
    return pipelined_trips * (1 + nc * inner[-1]) + (entries - 1) * latency


def _critical_path(block: ir.Block) -> int:
    """Cycles of a statement's longest chain to what it stores: a cycle per load, store and
    integer operation, FLOAT_LATENCY per floating-point one (addresses are wired)."""
    depth: dict[ins.Instruction, int] = {}
    needed = value_slice(block)
    for instr in (i for i in block.instructions if i in needed):
        inputs = [depth.get(op, 0) for op in instr.operands if isinstance(op, ins.Instruction)]
        own = 0
        if instr.opname in _FLOAT:
            own = FLOAT_LATENCY
        elif isinstance(instr, (ins.LoadInstr, ins.StoreInstr)) or instr.opname in _INTEGER:
            own = 1
        depth[instr] = max(inputs, default=0) + own
    return max(depth.values(), default=0)
