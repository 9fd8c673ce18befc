"""`scop-info`: an analysis-only pass that prints what the polyhedral bridge sees, as Polly's
`-polly-scops -analyze` does: for each SCoP of each function its parameters and run-time
assumptions, every statement's domain, the reads and writes, the dependences (exact flow,
memory-based anti and output), the original schedule, and the schedule each tiling
transformation would choose for it with the module's Target's caches (or why it refuses).
Nests that are not SCoPs get the reason, as the tiling passes say it.

The module is unchanged and every analysis stays valid (`preserves=ALL`), so a tiling pass
after it reuses the SCoPs and dependences it computed:

    pycc-stencil emit --emit llvm --passes scop-info,time-tile heat.c -o /dev/null
"""

from __future__ import annotations

import functools

import islpy as isl
from llvmlite import ir

from ..polyhedral.analysis import scop_analysis
from ..polyhedral.codegen import TwoLevel
from ..polyhedral.deps import Dependences
from ..polyhedral.schedule.fuse_tile import fuse_tile
from ..polyhedral.schedule.outcome import Outcome
from ..polyhedral.schedule.tile import tile
from ..polyhedral.schedule.time_tile import time_tile
from ..polyhedral.scop import Scop
from .core.analyses import ALL
from .registry import PassContext, register

#: the transformations whose choice is shown, by pass name
_CHOICES = {"tile": tile, "time-tile": time_tile, "fuse-tile": fuse_tile}
#: those whose default sizes may have been measured for the target (`Target.tile_key`)
_TUNED = frozenset({"time-tile", "fuse-tile"})


def _map(relation: isl.UnionMap | isl.Schedule) -> str:
    if isinstance(relation, isl.Schedule):
        relation = relation.get_map()
    return str(relation.coalesce())


def _program(program: isl.Schedule | TwoLevel) -> str:
    if isinstance(program, TwoLevel):
        return f"tiles {_map(program.outer)}; in each tile {_map(program.inner)}"
    return _map(program)


def _choice(outcome: Outcome) -> str:
    if outcome.changed:
        return f"{'; '.join(outcome.done)}: {_program(outcome.schedule)}"
    return "refused: " + ("; ".join(outcome.refused) or "nothing to transform")


def describe(scop: Scop, deps: Dependences, l2: int, l1: int = 0, tile_key: str = "") -> str:
    """The SCoP, its dependences and the schedules the tiling passes would choose for the
    target of `tile_key` with these caches."""
    lines = [
        f"SCoP of {scop.function.name}: {len(scop.nests)} loop nest(s), "
        f"{len(scop.statements)} statement(s)",
        f"  parameters: [{', '.join(scop.params)}]",
    ]
    if scop.assumed is not None:
        lines.append(f"  assumed (checked at run time): {scop.assumed}")
    lines.append("  statements:")
    for statement in scop.statements:
        constraints = " and ".join(statement.constraints) or "true"
        lines.append(f"    {statement.tuple_text()} : {constraints}")
    lines += [
        f"  reads: {_map(scop.reads())}",
        f"  writes: {_map(scop.writes())}",
        "  dependences:",
        f"    flow: {_map(deps.flow)}",
        f"    anti: {_map(deps.anti)}",
        f"    output: {_map(deps.output)}",
        f"  schedule: {_map(scop.schedule())}",
    ]
    for name, transform in _CHOICES.items():
        key = {"tile_key": tile_key} if name in _TUNED else {}
        lines.append(f"  {name}: {_choice(transform(scop, deps, [], l2=l2, l1=l1, **key))}")
    return "\n".join(lines)


@register("scop-info", preserves=ALL)
def scop_info(module: ir.Module, *, context: PassContext) -> ir.Module:
    """Report each SCoP (domains, accesses, dependences, schedules) and each nest that is not
    one; the module is unchanged."""
    target = context.target
    caches = functools.cache(
        lambda: (target.cache_bytes(2), target.cache_bytes(1), target.tile_key())
    )
    for function in module.functions:
        if not function.blocks:
            continue
        analysis = scop_analysis(function)
        for why in analysis.rejected:
            context.analysis(f"loop nest is not a SCoP: {why.reason}", at=why.at)
        for scop in analysis.scops:
            text = describe(scop, analysis.dependences(scop), *caches())
            context.analysis(text, at=scop.entry.terminator)
    return module
