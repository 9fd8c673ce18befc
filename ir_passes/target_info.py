"""The vector width a pass should aim for on the module's target.

SIMD binding and the strategy search need "how many bytes does one vector register hold" on the
machine the code is for. That is a property of the target, not of the IR: the module's triple
names the architecture, and for x86 the ISA extensions come from whoever knows the target (the
compiler mode sets them from `cc`'s flags with `set_cpu_features`; the JIT harness runs on the
host, whose features LLVM reports).
"""

from __future__ import annotations

from llvmlite import binding as llvm
from llvmlite import ir

#: C66x: 64-bit load/store units, 2-wide single-precision SIMD (DADDSP, DMPYSP)
C66X_VECTOR_BYTES = 8
#: Hexagon HVX in 128-byte mode
HEXAGON_VECTOR_BYTES = 128


def set_cpu_features(module: ir.Module, features: str) -> None:
    """Record the LLVM feature string (`+avx2,+fma,...`) of the CPU the module is built for."""
    module.pycc_cpu_features = features


def _x86_vector_bytes(features: str) -> int:
    enabled = {f[1:] for f in features.split(",") if f.startswith("+")}
    # 256 bits even with AVX-512: what gcc and LLVM prefer by default (no frequency drop)
    if "avx" in enabled:
        return 32
    return 16  # SSE2 is part of x86-64


def vector_bytes(module: ir.Module) -> int:
    """Bytes per vector register on the module's target."""
    triple = (module.triple or "").lower()
    if triple.startswith("hexagon"):
        return HEXAGON_VECTOR_BYTES
    if triple.startswith(("c6000", "tic6x", "c66x")):
        return C66X_VECTOR_BYTES
    features = getattr(module, "pycc_cpu_features", None)
    if features is None:
        features = llvm.get_host_cpu_features().flatten()
    return _x86_vector_bytes(features)


def neighbour_costs(module: ir.Module, vector_size: int) -> tuple[float, float]:
    """(cost of a vector load, cost of a two-source element shift) in issue slots, for SIMD
    binding's choice between one unaligned load per neighbour offset and loads on a grid +
    shuffles. x86: 2 load ports, and a shift across a 256-bit vector takes 2 port-5 shuffles
    (vperm2f128 + vpalignr), across 128 bits one (palignr); Hexagon HVX: one vector load per
    packet, `valign` in one of 2 permute/shift slots; C66x: 2 .D units, and a pair of 32-bit
    registers is re-paired by any of the 4 .L/.S units."""
    triple = (module.triple or "").lower()
    if triple.startswith("hexagon"):
        return 1.0, 0.5
    if triple.startswith(("c6000", "tic6x", "c66x")):
        return 0.5, 0.25
    return 0.5, 2.0 if vector_size > 16 else 1.0
