"""Unrolling IR our front end does not produce: clang-style rotated loops (a guard before the
loop, the exit test in the latch, values leaving through LCSSA phis). Each hand-written kernel
is JIT-compiled before and after the pass and both are run for many trip counts, including 0
(the guard skips the loop), 1, 2, N-1, N, N+1 and 17; results and memory must be identical."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from corpus_check import in_child
from llvmlite import ir
from pycc_stencil.emit.host_jit import compile_module, initialize
from pycc_stencil.emit.targets import host_target
from pycc_stencil.ir_passes.core.analyses import loops_of
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from pycc_stencil.ir_passes.unroll import is_remainder, unrolled_loops

HOST = host_target()

I1, I32, I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
FACTORS = [2, 3, 4, 8]


def guarded_sum() -> ir.Module:
    """`for (i = 0; i < n; i++) { acc = acc * 3 + a[i]; out[i] = acc; } return acc;` as clang
    -O2 emits it: `n > 0` guard, one rotated block testing `i.next == n`, an LCSSA phi."""
    module = ir.Module()
    f = ir.Function(module, ir.FunctionType(I64, [I64, PTR, PTR]), "kernel")
    n, a, out = f.args
    entry, ph, loop, exit_, end = (
        f.append_basic_block(x) for x in "entry ph loop exit end".split()
    )
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, ir.Constant(I64, 0)), ph, end)
    b.position_at_end(ph)
    b.branch(loop)
    b.position_at_end(loop)
    i, acc = b.phi(I64, "i"), b.phi(I64, "acc")
    x = b.load(b.gep(a, [i], inbounds=True, source_etype=I64), typ=I64)
    acc_next = b.add(b.mul(acc, ir.Constant(I64, 3)), x, name="acc.next")
    b.store(acc_next, b.gep(out, [i], inbounds=True, source_etype=I64))
    i_next = b.add(i, ir.Constant(I64, 1), name="i.next", flags=["nuw", "nsw"])
    i.add_incoming(ir.Constant(I64, 0), ph)
    i.add_incoming(i_next, loop)
    acc.add_incoming(ir.Constant(I64, 7), ph)
    acc.add_incoming(acc_next, loop)
    b.cbranch(b.icmp_signed("==", i_next, n), exit_, loop)
    b.position_at_end(exit_)
    lcssa = b.phi(I64, "acc.lcssa")
    lcssa.add_incoming(acc_next, loop)
    b.branch(end)
    b.position_at_end(end)
    result = b.phi(I64, "result")
    result.add_incoming(ir.Constant(I64, 0), entry)
    result.add_incoming(lcssa, exit_)
    b.ret(result)
    return module


def do_while_diamond() -> ir.Module:
    """`i = a; k = 0; do { s = c ? s * 3 + i : s ^ i; out[k++] = s; i += 4; } while (i + 4 <=u
    b - 1)`: a diamond in the body, an unsigned test of the updated IV against a bound computed
    before the loop, a second IV (k, i64) indexing memory."""
    module = ir.Module()
    f = ir.Function(module, ir.FunctionType(I32, [I32, I32, I1, PTR]), "kernel")
    a, bound, c, out = f.args
    names = "entry loop then else latch exit".split()
    entry, header, then, else_, latch, exit_ = (f.append_basic_block(x) for x in names)
    b = ir.IRBuilder(entry)
    limit = b.sub(bound, ir.Constant(I32, 1), name="limit")
    b.branch(header)
    b.position_at_end(header)
    i, k, s = b.phi(I32, "i"), b.phi(I64, "k"), b.phi(I32, "s")
    b.cbranch(c, then, else_)
    b.position_at_end(then)
    s_then = b.add(b.mul(s, ir.Constant(I32, 3)), i)
    b.branch(latch)
    b.position_at_end(else_)
    s_else = b.xor(s, i)
    b.branch(latch)
    b.position_at_end(latch)
    s_next = b.phi(I32, "s.next")
    s_next.add_incoming(s_then, then)
    s_next.add_incoming(s_else, else_)
    b.store(s_next, b.gep(out, [k], inbounds=True, source_etype=I32))
    k_next = b.add(k, ir.Constant(I64, 1), name="k.next", flags=["nsw"])
    i_next = b.add(ir.Constant(I32, 4), i, name="i.next")
    for phi, init, update in ((i, a, i_next), (k, ir.Constant(I64, 0), k_next), (s, a, s_next)):
        phi.add_incoming(init, entry)
        phi.add_incoming(update, latch)
    b.cbranch(b.icmp_unsigned(">=", limit, i_next), header, exit_)
    b.position_at_end(exit_)
    b.ret(b.add(s_next, b.trunc(k_next, I32)))
    return module


def count_down() -> ir.Module:
    """`i = n; do { s = s * 5 + i; out[i] = s; i -= 2; } while (i > 0)` with the test on the
    decremented IV (signed, step -2)."""
    module = ir.Module()
    f = ir.Function(module, ir.FunctionType(I32, [I32, PTR]), "kernel")
    n, out = f.args
    entry, loop, exit_ = (f.append_basic_block(x) for x in ("entry", "loop", "exit"))
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    i, s = b.phi(I32, "i"), b.phi(I32, "s")
    s_next = b.add(b.mul(s, ir.Constant(I32, 5)), i, name="s.next")
    index = b.sext(i, I64)
    b.store(s_next, b.gep(out, [index], inbounds=True, source_etype=I32))
    i_next = b.sub(i, ir.Constant(I32, 2), name="i.next", flags=["nsw"])
    i.add_incoming(n, entry)
    i.add_incoming(i_next, loop)
    s.add_incoming(ir.Constant(I32, 1), entry)
    s.add_incoming(s_next, loop)
    b.cbranch(b.icmp_signed(">", i_next, ir.Constant(I32, 0)), loop, exit_)
    b.position_at_end(exit_)
    b.ret(s_next)
    return module


def trip_counts(factor: int) -> list[int]:
    return sorted({0, 1, 2, factor - 1, factor, factor + 1, 2 * factor + 1, 17})


def run_guarded_sum(module: ir.Module, trips: int):
    jit = compile_module(module, ["kernel"], opt_level=0)
    call = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)(
        jit.function_address("kernel")
    )
    a = np.arange(1, 41, dtype=np.int64) * 7919
    out = np.full(40, -1, dtype=np.int64)
    return call(trips, a.ctypes.data, out.ctypes.data), out.tolist()


def run_do_while(module: ir.Module, trips: int):
    """Bound b such that the loop runs `trips` times from a = 3 (once for trips 0)."""
    jit = compile_module(module, ["kernel"], opt_level=0)
    call = ctypes.CFUNCTYPE(
        ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_bool, ctypes.c_void_p
    )(jit.function_address("kernel"))
    results = []
    for c in (True, False):
        out = np.full(40, -1, dtype=np.int32)
        results.append((call(3, 3 + 4 * trips, c, out.ctypes.data), out.tolist()))
    return results


def run_count_down(module: ir.Module, trips: int):
    """n = 2 * trips - 1 runs `trips` times (n <= 0: once, writing out[n] only for n = 0)."""
    jit = compile_module(module, ["kernel"], opt_level=0)
    call = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)(
        jit.function_address("kernel")
    )
    out = np.full(40, -1, dtype=np.int32)
    n = 2 * trips - 1 if trips else 0
    return call(n, out.ctypes.data), out.tolist()


KERNELS = {
    "guarded_sum": (guarded_sum, run_guarded_sum),
    "do_while_diamond": (do_while_diamond, run_do_while),
    "count_down": (count_down, run_count_down),
}


@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_rotated_loop_unrolled_is_exact(kernel, factor):
    initialize()
    build, run = KERNELS[kernel]
    original, unrolled = build(), build()
    result = run_passes(unrolled, parse_pipeline(f"unroll({factor})"), verify=True, target=HOST)
    passed = [r.message for r in result.remarks if r.kind == "passed"]
    assert passed == [f"loop unrolled by {factor}"], [str(r) for r in result.remarks]
    function = unrolled.get_global("kernel")
    loops = loops_of(function).loops
    assert len(loops) == 2 and sum(is_remainder(lp) for lp in loops) == 1
    (record,) = unrolled_loops(function).values()
    assert record.factor == factor and record.latch.terminator.operands == [record.header]
    counts = trip_counts(factor)
    results = in_child(lambda: [(run(unrolled, t), run(original, t)) for t in counts])
    for trips, (got, expected) in zip(counts, results):
        assert got == expected, (kernel, factor, trips)


def constant_rotated() -> ir.Module:
    """`for (i = 0; i < 6; i++) s = s * 3 + a[i];` rotated, the guard folded away: a
    constant trip count of 6 in latch-tested form."""
    module = ir.Module()
    f = ir.Function(module, ir.FunctionType(I64, [PTR]), "kernel")
    (a,) = f.args
    entry, loop, exit_ = (f.append_basic_block(x) for x in ("entry", "loop", "exit"))
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    i, s = b.phi(I64, "i"), b.phi(I64, "s")
    x = b.load(b.gep(a, [i], inbounds=True, source_etype=I64), typ=I64)
    s_next = b.add(b.mul(s, ir.Constant(I64, 3)), x, name="s.next")
    i_next = b.add(i, ir.Constant(I64, 1), name="i.next", flags=["nuw", "nsw"])
    i.add_incoming(ir.Constant(I64, 0), entry)
    i.add_incoming(i_next, loop)
    s.add_incoming(ir.Constant(I64, 2), entry)
    s.add_incoming(s_next, loop)
    b.cbranch(b.icmp_unsigned("<", i_next, ir.Constant(I64, 6)), loop, exit_)
    b.position_at_end(exit_)
    lcssa = b.phi(I64, "s.lcssa")
    lcssa.add_incoming(s_next, loop)
    b.ret(lcssa)
    return module


def test_rotated_constant_loop_is_fully_unrolled():
    initialize()
    original, flat = constant_rotated(), constant_rotated()
    result = run_passes(flat, parse_pipeline("unroll-full"), verify=True, target=HOST)
    assert [r.message for r in result.remarks] == ["loop fully unrolled (6 iterations)"]
    function = flat.get_global("kernel")
    assert loops_of(function).loops == [] and len(function.blocks) == 1
    a = np.array([5, -3, 11, 2, 9, 4, 100], dtype=np.int64)

    def run(module):
        jit = compile_module(module, ["kernel"], opt_level=0)
        address = jit.function_address("kernel")
        return ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)(address)(a.ctypes.data)

    expected = 2 * 3**6 + sum(int(x) * 3 ** (5 - k) for k, x in enumerate(a[:6]))
    assert in_child(lambda: (run(flat), run(original))) == (expected, expected)
