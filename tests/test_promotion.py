"""Stack slots only loaded and stored become SSA values (ir_passes/core/promotion.py): the
functions compute what they computed before, JIT-run on the same inputs, through branches,
loops that carry the slots' values, a swap, a load on a path with no store, and an
unreachable block; a slot whose address is passed on stays in memory."""

from __future__ import annotations

import ctypes

from pycc_stencil.emit.host_jit import compile_module
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.promotion import promote_local_scalars

SOURCE = r"""
int branches(int a, int b) {
  int x = a; int *p = &x;
  if (b > 0) *p = *p + b; else *p = *p - 1;
  return x * 2;
}
int loop_sum(int n, int m) {
  int s = 0, c = 0; int *p = &s, *q = &c;
  for (int i = 0; i < n; i++) { if (i % m == 0) { *p += i; *q += 1; } }
  return s * 1000 + c;
}
int swapped(int a, int b) {
  int x = a, y = b; int *px = &x, *py = &y;
  for (int i = 0; i < b % 7; i++) { int t = *px; *px = *py; *py = t + 1; }
  return x * 100 - y;
}
int stored_on_one_path(int n, int unused) {
  int x; int *p = &x;
  if (n > 5) *p = n;
  return n > 5 ? *p : 0;
}
int after_return(int n, int m) {
  int x = n; int *p = &x;
  for (int i = 0; i < m; i++) { *p += i; if (i > 100) return -1; }
  return *p;
  *p = 7;
  return *p;
}
static void add_three(int *p) { *p += 3; }
int escapes(int a, int b) { int x = a; add_three(&x); return x + b; }
"""
#: function -> slots promoted
PROMOTED = {
    "branches": 1,
    "loop_sum": 2,
    "swapped": 2,
    "stored_on_one_path": 1,
    "after_return": 1,
    "escapes": 0,
}
INPUTS = [(0, 1), (3, 2), (-4, 5), (11, 3), (7, 9), (200, 13), (1, -2)]


def _run_all(promote: bool, tmp_path) -> dict[str, list[int]]:
    source = tmp_path / "slots.c"
    source.write_text(SOURCE)
    module = lower_file(str(source)).module
    if promote:
        counts = {f.name: promote_local_scalars(f) for f in module.functions if f.blocks}
        assert {n: counts[n] for n in PROMOTED} == PROMOTED, counts
        text = {f.name: str(f) for f in module.functions}
        for name, count in PROMOTED.items():
            assert (" alloca " in text[name]) == (count == 0), text[name]
    jit = compile_module(module, list(PROMOTED))
    signature = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int)
    results = {}
    for name in PROMOTED:
        function = signature(jit.function_address(name))
        results[name] = [function(a, b) for a, b in INPUTS]
    return results


def test_promoted_slots_compute_what_the_slots_did(tmp_path):
    before = _run_all(False, tmp_path)
    after = _run_all(True, tmp_path)
    assert after == before
    assert before["swapped"][1] != before["branches"][1]  # the inputs exercise the code
