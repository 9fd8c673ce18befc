"""An AMD/Xilinx AI Engine, AIE1 (`--target aie`): convolution nests of C become kernels in
the AIE intrinsic style (Vyasa, CGO'23: `emit.aie_convolution`, `emit.aie_kernel`). There is
no AI Engine here: the kernels are compiled for the host with c++ against the emulation of
the intrinsics (runtime/aie/pycc_aie.h) and checked bit for bit."""

from __future__ import annotations

from ...ir_passes.core.target import Target


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
