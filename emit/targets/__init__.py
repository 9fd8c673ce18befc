"""The Target registry: one module per target in this package, each defining one subclass of
`ir_passes.core.target.Target` with its registry `name`. Adding a target is adding its file
here (plus its emitter); `target_named` and `target_names` find it without a list to edit."""

from __future__ import annotations

import functools

from ...ir_passes.core.modules import import_modules
from ...ir_passes.core.target import Target


@functools.cache
def _classes() -> dict[str, type[Target]]:
    found: dict[str, type[Target]] = {}
    for module in import_modules(__name__):
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Target)
                and value.name
                and value.__module__ == module.__name__
            ):
                found[value.name] = value
    return found


def target_names() -> list[str]:
    """The registered targets, `host` first."""
    return sorted(_classes(), key=lambda name: (name != "host", name))


def target_named(name: str, **options: object) -> Target:
    """A new Target of the registered kind `name` (host options: `cpu`, `features`)."""
    classes = _classes()
    if name not in classes:
        raise ValueError(f"unknown target {name!r} (valid: {', '.join(target_names())})")
    return classes[name](**options)


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
