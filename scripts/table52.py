#!/usr/bin/env python3
"""Reproduce the dissertation's Table 5.2 (E_db: the memory time double buffering saves over
a single buffer) and its "up to 10x vs cache" with the C66x models (`emit/c66x_tile_model.py`,
`emit/c66x_cache_model.py`).

For the table's kernels at stencil widths 3..15 (mean and Gaussian filters horizontal and
vertical, Harris and Lucas-Kanade over w x w windows), generated here as C in the Appendix-A
style, the script lowers each kernel, takes its II per output and pipeline fill from the C66x
resource model (the baseline loop, as the double-buffer chapter evaluates the memory system),
sizes its tiles with eq. 4.1-4.4 for 384 KiB of L2, and models single vs double buffering and
the cached baseline on a 1024 x 1024 image. Prints the model beside the paper and writes
docs/table52.md (or --output). `--calibrate` prints the bandwidth constant that makes the
first entry exact.

    python scripts/table52.py [--output docs/table52.md] [--calibrate]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

from pycc_stencil.emit.c66x_model import c66x_loops  # noqa: E402
from pycc_stencil.emit.c66x_tile_model import (  # noqa: E402
    BYTES_PER_CYCLE_PER_MB,
    GB_PER_S_AT_1_GHZ,
    TiledTime,
    tiled_time,
)
from pycc_stencil.emit.targets.c66x import TILE_BUFFER_BYTES  # noqa: E402
from pycc_stencil.emit.tile_geometry import choose_tile  # noqa: E402
from pycc_stencil.frontend import lower_file  # noqa: E402
from pycc_stencil.polyhedral.image_stencil import image_kernel  # noqa: E402

WIDTHS = (3, 5, 7, 9, 11, 13, 15)
#: Table 5.2 quoted exactly (percent)
PAPER = {
    "Mean Filter (H)": (13.2, 13.1, 13.6, 15.0, 15.5, 16.3, 16.1),
    "Mean Filter (V)": (13.2, 13.2, 13.5, 15.4, 14.6, 16.0, 16.2),
    "Gaussian (H)": (15.0, 15.4, 15.7, 16.4, 15.9, 16.7, 16.3),
    "Gaussian (V)": (15.0, 15.3, 16.1, 16.5, 16.5, 16.5, 16.8),
    "Lucas Kanade": (16.1, 16.5, 16.5, 16.5, 16.8, 17.2, 17.3),
    "Harris Corner": (15.4, 16.4, 16.2, 16.3, 16.4, 17.1, 17.0),
}


def _at(array: str, di: int, dj: int) -> str:
    return f"{array}[(i + {di}) * size_x + (j + {dj})]"


def _binomial(w: int) -> list[float]:
    row = [1]
    for _ in range(w - 1):
        row = [a + b for a, b in zip([0, *row], [*row, 0])]
    return [c / sum(row) for c in row]


def _kernel(name: str, params: str, margins: tuple[int, int], body: list[str]) -> str:
    top, left = margins
    lines = "\n".join(f"      {line}" for line in body)
    return (
        f"void {name}({params}) {{\n  int i, j;\n"
        f"  for (i = {top}; i < size_y - {top}; ++i) {{\n"
        f"    for (j = {left}; j < size_x - {left}; ++j) {{\n{lines}\n    }}\n  }}\n}}\n"
    )


def filter_source(kind: str, w: int) -> str:
    """A `kind` filter of width w: a mean or Gaussian (weights as double literals, as in
    Appendix A), horizontal or vertical."""
    r = w // 2
    vertical = kind.endswith("(V)")
    weights = [1 / w] * w if kind.startswith("Mean") else _binomial(w)
    terms = [
        f"{_at('input', d, 0) if vertical else _at('input', 0, d)} * {weights[d + r]!r}"
        for d in range(-r, r + 1)
    ]
    body = [f"float v = {' + '.join(terms)};", "output[i * size_x + j] = v;"]
    params = "float *input, int size_x, int size_y, float *output"
    return _kernel("k", params, (r, 0) if vertical else (0, r), body)


def window_source(kind: str, w: int) -> str:
    """Harris (sum of squares and products of dx, dy) or Lucas-Kanade (and of dt, then the
    2x2 solve) over a w x w window, as the Appendix-A kernels are for w = 3."""
    r = w // 2
    offsets = [(a, b) for a in range(-r, r + 1) for b in range(-r, r + 1)]

    def total(x: str, y: str) -> str:
        return " + ".join(f"{_at(x, a, b)} * {_at(y, a, b)}" for a, b in offsets)

    body = [
        f"float xx = {total('dx', 'dx')};",
        f"float xy = {total('dx', 'dy')};",
        f"float yy = {total('dy', 'dy')};",
    ]
    if kind == "Harris Corner":
        body.append("s[i * size_x + j] = xx + yy - 0.11 * xy;")
        params = "float *dx, float *dy, int size_x, int size_y, float *s"
    else:
        body += [
            f"float xt = {total('dx', 'dt')};",
            f"float yt = {total('dy', 'dt')};",
            "float det = xx * yy - xy * xy;",
            "vx[i * size_x + j] = (-yy * xt + xy * yt) / det;",
            "vy[i * size_x + j] = (xx * yt - xy * xt) / det;",
        ]
        params = "float *dx, float *dy, float *dt, int size_x, int size_y, float *vx, float *vy"
    return _kernel("k", params, (r, r), body)


def modelled(source: str, per_mb: float) -> TiledTime:
    """The model's times for the kernel `k` of `source`, transfers at `per_mb`."""
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "k.c")
        with open(path, "w") as out:
            out.write(source)
        module = lower_file(path, []).module
    kernel = image_kernel(module.get_global("k"))
    loop = c66x_loops(module)["k"]
    tile = choose_tile(kernel, TILE_BUFFER_BYTES)
    return tiled_time(kernel, tile, loop.cycles, loop.schedule_length, per_mb=per_mb)


def source_of(kind: str, w: int) -> str:
    return (
        window_source(kind, w)
        if kind in ("Lucas Kanade", "Harris Corner")
        else (filter_source(kind, w))
    )


def calibrate() -> float:
    """The constant that makes Mean Filter (H) 3x come out at the paper's 13.2 %."""
    source = source_of("Mean Filter (H)", 3)
    low, high = 1e-4, 10.0
    for _ in range(40):
        mid = (low * high) ** 0.5
        # faster DMA: less to hide, a larger share hidden
        low, high = (mid, high) if modelled(source, mid).e_db < 0.132 else (low, mid)
    return (low * high) ** 0.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=os.path.join(HERE, "..", "docs", "table52.md"))
    parser.add_argument("--calibrate", action="store_true")
    args = parser.parse_args()
    if args.calibrate:
        print(f"BYTES_PER_CYCLE_PER_MB = {calibrate():.4g}")
        return 0
    e_db = _table("paper / model")
    speedup = _table("calibrated / GB/s")
    for kind, paper in PAPER.items():
        e_db_cells, speedup_cells = [], []
        for w, expected in zip(WIDTHS, paper):
            source = source_of(kind, w)
            calibrated = modelled(source, BYTES_PER_CYCLE_PER_MB)
            fast = modelled(source, GB_PER_S_AT_1_GHZ)
            e_db_cells.append(f"{expected:.1f} / {100 * calibrated.e_db:.1f}")
            speedup_cells.append(
                f"{calibrated.speedup_over_cache:.1f} / {fast.speedup_over_cache:.1f}"
            )
            print(
                f"{kind} {w}x: E_db paper {expected:.1f} %, model {100 * calibrated.e_db:.1f} %;"
                f" over cache {speedup_cells[-1]}",
                flush=True,
            )
        e_db.append(f"| {kind} | " + " | ".join(e_db_cells) + " |")
        speedup.append(f"| {kind} | " + " | ".join(speedup_cells) + " |")
    tables = {"e_db": "\n".join(e_db) + "\n", "speedup": "\n".join(speedup) + "\n"}
    print(tables["e_db"], tables["speedup"], sep="\n")
    with open(args.output, "w") as out:
        out.write(PAGE.format(**tables))
    return 0


def _table(cells: str) -> list[str]:
    header = "| kernel | " + " | ".join(f"{w}x {cells}" for w in WIDTHS) + " |"
    return [header, "|---|" + "---|" * len(WIDTHS)]


PAGE = """\
# Table 5.2 and "up to 10x vs cache" with the C66x models (issue 15 §4)

Made by

    python scripts/table52.py

Everything here is **modelled** (no C66x was run), for a 1024 x 1024 float image in the tiles
the geometry model picks for 384 KiB of L2:
- compute: the II per output and the pipeline fill from the C66x resource model (baseline
  loops, as the double-buffer chapter evaluates the memory system);
- stalls: the kernel's accesses replayed through LRU caches of the C66x's geometry
  (`emit/c66x_cache_model.py`): L1D 32 KiB 2-way 64-byte lines read-allocate, L2 cache
  256 KiB 4-way 128-byte lines; an L1D miss stalls 4 + 64 / 8 = 12 cycles (L1's latency and
  a line at half L1's speed, the dissertation's §3), an L2 miss 3.5 times that in all
  ("scratchpad is 3-4 times faster than off-chip memory", §3), a dirty line written back
  128 bytes at DDR3-1333's 10.7 bytes per cycle at 1 GHz. The tiles' buffers are read through
  the same L1D, laid out as the runtime allocates them; the baseline's images lie one after
  the other in DDR3 (as a heap places large blocks);
- transfers: eq. 4.3's MB(t_y) = 8 - 0.08 t_y, whose unit the dissertation does not give,
  read two ways: **calibrated** (`BYTES_PER_CYCLE_PER_MB`, set so that Table 5.2's first entry,
  Mean Filter (H) 3x, is exact: `python scripts/table52.py --calibrate`), or **GB/s** at the
  EVM's 1 GHz (8 bytes per cycle for short tiles, near DDR3-1333's peak).

No constant was fitted to any other entry or to the speed-ups below.

## E_db, double buffer vs single buffer (Table 5.2), in %, calibrated reading

{e_db}
**The model disagrees with the paper.** Both grow with the stencil's width, but in the model
double buffering hides a transfer behind compute whenever the tile's compute is long enough,
so the saving follows compute / transfer: 13 % to 42 % for the horizontal filters (II from 2 to
8 cycles per output while the bytes per output barely change), a little less for the vertical
ones (their halo rows add transfer), and close to 100 % for Lucas-Kanade from 5x and Harris
from 7x on, whose compute (18 to 675 loads per output) dwarfs their transfers. The paper's 13-17 %
everywhere means its memory time was hardly hidden even for compute-bound kernels: either its
E_db counts something the model does not (the CPU's own L2 accesses competing with the EDMA,
the waits' polling, transfer set-up per tile), or its compute per tile was much shorter than
modelled. The reference gives no timing breakdown to settle it.

## Speed-up of double-buffered tiles over the cache baseline ("up to 10x vs cache")

Cycles of the cached baseline (no tiles) over cycles of Algorithm 4, each cell with the
calibrated transfer speed and with MB read as GB/s. The paper reports "up to 15x" for
Lucas-Kanade and "10x" for Harris over cache (Figs. 5.11-5.16, whose data is not given), and
that cache performance falls as a vertical stencil widens while the scratchpad's stays
constant (Fig. 1.4).

{speedup}
**What the model reproduces.** The vertical stencils fall off a cliff through the cache, as
Fig. 1.4 shows: up to 7 rows a column's reads fit L1D's two ways (the image's rows, 4 KiB
apart, share a set every 4 rows), from 9 rows on every read misses (15 misses per output at
15x), while the tiles' rows are not 4 KiB apart and keep hitting; with the GB/s reading the
tiles win 3.3-8.3x there, the class of the paper's "up to 10x". Lucas-Kanade 3x wins 11x: its
five images, 4 MiB apart, share L2's sets, so five lines compete for 4 ways and every output
misses L2 five times.

**What it does not.** The paper's two claims need two DMA speeds in this model: with the
speed that reproduces E_db = 13 %, transfers take so long that the tiles lose to the cache
(0.2-0.6x) on every horizontal filter and every vertical one under 11 rows. And Harris and
Lucas-Kanade gain less, not more, as the window widens (1.3-2.5x from 7x on): their loops stop
software-pipelining beyond 3x (Lucas-Kanade) and 5x (Harris), over 250 instructions, where the
model's II jumps from 15 to 126 and from 26 to 235 cycles, and the compute then dwarfs the
misses of either variant.

**What the model changed.** It found tile buffers that share L1D's sets, and the runtime and
the tile choice now avoid the two cases it showed: buffers a multiple of L1D's 16 KiB way
apart (Harris 15x, 64 KiB buffers: 44 misses per output, 0.8x; `pycc_spm_alloc` now starts
each buffer 3 lines after the one before: 1.6 misses, 1.3x) and buffer rows a multiple of
1 KiB apart (the vertical filters' 9x, 16 x 1024 tiles, rows 4 KiB apart: 2.9 misses per
output, 1.0x; `choose_tile` now avoids such pitches: 0.1 misses, 3.3x). A fixed stagger is
not a placement: Lucas-Kanade 15x's buffers (3 images x 15 rows, 1116 bytes apart) still
collide, 37 misses per output in its tiles (1.4x, where the back-to-back buffers gave 2.0x);
choosing each kernel's placement with this model is not done.
"""


if __name__ == "__main__":
    sys.exit(main())
