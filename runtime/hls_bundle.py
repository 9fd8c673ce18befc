"""An FPGA kernel as a directory a user builds (`emit --target hls -o DIR`): the HLS C, the
ship runtime, a testbench against the original C where one can be written, a Makefile for
the C simulation (`make csim`: cc and c++, the sanitizers) and a Vitis HLS script (`make
hls`, for users who have Vitis). Written by `target_bundle.write_bundle`."""

from __future__ import annotations

import os
import re
import shlex

from ..frontend.signature import FunctionInfo
from .emitted import DIALECT_FLAGS, HEADER_DIRS, STRICT_FLAGS, VENDOR_QUIET
from .hls_testbench import testbench
from .hls_vendor import ap_types_dir

_MAKEFILE = """\
# {stem}: built from {source} by `pycc-stencil emit --target hls`.
#
#   make csim   the C simulation, as Vitis HLS runs one with the pragmas ignored: the kernel
#               built as C and as C++;{testbench_line}
#   make hls    C synthesis of {top} with Vitis HLS (vitis_hls on PATH): {stem}.tcl
#   make clean

CC ?= cc
CXX ?= c++
CFLAGS ?= {c_flags}
CXXFLAGS ?= -std=c++11 -Wall -Wextra -Werror -Wno-unknown-pragmas -O2 -ffp-contract=off
SANITIZE ?= -fsanitize=address,undefined -fno-sanitize-recover=all -g -O1
VITIS_HLS ?= vitis_hls
# Vitis HLS's ap_int.h, for the C++ build to move DDR rows as ap_uint words of {burst}
# elements, as the kernel was planned (hls4ml's templates/vivado/ap_types, or Vitis's
# include directory); empty: the plain C form of the ships
AP_TYPES ?= {ap_types}
WIDE = $(if $(AP_TYPES),-isystem $(AP_TYPES) -DPYCC_SHIP_BURST={burst} {quiet})
# the original C and the flags it was emitted with (its testbench's reference)
ORIGINAL ?= {original}
ORIGINAL_FLAGS ?= {original_flags}

.PHONY: csim hls clean

csim: csim/{stem}.o csim/{stem}.cpp.o{testbench_target}
{testbench_rules}
csim/{stem}.o: {stem}.c pycc_ship.h
\tmkdir -p csim
\t$(CC) $(CFLAGS) -I. -c {stem}.c -o $@

csim/{stem}.cpp.o: {stem}.c pycc_ship.h
\tmkdir -p csim
\t$(CXX) $(CXXFLAGS) $(WIDE) -I. -x c++ -c {stem}.c -o $@

hls: {stem}.tcl {stem}.c pycc_ship.h
\t$(VITIS_HLS) -f {stem}.tcl

clean:
\trm -rf csim {stem}_hls
"""

_TESTBENCH_RULES = """
csim/tb_{stem}: {stem}.c tb_{stem}.c pycc_ship.h $(ORIGINAL)
\tmkdir -p csim
\t$(CC) -std=c99 $(ORIGINAL_FLAGS) $(SANITIZE) -ffp-contract=off {renames} \\
\t\t-c $(ORIGINAL) -o csim/original.o
\t$(CXX) -std=c++14 -Wno-unknown-pragmas -ffp-contract=off $(SANITIZE) $(WIDE) -I. -x c++ \\
\t\t-c {stem}.c -o csim/kernel.o
\t$(CC) -std=c99 $(SANITIZE) -c tb_{stem}.c -o csim/tb.o
\t$(CXX) $(SANITIZE) csim/kernel.o csim/tb.o csim/original.o -o $@ -lm

csim/tb_{stem}_synthesis: {stem}.c tb_{stem}.c pycc_ship.h csim/tb_{stem}
\t$(CC) -std=c99 -Wno-unknown-pragmas -ffp-contract=off $(SANITIZE) -D__SYNTHESIS__ -I. \\
\t\t{stem}.c tb_{stem}.c csim/original.o -o $@ -lm

run-tb: csim/tb_{stem} csim/tb_{stem}_synthesis
\t./csim/tb_{stem}
\t./csim/tb_{stem}_synthesis
"""

_TCL = """\
# {stem}.tcl: by pycc-stencil emit --target hls (Vitis HLS: vitis_hls -f {stem}.tcl)
open_project {stem}_hls
set_top {top}
add_files {stem}.c -cflags "-I. -Wno-unknown-pragmas"
{testbench_tcl}open_solution solution1 -flow_target vitis
set_part {{xcvu9p-flga2104-2L-e}}
create_clock -period 20 -name default
{csim}csynth_design
exit
"""


def hls_bundle_files(
    stem: str,
    source: str,
    text: str,
    cflags: list[str],
    kernels: list[FunctionInfo],
    burst: int = 1,
    defined: list[str] = (),
) -> dict[str, bytes]:
    """{file name: content} of the bundle for the HLS C `text` made from `source` (with the
    preprocessor flags `cflags`); `kernels`: the functions written as FPGA kernels (the
    first is the top function and gets the testbench); `burst`: their DDR words' width;
    `defined`: the functions with external linkage both files define (the original's are
    renamed `NAME_original` in the testbench's build)."""
    stem = re.sub(r"[^A-Za-z0-9_.+-]", "_", stem) or "kernel"
    if stem in ("pycc_ship", "Makefile") or stem.startswith("tb_"):
        stem = f"kernel_{stem}"
    files = {f"{stem}.c": text.encode()}
    files["pycc_ship.h"] = (HEADER_DIRS["hls"] / "pycc_ship.h").read_bytes()
    top = kernels[0].name if kernels else "kernel"
    bench = testbench(kernels[0], stem, os.path.basename(source)) if kernels else None
    if bench is not None:
        files[f"tb_{stem}.c"] = bench.encode()
    original_flags = [f for f in cflags if f.startswith(("-D", "-U", "-I", "-std", "-include"))]
    renames = " ".join(f"-D{name}={name}_original" for name in sorted({top, *defined}))
    makefile = _MAKEFILE.format(
        stem=stem,
        source=os.path.basename(source),
        top=top,
        c_flags=" ".join([*STRICT_FLAGS, *DIALECT_FLAGS["hls"]]),
        original=shlex.quote(os.path.abspath(source)),
        original_flags=" ".join(shlex.quote(f) for f in original_flags),
        testbench_line=(
            f"\n#               then tb_{stem}.c runs it (C++, the ships in ap_uint words when"
            "\n#               AP_TYPES is set) and the original C ($(ORIGINAL)) under"
            "\n#               AddressSanitizer and UBSan and prints `same` when every array"
            "\n#               is the original's, bit for bit; then the code Vitis synthesizes"
            "\n#               (-D__SYNTHESIS__: the ships as typed loops) the same way"
            if bench is not None
            else "\n#               (no testbench: the kernel's sizes are not constants; "
            "`pycc-stencil check\n#               --target hls` compares it with the original)"
        ),
        testbench_target=" run-tb" if bench is not None else "",
        burst=burst,
        ap_types=shlex.quote(str(ap_types_dir())) if burst > 1 and ap_types_dir() else "",
        quiet=" ".join(VENDOR_QUIET),
        testbench_rules=(
            _TESTBENCH_RULES.format(stem=stem, renames=renames) if bench is not None else ""
        ),
    )
    files["Makefile"] = makefile.encode()
    files[f"{stem}.tcl"] = _TCL.format(
        stem=stem,
        top=top,
        testbench_tcl=(
            f"add_files -tb tb_{stem}.c\nadd_files -tb {shlex.quote(os.path.abspath(source))} "
            f'-cflags "{renames} {" ".join(original_flags)}"\n'
            if bench is not None
            else ""
        ),
        csim="csim_design\n" if bench is not None else "",
    ).encode()
    return files
