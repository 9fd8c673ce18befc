"""Cycles of an image kernel run tile by tile on the C66x: compute and EDMA, single buffer vs
double buffer (the dissertation's §5.5 and Table 5.2).

Modelled, per tile (the tiles of `pycc_tiles.c`, on a nominal 1024 x 1024 image):
- compute: the kernel's II per output (`c66x_model`, from the IR) times the tile's outputs,
  plus one iteration's schedule per row (the software pipeline's fill and drain);
- transfer: each 2-D transfer moves its bytes at the DMA bandwidth of eq. 4.3 for its row
  count, MB(rows) = 8 - 0.08 rows, read as `BYTES_PER_CYCLE_PER_MB * MB(rows)` bytes per CPU
  cycle. The dissertation does not give MB's unit (erratum 12); the one constant is
  calibrated once, on Table 5.2's first entry (Mean Filter (H) 3x: 13.2 %), and every other
  entry is predicted with it. Transfers are serialized on one transfer controller; their set-up
  time is not modelled.
- single buffer (issue, wait, compute per tile): memory time = every transfer;
  double buffer (Algorithm 4): memory time = what is not hidden behind compute, i.e. the first
  inputs, per step max(0, transfers - compute), and the last outputs.
- E_db = (T_mem_single - T_mem_double) / T_mem_single (eq. 5.1).

Not modelled: caches (the "up to 10x vs cache" comparison needs L1D/L2/DDR miss costs that
the reference does not give), bank conflicts, the EDMA's set-up and the TC's burst size.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..polyhedral.image_stencil import ImageKernel
from .tile_geometry import NOMINAL_IMAGE, TileShape, bandwidth

#: bytes per CPU cycle per unit of MB(t_y): calibrated on Table 5.2, Mean Filter (H) 3x
BYTES_PER_CYCLE_PER_MB = 0.06542


@dataclass(frozen=True)
class TiledTime:
    """Cycles of one kernel call."""

    compute: float
    memory_single: float  # single buffer: every transfer waited for
    memory_double: float  # double buffer: the transfers compute does not hide

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


def transfer_cycles(bytes_per_row: int, rows: int) -> float:
    """One 2-D transfer of `rows` rows."""
    return bytes_per_row * rows / (BYTES_PER_CYCLE_PER_MB * bandwidth(min(rows, 99)))


def tiled_time(
    kernel: ImageKernel,
    tile: TileShape,
    ii: float,
    row_fill: float,
    image: tuple[int, int] = (NOMINAL_IMAGE, NOMINAL_IMAGE),
) -> TiledTime:
    """The model's cycles for `kernel` over `image` (rows, columns) in tiles of `tile`, at
    `ii` cycles per output and `row_fill` cycles of pipeline fill per tile row."""
    e = kernel.element_bytes
    out_rows = image[0] - kernel.region.top - kernel.region.bottom
    out_cols = image[1] - kernel.region.left - kernel.region.right
    rows, cols = min(tile.rows, out_rows), min(tile.cols, out_cols)
    count = -(-out_rows // rows) * -(-out_cols // cols)
    inputs = sum(
        transfer_cycles((cols + h.left + h.right) * e, rows + h.top + h.bottom)
        for h in kernel.inputs.values()
    )
    outputs = len(kernel.outputs) * transfer_cycles(cols * e, rows)
    compute = rows * (cols * ii + row_fill)
    single = count * (inputs + outputs)
    if count == 1:
        double = single
    else:  # first inputs (two tiles), the steps, the last compute's outputs
        steps = (count - 2) * max(0.0, inputs + outputs - compute)
        double = 2 * inputs + steps + 2 * outputs
    return TiledTime(count * compute, single, double)
