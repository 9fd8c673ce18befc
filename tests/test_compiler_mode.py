"""Compiler mode (`CC=pycc-stencil`), end to end against the system `cc`.

Every test builds the same input twice, once with plain `cc` and once with `pycc-stencil`
(same arguments, same relative paths, sibling directories), and compares what a user can
see: program output (hex floats and digests, so any bit shows), files produced, diagnostics,
exit statuses. The JSON Lines report (`PYCC_REPORT`) shows which functions pycc-stencil itself
compiled, so a driver that silently hands everything to cc does not pass.

The C projects are in tests/projects/: make_app (Makefile, kernels + a goto fallback),
static_app (same-named static kernels in two files, a dispatch table), cmake_app (CMake,
static library), meson_app (meson), polybench_app (PolyBench style), attr_app (weak,
hidden and section attributes on kernels), codegen_flags (-funsigned-char, -fwrapv).
Tests marked `slow` build a whole project or library; `-m "not slow"` leaves them out.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

PROJECTS = Path(__file__).parent / "projects"
MAKE_APP = PROJECTS / "make_app"
BIN = Path(sys.executable).parent
#: the venv's scripts first (cmake/ninja/meson wheels of the test extra), then the PATH
TOOL_PATH = os.pathsep.join([str(BIN), os.environ.get("PATH", os.defpath)])
PYCC = shutil.which("pycc-stencil", path=TOOL_PATH)
CC = "cc"

#: the loop-nest kernels of make_app/kernels.c: each must be compiled by pycc-stencil
KERNELS = (
    "jacobi2d",
    "smooth3_f32",
    "scale_rows",
    "conv5_f32",
    "soft_clip_f32",
    "box3x3_s16_u8",
    "dot_f64",
)
#: functions of kernels.c that are not kernels (no loops): either compiler may take them
NOT_KERNELS = ("scale_matrix", "clampf")
GOTO_KERNEL = "despeckle_goto"
#: problem sizes given to make_app: odd, prime, degenerate
SIZES = ["1", "2", "7", "31", "100"]
CFLAGS = ["-O2", "-Wall", "-std=c99"]
ALL_SOURCES = ("main.c", "kernels.c", "util.c", "fallback.c")

pytestmark = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")


# --------------------------------------------------------------------------------------------
# helpers


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    """One pycc-stencil cache for the session, never the user's."""
    return tmp_path_factory.mktemp("pycc-cache")


@pytest.fixture
def env(cache_dir) -> dict[str, str]:
    return clean_env(cache_dir)


#: small caches for tests of the `-large` passes' tiled code: 16 KiB tiles, and that code
#: runs from 16 KiB (half the "L3": `Target.locality_threshold`) on grids of a few tens of points
SMALL_CACHES = {"PYCC_CACHE_L2": "16K", "PYCC_CACHE_L3": "32K"}


def clean_env(cache_dir: Path, **extra: str) -> dict[str, str]:
    """The environment without any PYCC_* or build variables of the caller's shell; every
    kernel pycc-stencil can compile is taken over (`PYCC_TAKEOVER=all`), so that the tests
    see its code, unless `extra` says otherwise."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYCC_") and k not in ("CC", "CFLAGS", "LDFLAGS", "MAKEFLAGS")
    }
    env.update(PATH=TOOL_PATH, LC_ALL="C", PYCC_CACHE_DIR=str(cache_dir), PYCC_TAKEOVER="all")
    env.update(PYCC_SERVER_IDLE="60")  # the compile server the tests start outlives them briefly
    env.update(extra)
    return env


def build_both_sides(build, env: dict[str, str], report: Path) -> None:
    """`build(side, compiler, env)` for cc and for pycc-stencil (with the report), at once."""
    with ThreadPoolExecutor(2) as pool:
        jobs = [
            pool.submit(build, "cc", CC, env),
            pool.submit(build, "pycc", PYCC, dict(env, PYCC_REPORT=str(report))),
        ]
        for job in jobs:
            job.result()


def run(
    cmd: Sequence[str | os.PathLike],
    cwd: Path,
    env: dict[str, str],
    check: bool = True,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    cmd = [str(c) for c in cmd]
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and proc.returncode != 0:
        pytest.fail(
            f"`{' '.join(cmd)}` (in {cwd}) exited with {proc.returncode}\n"
            f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}",
            pytrace=False,
        )
    return proc


def read_report(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def units_for(report: list[dict], source_name: str) -> list[dict]:
    return [u for u in report if u.get("source") and Path(u["source"]).name == source_name]


def functions_of(unit: dict) -> dict[str, dict]:
    return {f["name"]: f for f in unit["functions"]}


def assert_compiled_by_pycc(report: list[dict], source: str, names: Sequence[str]) -> dict:
    """The one report unit of `source` says pycc-stencil compiled each of `names`."""
    units = units_for(report, source)
    assert len(units) == 1, f"expected one report line for {source}, got {units}"
    functions = functions_of(units[0])
    for name in names:
        assert name in functions, f"{name} missing from the report of {source}: {units[0]}"
        assert functions[name]["compiled_by"] == "pycc-stencil", (name, functions[name])
        assert functions[name]["kernel"] is True, (name, functions[name])
    return units[0]


def assert_o3_time_tiles(unit: dict, opt: str) -> None:
    """At -O3 (its default passes time-tile-large, fuse-tile-large) make_app's iterated
    stencil jacobi2d is time-tiled; below -O3 no pass runs."""
    jacobi = functions_of(unit)["jacobi2d"]
    tiled = [r for r in jacobi["remarks"] if "remark: time-tiled" in r]
    assert bool(tiled) == (opt == "-O3"), jacobi


def assert_left_to_cc(report: list[dict], source: str, option: str, stderr: str) -> None:
    """`option` is implemented by cc only: the one report unit of `source` gives that reason,
    with no function records (the file is not parsed at all), and the one -Wpycc-fallback
    warning of the file says so (the documented fallback, not a silent one)."""
    units = units_for(report, source)
    assert len(units) == 1, f"expected one report line for {source}, got {units}"
    assert units[0]["status"] == "cc" and not units[0]["functions"], units[0]
    assert units[0]["reason"] == f"'{option}' is implemented by cc only", units[0]
    assert warning_lines(stderr) == [
        f"{source}: warning: '{option}' is implemented by cc only; the file is compiled by cc "
        "[-Wpycc-fallback]"
    ], stderr


def definition(path: Path, name: str) -> tuple[int, int]:
    """1-based line and column of the name in the definition of function `name`."""
    pattern = re.compile(rf"^(?:static\s+|inline\s+)*[a-z_0-9]+\s+\**({re.escape(name)})\s*\(")
    lines = path.read_text().splitlines()
    for number, line in enumerate(lines, start=1):
        match = pattern.match(line)
        if match and not line.rstrip().endswith(";"):
            return number, match.start(1) + 1
    raise AssertionError(f"no definition of {name} in {path}")


def warning_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "warning:" in line]


def fallback_warning_re(source: str, name: str) -> re.Pattern:
    return re.compile(
        rf"^{re.escape(source)}:(\d+):(\d+): warning: '{name}' compiled by cc instead of "
        r"pycc-stencil: (.+) \[-Wpycc-fallback\]$"
    )


@dataclass
class Pair:
    """Sibling copies of make_app: `cc_dir` built with cc, `pycc_dir` with pycc-stencil."""

    cc_dir: Path
    pycc_dir: Path
    env: dict[str, str]
    report: Path

    def both(self, args: Sequence[str], check: bool = True):
        """Run `cc args` in cc_dir and `pycc-stencil args` in pycc_dir (report appended)."""
        env = dict(self.env, PYCC_REPORT=str(self.report))
        with ThreadPoolExecutor(2) as pool:
            ref = pool.submit(run, [CC, *args], self.cc_dir, self.env, check)
            got = pool.submit(run, [PYCC, *args], self.pycc_dir, env, check)
            return ref.result(), got.result()

    def link_and_run(
        self, objects: Sequence[str], replaces: Sequence[str] = ("kernels.c",)
    ) -> tuple[str, str]:
        """Link `objects`, standing for the sources `replaces`, with the cc-built objects of
        the other sources, in both dirs with cc; run both programs on SIZES."""

        def link_run(d: Path) -> str:
            run([CC, "-o", "app", *objects, *support_objects(replaces), "-lm"], d, self.env)
            return run([d / "app", *SIZES], d, self.env).stdout

        with ThreadPoolExecutor(2) as pool:
            ref, got = pool.map(link_run, (self.cc_dir, self.pycc_dir))
        return ref, got

    def reported(self) -> list[dict]:
        return read_report(self.report)


def support_objects(replaced: Sequence[str] = ()) -> list[str]:
    """The cc-built objects (NAME.cc.o) of the make_app sources not in `replaced`."""
    return [f"{Path(s).stem}.cc.o" for s in ALL_SOURCES if s not in replaced]


@pytest.fixture(scope="module")
def support_objs(tmp_path_factory, cache_dir) -> Path:
    """The make_app sources built once by cc, as NAME.cc.o."""
    d = tmp_path_factory.mktemp("support")
    for name in (*ALL_SOURCES, "app.h"):
        shutil.copy(MAKE_APP / name, d)
    env = clean_env(cache_dir)
    for source in ALL_SOURCES:
        run([CC, *CFLAGS, "-c", source, "-o", f"{Path(source).stem}.cc.o"], d, env)
    return d


@pytest.fixture
def pair(tmp_path, env, support_objs) -> Pair:
    dirs = []
    for side in ("cc", "pycc"):
        d = tmp_path / side
        shutil.copytree(MAKE_APP, d, ignore=shutil.ignore_patterns("*.o", "*.d", "app"))
        for obj in support_objs.glob("*.cc.o"):
            shutil.copy(obj, d)
        dirs.append(d)
    return Pair(dirs[0], dirs[1], env, tmp_path / "report.jsonl")


# --------------------------------------------------------------------------------------------
# make_app with make


@dataclass
class MakeBuild:
    cc_dir: Path
    pycc_dir: Path
    cc_stderr: str
    pycc_stderr: str
    report: list[dict]
    env: dict[str, str]


#: the tests of the one make_app build (a module fixture) run on one xdist worker
ON_MAKE_BUILD = pytest.mark.xdist_group("make_app-build")


@pytest.fixture(scope="module")
def make_build(tmp_path_factory, cache_dir) -> MakeBuild:
    """make_app built by `make CC=cc` and by `make CC=pycc-stencil` (with a report)."""
    root = tmp_path_factory.mktemp("make_app")
    report = root / "report.jsonl"
    env = clean_env(cache_dir)
    results = {}

    def build(side: str, cc: str, build_env: dict[str, str]):
        d = root / side
        shutil.copytree(MAKE_APP, d, ignore=shutil.ignore_patterns("*.o", "*.d", "app"))
        results[side] = run(["make", "-j2", f"CC={cc}"], d, build_env)

    build_both_sides(build, env, report)
    return MakeBuild(
        root / "cc",
        root / "pycc",
        results["cc"].stderr,
        results["pycc"].stderr,
        read_report(report),
        env,
    )


@ON_MAKE_BUILD
def test_make_app_same_output_default_size(make_build):
    ref = run(["./app"], make_build.cc_dir, make_build.env).stdout
    got = run(["./app"], make_build.pycc_dir, make_build.env).stdout
    assert "all " in ref
    assert got == ref


@ON_MAKE_BUILD
def test_make_app_bit_identical_on_odd_sizes(make_build):
    ref = run(["./app", *SIZES], make_build.cc_dir, make_build.env).stdout
    got = run(["./app", *SIZES], make_build.pycc_dir, make_build.env).stdout
    assert ref.count("== n=") == len(SIZES)
    for ref_block, got_block in zip(ref.split("== n="), got.split("== n=")):
        assert got_block == ref_block


@ON_MAKE_BUILD
def test_make_app_report_schema(make_build):
    """One JSON line per translation unit, with the contract's keys."""
    report = make_build.report
    for source in ("main.c", "kernels.c", "util.c", "fallback.c"):
        units = units_for(report, source)
        assert len(units) == 1, f"{source}: expected one report line, got {len(units)}"
        unit = units[0]
        for key in ("tool", "version", "source", "output", "status", "reason", "cache"):
            assert key in unit, (source, key)
        assert unit["tool"] == "pycc-stencil"
        assert unit["status"] in ("pycc", "cc", "passthrough"), unit
        assert unit["cache"] in ("hit", "miss", None), unit
        assert Path(unit["output"]).name == source.replace(".c", ".o")
        for f in unit["functions"]:
            assert f["compiled_by"] in ("pycc-stencil", "cc"), f
            assert set(f) >= {"name", "line", "column", "kernel", "passes", "reason"}, f
        assert set(unit["time_ms"]) >= {"total", "frontend", "codegen", "cc"}, unit["time_ms"]


@ON_MAKE_BUILD
def test_make_app_report_kernels_compiled_by_pycc(make_build):
    report = make_build.report
    unit = assert_compiled_by_pycc(report, "kernels.c", KERNELS)
    assert unit["status"] == "pycc"
    functions = functions_of(unit)
    for name in KERNELS:
        line, column = definition(MAKE_APP / "kernels.c", name)
        assert (functions[name]["line"], functions[name]["column"]) == (line, column), name
        assert functions[name]["reason"] is None, functions[name]
    for name in NOT_KERNELS:
        if name in functions:
            assert functions[name]["kernel"] is False, functions[name]


@ON_MAKE_BUILD
def test_make_app_helpers_calling_the_c_library_are_taken_over_as_asked(make_build):
    """util.c's loops call memcpy or printf: calls into the C library, which the front end
    lowers as calls another object answers, so under PYCC_TAKEOVER=all each function with
    a loop is taken over (the program still prints cc's output: test_make_app_same_output_*);
    those without a loop stay cc's silently, kernel=false."""
    (unit,) = units_for(make_build.report, "util.c")
    functions = functions_of(unit)
    looping = {"fill_bytes", "fill_f64", "fill_f32", "digest", "print_f32_samples"}
    for name, f in functions.items():
        if name in looping | {"print_f64_samples"}:
            assert f["compiled_by"] == "pycc-stencil" and f["kernel"] is True, f
        else:
            assert f["compiled_by"] == "cc" and f["kernel"] is False, f
            assert f["reason"] == "no loops (not a loop-nest kernel)", f
    assert looping < set(functions), functions


@ON_MAKE_BUILD
def test_make_app_goto_kernel_falls_back_to_cc(make_build):
    (unit,) = units_for(make_build.report, "fallback.c")
    functions = functions_of(unit)
    assert GOTO_KERNEL in functions, unit
    f = functions[GOTO_KERNEL]
    assert f["compiled_by"] == "cc"
    assert f["kernel"] is True
    assert f["reason"] and "goto" in f["reason"], f
    assert (f["line"], f["column"]) == definition(MAKE_APP / "fallback.c", GOTO_KERNEL)


def naming(lines: list[str], name: str) -> list[str]:
    return [line for line in lines if f"'{name}'" in line]


@ON_MAKE_BUILD
def test_make_app_exactly_one_fallback_warning(make_build):
    assert warning_lines(make_build.cc_stderr) == [], make_build.cc_stderr
    warnings = naming(warning_lines(make_build.pycc_stderr), GOTO_KERNEL)
    assert len(warnings) == 1, make_build.pycc_stderr
    match = fallback_warning_re("fallback.c", GOTO_KERNEL).match(warnings[0])
    assert match, warnings[0]
    # at the function or at the construct that stopped pycc-stencil, inside the function
    first, _ = definition(MAKE_APP / "fallback.c", GOTO_KERNEL)
    last = len((MAKE_APP / "fallback.c").read_text().splitlines())
    assert first <= int(match.group(1)) <= last, warnings[0]
    assert "goto" in match.group(3)


@ON_MAKE_BUILD
def test_make_app_no_other_warnings(make_build):
    """main.c and util.c hold no kernels (their loops call printf/malloc/memcpy): silent."""
    others = [w for w in warning_lines(make_build.pycc_stderr) if f"'{GOTO_KERNEL}'" not in w]
    assert others == []


@ON_MAKE_BUILD
def test_make_app_dependency_files_match(make_build):
    for name in ("main.d", "kernels.d", "util.d", "fallback.d"):
        ref = (make_build.cc_dir / name).read_text()
        assert (make_build.pycc_dir / name).read_text() == ref, name


@ON_MAKE_BUILD
def test_make_app_incremental_rebuild_is_up_to_date(make_build):
    """The .o and .d files pycc-stencil wrote are what make expects: nothing to redo."""
    proc = run(["make", "-q", f"CC={PYCC}"], make_build.pycc_dir, make_build.env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_static_kernels_same_name_and_dispatch_table(tmp_path, env):
    """static_app: a static `blur` in two files linked together, static kernels reached only
    through a const table of function pointers, a kernel called through a pointer."""
    outputs, stderr = [], []
    report = tmp_path / "report.jsonl"
    for side, compiler in (("cc", CC), ("pycc", PYCC)):
        d = tmp_path / side
        shutil.copytree(PROJECTS / "static_app", d)
        proc = run(["make", f"CC={compiler}"], d, dict(env, PYCC_REPORT=str(report)))
        stderr.append(proc.stderr)
        outputs.append(run(["./app"], d, env).stdout)
    assert "sharpen:" in outputs[0]
    assert outputs[1] == outputs[0]
    report_lines = read_report(report)
    assert_compiled_by_pycc(report_lines, "filters_a.c", ["blur", "sharpen"])
    assert_compiled_by_pycc(report_lines, "filters_b.c", ["blur", "invert"])
    # main has loops but calls printf: not a kernel, so no fallback warning
    assert warning_lines(stderr[1]) == warning_lines(stderr[0]) == [], stderr[1]


def _kernel_symbols(obj: Path, env) -> dict[str, tuple[str, str, str]]:
    """k_* symbols of an object: binding/type flags, section, visibility (objdump -t)."""
    symbols = {}
    for line in run(["objdump", "-t", obj.name], obj.parent, env).stdout.splitlines():
        match = re.match(r"^[0-9a-f]+ (.{7}) (\S+)\s+[0-9a-f]+\s+(?:(\.\w+) )?(k_\w+)$", line)
        if match:
            flags, section, visibility, name = match.groups()
            symbols[name] = (" ".join(flags.split()), section, visibility or "")
    return symbols


@pytest.mark.skipif(shutil.which("objdump") is None, reason="binutils not installed")
def test_kernel_attributes_weak_hidden_section(tmp_path, env):
    """attr_app: weak, hidden and section attributes of kernels survive, as cc keeps them."""
    dirs = {}
    results = {}
    report = tmp_path / "report.jsonl"
    for side, compiler in (("cc", CC), ("pycc", PYCC)):
        d = dirs[side] = tmp_path / side
        shutil.copytree(PROJECTS / "attr_app", d)
        e = dict(env, PYCC_REPORT=str(report))
        results[side] = run(["make", f"CC={compiler}", "kernels.o"], d, e)
    ref_symbols = _kernel_symbols(dirs["cc"] / "kernels.o", env)
    assert ref_symbols["k_weak"][0] == "w F"
    assert ref_symbols["k_hidden"][2] == ".hidden"
    assert ref_symbols["k_section"][1] == ".text.fast"
    assert _kernel_symbols(dirs["pycc"] / "kernels.o", env) == ref_symbols
    assert results["pycc"].stderr == results["cc"].stderr

    outputs = []
    for side, compiler in (("cc", CC), ("pycc", PYCC)):
        run(["make", f"CC={compiler}", "app", "libkernels.so"], dirs[side], env)
        outputs.append(run(["./app"], dirs[side], env).stdout)
    assert outputs[1] == outputs[0]  # strong.c's k_weak replaced the weak default
    exported = [
        run(["nm", "-D", "--defined-only", "libkernels.so"], dirs[side], env).stdout
        for side in ("cc", "pycc")
    ]
    names = [sorted(re.findall(r" (k_\w+)$", text, re.M)) for text in exported]
    assert "k_hidden" not in names[0]
    assert names[1] == names[0]


# --------------------------------------------------------------------------------------------
# CMake and meson


def _configure_build_cmake(src: Path, build: Path, compiler: str, env: dict[str, str]) -> None:
    cmake = shutil.which("cmake", path=TOOL_PATH)
    generator = ["-G", "Ninja"] if shutil.which("ninja", path=TOOL_PATH) else []
    run(
        [
            cmake,
            "-S",
            src,
            "-B",
            build,
            *generator,
            f"-DCMAKE_C_COMPILER={compiler}",
            "-DCMAKE_BUILD_TYPE=Release",
        ],
        build.parent,
        env,
    )
    run([cmake, "--build", build], build.parent, env)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cmake", path=TOOL_PATH) is None, reason="cmake not installed")
def test_cmake_project(tmp_path, env):
    src = PROJECTS / "cmake_app"
    report = tmp_path / "report.jsonl"
    pycc_env = dict(env, PYCC_REPORT=str(report))
    with ThreadPoolExecutor(2) as pool:
        jobs = [
            pool.submit(_configure_build_cmake, src, tmp_path / "cc", CC, env),
            pool.submit(_configure_build_cmake, src, tmp_path / "pycc", PYCC, pycc_env),
        ]
        for job in jobs:
            job.result()
    for args in ([], ["1"], ["2"], ["17"], ["64"]):
        ref = run([tmp_path / "cc" / "cmake_app", *args], tmp_path, env).stdout
        got = run([tmp_path / "pycc" / "cmake_app", *args], tmp_path, env).stdout
        assert "heat1d" in ref
        assert got == ref, args
    assert_compiled_by_pycc(
        read_report(report), "stencils.c", ["heat1d_f64", "blur3x3_f32", "threshold_u8"]
    )


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("meson", path=TOOL_PATH) is None, reason="meson not installed")
@pytest.mark.skipif(shutil.which("ninja", path=TOOL_PATH) is None, reason="ninja not installed")
def test_meson_project(tmp_path, env):
    src = PROJECTS / "meson_app"
    meson = shutil.which("meson", path=TOOL_PATH)
    report = tmp_path / "report.jsonl"

    def build(side: str, compiler: str, build_env: dict[str, str]) -> None:
        build_env = dict(build_env, CC=compiler)
        run([meson, "setup", tmp_path / side, src], tmp_path, build_env)
        run([meson, "compile", "-C", tmp_path / side], tmp_path, build_env)

    build_both_sides(build, env, report)
    for args in ([], ["1"], ["3"], ["50"]):
        ref = run([tmp_path / "cc" / "meson_app", *args], tmp_path, env).stdout
        got = run([tmp_path / "pycc" / "meson_app", *args], tmp_path, env).stdout
        assert "wave1d" in ref
        assert got == ref, args
    assert_compiled_by_pycc(read_report(report), "wave.c", ["wave1d", "laplace2d"])


# --------------------------------------------------------------------------------------------
# flag matrix: each against plain cc on the same input


def test_c_with_custom_output_name(pair):
    pair.both([*CFLAGS, "-c", "kernels.c", "-o", "custom.o"])
    assert (pair.pycc_dir / "custom.o").is_file()
    assert not (pair.pycc_dir / "kernels.o").exists()
    unit = assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    assert Path(unit["output"]).name == "custom.o"
    ref_out, got_out = pair.link_and_run(["custom.o"])
    assert got_out == ref_out


def test_c_objects_named_after_sources(pair):
    """-c without -o, two sources: kernels.o and fallback.o, as cc names them."""
    ref, got = pair.both([*CFLAGS, "-c", "kernels.c", "fallback.c"])
    for name in ("kernels.o", "fallback.o"):
        assert (pair.pycc_dir / name).is_file(), name
    assert ref.stderr == ""
    assert len(naming(warning_lines(got.stderr), GOTO_KERNEL)) == 1, got.stderr
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    ref_out, got_out = pair.link_and_run(["kernels.o", "fallback.o"], ("kernels.c", "fallback.c"))
    assert got_out == ref_out


def test_S_assembly_assembles_and_links(pair):
    pair.both([*CFLAGS, "-S", "kernels.c"])
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    assert (pair.pycc_dir / "kernels.s").is_file()
    assert not (pair.pycc_dir / "kernels.o").exists()
    for d in (pair.cc_dir, pair.pycc_dir):
        text = (d / "kernels.s").read_text()
        for name in ("jacobi2d", "dot_f64", "scale_matrix"):
            assert re.search(rf"^{name}:", text, re.M), (d, name)
        run([CC, "-c", "kernels.s", "-o", "from_asm.o"], d, pair.env)
    ref_out, got_out = pair.link_and_run(["from_asm.o"])
    assert got_out == ref_out


def test_E_preprocessed_text_identical(pair):
    ref, got = pair.both(["-std=c99", "-DSMOOTH_CENTER=0.375f", "-E", "kernels.c"])
    assert "0.375f" in ref.stdout
    assert got.stdout == ref.stdout
    assert got.stderr == ref.stderr
    pair.both(["-std=c99", "-E", "kernels.c", "-o", "kernels.i"])
    assert (pair.pycc_dir / "kernels.i").read_text() == (pair.cc_dir / "kernels.i").read_text()


@pytest.mark.parametrize(
    "flags, depfile",
    [
        (["-MMD", "-MF", "x.d", "-MT", "tgt"], "x.d"),
        (["-MD", "-MP", "-MF", "deps/k.d", "-MQ", "$(OBJ)/k.o"], "deps/k.d"),
    ],
    ids=["MMD-MF-MT", "MD-MP-MF-MQ"],  # -MMD -MP: make_app; -MD -MT -MF: CMake with Ninja
)
def test_dependency_file_identical(pair, flags, depfile):
    for d in (pair.cc_dir, pair.pycc_dir):
        (d / "deps").mkdir()
    pair.both([*CFLAGS, "-c", "kernels.c", *flags])
    ref = (pair.cc_dir / depfile).read_text()
    assert "app.h" in ref
    assert (pair.pycc_dir / depfile).read_text() == ref
    assert sorted(p.name for p in pair.pycc_dir.rglob("*.d")) == sorted(
        p.name for p in pair.cc_dir.rglob("*.d")
    )
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)


@pytest.mark.parametrize(
    "flags",
    [["-MMD", "-o", "out/app.exe"], ["-MD"], ["-MMD", "-MF", "x.d", "-o", "out/app"],
     ["-MD", "-MF", "x.d"]],
    ids=["MMD-o", "MD-a.out", "MMD-MF-o", "MD-MF"],
)  # fmt: skip
def test_dependency_files_of_a_command_that_links(pair, flags):
    """Compiling and linking in one command, gcc 12 names the dependency file after `-o`
    (`out/app.d`, target `out/app`, rewritten by each input) or, without it, `a-<input>.d`
    with the target `<input>.o`; pycc-stencil used the latter's names in both cases."""
    for d in (pair.cc_dir, pair.pycc_dir):
        (d / "out").mkdir()
    sources = ["main.c", "kernels.c", "util.c", "fallback.c"]
    pair.both(["-O3", "-std=c99", *flags, *sources, "-lm"])
    written = {p.relative_to(pair.cc_dir): p.read_text() for p in pair.cc_dir.rglob("*.d")}
    assert written and all("app.h" in text for text in written.values())
    assert {p.relative_to(pair.pycc_dir): p.read_text() for p in pair.pycc_dir.rglob("*.d")} == (
        written
    )
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)


@pytest.mark.parametrize("flags", [["-M"], ["-MM"], ["-MM", "-MT", "t"]], ids=["M", "MM", "MM-MT"])
def test_M_dependencies_on_stdout(pair, flags):
    ref, got = pair.both(["-std=c99", *flags, "kernels.c"])
    assert "kernels.o" in ref.stdout or "t:" in ref.stdout
    assert got.stdout == ref.stdout
    assert not (pair.pycc_dir / "kernels.o").exists()
    assert not (pair.pycc_dir / "a.out").exists()


def test_link_several_c_files_in_one_command(pair):
    sources = ["main.c", "kernels.c", "util.c", "fallback.c"]
    ref, got = pair.both([*CFLAGS, *sources, "-o", "app", "-lm"])
    assert warning_lines(ref.stderr) == []
    warnings = naming(warning_lines(got.stderr), GOTO_KERNEL)
    assert len(warnings) == 1, got.stderr
    assert fallback_warning_re("fallback.c", GOTO_KERNEL).match(warnings[0]), warnings[0]
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    ref_out = run(["./app", *SIZES], pair.cc_dir, pair.env).stdout
    got_out = run(["./app", *SIZES], pair.pycc_dir, pair.env).stdout
    assert got_out == ref_out
    # no intermediate objects are left behind, as with cc
    assert sorted(p.name for p in pair.pycc_dir.glob("*.o")) == sorted(
        p.name for p in pair.cc_dir.glob("*.o")
    )


def _shared_lib_results(lib_path: Path) -> dict[str, bytes]:
    """Call every exported kernel of kernels.c in `lib_path` on odd sizes; raw result bytes."""
    lib = ctypes.CDLL(str(lib_path))
    f32p = np.ctypeslib.ndpointer(np.float32, flags="C_CONTIGUOUS")
    f64p = np.ctypeslib.ndpointer(np.float64, flags="C_CONTIGUOUS")
    i16p = np.ctypeslib.ndpointer(np.int16, flags="C_CONTIGUOUS")
    u8p = np.ctypeslib.ndpointer(np.uint8, flags="C_CONTIGUOUS")
    c_int, c_float = ctypes.c_int, ctypes.c_float
    lib.jacobi2d.argtypes = [c_int, c_int, f64p, f64p]
    lib.smooth3_f32.argtypes = [c_int, f32p, f32p]
    lib.scale_matrix.argtypes = [c_int, c_int, f32p, c_float]
    lib.conv5_f32.argtypes = [c_int, f32p, f32p]
    lib.soft_clip_f32.argtypes = [c_int, f32p, f32p, c_float]
    lib.box3x3_s16_u8.argtypes = [c_int, c_int, i16p, u8p, c_int]
    lib.dot_f64.argtypes = [c_int, f64p, f64p]
    lib.dot_f64.restype = ctypes.c_double
    for f in (lib.jacobi2d, lib.smooth3_f32, lib.scale_matrix, lib.conv5_f32, lib.soft_clip_f32):
        f.restype = None
    lib.box3x3_s16_u8.restype = None

    rng = np.random.default_rng(20261122)
    out: dict[str, bytes] = {}
    for n in (1, 2, 3, 7, 31, 97, 101):
        a = rng.standard_normal((n, n)) * 100.0
        b = a.copy()
        lib.jacobi2d(n, 5, a, b)
        out[f"jacobi2d/{n}"] = a.tobytes() + b.tobytes()

        x = (rng.standard_normal(n) * 1e3).astype(np.float32)
        y = np.full(n, np.float32(-7.0))
        lib.smooth3_f32(n, x, y)
        out[f"smooth3/{n}"] = y.tobytes()
        lib.conv5_f32(n, x, y)
        out[f"conv5/{n}"] = y.tobytes()
        lib.soft_clip_f32(n, x, y, 0.875)
        out[f"soft_clip/{n}"] = y.tobytes()

        m = (rng.standard_normal((n, n + 4)) * 10).astype(np.float32)
        lib.scale_matrix(n, n + 4, m, -1.3)
        out[f"scale_matrix/{n}"] = m.tobytes()

        src = rng.integers(-32768, 32768, size=(n, n + 2), dtype=np.int16)
        dst = np.full((n, n + 2), 77, dtype=np.uint8)
        for shift in (0, 4, 9):
            lib.box3x3_s16_u8(n, n + 2, src, dst, shift)
            out[f"box3x3/{n}/{shift}"] = dst.tobytes()

        u, v = rng.standard_normal(n * 3), rng.standard_normal(n * 3)
        out[f"dot/{n}"] = np.float64(lib.dot_f64(n * 3, u, v)).tobytes()
    return out


@pytest.mark.slow
def test_shared_fpic_library_bit_identical(pair):
    pair.both([*CFLAGS, "-shared", "-fPIC", "kernels.c", "-o", "libkernels.so"])
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    ref = _shared_lib_results(pair.cc_dir / "libkernels.so")
    got = _shared_lib_results(pair.pycc_dir / "libkernels.so")
    assert got.keys() == ref.keys()
    differing = [key for key in ref if got[key] != ref[key]]
    assert not differing, f"results differ from cc's library for {differing}"


def _sections(obj: Path, env) -> set[str]:
    out = run(["readelf", "-S", "-W", obj], obj.parent, env).stdout
    return set(re.findall(r"\]\s+(\.\S+)", out))


@pytest.mark.skipif(shutil.which("readelf") is None, reason="binutils not installed")
def test_g_debug_info_for_kernels(pair):
    pair.both([*CFLAGS, "-g", "-c", "kernels.c", "-o", "kernels_g.o"])
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    sections = _sections(pair.pycc_dir / "kernels_g.o", pair.env)
    assert {".debug_info", ".debug_line"} <= sections, sections
    # the code at each kernel's address has line information inside that kernel's body
    d = pair.pycc_dir
    run(
        [CC, "-g", "-o", "app_g", "kernels_g.o", *support_objects(["kernels.c"]), "-lm"],
        d,
        pair.env,
    )
    symbols = {}
    for line in run(["nm", "app_g"], d, pair.env).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            symbols[parts[2]] = parts[0]
    source_lines = (MAKE_APP / "kernels.c").read_text().splitlines()
    starts = sorted(definition(MAKE_APP / "kernels.c", n)[0] for n in (*KERNELS, *NOT_KERNELS))
    for name in [k for k in KERNELS if k != "scale_rows"]:
        where = run(["addr2line", "-e", "app_g", symbols[name]], d, pair.env).stdout.strip()
        file, _, line = where.rpartition(":")
        assert Path(file).name == "kernels.c", (name, where)
        first = definition(MAKE_APP / "kernels.c", name)[0]
        end = next((s for s in starts if s > first), len(source_lines) + 1)
        assert first <= int(line.split()[0]) < end, (name, where)
    ref_out, got_out = pair.link_and_run(["kernels_g.o"])
    assert got_out == ref_out


def test_response_file(pair):
    """gcc's @file: quoting, a define with spaces, a nested response file."""
    for d in (pair.cc_dir, pair.pycc_dir):
        (d / "args.rsp").write_text('-O2 -std=c99\n"-DSMOOTH_CENTER=(0.5f + 0.125f)"\n@more.rsp\n')
        (d / "more.rsp").write_text("-c kernels.c -o 'from rsp.o'\n")
    pair.both(["@args.rsp"])
    assert (pair.pycc_dir / "from rsp.o").is_file()
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    ref_out, got_out = pair.link_and_run(["from rsp.o"])
    assert got_out == ref_out


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["-v"],
        ["-dumpmachine"],
        ["-dumpversion"],
        ["-print-file-name=include"],
        ["-print-search-dirs"],
        ["-std=c99", "-fsyntax-only", "kernels.c"],
        ["-E", "-dM", "-x", "c", "/dev/null"],
    ],
    ids=lambda a: " ".join(a),
)
def test_information_options_same_as_cc(pair, args):
    ref, got = pair.both(args)
    assert got.returncode == ref.returncode == 0
    assert got.stdout == ref.stdout
    assert got.stderr == ref.stderr
    assert sorted(p.name for p in pair.pycc_dir.iterdir()) == sorted(
        p.name for p in pair.cc_dir.iterdir()
    )


def test_dry_run_creates_nothing(pair):
    ref, got = pair.both(["-###", "-O2", "-c", "kernels.c", "-o", "k.o"])
    assert got.returncode == ref.returncode == 0
    assert not (pair.pycc_dir / "k.o").exists()


def test_x_c_other_suffix_and_paths_with_spaces(pair):
    for d in (pair.cc_dir, pair.pycc_dir):
        (d / "src dir").mkdir()
        (d / "out dir").mkdir()
        shutil.copy(d / "kernels.c", d / "src dir" / "my kernels.kern")
    pair.both(
        [*CFLAGS, "-I.", "-MMD", "-x", "c", "-c", "src dir/my kernels.kern", "-o", "out dir/k o.o"]
    )
    assert_compiled_by_pycc(pair.reported(), "my kernels.kern", KERNELS)
    ref_dep = (pair.cc_dir / "out dir" / "k o.d").read_text()
    assert (pair.pycc_dir / "out dir" / "k o.d").read_text() == ref_dep
    ref_out, got_out = pair.link_and_run(["out dir/k o.o"])
    assert got_out == ref_out


def test_object_and_assembly_inputs_pass_through(pair):
    for d in (pair.cc_dir, pair.pycc_dir):
        run([CC, *CFLAGS, "-S", "fallback.c", "-o", "fallback_in.s"], d, pair.env)
    objects = ["main.cc.o", "util.cc.o"]
    pair.both([*CFLAGS, *objects, "kernels.c", "fallback_in.s", "-lm"])  # to a.out
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    assert not units_for(pair.reported(), "fallback_in.s") or all(
        u["status"] == "passthrough" for u in units_for(pair.reported(), "fallback_in.s")
    )
    assert not (pair.pycc_dir / "kernels.o").exists()
    ref_out = run(["./a.out", *SIZES], pair.cc_dir, pair.env).stdout
    got_out = run(["./a.out", *SIZES], pair.pycc_dir, pair.env).stdout
    assert got_out == ref_out


def test_cpp_and_assembly_compiled_untouched(pair):
    """Non-C inputs go to cc as they are: the very same objects as cc's."""
    for d in (pair.cc_dir, pair.pycc_dir):
        (d / "helper.cpp").write_text(
            "#include <vector>\n"
            'extern "C" int helper_sum(int n) {\n'
            "    std::vector<int> v(n, 3);\n"
            "    int s = 0;\n"
            "    for (int x : v) s += x;\n"
            "    return s;\n"
            "}\n"
        )
        run([CC, "-O2", "-S", "util.c", "-o", "util_in.s"], d, pair.env)
    if run(
        [CC, "-O2", "-c", "helper.cpp", "-o", "probe.o"], pair.cc_dir, pair.env, False
    ).returncode:
        pytest.skip("cc cannot compile C++ here")
    pair.both(["-O2", "-c", "helper.cpp", "-o", "helper.o"])
    pair.both(["-O2", "-c", "util_in.s", "-o", "util_in.o"])
    for name in ("helper.o", "util_in.o"):
        assert (pair.pycc_dir / name).read_bytes() == (pair.cc_dir / name).read_bytes(), name


@pytest.mark.parametrize("opt", ["-O0", "-O2", "-O3", "-Os"])
def test_optimization_levels(pair, opt):
    pair.both([opt, "-std=c99", "-c", "kernels.c", "-o", "k.o"])
    unit = assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    assert_o3_time_tiles(unit, opt)
    ref_out, got_out = pair.link_and_run(["k.o"])
    assert got_out == ref_out


@pytest.mark.parametrize("std", ["-std=gnu11"])  # -std=c99: CFLAGS, every other test
def test_language_standards(pair, std):
    pair.both(["-O2", std, "-c", "kernels.c", "-o", "k.o"])
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    ref_out, got_out = pair.link_and_run(["k.o"])
    assert got_out == ref_out


@pytest.mark.parametrize(
    "flags",
    [
        ["-DSMOOTH_CENTER=0.625f", "-D", "SMOOTH_SIDE=0.1875f"],
        # -U after -D wins; -include comes after both
        ["-DSMOOTH_SIDE=0.5f", "-USMOOTH_SIDE", "-include", "cfg.h"],
    ],
    ids=["D", "U-include"],
)
def test_preprocessor_flags_change_kernel_constant(pair, flags):
    for d in (pair.cc_dir, pair.pycc_dir):
        (d / "cfg.h").write_text("#define SMOOTH_CENTER 0.625f\n")
    run([CC, "-o", "default", *support_objects(), "-lm"], pair.cc_dir, pair.env)
    default_out = run(["./default", *SIZES], pair.cc_dir, pair.env).stdout
    pair.both([*CFLAGS, *flags, "-c", "kernels.c"])
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    ref_out, got_out = pair.link_and_run(["kernels.o"])
    assert got_out == ref_out

    def smooth_lines(text):
        return [line for line in text.splitlines() if line.startswith("smooth3_f32")]

    assert smooth_lines(got_out) != smooth_lines(default_out)


@pytest.mark.skipif(
    not {"avx2", "fma"} <= set(Path("/proc/cpuinfo").read_text().split())
    if Path("/proc/cpuinfo").exists()
    else True,
    reason="the CPU cannot run x86-64-v3 code",
)
def test_march_x86_64_v3_iso_c(pair):
    """AVX2 + FMA code on both sides; ISO C mode means no contraction: same bits."""
    pair.both(["-O3", "-std=c99", "-march=x86-64-v3", "-c", "kernels.c", "-o", "k.o"])
    unit = assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    assert_o3_time_tiles(unit, "-O3")
    ref_out, got_out = pair.link_and_run(["k.o"])
    assert got_out == ref_out


@pytest.mark.parametrize(
    "flags", [["-funsigned-char"], ["-fwrapv", "-DWRAPV"]], ids=["unsigned-char", "fwrapv"]
)
def test_flags_that_change_c_semantics(tmp_path, env, flags):
    """codegen_flags: plain char signedness and wrapping signed overflow follow the flags."""
    outputs = []
    report = tmp_path / "report.jsonl"
    for side, compiler in (("cc", CC), ("pycc", PYCC)):
        d = tmp_path / side
        shutil.copytree(PROJECTS / "codegen_flags", d)
        run([compiler, "-O2", *flags, "-c", "semantics.c"], d, dict(env, PYCC_REPORT=str(report)))
        run([CC, "-O2", *flags, "main.c", "semantics.o", "-o", "app"], d, env)
        outputs.append(run(["./app"], d, env).stdout)
    assert outputs[1] == outputs[0]
    # honoured by pycc-stencil itself, not by a fallback to cc
    assert_compiled_by_pycc(read_report(report), "semantics.c", ["char_levels", "headroom"])


def test_function_sections_like_cc(pair):
    """-ffunction-sections: each kernel in its own .text.NAME section (for --gc-sections and
    linker scripts), as cc places it."""
    pair.both(["-O2", "-ffunction-sections", "-c", "kernels.c", "-o", "k.o"])
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    sections = []
    for d in (pair.cc_dir, pair.pycc_dir):
        text = run(["readelf", "-S", "-W", "k.o"], d, pair.env).stdout
        sections.append(sorted(set(re.findall(r"\.text\.\w+", text))))
    assert ".text.jacobi2d" in sections[0]
    # cc may inline a static kernel into its caller (scale_rows into scale_matrix); once
    # pycc-stencil compiled it, it is a function of its own, in a section of its own
    assert set(sections[0]) <= set(sections[1])
    assert set(sections[1]) - set(sections[0]) <= {".text.scale_rows"}


#: the kernels of kernels.c with external linkage (a symbol of their own in the object)
EXTERNAL_KERNELS = [k for k in KERNELS if k != "scale_rows"]


def _canary(obj: Path, name: str, env) -> bool:
    """Does the code of function `name` in `obj` check a stack canary?"""
    out = run(["objdump", "-dr", f"--disassemble={name}", obj.name], obj.parent, env).stdout
    assert f"<{name}>:" in out, out
    return "__stack_chk_fail" in out


@pytest.mark.parametrize(
    "flags",
    [
        # Debian's dpkg-buildflags for a package build
        [
            "-g",
            "-O2",
            "-fstack-protector-strong",
            "-Wformat",
            "-Werror=format-security",
            "-D_FORTIFY_SOURCE=2",
        ],
        ["-O2", "-fstack-protector-all"],
        ["-O2", "-fstack-clash-protection"],
        ["-O2", "-fPIE"],
    ],
    ids=["debian-buildflags", "stack-protector-all", "stack-clash-protection", "PIE"],
)
def test_hardening_flags_no_internal_error(pair, flags):
    """pycc-stencil compiles every kernel under the hardening flags distributions build
    with (no fallback to cc), with stack canaries where cc puts them (in every function
    with -fstack-protector-all), and the program prints what cc's prints."""
    ref, got = pair.both([*flags, "-c", "kernels.c", "-o", "k.o"])
    assert "internal error" not in got.stderr, got.stderr
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    if shutil.which("objdump"):
        for name in EXTERNAL_KERNELS:
            want = _canary(pair.cc_dir / "k.o", name, pair.env)
            assert _canary(pair.pycc_dir / "k.o", name, pair.env) == want, name
            assert want or "-fstack-protector-all" not in flags, name
    ref_out, got_out = pair.link_and_run(["k.o"])
    assert got_out == ref_out


def test_pie_program_with_relro_and_now(pair):
    """A position-independent executable linked with -z relro -z now by pycc-stencil."""
    flags = [*CFLAGS, "-fPIE", "-pie", "-Wl,-z,relro,-z,now"]
    pair.both([*flags, *ALL_SOURCES, "-o", "app", "-lm"])
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    ref_out = run(["./app", *SIZES], pair.cc_dir, pair.env).stdout
    got_out = run(["./app", *SIZES], pair.pycc_dir, pair.env).stdout
    assert got_out == ref_out
    if shutil.which("readelf"):
        dynamic = run(["readelf", "-d", "-W", "app"], pair.pycc_dir, pair.env).stdout
        assert "BIND_NOW" in dynamic or "(NOW)" in dynamic, dynamic


def test_save_temps_like_cc(pair):
    """-save-temps is cc's alone: every kernel goes to cc with the fallback warning."""
    ref, got = pair.both([*CFLAGS, "-save-temps", "-c", "kernels.c"])
    assert sorted(p.name for p in pair.pycc_dir.iterdir()) == sorted(
        p.name for p in pair.cc_dir.iterdir()
    )
    assert_left_to_cc(pair.reported(), "kernels.c", "-save-temps", got.stderr)


@pytest.mark.parametrize("option", ["-flto", "-ftrapv"])
def test_flto_works_like_cc(pair, option):
    """Options only cc implements (README): every kernel goes to cc with one
    -Wpycc-fallback warning naming the option; the program is cc's, and works."""
    ref, got = pair.both(["-O2", option, "-c", "kernels.c", "-o", "k.o"])
    assert_left_to_cc(pair.reported(), "kernels.c", option, got.stderr)
    outputs = []
    for d in (pair.cc_dir, pair.pycc_dir):
        run(
            [CC, "-O2", option, "-o", "app", "k.o", *support_objects(["kernels.c"]), "-lm"],
            d,
            pair.env,
        )
        outputs.append(run(["./app", *SIZES], d, pair.env).stdout)
    assert outputs[1] == outputs[0]


def test_source_from_stdin(pair):
    outputs = []
    for compiler, d in ((CC, pair.cc_dir), (PYCC, pair.pycc_dir)):
        with open(d / "kernels.c") as stdin:
            proc = subprocess.run(
                [compiler, *CFLAGS, "-x", "c", "-c", "-", "-o", "k.o"],
                cwd=d,
                env=dict(pair.env, PYCC_REPORT=str(pair.report)),
                stdin=stdin,
                capture_output=True,
                text=True,
                timeout=300,
            )
        outputs.append(proc)
    assert outputs[1].returncode == outputs[0].returncode == 0, outputs[1].stderr
    ref_out, got_out = pair.link_and_run(["k.o"])
    assert got_out == ref_out
    # a source read from stdin goes to cc unchanged (README): nothing for the report
    assert not pair.reported()


def test_ccache_style_compiler_argument(pair):
    env = dict(pair.env, PYCC_REPORT=str(pair.report))
    run([PYCC, CC, *CFLAGS, "-c", "kernels.c", "-o", "k.o"], pair.pycc_dir, env)
    run([CC, *CFLAGS, "-c", "kernels.c", "-o", "k.o"], pair.cc_dir, pair.env)
    assert_compiled_by_pycc(pair.reported(), "kernels.c", KERNELS)
    ref_out, got_out = pair.link_and_run(["k.o"])
    assert got_out == ref_out


def test_report_option_instead_of_environment(pair):
    option_report = pair.pycc_dir / "opt-report.jsonl"
    run(
        [PYCC, *CFLAGS, f"-fpycc-report={option_report}", "-c", "kernels.c"],
        pair.pycc_dir,
        pair.env,
    )
    assert_compiled_by_pycc(read_report(option_report), "kernels.c", KERNELS)


# --------------------------------------------------------------------------------------------
# environment switches


def test_pycc_disable_is_pure_cc(pair):
    env = dict(pair.env, PYCC_DISABLE="1", PYCC_REPORT=str(pair.report), PYCC_VERBOSE="1")
    got = run([PYCC, *CFLAGS, "-c", "kernels.c", "-o", "k.o"], pair.pycc_dir, env)
    ref = run([CC, *CFLAGS, "-c", "kernels.c", "-o", "k.o"], pair.cc_dir, pair.env)
    assert got.stderr == ref.stderr == ""
    # gcc is deterministic: the very same object file
    assert (pair.pycc_dir / "k.o").read_bytes() == (pair.cc_dir / "k.o").read_bytes()
    assert not any(u.get("status") == "pycc" for u in pair.reported())
    got = run([PYCC, *CFLAGS, "-c", "fallback.c", "-o", "f.o"], pair.pycc_dir, env)
    assert got.stderr == ""


def test_pycc_verbose_one_line_per_kernel(pair):
    env = dict(pair.env, PYCC_VERBOSE="1")
    quiet = run([PYCC, *CFLAGS, "-c", "kernels.c", "-o", "quiet.o"], pair.pycc_dir, pair.env)
    assert quiet.stderr == ""
    got = run([PYCC, *CFLAGS, "-c", "kernels.c", "-o", "k.o"], pair.pycc_dir, env)
    lines = got.stderr.splitlines()
    remark = re.compile(r"^kernels\.c:(\d+):(\d+): remark: '(\w+)' (.+)$")
    seen: dict[str, list[str]] = {}
    for line in lines:
        match = remark.match(line)
        assert match, f"unexpected stderr line {line!r}"
        seen.setdefault(match.group(3), []).append(line)
    for name in KERNELS:
        assert len(seen.get(name, [])) == 1, (name, got.stderr)
        (line,) = seen[name]
        number, column = definition(MAKE_APP / "kernels.c", name)
        assert line.startswith(
            f"kernels.c:{number}:{column}: remark: '{name}' compiled by pycc-stencil"
        ), line
    for found in seen.values():
        assert len(found) == 1, found


# --------------------------------------------------------------------------------------------
# fallback and invalid input


def test_goto_file_builds_with_one_warning(pair):
    ref, got = pair.both([*CFLAGS, "-c", "fallback.c", "-o", "fallback.o"])
    assert ref.stderr == ""
    warnings = warning_lines(got.stderr)
    assert len(warnings) == 1, got.stderr
    assert fallback_warning_re("fallback.c", GOTO_KERNEL).match(warnings[0]), warnings[0]
    assert got.stderr.strip() == warnings[0]
    ref_out, got_out = pair.link_and_run(["fallback.o"], ("fallback.c",))
    assert got_out == ref_out


WARNING_KERNELS = """\
void k_unused(int n, const float *in, float *out)
{
    int unused;
    float f = 1.5;
    for (int i = 0; i < n; i++)
        out[i] = in[i] * f;
}

int k_sign_compare(int n, const unsigned *a)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        if (a[i] < i)
            c++;
    return c;
}
"""


def test_cc_warnings_inside_kernels_same_as_cc(pair):
    """cc's own warnings about code in kernels reach the user once, as cc words them."""
    for d in (pair.cc_dir, pair.pycc_dir):
        (d / "warn.c").write_text(WARNING_KERNELS)
    ref, got = pair.both(["-O2", "-Wall", "-Wextra", "-c", "warn.c"])
    assert "unused variable" in ref.stderr
    assert got.stderr == ref.stderr
    assert_compiled_by_pycc(pair.reported(), "warn.c", ["k_unused", "k_sign_compare"])


def test_werror_on_kernel_warnings_fails_like_cc(pair):
    for d in (pair.cc_dir, pair.pycc_dir):
        (d / "warn.c").write_text(WARNING_KERNELS)
    ref, got = pair.both(["-O2", "-Wall", "-Werror", "-c", "warn.c"], check=False)
    assert ref.returncode != 0
    assert (got.returncode, got.stderr) == (ref.returncode, ref.stderr)
    assert not (pair.pycc_dir / "warn.o").exists()


BAD_SOURCES = {
    "syntax": (
        "void blur(int n, const float *in, float *out)\n"
        "{\n"
        "    for (int i = 1; i < n - 1; i++)\n"
        "        out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f\n"
        "}\n"
    ),
    "undeclared": (
        "void blur(int n, const float *in, float *out)\n"
        "{\n"
        "    for (int i = 1; i < n - 1; i++)\n"
        "        out[i] = (in[i - 1] + in[i] + in[i + 1]) / divisor;\n"
        "}\n"
    ),
    "not_c": "\x7fELF\x02\x01\x01\x00garbage\n",
}


BAD_MODES = {
    "c-o": ["-c", "bad.c", "-o", "bad.o"],
    "c": ["-c", "bad.c"],
    "link": ["bad.c", "-o", "bad"],
    "S": ["-S", "bad.c"],
}


@pytest.mark.parametrize(
    "kind, mode",
    [
        ("syntax", "c-o"),
        ("syntax", "c"),
        ("syntax", "link"),
        ("undeclared", "S"),
        ("not_c", "c-o"),
    ],
)
def test_invalid_c_fails_like_cc(pair, kind, mode):
    for d in (pair.cc_dir, pair.pycc_dir):
        (d / "bad.c").write_text(BAD_SOURCES[kind])
    ref, got = pair.both(["-O2", *BAD_MODES[mode]], check=False)
    assert ref.returncode != 0
    assert got.returncode == ref.returncode
    assert got.stderr == ref.stderr
    assert got.stdout == ref.stdout
    for name in ("bad.o", "bad", "a.out", "bad.s"):
        assert not (pair.pycc_dir / name).exists(), name


def test_missing_input_exit_status_like_cc(pair):
    ref, got = pair.both(["-O2", "-c", "no_such_file.c"], check=False)
    assert ref.returncode != 0
    assert got.returncode == ref.returncode
    assert "no_such_file.c" in got.stderr
    assert not (pair.pycc_dir / "no_such_file.o").exists()


def test_output_in_missing_directory_fails_like_cc(pair):
    ref, got = pair.both([*CFLAGS, "-c", "kernels.c", "-o", "no/such/dir/k.o"], check=False)
    assert ref.returncode != 0
    assert (got.returncode, got.stderr) == (ref.returncode, ref.stderr)


def test_c_with_o_and_several_sources_fails_like_cc(pair):
    ref, got = pair.both(["-O2", "-c", "kernels.c", "util.c", "-o", "x.o"], check=False)
    assert ref.returncode != 0
    assert got.returncode == ref.returncode
    assert not (pair.pycc_dir / "x.o").exists()


# --------------------------------------------------------------------------------------------
# PolyBench style


POLYBENCH = [
    ("seidel-2d", [], ["kernel_seidel_2d"]),
    ("fdtd-2d", ["-DPOLYBENCH_USE_C99_PROTO"], ["kernel_fdtd_2d"]),
    ("heat-3d", [], ["kernel_heat_3d"]),
    (
        "jacobi-1d",
        ["-DDATA_TYPE_IS_FLOAT", "-DPOLYBENCH_USE_C99_PROTO", "-DPOLYBENCH_STACK_ARRAYS", "-DN=67"],
        ["kernel_jacobi_1d"],
    ),
]


@pytest.mark.slow
def test_polybench_programs_dump_identical_arrays(tmp_path, env):
    src = PROJECTS / "polybench_app"

    def build(index: int, compiler: str) -> str:
        program, defines, _ = POLYBENCH[index]
        d = tmp_path / f"{index}-{Path(compiler).name}"
        shutil.copytree(src, d)
        build_env = dict(env, PYCC_REPORT=str(tmp_path / f"report{index}.jsonl"))
        run([compiler, "-O2", "-I.", *defines, f"{program}.c", "-o", program, "-lm"], d, build_env)
        return run([d / program], d, env).stdout

    with ThreadPoolExecutor(2) as pool:
        refs = [pool.submit(build, i, CC) for i in range(len(POLYBENCH))]
        gots = [pool.submit(build, i, PYCC) for i in range(len(POLYBENCH))]
        outputs = [(r.result(), g.result()) for r, g in zip(refs, gots)]
    for (program, defines, kernels), (ref, got), index in zip(
        POLYBENCH, outputs, range(len(POLYBENCH))
    ):
        assert "begin dump" in ref
        assert got == ref, (program, defines)
        entries = read_report(tmp_path / f"report{index}.jsonl")
        assert_compiled_by_pycc(entries, f"{program}.c", kernels)


# --------------------------------------------------------------------------------------------
# cache


def test_warm_cache_hit(tmp_path, support_objs):
    cache = tmp_path / "cache"
    env = clean_env(cache)
    d = tmp_path / "w"
    shutil.copytree(MAKE_APP, d)
    reports = []
    for attempt in ("cold", "warm"):
        report = tmp_path / f"{attempt}.jsonl"
        run(
            [PYCC, *CFLAGS, "-c", "kernels.c", "-o", f"{attempt}.o"],
            d,
            dict(env, PYCC_REPORT=str(report)),
        )
        (unit,) = units_for(read_report(report), "kernels.c")
        reports.append(unit)
    assert reports[0]["cache"] == "miss", reports[0]
    assert reports[1]["cache"] == "hit", reports[1]
    assert_compiled_by_pycc([reports[1]], "kernels.c", KERNELS)
    outputs = []
    for attempt in ("cold", "warm"):
        objs = [f"{attempt}.o", *(str(support_objs / o) for o in support_objects(["kernels.c"]))]
        run([CC, "-o", attempt, *objs, "-lm"], d, env)
        outputs.append(run([f"./{attempt}", *SIZES], d, env).stdout)
    assert outputs[0] == outputs[1]

    report = tmp_path / "nocache.jsonl"
    run(
        [PYCC, *CFLAGS, "-c", "kernels.c", "-o", "nocache.o"],
        d,
        dict(env, PYCC_REPORT=str(report), PYCC_NO_CACHE="1"),
    )
    (unit,) = units_for(read_report(report), "kernels.c")
    assert unit["cache"] != "hit", unit


def _support_link_run(d: Path, obj: str, support: Path, env) -> str:
    objs = [obj, *(str(support / o) for o in support_objects(["kernels.c"]))]
    run([CC, "-o", "app", *objs, "-lm"], d, env)
    return run(["./app", *SIZES], d, env).stdout


def test_concurrent_cold_compiles_share_the_cache(tmp_path, support_objs):
    """make -j style: the same file compiled twice at once into one fresh cache."""
    env = clean_env(tmp_path / "cache")
    d = tmp_path / "w"
    shutil.copytree(MAKE_APP, d)
    procs = [
        subprocess.Popen(
            [PYCC, *CFLAGS, "-c", "kernels.c", "-o", f"k{i}.o"],
            cwd=d,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    ref = _support_link_run(d, str(support_objs / "kernels.cc.o"), support_objs, env)
    for i in range(2):
        assert _support_link_run(d, f"k{i}.o", support_objs, env) == ref, i
    run([PYCC, *CFLAGS, "-c", "kernels.c", "-o", "warm.o"], d, env)
    assert _support_link_run(d, "warm.o", support_objs, env) == ref


def test_damaged_cache_entries_are_not_used(tmp_path, support_objs):
    """A cache file cut to nothing is a miss, never an object without its kernels."""
    cache = tmp_path / "cache"
    env = clean_env(cache)
    d = tmp_path / "w"
    shutil.copytree(MAKE_APP, d)
    run([PYCC, *CFLAGS, "-c", "kernels.c", "-o", "cold.o"], d, env)
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert files, "nothing was cached"
    ref = _support_link_run(d, str(support_objs / "kernels.cc.o"), support_objs, env)
    saved = {victim: victim.read_bytes() for victim in files}
    for victim in files:  # one at a time, as a full disk or a killed build leaves it
        victim.write_bytes(b"")
        out = d / f"empty-{victim.name}.o"
        run([PYCC, *CFLAGS, "-c", "kernels.c", "-o", out], d, env)
        victim.write_bytes(saved[victim])
        assert _support_link_run(d, out.name, support_objs, env) == ref, f"empty {victim.name}"


GAIN_KERNEL = """\
#include "gain.h"
void gain(int n, float *a)
{
    for (int i = 0; i < n; i++)
        a[i] = a[i] * GAIN + OFFSET;
}
"""
GAIN_MAIN = """\
#include <stdio.h>
void gain(int n, float *a);
int main(void)
{
    float a[3] = {1.5f, -2.25f, 0.1f};
    gain(3, a);
    printf("%a %a %a\\n", a[0], a[1], a[2]);
    return 0;
}
"""


def test_cache_sees_header_and_flag_changes(tmp_path):
    """A cached kernel object is not reused when an included header or a -D changes."""
    env = clean_env(tmp_path / "cache")
    (tmp_path / "gain.c").write_text(GAIN_KERNEL)
    (tmp_path / "main.c").write_text(GAIN_MAIN)
    run([CC, "-O2", "-c", "main.c"], tmp_path, env)

    def build_and_run(header: str, *flags: str) -> tuple[str, str, dict]:
        (tmp_path / "gain.h").write_text(header)
        report = tmp_path / "report.jsonl"
        report.unlink(missing_ok=True)
        outputs = []
        for compiler, e in ((CC, env), (PYCC, dict(env, PYCC_REPORT=str(report)))):
            run([compiler, "-O2", *flags, "-c", "gain.c"], tmp_path, e)
            run([CC, "-o", "gain", "main.o", "gain.o"], tmp_path, env)
            outputs.append(run(["./gain"], tmp_path, env).stdout)
        (unit,) = units_for(read_report(report), "gain.c")
        assert_compiled_by_pycc([unit], "gain.c", ["gain"])
        return outputs[0], outputs[1], unit

    header = "#define GAIN 2.0f\n#ifndef OFFSET\n#define OFFSET 0.0f\n#endif\n"
    ref, got, unit = build_and_run(header)
    assert got == ref and unit["cache"] == "miss"
    ref, got, unit = build_and_run(header.replace("2.0f", "3.0f"))
    assert got == ref, "a stale object was reused after the header changed"
    assert unit["cache"] == "miss"
    ref, got, unit = build_and_run(header.replace("2.0f", "3.0f"), "-DOFFSET=0.5f")
    assert got == ref, "a stale object was reused after -D changed"
    assert unit["cache"] == "miss"
