"""`stream-sweep` and `stream-sweep-large` (ir_passes/tiling.py,
polyhedral/schedule/stream_sweep.py, simd.py's `_bind_loop` with streams): a nest's stores into
arrays it does not read become aligned non-temporal vector stores, fenced after each loop.

Checked here: bit-exact against cc through the JIT for sweeps of doubles, floats and bytes at odd
and prime sizes, rows shorter than the four vectors the run-time alignment needs, grids of no
interior, two outputs that share an alignment or do not, and a two-stage pipeline (its
intermediate, read by the second stage, is not streamed), each with the non-temporal stores and
the fence in the IR and `movnt` in the assembly; the refusals (a nest that reads what it stores,
a target without streaming stores, `-O3`'s form on a core where they do not pay, the fallback
of an earlier pass's code); which cores and flags `-O3` streams for; and compiler mode, where a
program built with `-O3 -fpycc-passes=stream-sweep` prints what cc's build prints.
"""

from __future__ import annotations

import ctypes
import re

import llvmlite.binding as llvm
import numpy as np
import pytest
from corpus_check import check, compiled, kernel_group
from llvmlite import ir
from pycc_stencil.emit import cc_machine
from pycc_stencil.emit.host_jit import compile_module, host_target_machine, parse_verified
from pycc_stencil.emit.targets.host import HostX86
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.machine_model import POOL, SERIAL, streaming_stores_pay
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from pycc_stencil.ir_passes.presets import locality_passes
from test_parallel_sweep import KERNELS_C as SWEEP_KERNELS_C
from test_parallel_sweep import LAPLACE_C, PROGRAM_MAIN, _missed, _passed
from test_tiling import ORDERS, PYCC, assert_same_output, build_both, in_order

KERNELS_C = r"""
void blur(int h, int w, const float in[h][w], float out[h][w]) {
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      out[y][x] = (in[y - 1][x - 1] + in[y - 1][x] + in[y - 1][x + 1] + in[y][x - 1]
                   + in[y][x] + in[y][x + 1] + in[y + 1][x - 1] + in[y + 1][x]
                   + in[y + 1][x + 1]) * (1.0f / 9.0f);
}

void box_u8(int h, int w, const unsigned char in[h][w], unsigned char out[h][w]) {
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      out[y][x] = (in[y - 1][x - 1] + in[y - 1][x] + in[y - 1][x + 1] + in[y][x - 1]
                   + in[y][x] + in[y][x + 1] + in[y + 1][x - 1] + in[y + 1][x]
                   + in[y + 1][x + 1] + 4) / 9;
}

void two_outputs(int n, int m, const double in[n][m], double sum[n][m], double diff[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 1; j < m - 1; j++) {
      sum[i][j] = in[i][j - 1] + in[i][j + 1];
      diff[i][j] = in[i][j + 1] - in[i][j - 1];
    }
}

double g_in[9][613], g_out[9][613];

void global_sweep(int n) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < 612; j++)
      g_out[i][j] = 0.25 * (g_in[i - 1][j] + g_in[i + 1][j] + g_in[i][j - 1] + g_in[i][j + 1]);
}

void shifted_outputs(int n, int m, const double in[n][m], double sum[n][m], double d[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 1; j < m - 1; j++) {
      sum[i][j] = in[i][j - 1] + in[i][j + 1];
      d[i][j - 1] = in[i][j + 1] - in[i][j - 1];
    }
}

"""
#: the parallel sweep tests' laplace, triad, 3-D star, pipeline of two nests and heat (a time
#: loop of two sweeps)
KERNELS_C += SWEEP_KERNELS_C[: SWEEP_KERNELS_C.index("void column_sums")]

#: (function, parameter sets, stores streamed in the IR): odd and prime sizes, rows shorter
#: than four vectors (up to 16 doubles from their alignment), rows too short to stream
#: (`STREAM_MIN_ROW_BYTES`) and long enough, no interior
CASES = [
    (
        "laplace",
        [{"n": 23, "m": 37}, {"n": 3, "m": 101}, {"n": 2, "m": 2}, {"n": 7, "m": 5}]
        + [
            {"n": 6, "m": 27},
            {"n": 5, "m": 211},
            {"n": 4, "m": 601},
        ],  # rows too short to stream, and long
        ["'out'"],
    ),
    (
        "blur",
        [{"h": 13, "w": 131}, {"h": 5, "w": 19}, {"h": 4, "w": 301}, {"h": 3, "w": 1201}],
        ["'out'"],
    ),
    (
        "box_u8",
        [{"h": 11, "w": 263}, {"h": 3, "w": 1101}, {"h": 3, "w": 4201}, {"h": 9, "w": 1}],
        ["'out'"],
    ),
    ("triad", [{"n": 1009}, {"n": 31}, {"n": 1}, {"n": 0}], ["'a'"]),
    (
        "two_outputs",
        [{"n": 5, "m": 211}, {"n": 3, "m": 613}, {"n": 3, "m": 9}],
        ["'sum'", "'diff'"],
    ),
    ("shifted_outputs", [{"n": 5, "m": 613}, {"n": 4, "m": 41}], ["'sum'", "'d'"]),
    ("star3d", [{"n": 19}, {"n": 4}], ["'out'"]),
    ("global_sweep", [{"n": 9}, {"n": 3}], ["'g_out'"]),
    ("pipeline", [{"h": 19, "w": 149}, {"h": 4, "w": 1201}, {"h": 3, "w": 7}], ["'out'"]),
]
GROUP = kernel_group("stream_sweep")


@pytest.fixture
def kernels(kernel_file) -> str:
    return kernel_file("stream_sweep", KERNELS_C)


def _kernel_text(module: llvm.ModuleRef, function: str) -> str:
    """The function and the functions its parallel loops were outlined into."""
    return "\n".join(
        str(f)
        for f in module.functions
        if f.name == function or f.name.startswith(f"{function}.par")
    )


@GROUP
@pytest.mark.parametrize(
    "env", ORDERS[::3], ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items())
)
@pytest.mark.parametrize("function, sets, arrays", CASES, ids=[c[0] for c in CASES])
def test_streamed_sweeps_are_bit_exact(kernels, monkeypatch, env, function, sets, arrays):
    """On the JIT's pool (as under threads) each nest's outer loop runs on the team: in
    reverse, and on two threads."""
    in_order(monkeypatch, env)
    for params in sets:
        result, remarks = check(kernels, function, params, "stream-sweep", ["-std=c99"])
        assert result.status == "OK", result
        done = _passed(remarks)
        assert any(f"stores into {', '.join(arrays)} stream past" in m for m in done), remarks
        assert any("non-temporal, aligned to" in m for m in done), remarks
    module = parse_verified(compiled(kernels, ["-std=c99"], "stream-sweep").module)
    text = _kernel_text(module, function)
    stores = [line for line in text.splitlines() if "store " in line and "!nontemporal" in line]
    assert stores and all(re.search(r"align (16|32|64),", s) for s in stores), stores
    assert "call void @llvm.x86.sse.sfence()" in text
    assembly = host_target_machine().emit_assembly(module)
    assert "movnt" in assembly  # LLVM keeps them non-temporal: aligned, of a legal width


@GROUP
def test_a_nest_that_reads_what_it_stores_is_refused(kernels):
    result, remarks = check(kernels, "heat", {"T": 3, "n": 13}, "stream-sweep", ["-std=c99"])
    assert result.status == "OK", result
    assert not _passed(remarks), remarks
    assert any("reads every array it stores into" in m for m in _missed(remarks)), remarks


@GROUP
def test_the_fallback_of_an_earlier_pass_is_refused(kernels, monkeypatch):
    """Above the threshold the pipeline runs as fused tiles: streaming its fallback, which then
    runs only below it, would only add code."""
    monkeypatch.setenv("PYCC_CACHE_L2", "16K")
    monkeypatch.setenv("PYCC_CACHE_L3", "32K")
    passes = "fuse-tile-large,stream-sweep"
    result, remarks = check(
        kernels, "pipeline", {"h": 67, "w": 89}, passes, ["-std=c99"], fresh=True
    )
    assert result.status == "OK", result
    assert any("fused 2 loop nests" in m for m in _passed(remarks)), remarks
    assert any("runs as an earlier pass's code" in m for m in _missed(remarks)), remarks
    assert not any("stream past" in m or "non-temporal" in m for m in _passed(remarks)), remarks


def _paying(runtime: str = POOL) -> HostX86:
    """The host with a core where streams pay (what the `-large` form asks)."""
    return HostX86(cpu="rocketlake", parallel_runtime=runtime)


def _run_on(kernels: str, passes: str, target: HostX86):
    module = lower_file(kernels, ["-std=c99"]).module
    before = str(module)
    result = run_passes(module, parse_pipeline(passes), target=target)
    return before, result


def test_only_the_large_form_asks_whether_streams_pay(kernel_file, monkeypatch):
    monkeypatch.setenv("PYCC_CACHE_L2", "16K")
    monkeypatch.setenv("PYCC_CACHE_L3", "32K")
    kernels = kernel_file("stream_sweep", KERNELS_C)
    before, result = _run_on(kernels, "stream-sweep-large", HostX86(cpu="znver3"))
    assert str(result.module) == before
    assert all("do not pay on host" in r.message for r in result.remarks), result.remarks
    for target, passes in [
        (HostX86(cpu="znver3"), "stream-sweep"),
        (_paying(), "stream-sweep-large"),
    ]:
        _, result = _run_on(kernels, passes, target)
        streamed = [r for r in result.remarks if "stream past" in r.message]
        assert len(streamed) == 9, (passes, result.remarks)  # every kernel but heat


def test_a_target_without_streaming_stores_is_refused(kernel_file):
    from pycc_stencil.emit.targets import target_named

    kernels = kernel_file("stream_sweep", KERNELS_C)
    module = lower_file(kernels, ["-std=c99"]).module
    before = str(module)
    result = run_passes(module, parse_pipeline("stream-sweep"), target=target_named("c66x"))
    assert str(result.module) == before
    assert any("has no non-temporal stores" in r.message for r in result.remarks), result.remarks


@pytest.mark.parametrize(
    "cpu, pays",
    [("rocketlake", True), ("sapphirerapids", True), ("znver3", False), ("x86-64", False)],
)
def test_streams_pay_on_named_cores_but_amds(cpu, pays):
    assert streaming_stores_pay(cpu) == pays


@pytest.mark.parametrize(
    "flags, vendor, streams",
    [
        (["-O3", "-march=native"], "GenuineIntel", True),
        (["-O3", "-march=native"], "AuthenticAMD", False),
        (["-O3", "-march=native", "-march=x86-64-v3"], "GenuineIntel", False),
        (["-O3", "-march=skylake"], "GenuineIntel", False),
        (["-O3"], "GenuineIntel", False),
        (["-O3", "-march=native"], "", False),
    ],
)
def test_o3_streams_only_for_the_native_core_where_they_pay(monkeypatch, flags, vendor, streams):
    monkeypatch.setattr(cc_machine, "_host_vendor", lambda: vendor)
    assert cc_machine.streaming_stores(flags) == streams
    for threads in (False, True):
        passes = locality_passes(threads, streams).split(",")
        assert ("stream-sweep-large" in passes) == streams
        if streams and threads:  # the smaller sweeps, which do not stream, on the team
            assert passes.index("stream-sweep-large") < passes.index("parallel-sweep-large")


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_compiler_mode_streams_a_sweep_with_ccs_output(tmp_path):
    flags = ["-O3", "-fpycc-passes=stream-sweep"]
    env, functions = build_both(
        tmp_path, PROGRAM_MAIN, LAPLACE_C, ["-O3"], flags, {"PYCC_TAKEOVER": "improved"}
    )
    function = functions["laplace"]
    assert function["compiled_by"] == "pycc-stencil", function
    assert any("non-temporal" in r for r in function["remarks"]), function
    assert_same_output(tmp_path, env, [["401", "333"], ["37", "23"], ["2", "9"], ["5", "64"]])


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
@pytest.mark.parametrize("threads", [[], ["-fopenmp"]], ids=["one thread", "-fopenmp"])
def test_o3_native_streams_a_large_sweep_where_streams_pay(tmp_path, threads):
    """`-O3 -march=native` on this machine: on a core where streams pay (`streaming_stores`)
    the sweep is taken over and streams above the threshold (small caches here); elsewhere the
    unit is cc's, unparsed (under -fopenmp the sweep is the team's). The output is cc's
    either way, on two threads under -fopenmp."""
    flags = ["-O3", "-march=native", *threads]
    small = {"PYCC_TAKEOVER": "improved", "PYCC_CACHE_L2": "16K", "PYCC_CACHE_L3": "32K"}
    env, functions = build_both(tmp_path, PROGRAM_MAIN, LAPLACE_C, flags, flags, small)
    streams = cc_machine.streaming_stores(flags)
    if streams or threads:
        function = functions["laplace"]
        assert function["compiled_by"] == "pycc-stencil", function
        assert any("non-temporal" in r for r in function["remarks"]) == streams, function
    else:
        assert not functions, functions
    assert_same_output(tmp_path, env, [["401", "333"], ["37", "23"], ["2", "9"]])


FIXED_C = r"""
void fixed_sweep(double out[60][60], const double in[60][60]) {
  for (int i = 1; i < 59; i++)
    for (int j = 0; j < 60; j++)
      out[i][j] = in[i - 1][j] + in[i + 1][j];
}
"""


@pytest.mark.parametrize("l3, streams", [("32K", False), ("16K", True)])
def test_the_large_form_needs_twice_the_last_level_cache(kernel_file, monkeypatch, l3, streams):
    """The fixed nest's arrays span 57600 bytes: less than twice an L3 of 32 KiB, more than
    twice one of 16 KiB (and the L2 of 16 KiB)."""
    monkeypatch.setenv("PYCC_CACHE_L2", "16K")
    monkeypatch.setenv("PYCC_CACHE_L3", l3)
    _, result = _run_on(kernel_file("stream_fixed", FIXED_C), "stream-sweep-large", _paying())
    streamed = any("stream past" in r.message for r in result.remarks)
    assert streamed == streams, result.remarks
    below = "less than 2 times the last-level cache (65536 bytes)"
    assert any(below in r.message for r in result.remarks) == (not streams), result.remarks


ROI_C = r"""
void roi(int n, int m, int ld, const double *in, double *out) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      out[i * ld + j] = 0.25 * (in[(i - 1) * ld + j] + in[(i + 1) * ld + j]
                                + in[i * ld + j - 1] + in[i * ld + j + 1]);
}
"""


def _streams_run(kernel_file, n: int, m: int, ld: int) -> bool:
    """Does `stream-sweep-large`'s check choose the streamed code for `roi(n, m, ld)` (the L3
    counted 32 KiB: a threshold of 64 KiB)? Its verdict is recorded in a global for the test."""
    module = lower_file(kernel_file("stream_roi", ROI_C), ["-std=c99"]).module
    run_passes(module, parse_pipeline("stream-sweep-large"), target=_paying(SERIAL))
    verdict = ir.GlobalVariable(module, ir.IntType(1), "verdict")
    verdict.initializer = ir.Constant(ir.IntType(1), 0)
    check_block = next(b for b in module.get_global("roi").blocks if b.name == "poly.check")
    builder = ir.IRBuilder(check_block)
    builder.position_before(check_block.terminator)
    builder.store(check_block.terminator.operands[0], verdict)
    jit = compile_module(module, ["roi"])
    rows = np.zeros((n + 2) * ld)
    kernel = ctypes.CFUNCTYPE(None, *[ctypes.c_int] * 3, ctypes.c_void_p, ctypes.c_void_p)
    data = np.arange(rows.size, dtype=np.float64)
    kernel(jit.function_address("roi"))(n, m, ld, data.ctypes.data, rows.ctypes.data)
    return bool(ctypes.c_bool.from_address(jit.global_address("verdict")).value)


def test_the_threshold_counts_the_cells_touched_not_the_rows_spanned(kernel_file, monkeypatch):
    """A strip 60 wide of rows 4000 long spans 40 rows x 32 KB but touches 2 x 19 KB: not
    streamed; the whole rows are."""
    monkeypatch.setenv("PYCC_CACHE_L2", "16K")
    monkeypatch.setenv("PYCC_CACHE_L3", "32K")
    assert not _streams_run(kernel_file, 40, 60, 4000)
    assert _streams_run(kernel_file, 40, 4000, 4000)
