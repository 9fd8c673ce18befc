"""Limits and bad input (issue 13 §5): deep C, bounded pass arguments, `auto` on kernels that
call kernels, standard output on a full device. Each case ends in a result or a diagnostic,
never a traceback."""

from __future__ import annotations

import sys

import pytest
from pycc_stencil.cli import main
from pycc_stencil.frontend import lower_file, statements
from pycc_stencil.ir_passes.core.copying import fresh_copy
from test_tiling import PYCC, assert_same_output, build_both


def sum_kernel(terms: int) -> str:
    """`a[i] = b[i] + b[i] + ...`: a left-nested expression `terms` levels deep, and a plain
    kernel after it."""
    total = " + ".join(["b[i]"] * terms)
    return (
        f"void deep(int n, float *a, const float *b) {{\n"
        f"  for (int i = 0; i < n; i++) a[i] = {total};\n}}\n"
        "void plain(int n, float *a, const float *b) {\n"
        "  for (int i = 0; i < n; i++) a[i] = 2 * b[i];\n}\n"
    )


def loops_in_a_row(count: int) -> str:
    """One function of `count` loops one after the other, as csmith writes them."""
    loops = "".join(
        f"  for (int i = 1; i < n; i++) a[i] = a[i - 1] * 0.5f + b[i] * {k}.0f;\n"
        for k in range(count)
    )
    return f"void row_of_loops(int n, float *a, const float *b) {{\n{loops}}}\n"


def test_a_1000_term_sum_is_lowered_without_a_traceback(c_file, capfd):
    """Before: ~20 RecursionError tracebacks from libclang's callbacks, and `deep` skipped."""
    path = c_file(sum_kernel(1000))
    assert main(["emit", "--emit", "llvm", str(path)]) == 0
    out, err = capfd.readouterr()
    assert 'define void @"deep"' in out and 'define void @"plain"' in out
    assert "Traceback" not in err and "RecursionError" not in err, err


def test_nesting_beyond_the_limit_skips_the_function_with_a_reason(c_file, monkeypatch):
    monkeypatch.setattr(statements, "MAX_NESTING", 40)
    lowered = lower_file(str(c_file(sum_kernel(60))))
    (skipped,) = lowered.skipped
    assert skipped.name == "deep"
    assert skipped.reason == "expression nesting deeper than 40 levels"
    assert "plain" in lowered.functions


def test_a_function_of_many_loops_is_copied(c_file):
    """`copy.deepcopy` follows the branches from block to block: 30 loops in a row were a
    RecursionError in every strategy search (`tune`, `auto`)."""
    module = lower_file(str(c_file(loops_in_a_row(30)))).module
    copied = fresh_copy(module)
    blocks = [len(m.get_global("row_of_loops").blocks) for m in (module, copied)]
    assert blocks[0] == blocks[1] > 90


@pytest.mark.parametrize("command", ["emit", "check", "tune"])
def test_stdout_on_a_full_device_is_a_write_error(c_file, capfd, monkeypatch, command):
    path = c_file(sum_kernel(3))
    options = {"emit": ["--emit", "llvm"], "check": [], "tune": ["--max-unroll", "1"]}
    argv = [command, str(path), *options[command]]
    with open("/dev/full", "w") as full:
        monkeypatch.setattr(sys, "stdout", full)
        status = main(argv)
    assert status == 1
    assert capfd.readouterr().err.endswith(
        "pycc-stencil: error: write error: No space left on device\n"
    )


CALLING_KERNELS = """\
static void row(int n, float *a, const float *b) {
  for (int i = 1; i < n - 1; i++) a[i] = b[i - 1] + 2.0f * b[i] + b[i + 1];
}
void rows(int m, int n, float *a, const float *b) {
  for (int j = 0; j < m; j++) row(n, a + j * n, b + j * n);
}
"""

CALLING_MAIN = """\
#include <stdio.h>
#include <stdlib.h>
void rows(int m, int n, float *a, const float *b);
int main(int argc, char **argv) {
  int m = atoi(argv[1]), n = atoi(argv[2]);
  float *a = calloc((size_t)m * n + 1, sizeof *a), *b = malloc(((size_t)m * n + 1) * sizeof *b);
  for (int i = 0; i < m * n; i++) b[i] = (float)((i * 7919) % 1000) / 7.0f;
  rows(m, n, a, b);
  for (int i = 0; i < m * n; i++) printf("%a\\n", a[i]);
  return 0;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_auto_on_a_kernel_calling_a_static_kernel_matches_cc(tmp_path):
    """LLVM inlines the static kernel into its caller and deletes it: `auto`'s baseline asked
    the optimized module for it and failed with NameError, so nothing was taken over."""
    env, compiled = build_both(tmp_path, CALLING_MAIN, CALLING_KERNELS, [], ["-fpycc-passes=auto"])
    for name in ("row", "rows"):
        assert compiled[name]["compiled_by"] == "pycc-stencil", compiled[name]
        assert any("[-Rpass-analysis=auto]" in r for r in compiled[name]["remarks"])
    assert_same_output(tmp_path, env, [["3", "17"], ["1", "2"], ["5", "64"]])
