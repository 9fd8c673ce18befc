"""`unroll-jam(N)`: outer loops unrolled with their inner loops jammed, bit-exact against cc on
2-D stencils for outer trip counts 0, 1, N-1, N+1 and odd/prime sizes; the run-time check takes
the jammed loop for separate buffers and the original nest when the buffers overlap."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from corpus_check import assert_fired, busiest, check_case, corpus_params, in_child
from llvmlite import ir
from pycc_stencil.emit.host_jit import compile_module, initialize
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.analyses import loops_of
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from pycc_stencil.ir_passes.unroll import is_remainder

HOST = host_target()

FACTOR = 4
#: (kernel, parameters): the outer loop runs 0, 1, N-1, N+1 times, then odd and prime sizes
NESTS = [
    (
        "MatrixAdd",
        [{"size_x": 5, "size_y": y} for y in (0, 1, 3, 5)] + [{"size_x": 37, "size_y": 23}],
    ),
    (
        "MeanFilter3x3",
        [{"size_x": 7, "size_y": y + 2} for y in (0, 1, 3, 5)]
        + [{"size_x": 13, "size_y": 11}, {"size_x": 2, "size_y": 9}],
    ),
    (
        "kernel_jacobi_2d_vla",
        [{"tsteps": 2, "n": n + 2} for n in (0, 1, 3, 5)] + [{"tsteps": 2, "n": 13}],
    ),
    ("kernel_jacobi_2d_ptr", [{"tsteps": 1, "n": n} for n in (3, 7, 23)]),
    # in place: the copies overlap, the run-time check must choose the original nest
    ("kernel_seidel_2d_vla", [{"tsteps": 2, "n": n} for n in (3, 7, 13)]),
]
PIPELINES = [f"unroll-jam({FACTOR})", "unroll-jam(2),simd(4)"]


#: kernel -> what declines it (pass -> words of the missed remark); every other pass of
#: every pipeline must leave a passed remark about the kernel
DECLINES = {
    # in place: A[i][j-1] of the same sweep (the jammed copies stay scalar)
    "kernel_seidel_2d_vla": {"simd": "touch the same memory 1 iteration(s) apart"},
}


@pytest.mark.parametrize("entry, params, passes", corpus_params(NESTS, PIPELINES))
def test_jammed_nest_is_bit_exact(entry, params, passes):
    result, remarks = check_case(entry, entry["variants"][0], params, passes)
    assert result.status == "OK", str(result)
    declined = DECLINES.get(entry["function"], {})
    assert_fired(remarks, passes, {k: v for k, v in declined.items() if k in passes})
    if params == busiest(dict(NESTS)[entry["function"]]):
        assert result.changed, "the run changed nothing"


MATRIX_ADD = """
void add(float *a, float *b, int w, int h, float *out) {
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < w; ++j)
      out[i * w + j] = a[i * w + j] + b[i * w + j];
}
"""


def _poison_remainder(function: ir.Function) -> None:
    """Make the original nest (the remainder) store -1 instead of its result, so the output
    shows which rows the jammed loop computed."""
    (remainder,) = [lp for lp in loops_of(function).loops if is_remainder(lp)]
    for block in remainder.blocks:
        for instr in block.instructions:
            if instr.opname == "store":
                instr.operands = [ir.Constant(ir.FloatType(), -1.0), instr.operands[1]]
                instr._clear_string_cache()


@pytest.fixture
def poisoned_add(c_file):
    lowered = lower_file(str(c_file(MATRIX_ADD)))
    result = run_passes(
        lowered.module, parse_pipeline(f"unroll-jam({FACTOR})"), verify=True, target=HOST
    )
    assert [r.kind for r in result.remarks] == ["passed"]
    _poison_remainder(lowered.module.get_global("add"))
    initialize()
    jit = compile_module(lowered.module, ["add"], opt_level=0)
    signature = ctypes.CFUNCTYPE(
        None, *[ctypes.c_void_p] * 2, ctypes.c_int, ctypes.c_int, ctypes.c_void_p
    )
    yield jit, signature(jit.function_address("add"))


def test_separate_buffers_take_the_jammed_loop(poisoned_add):
    _, add = poisoned_add
    w, h = 7, 11
    a = np.arange(w * h, dtype=np.float32)
    b = np.full(w * h, 0.5, dtype=np.float32)
    out = np.zeros(w * h, dtype=np.float32)
    out = in_child(lambda: (add(a.ctypes.data, b.ctypes.data, w, h, out.ctypes.data), out)[1])
    jammed = (h // FACTOR) * FACTOR * w  # rows 0..7 by the jammed loop, 8..10 by the remainder
    assert (out[:jammed] == (a + b)[:jammed]).all()
    assert (out[jammed:] == -1).all()


def test_overlapping_buffers_take_the_original_nest(poisoned_add):
    _, add = poisoned_add
    w, h = 7, 11
    memory = np.arange(w * (h + 1), dtype=np.float32)
    b = np.full(w * h, 0.5, dtype=np.float32)
    # out is a shifted by one row: row i written, row i+1 read by the next outer iteration
    memory = in_child(
        lambda: (add(memory.ctypes.data, b.ctypes.data, w, h, memory[w:].ctypes.data), memory)[1]
    )
    assert (memory[w:] == -1).all()


DECLINED = """
void triangle(int n, float *a) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      a[i * n + j] += 1.0f;
}
void gather(int n, const int *idx, float *a, const float *b) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      a[i * n + j] = b[idx[j]];
}
void two_inner(int n, float *a) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) a[i * n + j] = 0.0f;
    for (int j = 0; j < n; j++) a[i * n + j] += 1.0f;
  }
}
"""


def test_illegal_or_unsupported_nests_are_declined(c_file):
    lowered = lower_file(str(c_file(DECLINED)))
    before = str(lowered.module)
    result = run_passes(lowered.module, parse_pipeline("unroll-jam(2)"), verify=True, target=HOST)
    missed = {r.function: r.message for r in result.remarks if r.kind == "missed"}
    assert "inner trip count depends on the outer loop" in missed["triangle"]
    assert "an address depends on %" in missed["gather"]  # the loaded index
    assert "exactly one innermost loop" in missed["two_inner"]
    assert all(str(r).endswith("[-Rpass-missed=unroll-jam]") for r in result.remarks)
    assert str(lowered.module) == before
