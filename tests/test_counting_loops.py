"""Time loops whose counter only counts are time-tiled whatever way they count: down
(`for (t = T; t > 0; t--)`), by two or three, in an `unsigned` or a `size_t`, to `!=`, in while
loops (`t++` ending the body, `while (t-- > 0)`), in do-while loops, in `short` and `char`
counters (ir_passes/core/counters.py rewrites them to count up from zero or in an int,
rotation.py tests a do-while loop before its body; polyhedral/scop.py takes a while loop's
closing `t++` for its update).

1. The trip count the rewrite computes before the loop is the number of times C runs the
   body, for every test, width and step it rewrites, at the integers' limits (JIT-run
   against a model of C's loop: simulated where it runs few times). Loops it must leave
   alone (a counter that may wrap, one the body reads) are left alone.
2. Pointer-swap Jacobi sweeps under each time loop are time-tiled and bit-exact against cc
   at odd and prime extents, extents smaller than a tile and T = 0, 1, odd.
"""

from __future__ import annotations

import ctypes
import itertools
import re
import subprocess

import pytest
from corpus_check import kernel_cases
from llvmlite import ir
from pycc_stencil.emit.host_jit import compile_module
from pycc_stencil.ir_passes.core.counters import count_up_from_zero
from test_compiler_mode import SMALL_CACHES
from test_tiling import (
    PYCC,
    _split_functions,
    assert_bit_exact,
    assert_same_output,
    assert_transformed,
    build_both,
    check_tiled,
    missed,
    passed,
)

I64 = ir.IntType(64)

# --------------------------------------------------------------------------------------------
# 1. the trip count

#: (stay predicate, counter width, step, flags of the update)
REWRITTEN = [
    ("slt", 32, 1, []),
    ("slt", 32, 3, ["nsw"]),
    ("sle", 32, 2, ["nsw"]),
    ("sgt", 32, -1, []),
    ("sge", 32, -1, ["nsw"]),
    ("sge", 32, -4, ["nsw"]),
    ("ult", 32, 1, []),
    ("ugt", 32, -1, []),
    ("uge", 32, -3, ["nuw"]),
    ("ne", 32, 1, []),
    ("ne", 32, -1, []),
    ("slt", 64, 5, ["nsw"]),
    ("sgt", 64, -1, []),
    ("sge", 64, -1, ["nsw"]),
    ("ult", 64, 1, []),
    ("ugt", 64, -1, []),
    ("ne", 64, 1, []),
]
#: loops that may wrap around (C defines it for unsigned, the loop may run forever)
LEFT_ALONE = [("ule", 32, 1, []), ("ult", 32, 2, []), ("sle", 64, 1, []), ("ugt", 64, -2, [])]
_SYMBOL = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "ne": "!="}


def _counting_function(
    module: ir.Module, name: str, pred, width, step, flags, read=False, widened=False, fixed=None
):
    """`i64 name(iW first, iW bound)`: `n = 0; for (c = first; c pred bound; c += step) n++;
    return n` in the front end's form; with `read`, the body adds the counter to n; with
    `widened`, the test compares the counter zero-extended to 64 bits with an i64 bound;
    with `fixed`, the bound is that constant (the second argument is not read)."""
    t = ir.IntType(width)
    function = ir.Function(module, ir.FunctionType(I64, [t, I64 if widened else t]), name)
    first, bound = function.args
    bound = bound if fixed is None else ir.Constant(t, fixed)
    entry, header, body, exit_ = (
        function.append_basic_block(n) for n in "entry header body exit".split()
    )
    b = ir.IRBuilder(entry)
    b.branch(header)
    b.position_at_end(header)
    c, n = b.phi(t, "c"), b.phi(I64, "n")
    compare = b.icmp_signed if pred[0] == "s" else b.icmp_unsigned
    tested = b.zext(c, I64) if widened else c
    b.cbranch(compare(_SYMBOL[pred.lstrip("su")], tested, bound), body, exit_)
    b.position_at_end(body)
    counted = ir.Constant(I64, 1)
    if read:
        counted = c if width == 64 else b.sext(c, I64)
    more = b.add(n, counted)
    update = b.add(c, ir.Constant(t, step), flags=flags)
    b.branch(header)
    c.add_incoming(first, entry)
    c.add_incoming(update, body)
    n.add_incoming(ir.Constant(I64, 0), entry)
    n.add_incoming(more, body)
    b.position_at_end(exit_)
    b.ret(n)
    return function


def _values(width: int, signed: bool) -> list[int]:
    """Bit patterns of the integers' limits and of small numbers around zero."""
    top = 1 << width
    low, high = (-(top >> 1), (top >> 1) - 1) if signed else (0, top - 1)
    picks = {low, low + 1, low + 2, -7, -1, 0, 1, 2, 5, 9, high - 2, high - 1, high}
    return sorted(v % top for v in picks if low <= v <= high)


def _c_count(pred: str, width: int, step: int, first: int, bound: int) -> int | None:
    """How often C runs the body (bit patterns in, counts above 2^63 - 1 saturated), None
    when the loop overflows a signed counter (undefined behaviour: any count is right)."""
    top, kind, signed = 1 << width, pred.lstrip("su"), pred[0] == "s"

    def value(bits: int) -> int:
        return bits - top if signed and bits >= top >> 1 else bits

    if kind == "ne":
        return min(((bound - first) * step) % top, (1 << 63) - 1)
    a, e = value(first), value(bound) + {"le": 1, "ge": -1}.get(kind, 0)
    count = max(0, -((a - e) // step))  # ceil((e - a) / step), for either sign of step
    after = a + count * step
    low, high = (-(top >> 1), (top >> 1) - 1) if signed else (0, top - 1)
    if count and not low <= after <= high:
        return None  # the update wraps: only flagged counters (poison) are asked
    return min(count, (1 << 63) - 1)


def _simulated(pred: str, width: int, step: int, first: int, bound: int, limit: int) -> int:
    """C's loop run step by step (at most `limit` times) on bit patterns."""
    top, signed = 1 << width, pred[0] == "s"
    ops = {"lt": int.__lt__, "le": int.__le__, "gt": int.__gt__, "ge": int.__ge__, "ne": int.__ne__}

    def value(bits: int) -> int:
        return bits - top if signed and bits >= top >> 1 else bits

    count, c = 0, first
    while count < limit and ops[pred.lstrip("su")](value(c), value(bound)):
        count, c = count + 1, (c + step) % top
    return count


@pytest.fixture(scope="module")
def rewritten():
    """The JIT-compiled rewritten loops of REWRITTEN, and how many loops were rewritten."""
    module = ir.Module("counters")
    names = [f"f{k}" for k in range(len(REWRITTEN))]
    changed = sum(
        count_up_from_zero(_counting_function(module, name, *config))
        for name, config in zip(names, REWRITTEN, strict=True)
    )
    jit = compile_module(module, names)
    functions = []
    for name, (_, width, _, _) in zip(names, REWRITTEN, strict=True):
        t = ctypes.c_uint32 if width == 32 else ctypes.c_uint64
        functions.append(ctypes.CFUNCTYPE(ctypes.c_int64, t, t)(jit.function_address(name)))
    return functions, changed, jit


@pytest.mark.parametrize(
    "k", range(len(REWRITTEN)), ids=lambda k: "{}-i{}-step{}".format(*REWRITTEN[k])
)
def test_the_trip_count_is_cs_for_every_test_width_and_step(rewritten, k):
    functions, changed, _ = rewritten
    assert changed == len(REWRITTEN)
    pred, width, step, _ = REWRITTEN[k]
    values = _values(width, pred[0] == "s")
    for first, bound in itertools.product(values, values):
        expected = _c_count(pred, width, step, first, bound)
        if expected is None:
            continue
        if expected <= 1000:
            assert _simulated(pred, width, step, first, bound, 1001) == expected
        assert functions[k](first, bound) == expected, (pred, width, step, first, bound)


@pytest.mark.parametrize("config", LEFT_ALONE, ids=lambda c: "{}-i{}-step{}".format(*c))
def test_a_counter_that_may_wrap_is_left_alone(config):
    module = ir.Module("wraps")
    assert count_up_from_zero(_counting_function(module, "f", *config)) == 0


@pytest.mark.parametrize("pred, step", [("ne", 1), ("ult", 1), ("ne", -1)])
def test_a_counter_tested_wider_than_it_wraps_is_left_alone(pred, step):
    """`for (unsigned t = 4294967293u; t != 1UL; t++)` runs 4 times (t wraps at 2^32, not at
    the 64 bits it is compared in): a new user's review found it counted as 2^63 - 1."""
    module = ir.Module("widened")
    function = _counting_function(module, "f", pred, 32, step, [], widened=True)
    assert count_up_from_zero(function) == 0


#: (stay predicate, width, step, constant bound, rewritten): without the no-wrap flag, a
#: constant bound that leaves room for the last step rules the wrap out
CONSTANT_BOUNDS = [
    ("uge", 32, -1, 1, True),  # unsigned t >= 1; t--
    ("ule", 32, 1, 100, True),
    ("ult", 32, 3, 4294967293, True),
    ("sge", 32, -2, -2147483646, True),
    ("ule", 32, 1, 4294967295, False),  # t <= UINT_MAX: forever
    ("uge", 32, -1, 0, False),  # t >= 0: forever
    ("ult", 32, 3, 4294967294, False),  # the last step wraps past 2^32
    ("sge", 32, -2, -2147483647, False),
]


def test_a_constant_bound_with_room_for_the_last_step_rules_the_wrap_out():
    module = ir.Module("constant bounds")
    names = []
    for k, (pred, width, step, bound, rewritten) in enumerate(CONSTANT_BOUNDS):
        function = _counting_function(module, f"g{k}", pred, width, step, [], fixed=bound)
        assert count_up_from_zero(function) == int(rewritten), CONSTANT_BOUNDS[k]
        names.append(function.name)
    jit = compile_module(module, names)
    for k, (pred, width, step, bound, rewritten) in enumerate(CONSTANT_BOUNDS):
        if not rewritten:
            continue
        run = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_uint32, ctypes.c_uint32)
        counted = run(jit.function_address(names[k]))
        for first in _values(width, pred[0] == "s"):
            expected = _c_count(pred, width, step, first, bound % (1 << width))
            assert counted(first, 0) == expected, (CONSTANT_BOUNDS[k], first)


def test_a_counter_the_body_reads_is_left_alone():
    module = ir.Module("reads")
    assert count_up_from_zero(_counting_function(module, "f", "sgt", 32, -1, [], read=True)) == 0


# --------------------------------------------------------------------------------------------
# 1b. `short` and `char` counters, widened to the int C computes them in

NARROW_C = r"""
long short_up(int a, int b) { long n = 0; for (short t = a; t < (short)b; t++) n += t; return n; }
long short_down(int a, int b) {
  long n = 0; for (short t = a; t > (short)b; t--) n += 3 * t; return n;
}
long uchar_up(int a, int b) {
  long n = 0; for (unsigned char t = a; t < (unsigned char)b; t++) n += t; return n;
}
long ushort_down(int a, int b) {
  long n = 0; for (unsigned short t = a; t > (unsigned short)b; t--) n += t; return n;
}
long schar_to_constant(int a, int b) {
  long n = b; for (signed char t = a; t < 100; t++) n += t; return n;
}
long from_outer(int a, int b) {  /* the inner counter starts at the outer loop's short s */
  long n = 0; short s = a;
  for (int j = 0; j < 3; j++) { for (short t = s; t < (short)b; t++) n += t * (j + 1); s += 2; }
  return n;
}
long short_after(int a, int b) {
  short t; long n = 0; for (t = a; t < (short)b; t++) n++; return n * 100000 + t;
}
"""
#: function -> (first, bound) pairs: the types' limits and around zero
NARROW_RUNS = {
    "short_up": [(-32768, 32767), (32760, 32767), (-5, 7), (0, 0), (7, -5), (-32768, -32768)],
    "short_down": [(32767, -32768), (-32760, -32768), (7, -5), (3, 3)],
    "uchar_up": [(0, 255), (250, 255), (255, 0), (3, 200), (300, 260)],
    "ushort_down": [(65535, 0), (5, 65530), (9, 2)],
    "schar_to_constant": [(-128, 1), (99, 2), (100, 3), (127, 4), (-1, 5)],
    "short_after": [(-32768, 32767), (5, 2), (-9, 9)],
    "from_outer": [(-7, 4), (32760, 32767), (0, 0)],
}
#: may wrap or step by two: left as they are (`t <= T` in a short runs forever at SHRT_MAX)
NARROW_LEFT = r"""
long to_an_int(int b) { long n = 0; for (signed char t = 0; t < b; t++) n++; return n; }
long up_to_equal(int b) { long n = 0; for (short t = 0; t <= (short)b; t++) n++; return n; }
long by_two(int b) { long n = 0; for (short t = 0; t < (short)b; t += 2) n++; return n; }
"""


def _narrow_jit(tmp_path, widen: bool):
    from pycc_stencil.frontend import lower_file
    from pycc_stencil.ir_passes.core.counters import widen_narrow_counters

    source = tmp_path / f"narrow_{widen}.c"
    source.write_text(NARROW_C)
    module = lower_file(str(source)).module
    if widen:
        widened = {f.name: widen_narrow_counters(f) for f in module.functions if f.blocks}
        assert widened == dict.fromkeys(NARROW_RUNS, 1), widened
        text = "".join(str(f) for f in module.functions if f.name != "from_outer")
        assert not re.search(r"phi\s+i(8|16)\b", text), text  # every counter is an int
        # (from_outer's short s is no counter: it stays; its inner counter starts from it)
    jit = compile_module(module, list(NARROW_RUNS))
    signature = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_int, ctypes.c_int)
    return {name: signature(jit.function_address(name)) for name in NARROW_RUNS}, jit


def test_narrow_counters_count_as_c_counts(tmp_path):
    (before, _j1), (after, _j2) = _narrow_jit(tmp_path, False), _narrow_jit(tmp_path, True)
    for name, runs in NARROW_RUNS.items():
        for a, b in runs:
            assert after[name](a, b) == before[name](a, b), (name, a, b)
    assert before["short_up"](-5, 7) == sum(range(-5, 7))  # the runs exercise the loops


def test_narrow_counters_that_may_wrap_are_left_alone(tmp_path):
    from pycc_stencil.frontend import lower_file
    from pycc_stencil.ir_passes.core.counters import widen_narrow_counters

    source = tmp_path / "left.c"
    source.write_text(NARROW_LEFT)
    module = lower_file(str(source)).module
    assert [widen_narrow_counters(f) for f in module.functions if f.blocks] == [0, 0, 0]


# --------------------------------------------------------------------------------------------
# 2. time-tiled Jacobi sweeps under each time loop

SWEEP = r"""
    for (int i = 1; i <= nx; i++)
      for (int j = 1; j <= ny; j++)
        v[i * m + j] = 0.25 * (u[(i - 1) * m + j] + u[(i + 1) * m + j] + u[i * m + j - 1]
                               + u[i * m + j + 1]);
    double *w = u; u = v; v = w;
"""
#: name -> (time loop, its parameters)
TIME_LOOPS = {
    "down": ("for (int t = T; t > 0; t--)", "int T"),
    "down_by_three": ("for (int t = hi; t >= lo; t -= 3)", "int lo, int hi"),
    "up_by_two": ("for (int t = lo; t < hi; t += 2)", "int lo, int hi"),
    "in_unsigned": ("for (unsigned t = 0; t < T; t++)", "unsigned T"),
    "unsigned_down": ("for (unsigned t = T; t > 0; t--)", "unsigned T"),
    "long_down": ("for (long t = T - 1; t >= 0; t--)", "long T"),
    "in_size_t": ("for (size_t t = 0; t < T; t++)", "size_t T"),
    "to_not_equal": ("for (unsigned t = lo; t != hi; t++)", "unsigned lo, unsigned hi"),
    # the front end's `long t += 2` adds `sext i32 2 to i64`: still a constant step
    "long_by_two": ("for (long t = 0; t < T; t += 2)", "long T"),
    # while loops: the counter's update ends the body, or is part of the test
    "while_up": ("int t = 0; while (t < T)", "int T", "t++;"),
    "while_down": ("long t = T; while (t > 0)", "long T", "t -= 1;"),
    "while_post_increment": ("int t = 0; while (t++ < T)", "int T"),
    "while_post_decrement": ("unsigned t = T; while (t-- > 0)", "unsigned T"),
    # narrow counters: C adds in int and truncates
    "in_short": ("for (short t = 0; t < T; t++)", "short T"),
    "uchar_down": ("for (unsigned char t = T; t > 0; t--)", "unsigned char T"),
    # do-while loops: the body runs once before the first test
    "do_while": ("int t = lo; do", "int lo, int hi", "t++;", " while (t < hi);"),
    "do_while_to_less": ("long t = 0; do", "long T", "t++;", " while (t < T - 1);"),
}


def _source(name: str) -> str:
    loop, params, tail, after = (*TIME_LOOPS[name], "", "")[:4]
    return (
        f"void {name}(double *u, double *v, int nx, int ny, {params}) {{\n"
        f"  int m = ny + 2;\n  {loop} {{{SWEEP}  {tail}}}{after}\n}}\n"
    )


#: a while loop's counter choosing the time plane, `t++` ending its body (no pointer swap
#: whose unrolling would restructure the loop first), and a short counter choosing it
WHILE_MOD2 = r"""
void while_mod2(int n, double A[2][n][n], int T) {
  int t = 0;
  while (t < T) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[(t + 1) % 2][i][j] = 0.2 * (A[t % 2][i][j] + A[t % 2][i - 1][j] + A[t % 2][i + 1][j]
                                      + A[t % 2][i][j - 1] + A[t % 2][i][j + 1]);
    t++;
  }
}
/* a do-while time loop choosing the plane: one step at least */
void do_mod2(int n, double A[2][n][n], int T) {
  int t = 0;
  do {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[(t + 1) % 2][i][j] = 0.2 * (A[t % 2][i][j] + A[t % 2][i - 1][j] + A[t % 2][i + 1][j]
                                      + A[t % 2][i][j - 1] + A[t % 2][i][j + 1]);
    t++;
  } while (t < T);
}
/* two sweeps a step, no swap, counting down: the trip count is computed before an empty
   preheader (a new user's review: "the loop nest's preheader or exit is not empty") */
void down_two_sweeps(int n, double A[n][n], double B[n][n], int T) {
  for (int t = T; t > 0; t--) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i - 1][j] + B[i + 1][j] + B[i][j - 1] + B[i][j + 1]);
  }
}
/* narrow values read as C reads them (a new user's review): an unsigned char of 200 is no
   -56, a short of 40000 is -25536 (the tiled code sign-extended every parameter) */
#define PLANE_SWEEP(t) \
  for (int i = 1; i < n - 1; i++) \
    for (int j = 1; j < n - 1; j++) \
      A[((t) + 1) % 2][i][j] = 0.2 * (A[(t) % 2][i][j] + A[(t) % 2][i - 1][j] \
                                      + A[(t) % 2][i + 1][j] + A[(t) % 2][i][j - 1] \
                                      + A[(t) % 2][i][j + 1]);
void uchar_from(int n, double A[2][n][n], unsigned char t0, unsigned char T) {
  for (unsigned char t = t0; t < T; t++) { PLANE_SWEEP(t) }
}
void int_to_uchar(int n, double A[2][n][n], unsigned char T) {
  for (int t = 0; t < T; t++) { PLANE_SWEEP(t) }
}
void short_narrowed(int n, double A[2][n][n], int T) {
  short narrow = T;
  for (int t = 0; t < narrow; t++) { PLANE_SWEEP(t) }
}
/* the same with a short counter the body reads */
void short_mod2(int n, double A[2][n][n], short T) {
  for (short t = 0; t < T; t++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[(t + 1) % 2][i][j] = 0.2 * (A[t % 2][i][j] + A[t % 2][i - 1][j] + A[t % 2][i + 1][j]
                                      + A[t % 2][i][j - 1] + A[t % 2][i][j + 1]);
}
"""
#: every time loop in one file: one compile per pipeline, on one worker
TILE = "time-tile(4,5,7)"
#: (name, sizes and time parameters, pipeline): odd and prime extents, one smaller than a
#: tile, and 0, 1 and an odd number of steps
TILED = [
    ("down", {"nx": 13, "ny": 11, "T": 5}, TILE),
    ("down", {"nx": 2, "ny": 3, "T": 1}, TILE),
    ("down", {"nx": 7, "ny": 5, "T": -2}, TILE),
    ("down_by_three", {"nx": 11, "ny": 17, "lo": -4, "hi": 10}, TILE),
    ("up_by_two", {"nx": 19, "ny": 7, "lo": 3, "hi": 12}, "parallelogram-tile(3,7,2)"),
    ("in_unsigned", {"nx": 5, "ny": 13, "T": 3}, TILE),
    ("unsigned_down", {"nx": 17, "ny": 9, "T": 4}, TILE),
    ("unsigned_down", {"nx": 3, "ny": 3, "T": 0}, TILE),
    ("long_down", {"nx": 9, "ny": 23, "T": 7}, TILE),
    ("in_size_t", {"nx": 11, "ny": 3, "T": 2}, "parallelogram-tile(3,7,2)"),
    ("to_not_equal", {"nx": 13, "ny": 13, "lo": 4, "hi": 9}, TILE),
    ("long_by_two", {"nx": 7, "ny": 11, "T": 7}, TILE),
    ("while_up", {"nx": 13, "ny": 5, "T": 3}, TILE),
    ("while_up", {"nx": 2, "ny": 7, "T": 0}, TILE),
    ("while_down", {"nx": 11, "ny": 9, "T": 5}, "parallelogram-tile(3,7,2)"),
    ("while_post_increment", {"nx": 5, "ny": 17, "T": 4}, TILE),
    ("while_post_decrement", {"nx": 19, "ny": 3, "T": 1}, TILE),
    ("while_mod2", {"n": 17, "T": 5}, TILE),
    ("while_mod2", {"n": 4, "T": 2}, TILE),
    ("in_short", {"nx": 11, "ny": 7, "T": 6}, TILE),
    ("uchar_down", {"nx": 5, "ny": 13, "T": 3}, "parallelogram-tile(3,7,2)"),
    ("short_mod2", {"n": 13, "T": 7}, TILE),
    ("short_mod2", {"n": 3, "T": 1}, TILE),
    ("do_while", {"nx": 13, "ny": 9, "lo": 2, "hi": 9}, TILE),
    ("do_while", {"nx": 7, "ny": 5, "lo": 4, "hi": -3}, TILE),
    ("do_while_to_less", {"nx": 3, "ny": 11, "T": 6}, "parallelogram-tile(3,7,2)"),
    ("do_mod2", {"n": 17, "T": 6}, TILE),
    ("do_mod2", {"n": 5, "T": 0}, TILE),
    ("down_two_sweeps", {"n": 17, "T": 5}, TILE),
    ("down_two_sweeps", {"n": 4, "T": 1}, "parallelogram-tile(3,7,2)"),
    ("uchar_from", {"n": 11, "t0": 100, "T": 130}, TILE),
    ("uchar_from", {"n": 7, "t0": 200, "T": 100}, TILE),
    ("int_to_uchar", {"n": 5, "T": 130}, TILE),
    ("short_narrowed", {"n": 5, "T": 40000}, TILE),
    ("short_narrowed", {"n": 9, "T": 65539}, TILE),
]


#: each kernel of TIME_LOOPS and WHILE_MOD2 in a file of its own: a check compiles only the
#: kernel it checks (the whole file under each pipeline cost 20 s)
KERNELS = _split_functions("".join(_source(name) for name in TIME_LOOPS) + WHILE_MOD2)
#: what every kernel's file starts with (an identical macro defined twice is C)
HEADER = "#include <stddef.h>\n" + re.search(r"#define PLANE_SWEEP(.*\\\n)*.*\n", WHILE_MOD2)[0]


@pytest.fixture(scope="module")
def loops_file(kernel_file):
    return lambda name: kernel_file(name, HEADER + KERNELS[name])


def _steps(name: str, params: dict) -> int:
    """How many sweeps the time loop runs (as C counts them)."""
    if name == "uchar_from":
        return max(params["T"] - params["t0"], 0)
    if name == "short_narrowed":
        return max((params["T"] + 32768) % 65536 - 32768, 0)
    if name.startswith("do_"):
        return max(params.get("T", 1) - (name == "do_while_to_less"), 1)  # at least once
    if "T" in params:
        return max(params["T"], 0)
    lo, hi = params["lo"], params["hi"]
    return {"down_by_three": (hi - lo) // 3 + 1, "up_by_two": (hi - lo + 1) // 2}.get(name, hi - lo)


@pytest.mark.parametrize(
    "name, params, passes",
    kernel_cases(TILED),
)
def test_time_loops_counting_any_way_are_time_tiled_bit_exact(loops_file, name, params, passes):
    result, remarks = check_tiled(loops_file(name), name, params, passes)
    assert_bit_exact(result, remarks, nonempty=_steps(name, params) > 0)
    assert_transformed(remarks, "time-tiled")


PLANES_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
void while_mod2(int n, double A[2][n][n], int T);
void short_mod2(int n, double A[2][n][n], short T);
void do_mod2(int n, double A[2][n][n], int T);
int main(int argc, char **argv) {
  int n = atoi(argv[1]), T = atoi(argv[2]);
  double *A = malloc(sizeof(double) * 2 * n * n);
  for (int k = 0; k < 2 * n * n; k++) A[k] = (k * 37 % 101) * 0.125;
  while_mod2(n, (double (*)[n][n])A, T);
  short_mod2(n, (double (*)[n][n])A, (short)(T + 1));
  do_mod2(n, (double (*)[n][n])A, T - 1);
  double s = 0.0;
  for (int k = 0; k < 2 * n * n; k++) s = s * 1.0000001 + A[k];
  printf("%a\n", s);
  return 0;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_while_short_and_do_while_time_loops_are_tiled_by_the_default_policy(tmp_path):
    """Compiler mode at -O3 (default policy): the -O3 scan keeps the three forms, each is
    time-tiled, and the program prints what cc's build prints."""
    env, compiled = build_both(  # (the three kernels alone: the file's other loops cost 7 s)
        tmp_path, PLANES_MAIN, WHILE_MOD2, ["-O3"], ["-O3"], dict(SMALL_CACHES, PYCC_TAKEOVER="")
    )
    for name in ("while_mod2", "short_mod2", "do_mod2"):
        kernel = compiled[name]
        assert kernel["compiled_by"] == "pycc-stencil", kernel
        assert any("remark: time-tiled" in r for r in kernel["remarks"]), kernel
    runs = [(67, 9), (40, 13), (5, 1), (3, 0), (31, -2)]
    assert_same_output(tmp_path, env, [[str(v) for v in run] for run in runs])


UNTOUCHED = r"""
/* t <= T in an unsigned: with T = UINT_MAX the loop runs forever, as C defines it */
void may_wrap(double *u, double *v, int nx, int ny, unsigned T) {
  int m = ny + 2;
  for (unsigned t = 0; t <= T; t++) {SWEEP  }
}
/* the sweep reads the counter */
void reads_counter(double *u, double *v, int nx, int ny, int T) {
  int m = ny + 2;
  for (int t = T; t > 0; t--) {
    for (int i = 1; i <= nx; i++)
      for (int j = 1; j <= ny; j++)
        v[i * m + j] = 0.5 * (u[i * m + j - 1] + u[i * m + j + 1]) + t;
    double *w = u; u = v; v = w;
  }
}
""".replace("SWEEP", SWEEP)


@pytest.mark.parametrize(
    "name, words",
    [
        ("may_wrap", "not a signed, non-wrapping comparison"),
        ("reads_counter", "loop step -1 is not +1"),
    ],
)
def test_counters_that_may_wrap_or_are_read_stay_and_say_why(kernel_file, name, words):
    path = kernel_file("untouched", UNTOUCHED)
    result, remarks = check_tiled(path, name, {"nx": 7, "ny": 5, "T": 3}, "time-tile(4,5,7)")
    assert_bit_exact(result, remarks, nonempty=True)
    assert not any(m.startswith("time-tiled") for m in passed(remarks)), remarks
    assert any(words in m for m in missed(remarks)), remarks


LONG_STEPS_C = """
void steps(long T, int n, double *a, double *b) {
  for (long t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++) b[i] = (a[i-1] + a[i] + a[i+1]) / 3.0;
    for (int i = 1; i < n - 1; i++) a[i] = b[i];
  }
}
"""
LONG_STEPS_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
void steps(long T, int n, double *a, double *b);
int main(int argc, char **argv) {
  long T = strtol(argv[1], 0, 0); int n = atoi(argv[2]);
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  for (int i = 0; i < n; i++) { a[i] = (i * 7919) % 1000; b[i] = 0; }
  steps(T, n, a, b);
  printf("%.17g %.17g\n", a[1], a[n / 2]);
  return 0;
}
"""


def test_a_time_loop_of_two_to_the_62_steps_runs_as_long_as_ccs(tmp_path):
    """`for (long t = 0; t < T; t++)` with T = 2^62 or LONG_MAX runs (practically) forever
    under cc; the tiled code's bounds, sums of T with skews and tile sizes, overflowed near
    i64's limits and it returned at once. Beyond `PARAMETER_LIMIT` the original loops run."""
    env, compiled = build_both(
        tmp_path, LONG_STEPS_MAIN, LONG_STEPS_C, ["-O3"], ["-O3"], dict(SMALL_CACHES)
    )
    assert any("remark: time-tiled" in r for r in compiled["steps"]["remarks"])
    assert_same_output(tmp_path, env, [["100", "5000"], ["7", "13"], ["-3", "5000"]])
    for steps in (1 << 62, (1 << 63) - 1):
        with pytest.raises(subprocess.TimeoutExpired):  # as cc's build: still stepping
            subprocess.run([tmp_path / "pycc", str(steps), "5000"], env=env, timeout=1)
