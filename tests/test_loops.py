"""Natural loops, nesting, induction variables and symbolic trip counts (ir_passes/core/loops.py).

Trip counts are checked against the C code itself: each kernel marks its loop bodies with
`TICK(k)` (k = the loop's position in source pre-order, which is also the analysis' order), the
kernel is compiled with `cc` into a program that counts the ticks, and the counts must equal the
expressions evaluated for the same parameters (for a nested loop: summed over the outer loops'
iterations, whose IV values the analysis also predicts).
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from llvmlite import binding as llvm
from llvmlite import ir
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.analyses import FunctionAnalyses, analyses, invalidate, loops_of
from pycc_stencil.ir_passes.core.loops import Loop, LoopInfo, invariant_expr

I1, I32, I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)
CC = shutil.which("cc")

HEADER = """
#ifndef TICK
#define TICK(k) ((void)0)
#endif
"""

HARNESS = """
#include <stdio.h>
#include <stdlib.h>
static long counts[16];
#define TICK(k) (counts[k]++)
#include "{source}"
int main(int argc, char **argv) {{
    for (int a = 1; a + 1 < argc; a += 2) {{
        for (int k = 0; k < 16; k++) counts[k] = 0;
        kern(atoi(argv[a]), atoi(argv[a + 1]));
        for (int k = 0; k < {loops}; k++) printf("%ld ", counts[k]);
        printf("\\n");
    }}
    return 0;
}}
"""


def lower(tmp_path: Path, body: str) -> tuple[Path, ir.Function]:
    path = tmp_path / "kern.c"
    path.write_text(HEADER + textwrap.dedent(body))
    module = lower_file(str(path)).module
    return path, module.get_global("kern")


def cc_counts(path: Path, loops: int, params: list[tuple[int, int]]) -> list[list[int]]:
    """Body executions per loop counted by the C code compiled with cc."""
    harness = path.with_name("harness.c")
    harness.write_text(HARNESS.format(source=path.name, loops=loops))
    exe = path.with_name("harness")
    subprocess.run([CC, "-O0", "-o", str(exe), str(harness)], check=True)
    args = [str(v) for pair in params for v in pair]
    out = subprocess.run([str(exe), *args], check=True, capture_output=True, text=True).stdout
    return [[int(x) for x in line.split()] for line in out.splitlines()]


def predicted_counts(info: LoopInfo, n: int, m: int) -> list[int]:
    """Total body executions of every loop from the analysis, for top-level loops that run."""
    totals = {loop: 0 for loop in info}

    def visit(loop: Loop, env: dict) -> None:
        count = loop.trip_count.evaluate(env)
        totals[loop] += count
        ivs = [(iv, invariant_expr(iv.init).evaluate(env)) for iv in loop.induction_variables]
        for k in range(count):
            inner = dict(env)
            for iv, init in ivs:
                inner[iv.phi] = init + k * iv.step
            for child in loop.children:
                visit(child, inner)

    for loop in info.top_level:
        visit(loop, {"n": n, "m": m})
    return [totals[loop] for loop in info]


def check_against_cc(tmp_path: Path, body: str, params: list[tuple[int, int]]) -> LoopInfo:
    path, function = lower(tmp_path, body)
    info = loops_of(function)
    for loop in info:
        assert loop.trip_count is not None, (loop, loop.trip_count_reason)
    measured = cc_counts(path, len(info), params)
    for (n, m), counts in zip(params, measured):
        assert predicted_counts(info, n, m) == counts, (n, m, [str(lp.trip_count) for lp in info])
    return info


needs_cc = pytest.mark.skipif(CC is None, reason="no cc")
SIZES = [(0, 0), (1, 1), (2, 3), (7, 5), (10, 10), (-3, 2), (13, 1)]


# --------------------------------------------------------------------------------------------
# Kernels lowered by the front end, counted by cc


@needs_cc
def test_one_dimensional(tmp_path):
    info = check_against_cc(
        tmp_path,
        """
        void kern(int n, int m) {
            for (int i = 0; i < n; i++) TICK(0);
        }
        """,
        SIZES,
    )
    (loop,) = info
    assert loop.depth == 1 and loop.innermost and loop.parent is None
    assert loop.preheader.name == "preheader" and loop.latch.name == "latch"
    assert loop.exit.name == "exit" and loop.exiting == [loop.header]
    (iv,) = loop.induction_variables
    assert iv.phi.name == "i" and iv.step == 1 and iv.nsw and not iv.nuw and iv.is_canonical
    assert iv.type == I32
    tc = loop.trip_count
    assert str(tc) == "max(0, ceil((%n) / 1))"
    assert tc.minimum == 0 and tc.predicate == "slt" and tc.no_wrap
    assert [tc.evaluate({"n": n}) for n in (-1, 0, 1, 5)] == [0, 0, 1, 5]


@needs_cc
def test_two_dimensional_nest(tmp_path):
    info = check_against_cc(
        tmp_path,
        """
        void kern(int n, int m) {
            for (int i = 0; i < n; i++) { TICK(0);
                for (int j = 0; j < m; j++) TICK(1); }
        }
        """,
        SIZES,
    )
    outer, inner = info
    assert inner.parent is outer and outer.children == [inner]
    assert (outer.depth, inner.depth) == (1, 2)
    assert info.innermost() == [inner] and not outer.innermost
    assert set(inner.blocks) < set(outer.blocks)
    assert info.loop_for(inner.latch) is inner and info.loop_for(outer.latch) is outer
    assert info.top_level == [outer]


@needs_cc
def test_nest_and_sibling(tmp_path):
    info = check_against_cc(
        tmp_path,
        """
        void kern(int n, int m) {
            for (int i = 0; i < n; i++) { TICK(0);
                for (int j = 0; j < m; j++) TICK(1); }
            for (int k = 0; k < 3; k++) TICK(2);
        }
        """,
        [(2, 3), (0, 4), (5, 0), (1, 1)],
    )
    assert [lp.depth for lp in info] == [1, 2, 1]
    assert len(info.top_level) == 2 and info.loops[2].trip_count.constant == 3


@needs_cc
def test_triangular(tmp_path):
    info = check_against_cc(
        tmp_path,
        """
        void kern(int n, int m) {
            for (int i = 0; i < n; i++) { TICK(0);
                for (int j = i; j < n; j++) TICK(1); }
        }
        """,
        SIZES,
    )
    inner = info.loops[1]
    assert str(inner.trip_count) == "max(0, ceil((%n - %i) / 1))"
    outer_i = info.loops[0].induction_variables[0].phi
    assert inner.trip_count.evaluate({"n": 10, outer_i: 4}) == 6


@needs_cc
def test_step_two_and_three(tmp_path):
    info = check_against_cc(
        tmp_path,
        """
        void kern(int n, int m) {
            for (int i = 0; i < n; i += 2) TICK(0);
            for (int i = m; i < n; i += 3) TICK(1);
        }
        """,
        SIZES + [(8, 1), (9, 0), (11, 2)],
    )
    assert [lp.induction_variables[0].step for lp in info] == [2, 3]
    assert [info.loops[0].trip_count.evaluate({"n": n}) for n in (0, 1, 2, 3, 4)] == [0, 1, 1, 2, 2]


@needs_cc
def test_down_counting(tmp_path):
    info = check_against_cc(
        tmp_path,
        """
        void kern(int n, int m) {
            for (int i = n - 1; i >= 0; i--) TICK(0);
            for (int i = n; i > m; i -= 2) TICK(1);
            for (int i = n; i >= m; i = i - 3) TICK(2);
        }
        """,
        SIZES + [(5, -5), (0, -1)],
    )
    assert [lp.induction_variables[0].step for lp in info] == [-1, -2, -3]
    assert [lp.trip_count.predicate for lp in info] == ["sge", "sgt", "sge"]


@needs_cc
def test_less_equal_and_not_equal(tmp_path):
    info = check_against_cc(
        tmp_path,
        """
        void kern(int n, int m) {
            for (int i = 1; i <= n; i++) TICK(0);
            for (int i = 0; i != n; i++) TICK(1);
            for (int i = n; i != 0; i--) TICK(2);
            for (int i = 0; n >= i; i += 2) TICK(3);
        }
        """,
        [(0, 0), (1, 0), (2, 0), (9, 0), (10, 0)],  # != loops need n >= 0
    )
    assert [lp.trip_count.predicate for lp in info] == ["sle", "ne", "ne", "sle"]
    assert info.loops[0].trip_count.evaluate({"n": 1}) == 1


@needs_cc
def test_unsigned_and_long(tmp_path):
    info = check_against_cc(
        tmp_path,
        """
        void kern(int n, int m) {
            for (unsigned u = 0; u < (unsigned)n; u++) TICK(0);
            for (long k = 0; k < (long)n * 2; k++) TICK(1);
            for (long k = m; k <= n - 1; k++) TICK(2);
            for (unsigned u = 3; u <= (unsigned)n; u += 4) TICK(3);
        }
        """,
        [(0, 0), (1, 0), (7, 2), (12, 12), (13, -4)],
    )
    unsigned, long_ = info.loops[0], info.loops[1]
    assert unsigned.trip_count.predicate == "ult" and not unsigned.trip_count.no_wrap
    assert long_.induction_variables[0].type == I64
    assert str(long_.trip_count) == "max(0, ceil((2*%n) / 1))"


@needs_cc
def test_while_and_do_while(tmp_path):
    info = check_against_cc(
        tmp_path,
        """
        void kern(int n, int m) {
            int i = 0;
            while (i < n) { TICK(0); i++; }
            int j = n;
            while (j > m) { TICK(1); j -= 2; }
            int k = m;
            do { TICK(2); k++; } while (k < n);
            int d = n;
            do { TICK(3); d -= 3; } while (d >= m);
        }
        """,
        SIZES + [(5, 9), (1, 0), (0, 1)],
    )
    do_loop = info.loops[2]
    assert do_loop.exiting == [do_loop.latch] and do_loop.trip_count.minimum == 1
    assert do_loop.trip_count.evaluate({"n": 0, "m": 5}) == 1  # the body runs once anyway


@needs_cc
def test_loops_in_both_branches(tmp_path):
    path, function = lower(
        tmp_path,
        """
        void kern(int n, int m) {
            if (m > 0) {
                for (int i = 0; i < n; i++) TICK(0);
            } else {
                for (int i = n; i > 0; i--) TICK(1);
            }
        }
        """,
    )
    info = loops_of(function)
    assert len(info.top_level) == 2 and all(lp.depth == 1 for lp in info)
    assert all(lp.preheader is not None and lp.exit is not None for lp in info)
    params = [(4, 1), (4, 0), (0, 1), (1, -1)]
    for (n, m), counts in zip(params, cc_counts(path, 2, params)):
        taken = [m > 0, m <= 0]
        expected = [lp.trip_count.evaluate({"n": n}) if t else 0 for lp, t in zip(info, taken)]
        assert expected == counts


@needs_cc
def test_offset_and_widened_comparisons(tmp_path):
    info = check_against_cc(
        tmp_path,
        """
        void kern(int n, int m) {
            for (int i = 0; i + 2 < n; i++) TICK(0);
            for (int i = m; i - 1 <= n; i += 2) TICK(1);
            for (int i = 0; (long)i < (long)n + m; i++) TICK(2);
            for (int i = 5; n < i + 1; i--) TICK(3);
        }
        """,
        SIZES + [(5, -5), (3, 4)],
    )
    assert info.loops[0].trip_count.evaluate({"n": 3}) == 1


def test_early_break_has_no_trip_count(tmp_path):
    _, function = lower(
        tmp_path,
        """
        void kern(int n, int m) {
            for (int i = 0; i < n; i++) { if (i == m) break; TICK(0); }
            for (int i = 0; i < n; i++) { if (i == m) continue; TICK(1); }
        }
        """,
    )
    brk, cont = loops_of(function)
    assert brk.trip_count is None and "exiting blocks" in brk.trip_count_reason
    assert brk.induction_variables[0].step == 1  # the IV is still found
    assert len(brk.exiting) == 2
    assert cont.trip_count is not None  # continue goes to the latch: still one exit


def test_data_dependent_and_non_affine(tmp_path):
    _, function = lower(
        tmp_path,
        """
        void kern(int n, int m) {
            for (int i = 1; i < n; i *= 2) TICK(0);
            for (int i = 0; i < n; i += m) TICK(1);
            for (int i = 0; i * i < n; i++) TICK(2);
            for (int i = 0; i < n; i--) TICK(3);
        }
        """,
    )
    doubling, variable_step, square, backwards = loops_of(function)
    assert doubling.induction_variables == [] and doubling.trip_count is None
    assert variable_step.induction_variables[0].step is None
    assert "not a constant" in variable_step.trip_count_reason
    assert square.trip_count is None and "invariant" in square.trip_count_reason
    assert backwards.trip_count is None and "against the step" in backwards.trip_count_reason


# --------------------------------------------------------------------------------------------
# Hand-written IR: clang-style loops


def clang_rotated() -> ir.Function:
    """`for (i = 0; i < n; i++)` as clang -O2 emits it: guarded, rotated, one block.

    entry: br (n > 0), ph, exit;  ph: br loop;
    loop: i = phi [0, ph], [i.next, loop]; ...; i.next = add nuw nsw i, 1;
          br (i.next == n), exit, loop
    """
    module = ir.Module()
    f = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64, I64]), "rotated")
    n, step_arg = f.args
    n.name, step_arg.name = "n", "s"
    entry, ph, body, exit_ = (f.append_basic_block(x) for x in ("entry", "ph", "loop", "exit"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, ir.Constant(I64, 0)), ph, exit_)
    b.position_at_end(ph)
    b.branch(body)
    b.position_at_end(body)
    i = b.phi(I64, "i")
    i.add_incoming(ir.Constant(I64, 0), ph)
    acc = b.phi(I64, "acc")  # not an IV: multiplied
    w = b.phi(I64, "w")  # an IV with an invariant, non-constant step
    acc.add_incoming(ir.Constant(I64, 1), ph)
    acc.add_incoming(b.mul(acc, n), body)
    w.add_incoming(n, ph)
    w.add_incoming(b.sub(w, step_arg, name="w.next"), body)
    nxt = b.add(i, ir.Constant(I64, 1), name="i.next", flags=["nuw", "nsw"])
    i.add_incoming(nxt, body)
    b.cbranch(b.icmp_signed("==", nxt, n), exit_, body)
    b.position_at_end(exit_)
    b.ret_void()
    return f


def test_clang_rotated_loop():
    f = clang_rotated()
    llvm.parse_assembly(str(f.module)).verify()
    (loop,) = loops_of(f)
    assert loop.blocks == [loop.header] and loop.latch is loop.header
    assert loop.preheader.name == "ph" and loop.exit.name == "exit"
    ivs = {iv.phi.name: iv for iv in loop.induction_variables}
    assert set(ivs) == {"i", "w"}
    assert ivs["i"].nsw and ivs["i"].nuw and ivs["i"].step == 1
    assert ivs["w"].step is None and ivs["w"].step_sign == -1 and ivs["w"].step_value.name == "s"
    tc = loop.trip_count
    assert tc.predicate == "ne" and tc.minimum == 1
    # the guard n > 0 holds whenever the loop is entered: one trip per value of n
    assert [tc.evaluate({"n": n}) for n in (1, 2, 17)] == [1, 2, 17]


def clang_do_while_two_blocks() -> ir.Function:
    """`i = a; do { if (c) ...; i += 4; } while (i u< b)`: a diamond inside a rotated loop,
    the test in the latch on the incremented IV, bound `b - 1` computed before the loop."""
    module = ir.Module()
    f = ir.Function(module, ir.FunctionType(ir.VoidType(), [I32, I32, I1]), "dw")
    a, bnd, c = f.args
    a.name, bnd.name, c.name = "a", "b", "c"
    names = ("entry", "loop", "then", "latch", "exit")
    entry, header, then, latch, exit_ = (f.append_basic_block(x) for x in names)
    b = ir.IRBuilder(entry)
    limit = b.sub(bnd, ir.Constant(I32, 1), name="limit")
    b.branch(header)
    b.position_at_end(header)
    i = b.phi(I32, "i")
    i.add_incoming(a, entry)
    b.cbranch(c, then, latch)
    b.position_at_end(then)
    b.branch(latch)
    b.position_at_end(latch)
    nxt = b.add(ir.Constant(I32, 4), i, name="i.next")  # step on the left
    i.add_incoming(nxt, latch)
    # continue while limit u>= i.next, i.e. i.next u<= b - 1 (IV on the right)
    b.cbranch(b.icmp_unsigned(">=", limit, nxt), header, exit_)
    b.position_at_end(exit_)
    b.ret_void()
    return f


def test_clang_do_while_with_diamond():
    f = clang_do_while_two_blocks()
    llvm.parse_assembly(str(f.module)).verify()
    (loop,) = loops_of(f)
    assert [blk.name for blk in loop.blocks] == ["loop", "then", "latch"]
    assert loop.preheader.name == "entry" and loop.latch.name == "latch"
    tc = loop.trip_count
    assert tc.predicate == "ule" and tc.minimum == 1 and not tc.no_wrap

    def simulate(a: int, bound: int) -> int:
        i, trips = a, 0
        while True:
            trips += 1
            i += 4
            if not i <= bound - 1:
                return trips

    for a, bound in [(0, 0), (0, 1), (0, 4), (0, 5), (0, 9), (3, 20), (10, 3), (2, 6)]:
        assert tc.evaluate({"a": a, "b": bound}) == simulate(a, bound), (a, bound, str(tc))


def two_latches() -> ir.Function:
    """header <- latch1, latch2: no unique latch, so no IVs and no trip count."""
    module = ir.Module()
    f = ir.Function(module, ir.FunctionType(ir.VoidType(), [I1]), "two")
    names = ("entry", "header", "l1", "l2", "exit")
    entry, header, l1, l2, exit_ = (f.append_basic_block(x) for x in names)
    b = ir.IRBuilder(entry)
    b.branch(header)
    b.position_at_end(header)
    b.cbranch(f.args[0], l1, exit_)
    b.position_at_end(l1)
    b.cbranch(f.args[0], header, l2)
    b.position_at_end(l2)
    b.branch(header)
    b.position_at_end(exit_)
    b.ret_void()
    return f


def test_two_latches_and_multiple_exits():
    (loop,) = loops_of(two_latches())
    assert loop.latch is None and [x.name for x in loop.latches] == ["l1", "l2"]
    assert loop.preheader.name == "entry"
    assert loop.trip_count is None and loop.trip_count_reason == "2 latches"


def test_cache_and_invalidation():
    f = clang_rotated()
    first = analyses(f)
    assert analyses(f) is first and first.loops is loops_of(f)
    assert first.cfg is first.loops.cfg and first.dominators.dominates(f.blocks[0], f.blocks[2])
    # turn the loop's back edge into a plain branch to the exit: no loop any more
    loop_block = f.blocks[2]
    loop_block.instructions.pop()
    loop_block.terminator = None
    ir.IRBuilder(loop_block).branch(f.blocks[3])
    assert len(loops_of(f)) == 1  # stale until invalidated
    assert first.check_preserved(["cfg", "loops"]) == "the cfg analysis of @rotated changed"
    invalidate(f, keep=["dominators"])
    assert first.cached == ["dominators"]
    assert analyses(f) is first and len(loops_of(f)) == 0
    fresh = FunctionAnalyses(clang_rotated())
    assert len(fresh.loops) == 1 and fresh.check_preserved(["loops"]) is None
    fresh.invalidate()
    assert fresh.cached == [] and len(fresh.loops) == 1


def test_conftest_kernel_blur3():
    from conftest import BLUR3, lowered_module

    lowered = lowered_module(Path("k.c"), [BLUR3])
    function = lowered.module.get_global("blur3")
    (loop,) = loops_of(function)
    assert loop.induction_variables[0].type == I64
    n = function.args[2]  # unnamed: evaluated by the IR value itself, through its sext
    assert [loop.trip_count.evaluate({n: v}) for v in (-2, 0, 1, 6)] == [0, 0, 1, 6]
