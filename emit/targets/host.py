"""The host x86-64: vector registers from the CPU features (the flags' `-march`/`-m` ISA in
compiler mode, LLVM's host CPU for the JIT), cycles from llvm-mca (`emit.x86_cost`), cache sizes
from Linux sysfs."""

from __future__ import annotations

import functools
from pathlib import Path

import llvmlite.binding as llvm
from llvmlite import ir

from ...ir_passes.core.target import Cost, Target, parse_size

_SYSFS = Path("/sys/devices/system/cpu/cpu0/cache")


class HostX86(Target):
    """x86-64 with the given CPU and LLVM feature string (`+avx2,+fma,...`)."""

    name = "host"

    def __init__(self, cpu: str | None = None, features: str | None = None):
        self.cpu = cpu or llvm.get_host_cpu_name()
        self.features = features if features is not None else _host_features()
        self.triple = llvm.get_process_triple()

    @property
    def data_layout(self) -> str:
        from ..host_jit import host_target_machine

        return str(host_target_machine().target_data)

    @property
    def vector_bytes(self) -> int:
        enabled = {f[1:] for f in self.features.split(",") if f.startswith("+")}
        # 256 bits even with AVX-512: what gcc and LLVM prefer by default (no frequency drop)
        return 32 if "avx" in enabled else 16  # SSE2 is part of x86-64

    def neighbour_costs(self, vector_size: int) -> tuple[float, float]:
        """2 load ports; a shift across a 256-bit vector takes 2 port-5 shuffles (vperm2f128 +
        vpalignr), across 128 bits one (palignr)."""
        return 0.5, 2.0 if vector_size > 16 else 1.0

    def loop_costs(self, module: ir.Module, iterations_per_trip: int) -> dict[str, Cost]:
        from ..x86_cost import host_loops

        return {
            name: Cost(
                ii=loop.cycles / iterations_per_trip,
                registers=loop.registers,
                pipelined=None,
                instructions=loop.instructions,
                registers_exceeded=loop.spills > 0,
            )
            for name, loop in host_loops(module).items()
        }

    def original_loop_cycles(self, module: ir.Module, steps: dict[str, int]) -> dict[str, float]:
        from ..x86_cost import as_built

        return as_built(module, steps)

    def measured_cache_bytes(self, level: int) -> int:
        return _sysfs_cache_bytes(level) or super().measured_cache_bytes(level)

    def describe(self) -> str:
        return f"host {self.triple} ({self.cpu}, {self.vector_bytes}-byte vectors)"


@functools.cache
def _host_features() -> str:
    return llvm.get_host_cpu_features().flatten()


@functools.cache
def _sysfs_cache_bytes(level: int) -> int | None:
    """The data (or unified) cache size of `level` of CPU 0, as Linux reports it."""
    try:
        for index in sorted(_SYSFS.glob("index*")):
            kind = (index / "type").read_text().strip()
            if int((index / "level").read_text()) == level and kind in ("Data", "Unified"):
                return parse_size((index / "size").read_text())
    except (OSError, ValueError):
        pass
    return None
