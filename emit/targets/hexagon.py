"""Hexagon v68 with 128-byte HVX: LLVM's Hexagon back end is the VLIW oracle (`emit.hexagon`:
packets per iteration, registers, the MachinePipeliner's verdict)."""

from __future__ import annotations

from llvmlite import ir

from ...ir_passes.core.target import Cost, Target
from .. import hexagon


class HexagonHVX(Target):
    name = "hexagon"
    triple = hexagon.TRIPLE

    @property
    def data_layout(self) -> str:
        return str(hexagon.target_machine().target_data)

    @property
    def vector_bytes(self) -> int:
        return hexagon.VECTOR_BYTES

    def neighbour_costs(self, vector_size: int) -> tuple[float, float]:
        """One vector load per packet; `valign` in one of 2 permute/shift slots."""
        return 1.0, 0.5

    def vector_widths(self, element_bytes: int) -> list[int]:
        """The full HVX register and the smaller powers of two."""
        widths = super().vector_widths(element_bytes)
        return widths + [w for w in (16, 8, 4, 2) if w < widths[-1]]

    def loop_costs(self, module: ir.Module, iterations_per_trip: int) -> dict[str, Cost]:
        return {
            name: Cost(
                ii=loop.packets / iterations_per_trip,
                registers=loop.registers + loop.vector_registers,
                pipelined=loop.pipelined,
                instructions=loop.instructions,
                registers_exceeded=loop.registers_exceeded,
            )
            for name, loop in hexagon.hexagon_loops(module).items()
        }
