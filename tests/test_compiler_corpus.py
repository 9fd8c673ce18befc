"""Compiler mode over the whole kernel corpus: `pycc-stencil` as `cc` is bit-identical to `cc`.

Every kernel file of the manifest (each combination of its flags and variants, a "unit") is
built twice into a shared library, `pycc-stencil -O2 -shared -fPIC` and plain
`cc -O2 -shared -fPIC` (no -march: no FMA contraction on either side). The pycc-stencil
report must say that every kernel the manifest lists was compiled by pycc-stencil, and both
libraries' kernels, run on identical inputs for every parameter set of the manifest (odd and
prime sizes, loops that run zero times), must leave every buffer bit-identical (any NaN
equals any NaN), their guard zones intact, and return the same value. A subset of the files
is also built at -O0, -O3 and `-O3 -march=native -ffp-contract=off` (bit-identity must hold
for the host's vector units too, without contraction).

Building, loading and running reuse the check harness (`runtime.reference.build_library`,
`runtime.buffers`, `runtime.check.call_isolated`, `runtime.compare`); the buffers have the
manifest's exact shapes, so a write one element past the end hits a guard zone. All builds are
made once per module, in parallel.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shlex
import shutil
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from corpus.manifest import CORPUS_DIR, KERNELS
from pycc_stencil.frontend import lower_file
from pycc_stencil.frontend.signature import FunctionInfo
from pycc_stencil.runtime.buffers import BufferSpec, make_inputs
from pycc_stencil.runtime.check import call_isolated, kernel_arguments, scalar_arguments
from pycc_stencil.runtime.compare import (
    Tolerance,
    compare_buffers,
    compare_return_values,
    guard_damage,
)
from pycc_stencil.runtime.isolate import ChildFailure, run_isolated
from pycc_stencil.runtime.marshal import buffer_dtype
from pycc_stencil.runtime.reference import KernelLibrary, ReferenceBuildError, build_library

#: the venv's scripts first, then the PATH
TOOL_PATH = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
PYCC = shutil.which("pycc-stencil", path=TOOL_PATH)
CC = shutil.which("cc", path=TOOL_PATH) or "cc"

#: compiler options per configuration; every unit is built in the first one
CONFIGS = {
    "O2": ["-O2"],
    "O3": ["-O3"],
    "O0": ["-O0"],
    "O3-native": ["-O3", "-march=native", "-ffp-contract=off"],
}
MAIN_CONFIG = "O2"
#: the units also built in the other configurations: float and double stencils (VLA and
#: macro-indexed pointers), reductions with a return value, libm calls, integer wrap-around
#: and saturation, loops of every shape, and a PolyBench-macro file whose kernel is `static`
#: (its float, C99-prototype unit)
SUBSET = {
    "polybench/heat_3d_ptr.c",
    "polybench/jacobi_2d_vla.c",
    "legacy/reduce.c",
    "legacy/math_kernels.c",
    "legacy/int_arith.c",
    "legacy/loops.c",
    "polybench/macro/heat-3d.c",
}
SUBSET_FLAGS = {"polybench/macro/heat-3d.c": "-DDATA_TYPE_IS_FLOAT"}
#: opt-in sweeps (scripts/run_sweeps.sh, docs/testing.md): -O0 and -O3 -march=native builds
#: of the subset (-O2 and -O3 stay: pycc-stencil's default passes run at -O3), and the second
#: of the three sizes of a fixed-size file (the first, odd one and the degenerate one stay)
SWEEP_CONFIGS = {"O0", "O3-native"}
SEED = 0
TIMEOUT = 60.0

pytestmark = [
    pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed"),
    # every test needs the module's builds (a minute of compiles): one worker makes them
    pytest.mark.xdist_group("compiler-corpus"),
]


# --------------------------------------------------------------------------------------------
# the manifest, as build units and cases


@dataclass(frozen=True)
class Unit:
    """One translation unit to build: a kernel file with one set of flags."""

    file: str
    cflags: tuple[str, ...]  # -std, the entry's flags, the variant, -I

    @property
    def path(self) -> Path:
        return Path(CORPUS_DIR) / self.file

    @property
    def label(self) -> str:
        defines = [f for f in self.cflags if f.startswith("-D")]
        return "-".join([self.file, *defines])

    def configs(self) -> list[str]:
        flag = SUBSET_FLAGS.get(self.file)
        subset = self.file in SUBSET and (flag is None or flag in self.cflags)
        return list(CONFIGS) if subset else [MAIN_CONFIG]

    def sweep(self, config: str) -> bool:
        """Is this unit's build in `config` an opt-in sweep?"""
        return config in SWEEP_CONFIGS or self in MIDDLE_SIZES


def _unit(entry: dict, variant: list[str]) -> Unit:
    includes = [f"-I{os.path.join(CORPUS_DIR, d)}" for d in entry["includes"]]
    return Unit(entry["file"], (f"-std={entry['std']}", *entry["cflags"], *variant, *includes))


def _units() -> dict[Unit, list[str]]:
    """Every unit, with the functions the manifest lists for it (in manifest order)."""
    units: dict[Unit, list[str]] = {}
    for entry in KERNELS:
        for variant in entry["variants"]:
            names = units.setdefault(_unit(entry, variant), [])
            if entry["function"] not in names:
                names.append(entry["function"])
    return units


UNITS = _units()
#: the second of the three sizes of an entry whose variants only change its sizes
MIDDLE_SIZES = {_unit(e, e["variants"][1]) for e in KERNELS if len(e["variants"]) == 3}


def _cases():
    for config in CONFIGS:
        for entry in KERNELS:
            for variant, params in itertools.product(entry["variants"], entry["params"]):
                unit = _unit(entry, variant)
                if config not in unit.configs():
                    continue
                label = "-".join(
                    [config, entry["function"], *variant, *(f"{k}={v}" for k, v in params.items())]
                )
                marks = [pytest.mark.sweep] if unit.sweep(config) else []
                yield pytest.param(config, unit, entry, params, id=label, marks=marks)


def _unit_configs():
    for unit in UNITS:
        for config in unit.configs():
            marks = [pytest.mark.sweep] if unit.sweep(config) else []
            yield pytest.param(unit, config, id=f"{config}-{unit.label}", marks=marks)


def _macros(unit: Unit) -> dict[str, int]:
    """The -DNAME=integer flags of the unit (array shapes may use them)."""
    macros = {}
    for flag in unit.cflags:
        name, sep, value = flag[2:].partition("=")
        if flag.startswith("-D") and sep and value.lstrip("-").isdigit():
            macros[name] = int(value)
    return macros


def _buffer_specs(unit: Unit, entry: dict, params: dict, info: FunctionInfo) -> list[BufferSpec]:
    """The manifest's arrays with exactly their shapes, in the order of the parameters."""
    env = {**_macros(unit), **params}
    specs = []
    for param in info.params:
        spec = entry["arrays"].get(param.name)
        if spec is None:
            continue
        shape = tuple(d if isinstance(d, int) else eval(d, {}, env) for d in spec["shape"])
        dtype = np.dtype(spec["dtype"])
        assert buffer_dtype(param) == dtype, f"manifest dtype of {param.name}: {dtype}"
        value_range = tuple(spec["range"]) if "range" in spec else None
        count = math.prod(max(0, d) for d in shape)
        read = spec["intent"] != "out"
        specs.append(BufferSpec(param.name, dtype, 0, count, read, shape, value_range))
    missing = set(entry["arrays"]) - {s.name for s in specs}
    assert not missing, f"manifest arrays that are not parameters: {missing}"
    return specs


# --------------------------------------------------------------------------------------------
# the builds


@dataclass
class Build:
    """The two libraries of one unit in one configuration."""

    pycc: KernelLibrary | None = None
    cc: KernelLibrary | None = None
    errors: list[str] = field(default_factory=list)
    report: list[dict] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)


@dataclass
class Builds:
    infos: dict[Unit, dict[str, FunctionInfo]]
    libraries: dict[tuple[Unit, str], Build]
    lowering_errors: dict[Unit, str]


def _environment(cache: Path, report: Path) -> dict[str, str]:
    """The caller's environment without PYCC_* or build variables, plus a fresh report and a
    private cache (no result of an earlier run is reused: `PYCC_NO_CACHE=1`)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYCC_") and k not in ("CC", "CFLAGS", "LDFLAGS", "MAKEFLAGS")
    }
    env.update(
        PATH=TOOL_PATH,
        LC_ALL="C",
        PYCC_NO_CACHE="1",
        PYCC_CACHE_DIR=str(cache),
        PYCC_REPORT=str(report),
        PYCC_TAKEOVER="all",  # every kernel it can compile: the tests run its code
        PYCC_SERVER_IDLE="60",  # the compile server outlives the tests by a minute
    )
    return env


@pytest.fixture(scope="module")
def builds(request, tmp_path_factory) -> Builds:
    """Every unit the selected tests need lowered once (for the prototypes) and built in each
    of the configurations they need by pycc-stencil and by cc; the builds run in a thread
    pool while the next unit lowers."""
    root = tmp_path_factory.mktemp("compiler-corpus")
    needed = {
        (item.callspec.params["unit"], item.callspec.params["config"])
        for item in request.session.items
        if item.module is request.module and hasattr(item, "callspec")
    }
    infos: dict[Unit, dict[str, FunctionInfo]] = {}
    lowering_errors: dict[Unit, str] = {}
    pending: dict[tuple[Unit, str], tuple[Future, Future, Path]] = {}
    with ThreadPoolExecutor(max_workers=(os.cpu_count() or 2) + 1) as pool:
        for index, (unit, names) in enumerate(UNITS.items()):
            configs = [c for c in unit.configs() if (unit, c) in needed]
            if not configs:
                continue
            try:
                lowered = lower_file(str(unit.path), list(unit.cflags))
                infos[unit] = {name: lowered.functions[name] for name in names}
            except Exception as exc:  # noqa: BLE001 - reported by every test of the unit
                lowering_errors[unit] = f"{type(exc).__name__}: {exc}"
                continue
            functions = list(infos[unit].values())
            for config in configs:
                directory = root / f"{index:02d}-{config}"
                report = directory / "report.jsonl"
                env = _environment(root / "cache", report)
                options = CONFIGS[config]
                futures = [
                    pool.submit(
                        build_library,
                        [compiler, *options],
                        unit.path,
                        list(unit.cflags),
                        functions,
                        directory / side,
                        env,
                    )
                    for compiler, side in ((PYCC, "pycc"), (CC, "cc"))
                ]
                pending[unit, config] = (*futures, report)
        libraries: dict[tuple[Unit, str], Build] = {}
        for key, (pycc, cc, report) in pending.items():
            build = Build()
            for side, future in (("pycc", pycc), ("cc", cc)):
                try:
                    library = future.result()
                except ReferenceBuildError as exc:
                    build.errors.append(f"{side} build failed: {exc}")
                    continue
                setattr(build, side, library)
                prefix = f"PYCC_REPORT={report} " if side == "pycc" else ""
                build.commands.append(prefix + shlex.join(library.command))
            if report.exists():
                build.report = [json.loads(line) for line in report.read_text().splitlines()]
            libraries[key] = build
    return Builds(infos, libraries, lowering_errors)


def _build(builds: Builds, unit: Unit, config: str) -> Build:
    if unit in builds.lowering_errors:
        pytest.fail(f"{unit.label}: the front end fails: {builds.lowering_errors[unit]}")
    build = builds.libraries[unit, config]
    if build.errors:
        pytest.fail("\n".join([*build.errors, *build.commands]), pytrace=False)
    return build


# --------------------------------------------------------------------------------------------
# the tests


@pytest.mark.parametrize("unit, config", list(_unit_configs()))
def test_listed_kernels_are_compiled_by_pycc(builds, unit, config):
    """The report has one line for the file, and every kernel the manifest lists for it was
    compiled by pycc-stencil (the others, with their reasons, are the failure message)."""
    build = _build(builds, unit, config)
    source = str(build.pycc.source)
    lines = [u for u in build.report if u.get("source") == source]
    assert len(lines) == 1, f"expected one report line for {source}: {build.report}"
    (line,) = lines
    functions = {f["name"]: f for f in line["functions"]}
    not_taken = {
        name: (functions[name]["reason"] if name in functions else "missing from the report")
        for name in UNITS[unit]
        if functions.get(name, {}).get("compiled_by") != "pycc-stencil"
    }
    assert not not_taken, (
        f"{unit.label} ({config}): kernels left to cc: {not_taken}; unit status "
        f"{line['status']!r}, reason {line['reason']!r}\n{build.pycc.messages}"
    )
    assert line["status"] == "pycc", line
    assert all(functions[name]["kernel"] for name in UNITS[unit]), line


@pytest.mark.parametrize("config, unit, entry, params", list(_cases()))
def test_pycc_build_is_bit_identical_to_cc(builds, config, unit, entry, params):
    build = _build(builds, unit, config)
    name = entry["function"]
    info = builds.infos[unit][name]
    scalars = scalar_arguments(info, {k: repr(v) for k, v in params.items()})
    specs = _buffer_specs(unit, entry, params, info)
    libraries = {"pycc-stencil": build.pycc, "cc": build.cc}
    buffers = {"pycc-stencil": make_inputs(specs, SEED, name)}
    buffers["cc"] = buffers["pycc-stencil"].copy()
    calls = [
        (libraries[side].function(name), kernel_arguments(info, scalars, buffers[side]))
        for side in libraries
    ]
    try:  # both runs in one child (a fork per run would double the run time)
        results = dict(zip(libraries, run_isolated(lambda: [f(*a) for f, a in calls], TIMEOUT)))
    except ChildFailure:  # which one failed?
        for side, library in libraries.items():
            try:
                fresh = make_inputs(specs, SEED, name)
                call_isolated(library.function(name), info, scalars, fresh, TIMEOUT)
            except ChildFailure as failure:
                pytest.fail(f"the {side} build of {name} {failure}\n" + "\n".join(build.commands))
        raise
    pycc_buffers, cc_buffers = buffers["pycc-stencil"], buffers["cc"]
    context = f"{name}({params}) [{config}]\n" + "\n".join(build.commands)
    assert guard_damage(cc_buffers) is None, f"cc {guard_damage(cc_buffers)}: {context}"
    damage = guard_damage(pycc_buffers)
    assert damage is None, f"pycc-stencil {damage}: {context}"
    comparison = compare_buffers(pycc_buffers, cc_buffers, Tolerance())
    assert comparison.differing == 0, (
        f"{comparison.first} under pycc-stencil, {comparison.differing} of {comparison.total} "
        f"elements differ: {context}"
    )
    returns = np.dtype(entry["returns"]) if entry["returns"] else None
    difference = compare_return_values(results["pycc-stencil"], results["cc"], returns, Tolerance())
    assert difference is None, f"{difference} under pycc-stencil: {context}"
