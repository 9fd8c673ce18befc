"""`emit --target aie -o DIR`: the AI Engine kernels as a directory a user builds: the kernel
C++, the emulation header, and a Makefile that builds them for this machine against it (what
`check --target aie` runs). With AMD's Vitis AIE tools the same kernel file compiles as it is
(the AIE compiler defines `__AIENGINE__`, and pycc_aie.h then includes <adf.h>)."""

from __future__ import annotations

import re

from .emitted import HEADER_DIRS, STRICT_FLAGS

_MAKEFILE = """\
# {stem}: AI Engine (AIE1) kernels built from {source} by `pycc-stencil emit --target aie`.
#
#   make host   lib{stem}.a for this machine: c++ against pycc_aie.h, the emulation of the
#               AIE intrinsics the kernels use (counted, alignment-checked loads and stores)
#   make clean
#
# With the Vitis AIE tools, {stem}.cc is a kernel source as it is: the AIE compiler defines
# __AIENGINE__, and pycc_aie.h then includes <adf.h> (name it in an ADF graph's
# `source(k) = "{stem}.cc"`).

CXX ?= c++
AR ?= ar
CXXFLAGS ?= -std=c++14 {flags}

.PHONY: host clean

host: host/lib{stem}.a

host/lib{stem}.a: host/{stem}.o
\t$(AR) rcs $@ $^

host/{stem}.o: {stem}.cc pycc_aie.h
\tmkdir -p host
\t$(CXX) $(CXXFLAGS) -I. -c {stem}.cc -o $@

clean:
\trm -rf host
"""


def aie_bundle_files(stem: str, source_name: str, text: str) -> dict[str, bytes]:
    """{file name: content} of the directory for the kernels' C++ `text`."""
    stem = re.sub(r"[^A-Za-z0-9_.+-]", "_", stem) or "kernel"
    if stem == "pycc_aie":
        stem = "kernel_pycc_aie"
    header = HEADER_DIRS["aie"] / "pycc_aie.h"
    flags = " ".join(f for f in STRICT_FLAGS if not f.startswith("-std="))
    makefile = _MAKEFILE.format(stem=stem, source=source_name, flags=flags)
    return {
        f"{stem}.cc": text.encode(),
        header.name: header.read_bytes(),
        "Makefile": makefile.encode(),
    }
