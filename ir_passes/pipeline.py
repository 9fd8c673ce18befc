"""Pass pipelines: the `unroll(4),simd(8),align` strings of `check --passes` and `load(passes=)`,
and the pass manager that runs them.

A pipeline string names registered passes (`registry.py`) in order, each with optional
arguments. Parsing is separate from running so a typo is reported before any compilation starts.
The pass modules are found, not listed: every module of the `ir_passes` package is imported
before a pipeline is parsed, and their `@register` decorators fill the registry.

`run_passes` applies the steps in order with the module's Target in each pass's context, times
each pass, drops the cached analyses the pass did not declare preserved, verifies the IR with LLVM
after each one (unless `PYCC_VERIFY_PASSES=0`; always in the tests; then also the analyses a
pass claims to preserve are recomputed and compared) and returns the module with every pass's
remarks and time (`PipelineResult`). Remarks print as clang's do:
`file:line:col: remark: MESSAGE [-Rpass=NAME]` (`-Rpass-missed`, `-Rpass-analysis`).
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from llvmlite import ir

from .core.analyses import analyses, invalidate_module
from .core.deep import deep_call
from .core.modules import import_modules
from .core.target import Target, target_of
from .registry import (
    REGISTRY,
    REMARK_KINDS,
    REMARK_OPTIONS,
    ArgumentLimit,
    PassContext,
    PassSpec,
    Remark,
)


class PipelineError(ValueError):
    """A pipeline string that does not parse or names an unknown pass."""


class PassVerificationError(RuntimeError):
    """A pass produced IR that LLVM rejects: a bug in that pass, never the user's input."""

    def __init__(self, pass_name: str, detail: str):
        super().__init__(f"pass '{pass_name}' produced invalid IR: {detail}")
        self.pass_name = pass_name


@dataclass
class PassRecord:
    """One applied pass: its name and arguments, its remarks, its time (without verification)."""

    name: str
    args: tuple
    remarks: list[Remark]
    seconds: float

    @property
    def text(self) -> str:
        """The step as written in a pipeline, e.g. `unroll(4)`."""
        return f"{self.name}({','.join(map(str, self.args))})" if self.args else self.name


@dataclass
class PipelineResult:
    """The module after the pipeline, and what each pass did."""

    module: ir.Module
    records: list[PassRecord] = field(default_factory=list)

    @property
    def remarks(self) -> list[Remark]:
        return [r for record in self.records for r in record.remarks]

    @property
    def passes(self) -> list[str]:
        return [record.text for record in self.records]

    @property
    def time_ms(self) -> list[tuple[str, float]]:
        """(step, milliseconds) of each pass, in pipeline order."""
        return [(record.text, round(record.seconds * 1000, 3)) for record in self.records]


def select_remarks(remarks: Iterable[Remark], kinds: Iterable[str]) -> list[Remark]:
    """The remarks of the given kinds (`-Rpass`-style filtering)."""
    wanted = set(kinds)
    return [r for r in remarks if r.kind in wanted]


def parse_remark_kinds(text: str) -> tuple[str, ...]:
    """`all`, `none`, or a comma-separated list of passed, missed, analysis."""
    text = text.strip()
    if text == "all":
        return REMARK_KINDS
    if text == "none":
        return ()
    kinds = tuple(k.strip() for k in text.split(","))
    bad = [k for k in kinds if k not in REMARK_OPTIONS]
    if bad:
        raise ValueError(
            f"unknown remark kind {bad[0]!r} (valid: all, none, {', '.join(REMARK_KINDS)})"
        )
    return kinds


def verify_passes_default(unset: bool = True) -> bool:
    """Whether to verify after each pass: `PYCC_VERIFY_PASSES` (0/no/off/false: no), `unset`
    when it is not set."""
    value = os.environ.get("PYCC_VERIFY_PASSES", "").strip().lower()
    return unset if not value else value not in ("0", "no", "off", "false")


@functools.cache
def load_passes() -> None:
    """Import every module of the `ir_passes` package (not the `core` ground floor), whose
    `@register` decorators fill REGISTRY."""
    import_modules(__name__.rsplit(".", 1)[0])


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
    except ArgumentLimit as exc:
        raise PipelineError(f"pass {name}: {exc}") from None
    except ValueError:
        raise PipelineError(
            f"pass {name}: argument {text!r} is not a valid {kind.__name__}"
        ) from None


def parse_pipeline(
    text: str, registry: dict[str, PassSpec] | None = None
) -> list[tuple[str, tuple]]:
    """Parse `name(arg,...),name,...` into [(name, args)], checking names and argument types."""
    if registry is None:
        load_passes()
        registry = REGISTRY
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
        most, least = len(spec.arg_types), len(spec.arg_types) - len(spec.defaults)
        if not least <= len(args) <= most:
            takes = f"{most}" if least == most else f"{least} to {most}"
            raise PipelineError(f"pass {name} takes {takes} argument(s), {len(args)} given")
        converted = [_convert(a, t, name) for a, t in zip(args, spec.arg_types)]
        converted += spec.defaults[len(converted) - least :]
        steps.append((name, tuple(converted)))
    return steps


_DEBUG_ATTACHMENT = re.compile(r",? !dbg !\d+")


def _without_debug_info(text: str) -> str:
    """The module's text without debug-info attachments: when a module with debug info is
    broken, LLVM's parser (UpgradeDebugInfo) aborts the whole process instead of reporting,
    so a pass's bug would kill `check`, `emit` or pytest rather than raise."""
    text = _DEBUG_ATTACHMENT.sub("", text)
    dropped = ("!llvm.module.flags", "!llvm.dbg.cu")
    return "\n".join(line for line in text.splitlines() if not line.startswith(dropped))


def _verify(module: ir.Module, pass_name: str) -> None:
    from llvmlite import binding as llvm

    try:
        llvm.parse_assembly(_without_debug_info(str(module))).verify()
    except RuntimeError as exc:
        raise PassVerificationError(pass_name, f"LLVM rejected it: {exc}") from None


def _wants_context(function: Callable) -> bool:
    try:
        return "context" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def run_passes(
    module: ir.Module,
    steps: list[tuple[str, tuple]],
    registry: dict[str, PassSpec] | None = None,
    verify: bool | None = None,
    target: Target | None = None,
) -> PipelineResult:
    """Apply parsed `steps` in order; each pass returns the module the next one gets and
    sees `target` (default: the module's own, `target_of`). After each pass the analyses it
    did not declare preserved are dropped, and the IR is verified by LLVM (`verify`, default
    from `PYCC_VERIFY_PASSES`); invalid IR raises PassVerificationError naming the pass."""
    if registry is None:
        load_passes()
        registry = REGISTRY
    if verify is None:
        verify = verify_passes_default()
    target = target or target_of(module)
    result = PipelineResult(module)
    for name, args in steps:
        spec = registry[name]
        context = PassContext(name, module_target=target)
        started = time.perf_counter()
        extra = {"context": context} if _wants_context(spec.function) else {}
        output = deep_call(spec.function, result.module, *args, **extra)
        seconds = time.perf_counter() - started
        if not isinstance(output, ir.Module):
            raise PassVerificationError(
                name, f"the pass returned {type(output).__name__}, not a module"
            )
        if verify:
            _verify(output, name)
            _check_preserved(output, spec)
        invalidate_module(output, spec.preserves)
        result.module = output
        result.records.append(PassRecord(name, tuple(args), context.remarks, seconds))
    return result


def _check_preserved(module: ir.Module, spec: PassSpec) -> None:
    """A pass that claims to preserve an analysis must leave it equal to a recomputation."""
    if not spec.preserves:
        return
    for function in module.functions:
        if function.blocks:
            changed = analyses(function).check_preserved(spec.preserves)
            if changed:
                raise PassVerificationError(
                    spec.function.__name__, f"{changed}, but the pass declares it preserved"
                )


def run_pipeline(
    module: ir.Module,
    steps: list[tuple[str, tuple]],
    registry: dict[str, PassSpec] | None = None,
) -> ir.Module:
    """`run_passes`, keeping only the module."""
    return run_passes(module, steps, registry).module
