"""The polyhedral analyses of a function, cached with its other analyses: its SCoPs (with the
nests that are not, and why) and each SCoP's dependences, computed once per state of the IR
(`ir_passes.core.analyses`: the pass manager drops them after a pass that changes the
function)."""

from __future__ import annotations

from dataclasses import dataclass, field

from llvmlite import ir

from ..ir_passes.core.analyses import analyses
from .deps import Dependences, compute_dependences
from .scop import NotAffine, Scop, extract_scops

#: analysis names: SCoPs of maximal runs of nests (`tile`, `fuse-tile`), of one nest each
#: (the time-tiling passes)
SCOPS, NEST_SCOPS = "scops", "scops of single nests"


@dataclass(eq=False)
class ScopAnalysis:
    """The SCoPs of one function, the nests that are not SCoPs, and dependences on demand."""

    scops: list[Scop]
    rejected: list[NotAffine]
    _dependences: dict[int, Dependences] = field(default_factory=dict)

    def dependences(self, scop: Scop) -> Dependences:
        """The dependences of `scop` (one of `scops`) under its original order."""
        if id(scop) not in self._dependences:
            self._dependences[id(scop)] = compute_dependences(scop)
        return self._dependences[id(scop)]


def scop_analysis(function: ir.Function, merge: bool = True) -> ScopAnalysis:
    """The (cached) SCoPs of `function`: maximal runs of affine nests, or each nest alone
    unless `merge`."""
    return analyses(function).get(
        SCOPS if merge else NEST_SCOPS, lambda f: ScopAnalysis(*extract_scops(f, merge))
    )
