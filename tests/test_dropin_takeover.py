"""Compiler mode takes over a function only when a pycc-stencil pass transformed it (issue 14
§1): everything else is compiled by cc, unchanged, so a build is never slower for it.

The rest of the suite runs with `PYCC_TAKEOVER=all` (tests/conftest.py) so that it exercises
pycc-stencil's code; these tests set the default policy back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from test_compiler_mode import CC, PYCC, clean_env
from test_tiling import STENCILS_C

pytestmark = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")

KERNELS = (
    STENCILS_C.split("void heat2d_mod2")[0]
    + """
void scale(int n, double *restrict a, const double *restrict b)
{
    for (int i = 0; i < n; i++)
        a[i] = 3.0 * b[i];
}
"""
)

MAIN = r"""
#include <stdio.h>
void jacobi2d_mod2(int T, int n, double A[2][n][n]);
void jacobi2d_two(int T, int n, double A[n][n], double B[n][n]);
void scale(int n, double *restrict a, const double *restrict b);
static double A2[2][37][37], A[37][37], B[37][37], s[41], t[41];
int main(void)
{
    for (int i = 0; i < 37; i++)
        for (int j = 0; j < 37; j++)
            A2[0][i][j] = A[i][j] = B[i][j] = (i * 37 + j) % 11 * 0.25;
    for (int i = 0; i < 41; i++)
        t[i] = i * 0.5;
    jacobi2d_mod2(5, 37, A2);
    jacobi2d_two(3, 37, A, B);
    scale(41, s, t);
    printf("%a %a %a %a\n", A2[1][18][18], A[17][19], B[5][30], s[40]);
    return 0;
}
"""


def build(tmp_path: Path, flags: list[str], **env: str):
    """main.c + kernels.c built by cc and by pycc-stencil with `flags` (default takeover
    policy unless `env` says otherwise): (outputs, pycc-stencil's stderr, kernels.c's report
    line)."""
    (tmp_path / "main.c").write_text(MAIN)
    (tmp_path / "kernels.c").write_text(KERNELS)
    report = tmp_path / "report.jsonl"
    environment = clean_env(tmp_path / "cache", PYCC_REPORT=str(report), PYCC_TAKEOVER="")
    environment.update(env)
    outputs, stderr = [], ""
    cc_flags = [f for f in flags if not f.startswith("-fpycc-")]
    for compiler, program, options in ((CC, "ref", cc_flags), (PYCC, "app", flags)):
        done = subprocess.run(
            [compiler, *options, "main.c", "kernels.c", "-o", program],
            cwd=tmp_path, env=environment, capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        stderr += done.stderr if compiler == PYCC else ""
        run = subprocess.run([f"./{program}"], cwd=tmp_path, capture_output=True, text=True)
        outputs.append(run.stdout)
    units = [json.loads(line) for line in report.read_text().splitlines()]
    (unit,) = [u for u in units if u["source"] == "kernels.c"]
    return outputs, stderr, unit


def compiled_by(unit: dict) -> dict[str, str]:
    return {f["name"]: f["compiled_by"] for f in unit["functions"]}


def test_without_passes_the_file_is_not_even_parsed(tmp_path):
    """-O2 runs no pycc-stencil pass: the file goes to cc untouched, silently."""
    outputs, stderr, unit = build(tmp_path, ["-O2"])
    assert outputs[0] == outputs[1]
    assert unit["status"] == "passthrough" and "nothing to improve" in unit["reason"]
    assert unit["functions"] == [] and "warning" not in stderr


def test_only_kernels_a_pass_transformed_are_taken_over(tmp_path):
    """-O3's locality passes tile the iterated stencils; `scale` they leave alone, so cc
    compiles it, without a fallback warning (nothing went wrong)."""
    outputs, stderr, unit = build(tmp_path, ["-O3"], PYCC_CACHE_L2="4096", PYCC_CACHE_L3="8192")
    assert outputs[0] == outputs[1]
    by = compiled_by(unit)
    assert by["scale"] == "cc" and by["jacobi2d_two"] == "pycc-stencil", unit
    (scale,) = [f for f in unit["functions"] if f["name"] == "scale"]
    assert "nothing to improve" in scale["reason"]  # (not lowered: no nest to tile)
    assert "scale" not in stderr


def test_forced_passes_take_over_what_they_transform(tmp_path):
    outputs, _, unit = build(tmp_path, ["-O2", "-fpycc-passes=unroll(2)"])
    assert outputs[0] == outputs[1]
    assert set(compiled_by(unit).values()) == {"pycc-stencil"}


@pytest.mark.parametrize("how", ["option", "environment"])
def test_takeover_all_compiles_every_kernel(tmp_path, how):
    if how == "option":
        outputs, _, unit = build(tmp_path, ["-O2", "-fpycc-takeover=all"])
    else:
        outputs, _, unit = build(tmp_path, ["-O2"], PYCC_TAKEOVER="all")
    assert outputs[0] == outputs[1]
    assert set(compiled_by(unit).values()) == {"pycc-stencil"}


@pytest.mark.parametrize(
    "flags, env, message",
    [
        (["-fpycc-takeover=some"], {}, "-fpycc-takeover=some: valid values are improved, all"),
        ([], {"PYCC_TAKEOVER": "most"}, "$PYCC_TAKEOVER=most: valid values are improved, all"),
    ],
)
def test_a_bad_policy_is_an_error(tmp_path, flags, env, message):
    (tmp_path / "k.c").write_text(KERNELS)
    environment = dict(clean_env(tmp_path / "cache"), **env)
    if not env:
        environment.pop("PYCC_TAKEOVER")
    done = subprocess.run(
        [PYCC, "-O2", *flags, "-c", "k.c"], cwd=tmp_path, env=environment,
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1 and message in done.stderr
    assert not (tmp_path / "k.o").exists()


def test_without_passes_nothing_of_pycc_stencil_runs(tmp_path):
    """No pass and no report: the front door hands the command to cc before it even imports
    the driver (`-X importtime`'s list of the modules Python loaded)."""
    (tmp_path / "kernels.c").write_text(KERNELS)
    env = clean_env(
        tmp_path / "cache", PYCC_TAKEOVER="", PYTHONPROFILEIMPORTTIME="1", PYCC_SERVER="0"
    )
    for level, driver in (("-O2", False), ("-O3", True)):
        done = subprocess.run(
            [PYCC, level, "-c", "kernels.c"], cwd=tmp_path, env=env, capture_output=True,
            text=True,
        )  # fmt: skip
        assert done.returncode == 0 and (tmp_path / "kernels.o").exists(), done.stderr
        assert ("pycc_stencil.dropin_driver" in done.stderr) is driver, level


def test_a_warm_cache_loads_neither_libclang_nor_llvm_nor_isl(tmp_path):
    """The second compile of a file with a kernel taken over is a cache hit: Python loads
    none of the heavy modules (`-X importtime`'s list)."""
    (tmp_path / "kernels.c").write_text(KERNELS)
    report = tmp_path / "report.jsonl"
    caches = {"PYCC_CACHE_L2": "4096", "PYCC_CACHE_L3": "8192"}
    env = clean_env(tmp_path / "cache", PYCC_TAKEOVER="", PYCC_SERVER="0", **caches)
    for _ in range(2):
        done = subprocess.run(
            [PYCC, "-O3", "-c", "kernels.c"], cwd=tmp_path, env=env, capture_output=True,
            text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        env.update(PYTHONPROFILEIMPORTTIME="1", PYCC_REPORT=str(report))
    unit = json.loads(report.read_text())
    assert unit["cache"] == "hit" and "pycc-stencil" in compiled_by(unit).values(), unit
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert not {"clang.cindex", "llvmlite.binding", "islpy", "numpy"} & loaded
