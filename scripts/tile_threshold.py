#!/usr/bin/env python3
"""When do `-O3`'s time tiles pay? The data size where tiled code starts to beat the untiled nest.

For each PolyBench-shaped stencil of scripts/polybench/ and each grid size, four builds of the
same program (`-O3 -march=native -ffp-contract=off`), each timed best of `--runs` runs (each
run the best of 2 kernel calls on fresh inputs), all printing the same output hash:

- `gcc`: the reference of the ratios;
- `untiled`: pycc-stencil with every kernel taken over and no pass (`PYCC_TAKEOVER=all
  -fpycc-passes=`): the nest as LLVM compiles it;
- `tiled`: pycc-stencil `-O3` with the threshold lowered to the L2 (`PYCC_CACHE_L3` = twice
  the L2; the tile sizes stay the cache model's): the time tiles run at every size here;
- `-O3`: pycc-stencil as it is, its run-time check choosing (`Target.locality_threshold`).

    .venv/bin/python scripts/tile_threshold.py [--kernels heat-3d:40,64,96,112,128]
        [--tsteps 100] [--runs 3]

docs/tiling_benchmarks.md ("When time tiles pay") has a run and its reading.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCES = Path(__file__).resolve().parent / "polybench"
PYCC = str(Path(sys.executable).parent / "pycc-stencil")
FLAGS = ["-O3", "-march=native", "-ffp-contract=off", "-DREPS=2", f"-I{SOURCES}"]
DEFAULT = ["heat-3d:40,64,96,112,128", "jacobi-2d:250,500,1000,1500"]


def l2_bytes() -> int:
    from pycc_stencil.emit.cc_machine import cache_model

    return cache_model(["-march=native"], {})[2]


def build_and_time(source: Path, variants: dict, runs: int) -> dict[str, tuple[float, str]]:
    """{variant: (best seconds, output hash)}."""
    found = {}
    for name, (compiler, extra, env) in variants.items():
        program = source.with_suffix(f".{name}")
        command = [compiler, *extra, *FLAGS, str(source), "-o", str(program), "-lm"]
        subprocess.run(command, check=True, env=dict(os.environ, **env), capture_output=True)
        outputs = [subprocess.run([str(program)], capture_output=True, text=True, check=True)
                   .stdout for _ in range(runs)]  # fmt: skip
        times = [float(re.search(r"time (\S+)", o).group(1)) for o in outputs]
        found[name] = (min(times), re.search(r"hash (\S+)", outputs[0]).group(1))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", nargs="*", default=DEFAULT, help="KERNEL:N,N,...")
    parser.add_argument("--tsteps", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    l2 = l2_bytes()
    fresh = {"PYCC_NO_CACHE": "1", "PYCC_SERVER": "0"}
    variants = {
        "gcc": ("gcc", [], {}),
        "untiled": (PYCC, ["-fpycc-passes="], dict(fresh, PYCC_TAKEOVER="all")),
        "tiled": (PYCC, [], dict(fresh, PYCC_CACHE_L3=str(2 * l2))),
        "O3": (PYCC, [], fresh),
    }
    print(f"L2 {l2 >> 10} KiB (the build machine's, -march=native); TSTEPS {args.tsteps}")
    print("| kernel | N | arrays MB | gcc ms | untiled/gcc | tiled/gcc | tiled/untiled | -O3/gcc |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="pycc-threshold-") as scratch:
        for spec in args.kernels:
            kernel, sizes = spec.split(":")
            text = (SOURCES / f"{kernel}.c").read_text()
            dimensions = 3 if "3d" in kernel else 2
            for n in map(int, sizes.split(",")):
                source = Path(scratch) / f"{kernel}-{n}.c"
                source.write_text(
                    re.sub(
                        r"#define TSTEPS \d+",
                        f"#define TSTEPS {args.tsteps}",
                        re.sub(r"#define N \d+", f"#define N {n}", text),
                    )  # fmt: skip
                )
                found = build_and_time(source, variants, args.runs)
                hashes = {h for _, h in found.values()}
                gcc = found["gcc"][0]
                ratio = {name: gcc / t for name, (t, _) in found.items()}
                megabytes = 2 * n**dimensions * 8 / 1e6
                print(
                    f"| {kernel} | {n} | {megabytes:.1f} | {gcc * 1e3:.2f} | "
                    f"{ratio['untiled']:.2f} | {ratio['tiled']:.2f} | "
                    f"{found['untiled'][0] / found['tiled'][0]:.2f} | {ratio['O3']:.2f} |"
                    + ("" if len(hashes) == 1 else " **outputs differ**"),
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
