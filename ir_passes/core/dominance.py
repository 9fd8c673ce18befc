"""Dominator and post-dominator trees (Cooper, Harvey and Kennedy, "A Simple, Fast Dominance
Algorithm", 2001).

The algorithm is written over any graph (entry node plus successor and predecessor functions) so
post-dominance is the same code run on the reversed CFG from a virtual exit node; loop
detection, code motion and the footprint's control-dependence test all share it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from llvmlite import ir

from .cfg import CFG, reverse_postorder

#: The virtual node that every exit block of a function leads to in the post-dominator tree.
VIRTUAL_EXIT = "<exit>"


def immediate_dominators(
    entry: Hashable,
    successors_of: Callable[[Hashable], Iterable[Hashable]],
    predecessors_of: Callable[[Hashable], Iterable[Hashable]],
) -> dict[Hashable, Hashable]:
    """idom of every node reachable from `entry`; the entry maps to itself."""
    order = reverse_postorder(entry, successors_of)
    position = {node: i for i, node in enumerate(order)}  # rpo index: smaller = nearer entry
    idom = {entry: entry}

    def intersect(a: Hashable, b: Hashable) -> Hashable:
        while a is not b:
            while position[a] > position[b]:
                a = idom[a]
            while position[b] > position[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for node in order[1:]:
            processed = [p for p in predecessors_of(node) if p in idom]
            new_idom = processed[0]
            for pred in processed[1:]:
                new_idom = intersect(pred, new_idom)
            if idom.get(node) is not new_idom:
                idom[node] = new_idom
                changed = True
    return idom


class DominatorTree:
    """Immediate dominators of a graph, with dominance queries."""

    def __init__(self, root: Hashable, idom: dict[Hashable, Hashable]):
        self.root = root
        self._idom = idom
        self.children: dict[Hashable, list[Hashable]] = {node: [] for node in idom}
        for node, parent in idom.items():
            if node is not root:
                self.children[parent].append(node)

    def idom(self, node: Hashable) -> Hashable | None:
        """The immediate dominator; None for the root and for nodes not in the tree."""
        parent = self._idom.get(node)
        return None if node is self.root else parent

    def __contains__(self, node: Hashable) -> bool:
        return node in self._idom

    def dominates(self, a: Hashable, b: Hashable) -> bool:
        """True if every path from the root to `b` passes through `a` (reflexive)."""
        if b not in self._idom:
            return False
        while True:
            if b is a:
                return True
            if b is self.root:
                return False
            b = self._idom[b]


def dominator_tree(cfg: CFG) -> DominatorTree:
    """Dominators of a function's blocks (unreachable blocks are not in the tree)."""
    idom = immediate_dominators(cfg.entry, cfg.succs.__getitem__, cfg.preds.__getitem__)
    return DominatorTree(cfg.entry, idom)


def post_dominator_tree(cfg: CFG) -> DominatorTree:
    """Post-dominators, rooted at `VIRTUAL_EXIT`, which all exit blocks lead to.

    Blocks from which no exit is reachable (infinite loops) are not in the tree.
    """

    def reverse_successors(node: Hashable) -> list[ir.Block]:
        return cfg.exits if node is VIRTUAL_EXIT else cfg.preds[node]

    def reverse_predecessors(node: ir.Block) -> list[Hashable]:
        return cfg.succs[node] or [VIRTUAL_EXIT]

    idom = immediate_dominators(VIRTUAL_EXIT, reverse_successors, reverse_predecessors)
    return DominatorTree(VIRTUAL_EXIT, idom)
