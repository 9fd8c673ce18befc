"""Where the run-time check of a tiled kernel fails (data within half the L3, overlapping arrays),
the kernel runs cc's own code (`dropin_original`): cc keeps its definition, which first calls
the tiled code's *try*; a taken-over kernel is then exactly cc's where tiling does not pay,
inlined and specialized by cc where cc would."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from pycc_stencil.dropin_original import make_try
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from test_compiler_mode import CC, PYCC, clean_env
from test_tiling import STENCILS_C, _split_functions

JACOBI = _split_functions(STENCILS_C)["jacobi2d_two"]
#: the same sweeps returning a value, and as a static kernel, in one file with their caller
PROGRAM = (
    "#include <stdio.h>\n"
    + JACOBI.replace("void jacobi2d_two", "double jacobi_sum", 1).rstrip().removesuffix("}")
    + "  return A[1][1] + B[n - 2][n - 2];\n}\n"
    + JACOBI.replace("void jacobi2d_two", "static void jacobi_static", 1)
    + r"""
static double A[53][53], B[53][53];
int main(int argc, char **argv)
{
    int n = argc > 1 ? 53 : 41;
    for (int i = 0; i < 53; i++)
        for (int j = 0; j < 53; j++)
            A[i][j] = B[i][j] = (i * 53 + j) % 13 * 0.125;
    double s = jacobi_sum(4, n, (double (*)[n])A, (double (*)[n])B);
    jacobi_static(3, n, (double (*)[n])A, (double (*)[n])B);
    printf("%a %a %a\n", s, A[20][20], B[7][33]);
    return 0;
}
"""
)


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
@pytest.mark.parametrize("l2", ["", "8K"], ids=["cc's code", "tiled"])
def test_the_kernels_definition_stays_cc_s_and_calls_the_try(tmp_path, l2):
    """Below the threshold the try declines and cc's code runs; above it (small caches) the
    tiled code runs; both bit-identical to cc's program, with a value returned and a static
    kernel."""
    (tmp_path / "p.c").write_text(PROGRAM)
    env = clean_env(tmp_path / "cache", PYCC_TAKEOVER="", PYCC_REPORT=str(tmp_path / "r.json"))
    if l2:
        env["PYCC_CACHE_L2"] = l2
        env["PYCC_CACHE_L3"] = "16K"  # the tiled code runs from 8 KiB
    outputs = []
    for compiler in (CC, PYCC):
        for step in (["-O3", "-c", "p.c", "-o", "p.o"], ["p.o", "-o", "app"]):
            done = subprocess.run(
                [compiler, *step], cwd=tmp_path, env=env, capture_output=True, text=True
            )
            assert done.returncode == 0, done.stderr
        for argv in (["./app"], ["./app", "big"]):
            run = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
            outputs.append(run.stdout)
    assert outputs[:2] == outputs[2:]
    report = (tmp_path / "r.json").read_text()
    assert report.count('"compiled_by": "pycc-stencil"') >= 2, report
    symbols = subprocess.run(
        ["readelf", "-sW", "p.o"], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    code = subprocess.run(
        ["objdump", "-dr", "p.o"], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    for kernel in ("jacobi_sum", "jacobi_static"):
        (try_symbol,) = set(re.findall(rf"__pycc_\w+_{kernel}\b", symbols))
        # local, as cc keeps what it stands for (the same file linked twice: no clash)
        assert re.search(rf"FUNC\s+LOCAL\s+\w+\s+\d+\s+{try_symbol}$", symbols, re.M)
        called = rf"(call\s+\w+ <{try_symbol}>|R_X86_64_PLT32\s+{try_symbol})"
        assert re.search(called, code), "cc's code never calls it"
    assert re.search(r"FUNC\s+GLOBAL\s+DEFAULT\s+\d+\s+jacobi_sum$", symbols, re.M)


def _tiled(tmp_path: Path, code: str):
    path = tmp_path / "k.c"
    path.write_text(code)
    lowered = lower_file(str(path))
    applied = run_passes(lowered.module, parse_pipeline("time-tile-large"), target=host_target())
    assert [r for r in applied.remarks if r.kind == "passed"], "nothing was tiled"
    return lowered.module.get_global("jacobi2d_two")


def test_an_effect_before_the_check_keeps_the_kernel_whole(tmp_path):
    """A store before the nest would run twice if cc's code ran after the try."""
    function = _tiled(tmp_path, JACOBI.replace("for (int t", "A[0][0] = 1.0;\n  for (int t", 1))
    assert not make_try(function)
    assert str(function).startswith('define void @"jacobi2d_two"')


def test_the_try_declines_at_the_check(tmp_path):
    """The try holds the checks alone (a declined call saves no register of the tiled code)
    and calls the tiled code, a function of its own that is never inlined into it."""
    function = _tiled(tmp_path, JACOBI)
    assert make_try(function)
    text = str(function)
    assert text.startswith('define i32 @"jacobi2d_two"(i32 %"T", i32 %"n", ptr %"A", ptr %"B")')
    assert re.search(r"pycc\.declined:\s*\n\s*ret i32 0", text)
    called = r'tail call i32 @"jacobi2d_two\.tiled"\(i32 %"T", i32 %"n", ptr %"A", ptr %"B"\)'
    assert re.search(rf"pycc\.run:\s*\n\s*%\S+ = {called}\s*\n\s*ret i32", text), text
    assert [b.name for b in function.blocks] == ["entry", "poly.check", "pycc.run", "pycc.declined"]
    body = function.module.get_global("jacobi2d_two.tiled")
    assert "noinline" in body.attributes
    assert "ret void" not in str(body) and "ret i32 1" in str(body)
    assert str(body).count("\n  store ") > 2  # (the tiled code moved, not copied)


def test_of_a_chain_of_checks_the_last_gives_the_call_back(tmp_path, monkeypatch):
    """Under threads `-O3` runs a pipeline's fused tiles above the locality threshold and its
    nests on the team below it: the team's check follows the fused code's. The try must give
    the call back where neither runs, not where the fused code does not (the team's code
    would never run)."""
    from test_parallel_sweep import KERNELS_C

    monkeypatch.setenv("PYCC_CACHE_L2", "16K")
    monkeypatch.setenv("PYCC_CACHE_L3", "32K")
    (tmp_path / "k.c").write_text(KERNELS_C)
    lowered = lower_file(str(tmp_path / "k.c"), ["-std=c99"])
    passes = parse_pipeline("fuse-tile-large,parallel-sweep-large")
    applied = run_passes(lowered.module, passes, target=host_target())
    done = [r.message for r in applied.remarks if r.function == "pipeline" and r.kind == "passed"]
    assert sum("fused" in m for m in done) == 1 and sum("runs in parallel" in m for m in done) == 2
    function = lowered.module.get_global("pipeline")
    assert make_try(function)
    failing = {b.name: b.terminator.operands[2].name for b in function.blocks if "check" in b.name}
    assert failing == {"poly.check": "poly.check.1", "poly.check.1": "pycc.declined"}, failing
