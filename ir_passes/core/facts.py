"""The facts side table: what a stage knows about a module or a function that LLVM metadata
cannot carry (Python objects such as the module's Target, or the records of the loops a pass
built), kept beside the IR object in one named place.

Facts that are plain data live in the IR as metadata instead (`!pycc.row_align`,
`!pycc.aligned`, `!pycc.remainder`), so they print with the module. The side table lives in
the object's own attributes, so a `copy.deepcopy` of the module (the strategy search tries
pipelines on copies) copies the facts with it, their references to blocks and instructions
mapped to the copies. `describe` prints the table in the form `emit --emit llvm` shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from llvmlite import ir

_ATTRIBUTE = "pycc_facts"

T = TypeVar("T")


def facts_of(holder: ir.Module | ir.Function) -> dict[str, object]:
    """The facts of a module or a function (an empty table at first)."""
    table = holder.__dict__.get(_ATTRIBUTE)
    if table is None:
        table = holder.__dict__[_ATTRIBUTE] = {}
    return table


def fact(holder: ir.Module | ir.Function, key: str, make: Callable[[], T]) -> T:
    """The fact `key` of `holder`, made by `make()` the first time it is asked for."""
    table = facts_of(holder)
    if key not in table:
        table[key] = make()
    return table[key]  # type: ignore[return-value]


def describe(module: ir.Module) -> list[str]:
    """The side table as IR comment lines (`; pycc.facts: target = host x86-64 ...`)."""
    lines = [f"; pycc.facts: {key} = {value}" for key, value in facts_of(module).items()]
    for function in module.functions:
        for key, value in facts_of(function).items():
            shown = f"{len(value)} entries" if isinstance(value, (dict, set, list)) else value
            lines.append(f"; pycc.facts @{function.name}: {key} = {shown}")
    return lines
