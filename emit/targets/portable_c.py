"""Portable C99 (`--target c`): the passes' result written back as C that any C compiler
with GCC's vector extension builds (gcc, clang): a source-to-source mode, like Pluto's output.
Vectors are 16 bytes, the width every current SIMD instruction set has (the compiler that
builds the C lowers wider or narrower ones as it must); loops are costed on this host, which
is where `check --target c` runs them; tiled code runs serially (no runtime to link)."""

from __future__ import annotations

from ...ir_passes.core.machine_model import SERIAL
from ...ir_passes.core.target import Target
from .host import HostX86


class PortableC(HostX86):
    name = "c"
    c_dialect = "c"

    def __init__(self, **options: object):
        options.setdefault("parallel_runtime", SERIAL)
        super().__init__(**options)  # type: ignore[arg-type]

    @property
    def vector_bytes(self) -> int:
        return 16

    def simd_lanes(self, element_bytes: int) -> int:
        """16 bytes of them whatever the host's ISA (the C must not depend on the machine
        that wrote it): the base rule, not the host's AVX-512 widening."""
        return Target.simd_lanes(self, element_bytes)

    def store_alignment(self, vector_bytes: int) -> int:
        """None: aligning stores to the host's cache line is the host's tuning, not C's."""
        return Target.store_alignment(self, vector_bytes)

    def describe(self) -> str:
        return f"portable C99 with GCC vectors ({self.vector_bytes}-byte vectors, host costs)"
