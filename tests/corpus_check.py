"""Checking kernels in the tests: one compile per (file, flags, pipeline), every parameter set
run on it, and the remarks of the compile for the test to assert what the passes did.

`compiled(path, cflags, passes)` is a per-process memo of the harness's units
(`runtime.check.SourceUnit`: lowering, footprint probe, cc reference; `CompiledUnit`: passes,
JIT, remarks), keyed by the file's path and content, the flags, the pipeline and the
environment the compile reads (every `PYCC_*` variable but those the compiled code reads when
it runs). `on_source(...)` is the pytest mark that keeps every test of one source on one
xdist worker (`--dist loadgroup`), where that memo lives.

Tests that patch the compiler (a legality check switched off, a wrong copy-in) must not use
the memo: they call `runtime.check.check_file`, which compiles afresh.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from corpus.manifest import CORPUS_DIR
from pycc_stencil.ir_passes.registry import Remark
from pycc_stencil.runtime.check import CheckResult, CompiledUnit, SourceUnit
from pycc_stencil.runtime.isolate import run_isolated

T = TypeVar("T")

#: kernels whose buffer extents depend on the pixel data (a `break` on a loaded value), so
#: the user must give them (--extent); the manifest's array shapes are those extents
DATA_DEPENDENT = {"row_diff_until_zero_u8"}

#: variables the compiled code reads when it runs (polyhedral/parallel.py): not a compile key
RUN_TIME_VARIABLES = {"PYCC_PARALLEL_ORDER", "PYCC_NUM_THREADS"}
#: sources kept in the memo (with all their compiles); a worker runs one source's tests
#: together, so only the last few are ever asked for again
SOURCES_KEPT = 4

#: seconds a test's own run of JIT-compiled code may take in its child
IN_CHILD_TIMEOUT = 120.0


def in_child(run: Callable[[], T]) -> T:
    """`run()` in a forked child, for tests that call compiled kernels on their own memory: a
    miscompiled kernel that crashes fails its test instead of killing the xdist worker (a lost
    worker stalls `--dist loadgroup` until CI's time limit)."""
    return run_isolated(run, IN_CHILD_TIMEOUT)


_SOURCES: OrderedDict[tuple, tuple[SourceUnit, dict[tuple, CompiledUnit]]] = OrderedDict()


def compile_environment() -> tuple[tuple[str, str], ...]:
    """The PYCC_* variables a compile may read (scratch poisoning, cache sizes, cc, ...)."""
    return tuple(
        sorted(
            (k, v)
            for k, v in os.environ.items()
            if k.startswith("PYCC_") and k not in RUN_TIME_VARIABLES
        )
    )


def compiled(
    path: str | os.PathLike,
    cflags: list[str] | tuple[str, ...] = (),
    passes: str | None = None,
    *,
    row_align: int | None = None,
    opt_level: int = 3,
    target: str = "host",
) -> CompiledUnit:
    """The file at `path` compiled under `passes`, made once per process."""
    path = os.path.abspath(path)
    content = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    environment = compile_environment()
    key = (path, content, tuple(cflags), row_align, environment)
    if key in _SOURCES:
        _SOURCES.move_to_end(key)
    else:
        _SOURCES[key] = (SourceUnit(path, cflags, row_align=row_align), {})
        while len(_SOURCES) > SOURCES_KEPT:
            _SOURCES.popitem(last=False)
    source, units = _SOURCES[key]
    if (passes, opt_level, target) not in units:
        units[passes, opt_level, target] = source.compile(passes, opt_level, target)
    return units[passes, opt_level, target]


def remarks_about(unit: CompiledUnit, function: str) -> list[Remark]:
    """The remarks of the compile about `function` (and the functions outlined from it,
    `function.par...`), or about no function in particular."""
    assert unit.remarks is not None, unit.setup_error
    return [
        r
        for r in unit.remarks
        if r.function is None or r.function == function or r.function.startswith(function + ".")
    ]


def check(
    path: str | os.PathLike,
    function: str,
    params: dict,
    passes: str | None = None,
    cflags: list[str] | tuple[str, ...] = (),
    extents: dict[str, int] | None = None,
    row_align: int | None = None,
    fresh: bool = False,
) -> tuple[CheckResult, list[Remark]]:
    """`check` of `function` at `params` on the memoized compile (with `fresh`, on one made
    for this call alone: a test that patches the compiler); the remarks about it."""
    if fresh:
        unit = SourceUnit(path, cflags, row_align=row_align).compile(passes)
    else:
        unit = compiled(path, cflags, passes, row_align=row_align)
    params = {k: v if isinstance(v, str) else repr(v) for k, v in params.items()}
    result = unit.check(function, params, extents)
    return result, remarks_about(unit, function) if unit.remarks is not None else []


# --------------------------------------------------------------------------------------------
# the corpus


def corpus_cflags(entry: dict, variant: list[str]) -> list[str]:
    includes = [f"-I{os.path.join(CORPUS_DIR, d)}" for d in entry["includes"]]
    return [f"-std={entry['std']}", *entry["cflags"], *variant, *includes]


def corpus_extents(entry: dict, variant: list[str], params: dict) -> dict[str, int]:
    """Element counts of the manifest's arrays (only for the data-dependent kernels)."""
    if entry["function"] not in DATA_DEPENDENT:
        return {}
    env = dict(params)
    for flag in variant + entry["cflags"]:
        if flag.startswith("-D") and "=" in flag:
            name, value = flag[2:].split("=", 1)
            env[name] = int(value)
    return {
        name: math.prod(d if isinstance(d, int) else eval(d, {}, env) for d in spec["shape"])
        for name, spec in entry["arrays"].items()
    }


def check_case(
    entry: dict, variant: list[str], params: dict, passes: str | None = None, fresh: bool = False
) -> tuple[CheckResult, list[Remark]]:
    """`check` of one kernel of the manifest at one variant and parameter set, and the
    remarks of its compile about it."""
    return check(
        os.path.join(CORPUS_DIR, entry["file"]),
        entry["function"],
        params,
        passes,
        corpus_cflags(entry, variant),
        corpus_extents(entry, variant, params),
        fresh=fresh,
    )


def case_label(entry: dict, variant: list[str], params: dict, *extra: str) -> str:
    return "-".join([entry["function"], *extra, *variant, *(f"{k}={v}" for k, v in params.items())])


def on_source(name: str, cflags: list[str] | tuple[str, ...] = ()) -> pytest.MarkDecorator:
    """The xdist group of the tests of one source (a corpus file or a test's kernel `name`
    with its flags): they run on one worker, which lowers, probes and builds it once."""
    defines = [f for f in cflags if f.startswith("-D")]
    return pytest.mark.xdist_group(":".join([name, *defines]))


def on_entry(entry: dict, variant: list[str]) -> pytest.MarkDecorator:
    """`on_source` of a manifest kernel at a variant."""
    return on_source(entry["file"], corpus_cflags(entry, variant))


def corpus_params(kernels: list[tuple[str, list[dict]]], pipelines: list[str]) -> list:
    """pytest params (entry, params, passes): corpus kernels by function name (first variant),
    each with the given parameter sets, under each pipeline."""
    from corpus.manifest import KERNELS

    cases = []
    for name, sizes in kernels:
        entry = next(e for e in KERNELS if e["function"] == name)
        variant = entry["variants"][0]
        for params in sizes:
            for passes in pipelines:
                label = case_label(entry, variant, params, passes)
                mark = on_entry(entry, variant)
                cases.append(pytest.param(entry, params, passes, id=label, marks=mark))
    return cases


def passed_by(remarks: list[Remark], pass_name: str) -> list[str]:
    """The messages of the `passed` remarks of `pass_name`."""
    return [r.message for r in remarks if r.kind == "passed" and r.pass_name == pass_name]


def missed_by(remarks: list[Remark], pass_name: str) -> list[str]:
    return [r.message for r in remarks if r.kind == "missed" and r.pass_name == pass_name]


def busiest(param_sets: list[dict]) -> dict:
    """The parameter set with the most work (largest product of the integer parameters): a
    non-empty iteration space, e.g. the odd T > 0 of a time loop (the manifest's first set of
    an iterated stencil is T = 0)."""
    return max(
        param_sets,
        key=lambda p: math.prod(max(v, 0) for v in p.values() if isinstance(v, int)),
    )


def assert_fired(remarks: list[Remark], passes: str, declined: dict[str, str] | None = None):
    """Every pass of the pipeline `passes` left a `passed` remark (about the function whose
    `remarks` these are), except the passes `declined` names: each of those left none, and a
    `missed` remark containing the given words instead. A pass that silently did nothing
    fails here."""
    from pycc_stencil.ir_passes.pipeline import parse_pipeline

    declined = dict(declined or {})
    names = [name for name, _ in parse_pipeline(passes)]
    stale = set(declined) - set(names)
    assert not stale, f"expected declines of passes not in {passes!r}: {stale}"
    shown = "\n".join(str(r) for r in remarks)
    for name in names:
        done = passed_by(remarks, name)
        if name in declined:
            assert not done, f"{name} was expected to decline ({declined[name]!r}):\n{shown}"
            words = declined[name]
            assert any(words in m for m in missed_by(remarks, name)), (
                f"{name} declined without saying {words!r}:\n{shown}"
            )
        else:
            assert done, f"{name} did nothing (no passed remark):\n{shown}"


def rotated(
    param_sets: list[dict], pipelines: list[str], keep: int | None = None, offset: int = 0
) -> list[tuple[dict, str, bool, bool]]:
    """(params, pipeline, busiest, sweep) cases of one kernel: every pipeline on the busiest
    set (a non-empty iteration space, which the test asserts the run changed), the other sets
    (T = 0, sizes smaller than the stencil, ...) rotating over the pipelines.

    With `keep`, `keep` of the pipelines (from the `offset`-th on, cyclically: give each
    kernel of a table its index, and every pipeline meets a share of the kernels) make the
    default run; the others are `sweep` cases, on the busiest set."""
    kept = [pipelines[(offset + k) % len(pipelines)] for k in range(keep or len(pipelines))]
    main = busiest(param_sets)
    cases = [(main, passes, True, passes not in kept) for passes in pipelines]
    others = [p for p in param_sets if p != main]
    cases += [(p, kept[k % len(kept)], False, False) for k, p in enumerate(others)]
    return cases


def by_file(entries: list[dict]) -> list[int]:
    """Each entry's position among the distinct files of `entries`, in order. Rotating the
    pipelines by it (not by the entry's own index) gives every kernel of a file the same
    ones: a compile is of the whole file, so the file is compiled once per pipeline kept."""
    files: dict[str, int] = {}
    return [files.setdefault(entry["file"], len(files)) for entry in entries]


def sweep_if(flag: bool) -> list[pytest.MarkDecorator]:
    """The `sweep` mark (opt-in: scripts/run_sweeps.sh) if `flag`."""
    return [pytest.mark.sweep] if flag else []


def kernel_cases(cases: list[tuple[str, dict, str]], group: str | None = None) -> list:
    """pytest params of (function, params, pipeline) cases, named by their values, each on
    the worker of its kernel's file (`group`, else a file per function)."""
    return [
        pytest.param(
            f, p, s, id=f"{f}-{'-'.join(map(str, p.values()))}-{s}", marks=kernel_group(group or f)
        )
        for f, p, s in cases
    ]


def kernel_group(name: str) -> pytest.MarkDecorator:
    """`on_source` of a kernel written by a test (tests/conftest.py `kernel_file`)."""
    return on_source(f"{name}.c")
