"""The Target registry: one module per target in this package, each defining one subclass of
`ir_passes.core.target.Target` with its registry `name`. Adding a target is adding its file
here (plus its emitter); `target_named` and `target_names` find it without a list to edit."""

from __future__ import annotations

import functools
import importlib
import importlib.util
from types import ModuleType

from ...ir_passes.core.modules import import_modules
from ...ir_passes.core.target import Target


@functools.cache
def _classes() -> dict[str, type[Target]]:
    return {name: value for module in import_modules(__name__) for name, value in _defined(module)}


def _defined(module: ModuleType) -> list[tuple[str, type[Target]]]:
    """The targets `module` defines, by registry name."""
    return [
        (value.name, value)
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Target)
        and value.name
        and value.__module__ == module.__name__
    ]


@functools.cache
def _class_named(name: str) -> type[Target] | None:
    """The target `name`, from its own module where it has one (`host.py`: a compile imports
    neither the HLS back end nor numpy), else from the whole registry."""
    module_name = f"{__name__}.{name}"
    if importlib.util.find_spec(module_name) is not None:
        found = dict(_defined(importlib.import_module(module_name)))
        if name in found:
            return found[name]
    return _classes().get(name)


def target_names() -> list[str]:
    """The registered targets, `host` first."""
    return sorted(_classes(), key=lambda name: (name != "host", name))


def target_named(name: str, **options: object) -> Target:
    """A new Target of the registered kind `name` (host options: `cpu`, `features`)."""
    found = _class_named(name) if name.isidentifier() else None
    if found is None:
        raise ValueError(f"unknown target {name!r} (valid: {', '.join(target_names())})")
    return found(**options)


def target_from_spec(spec: str) -> Target:
    """The target a `--target` value names: `NAME` or `NAME:KEY=VALUE,...` (its options, e.g.
    `c66x:l2=256K`)."""
    name, _, options = spec.partition(":")
    values = {}
    for option in filter(None, options.split(",")):
        key, equals, value = option.partition("=")
        if not equals or not key:
            raise ValueError(f"bad target option {option!r} (expected KEY=VALUE)")
        values[key.strip()] = value.strip()
    if name == "host" and not values:
        return host_target()
    try:
        return target_named(name, **values)
    except TypeError:
        raise ValueError(f"target {name!r} has no option among {sorted(values)}") from None


def host_target(cpu: str | None = None, features: str | None = None, **model: object) -> Target:
    """The host x86-64 target: this CPU, or the `cpu`/`features` a command line selects (and
    the `caches`, `parallel_runtime` and `parallel_team` of its flags: `emit.cc_machine`)."""
    return target_named("host", cpu=cpu, features=features, **model)
