"""The JIT harness as a pytest plugin (issue 18): the `pycc` fixture, used here as a user's
tests use it (it comes from the `pytest11` entry point, not from a conftest), and a user's
test file run by pytest (pytester) with a deliberately broken pass, whose failure must say
where the kernel differs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from pycc_stencil.testing import edge_sizes, params, sizes

JACOBI_C = """
void jacobi(int n, int m, const float a[n][m], float b[n][m]) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      b[i][j] = 0.25f * (a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
}
void unsupported(float *a) { goto x; x: a[0] = 1; }
"""


@pytest.fixture(scope="module")
def jacobi_c(module_c_file):
    return module_c_file("jacobi", JACOBI_C)


def test_load_and_check_through_the_fixture(pycc, jacobi_c):
    import numpy as np

    lib = pycc.load(jacobi_c)
    assert pycc.load(jacobi_c) is lib  # compiled once per session
    a = np.arange(35, dtype=np.float32).reshape(5, 7)
    b = np.zeros_like(a)
    lib.jacobi(5, 7, a, b)
    assert b[2, 3] == 0.25 * (a[1, 3] + a[3, 3] + a[2, 2] + a[2, 4])
    result = pycc.check(jacobi_c, function="jacobi", params={"n": 13, "m": 17}, passes="tile(4,4)")
    assert result.status == "OK" and result.changed == 11 * 15


@settings(max_examples=5, deadline=None)
@given(n=sizes(least=3, most=70, tile=8), m=sizes(least=3, most=70, vector=8))
def test_hypothesis_draws_the_sizes_a_tiling_gets_wrong(pycc, jacobi_c, n, m):
    pycc.check(jacobi_c, function="jacobi", params={"n": n, "m": m}, passes="tile(8,8)")


def test_a_function_not_taken_over_is_a_skipped_test(pycc, jacobi_c):
    with pytest.raises(pytest.skip.Exception, match="unsupported"):
        pycc.check(jacobi_c, function="unsupported")


def test_the_sizes_at_the_edges_of_a_tile_and_a_vector():
    edges = edge_sizes(1, 100, 32, 8)
    assert {31, 32, 33, 16, 63, 65, 7, 8, 9, 4, 15, 17, 1, 2, 100, 97} <= set(edges)
    assert all(1 <= e <= 100 for e in edges) and edges == sorted(set(edges))
    with pytest.raises(ValueError):
        sizes(5, 4)


@settings(max_examples=20)
@given(drawn=params(n=sizes(3, 9), alpha=sizes(1, 2)))
def test_params_are_text_like_the_command_lines(drawn):
    assert set(drawn) == {"n", "alpha"} and 3 <= int(drawn["n"]) <= 9


USER_TEST = '''
"""A user's tests, as the README shows them, and a pass broken on purpose."""
from llvmlite import ir
from pycc_stencil.ir_passes.registry import register


@register("zero-first-store")
def zero_first_store(module):
    """Wrong on purpose: the kernel's first store writes 0 (the rows i < n / 2)."""
    for function in module.functions:
        stores = [i for b in function.blocks for i in b.instructions if i.opname == "store"]
        if stores:
            value = stores[0].operands[0]
            stores[0].replace_usage(value, ir.Constant(value.type, 0.0))
    return module


def test_halves_are_right(pycc):
    pycc.check("halves.c", function="halves", params={"n": 24, "m": 40})


def test_halves_after_a_broken_pass(pycc):
    pycc.check("halves.c", function="halves", params={"n": 24, "m": 40},
               passes="zero-first-store")
'''

HALVES_C = """
void halves(int n, int m, const float a[n][m], float b[n][m]) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      if (i < n / 2)
        b[i][j] = a[i - 1][j] + a[i + 1][j];
      else
        b[i][j] = a[i][j - 1] + a[i][j + 1];
}
"""


def _readme_example() -> tuple[str, str]:
    """The README's example: jacobi.c and test_jacobi.py, as it shows them."""
    text = (Path(__file__).parent.parent / "README.md").read_text()
    start = text.index("<!-- the plugin's example")
    blocks = []
    for fence in ("```c\n", "```python\n"):
        begin = text.index(fence, start) + len(fence)
        blocks.append(text[begin : text.index("```\n", begin)])
    return blocks[0], blocks[1]


def test_the_readme_example_passes_as_written(pytester):
    jacobi_c, test_jacobi = _readme_example()
    pytester.makefile(".c", jacobi=jacobi_c)
    pytester.makepyfile(test_jacobi=test_jacobi)
    run = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    run.assert_outcomes(passed=2)


def test_a_users_test_file_fails_with_where_the_kernel_differs(pytester):
    """The plugin is found through its entry point in a session that knows nothing of it;
    the broken pass's failure names the first difference, the count, draws where the
    buffer differs (the upper half) and names the PNG with it."""
    pytester.makefile(".c", halves=HALVES_C)
    pytester.makepyfile(test_user=USER_TEST)
    run = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    run.assert_outcomes(passed=1, failed=1)
    output = run.stdout.str()
    assert "pycc check halves: MISMATCH: b[1,1] = 0.0 (reference " in output
    assert "418 of 1920 elements differ" in output  # rows 1..11 x columns 1..38
    assert "where 'b' (24x40) differs: X where an element of a block of 2x1 differs" in output
    picture = [line[1:].strip() for line in output.splitlines() if line.startswith("E   ")]
    picture = [row for row in picture if len(row) == 40 and set(row) <= {"X", "."}]
    assert picture == ["." + "X" * 38 + "."] * 6 + ["." * 40] * 6, picture
    png = next(line for line in output.splitlines() if "picture: " in line)
    png = png.split("picture: ")[1].strip()
    with open(png, "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    # named after the test: another test's failure on the same buffer never overwrites it
    assert os.path.basename(png) == "test_halves_after_a_broken_pass-halves-b.png"
