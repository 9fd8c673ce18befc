"""Cycles of an image kernel run tile by tile on the C66x: compute and EDMA, single buffer vs
double buffer (the dissertation's §5.5 and Table 5.2).

Modelled, per tile (the tiles of `pycc_tiles.c`, on a nominal 1024 x 1024 image):
- compute: the kernel's II per output (`c66x_model`, from the IR) times the tile's outputs,
  plus one iteration's schedule per row (the software pipeline's fill and drain), plus the
  stalls of its L1D misses in the tile buffers (`c66x_cache_model`);
- transfer: each 2-D transfer moves its bytes at the DMA bandwidth of eq. 4.3 for its row
  count, MB(rows) = 8 - 0.08 rows, read as `BYTES_PER_CYCLE_PER_MB * MB(rows)` bytes per CPU
  cycle. The dissertation does not give MB's unit (erratum 12); the constant is either
  calibrated once, on Table 5.2's first entry (Mean Filter (H) 3x: 13.2 %), every other entry
  predicted with it, or MB is read as GB/s at 1 GHz (`GB_PER_S_AT_1_GHZ`): the two readings
  differ 15-fold, and the paper's two claims need one each (docs/table52.md). Transfers are
  serialized on one transfer controller; their set-up time is not modelled.
- single buffer (issue, wait, compute per tile): memory time = every transfer;
  double buffer (Algorithm 4): memory time = what is not hidden behind compute, i.e. the first
  inputs, per step max(0, transfers - compute), and the last outputs.
- E_db = (T_mem_single - T_mem_double) / T_mem_single (eq. 5.1);
- the baseline without tiles ("cache, no tiling"): the same loops over the whole images in
  DDR3, stalled by their misses in L1D and L2 cache (`c66x_cache_model`).

Not modelled: bank conflicts, the EDMA's set-up and the TC's burst size.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..polyhedral.image_stencil import ImageKernel
from .c66x_cache_model import tile_stalls, untiled_stalls
from .tile_geometry import NOMINAL_IMAGE, TileShape, bandwidth

#: bytes per CPU cycle per unit of MB(t_y): calibrated on Table 5.2, Mean Filter (H) 3x
BYTES_PER_CYCLE_PER_MB = 0.04784
#: the other reading of MB's unit: GB/s, on a core at 1 GHz (the EVM6678's clock)
GB_PER_S_AT_1_GHZ = 1.0


@dataclass(frozen=True)
class TiledTime:
    """Cycles of one kernel call."""

    compute: float
    memory_single: float  # single buffer: every transfer waited for
    memory_double: float  # double buffer: the transfers compute does not hide
    cached: float  # the baseline: no tiles, the images through the caches

    @property
    def single(self) -> float:
        return self.compute + self.memory_single

    @property
    def double(self) -> float:
        return self.compute + self.memory_double

    @property
    def e_db(self) -> float:
        """Eq. 5.1: the share of the memory time double buffering removes."""
        return (self.memory_single - self.memory_double) / self.memory_single

    @property
    def speedup_over_cache(self) -> float:
        """The double-buffered tiles' speed-up over the cached baseline."""
        return self.cached / self.double


def transfer_cycles(bytes_per_row: int, rows: int, per_mb: float) -> float:
    """One 2-D transfer of `rows` rows at `per_mb` bytes per cycle per unit of MB."""
    return bytes_per_row * rows / (per_mb * bandwidth(min(rows, 99)))


def tiled_time(
    kernel: ImageKernel,
    tile: TileShape,
    ii: float,
    row_fill: float,
    image: tuple[int, int] = (NOMINAL_IMAGE, NOMINAL_IMAGE),
    per_mb: float = BYTES_PER_CYCLE_PER_MB,
) -> TiledTime:
    """The model's cycles for `kernel` over `image` (rows, columns) in tiles of `tile`, at
    `ii` cycles per output and `row_fill` cycles of pipeline fill per row, and without tiles;
    transfers at `per_mb` bytes per cycle per unit of MB(t_y)."""
    e = kernel.element_bytes
    out_rows = image[0] - kernel.region.top - kernel.region.bottom
    out_cols = image[1] - kernel.region.left - kernel.region.right
    rows, cols = min(tile.rows, out_rows), min(tile.cols, out_cols)
    count = -(-out_rows // rows) * -(-out_cols // cols)
    inputs = sum(
        transfer_cycles((cols + h.left + h.right) * e, rows + h.top + h.bottom, per_mb)
        for h in kernel.inputs.values()
    )
    outputs = len(kernel.outputs) * transfer_cycles(cols * e, rows, per_mb)
    compute = rows * (cols * ii + row_fill) + tile_stalls(kernel, rows, cols).cycles
    single = count * (inputs + outputs)
    if count == 1:
        double = single
    else:  # first inputs (two tiles), the steps, the last compute's outputs
        steps = (count - 2) * max(0.0, inputs + outputs - compute)
        double = 2 * inputs + steps + 2 * outputs
    cached = out_rows * (out_cols * ii + row_fill) + untiled_stalls(kernel, image).cycles
    return TiledTime(count * compute, single, double, cached)
