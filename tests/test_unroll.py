"""`unroll(N)` (Algorithm 2): bit-exact against cc on corpus kernels for several factors and
sizes (smaller than the factor, prime), the IV step of the unrolled loop, remarks, declines."""

from __future__ import annotations

import numpy as np
import pytest
from corpus.manifest import KERNELS
from corpus_check import assert_fired, busiest, case_label, check_case, on_entry
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.analyses import loops_of
from pycc_stencil.ir_passes.pipeline import PipelineError, parse_pipeline, run_passes

HOST = host_target()

FACTORS = [2, 3, 8]
CHOSEN = [
    ("polybench/jacobi_1d_vla.c", "kernel_jacobi_1d_vla"),
    ("polybench/jacobi_2d_vla.c", "kernel_jacobi_2d_vla"),
    ("polybench/heat_3d_fixed.c", None),
    ("c66x/mean_filter_3x3.c", None),
    ("c66x/sobel.c", None),
    ("c66x/harris_corner.c", None),
    ("legacy/box_blur_u8.c", "box_blur3x3_u8"),
]


def _cases():
    """The first two size sets of each kernel (at its first two variants) and its busiest one,
    which must change something: every factor runs on a non-empty iteration space."""
    for file, function in CHOSEN:
        entry = next(e for e in KERNELS if e["file"] == file and function in (None, e["function"]))
        sizes = entry["params"][:2]
        sizes += [busiest(entry["params"])] if busiest(entry["params"]) not in sizes else []
        for variant in entry["variants"][:2]:
            for params in sizes:
                for factor in FACTORS:
                    label = case_label(entry, variant, params, f"F{factor}")
                    mark = on_entry(entry, variant)
                    yield pytest.param(entry, variant, params, factor, id=label, marks=mark)


@pytest.mark.parametrize("entry, variant, params, factor", list(_cases()))
def test_unrolled_kernel_is_bit_exact(entry, variant, params, factor):
    result, remarks = check_case(entry, variant, params, passes=f"unroll({factor})")
    assert result.status == "OK", str(result)
    assert result.changed or params != busiest(entry["params"]), "empty iteration space"
    assert_fired(remarks, f"unroll({factor})")


SOURCE = """
float f(int n, const float *b, float *a) {
  float s = 0;
  for (int i = 1; i < n - 1; i += 3) { a[i] = b[i - 1] + b[i + 1]; s += b[i]; }
  return s;
}
int g(int n, const int *b) {
  int s = 0;
  for (int i = 0; i < n; i++) { if (b[i] == 0) break; s += b[i]; }
  return s;
}
"""


@pytest.fixture
def lowered(tmp_path):
    path = tmp_path / "k.c"
    path.write_text(SOURCE)
    return lower_file(str(path))


@pytest.mark.parametrize("factor", [2, 3, 4, 8])
def test_unrolled_loop_steps_by_factor_and_remarks(lowered, factor):
    result = run_passes(
        lowered.module, parse_pipeline(f"unroll({factor})"), verify=True, target=HOST
    )
    function = result.module.get_global("f")
    loops = loops_of(function).loops
    steps = sorted(iv.step for loop in loops for iv in loop.induction_variables)
    assert steps == [3, 3 * factor]  # the remainder loop and the unrolled loop
    passed = [r for r in result.remarks if r.kind == "passed"]
    assert [r.message for r in passed] == [f"loop unrolled by {factor}"]
    assert str(passed[0]).endswith(f"loop unrolled by {factor} [-Rpass=unroll]")
    assert passed[0].location is not None and passed[0].location.line == 4


def test_a_loop_with_an_early_break_is_declined(lowered):
    result = run_passes(lowered.module, parse_pipeline("unroll(4)"), verify=True, target=HOST)
    missed = [r for r in result.remarks if r.kind == "missed"]
    assert len(missed) == 1 and missed[0].function == "g"
    assert "loop not unrolled" in missed[0].message and "early exit" in missed[0].message
    assert len(loops_of(result.module.get_global("g")).loops) == 1


def test_factor_one_is_a_no_op(lowered):
    before = str(lowered.module)
    result = run_passes(lowered.module, parse_pipeline("unroll(1)"), verify=True, target=HOST)
    assert str(result.module) == before and result.remarks == []


@pytest.mark.parametrize("text", ["unroll(0)", "unroll(-2)"])
def test_factor_below_one_is_a_pipeline_error(text):
    with pytest.raises(PipelineError, match="not a valid unroll factor"):
        parse_pipeline(text)


#: loops whose bounds may lie at the ends of their type: the unrolled loop's limit
#: (`B - span`, `B + span`) must not wrap there
EXTREMES = """
int up(int lo, int hi, int *out) {
  int k = 0;
  for (int i = lo; i < hi; i++) out[k++ & 15] = i;
  return k;
}
int up_le(int lo, int hi, int *out) {
  int k = 0;
  for (int i = lo; i <= hi; i++) out[k++ & 15] = i;
  return k;
}
int down(int hi, int lo, int *out) {
  int k = 0;
  for (int i = hi; i > lo; i--) out[k++ & 15] = i;
  return k;
}
int down_ge(int hi, int lo, int *out) {
  int k = 0;
  for (int i = hi; i >= lo; i--) out[k++ & 15] = i;
  return k;
}
int up_unsigned(unsigned lo, unsigned hi, int *out) {
  int k = 0;
  for (unsigned i = lo; i < hi; i++) out[k++ & 15] = (int)i;
  return k;
}
"""
MIN, MAX, UMAX = -(2**31), 2**31 - 1, 2**32 - 1
#: (first, bound) of each function: empty, shorter than the factor, longer, at both ends
EXTREME_RANGES = {
    "up": [(MIN, MIN), (MIN, MIN + 2), (MIN, MIN + 13), (MAX - 13, MAX), (-5, 6)],
    "up_le": [(MIN, MIN + 1), (MIN, MIN + 12), (MAX - 12, MAX - 1), (-5, 6), (3, 2)],
    "down": [(MAX, MAX), (MAX, MAX - 2), (MAX, MAX - 13), (MIN + 13, MIN), (6, -5)],
    "down_ge": [(MAX, MAX - 1), (MAX, MAX - 12), (MIN + 12, MIN + 1), (6, -5), (2, 3)],
    "up_unsigned": [(0, 0), (0, 2), (0, 13), (UMAX - 13, UMAX), (UMAX - 1, 1)],
}


@pytest.mark.parametrize("name", sorted(EXTREME_RANGES))
def test_the_unrolled_loop_tests_a_limit_that_never_wraps(module_c_file, name):
    """The unrolled loop compares its IV with one limit computed before the loop (not the
    bound and the distance left at every iteration), and runs exactly the iterations cc's
    build runs at the ends of the IV's type."""
    from corpus_check import compiled, in_child

    path = module_c_file("extremes", EXTREMES)
    text = str(run_passes(lower_file(path).module, parse_pipeline("unroll(4)"), target=HOST)
               .module.get_global(name))  # fmt: skip
    assert "icmp" in text and '%"unroll.limit"' in text, text
    guards = [line for line in text.splitlines() if '%"unroll.guard" =' in line]
    assert len(guards) == 1 and '%"unroll.limit"' in guards[0], guards
    unit = compiled(path, [], "unroll(4)")
    ranges = EXTREME_RANGES[name]

    def run(function):
        results = []
        for first, bound in ranges:
            out = np.zeros(16, dtype=np.int32)
            results.append((function(first, bound, out.ctypes.data), out.tobytes()))
        return results

    pycc = in_child(lambda: run(unit.function(name)))
    cc = in_child(lambda: run(unit.source.reference_of(name).function(name)))
    for case, mine, theirs in zip(ranges, pycc, cc, strict=True):
        assert mine == theirs, case
    assert max(count for count, _ in cc) >= 8  # the unrolled loop ran somewhere
