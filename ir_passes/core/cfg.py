"""The control-flow graph of a llvmlite.ir function.

llvmlite.ir blocks know their instructions but not their neighbours; every analysis that walks
control flow (dominators, loops, the footprint's taint analysis) starts from this graph.
"""

from __future__ import annotations

from collections.abc import Iterable

from llvmlite import ir
from llvmlite.ir import instructions as ins


def successors(block: ir.Block) -> list[ir.Block]:
    """The blocks `block`'s terminator can branch to, without duplicates, in operand order."""
    term = block.terminator
    if isinstance(term, ins.SwitchInstr):
        targets = [term.default] + [dest for _, dest in term.cases]
    elif isinstance(term, ins.IndirectBranch):
        targets = list(term.destinations)
    elif isinstance(term, (ins.Branch, ins.ConditionalBranch)):
        targets = [op for op in term.operands if isinstance(op, ir.Block)]
    else:
        targets = []
    return list(dict.fromkeys(targets))


class CFG:
    """Successors, predecessors, exits and orders of the blocks of one function definition."""

    def __init__(self, function: ir.Function):
        if not function.blocks:
            raise ValueError(f"function {function.name} is only a declaration")
        self.function = function
        self.blocks: list[ir.Block] = list(function.blocks)
        self.entry: ir.Block = self.blocks[0]
        self.succs: dict[ir.Block, list[ir.Block]] = {b: successors(b) for b in self.blocks}
        self.preds: dict[ir.Block, list[ir.Block]] = {b: [] for b in self.blocks}
        for block, targets in self.succs.items():
            for target in targets:
                self.preds[target].append(block)
        #: blocks that leave the function (ret, unreachable, resume)
        self.exits: list[ir.Block] = [b for b in self.blocks if not self.succs[b]]

    def reverse_postorder(self) -> list[ir.Block]:
        """The blocks reachable from the entry, each after all its non-back-edge predecessors."""
        return reverse_postorder(self.entry, self.succs.__getitem__)

    def reachable(
        self, starts: Iterable[ir.Block], barrier: ir.Block | None = None
    ) -> set[ir.Block]:
        """Blocks reachable from `starts` along paths that do not go through `barrier`."""
        seen: set[ir.Block] = set()
        work = [b for b in starts if b is not barrier]
        while work:
            block = work.pop()
            if block in seen:
                continue
            seen.add(block)
            work.extend(s for s in self.succs[block] if s is not barrier and s not in seen)
        return seen


def reverse_postorder(entry, successors_of) -> list:
    """Reverse postorder of the nodes reachable from `entry` (iterative depth-first search)."""
    order = []
    visited = {entry}
    stack = [(entry, iter(successors_of(entry)))]
    while stack:
        node, children = stack[-1]
        for child in children:
            if child not in visited:
                visited.add(child)
                stack.append((child, iter(successors_of(child))))
                break
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order
