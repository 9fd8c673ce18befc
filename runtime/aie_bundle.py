"""`emit --target aie -o DIR`: the AI Engine kernels as a directory a user builds: the kernel
C++ (each kernel also behind ADF buffer ports), an ADF graph per kernel with the `main` the
AIE tools' simulators run, a host testbench per kernel, the emulation headers, and a Makefile
that builds the kernels and runs the testbenches on this machine against the emulation
(what `check --target aie` runs, here through the graph and its data files). With AMD's
Vitis AIE tools the same kernel and graph files compile as they are (the AIE compiler defines
`__AIENGINE__`: pycc_aie.h and the glue then include <adf.h>)."""

from __future__ import annotations

import os
import re

from ..emit.aie_glue import graph_header, graph_main, testbench, wrapper
from .emitted import HEADER_DIRS, STRICT_FLAGS

_MAKEFILE = """\
# {stem}: AI Engine (AIE1) kernels built from {source} by `pycc-stencil emit --target aie`.
#
#   make host   lib{stem}.a for this machine: c++ against pycc_aie.h, the emulation of the
#               AIE intrinsics the kernels use (counted, alignment-checked loads and stores)
#   make sim    each kernel's ADF graph run on this machine (pycc_adf.h emulates the graph
#               API): its testbench writes data/*.txt, runs the graph and compares its
#               outputs with the original C ({original}); prints "same"{no_glue}
#   make clean
#
# With the Vitis AIE tools: aiecompiler --target=hw {graphs} (the graph's source(k) is
# {stem}.cc; the AIE compiler defines __AIENGINE__, and the headers then include <adf.h>).

CC ?= cc
CXX ?= c++
AR ?= ar
CXXFLAGS ?= -std=c++17 {flags}
ORIGINAL ?= {original}
ORIGINAL_FLAGS ?= {original_flags}

.PHONY: host sim clean

host: host/lib{stem}.a

host/lib{stem}.a: host/{stem}.o
\t$(AR) rcs $@ $^

host/{stem}.o: {stem}.cc pycc_aie.h pycc_aie_api.h pycc_adf.h
\tmkdir -p host
\t$(CXX) $(CXXFLAGS) -I. -c {stem}.cc -o $@

sim:{testbenches}
{no_glue_echo}{sim_rules}
clean:
\trm -rf host data
"""

_SIM_RULE = """
sim/tb_{function}: tb_{function}.cc {function}_graph.h host/{stem}.o $(ORIGINAL)
\tmkdir -p sim data
\t$(CC) -std=c99 $(ORIGINAL_FLAGS) -ffp-contract=off {renames} \\
\t\t-c $(ORIGINAL) -o sim/original_{function}.o
\t$(CXX) $(CXXFLAGS) -I. tb_{function}.cc host/{stem}.o sim/original_{function}.o -o $@

run_{function}: sim/tb_{function}
\t./sim/tb_{function}
"""


def aie_bundle_files(
    stem: str, source: str, text: str, ports: dict, cflags: list[str]
) -> dict[str, bytes]:
    """{file name: content} of the directory for the kernels' C++ `text` (`source`: the C
    file, `cflags` its flags; `ports`: each kernel's buffer ports, or why it has none)."""
    stem = re.sub(r"[^A-Za-z0-9_.+-]", "_", stem) or "kernel"
    if stem in ("pycc_aie", "pycc_adf"):
        stem = f"kernel_{stem}"
    glued = {name: found for name, found in ports.items() if isinstance(found, list)}
    files: dict[str, bytes] = {}
    for function, found in glued.items():
        text += wrapper(function, found)
        files[f"{function}_graph.h"] = graph_header(stem, function, found).encode()
        files[f"{function}_graph.cpp"] = graph_main(function).encode()
        files[f"tb_{function}.cc"] = testbench(function, found).encode()
    files[f"{stem}.cc"] = text.encode()
    for header in ("pycc_aie.h", "pycc_aie_api.h", "pycc_adf.h"):
        files[header] = (HEADER_DIRS["aie"] / header).read_bytes()
    unglued = {name: why for name, why in ports.items() if not isinstance(why, list)}
    no_glue = "".join(f"\n#               ({name}: {why})" for name, why in unglued.items())
    # the original C defines every kernel the kernel file defines: all renamed
    renames = " ".join(f"-D{name}=pycc_original_{name}" for name in ports)
    makefile = _MAKEFILE.format(
        stem=stem,
        source=os.path.basename(source),
        original=source,
        original_flags=" ".join(cflags),
        flags=" ".join(f for f in STRICT_FLAGS if not f.startswith("-std=")),
        graphs=" ".join(f"{f}_graph.cpp" for f in glued) or "(no graph)",
        testbenches="".join(f" run_{f}" for f in glued),
        sim_rules="".join(_SIM_RULE.format(stem=stem, function=f, renames=renames) for f in glued),
        no_glue=no_glue,
        no_glue_echo="".join(f"\t@echo '{name}: {why}'\n" for name, why in unglued.items()),
    )
    files["Makefile"] = makefile.encode()
    return files
