"""Every corpus kernel under every pass pipeline, checked as the C of a C target (`--target c`,
the default, or `c66x`, built against the host emulation of TI's intrinsics).

For each kernel of `tests/corpus/manifest.py` (its first two variants) and each pipeline, the
kernel is compiled for the C target (passes, C emission, `cc -std=c99 -Wall -Wextra
-Werror -O2`) and checked bit for bit against the original at every parameter set of the
manifest. Prints one line per failure and the counts; the exit status is 1 if anything failed.
`--part K/N` runs every N-th kernel from the K-th (to spread the sweep over processes).

    python scripts/check_emitted_c.py [--target c66x] [--part 0/2] [--pipelines 'simd;...']
"""

from __future__ import annotations

import argparse
import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from corpus.manifest import CORPUS_DIR, KERNELS  # noqa: E402
from corpus_check import corpus_cflags, corpus_extents  # noqa: E402
from pycc_stencil.runtime.check import SourceUnit  # noqa: E402

PIPELINES = (
    ";unroll(4);simd;unroll(2),simd(2),align;time-tile;diamond-tile;fuse-tile;overlap-tile;tile;"
    "unroll-jam(2);swap-unroll;unroll-full,simd(4);parallelogram-tile(4,16);auto"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", default="0/1", help="K/N: every N-th kernel from the K-th")
    parser.add_argument("--pipelines", default=PIPELINES, help="';'-separated pipelines")
    parser.add_argument("--target", default="c", help="the C target: c (default) or c66x")
    args = parser.parse_args()
    part, parts = map(int, args.part.split("/"))
    counts: collections.Counter = collections.Counter()
    for n, entry in enumerate(KERNELS):
        if n % parts != part:
            continue
        for variant in entry["variants"][:2]:
            source = SourceUnit(
                os.path.join(CORPUS_DIR, entry["file"]), corpus_cflags(entry, variant)
            )
            for passes in args.pipelines.split(";"):
                where = f"{entry['function']} {' '.join(variant)} [{passes}]"
                try:
                    unit = source.compile(passes or None, 3, args.target)
                except Exception as exc:  # a pass failing is reported, not the sweep's end
                    counts["pass failed"] += 1
                    print(f"PASS FAILED {where}: {type(exc).__name__}: {exc}", flush=True)
                    continue
                if unit.setup_error:
                    counts["not built"] += 1
                    print(f"NOT BUILT {where}: {unit.setup_error[:400]}", flush=True)
                    continue
                for params in entry["params"]:
                    values = {k: repr(v) for k, v in params.items()}
                    extents = corpus_extents(entry, variant, params)
                    result = unit.check(entry["function"], values, extents)
                    counts[result.status] += 1
                    if result.status != "OK":
                        print(f"{result.status} {where} {params}: {result.message}", flush=True)
                counts["compiles"] += 1
    print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    return 0 if set(counts) <= {"OK", "compiles"} else 1


if __name__ == "__main__":
    sys.exit(main())
