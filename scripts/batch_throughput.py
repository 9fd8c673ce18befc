#!/usr/bin/env python3
"""How fast `pycc-stencil batch` goes: kernels per minute over a tree with local processes
and on a Dask LocalCluster of as many worker processes (loopback), and the overhead of one
job (a file with nothing to compile: the child process, its imports, the store and the
report), each from an empty store. Prints a Markdown table for docs/batch.md.

    python scripts/batch_throughput.py [TREE] [--workers N] [-I DIR ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

from pycc_stencil import batch  # noqa: E402
from pycc_stencil.batch_report import machine_name  # noqa: E402


def timed(sources: list[str], out: str, **options) -> tuple[float, int]:
    started = time.perf_counter()
    records = batch(sources, "host", out, **options)
    kernels = sum(
        r.status in ("checked", "mismatch", "error") and r.function != "" for r in records
    )
    return time.perf_counter() - started, kernels


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", default=os.path.join(HERE, "..", "tests", "corpus"))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("-I", dest="includes", action="append", default=[])
    args = parser.parse_args()
    flags = [f"-I{d}" for d in args.includes]
    rows = []
    with tempfile.TemporaryDirectory(prefix="pycc-throughput-") as scratch:
        empty = os.path.join(scratch, "empty")
        os.makedirs(empty)
        for n in range(8):
            with open(os.path.join(empty, f"e{n}.c"), "w") as handle:
                handle.write(f"int e{n};\n")
        seconds, _ = timed([empty], os.path.join(scratch, "o0"), jobs=1)
        rows.append(("overhead per job (8 empty files, 1 process)", f"{seconds / 8:.2f} s", ""))
        seconds, kernels = timed([args.tree], os.path.join(scratch, "o1"), flags=flags,
                                 jobs=args.workers)  # fmt: skip
        rows.append((f"local, {args.workers} processes", f"{seconds:.1f} s",
                     f"{60 * kernels / seconds:.1f}"))  # fmt: skip
        from distributed import LocalCluster

        with LocalCluster(n_workers=args.workers, threads_per_worker=1, host="127.0.0.1",
                          dashboard_address=None) as cluster:  # fmt: skip
            seconds, kernels = timed([args.tree], os.path.join(scratch, "o2"), flags=flags,
                                     scheduler=cluster.scheduler_address)  # fmt: skip
        rows.append((f"Dask LocalCluster, {args.workers} workers", f"{seconds:.1f} s",
                     f"{60 * kernels / seconds:.1f}"))  # fmt: skip
    where = f"{machine_name()} ({os.cpu_count()} cores)"
    print(f"{kernels} kernels in {os.path.relpath(args.tree)}, on {where}")
    print()
    print("| run | time | kernels per minute |")
    print("|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
