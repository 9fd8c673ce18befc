"""Pass pipelines: the `unroll(4),simd(8),align` strings of `check --passes` and `load(passes=)`.

A pipeline string names registered passes in order, each with optional arguments. Parsing is
separate from running so a typo is reported before any compilation starts. Each pass is a plain
function `pass(module, *args) -> module` (see DESIGN.md) registered under one name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir


class PipelineError(ValueError):
    """A pipeline string that does not parse or names an unknown pass."""


@dataclass(frozen=True)
class PassSpec:
    """A registered pass: the function and the types of its positional arguments."""

    function: Callable[..., ir.Module]
    arg_types: tuple[type, ...] = ()


#: name -> pass. Empty until the passes land; every pipeline is then rejected by name.
REGISTRY: dict[str, PassSpec] = {}

_ITEM = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(?:\(([^()]*)\))?\s*$")


def _valid_names(registry: dict[str, PassSpec]) -> str:
    return ", ".join(sorted(registry)) if registry else "none available yet"


def _split_items(text: str) -> list[str]:
    """Split at commas outside parentheses."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced ')' at column {i + 1} of {text!r}")
        elif char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if depth:
        raise PipelineError(f"missing ')' in {text!r}")
    items.append(text[start:])
    return items


def _convert(text: str, kind: type, name: str) -> object:
    try:
        return kind(text)
    except ValueError:
        raise PipelineError(
            f"pass {name}: argument {text!r} is not a valid {kind.__name__}"
        ) from None


def parse_pipeline(
    text: str, registry: dict[str, PassSpec] | None = None
) -> list[tuple[str, tuple]]:
    """Parse `name(arg,...),name,...` into [(name, args)], checking names and argument types."""
    registry = REGISTRY if registry is None else registry
    if not text.strip():
        return []
    steps = []
    for item in _split_items(text):
        match = _ITEM.match(item)
        if not match:
            raise PipelineError(f"cannot parse pass {item.strip()!r} in pipeline {text!r}")
        name, raw_args = match.group(1), match.group(2)
        spec = registry.get(name)
        if spec is None:
            raise PipelineError(f"unknown pass {name!r} (valid passes: {_valid_names(registry)})")
        args = [a.strip() for a in raw_args.split(",")] if raw_args and raw_args.strip() else []
        if len(args) != len(spec.arg_types):
            raise PipelineError(
                f"pass {name} takes {len(spec.arg_types)} argument(s), {len(args)} given"
            )
        steps.append(
            (name, tuple(_convert(a, t, name) for a, t in zip(args, spec.arg_types, strict=True)))
        )
    return steps


def run_pipeline(
    module: ir.Module,
    steps: list[tuple[str, tuple]],
    registry: dict[str, PassSpec] | None = None,
) -> ir.Module:
    """Apply parsed `steps` in order; each pass returns the module the next one gets."""
    registry = REGISTRY if registry is None else registry
    for name, args in steps:
        module = registry[name].function(module, *args)
    return module
