"""The Target interface: what passes and the strategy search may ask of the machine a module is
built for.

A pass never guesses the machine from the module's triple: it asks the module's Target (vector
register size, the costs of the load/shuffle choice in SIMD binding, the cache sizes the tile
sizes come from, the cost model or oracle that measures a loop). Concrete targets (the host
x86-64 from its CPU features, Hexagon HVX, the C66x, ...) and their registry live with the back
ends (`pycc_stencil.emit.targets`); whoever creates a module for a machine records its Target
with `set_target`, and the pass manager hands it to every pass.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass

from llvmlite import ir

from .facts import facts_of
from .machine_model import CACHE_OVERRIDE, DEFAULT_CACHE_BYTES, SERIAL, parse_size


@dataclass(frozen=True)
class Cost:
    """A cost model's or oracle's verdict on one function's innermost loop."""

    ii: float  # cycles (packets) per original iteration
    registers: int
    pipelined: bool | None  # None: not applicable (an out-of-order CPU)
    instructions: int
    registers_exceeded: bool = False


class NoCostModel(Exception):
    """The target has no cost model or oracle for loops."""


class Target(ABC):
    """One machine that code is built for."""

    #: registry name (`--target NAME`)
    name: str = ""
    #: LLVM target triple and data layout ("" when LLVM has no back end for it)
    triple: str = ""
    data_layout: str = ""
    #: C dialect and runtime the structured-C back end emits for it (None: not a C target)
    c_dialect: str | None = None
    runtime: str | None = None
    #: the pass pipeline `emit` and `check` run for this target when none is given
    default_passes: str = ""
    #: whether `auto` tiles for the data caches (not where the back end tiles into a
    #: scratchpad itself: the C66x's EDMA tiles)
    cache_tiling: bool = True
    #: the range `check` draws integer inputs from (None: the type's full range), for a target
    #: whose arithmetic saturates where C's wraps (the AI Engine's accumulators): outputs agree
    #: where no sum overflows, and only those are compared
    integer_inputs: tuple[int, int] | None = None
    #: how tiled code's parallel loops run (`PARALLEL_RUNTIMES`, polyhedral/parallel.py): one thread
    #: unless whoever builds the module for this target asks for threads
    parallel_runtime: str = SERIAL
    #: threads of an OPENMP loop's team: 0 for the runtime's default (OMP_NUM_THREADS), N
    #: under gcc's -ftree-parallelize-loops=N (`emit.cc_threads.autopar_threads`)
    parallel_team: int = 0

    @property
    @abstractmethod
    def vector_bytes(self) -> int:
        """Bytes per vector register (what `simd` with no width binds unless the target's
        `simd_lanes` says otherwise)."""

    @abstractmethod
    def neighbour_costs(self, vector_size: int) -> tuple[float, float]:
        """(cost of one vector load, cost of a two-source element shift) in issue slots, for
        SIMD binding's choice between an unaligned load per neighbour offset and loads on a
        grid plus shuffles, for vectors of `vector_size` bytes."""

    def simd_lanes(self, element_bytes: int) -> int:
        """The lanes `simd` without a width binds for a loop whose widest element loaded or
        stored has `element_bytes` bytes: a full vector register of them."""
        return max(1, self.vector_bytes // max(1, element_bytes))

    def store_alignment(self, vector_bytes: int) -> int:
        """Bytes `simd` aligns a vector loop's stores of `vector_bytes` to at run time, from
        the store's address (0: it does not)."""
        return 0

    def streaming_stores(self, vector_bytes: int) -> bool:
        """Whether the target has non-temporal stores of `vector_bytes` (aligned to their
        size), which `stream-sweep` binds a sweep's output with."""
        return False

    def streaming_stores_pay(self) -> bool:
        """Whether they pay for a sweep's output on data beyond the caches (what
        `stream-sweep-large`, `-O3`'s form, asks)."""
        return False

    def simd_interleave(self, operations: int) -> int:
        """Vectors per iteration `simd` without a width binds for a loop body of
        `operations` value-computing instructions: one unless the target says otherwise."""
        return 1

    def vector_widths(self, element_bytes: int) -> list[int]:
        """Vector widths (lanes) the strategy search tries for `element_bytes`-byte elements:
        1 (scalar), then what `simd` binds by default."""
        lanes = self.simd_lanes(element_bytes)
        return [1] + ([lanes] if lanes > 1 else [])

    def loop_costs(self, module: ir.Module, iterations_per_trip: int) -> dict[str, Cost]:
        """Cost of each function's innermost loop per original iteration (its trip covers
        `iterations_per_trip` of them), from the target's cost model or oracle."""
        raise NoCostModel(f"target {self.name} has no cost model for loops")

    def original_loop_cycles(self, module: ir.Module, steps: dict[str, int]) -> dict[str, float]:
        """Cycles per original iteration of each function's innermost loop as the target's
        own compiler builds the unchanged module (with its vectorizers); empty when unknown.
        `steps` gives each function's loop step."""
        return {}

    def c_tiling(self, module: ir.Module, remarks: list) -> dict[str, object]:
        """The functions of `module` (before the passes) that the target's C runs tile by
        tile through its runtime, by name (C66x: `emit.c66x_tiling.TiledKernel`); the
        remarks saying which and why are added to `remarks`."""
        return {}

    def runtime_defines(self) -> list[str]:
        """`-D` flags the target's runtime C is built with (its configuration)."""
        return []

    def cache_bytes(self, level: int) -> int:
        """The data cache size of `level` (1, 2, 3), or its `PYCC_CACHE_L<level>` override."""
        override = os.environ.get(CACHE_OVERRIDE[level], "").strip()
        if override:
            return parse_size(override)
        return self.measured_cache_bytes(level)

    def tile_key(self) -> str:
        """The name measured tile sizes are kept under for this target
        (`polyhedral.tuned_sizes`), or "" when none are: what decides the best tiles, as the
        build's flags give it (never the build host's own machine)."""
        return ""

    def locality_threshold(self) -> int:
        """Bytes a nest's arrays must span for the `-large` passes' tiled code to run: half the
        last-level cache, and at least the L2. Measured on an AMD EPYC (L2 512 KiB, L3 32 MiB;
        docs/tiling_benchmarks.md, "When time tiles pay"): while the data fit in the L3, time
        tiles sized for the L2 lost to the untiled nest (heat-3d 0.81x at 14 MB, jacobi-2d
        0.97x at 1 MB), beyond half of it they won (heat-3d 1.19x at 22.5 MB, jacobi-2d 1.13x
        at 16 MB): the L3 streams the untiled sweeps nearly as fast as the L2 would. (A virtual
        machine's L3 counts at most 16 MiB per CPU sharing it: `emit.cc_machine`.)"""
        return max(self.cache_bytes(2), self.cache_bytes(3) // 2)

    def measured_cache_bytes(self, level: int) -> int:
        """The cache size of the target's model (the default model here)."""
        return DEFAULT_CACHE_BYTES[level]

    def describe(self) -> str:
        """One line for the facts table and reports."""
        return f"{self.name} ({self.triple or 'no LLVM triple'}, {self.vector_bytes}-byte vectors)"

    def __str__(self) -> str:
        return self.describe()


def set_target(module: ir.Module, target: Target) -> None:
    """Record the machine `module` is built for (its triple follows the target's)."""
    facts_of(module)["target"] = target
    if target.triple:
        module.triple = target.triple


def target_of(module: ir.Module) -> Target | None:
    """The machine `module` is built for, if recorded."""
    return facts_of(module).get("target")  # type: ignore[return-value]
