#!/usr/bin/env python3
"""Benchmark pycc-stencil's compiler mode against gcc (and clang) on PolyBench-shaped kernels.

Issue 14's target: a kernel pycc-stencil compiles never loses to the C compilers on it. Each
kernel of scripts/polybench/ (PolyBench 4.2.1's loop shapes and size classes, written for this
project; every class: linear algebra, data mining, medley, stencils; and one sparse
matrix-vector product, not PolyBench, whose loads mix types) is a whole program, built

- `gcc -O3 -march=native`: the reference of every ratio and of the bits;
- `clang -O3 -march=native`, when a clang is on PATH;
- `CC=pycc-stencil -O3 -march=native` (compiler mode, cc = gcc): `pycc`;
- the same with `-fno-strict-aliasing`: `pycc no-tbaa`, the IR without the front end's type-based
  alias tags (gcc's part of the program does not matter: only the kernel is timed), i.e. what
  the tags gain;

once with the flags' own contraction and once more with `-ffp-contract=off` for all (gcc fuses
multiply-adds under GNU C's default; pycc-stencil fuses the same ones, or leaves the kernel to
cc where gcc's choice depends on inlining). Each program times its kernel alone, best of
`--reps` runs on fresh inputs, and prints a hash of its outputs' bits; the script runs the
programs `--rounds` times round-robin (variants interleaved, so a busy machine slows all
alike) and keeps each one's best time. A hash differing from gcc's in the same contraction
mode is reported (`bits`), never hidden. The report says, per kernel, whether pycc-stencil
took the kernel over (PYCC_REPORT); `--takeover all` sets `PYCC_TAKEOVER=all` (compiler mode
then takes over every kernel it can lower, where it honours that variable).

    .venv/bin/python scripts/bench_polybench.py [--kernels gemm,lu] [--size medium|large]
        [--rounds 3] [--reps 5] [--contract default,off] [--takeover all] [--markdown out.md]

docs/polybench_benchmarks.md has a table and its command.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (scripts/ is not a package: bench.py is its sibling)
from bench import build_directory, default_pycc, find_clangs, run  # noqa: E402

SOURCES = Path(__file__).resolve().parent / "polybench"
#: kernel -> PolyBench's category; the geometric mean leaves the stencils out (issue 14)
KERNELS = {
    "gemm": "linear algebra",
    "3mm": "linear algebra",
    "gemver": "linear algebra",
    "syrk": "linear algebra",
    "syr2k": "linear algebra",
    "symm": "linear algebra",
    "cholesky": "linear algebra",
    "lu": "linear algebra",
    "covariance": "data mining",
    "correlation": "data mining",
    "floyd-warshall": "medley",
    "nussinov": "medley",
    "heat-3d": "stencils",
    "jacobi-2d": "stencils",
    # not PolyBench (left out of the means): the program whose loads mix types, where the
    # front end's TBAA tags change the code
    "spmv": "sparse, extra",
}
#: the classes the geometric means cover (issue 14: PolyBench's non-stencil kernels)
AVERAGED = {"linear algebra", "data mining", "medley"}
SIZES = {"medium": "-DMEDIUM_DATASET", "large": "-DLARGE_DATASET"}
FLAGS = ["-O3", "-march=native"]
CONTRACT = {"default": [], "off": ["-ffp-contract=off"]}
#: --no-inline: gcc (also cc of compiler mode) and clang may no longer inline the static kernel
#: into main and specialize it for main's constant sizes (pycc-stencil's kernel is its own
#: object and never is); clang's IPSCCP still propagates the constant sizes into it
NO_INLINE = {"gcc": ["-fno-inline", "-fno-ipa-cp", "-fno-ipa-cp-clone"], "clang": ["-fno-inline"]}


@dataclass
class Variant:
    """One compiler command line; `pycc` ones run in compiler mode with cc = gcc."""

    name: str
    command: list[str]
    pycc: bool = False
    family: str = "gcc"  # whose options it takes: gcc (also pycc-stencil's cc) or clang


@dataclass
class Program:
    kernel: str
    contract: str
    variant: Variant
    path: Path | None = None
    error: str | None = None
    taken: str = ""  # pycc variants: "yes", or "no: REASON"
    time: float = math.inf
    hash: str | None = None
    code: str | None = None  # the kernel's disassembly, names normalized (kernel_code)


@dataclass
class Row:
    kernel: str
    contract: str
    programs: dict[str, Program] = field(default_factory=dict)


def make_variants(gcc: str, clang: str | None, pycc: str | None) -> list[Variant]:
    variants = [Variant("gcc", [gcc])]
    if clang:
        variants.append(Variant("clang", [clang], family="clang"))
    if pycc:
        variants.append(Variant("pycc", [pycc], pycc=True))
        variants.append(Variant("pycc no-tbaa", [pycc, "-fno-strict-aliasing"], pycc=True))
    return variants


def build(
    program: Program, size: str, reps: int, out: Path, takeover: str | None, no_inline: bool
) -> None:
    """Compile one program; for pycc-stencil, read from its report whether it took the
    kernel over."""
    source = SOURCES / f"{program.kernel}.c"
    program.path = out / f"{program.kernel}.{program.contract}.{program.variant.name}".replace(
        " ", "-"
    )
    report = program.path.with_suffix(".report.json")
    command = [
        *program.variant.command,
        *FLAGS,
        *CONTRACT[program.contract],
        *(NO_INLINE[program.variant.family] if no_inline else []),
        SIZES[size],
        f"-DREPS={reps}",
        f"-I{SOURCES}",
        str(source),
        "-o",
        str(program.path),
        "-lm",
    ]
    env = None
    if program.variant.pycc:
        env = bench.pycc_env(report)
        if takeover:
            env["PYCC_TAKEOVER"] = takeover
    done = run(command, env=env, timeout=900)
    if done.returncode != 0:
        program.error = bench.first_line(done.stderr) or "build failed"
        return
    function = f"kernel_{program.kernel.replace('-', '_')}"
    program.code = kernel_code(program.path, function)
    if program.variant.pycc:
        program.taken = takeover_status(report, function)


def kernel_code(path: Path, function: str) -> str | None:
    """The instructions of `function` in the program (pycc-stencil's hidden `__pycc_<tag>_`
    symbol too), with addresses and tags left out: equal strings are the same machine code.
    None where it was inlined into main."""
    done = run(["objdump", "-d", "--no-show-raw-insn", "--no-addresses", str(path)], timeout=120)
    name = re.compile(rf"^<(__pycc_[0-9a-f]+_)?{function}>:$", re.M)
    start = name.search(done.stdout)
    if start is None:
        return None
    body = done.stdout[start.end() :].split("\n\n", 1)[0]
    return re.sub(r"__pycc_[0-9a-f]+_", "__pycc_", body)


#: a pass's remark that it transformed the code (clang's -Rpass=NAME; not -Rpass-missed)
PASSED = re.compile(r"\[-Rpass=([\w()-]+)\]")


def takeover_status(report: Path, function: str) -> str:
    """`yes` and the passes that fired if compiler mode compiled `function` (main takes over
    only those; `PYCC_TAKEOVER=all` every kernel it lowers), else `no: ` and the reason."""
    if not report.exists():
        return "no: no report"
    for line in report.read_text().splitlines():
        for record in json.loads(line).get("functions", []) if line.strip() else []:
            if record.get("name") == function:
                if record.get("compiled_by") != "pycc-stencil":
                    return f"no: {record.get('reason')}"
                fired = sorted({m for r in record.get("remarks", []) for m in PASSED.findall(r)})
                return f"yes ({', '.join(fired)} fired)" if fired else "yes (no pass fired)"
    return "no: not in the report"


def measure(program: Program) -> None:
    """One run of a built program: keep its best time and its outputs' hash."""
    if program.path is None or program.error:
        return
    done = run([str(program.path)], timeout=1800)
    if done.returncode != 0:
        program.error = f"exit {done.returncode}"
        return
    values = dict(line.split() for line in done.stdout.splitlines() if line.strip())
    program.time = min(program.time, float(values["time"]))
    if program.hash is not None and program.hash != values["hash"]:
        program.error = "output differs between runs"
    program.hash = values["hash"]


def ratio(base: Program, other: Program) -> float | None:
    if base.error or other.error or not math.isfinite(other.time):
        return None
    return base.time / other.time


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def table(rows: list[Row], variants: list[Variant]) -> tuple[list[str], list[str]]:
    """The Markdown table and the summary lines (geometric means over non-stencil kernels).
    Ratios are `base time / other time`: above 1, `other` is faster."""
    names = [v.name for v in variants]
    pairs = [("gcc", n) for n in names if n != "gcc"]
    if "clang" in names and "pycc" in names:
        pairs.append(("clang", "pycc"))  # issue 14: a kernel we compile never loses to clang
    head = ["kernel", "class", "contraction", "gcc ms", *[f"{b}/{o}" for b, o in pairs]]
    head += ["bits vs gcc", "pycc took it over"]
    if "pycc no-tbaa" in names:
        head.insert(-1, "TBAA changes code")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ratios: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        gcc = row.programs["gcc"]
        cells = [row.kernel, KERNELS[row.kernel], row.contract]
        cells.append(f"{gcc.time * 1e3:.2f}" if gcc.error is None else f"error: {gcc.error}")
        for base, other in pairs:
            r = ratio(row.programs[base], row.programs[other])
            cells.append(f"{r:.2f}" if r is not None else "error")
            if r is not None and KERNELS[row.kernel] in AVERAGED:
                ratios.setdefault((f"{base}/{other}", row.contract), []).append(r)
        differ = [n for n, p in row.programs.items() if p.hash is not None and p.hash != gcc.hash]
        errors = [f"{n}: {p.error}" for n, p in row.programs.items() if p.error]
        cells.append("; ".join(errors) or ("differ: " + ", ".join(differ) if differ else "same"))
        pycc = row.programs.get("pycc")
        if "pycc no-tbaa" in names:
            other = row.programs["pycc no-tbaa"].code
            cells.append("?" if pycc.code is None else "yes" if pycc.code != other else "no")
        cells.append(pycc.taken if pycc is not None else "")
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    summary = [
        f"geomean {pair}, contraction {contract}, non-stencil kernels: {geomean(values):.3f} "
        f"(min {min(values):.2f}, {len(values)} kernels)"
        for (pair, contract), values in ratios.items()
    ]
    return lines, summary


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated subset")
    p.add_argument("--size", choices=SIZES, default="medium", help="PolyBench size class")
    p.add_argument("--rounds", type=int, default=3, help="runs of each program, interleaved")
    p.add_argument("--reps", type=int, default=5, help="timed kernel calls inside one run")
    p.add_argument("--contract", default="default,off", help="contraction modes: default, off")
    p.add_argument("--gcc", default="gcc")
    p.add_argument("--clang", default=None, help="clang to use (default: newest on PATH; "
                   "'none' for none)")  # fmt: skip
    p.add_argument("--pycc", default=None, help="pycc-stencil (default: beside this python)")
    p.add_argument("--no-inline", action="store_true", help="gcc and clang may not inline or "
                   "specialize the kernel (compares the kernel's code alone)")  # fmt: skip
    p.add_argument("--takeover", default=None, help="PYCC_TAKEOVER for compiler mode (all)")
    p.add_argument("--markdown", default=None, help="write the table and summary here")
    p.add_argument("--keep", action="store_true", help="keep the build directory")
    args = p.parse_args(argv)
    args.kernels = args.kernels.split(",")
    args.contract = args.contract.split(",")
    unknown = [k for k in args.kernels if k not in KERNELS] + [
        c for c in args.contract if c not in CONTRACT
    ]
    if unknown:
        p.error(f"unknown kernels or contraction modes: {', '.join(unknown)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    gcc = shutil.which(args.gcc) or sys.exit(f"{args.gcc} not found")
    clangs = find_clangs()
    clang = None if args.clang == "none" else args.clang or (clangs[0][1] if clangs else None)
    pycc = args.pycc or default_pycc()
    variants = make_variants(gcc, clang, pycc)
    rows = [Row(k, c) for k in args.kernels for c in args.contract]
    with build_directory(args.keep, prefix="pycc-polybench-") as out:
        for row in rows:
            for variant in variants:
                program = Program(row.kernel, row.contract, variant)
                build(program, args.size, args.reps, out, args.takeover, args.no_inline)
                row.programs[variant.name] = program
                print(f"built {row.kernel} ({row.contract}) {variant.name}: "
                      f"{program.error or program.taken or 'ok'}", file=sys.stderr)  # fmt: skip
        for round_ in range(args.rounds):
            for row in rows:
                for program in row.programs.values():
                    measure(program)
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
    lines, summary = table(rows, variants)
    header = [
        f"command: {shlex.join(['scripts/bench_polybench.py', *(argv or sys.argv[1:])])}",
        *bench.machine_info(gcc, clang, pycc),
        f"load average at the end: {bench.loadavg()}",
        f"size class {args.size.upper()}; best of {args.reps} kernel runs x {args.rounds} rounds"
        + (f"; --no-inline: {NO_INLINE}" if args.no_inline else ""),
    ]
    text = "\n".join(["```", *header, "```", "", *lines, "", *[f"- {s}" for s in summary]])
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
