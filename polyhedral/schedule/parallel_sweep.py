"""`parallel-sweep`: the outer loop of each loop nest that carries no dependence runs on the
team, its points in their original order (no tiling).

A single sweep over a grid (a blur, a Laplacian, a stream triad) has nothing for time tiles
to reuse, but its rows are independent: on a grid beyond the caches two cores draw more
memory bandwidth than one, and within the caches each core computes its own rows. This is
what `gcc -ftree-parallelize-loops=N` does for such nests. A nest whose outer loop carries a
dependence (a time loop, a reduction, an in-place sweep) is refused: `time-tile` runs the
iterated stencils' tiles in parallel."""

from __future__ import annotations

from ..deps import Dependences
from . import bands
from .outcome import Outcome


def parallel_sweep(scop, deps: Dependences, sizes: list[int], *, l2: int) -> Outcome:
    """`sizes` must be empty (there are no tiles); `l2` is unused (the pass signature)."""
    outcome = Outcome(scop.schedule())
    if sizes:
        outcome.refuse("parallel-sweep takes no tile sizes")
        return outcome
    paths = [bands.path_of(n) for n in bands.chain_starts(outcome.schedule.get_root())]
    for number, path in enumerate(paths, start=1):
        nest = (
            f"the outer loop of nest {number} of {len(paths)}"
            if len(paths) > 1
            else ("the outer loop")
        )
        node = bands.node_at(outcome.schedule, path)
        if not bands.member_is_parallel(node, deps.all, 0):
            outcome.refuse(
                f"{nest} is not parallel: it carries a dependence (a time loop, a reduction, "
                "an in-place sweep) or runs once"
            )
            continue
        band = bands.mark_parallel(node, 0).child(0)
        outcome.accept(
            bands.atomic(band.get_schedule()),
            f"{nest} runs in parallel ({bands.chain_depth(band)} loop(s) deep, points in the "
            "original order)",
        )
    return outcome
