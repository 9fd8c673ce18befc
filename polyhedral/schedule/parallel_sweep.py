"""`parallel-sweep`: the outer loop of each sweep (a loop nest none of whose loops carries a
dependence) runs on the team, its points in their original order (no tiling).

A single sweep over a grid (a blur, a Laplacian, a stream triad) has nothing for time tiles
to reuse, but its rows are independent: on a grid beyond the caches two cores draw more
memory bandwidth than one, and within the caches each core computes its own rows. This is
what `gcc -ftree-parallelize-loops=N` does for such nests. Refused: a nest whose outer loop
carries a dependence (a time loop, an in-place sweep: `time-tile` runs the iterated
stencils' tiles in parallel), and one with an inner loop that does (a reduction: matrix
products, correlations, whose LLVM code loses to gcc's by more than a second core gains;
PolyBench's correlation, nussinov and syrk ran 0.46-0.8x gcc on two threads)."""

from __future__ import annotations

import islpy as isl

from ..deps import Dependences
from . import bands
from .outcome import Outcome


def parallel_sweep(scop, deps: Dependences, sizes: list[int], *, l2: int, l1: int = 0) -> Outcome:
    """`sizes`, `l2` and `l1` are unused (the schedules' signature: there are no tiles; the pass
    takes no arguments)."""
    outcome = Outcome(scop.schedule())
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
        if not _inner_loops_free(node, deps.all):
            outcome.refuse(
                f"{nest.replace('the outer loop', 'an inner loop')} carries a dependence (a "
                "reduction): not a sweep"
            )
            continue
        band = bands.mark_parallel(node, 0).child(0)
        outcome.accept(
            bands.atomic(band.get_schedule()),
            f"{nest} runs in parallel ({bands.chain_depth(band)} loop(s) deep, points in the "
            "original order)",
        )
    return outcome


def _inner_loops_free(node: isl.ScheduleNode, dependences: isl.UnionMap) -> bool:
    """Whether no loop below the outer one of the nest at `node` carries a dependence."""
    carried: list[bool] = []

    def visit(band: isl.ScheduleNode) -> bool:  # (isl frees `band` after the call)
        if band.get_type() == isl.schedule_node_type.band:
            first = 1 if band.is_equal(node) else 0
            for member in range(first, band.band_n_member()):
                carried.append(not _free(band, dependences, member))
        return not any(carried)

    node.foreach_descendant_top_down(visit)
    return not any(carried)


def _free(band: isl.ScheduleNode, dependences: isl.UnionMap, member: int) -> bool:
    """No dependence carried by `member` of `band` (one that runs once carries none)."""
    return bands.member_is_parallel(band, dependences, member) or _runs_once(band, member)


def _runs_once(band: isl.ScheduleNode, member: int) -> bool:
    schedule = isl.UnionMap.from_union_pw_aff(band.band_get_partial_schedule().get_at(member))
    outer = band.get_prefix_schedule_union_map()
    values = outer.reverse().apply_range(schedule.intersect_domain(band.get_domain()))
    return values.is_single_valued()
