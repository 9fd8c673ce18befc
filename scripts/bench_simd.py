#!/usr/bin/env python3
"""Benchmark pycc-stencil's SIMD binding against LLVM's vectorizers and gcc (issue 4, §7).

For the dissertation's eight kernels (tests/corpus/c66x/) and a few integer kernels
(tests/corpus/legacy/), at a cache-resident and a DRAM size, one run times:

- `gcc -O3 -march=native`: the reference of every ratio and of the correctness check;
- `clang -O3 -march=native`, when a clang is on PATH;
- `LLVM vec`: pycc-stencil's front end + LLVM -O3 with its loop and SLP vectorizers on, no
  pycc-stencil passes (`pycc-stencil -O3 -march=native -ftree-vectorize`);
- `LLVM scalar`: the same with both vectorizers off (`-fno-tree-vectorize`): what the
  binding starts from;
- one variant per pycc-stencil pipeline (`--pipelines`, default `simd;unroll(2),simd`): the
  passes, then LLVM -O3 with its vectorizers off (`-fpycc-passes=P -fno-tree-vectorize`).
  Pipelines naming a pass this pycc-stencil does not register (e.g. `align` before it is
  merged) are skipped with a note; pipelines with `align` also get `-fpycc-row-align=N`.

Every variant is a shared library built by its compiler's command line (pycc-stencil in its
drop-in compiler mode), so scripts/bench.py's machinery does the rest: every library's output
is compared with gcc's (bit for bit, or with `gcc -ffp-contract=off` where gcc contracts),
then the variants run round-robin, the median of N repetitions is reported with its spread,
and the achieved bandwidth is set against a triad measured in the same run.

    python scripts/bench_simd.py [--kernels jacobi,sobel] [--sizes cache,dram] [--reps N]
        [--pipelines 'simd;unroll(2),simd;unroll(2),simd,align'] [--fp-contract off]
        [--quick] [--markdown out.md]

See docs/simd_benchmarks.md for the method, a table and an analysis.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (scripts/ is not a package: bench.py is its sibling)
from bench import Array, Kernel, Variant  # noqa: E402

SIZE_CLASSES = {
    "cache": "cache-resident (1024 x 256 elements, 0.25-1 MB per array)",
    "dram": "DRAM-sized (64 MB per array: 4096 x 4096 floats, 8192 x 4096 int16, "
    "8192 x 8192 uint8)",
}
SIZES = {
    1: {"cache": dict(x=1024, y=256), "dram": dict(x=8192, y=8192)},
    2: {"cache": dict(x=1024, y=256), "dram": dict(x=8192, y=4096)},
    4: {"cache": dict(x=1024, y=256), "dram": dict(x=4096, y=4096)},
}
DTYPES = {"float": "float32", "uint8": "uint8", "int16": "int16"}
ITEMSIZE = {"float32": 4, "uint8": 1, "int16": 2}
C66X = bench.REPO / "tests" / "corpus" / "c66x"
LEGACY = bench.REPO / "tests" / "corpus" / "legacy"
DEFAULT_PIPELINES = "simd;unroll(16),simd;simd,align;unroll(16),simd,align"


def image_kernel(name, path, function, signature, types, points, flops, halo, integer=False):
    """A kernel over size_x x size_y images. `signature` lists the C parameters in order:
    `<name` an input image, `>name` an output image, `X`/`Y` the sizes, `lo=64` a constant.
    `types` = (input element, output element); `halo` = rows/columns left out on each side."""
    tokens = signature.split()
    in_t, out_t = (DTYPES[t] for t in types)

    def args(p):
        out = []
        for tok in tokens:
            if tok in ("X", "Y"):
                out.append(p[tok.lower()])
            elif "=" in tok:
                out.append(int(tok.split("=")[1]))
            else:
                written = tok[0] == ">"
                out.append(Array(tok[1:], (p["y"], p["x"]), out_t if written else in_t, written))
        return out

    hx, hy = halo
    nbytes = sum(ITEMSIZE[out_t if t[0] == ">" else in_t] for t in tokens if t[0] in "<>")
    return Kernel(
        name=name,
        source=str(path),
        function=function,
        elem=types[0] if types[0] == types[1] else f"{types[0]}>{types[1]}",
        stencil_points=points,
        flops=flops,
        bytes=nbytes,
        points_doc=f"(size_y-{2 * hy})*(size_x-{2 * hx})",
        sizes=SIZES[ITEMSIZE[in_t]],
        args=args,
        points=lambda p: (p["y"] - 2 * hy) * (p["x"] - 2 * hx),
        integer=integer,
    )


F = ("float", "float")
# flops/point as the source writes them (a double multiply by a literal counts 1); integer
# kernels: integer operations. Bytes/point: every image read once, every output written once.
KERNELS = [
    image_kernel("matrix_add", C66X / "matrix_add.c", "MatrixAdd", "<input1 <input2 X Y >output",
                 F, 2, 1, (0, 0)),
    image_kernel("mean_filter_1x3", C66X / "mean_filter_1x3.c", "MeanFilter1x3",
                 "<input X Y >output", F, 3, 3, (1, 0)),
    image_kernel("mean_filter_3x3", C66X / "mean_filter_3x3.c", "MeanFilter3x3",
                 "<input X Y >output", F, 9, 9, (1, 1)),
    image_kernel("jacobi", C66X / "jacobi.c", "Jacobi", "<input X Y >output", F, 4, 4, (1, 1)),
    image_kernel("gaussian_x7", C66X / "gaussian_x7.c", "GaussianX7", "<input X Y >output",
                 F, 7, 13, (3, 3)),
    image_kernel("sobel", C66X / "sobel.c", "Sobel", "<input X Y >output1 >output2",
                 F, 8, 12, (1, 1)),
    image_kernel("harris_corner", C66X / "harris_corner.c", "HarrisCorner", "<dx <dy X Y >s",
                 F, 18, 54, (1, 1)),
    image_kernel("lucas_kanade", C66X / "lucas_kanade.c", "LucasKanade",
                 "<dx <dy <dt X Y >vx >vy", F, 27, 96, (1, 1)),
    image_kernel("box_blur_u8", LEGACY / "box_blur_u8.c", "box_blur3x3_u8", "<src >dst X Y",
                 ("uint8", "uint8"), 9, 9, (1, 1), integer=True),
    image_kernel("band_u8", LEGACY / "threshold.c", "band_u8", "<src >dst X Y lo=64 hi=192",
                 ("uint8", "uint8"), 1, 3, (0, 0), integer=True),
    image_kernel("sobel_sum_s16", LEGACY / "sobel_s16.c", "sobel_sum_s16_sat", "<in >out X Y",
                 ("int16", "int16"), 8, 18, (1, 1), integer=True),
    image_kernel("sobel_mag_s16", LEGACY / "sobel_s16.c", "sobel_mag_s16", "<in >out X Y",
                 ("int16", "uint8"), 8, 19, (1, 1), integer=True),
]  # fmt: skip


# --------------------------------------------------------------------------------------------
# Variants


def pipeline_problem(pipeline: str) -> tuple[list[str], str | None]:
    """(the pass names of `pipeline`, None) or ([], why this pycc-stencil cannot run it)."""
    from pycc_stencil.ir_passes.pipeline import PipelineError, parse_pipeline

    try:
        return [name for name, _ in parse_pipeline(pipeline)], None
    except PipelineError as exc:
        return [], str(exc)


def make_variants(args, gcc: str, clang: str | None, pycc: str) -> tuple[list[Variant], list]:
    """The variants of this run, and a note for every pipeline left out."""
    opt = [*bench.OPT, *(["-ffp-contract=off"] if args.fp_contract == "off" else [])]
    vs = [Variant("gcc", "gcc", [gcc, *opt])]
    if args.fp_contract != "off":
        vs.append(Variant("gcc-nofma", "gcc -ffp-contract=off", [gcc, *opt, "-ffp-contract=off"],
                          reference_only=True))  # fmt: skip
    if clang:
        vs.append(Variant("clang", Path(clang).name, [clang, *opt]))
    vs += [
        Variant("llvm-vec", "LLVM vec", [pycc, *opt, "-ftree-vectorize"], pycc=True),
        Variant("llvm-scalar", "LLVM scalar", [pycc, *opt, "-fno-tree-vectorize"], pycc=True),
    ]
    skipped = []
    for pipeline in args.pipelines:
        names, problem = pipeline_problem(pipeline)
        if problem:
            skipped.append(f"pipeline {pipeline!r} skipped: {problem}")
            continue
        flags = [f"-fpycc-passes={pipeline}", "-fno-tree-vectorize"]
        if "align" in names and args.row_align:
            flags.append(f"-fpycc-row-align={args.row_align}")
        vs.append(Variant(f"pycc:{pipeline}", pipeline, [pycc, *opt, *flags], pycc=True))
    return vs, skipped


# --------------------------------------------------------------------------------------------
# Reporting


def ratio_matrix(results, size: str, kernels: list[Kernel]) -> tuple[list[str], list[list[str]]]:
    """Kernel x variant: speed relative to gcc (gcc time / variant time), `†cc` where
    pycc-stencil left the kernel to cc, and the geometric mean over the kernels."""
    rs = [r for r in results if r.size == size and r.variant != "gcc-nofma"]
    labels = list(dict.fromkeys(r.label for r in rs))
    ratios: dict[str, list[float]] = {label: [] for label in labels}
    rows = []
    for k in kernels:
        mine = {r.label: r for r in rs if r.kernel == k.name}
        base = next((r for r in mine.values() if r.variant == "gcc"), None)
        row = [k.name]
        for label in labels:
            r = mine.get(label)
            if r is None or not r.time or base is None or not base.time:
                row.append("WRONG" if r is not None and r.wrong else "-")
                continue
            ratios[label].append(base.time / r.time)
            fallback = " †cc" if bench.variant_label(r).endswith("†cc") else ""
            row.append(f"{base.time / r.time:.2f}{fallback}")
        rows.append(row)
    rows.append(["geomean"] + [
        f"{math.exp(statistics.fmean(map(math.log, xs))):.2f} ({len(xs)})" if xs else "-"
        for xs in ratios.values()
    ])  # fmt: skip
    return ["kernel"] + labels, rows


def print_matrix(header, rows, title: str, use_rich: bool) -> None:
    if use_rich:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
        for i, c in enumerate(header):
            t.add_column(c, justify="left" if i == 0 else "right")
        for row in rows:
            if row[0] == "geomean":
                t.add_section()
            t.add_row(*row)
        Console(width=max(140, shutil.get_terminal_size().columns)).print(t)
        return
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(header)]
    print(title)
    for row in [header, *rows]:
        print("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in
                        enumerate(zip(row, widths))))  # fmt: skip
    print()


def markdown_matrix(header, rows) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(out + ["| " + " | ".join(row) + " |" for row in rows])


def remark_lines(builds, variants) -> list[str]:
    """What the pycc-stencil passes said about each kernel (source path left out)."""
    out = []
    for v in variants:
        if not v.key.startswith("pycc:"):
            continue
        for (kname, key), b in builds.items():
            if key == v.key:
                said = [r.split(": ", 1)[1] if ": " in r else r for r in b.pycc_remarks]
                out.append(f"{v.label} / {kname}: " + ("; ".join(said) or "no remark"))
    return out


# --------------------------------------------------------------------------------------------
# Command line


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    names = [k.name for k in KERNELS]
    p.add_argument("--kernels", help=f"comma-separated subset of: {','.join(names)}")
    p.add_argument("--sizes", default="cache,dram", help="cache, dram (default both)")
    p.add_argument(
        "--pipelines",
        default=DEFAULT_PIPELINES,
        help=f"semicolon-separated pycc-stencil pipelines (default {DEFAULT_PIPELINES!r})",
    )
    p.add_argument(
        "--row-align",
        type=int,
        default=64,
        help="-fpycc-row-align=N for pipelines with `align` (0: none; default 64, which holds "
        "for every size here: 64-byte aligned buffers, rows of 1024+ bytes)",
    )
    p.add_argument(
        "--fp-contract",
        choices=["gcc", "off"],
        default="gcc",
        help="gcc: every compiler's default (gcc and LLVM fuse multiply-adds); off: "
        "-ffp-contract=off for every variant (then all outputs must be bit-identical)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="cache size, 3 repetitions, 5 ms measurements, the first default pipeline only "
        "(about a minute)",
    )
    p.add_argument("--nice", type=int, default=-10, help="niceness to ask for (default -10)")
    bench.add_common_options(p)
    a = p.parse_args(argv)
    if a.quick:
        a.sizes = "cache" if a.sizes == "cache,dram" else a.sizes
        a.reps = min(a.reps, 3)
        a.min_time = min(a.min_time, 0.005)
        a.pipelines = (
            DEFAULT_PIPELINES.split(";")[0] if a.pipelines == DEFAULT_PIPELINES else a.pipelines
        )
    a.kernels = a.kernels.split(",") if a.kernels else names
    a.sizes = a.sizes.split(",")
    unknown = [k for k in a.kernels if k not in names] + [s for s in a.sizes if s not in SIZES[4]]
    if unknown:
        p.error(f"unknown kernel or size: {', '.join(unknown)}")
    if a.reps < 1:
        p.error("--reps must be >= 1")
    a.pipelines = [x.strip() for x in a.pipelines.split(";") if x.strip()]
    return a


def renice(niceness: int) -> str:
    """Ask for a higher priority (the machine is shared); say what was granted."""
    try:
        os.nice(niceness - os.nice(0))
    except OSError as exc:
        return f"nice {niceness} refused ({exc.strerror}), running at {os.nice(0)}"
    return f"nice {os.nice(0)}"


def main(argv=None) -> int:
    args = parse_args(argv)
    kernels = [k for k in KERNELS if k.name in args.kernels]
    t_start, load_start = time.perf_counter(), bench.loadavg()
    priority = renice(args.nice)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    gcc = shutil.which(args.gcc) or sys.exit(f"bench_simd.py: {args.gcc} not found")
    clangs = [shutil.which(args.clang)] if args.clang else [c for _, c in bench.find_clangs()]
    clang = clangs[0] if clangs else None
    pycc = args.pycc or bench.default_pycc() or sys.exit("bench_simd.py: no pycc-stencil found")
    use_rich = not args.plain and bench.has_rich()
    variants, skipped = make_variants(args, gcc, clang, pycc)
    with bench.build_directory(args.keep, "pycc-bench-simd-") as build:
        bench.probe_variants([v for v in variants if not v.pycc], build)
        header = bench.machine_info(gcc, clang, pycc) + bench.variant_lines(variants) + skipped
        print("\n".join(header), flush=True)
        log(f"building {len(kernels)} kernels x {len(variants)} variants in {build} ...")
        t0 = time.perf_counter()
        cache = None if args.no_cache else args.cache_dir
        builds = bench.build_all(kernels, variants, build, cache)
        build_s = time.perf_counter() - t0
        gomp = bench.Gomp()
        triad_lib = bench.build_triad(gcc, build, [1])
        triad = bench.measure_triad(triad_lib, gomp, 5 if args.quick else 10)[1]
        core = bench.measure_core_peak(gcc, build, 5 if args.quick else 10)
        results = []
        for size in args.sizes:
            log(f"size {size}: {SIZE_CLASSES[size]}")
            for k in kernels:
                results += bench.bench_kernel_size(k, size, builds, variants, args, gomp, log)
        end = bench.measure_triad(triad_lib, gomp, 5 if args.quick else 10)[1]
        core = core.best_with(bench.measure_core_peak(gcc, build, 5 if args.quick else 10))
        roofs = bench.Roofs(max(triad.best, end.best), core)
        elapsed = time.perf_counter() - t_start
        lines = [
            f"triad (gcc -O3 -march=native, 3 x 128 MiB, 1 thread): {triad.best:.1f} GB/s best "
            f"before, {end.best:.1f} after; BW column = achieved / {roofs.bandwidth:.1f} GB/s",
            roofs.line(),
            f"builds {build_s:.0f} s, run {elapsed:.0f} s; {args.reps} repetitions, "
            f"{bench.statistic_name(args)}, "
            f"round-robin; {priority}; load average {load_start} at the start, "
            f"{bench.loadavg()} at the end; fp contraction: {args.fp_contract}",
            "command: " + shlex.join(["python", "scripts/bench_simd.py", *(argv or sys.argv[1:])]),
        ]
        print("\n".join(lines) + "\n")
        by_name = {k.name: k for k in kernels}
        md = ["```", *header, *lines, "```", ""]
        for size in args.sizes:
            title = f"{size}: {SIZE_CLASSES[size]}"
            matrix = ratio_matrix(results, size, kernels)
            print_matrix(*matrix, f"{title} - speed vs gcc -O3 (x, higher is faster)", use_rich)
            rows = bench.table_rows([r for r in results if r.size == size], by_name, roofs)
            bench.print_table(rows, title, use_rich)
            md += [f"**{title}**: speed vs gcc -O3 (x, higher is faster)", "",
                   markdown_matrix(*matrix), "", bench.markdown_table(rows), ""]  # fmt: skip
        bench.print_legend(kernels, args.sizes, results)
        notes = remark_lines(builds, variants) + bench.pycc_notes(builds)
        print("\n".join(notes))
        if args.markdown:
            md += [f"- {n}" for n in notes]
            Path(args.markdown).write_text("\n".join(md) + "\n")
        log(f"total {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
