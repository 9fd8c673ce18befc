"""Shared fixtures: hand-built IR kernels with the front end's conventions, and their C twins.

The harness must be tested against IR it did not produce itself (deliberately wrong, crashing,
data-dependent), so these kernels are built with llvmlite.ir directly, each paired with the C
source the reference is compiled from.
"""

from __future__ import annotations

import compileall
import hashlib
import os
import re
import signal
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from llvmlite import ir
from pycc_stencil.diagnostics import SourceLocation
from pycc_stencil.frontend import c_types as ct
from pycc_stencil.frontend.signature import FunctionInfo, LoweredModule, Param, SkippedFunction

#: pytester runs a user's test file in the plugin's tests (tests/test_pytest_plugin.py)
pytest_plugins = ["pytester"]

#: LLVM verifies the IR after every pass in the tests, whatever the environment says.
os.environ["PYCC_VERIFY_PASSES"] = "1"
#: compiler mode takes over every kernel it can compile, so the tests run its code (the
#: default policy, only kernels a pass transformed, is tested on its own)
os.environ["PYCC_TAKEOVER"] = "all"
#: the compile servers the tests' steps start exit a minute after the last one
os.environ["PYCC_SERVER_IDLE"] = "60"
#: a shell without job control starts a background job (`pytest ... &`) with SIGINT ignored,
#: and every process the tests start would inherit that: the tests of Ctrl-C would fail
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the package once (in the controller, before the workers start) and let
    the `pycc-stencil` processes the tests start use the bytecode: with PYTHONDONTWRITEBYTECODE
    set (as some CI images do) every one of them would compile the tool's source again."""
    if not hasattr(config, "workerinput"):
        root = Path(__file__).resolve().parent.parent
        compileall.compile_dir(str(root), quiet=2, rx=re.compile(r"[/\\]\.\w"))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


I32, I64, F32 = ir.IntType(32), ir.IntType(64), ir.FloatType()
PTR = ir.PointerType()


def counted_loop(
    b: ir.IRBuilder, start: ir.Value, stop: ir.Value, body: Callable[[ir.IRBuilder, ir.Value], None]
) -> None:
    """`for (i64 i = start; i < stop; i++) body(i)` in the canonical shape, continuing after."""
    function = b.function
    header = function.append_basic_block("header")
    loop_body = function.append_basic_block("body")
    exit_block = function.append_basic_block("exit")
    preheader = b.block
    b.branch(header)
    b.position_at_end(header)
    i = b.phi(I64, "i")
    i.add_incoming(start, preheader)
    b.cbranch(b.icmp_signed("<", i, stop), loop_body, exit_block)
    b.position_at_end(loop_body)
    body(b, i)
    i.add_incoming(b.add(i, ir.Constant(I64, 1), flags=["nsw"]), b.block)
    b.branch(header)
    b.position_at_end(exit_block)


def element(b: ir.IRBuilder, base: ir.Value, index: ir.Value, t: ir.Type = F32) -> ir.Value:
    return b.gep(base, [index], inbounds=True, source_etype=t)


def offset(b: ir.IRBuilder, i: ir.Value, k: int) -> ir.Value:
    return b.add(i, ir.Constant(I64, k), flags=["nsw"])


@dataclass
class Kernel:
    """One C function: its parameters and a body builder for its IR."""

    name: str
    params: list[tuple[str, ct.CType]]
    build: Callable[[ir.IRBuilder, list[ir.Argument]], None]
    result: ct.CType = ct.VOID
    static: bool = False
    loops: int = 1


def lowered_module(path: Path, kernels: list[Kernel], skipped=()) -> LoweredModule:
    """A LoweredModule as the front end would return it for `path`."""
    module = ir.Module(name=str(path))
    lowered = LoweredModule(str(path), [], module)
    for line, kernel in enumerate(kernels, start=1):
        params = tuple(Param(n, t, SourceLocation(str(path), line, 1)) for n, t in kernel.params)
        llvm_params = [PTR if isinstance(t, ct.ArrayType) else t.llvm() for _, t in kernel.params]
        function = ir.Function(
            module, ir.FunctionType(kernel.result.llvm(), llvm_params), kernel.name
        )
        if kernel.static:
            function.linkage = "internal"
        b = ir.IRBuilder(function.append_basic_block("entry"))
        kernel.build(b, list(function.args))
        if not b.block.is_terminated:
            b.ret_void()
        lowered.functions[kernel.name] = FunctionInfo(
            kernel.name,
            params,
            kernel.result,
            SourceLocation(str(path), line, 1),
            kernel.static,
            kernel.loops,
        )
        lowered.order.append(kernel.name)
    for name, reason in skipped:
        lowered.skipped.append(SkippedFunction(name, SourceLocation(str(path), 9, 1), reason))
        lowered.order.append(name)
    return lowered


@pytest.fixture
def c_file(tmp_path: Path) -> Callable[[str], Path]:
    """Write C source (dedented) to a file in the test's directory."""

    def write(source: str, name: str = "kernels.c") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(source))
        return path

    return write


@pytest.fixture(scope="module")
def module_c_file(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], str]:
    """Write C source to a file every test of the module shares (hypothesis's examples
    too): `module_c_file("kernels", source)` -> its path."""

    def write(name: str, source: str) -> str:
        path = tmp_path_factory.mktemp(name) / f"{name}.c"
        path.write_text(textwrap.dedent(source))
        return str(path)

    return write


FLOAT_P = ct.PointerType(ct.FLOAT)
CONST_FLOAT_P = ct.PointerType(ct.FLOAT, const_pointee=True)
INT_P = ct.PointerType(ct.INT)


def blur3_body(b: ir.IRBuilder, args: list[ir.Argument]) -> None:
    """out[i] = in[i-1] + in[i] + in[i+1] for 0 <= i < n: reads in[-1 .. n+1)."""
    src, dst, n = args

    def body(b, i):
        total = b.load(element(b, src, offset(b, i, -1)), typ=F32)
        total = b.fadd(total, b.load(element(b, src, i), typ=F32))
        total = b.fadd(total, b.load(element(b, src, offset(b, i, 1)), typ=F32))
        b.store(total, element(b, dst, i))

    counted_loop(b, ir.Constant(I64, 0), b.sext(n, I64), body)


BLUR3 = Kernel("blur3", [("in", CONST_FLOAT_P), ("out", FLOAT_P), ("n", ct.INT)], blur3_body)
BLUR3_C = """
void blur3(const float *in, float *out, int n) {
    for (int i = 0; i < n; i++)
        out[i] = in[i - 1] + in[i] + in[i + 1];
}
"""


def gather_body(b: ir.IRBuilder, args: list[ir.Argument]) -> None:
    """out[i] = in[idx[i]]: the address depends on data."""
    idx, src, dst, n = args

    def body(b, i):
        j = b.sext(b.load(element(b, idx, i, I32), typ=I32), I64)
        b.store(b.load(element(b, src, j), typ=F32), element(b, dst, i))

    counted_loop(b, ir.Constant(I64, 0), b.sext(n, I64), body)


GATHER = Kernel(
    "gather",
    [
        ("idx", ct.PointerType(ct.INT, const_pointee=True)),
        ("in", CONST_FLOAT_P),
        ("out", FLOAT_P),
        ("n", ct.INT),
    ],
    gather_body,
)


@pytest.fixture(scope="session")
def kernel_file(tmp_path_factory) -> Callable[[str, str], str]:
    """`kernel_file(name, text)`: the path of a file `name.c` holding `text`, one per text for
    the whole session, so that the test modules checking the same kernel share its compiles
    (tests/corpus_check.py memoizes them by path)."""
    folder = tmp_path_factory.mktemp("kernels")

    def write(name: str, text: str) -> str:
        path = folder / hashlib.sha256(text.encode()).hexdigest()[:12] / f"{name}.c"
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            path.write_text(text)
        return str(path)

    return write


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: twice as many workers as CPUs this process may use. The tests spend much
    of their time waiting for cc and pycc-stencil subprocesses; with one worker per CPU a
    2-core machine was about 80 % busy, and back to back on 2 cores the suite took 488 s
    with 3 workers, 432 s with 4 (2026-11-27)."""
    return max(1, len(os.sched_getaffinity(0)) * 2)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`sweep` tests are opt-in: they run only when the -m expression names them
    (`-m sweep`, scripts/run_sweeps.sh), whatever else it selects (`-m "not slow"`).

    Under `--dist loadgroup` (pyproject's addopts), pytest-xdist sends the tests of one
    `xdist_group` to one worker by appending `@group` to their node ids, which a pytest it does
    not support ignores (pytest-dev/pytest-xdist#1386): the suite would then compile every
    source on every worker, silently twice as slow. Refuse to run instead.

    Tests marked `after_installs` go last: the test command installs what they need in the
    background while the others run."""
    if "sweep" not in (config.option.markexpr or ""):
        sweeps = [item for item in items if item.get_closest_marker("sweep")]
        if sweeps:
            config.hook.pytest_deselected(items=sweeps)
            items[:] = [item for item in items if not item.get_closest_marker("sweep")]
    # last: the browser they need may still be installing (scripts/install_chromium.sh)
    items.sort(key=lambda item: item.get_closest_marker("after_installs") is not None)
    if not getattr(config.option, "loadgroup", False):
        return
    grouped = [item for item in items if item.get_closest_marker("xdist_group")]
    if grouped and "@" not in grouped[0].nodeid.rsplit("]", 1)[-1]:
        raise pytest.UsageError(
            "--dist loadgroup has no effect with this pytest/pytest-xdist pair "
            f"(pytest {pytest.__version__}); install the versions pyproject.toml pins"
        )
