"""`loop-info`: an analysis-only pass that reports every natural loop as a remark.

It does not change the module. For each natural loop of each defined function it emits one
`-Rpass-analysis=loop-info` remark at the loop header's source location:

    k.c:4:5: remark: loop at depth 1: 3 blocks, 1 exit, 1 latch [-Rpass-analysis=loop-info]

A natural loop is the set of blocks of the back edges `latch -> header` where `header`
dominates `latch` (irreducible cycles have no such header and are not reported). Its depth
counts the natural loops whose blocks contain its header. The pass makes the shape the later
passes see visible with `emit --emit llvm --passes loop-info`, and it is the pipeline's own
end-to-end test: remarks, locations, timing and verification, with nothing to get wrong in the
IR.
"""

from __future__ import annotations

from llvmlite import ir

from .cfg import CFG
from .dominance import dominator_tree
from .pipeline import PassContext, register


def natural_loops(function: ir.Function) -> list[tuple[ir.Block, set[ir.Block], list[ir.Block]]]:
    """(header, blocks, latches) of each natural loop, in block order of the headers."""
    cfg = CFG(function)
    dominators = dominator_tree(cfg)
    latches: dict[ir.Block, list[ir.Block]] = {}
    for block in cfg.blocks:
        if block not in dominators:
            continue  # unreachable
        for target in cfg.succs[block]:
            if dominators.dominates(target, block):
                latches.setdefault(target, []).append(block)
    loops = []
    for header in cfg.blocks:
        if header not in latches:
            continue
        body, work = {header}, list(latches[header])
        while work:
            block = work.pop()
            if block in body:
                continue
            body.add(block)
            work.extend(p for p in cfg.preds[block] if p in dominators)
        loops.append((header, body, latches[header]))
    return loops


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 'es' if noun.endswith('ch') else 's'}"


@register("loop-info")
def loop_info(module: ir.Module, *, context: PassContext) -> ir.Module:
    """Report each natural loop (depth, blocks, exits, latches); the module is unchanged."""
    for function in module.functions:
        if not function.blocks:
            continue
        cfg = CFG(function)
        loops = natural_loops(function)
        for header, body, latches in loops:
            depth = sum(1 for _, other, _ in loops if header in other)
            exits = {s for b in body for s in cfg.succs[b] if s not in body}
            context.analysis(
                f"loop at depth {depth}: {_plural(len(body), 'block')}, "
                f"{_plural(len(exits), 'exit')}, {_plural(len(latches), 'latch')}",
                at=header,
            )
    return module
