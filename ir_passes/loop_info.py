"""`loop-info`: an analysis-only pass that reports every natural loop as a remark.

It does not change the module. For each natural loop of each defined function it emits one
`-Rpass-analysis=loop-info` remark at the loop header's source location:

    k.c:4:5: remark: loop at depth 1: 3 blocks, 1 exit, 1 latch [-Rpass-analysis=loop-info]

Loops, nesting and trip counts come from `ir_passes.core.loops` (natural loops of back edges to a
dominating header; irreducible cycles are not reported). The pass makes the shape the later
passes see visible with `emit --emit llvm --passes loop-info`, and it is the pipeline's own
end-to-end test: remarks, locations, timing and verification, with nothing to get wrong in the
IR.
"""

from __future__ import annotations

from llvmlite import ir

from .core.analyses import ALL, loops_of
from .registry import PassContext, register


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 'es' if noun.endswith('ch') else 's'}"


@register("loop-info", preserves=ALL)
def loop_info(module: ir.Module, *, context: PassContext) -> ir.Module:
    """Report each natural loop (depth, blocks, exits, latches, trip count); the module is
    unchanged."""
    for function in module.functions:
        if not function.blocks:
            continue
        for loop in loops_of(function).loops:
            trips = loop.trip_count if loop.trip_count is not None else loop.trip_count_reason
            context.analysis(
                f"loop at depth {loop.depth}: {_plural(len(loop.blocks), 'block')}, "
                f"{_plural(len(loop.exits), 'exit')}, {_plural(len(loop.latches), 'latch')}, "
                f"trip count {trips}",
                at=loop.header,
            )
    return module
