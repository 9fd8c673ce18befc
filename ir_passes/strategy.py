"""The search for a kernel's best unroll factor x SIMD width (dissertation §4.4, test idea T7).

A strategy is a pipeline string run by `run_passes`: `unroll(U)` for VF = 1, `simd(W)` and
`unroll(U*W),simd(W)` for VF = W > 1 (the loop unrolled U*W times and its copies bound W at a
time: U vectors per iteration), followed by `,align` when the kernel declares alignment. The
search is deterministic: for each VF in the given order, UF = 1..max_unroll, and a VF stops when

1. the II has not improved for `eps` consecutive UFs once UF >= min_unroll (converged; an
   improvement must beat the best II so far by the fraction `min_gain`, 0 by default),
2. the loop needs more registers than the target has (its back end says so), or
3. the loop is no longer software-pipelined: a UF of this VF was pipelined and this one is
   not (a VF whose loops never pipeline, such as every loop on an out-of-order host, is not
   stopped by this rule).

A strategy stopped by rules 2 or 3 is not a candidate, except the baseline `unroll(1)`:
doing nothing is always possible, even when the original loop already spills. The best
strategy has the lowest II per original iteration; ties go to fewer instructions (a smaller
loop, further from the software pipeliner's size limit), then fewer registers, then search
order. The costs come
from a callback, so the search itself is tested with a table of made-up costs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .core.target import Cost
from .registry import bounded_int

#: the largest unroll factor U the search tries (`tune --max-unroll`): each U costs a copy,
#: a compile and a measurement per width, and `tune --max-unroll 1000` ran for minutes
MAX_SEARCH_UNROLL = 64
SearchUnroll = bounded_int("unroll factor", MAX_SEARCH_UNROLL)


@dataclass(frozen=True)
class Strategy:
    """Unroll factor, vector width and whether to use the declared alignment."""

    uf: int
    vf: int = 1
    align: bool = False

    @property
    def pipeline(self) -> str:
        if self.vf == 1:
            steps = [f"unroll({self.uf})"]
        elif self.uf == 1:
            steps = [f"simd({self.vf})"]
        else:
            steps = [f"unroll({self.uf * self.vf})", f"simd({self.vf})"]
        if self.align:
            steps.append("align")
        return ",".join(steps)

    @property
    def iterations_per_trip(self) -> int:
        return self.uf * self.vf

    def __str__(self) -> str:
        return self.pipeline


class StrategyFailed(Exception):
    """The strategy could not be applied or measured (a pass declined, no loop found)."""


@dataclass
class Trial:
    strategy: Strategy
    cost: Cost | None = None
    error: str | None = None
    #: why the search stopped this VF at this strategy (rule 1, 2 or 3), if it did
    stop: str | None = None

    @property
    def candidate(self) -> bool:
        if self.cost is None:
            return False
        baseline = self.strategy.uf == 1 and self.strategy.vf == 1
        return baseline or self.stop not in (REGISTERS, PIPELINING_LOST)


CONVERGED = "II converged"
REGISTERS = "register limit exceeded"
PIPELINING_LOST = "no longer software-pipelined"
OUT_OF_TIME = "search time budget spent"


@dataclass(frozen=True)
class SearchOptions:
    max_unroll: int = 8
    min_unroll: int = 1
    eps: int = 2
    min_gain: float = 0.0
    #: seconds the search may spend on one function; past them it keeps what it measured
    #: (each strategy costs a copy, a compile and a measurement: 200 nested loops took minutes)
    seconds: float = 60.0


@dataclass
class SearchResult:
    trials: list[Trial] = field(default_factory=list)

    @property
    def best(self) -> Trial | None:
        candidates = [(i, t) for i, t in enumerate(self.trials) if t.candidate]
        if not candidates:
            return None
        return min(
            candidates,
            key=lambda c: (c[1].cost.ii, c[1].cost.instructions, c[1].cost.registers, c[0]),
        )[1]


def search(
    evaluate: Callable[[Strategy], Cost],
    widths: Sequence[int] = (1,),
    options: SearchOptions | None = None,
    align: bool = False,
) -> SearchResult:
    """Try strategies in order, stopping each VF by the three rules; `evaluate` raises
    StrategyFailed for a strategy that cannot be measured (recorded, the search goes on)."""
    options = options or SearchOptions()
    result = SearchResult()
    started = time.monotonic()
    for vf in widths:
        best_ii: float | None = None
        no_improvement = 0
        was_pipelined = False
        for uf in range(1, options.max_unroll + 1):
            if result.trials and time.monotonic() - started > options.seconds:
                result.trials[-1].stop = result.trials[-1].stop or OUT_OF_TIME
                return result
            trial = Trial(Strategy(uf, vf, align))
            result.trials.append(trial)
            try:
                trial.cost = cost = evaluate(trial.strategy)
            except StrategyFailed as exc:
                trial.error = str(exc)
                continue
            if cost.registers_exceeded:
                trial.stop = REGISTERS
                break
            if was_pipelined and cost.pipelined is False:
                trial.stop = PIPELINING_LOST
                break
            was_pipelined = was_pipelined or bool(cost.pipelined)
            if best_ii is None or cost.ii < best_ii * (1 - options.min_gain):
                best_ii, no_improvement = cost.ii, 0
            else:
                no_improvement += 1
            if uf >= options.min_unroll and no_improvement >= options.eps:
                trial.stop = CONVERGED
                break
    return result
