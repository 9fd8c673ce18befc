"""An AMD/Xilinx AI Engine, AIE1 (`--target aie`): convolution nests of C become kernels in
the AIE intrinsic style (Vyasa, CGO'23: `emit.aie_convolution`, `emit.aie_kernel`). There is
no AI Engine here: the kernels are compiled for the host with c++ against the emulation of
the intrinsics (runtime/aie/pycc_aie.h) and checked bit for bit."""

from __future__ import annotations

from llvmlite import ir

from ...ir_passes.core.copying import fresh_copy
from ...ir_passes.core.target import Target
from ...ir_passes.pipeline import parse_pipeline, run_passes
from ...ir_passes.registry import PassContext
from ..aie_convolution import NotAConvolution, convolution
from ..aie_model import LOCAL_MEMORY, estimate
from ..aie_schedule import kernel_plan


class Aie(Target):
    name = "aie"
    #: Vyasa unrolls the reduction loops first; the kernel writer does the rest
    default_passes = "unroll-reductions"
    cache_tiling = False
    #: srs saturates each output where C's conversion wraps: with inputs in [-8, 8] a sum of up
    #: to 512 taps fits int16 (the saturation itself is tested on its own)
    integer_inputs = (-8, 8)

    def __init__(self, style: str = "intrinsics"):
        """`style=intrinsics` (mac16, lmac8, fpmac: Vyasa's) or `style=api` (the AI Engine
        API: aie::vector, aie::accum, aie::sliding_mul_ops)."""
        if style not in ("intrinsics", "api"):
            raise ValueError(f"style={style}: expected intrinsics or api")
        self.c_dialect = "aie" if style == "intrinsics" else "aie-api"

    @property
    def vector_bytes(self) -> int:
        return 32  # a 256-bit load or store

    def neighbour_costs(self, vector_size: int) -> tuple[float, float]:
        return 1.0, 1.0  # the shuffle network selects neighbours within a MAC: no shifts

    def describe(self) -> str:
        return "AMD/Xilinx AI Engine, AIE1 (intrinsic C++; emulated on this host)"

    def c_tiling(self, module: ir.Module, remarks: list) -> dict[str, object]:
        """Nothing is tiled; the remarks say what each function becomes: its datapath, rows
        per iteration, MAC-slot use and modelled MACs/cycle, and whether its arrays fit the
        tile's data memory (on a copy, with its reductions unrolled as the pipeline will)."""
        context = PassContext("aie-kernel", remarks)
        copy = run_passes(fresh_copy(module), parse_pipeline(self.default_passes)).module
        for function in copy.functions:
            if not function.blocks:
                continue
            try:
                plan = kernel_plan(convolution(function))
            except NotAConvolution as exc:
                context.missed(f"not an AI Engine kernel: {exc}", at=function)
                continue
            model, memory = estimate(plan), sum(plan.buffer_bytes().values())
            path = plan.path
            context.passed(
                f"AI Engine kernel: {plan.schedule()}; {path.lanes} lanes x {path.columns} column"
                f"{'s' if path.columns > 1 else ''} of {plan.conv.element}, {plan.rows} x "
                f"{plan.vectors} output vectors (rows x along a row) per iteration, "
                f"{model.utilization:.0%} of the MAC slots are taps, modelled "
                f"{model.macs_per_cycle:.2f} MACs/cycle "
                f"({model.macs_per_cycle / model.peak:.0%} of peak)",
                at=function,
            )
            if memory > LOCAL_MEMORY:
                context.missed(
                    f"its arrays need {memory} bytes, more than the tile's {LOCAL_MEMORY} bytes "
                    "of data memory: the kernel cannot run on one AI Engine as written",
                    at=function,
                )
        return {}
