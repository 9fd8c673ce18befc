"""Registering passes and what a pass is given: the light half of the pass manager that every
pass module imports (`pipeline.py`, which parses and runs pipelines, finds the pass modules).

A pass is a plain function `pass(module, *args) -> module` (see DESIGN.md) registered under one
name with `@register("name", (int,))`. A pass that reports remarks or asks about the machine
declares a keyword parameter `context` and receives a `PassContext`:

    @register("unroll", (int,))
    def unroll(module, factor, *, context):
        ...
        context.missed("loop not unrolled: trip count unknown", at=header)
        return module

A pass also declares which cached analyses (`ir_passes.core.analyses`) it leaves valid,
`preserves=("cfg", "loops")` or `preserves=ALL` for a pass that changes no IR; the pass manager
drops every other analysis of the module after the pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from llvmlite import ir

from ..diagnostics import SourceLocation
from .core.debuginfo import location_of
from .core.target import Target


@dataclass(frozen=True)
class PassSpec:
    """A registered pass: the function, the types of its positional arguments, and the
    analyses it preserves."""

    function: Callable[..., ir.Module]
    arg_types: tuple[type, ...] = ()
    #: values of the trailing arguments that may be left out (`simd` = `simd(<target width>)`)
    defaults: tuple[object, ...] = ()
    preserves: frozenset[str] = frozenset()


class ArgumentLimit(ValueError):
    """A pass argument beyond its declared maximum: the work it would cause is refused."""


def bounded_int(what: str, most: int, least: int = 1) -> type[int]:
    """The type of an integer pass argument from `least` to `most`. Every factor, width and
    size a pipeline gives declares its maximum, so that no pipeline string asks for unbounded
    work (`simd(1000000)` took minutes and gigabytes): 'unroll factor 100 exceeds the limit
    64'."""

    class Bounded(int):
        maximum = most

        def __new__(cls, value: object) -> Bounded:
            number = int.__new__(cls, value)
            if number < least:
                raise ValueError(f"{what} must be >= {least}, not {number}")
            if number > most:
                raise ArgumentLimit(f"{what} {number} exceeds the limit {most}")
            return number

    Bounded.__name__ = f"{what} (an integer from {least} to {most})"
    return Bounded


#: name -> pass, filled by `register` as the pass modules are imported (`pipeline.load_passes`)
REGISTRY: dict[str, PassSpec] = {}


def register(
    name: str,
    arg_types: tuple[type, ...] = (),
    registry: dict[str, PassSpec] | None = None,
    defaults: tuple[object, ...] = (),
    preserves: Iterable[str] = (),
) -> Callable[[Callable[..., ir.Module]], Callable[..., ir.Module]]:
    """Decorator: register `function(module, *args[, context]) -> module` under `name`; the
    last `len(defaults)` arguments may be omitted in a pipeline string."""
    target = REGISTRY if registry is None else registry
    if len(defaults) > len(arg_types):
        raise ValueError(f"pass {name!r}: more defaults than arguments")

    def decorate(function: Callable[..., ir.Module]) -> Callable[..., ir.Module]:
        if name in target and target[name].function is not function:
            raise ValueError(f"pass {name!r} is already registered")
        spec = PassSpec(function, tuple(arg_types), tuple(defaults), frozenset(preserves))
        target[name] = spec
        return function

    return decorate


REMARK_OPTIONS = {"passed": "-Rpass", "missed": "-Rpass-missed", "analysis": "-Rpass-analysis"}
REMARK_KINDS = tuple(REMARK_OPTIONS)


@dataclass(frozen=True)
class Remark:
    """What a pass did ("passed"), declined and why ("missed"), or found ("analysis")."""

    kind: str
    pass_name: str
    message: str
    location: SourceLocation | None = None
    function: str | None = None  # the IR function concerned, if any
    #: a transformation that only prepares another (the time-tiling passes' unrolling of a
    #: pointer swap): on its own it improves nothing, so no takeover rests on it
    enabling: bool = False

    def __post_init__(self) -> None:
        if self.kind not in REMARK_OPTIONS:
            raise ValueError(f"remark kind must be one of {REMARK_KINDS}, not {self.kind!r}")

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else "pycc-stencil: "
        return f"{where}remark: {self.message} [{REMARK_OPTIONS[self.kind]}={self.pass_name}]"


def _locate(at: object) -> tuple[SourceLocation | None, str | None]:
    """Source location and function name of an instruction, a block (its first located
    instruction), a function (its first located instruction) or a SourceLocation."""
    if isinstance(at, SourceLocation) or at is None:
        return at, None
    if isinstance(at, ir.Function):
        instructions = [i for block in at.blocks for i in block.instructions]
        function = at.name
    elif isinstance(at, ir.Block):
        instructions, function = list(at.instructions), at.function.name
    elif isinstance(at, ir.Instruction):
        instructions, function = [at], at.function.name
    else:
        raise TypeError(f"cannot locate a remark at {type(at).__name__}")
    for instruction in instructions:
        location = location_of(instruction)
        if location is not None:
            return location, function
    return None, function


class NoTarget(RuntimeError):
    """A pass asked for the machine, and the module was built for none."""


@dataclass
class PassContext:
    """Given to a pass that declares a `context` parameter: the module's Target, and the
    remarks the pass collects."""

    pass_name: str
    remarks: list[Remark] = field(default_factory=list)
    module_target: Target | None = None

    @property
    def target(self) -> Target:
        """The machine the module is built for (`ir_passes.core.target.set_target`)."""
        if self.module_target is None:
            raise NoTarget(f"pass {self.pass_name} needs the module's target, and none is set")
        return self.module_target

    def remark(self, kind: str, message: str, at: object = None, enabling: bool = False) -> Remark:
        location, function = _locate(at)
        remark = Remark(kind, self.pass_name, message, location, function, enabling)
        self.remarks.append(remark)
        return remark

    def passed(self, message: str, at: object = None, enabling: bool = False) -> Remark:
        return self.remark("passed", message, at, enabling)

    def missed(self, message: str, at: object = None) -> Remark:
        return self.remark("missed", message, at)

    def analysis(self, message: str, at: object = None) -> Remark:
        return self.remark("analysis", message, at)
