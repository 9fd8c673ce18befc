"""Tile geometry for scratchpad tiling through a DMA engine (C66x dissertation §4.4).

The transfer time of a tiled image is the data moved over the DMA's bandwidth:

    (4.1) S_t = (t_x + 2 m_x)(t_y + 2 m_y)      elements of a tile with its halo
    (4.2) N_t = (x - 2 m_x)(y - 2 m_y) / (t_x t_y)   tiles of an x * y image
    (4.3) MB(t_y) = 8 - 0.08 t_y                 the DMA's bandwidth, falling with the rows of
                                                 a transfer (a regression; meaningful for
                                                 t_y < 100, unit not stated)
    (4.4) min F(t_y) = S_t N_t / MB(t_y)  with t_x t_y = C (the scratchpad's capacity)

`optimal_tile_rows` is (4.4) as the dissertation states it (the regression test reproduces
its table for 1024 x 1024). `choose_tile` sizes the tiles of one kernel for a scratchpad
budget: the same F with S_t counted per array (each input with its own halo, each output
without one), over every t_y < 100 with the widest t_x whose double buffers (two per array,
of the shape the kernel runs on: the tile and its view around it) fit the budget, as the
runtime allocates them (`allocated_bytes`), and whose rows are not a multiple of 1 KiB apart
(rows would share L1D's sets: `c66x_cache_model`); for a nominal 1024 x 1024 image (the tile
only shapes transfers; any image size runs). The model's
constants are the dissertation's; nothing is fitted here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..polyhedral.image_stencil import ImageKernel

#: the image size the dissertation's figures and the tile choice assume
NOMINAL_IMAGE = 1024
#: eq. 4.3 holds for t_y below this
MAX_TILE_ROWS = 99
#: bytes between one tile buffer and the next (`pycc_spm_alloc`): 3 cache lines, so that
#: buffers whose sizes are multiples of L1D's 16 KiB way do not share its sets
BUFFER_STAGGER = 192


#: buffer rows this many bytes apart (or a multiple) share an L1D set every 16 rows or
#: fewer (4 KiB: every 4), and a tall stencil's rows then thrash its 2 ways
ALIASING_PITCH = 1024


def allocated_bytes(buffer_bytes: int) -> int:
    """What `pycc_spm_alloc` takes for a buffer: rounded up to 64 bytes, then the stagger."""
    return -(-buffer_bytes // 64) * 64 + BUFFER_STAGGER


def bandwidth(tile_rows: int) -> float:
    """Eq. 4.3: MB(t_y) = 8 - 0.08 t_y."""
    return 8.0 - 0.08 * tile_rows


def transfer_cost(tile_rows: float, capacity: float, margin: int, width: int, height: int):
    """Eq. 4.4's F(t_y) for t_x = C / t_y and margins m_x = m_y = `margin`."""
    tile_cols = capacity / tile_rows
    area = (tile_cols + 2 * margin) * (tile_rows + 2 * margin)
    tiles = (width - 2 * margin) * (height - 2 * margin) / (tile_cols * tile_rows)
    return area * tiles / bandwidth(tile_rows)


def optimal_tile_rows(capacity: int, margin: int, width: int = 1024, height: int = 1024) -> int:
    """The integer t_y in [1, 99] minimizing F (eq. 4.4) for a capacity C of elements."""
    return min(
        range(1, MAX_TILE_ROWS + 1),
        key=lambda t: transfer_cost(t, capacity, margin, width, height),
    )


@dataclass(frozen=True)
class TileShape:
    rows: int
    cols: int
    buffer_bytes: int  # one of the 2 * (inputs + outputs) buffers


def choose_tile(kernel: ImageKernel, budget: int, alignment: int = 1) -> TileShape | None:
    """The tile of `kernel` with the least modelled transfer time whose buffers fit `budget`
    bytes; `alignment`: bytes a buffer row's length must be a multiple of (a declared row
    alignment). None if not even one row of one column fits."""
    e = kernel.element_bytes
    arrays = len(kernel.inputs) + len(kernel.outputs)
    margin_cols = kernel.view.left + kernel.view.right
    margin_rows = kernel.view.top + kernel.view.bottom
    usable = budget - 2 * arrays * (63 + BUFFER_STAGGER)  # what the allocator may add
    best: tuple[float, TileShape] | None = None
    for rows in range(1, MAX_TILE_ROWS + 1):
        row_bytes = max(0, usable) // (2 * arrays * (rows + margin_rows))
        cols = row_bytes // e - margin_cols
        while cols > 0 and not _good_pitch((cols + margin_cols) * e, alignment):
            cols -= 1
        if cols < 1:
            break
        cost = _kernel_transfer(kernel, rows, cols) / bandwidth(rows)
        if best is None or cost < best[0]:
            shape = TileShape(rows, cols, (cols + margin_cols) * (rows + margin_rows) * e)
            best = (cost, shape)
    return None if best is None else best[1]


def _good_pitch(pitch: int, alignment: int) -> bool:
    """A multiple of the declared alignment, and not of `ALIASING_PITCH` unless that is."""
    return pitch % alignment == 0 and (
        pitch % ALIASING_PITCH != 0 or alignment % ALIASING_PITCH == 0
    )


def _kernel_transfer(kernel: ImageKernel, rows: int, cols: int) -> float:
    """Elements moved for a nominal image: each input tile with its halo, each output tile."""
    halos = kernel.inputs.values()
    moved = sum((cols + h.left + h.right) * (rows + h.top + h.bottom) for h in halos)
    moved += len(kernel.outputs) * cols * rows
    out_rows = NOMINAL_IMAGE - kernel.region.top - kernel.region.bottom
    out_cols = NOMINAL_IMAGE - kernel.region.left - kernel.region.right
    return moved * (out_rows * out_cols) / (rows * cols)
