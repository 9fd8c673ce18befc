"""Where the run-time check of a tiled kernel fails (data within the L2, overlapping arrays),
compiler mode runs cc's own compile of the original function, not LLVM's (`dropin_original`):
a taken-over kernel is then exactly as fast as cc's where tiling does not pay."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from pycc_stencil.dropin_original import call_original_where_unchecked, copy_symbol
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from test_compiler_mode import CC, PYCC, clean_env
from test_tiling import STENCILS_C, _split_functions

JACOBI = _split_functions(STENCILS_C)["jacobi2d_two"]

MAIN = r"""
#include <stdio.h>
void jacobi2d_two(int T, int n, double A[n][n], double B[n][n]);
static double A[41][41], B[41][41];
int main(void)
{
    for (int i = 0; i < 41; i++)
        for (int j = 0; j < 41; j++)
            A[i][j] = B[i][j] = (i * 41 + j) % 13 * 0.125;
    jacobi2d_two(4, 41, A, B);
    printf("%a %a\n", A[20][20], B[7][33]);
    return 0;
}
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_below_the_l2_the_kernel_runs_ccs_compile(tmp_path):
    (tmp_path / "k.c").write_text(JACOBI)
    (tmp_path / "main.c").write_text(MAIN)
    env = clean_env(tmp_path / "cache", PYCC_TAKEOVER="")
    outputs = []
    for compiler in (CC, PYCC):
        for step in (["-S", "k.c", "-o", "k.s"], ["k.c", "main.c", "-o", "app"]):
            done = subprocess.run(
                [compiler, "-O3", *step], cwd=tmp_path, env=env, capture_output=True, text=True
            )
            assert done.returncode == 0, done.stderr
        run = subprocess.run(["./app"], cwd=tmp_path, capture_output=True, text=True)
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1]
    assembly = (tmp_path / "k.s").read_text()
    copy = copy_symbol("jacobi2d_two")
    assert re.search(rf"^{copy}:", assembly, re.M), "cc's copy is not in the unit"
    assert re.search(rf"\.hidden\s+{copy}\b", assembly)
    ours = assembly[assembly.index("jacobi2d_two:") :]  # pycc-stencil's part comes last
    assert re.search(rf"\b(jmp|call)\s+{copy}\b", ours), "the tiled kernel never calls it"


def _tiled(tmp_path: Path, code: str):
    path = tmp_path / "k.c"
    path.write_text(code)
    lowered = lower_file(str(path))
    applied = run_passes(lowered.module, parse_pipeline("time-tile-large"), target=host_target())
    assert [r for r in applied.remarks if r.kind == "passed"], "nothing was tiled"
    return lowered.module.get_global("jacobi2d_two")


def test_the_check_after_an_effect_keeps_the_original_nest(tmp_path):
    """A store before the nest would run twice if the copy ran the function again."""
    function = _tiled(tmp_path, JACOBI.replace("for (int t", "A[0][0] = 1.0;\n  for (int t", 1))
    assert not call_original_where_unchecked(function, "copy")
    assert "copy" not in str(function)


def test_the_check_of_an_effect_free_start_calls_the_copy(tmp_path):
    function = _tiled(tmp_path, JACOBI)
    assert call_original_where_unchecked(function, "copy")
    assert re.search(r'call void @"copy"\(i32 %"T", i32 %"n", ptr %"A", ptr %"B"\)', str(function))


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_a_kernel_that_names_itself_gets_no_copy(tmp_path):
    """`__func__` in a copy would name the copy."""
    code = JACOBI.rstrip().removesuffix("}") + "  A[0][0] += __func__[0] == 'j';\n}\n"
    (tmp_path / "k.c").write_text(code)
    env = clean_env(tmp_path / "cache", PYCC_TAKEOVER="", PYCC_REPORT=str(tmp_path / "r.json"))
    done = subprocess.run(
        [PYCC, "-O3", "-S", "k.c", "-o", "k.s"], cwd=tmp_path, env=env, capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert '"compiled_by": "pycc-stencil"' in (tmp_path / "r.json").read_text()
    assert copy_symbol("jacobi2d_two") not in (tmp_path / "k.s").read_text()
