"""`stream-sweep`: a nest's stores into arrays it never reads go past the caches.

A sweep that writes an output it does not read (a blur, a Laplacian, a copy) moves three
transfers per point through DRAM once its data exceed the caches: the input, the output's
line read before it is written (write-allocate) and its write-back. Non-temporal stores drop
the middle one. The nests keep their order (the schedule is the original one); the driver
(`ir_passes/tiling.stream_sweep`) binds the regenerated innermost loops with `simd`'s aligned
non-temporal stores into those arrays. An array the SCoP also reads would have to come back
from memory: only arrays written and never read are streamed."""

from __future__ import annotations

from ..deps import Dependences
from ..scop import Array, Scop
from .outcome import Outcome
from .parallel_sweep import parallel_sweep


def write_only(scop: Scop) -> list[Array]:
    """The arrays the SCoP stores into and never loads from."""
    accesses = [a for statement in scop.statements for a in statement.accesses]
    read = {a.array.name for a in accesses if not a.is_write}
    written = {a.array.name: a.array for a in accesses if a.is_write}
    return [array for name, array in written.items() if name not in read]


def stream_sweep(
    scop: Scop, deps: Dependences, sizes: list[int], *, l2: int, l1: int = 0, team: bool = False
) -> Outcome:
    """The points keep their order; with a `team` (a build with threads), the outer loop of
    each nest that carries no dependence runs on it as `parallel-sweep` runs it. `sizes`, `l2`
    and `l1` are unused (the schedules' signature)."""
    outcome = Outcome(scop.schedule())
    if _falls_back_from_another_pass(scop):
        outcome.refuse(
            "the nest runs as an earlier pass's code at the sizes where streams pay: this is "
            "its fallback"
        )
        return outcome
    arrays = write_only(scop)
    if not arrays:
        outcome.refuse("the nest reads every array it stores into: nothing to stream")
        return outcome
    names = ", ".join(f"'{a.name}'" for a in arrays)
    schedule, on_team = scop.schedule(), ""
    if team:
        sweep = parallel_sweep(scop, deps, sizes, l2=l2, l1=l1)
        if sweep.changed:
            schedule, on_team = (
                sweep.schedule,
                " (the outer loops that carry no dependence on the team)",
            )
    outcome.accept(schedule, f"stores into {names} stream past the caches{on_team}")
    return outcome


def _falls_back_from_another_pass(scop: Scop) -> bool:
    """Is the nest the fallback of code an earlier pass generated (its `poly.check` enters
    the nest when that code does not run)?"""
    return any(
        block.name.startswith("poly.check") and scop.entry in block.terminator.operands
        for block in scop.function.blocks
    )
