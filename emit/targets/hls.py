"""An FPGA through HLS (`--target hls`): each perfect loop nest becomes an HLS C kernel with
on-chip stencil caches and `ship` data movement (IMPACT'24; `emit.hls_kernel`), in Vitis
HLS's conventions. There is no FPGA here: the kernels are compiled for the host against the
plain-C ship runtime and checked bit for bit (C simulation)."""

from __future__ import annotations

from llvmlite import ir

from ...ir_passes.core.analyses import loops_of
from ...ir_passes.core.target import Target
from ...ir_passes.registry import PassContext
from ...polyhedral.hls_buffers import NotPlannable
from ..hls_kernel import HlsOptions, hls_kernel


def _switch(value: str, name: str) -> bool:
    if value not in ("on", "off"):
        raise ValueError(f"{name}={value}: expected on or off")
    return value == "on"


def _numbers(value: str, name: str) -> tuple[int, ...] | None:
    """`32x32` as (32, 32); "" as None."""
    if not value:
        return None
    try:
        numbers = tuple(int(v) for v in value.split("x"))
    except ValueError:
        raise ValueError(f"{name}={value}: expected numbers joined by x, such as 32x32") from None
    return numbers


class Hls(Target):
    name = "hls"
    c_dialect = "hls"
    #: the kernels are planned on the front end's IR, as written
    default_passes = ""
    cache_tiling = False

    def __init__(
        self,
        tile: str = "",
        order: str = "",
        burst: int | str = 1,
        padding: str = "on",
        fusion: str = "on",
        synthesis: str = "off",
    ):
        """`tile=SZ1xSZ2...` (default: the paper's large tiles by depth), `order=0x1...`
        (the intra-tile loops, outermost first, by their original position; default: the
        order of fewest on-chip words), `burst=W` (elements per DDR burst word: 1, 2, 4, 8,
        16), `padding=off` (keep `min` in the innermost loop), `fusion=off`; `synthesis=on`
        builds (`check`) the code Vitis synthesizes (`__SYNTHESIS__`: typed ship loops)
        instead of the C simulation's."""
        self.synthesis = _switch(synthesis, "synthesis")
        sizes = _numbers(tile, "tile")
        if sizes is not None and min(sizes) < 1:
            raise ValueError(f"tile={tile}: tile sizes are positive")
        try:
            width = int(burst)
        except ValueError:
            raise ValueError(f"burst={burst}: expected 1, 2, 4, 8 or 16") from None
        if width not in (1, 2, 4, 8, 16):
            raise ValueError(f"burst={burst}: expected 1, 2, 4, 8 or 16")
        self.options = HlsOptions(
            sizes, _numbers(order, "order"), width, _switch(padding, "padding"),
            _switch(fusion, "fusion"),
        )  # fmt: skip

    def runtime_defines(self) -> list[str]:
        return ["-D__SYNTHESIS__"] if self.synthesis else []

    @property
    def vector_bytes(self) -> int:
        return 4  # the HLS tool unrolls; no SIMD binding here

    def neighbour_costs(self, vector_size: int) -> tuple[float, float]:
        return 1.0, 1.0

    def describe(self) -> str:
        return "FPGA through HLS (Vitis conventions; C simulation on this host)"

    def c_tiling(self, module: ir.Module, remarks: list) -> dict[str, object]:
        """Every function that is one perfect loop nest, with the remark of its buffers."""
        context = PassContext("hls-buffers", remarks)
        found: dict[str, object] = {}
        for function in module.functions:
            if not function.blocks or not loops_of(function).loops:
                continue
            try:
                kernel = hls_kernel(function, self.options)
            except NotPlannable as exc:
                context.missed(f"not tiled for the FPGA: {exc}", at=function)
                continue
            for tiled in kernel.nests():
                at = tiled.nest.statements[0].block.terminator
                context.passed(self._described(tiled), at=at)
            found[function.name] = self.options
        return found

    def _described(self, tiled) -> str:
        """The remark of a tiled nest: its tiles, order, buffers, and what of the options it
        could not take (a shallower nest takes the innermost tile sizes; an order of another
        length is not its own; rows that are no multiple of the burst keep w = 1)."""
        plan, options, depth = tiled.plan, self.options, tiled.nest.depth
        # the source's names of the loops (the model's are made unique: `i_2`)
        phis = tiled.nest.statements[0].phis[len(tiled.nest.outer) :]
        names = [
            phi.name.split(".")[0] or iterator for phi, iterator in zip(phis, tiled.nest.iterators)
        ]
        order = ",".join(names[x] for x in plan.order)
        text = (
            f"tiled {'x'.join(map(str, plan.sizes))} for the FPGA, intra-tile order ({order}): "
            f"{'; '.join(b.describe() for b in plan.buffers)} ({plan.words} on-chip words)"
        )
        notes = []
        if options.sizes is not None and len(options.sizes) > depth:
            notes.append(f"a nest of {depth} loops takes the innermost {depth} tile sizes")
        if options.order is not None and len(options.order) != depth:
            notes.append(f"order= names {len(options.order)} loops, not this nest's {depth}")
        narrow = sorted(
            {b.array for b in plan.buffers if b.kind != "nc" and b.burst < options.burst}
        )
        if narrow:
            notes.append(
                f"{', '.join(narrow)}: rows not a multiple of {options.burst} elements (or of "
                "run-time length), shipped with w = 1"
            )
        return text + "".join(f"; {note}" for note in notes)
