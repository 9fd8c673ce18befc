"""What a schedule transformation returns: the new schedule (if any part was transformed)
and, for the remarks, what it did and what it refused and why."""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from ..codegen import TwoLevel


@dataclass
class Outcome:
    schedule: isl.Schedule | TwoLevel
    changed: bool = False
    done: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    #: whether every transformed nest pays at any size (its gain is not fewer cache misses):
    #: the `-large` passes then use it below their size threshold too
    in_cache: bool = True

    def accept(self, schedule: isl.Schedule | TwoLevel, message: str, in_cache: bool = False):
        self.schedule = schedule
        self.changed = True
        self.done.append(message)
        self.in_cache = self.in_cache and in_cache

    def refuse(self, reason: str) -> None:
        self.refused.append(reason)
