"""The host x86-64: vector registers from the CPU features (the flags' `-march`/`-m` ISA in
compiler mode, LLVM's host CPU for the JIT), cycles from llvm-mca (`emit.x86_cost`), cache sizes
from the model compiler mode's flags select (`emit.cc_machine`) or, for the JIT, which runs
code on this machine, from Linux sysfs. The JIT runs parallel loops on the private pool,
compiler mode as its flags say."""

from __future__ import annotations

import functools

import llvmlite.binding as llvm
from llvmlite import ir

from ...ir_passes.core.machine_model import POOL, streaming_stores_pay
from ...ir_passes.core.target import Cost, Target
from ..cc_machine import sysfs_cache_bytes
from ..vector_width import enabled_features

#: the body size (value-computing instructions, `simd._value_operations`) below which a
#: vector loop interleaves: chosen so the bench kernels get the interleave counts LLVM's
#: vectorizer gives them on an AVX-512 Xeon (4 for matrix_add's 6 and the 1x3 mean
#: filter's 12, 2 for Jacobi's 14, 1 for Sobel's 29 and the 7-tap Gaussian's 32) but for the
#: 3x3 mean filter (24: 2 here, 1 in LLVM), which measured faster with 2 (docs/simd_benchmarks.md)
SMALL_LOOP_OPERATIONS = 48
#: LLVM's largest interleave count for x86 with AVX
MAX_INTERLEAVE = 4
#: an x86 cache line
CACHE_LINE_BYTES = 64


class HostX86(Target):
    """x86-64 with the given CPU and LLVM feature string (`+avx2,+fma,...`)."""

    name = "host"

    def __init__(
        self,
        cpu: str | None = None,
        features: str | None = None,
        caches: dict[int, int] | None = None,
        parallel_runtime: str = POOL,
        parallel_team: int = 0,
    ):
        """`caches`: cache sizes by level (None: this machine's, from sysfs)."""
        self.cpu = cpu or llvm.get_host_cpu_name()
        self.features = features if features is not None else _host_features()
        self.triple = llvm.get_process_triple()
        self.caches = caches
        self.parallel_runtime = parallel_runtime
        self.parallel_team = parallel_team

    @property
    def data_layout(self) -> str:
        from ..host_jit import host_target_machine

        return str(host_target_machine().target_data)

    @property
    def vector_bytes(self) -> int:
        enabled = enabled_features(self.features)
        # 256 bits even with AVX-512 (see `simd_lanes`), 128 where the flags ask
        if "prefer-128-bit" in enabled:
            return 16
        return 32 if "avx" in enabled else 16  # SSE2 is part of x86-64

    def simd_lanes(self, element_bytes: int) -> int:
        """512-bit vectors of elements of 4 bytes or more where the ISA has AVX-512 and the
        flags do not ask for narrower ones (as LLVM's vectorizers, `emit.vector_width`), else
        `vector_bytes`' 256 bits. Measured on an AVX-512 Xeon (docs/simd_benchmarks.md):
        512 bits won on the float kernels (Harris 1.2x, Jacobi and LucasKanade 1.15-1.2x the
        256-bit binding) and lost on the int16 and uint8 ones, whose arithmetic in `int`
        then spans 2-4 registers per vector and whose remainder grows. Doubles follow the
        floats (as in LLVM's choice) without a measurement of their own."""
        enabled = enabled_features(self.features)
        wide = "avx512f" in enabled and not enabled & {"prefer-128-bit", "prefer-256-bit"}
        if wide and element_bytes >= 4:
            return 64 // element_bytes
        return super().simd_lanes(element_bytes)

    def store_alignment(self, vector_bytes: int) -> int:
        """A cache line where every unaligned store of `vector_bytes` splits one (512-bit
        vectors): Sobel's two rows of floats ran 1.6-1.7x faster with their stores aligned
        (docs/simd_benchmarks.md); narrower stores split one time in two or less."""
        return CACHE_LINE_BYTES if vector_bytes >= CACHE_LINE_BYTES else 0

    def streaming_stores(self, vector_bytes: int) -> bool:
        """SSE's and AVX's aligned non-temporal stores (`movntps` and its wider forms)."""
        return vector_bytes >= 16

    def streaming_stores_pay(self) -> bool:
        """On every named core but AMD's (`machine_model.streaming_stores_pay`)."""
        return streaming_stores_pay(self.cpu)

    def simd_interleave(self, operations: int) -> int:
        """Small bodies run several vectors per iteration, as LLVM's vectorizer interleaves
        small loops (at most 4 on x86): the largest power of two up to
        SMALL_LOOP_OPERATIONS / operations, between 1 and MAX_INTERLEAVE."""
        count = 1
        while count < MAX_INTERLEAVE and 2 * count * operations <= SMALL_LOOP_OPERATIONS:
            count *= 2
        return count

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
        if self.caches is not None and level in self.caches:
            return self.caches[level]
        return sysfs_cache_bytes(level) or super().measured_cache_bytes(level)

    def tile_key(self) -> str:
        """The CPU, the width of its vectors of doubles and the L1 and L2 the flags imply."""
        return (
            f"{self.cpu}, {self.simd_lanes(8) * 64}-bit vectors, L1 {self.cache_bytes(1)}, "
            f"L2 {self.cache_bytes(2)}"
        )

    def describe(self) -> str:
        return f"host {self.triple} ({self.cpu}, {self.vector_bytes}-byte vectors)"


@functools.cache
def _host_features() -> str:
    return llvm.get_host_cpu_features().flatten()
