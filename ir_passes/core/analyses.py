"""Cached analyses of a function, invalidated by the pass manager.

Every analysis of a function (its CFG, dominators, post-dominators, natural loops, and whatever a
stage above registers under a name, such as the polyhedral bridge's SCoPs and dependences) is
computed on first use and kept until the function changes. Keeping the cache right is not each
pass's job: a pass declares which analyses it preserves, and after it runs the pass manager
(`ir_passes.pipeline.run_passes`) drops every other analysis of every function of the module.
The transformation primitives that change a function in the middle of a pass and query it again
(unrolling a loop, generating a tiled nest) call `invalidate` on the function they changed.

With verification on (`PYCC_VERIFY_PASSES`, always in the tests), `check_preserved` recomputes
each analysis a pass claimed to preserve and compares, so a wrong claim is a loud error rather
than a stale answer.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import TypeVar

from llvmlite import ir

from .cfg import CFG
from .dominance import DominatorTree, dominator_tree, post_dominator_tree
from .loops import LoopInfo

T = TypeVar("T")

#: the analyses every function has; stages above add their own names
CFG_ANALYSIS, DOMINATORS, POST_DOMINATORS, LOOPS = "cfg", "dominators", "post-dominators", "loops"
#: a pass that changes no IR declares `preserves=ALL`
ALL = frozenset({"*"})


class FunctionAnalyses:
    """The analyses of one function, each computed on first use and kept until invalidated."""

    def __init__(self, function: ir.Function):
        self.function = function
        self._results: dict[str, object] = {}

    def get(self, name: str, compute: Callable[[ir.Function], T]) -> T:
        """The analysis `name`, computed by `compute(function)` if it is not cached."""
        if name not in self._results:
            self._results[name] = compute(self.function)
        return self._results[name]  # type: ignore[return-value]

    @property
    def cfg(self) -> CFG:
        return self.get(CFG_ANALYSIS, CFG)

    @property
    def dominators(self) -> DominatorTree:
        return self.get(DOMINATORS, lambda f: dominator_tree(self.cfg))

    @property
    def post_dominators(self) -> DominatorTree:
        return self.get(POST_DOMINATORS, lambda f: post_dominator_tree(self.cfg))

    @property
    def loops(self) -> LoopInfo:
        return self.get(LOOPS, lambda f: LoopInfo(self.cfg, self.dominators))

    @property
    def cached(self) -> list[str]:
        """Names of the analyses computed and still valid."""
        return list(self._results)

    def invalidate(self, keep: Iterable[str] = ()) -> None:
        """Forget every analysis not named in `keep` (ALL keeps everything)."""
        keep = frozenset(keep)
        if keep == ALL:
            return
        for name in [n for n in self._results if n not in keep]:
            del self._results[name]

    def check_preserved(self, names: Iterable[str]) -> str | None:
        """Recompute the cached analyses among `names` whose results compare (CFG,
        dominators, post-dominators, loops) and name the first that differs, if any."""
        names = list(self._results) if frozenset(names) == ALL else list(names)
        fresh = FunctionAnalyses(self.function)
        for name in names:
            if name in self._results and name in _SUMMARIES:
                summary, recompute = _SUMMARIES[name]
                if summary(self._results[name]) != summary(recompute(fresh)):
                    return f"the {name} analysis of @{self.function.name} changed"
        return None


def _cfg_summary(cfg: CFG) -> list:
    return [(b.name, [s.name for s in cfg.succs[b]]) for b in cfg.blocks]


def _dominator_summary(tree: DominatorTree) -> list:
    return sorted((str(node), str(tree.idom(node))) for node in tree.children)


def _loop_summary(info: LoopInfo) -> list:
    return [(lp.header.name, len(lp.blocks), lp.depth, str(lp.trip_count)) for lp in info.loops]


#: name -> (comparable summary, recomputation on a fresh cache)
_SUMMARIES: dict[str, tuple[Callable[[object], list], Callable[[FunctionAnalyses], object]]] = {
    CFG_ANALYSIS: (_cfg_summary, lambda fresh: fresh.cfg),
    DOMINATORS: (_dominator_summary, lambda fresh: fresh.dominators),
    POST_DOMINATORS: (_dominator_summary, lambda fresh: fresh.post_dominators),
    LOOPS: (_loop_summary, lambda fresh: fresh.loops),
}

_CACHE: weakref.WeakKeyDictionary[ir.Function, FunctionAnalyses] = weakref.WeakKeyDictionary()


def analyses(function: ir.Function) -> FunctionAnalyses:
    """The cached analyses of `function` (one object per function while it is alive)."""
    found = _CACHE.get(function)
    if found is None:
        found = _CACHE[function] = FunctionAnalyses(function)
    return found


def invalidate(function: ir.Function, keep: Iterable[str] = ()) -> None:
    """Drop the cached analyses of `function` not named in `keep`; for transformation
    primitives that change a function and query it again within one pass."""
    found = _CACHE.get(function)
    if found is not None:
        found.invalidate(keep)


def invalidate_module(module: ir.Module, keep: Iterable[str] = ()) -> None:
    """What the pass manager does after a pass: drop what it did not declare preserved."""
    for function in module.functions:
        invalidate(function, keep)


def loops_of(function: ir.Function) -> LoopInfo:
    """The (cached) loops of `function`."""
    return analyses(function).loops
