"""TI C66x DSP: 64-bit load/store units, 2-wide single-precision SIMD (DADDSP, DMPYSP); LLVM
has no C6000 back end, so loops are costed by the documented resource model
(`emit.c66x_model`, calibrated on Table 5.1 of the C66x dissertation)."""

from __future__ import annotations

from llvmlite import ir

from ...ir_passes.core.alignment import row_alignment
from ...ir_passes.core.machine_model import parse_size
from ...ir_passes.core.target import Cost, Target
from ...ir_passes.registry import PassContext
from .. import c66x_model
from ..c66x_tiling import tiled_kernels

#: a C6678 core's L2 (configurable as SRAM or cache)
L2_BYTES = 512 * 1024
#: of which tile buffers get 384 KiB by default, the rest left to the program (stack, data)
TILE_BUFFER_BYTES = 384 * 1024


class C66x(Target):
    name = "c66x"
    c_dialect = "c66x"
    #: unroll and SIMD width chosen per kernel by the C66x model (Table 5.1's search), then
    #: the alignment facts that pick LDDW over LDNDW
    default_passes = "auto,align"
    #: image kernels are tiled into L2 SRAM by the back end (emit.c66x_tiling), not for caches
    cache_tiling = False

    @property
    def vector_bytes(self) -> int:
        return 8

    def __init__(self, l2: int | str = TILE_BUFFER_BYTES):
        """`l2`: the L2 SRAM given to tile buffers (`--target c66x:l2=256K`)."""
        try:
            self.l2_bytes = parse_size(l2) if isinstance(l2, str) else l2
        except ValueError:
            raise ValueError(f"l2={l2}: expected a size such as 256K") from None
        if not 0 < self.l2_bytes <= L2_BYTES:
            raise ValueError(f"l2={l2}: the tile buffers need 1 byte to {L2_BYTES // 1024}K")

    def runtime_defines(self) -> list[str]:
        return [f"-DPYCC_SPM_BYTES={self.l2_bytes}"]

    def describe(self) -> str:
        return f"{super().describe()}, {self.l2_bytes // 1024} KiB of L2 SRAM for tiles"

    def c_tiling(self, module: ir.Module, remarks: list) -> dict[str, object]:
        """The image kernels, run out of L2 SRAM tile by tile, double-buffered by the EDMA."""
        aligned = {}
        for function in module.functions:
            declared = row_alignment(function) if function.blocks else None
            if declared:
                aligned[function.name] = declared
        context = PassContext("edma-tiles", remarks)
        return dict(tiled_kernels(module, self.l2_bytes, aligned, context))

    def neighbour_costs(self, vector_size: int) -> tuple[float, float]:
        """2 .D units; a pair of 32-bit registers is re-paired by any of the 4 .L/.S units."""
        return 0.5, 0.25

    def loop_costs(self, module: ir.Module, iterations_per_trip: int) -> dict[str, Cost]:
        return {
            name: Cost(
                ii=loop.cycles / iterations_per_trip,
                registers=loop.registers,
                pipelined=loop.pipelined,
                instructions=loop.instructions,
                registers_exceeded=loop.registers > c66x_model.REGISTER_LIMIT,
            )
            for name, loop in c66x_model.c66x_loops(module).items()
        }
