"""Structured control flow from a function's CFG: loops, if/else, break, continue, return.

The passes leave reducible control flow whose loops are natural loops with one exit block (the
front end's `for`/`while`, unrolled and SIMD-guarded loops with their remainders, isl's tile
loops). The translation follows the dominator tree as Ramsey's "Beyond Relooper" (2022) does,
in C's vocabulary: a natural loop becomes `for (;;)` whose back edges are `continue` and whose
exit edge is `break`; a two-way branch becomes `if`/`else` whose arms run until the branch's
immediate post-dominator within the enclosing loop (the merge point), where the sequence goes
on. C has no multi-level `break`, so a branch that leaves two loops at once, a loop with
several exit blocks, or irreducible flow is refused with its reason (`Unexpressible`), never
written with a goto.

Phi nodes become assignments on the edges that feed them (`Copies`), placed where the edge is
taken: before a `continue`, at the end of an `if` arm, or before the next block.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llvmlite import ir
from llvmlite.ir import instructions as ins

from ..ir_passes.core.cfg import CFG
from ..ir_passes.core.dominance import DominatorTree, immediate_dominators
from ..ir_passes.core.loops import Loop, LoopInfo
from .c_types import Unexpressible

#: how many times one block may be written out (an `if` arm that reaches a block another arm
#: also reaches before the merge point copies it): beyond this the flow is too irregular
MAX_COPIES_OF_A_BLOCK = 4
_EXIT = "<exit>"


@dataclass
class Code:
    """The non-phi instructions of `block`, up to its terminator."""

    block: ir.Block


@dataclass
class Copies:
    """The phi assignments of the edge `source` -> `target`."""

    source: ir.Block
    target: ir.Block


@dataclass
class If:
    condition: ir.Value
    then: list
    otherwise: list


@dataclass
class LoopStmt:
    loop: Loop
    body: list


@dataclass
class Break:
    pass


@dataclass
class Continue:
    loop: Loop


@dataclass
class Return:
    value: ir.Value | None


@dataclass
class Unreachable:
    pass


@dataclass
class _Context:
    """The innermost C loop being written (None: the function's body) and where it exits to."""

    loop: Loop | None
    follow: ir.Block | None
    region: set = field(default_factory=set)


class Structurizer:
    """The statement tree of one function definition (`structure`)."""

    def __init__(self, function: ir.Function):
        self.function = function
        self.cfg = CFG(function)
        idom = immediate_dominators(
            self.cfg.entry, self.cfg.succs.__getitem__, self.cfg.preds.__getitem__
        )
        self.loops = LoopInfo(self.cfg, DominatorTree(self.cfg.entry, idom))
        self.by_header = {loop.header: loop for loop in self.loops}
        self._postdom: dict[Loop | None, dict] = {}
        self._written: dict[ir.Block, int] = {}
        #: per loop, its exit blocks other than the follow: the straight-line blocks each
        #: runs on its way to the follow
        self._exit_chains: dict[Loop, dict[ir.Block, list[ir.Block]]] = {}

    def structure(self) -> list:
        top = _Context(None, None, set(self.cfg.reverse_postorder()))
        return self._sequence(self.cfg.entry, None, top)

    # ----------------------------------------------------------------------------------------

    def _sequence(
        self, block: ir.Block, stop: ir.Block | None, ctx: _Context, entering: bool = False
    ) -> list:
        """Statements from `block` until `stop` (exclusive), a `break`, a `continue` or a
        `return`. `entering`: `block` is the header of ctx's loop, written as its body."""
        out: list = []
        seen: set[ir.Block] = set()
        while True:
            if not entering:
                if block is stop:
                    return out
                if ctx.loop is not None and block is ctx.loop.header:
                    return [*out, Continue(ctx.loop)]
                if ctx.loop is not None and block is ctx.follow:
                    return [*out, Break()]
                chain = self._exit_chains.get(ctx.loop, {}).get(block)
                if chain is not None:  # a `break` or `return` with code of its own
                    for link in chain:
                        self._count(link)
                        out.append(Code(link))
                        term = link.terminator
                        if isinstance(term, ins.Ret):
                            return [*out, Return(term.return_value if term.operands else None)]
                        out.append(Copies(link, self.cfg.succs[link][0]))
                    return [*out, Break()]
                if block not in ctx.region:
                    raise Unexpressible(
                        f"a branch from inside loop '{ctx.loop.header.name}' to block "
                        f"'{block.name}' leaves more than one loop (C has no multi-level break)"
                    )
                loop = self.by_header.get(block)
                if loop is not None:
                    follow = self._follow(loop)
                    inner = _Context(loop, follow, set(loop.blocks))
                    out.append(LoopStmt(loop, self._sequence(block, None, inner, entering=True)))
                    if follow is None:
                        return out
                    block = follow
                    continue
            entering = False
            if block in seen:
                raise Unexpressible(f"irreducible control flow through block '{block.name}'")
            seen.add(block)
            self._count(block)
            out.append(Code(block))
            term = block.terminator
            if isinstance(term, ins.Ret):
                value = term.return_value if term.operands else None
                return [*out, Return(value)]
            if isinstance(term, ins.Unreachable):
                return [*out, Unreachable()]
            if isinstance(term, ins.ConditionalBranch):
                condition, then_block, else_block = term.operands
                merge = self._merge_point(block, ctx)
                arms = []
                for target in (then_block, else_block):
                    arms.append([Copies(block, target), *self._sequence(target, merge, ctx)])
                out.append(If(condition, arms[0], arms[1]))
                if merge is None:
                    return out
                block = merge
                continue
            if isinstance(term, ins.Branch):
                target = term.operands[0]
                out.append(Copies(block, target))
                block = target
                continue
            raise Unexpressible(f"terminator '{term.opname}' (block '{block.name}')")

    def _count(self, block: ir.Block) -> None:
        count = self._written.get(block, 0) + 1
        if count > MAX_COPIES_OF_A_BLOCK:
            raise Unexpressible(
                f"control flow too irregular to structure (block '{block.name}' would be "
                f"written {count} times)"
            )
        self._written[block] = count

    def _follow(self, loop: Loop) -> ir.Block | None:
        """Where the loop goes on when it ends (None: it never does, or only returns): its
        one exit block, or the first block every exit reaches through straight-line blocks.
        The exits' own blocks on the way there (a `break` that runs code first) and exits
        that end in a `return` are recorded as chains, written before the `break` or as the
        `return` inside the loop."""
        if len(loop.exits) <= 1:
            return loop.exits[0] if loop.exits else None
        paths = {exit: self._straight_path(exit, loop) for exit in loop.exits}
        returning = [e for e, p in paths.items() if p and self._returns(p[-1])]
        going_on = [e for e in loop.exits if e not in returning]
        follow = None
        if going_on:
            common = [b for b in paths[going_on[0]] if all(b in paths[e] for e in going_on)]
            if not common:
                names = ", ".join(f"'{b.name}'" for b in loop.exits)
                raise Unexpressible(
                    f"loop '{loop.header.name}' exits to several blocks ({names}) that do not "
                    "meet: C has no multi-level break"
                )
            follow = common[0]
        chains = {}
        for exit, path in paths.items():
            if follow is not None and follow in path:
                if exit is not follow:
                    chains[exit] = path[: path.index(follow)]
            else:
                chains[exit] = path  # ends in its `return`
        self._exit_chains[loop] = chains
        return follow

    def _returns(self, block: ir.Block) -> bool:
        return isinstance(block.terminator, ins.Ret)

    def _straight_path(self, start: ir.Block, loop: Loop) -> list[ir.Block]:
        """`start` and the blocks after it while each only branches on to the next (at
        most a few, outside the loop, no loop header): where a `break` path leads."""
        path, block = [start], start
        while len(path) <= MAX_COPIES_OF_A_BLOCK:
            successors = self.cfg.succs[block]
            if len(successors) != 1 or not isinstance(block.terminator, ins.Branch):
                break
            block = successors[0]
            if block in loop or block in path:
                break
            path.append(block)
            if block in self.by_header:
                break
        return path

    def _merge_point(self, block: ir.Block, ctx: _Context) -> ir.Block | None:
        """The immediate post-dominator of `block` in ctx's region, where a back edge or an
        exit of ctx's loop (and a return) ends every path; None if nothing in the region
        post-dominates it (every arm ends with break, continue or return)."""
        if ctx.loop not in self._postdom:
            self._postdom[ctx.loop] = self._post_dominators(ctx)
        merge = self._postdom[ctx.loop].get(block)
        return None if merge is _EXIT else merge

    def _post_dominators(self, ctx: _Context) -> dict:
        """Post-dominators in ctx's region. Inside a loop only the back edges reach the
        virtual exit: a `break` or a `return` is a dead end, so the merge point of a branch
        with one arm that breaks is where the other arm goes on (the guard `if (c) break;`)."""
        region = ctx.region
        header = ctx.loop.header if ctx.loop is not None else None

        def successors(b: ir.Block) -> list:
            if header is None:
                return [s if s in region else _EXIT for s in self.cfg.succs[b]] or [_EXIT]
            return [s if s is not header else _EXIT for s in self.cfg.succs[b] if s in region]

        reverse_preds: dict = {_EXIT: []}
        for b in region:
            for s in dict.fromkeys(successors(b)):
                reverse_preds.setdefault(s, []).append(b)
        idom = immediate_dominators(
            _EXIT,
            lambda n: reverse_preds.get(n, []),
            lambda n: dict.fromkeys(successors(n)) if n is not _EXIT else [],
        )
        return {b: d for b, d in idom.items() if b is not _EXIT}


def structure(function: ir.Function) -> list:
    """The statement tree of `function`; raises Unexpressible with the reason."""
    return Structurizer(function).structure()
