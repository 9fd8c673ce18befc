#!/usr/bin/env python3
"""The AI Engine back end over Vyasa's workloads: Table VI (CONV2D image filters 2x2 .. 11x11,
output 256 x 16), Table VII (CONV2D layers, output 128 x 2 x 16 channels from 8: REG 3x3,
5x5, 7x7, PW, SS, DS, FC) and CONV3D (3x3x3, 5x5x5, 7x7x7), int32 and int16, and Table VI
in float (which the paper does not evaluate). Per workload: `check`'s verdict against the C
built by cc, the output rows per iteration the MACs/cycle model chose (beside the paper's
tuner's y unroll-and-jam for Table VI), the MAC intrinsics, loads and stores of one call and
the MAC-slot utilization, counted by the host emulation running the emitted kernel, the
modelled MACs/cycle, the data memory against the tile's 128 KB. Writes docs/aie.md (or --output).

There is no AI Engine here: MACs/cycle are the model's (emit/aie_model.py), the counts and
the utilization are measured on the emulation, the paper's numbers come from its cycle-
accurate simulator.

    python scripts/aie_report.py [--output docs/aie.md]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "tests", "corpus", "aie")

from pycc_stencil.emit.aie_convolution import NotAConvolution, convolution  # noqa: E402
from pycc_stencil.emit.aie_model import LOCAL_MEMORY, PEAK, estimate  # noqa: E402
from pycc_stencil.emit.aie_schedule import kernel_plan  # noqa: E402
from pycc_stencil.runtime.check import SourceUnit  # noqa: E402
from pycc_stencil.runtime.emitted import HEADER_DIRS  # noqa: E402

TYPES = {"int16": ("int16_t", "int"), "int32": ("int32_t", "int"), "float": ("float", "float")}
#: Table VI: filter side -> the paper's unroll-and-jam factor along y (32-bit, 16-bit)
PAPER_ROWS = {2: (4, 8), 3: (4, 2), 4: (2, 1), 5: (2, 1), 6: (1, 1), 7: (1, 1),
              8: (4, 1), 9: (4, 1), 10: (4, 4), 11: (4, 4)}  # fmt: skip
#: Table VII: the loop the paper's tuner vectorized (32-bit, 16-bit)
PAPER_VECTOR = {"REG 3x3": "kx", "REG 5x5": "xx", "REG 7x7": "xx", "PW": "kk",
                "SS 1x3": "kx", "SS 3x1": "kk"}  # fmt: skip
#: the paper's geometric means (MACs/cycle, its cycle-accurate simulator): per table, overall
PAPER_GEOMEAN = {
    ("VI", "int32"): 7.67, ("VI", "int16"): 25.92, ("VII", "int32"): 7.67,
    ("VII", "int16"): 22.53, ("CONV3D", "int32"): 7.55, ("CONV3D", "int16"): 21.60,
    ("all", "int32"): 7.6, ("all", "int16"): 23.3,
}  # fmt: skip


@dataclass(frozen=True)
class Workload:
    table: str
    name: str
    file: str
    function: str
    sizes: dict
    useful: int  # the convolution's MACs
    paper_rows: str = "-"
    paper_vector: str = "-"  # the loop the paper's tuner vectorized


def workloads() -> list[Workload]:
    found = []
    for element in ("int32", "int16", "float"):
        for r in range(2, 12):
            rows = PAPER_ROWS[r][0 if element == "int32" else 1] if element != "float" else "-"
            sizes = {"R": r, "S": r, "Y": 16, "X": 256}
            found.append(Workload("VI", f"{r}x{r}", "conv2d.c", "conv2d", sizes | _t(element),
                                  256 * 16 * r * r, str(rows), "x"))  # fmt: skip
    for element in ("int32", "int16"):
        layer = {"Y": 2, "X": 128, "C": 8, "K": 16} | _t(element)
        for name, r, s in (("REG 3x3", 3, 3), ("REG 5x5", 5, 5), ("REG 7x7", 7, 7),
                           ("PW", 1, 1), ("SS 1x3", 1, 3), ("SS 3x1", 3, 1)):  # fmt: skip
            found.append(Workload("VII", name, "conv2d_layer.c", "conv2d_layer",
                                  layer | {"R": r, "S": s}, 128 * 2 * 16 * 8 * r * s,
                                  paper_vector=PAPER_VECTOR[name][element == "int16"]))  # fmt: skip
        found.append(Workload("VII", "DS 3x3", "conv2d_layer.c", "conv2d_depthwise",
                              layer | {"R": 3, "S": 3}, 128 * 2 * 16 * 9,
                              paper_vector="x"))  # fmt: skip
        found.append(Workload("VII", "FC", "conv2d_layer.c", "fully_connected",
                              {"C": 8, "K": 4096} | _t(element), 4096 * 8,
                              paper_vector="k"))  # fmt: skip
    for element in ("int32", "int16"):
        for r in (3, 5, 7):  # the paper's output is 168 or 128 x 2 x 16: 128 here
            sizes = {"R": r, "Z": 16, "Y": 2, "X": 128} | _t(element)
            found.append(Workload("CONV3D", f"{r}x{r}x{r}", "conv3d.c", "conv3d", sizes,
                                  128 * 2 * 16 * r**3))  # fmt: skip
    return found


def _t(element: str) -> dict:
    ctype, acc = TYPES[element]
    return {"T": ctype, "ACC": acc}


_COUNTING_MAIN = """
#include <cstdio>
extern "C" void {function}({parameters});
{buffers}
int main() {{
  pycc_aie_reset_counters();
  {function}({arguments});
  pycc_aie_counts c = pycc_aie_counters();
  std::printf("%llu %llu %llu %llu\\n", c.macs, c.mac_slots, c.loads, c.stores);
}}
"""


def run(work: Workload, scratch: str) -> dict:
    flags = [f"-D{k}={v}" for k, v in work.sizes.items()]
    element = {v: k for k, (v, _) in TYPES.items()}[work.sizes["T"]]
    row = {"work": work, "element": element}
    unit = SourceUnit(os.path.join(CORPUS, work.file), flags).compile(
        "unroll-reductions", target="aie"
    )
    function = unit.module.get_global(work.function)
    try:
        plan = kernel_plan(convolution(function))
    except NotAConvolution as exc:
        return row | {"status": "refused", "reason": str(exc)}
    result = unit.check(work.function, {})
    arguments = [a.name for a in function.args]
    row |= {"status": result.status, "plan": plan, "model": estimate(plan)}
    row["counts"] = _counted(unit.emitted.emitted.text, work, plan, arguments, scratch)
    row["memory"] = sum(plan.buffer_bytes().values())
    row["sim"] = _simulated(work, flags, scratch)
    return row


def _simulated(work: Workload, flags: list[str], scratch: str) -> str:
    """`emit -o DIR` and the kernel's graph testbench (`make run_FUNCTION`) against the C:
    "same", or what went wrong."""
    bundle = os.path.join(scratch, f"{work.table}-{work.name}-{work.sizes['T']}".replace(" ", ""))
    source = os.path.join(CORPUS, work.file)
    emitted = subprocess.run(
        [sys.executable, "-m", "pycc_stencil.cli", "emit", source, *flags, "--target", "aie",
         "-o", bundle],
        capture_output=True, text=True,
    )  # fmt: skip
    if emitted.returncode:
        return "emit failed"
    sim = subprocess.run(
        ["make", "-s", f"run_{work.function}"], cwd=bundle, capture_output=True, text=True
    )
    words = sim.stdout.split()
    return words[-1] if sim.returncode == 0 and words else "differ"


def _counted(text: str, work: Workload, plan, arguments: list[str], scratch: str):
    """(MAC intrinsics, MAC slots, loads, stores) of one call, counted by the emulation."""
    extents, ctype = plan.buffer_elements(), work.sizes["T"]
    buffers = "\n".join(
        f"alignas(64) static {ctype} {name}_[{extents[name]}];" for name in arguments
    )
    main = _COUNTING_MAIN.format(
        function=work.function,
        parameters=", ".join("void *" for _ in arguments),
        buffers=buffers,
        arguments=", ".join(f"{name}_" for name in arguments),
    )
    source = os.path.join(scratch, f"{work.function}.cc")
    with open(source, "w") as handle:
        handle.write(text + main)
    binary = source[:-3]
    subprocess.run(["c++", "-std=c++14", "-O1", f"-I{HEADER_DIRS['aie']}", source, "-o", binary],
                   check=True)  # fmt: skip
    out = subprocess.run([binary], capture_output=True, text=True, check=True).stdout
    macs, slots, loads, stores = map(int, out.split())
    return macs, slots, loads, stores


def _geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values))


def report(rows: list[dict]) -> str:
    lines = [
        "# The AI Engine back end on Vyasa's workloads (issue 17)",
        "",
        "Generated by `python scripts/aie_report.py`. There is no AI Engine here: MACs/cycle",
        "are the model's (`emit/aie_model.py`); intrinsics, loads, stores and the MAC-slot",
        "utilization are counted by the host emulation (`runtime/aie/pycc_aie.h`) running the",
        "emitted kernel once; *check* is `check --target aie` against the C built by cc.",
        "Workloads: `tests/corpus/aie/conv2d.c` (Table VI: output 256 x 16),",
        "`conv2d_layer.c` (Table VII: output 128 x 2 x 16 channels from 8 input channels) and",
        "`conv3d.c` (CONV3D: output 128 x 2 x 16, the paper's channel counts are not given),",
        "reduction loops unrolled. The tuner (`emit/aie_schedule.py`) tries every order of the",
        "output loops, the last one vectorized, the one before it unrolled and jammed by the",
        "rows per iteration, and packs on the host the arrays the vector loop does not walk",
        "along C's innermost dimension (*schedule*: the loops outermost first, the packed",
        "arrays' dimensions outermost first); the paper's vector loop is beside it.",
        "",
        "*make sim*: `pycc-stencil emit --target aie -o DIR` and the kernel's ADF graph",
        "testbench in DIR (`make run_FUNCTION`: the graph on the emulation, its data files,",
        "packed arrays packed by the host code, against the original C).",
        "",
        "| table | workload | type | check | make sim | schedule | vector loop (paper's) |"
        " rows x vectors an iteration (paper's y U&J) | MAC intrinsics | loads |"
        " stores | MAC-slot utilization (measured) | modelled MACs/cycle | % of peak |"
        " data memory |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        work, element = row["work"], row["element"]
        head = f"| {work.table} | {work.name} | {element} | {row['status']} |"
        if row["status"] == "refused":
            lines.append(f"{head} | {row['reason']} |||||||||")
            continue
        macs, slots, loads, stores = row["counts"]
        model = row["model"]
        memory = row["memory"]
        fits = "" if memory <= LOCAL_MEMORY else " (exceeds 128 KB)"
        plan = row["plan"]
        vector = plan.conv.loops[-1].name
        lines.append(
            f"{head} {row['sim']} | {plan.schedule()} | {vector} ({work.paper_vector}) | "
            f"{plan.rows} x {plan.vectors} ({work.paper_rows}) | {macs} | {loads} | {stores} | "
            f"{work.useful / slots:.1%} | {model.macs_per_cycle:.2f} | "
            f"{model.macs_per_cycle / PEAK[element]:.1%} | {memory} B{fits} |"
        )
    lines += [
        "",
        "| table | type | workloads | modelled geomean MACs/cycle | % of peak | paper (measured) |",
        "|---|---|---|---|---|---|",
    ]
    for table in ("VI", "VII", "CONV3D", "all"):
        for element in ("int32", "int16", "float"):
            values = [
                r["model"].macs_per_cycle
                for r in rows
                if r["element"] == element and "model" in r and table in ("all", r["work"].table)
            ]
            if not values:
                continue
            mean = _geomean(values)
            paper = PAPER_GEOMEAN.get((table, element))
            paper_text = f"{paper} ({paper / PEAK[element]:.1%})" if paper else "not evaluated"
            lines.append(
                f"| {table} | {element} | {len(values)} | {mean:.2f} | "
                f"{mean / PEAK[element]:.1%} | {paper_text} |"
            )
    compared = [r for r in rows if "plan" in r and r["work"].paper_vector != "-"]
    agree = [r for r in compared if r["plan"].conv.loops[-1].name == r["work"].paper_vector]
    lines += [
        "",
        f"The tuner vectorizes the paper's loop in {len(agree)} of {len(compared)} workloads "
        "where the paper says which (Tables VI and VII).",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=os.path.join(HERE, "..", "docs", "aie.md"))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="pycc-aie-") as scratch:
        for work in workloads():
            rows.append(run(work, scratch))
            print(f"{work.table} {work.name} {rows[-1]['element']}: {rows[-1]['status']}",
                  file=sys.stderr)  # fmt: skip
    text = report(rows)
    with open(args.output, "w") as handle:
        handle.write(text)
    print(text)
    good = all(r["status"] == "OK" and r["sim"] == "same" for r in rows if "plan" in r)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
