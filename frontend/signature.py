"""What the front end tells the rest of pycc-stencil about each C function it saw.

This is the interface between the front end and its consumers (the JIT harness, the
compiler mode, the batch porter): the lowered LLVM module plus, per function, its C
signature and whether it was lowered or skipped (and why, and where).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llvmlite import ir

from ..diagnostics import SourceLocation
from . import c_types as ct
from .c_types import CType
from .line_markers import LineMarkers


@dataclass(frozen=True)
class Param:
    """A parameter as declared: array parameters keep their array type (not the decayed one).

    The one exception is how callers pass it: the parameters of a K&R definition are received
    with the default argument promotions (`float` as `double`, `char` as `int`), and have
    those types here.
    """

    name: str
    ctype: CType
    location: SourceLocation


@dataclass(frozen=True)
class DefinitionText:
    """Where a function's definition is in its source file, as byte offsets.

    The drop-in compiler rewrites the file around these (definition -> declaration), so
    they are only recorded when the whole definition is spelled out in the main file.
    """

    start: int  # first byte of the definition (declaration specifiers)
    name_start: int
    name_end: int
    body_start: int  # the body's `{`
    body_end: int  # one past the body's `}`


@dataclass(frozen=True)
class FunctionInfo:
    """A function the front end lowered to LLVM IR (`module.get_global(name)`)."""

    name: str
    params: tuple[Param, ...]
    result: CType
    location: SourceLocation
    is_static: bool
    loop_count: int  # loops in the function body; 0 means a helper, not a loop-nest kernel
    definition: DefinitionText | None = None
    #: GNU attributes of the function (its own and inherited from earlier declarations), as
    #: written: `weak`, `visibility("hidden")`, `section(".text.fast")`
    attributes: tuple[str, ...] = ()
    #: `#pragma pycc row_align(N)` or `--row-align N` (also on the IR: ir_passes.alignment)
    row_align: int | None = None
    #: the mutable globals it (or a function it calls) reads or writes: keys of
    #: `LoweredModule.globals`
    globals: tuple[str, ...] = ()

    @property
    def is_kernel(self) -> bool:
        return self.loop_count > 0


@dataclass(frozen=True)
class GlobalInfo:
    """A global a lowered function uses (mutable, or a constant another file defines): the
    symbol `name` declared in the module."""

    name: str
    ctype: ct.CType  # an array of unknown size (`extern double a[];`) has length None
    is_static: bool  # internal linkage: only the file's own object can reach it
    defined: bool  # the file defines it (with or without initializer, tentatively or not)
    location: SourceLocation
    read_only: bool = False  # `const`, its value defined in another file (a table)

    @property
    def size(self) -> int | None:
        """Bytes of the object, None for an array of unknown size."""
        return ct.size_of(self.ctype) if ct.has_fixed_size(self.ctype) else None


@dataclass(frozen=True)
class SkippedFunction:
    """A function the front end did not lower: the construct, and where it is."""

    name: str
    location: SourceLocation  # of the construct that made it skip
    reason: str
    has_loops: bool = False
    #: see `Unsupported.not_a_kernel`
    not_a_kernel: bool = False
    #: where the function itself is defined
    definition: SourceLocation | None = None
    #: it multiplies floating-point values: under FP contraction, gcc may fuse them
    multiplies_floats: bool = True

    def __str__(self) -> str:
        return f"{self.location}: {self.reason}"


@dataclass
class LoweredModule:
    """The result of lowering one C file."""

    source_path: str
    cflags: list[str]
    module: ir.Module
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    skipped: list[SkippedFunction] = field(default_factory=list)
    #: every function defined in the file, in source order
    order: list[str] = field(default_factory=list)
    #: the line markers of a preprocessed unit (`lower_file(..., preprocessed=True)`)
    markers: LineMarkers | None = None
    #: the mutable globals the lowered functions use, by symbol
    globals: dict[str, GlobalInfo] = field(default_factory=dict)
