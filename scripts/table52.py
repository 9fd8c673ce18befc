#!/usr/bin/env python3
"""Reproduce the dissertation's Table 5.2 (E_db: the memory time double buffering saves over
a single buffer) with the C66x tile model (`emit/c66x_tile_model.py`).

For the table's kernels at stencil widths 3..15 (mean and Gaussian filters horizontal and
vertical, Harris and Lucas-Kanade over w x w windows), generated here as C in the Appendix-A
style, the script lowers each kernel, takes its II per output and pipeline fill from the C66x
resource model (the baseline loop, as the double-buffer chapter evaluates the memory system),
sizes its tiles with eq. 4.1-4.4 for 384 KiB of L2, and models single vs double buffering on
a 1024 x 1024 image. Prints the model beside the paper and writes docs/table52.md (or
--output). `--calibrate` prints the bandwidth constant that makes the first entry exact.

    python scripts/table52.py [--output docs/table52.md] [--calibrate]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

from pycc_stencil.emit import c66x_tile_model  # noqa: E402
from pycc_stencil.emit.c66x_model import c66x_loops  # noqa: E402
from pycc_stencil.emit.c66x_tile_model import tiled_time  # noqa: E402
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


def modelled_e_db(source: str) -> float:
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "k.c")
        with open(path, "w") as out:
            out.write(source)
        module = lower_file(path, []).module
    kernel = image_kernel(module.get_global("k"))
    loop = c66x_loops(module)["k"]
    tile = choose_tile(kernel, TILE_BUFFER_BYTES)
    return tiled_time(kernel, tile, loop.cycles, loop.schedule_length).e_db


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
    for _ in range(60):
        mid = (low * high) ** 0.5
        c66x_tile_model.BYTES_PER_CYCLE_PER_MB = mid
        # faster DMA: less to hide, a larger share hidden
        low, high = (mid, high) if modelled_e_db(source) < 0.132 else (low, mid)
    return (low * high) ** 0.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=os.path.join(HERE, "..", "docs", "table52.md"))
    parser.add_argument("--calibrate", action="store_true")
    args = parser.parse_args()
    if args.calibrate:
        print(f"BYTES_PER_CYCLE_PER_MB = {calibrate():.4g}")
        return 0
    header = "| kernel | " + " | ".join(f"{w}x paper / model" for w in WIDTHS) + " |"
    lines = [header, "|---|" + "---|" * len(WIDTHS)]
    for kind, paper in PAPER.items():
        cells = []
        for w, expected in zip(WIDTHS, paper):
            model = 100 * modelled_e_db(source_of(kind, w))
            cells.append(f"{expected:.1f} / {model:.1f}")
            print(f"{kind} {w}x: paper {expected:.1f} %, model {model:.1f} %", flush=True)
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    table = "\n".join(lines) + "\n"
    print(table)
    with open(args.output, "w") as out:
        out.write(PAGE.format(table=table))
    return 0


PAGE = """\
# Table 5.2 with the C66x tile model (issue 15 §4)

E_db = (T_mem single buffer - T_mem double buffer) / T_mem single buffer (eq. 5.1), in %,
the paper's value beside the model's (`emit/c66x_tile_model.py`), for a 1024 x 1024 image in
the tiles the geometry model picks for 384 KiB of L2. Made by

    python scripts/table52.py

Everything here is **modelled** (no C66x was run): the II per output and the pipeline fill
come from the C66x resource model (baseline loops), the DMA time from eq. 4.3's MB(t_y) with
one constant, `BYTES_PER_CYCLE_PER_MB`, calibrated so that the first entry (Mean Filter (H)
3x) is exact (`python scripts/table52.py --calibrate`); the other 41 entries are predictions.

{table}
**The model disagrees with the paper.** Both grow with the stencil's width, but in the model
double buffering hides a transfer behind compute whenever the tile's compute is long enough,
so the saving follows compute / transfer: 13 % to 52 % for the horizontal filters (II from 2 to
8 cycles per output while the bytes per output barely change), about half that for the
vertical ones (their halo rows add transfer), and close to 100 % for Harris and Lucas-Kanade
from 5x on, whose compute (18 to 675 loads per output) dwarfs their transfers. The paper's
13-17 % everywhere means its memory time was hardly hidden even for compute-bound kernels:
either its E_db counts something the model does not (the CPU's own L2 accesses competing with
the EDMA, the waits' polling, transfer set-up per tile), or its compute per tile was much
shorter than modelled. The reference gives no timing breakdown to settle it, and no constant
was tuned to close the gap.
"""


if __name__ == "__main__":
    sys.exit(main())
