"""`pip install .` gives a complete package: the wheel is built from a copy of the sources,
installed into a fresh venv (its dependencies borrowed from this one, so nothing is
downloaded), and that install, with the source checkout nowhere on its path, compiles a kernel
in compiler mode (`compiled_by` pycc-stencil, the program's output as cc's) and runs `check`
(on the host, and as C66x C built against the emulation headers the wheel ships).
A wheel missing a subpackage (polyhedral.schedule once) fails here."""

from __future__ import annotations

import shutil
import sys
import sysconfig
from importlib.metadata import version
from pathlib import Path

from test_compiler_mode import CC, clean_env, read_report, run, units_for

ROOT = Path(__file__).resolve().parent.parent
#: what `git archive` would give, minus what the wheel never contains
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "tests", "scripts", "docs", "build", "dist", "*.egg-info", "__pycache__"
)
KERNEL = """\
void heat(int T, int n, double a[restrict n][n], double b[restrict n][n])
{
    for (int t = 0; t < T; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                b[i][j] = 0.2 * (a[i][j] + a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                a[i][j] = b[i][j];
    }
}
"""
MAIN = """\
#include <stdio.h>
void heat(int T, int n, double a[restrict n][n], double b[restrict n][n]);
static double a[9][9], b[9][9];
int main(void)
{
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 9; j++)
            a[i][j] = (i * 7 + j * 3) % 5 - 1.5;
    heat(4, 9, a, b);
    for (int i = 0; i < 9; i++)
        printf("%a %a\\n", a[i][4], a[4][i]);
    return 0;
}
"""


def test_the_wheel_installs_and_compiles_a_kernel(tmp_path):
    built_in_bdist_wheel = (70, 1)
    installed = tuple(int(p) for p in version("setuptools").split(".")[:2])
    assert installed >= built_in_bdist_wheel, "install the test extra: pip install -e '.[test]'"
    source, wheels, fresh = tmp_path / "src", tmp_path / "wheels", tmp_path / "fresh"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCES)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    offline = ["--no-deps", "--no-index", "--quiet"]
    run([*pip, "wheel", *offline, "--no-build-isolation", "-w", wheels, source], tmp_path, None)
    (wheel,) = wheels.glob("pycc_stencil-*.whl")
    run([sys.executable, "-m", "venv", "--without-pip", fresh], tmp_path, None)
    python = fresh / "bin" / "python"
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = run([python, "-c", ask], tmp_path, None).stdout.strip()
    # the dependencies (llvmlite, libclang, islpy, numpy, rich) of this environment, not
    # its .pth files: this checkout's editable install stays out
    (Path(site) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([*pip, "--python", python, "install", *offline, wheel], tmp_path, None)

    (tmp_path / "heat.c").write_text(KERNEL)
    (tmp_path / "main.c").write_text(MAIN)
    report = tmp_path / "report.jsonl"
    # no PYTHONPATH, no venv on the PATH: only the fresh install can run
    env = dict(clean_env(tmp_path / "cache", PYCC_REPORT=str(report)), PATH="/usr/bin:/bin")
    where = run([python, "-c", "import pycc_stencil; print(pycc_stencil.__file__)"], tmp_path, env)
    assert where.stdout.startswith(str(fresh)), where.stdout
    tool = fresh / "bin" / "pycc-stencil"
    run([tool, "-O3", "-c", "heat.c", "-o", "pycc.o"], tmp_path, env)
    (unit,) = units_for(read_report(report), "heat.c")
    assert [f["compiled_by"] for f in unit["functions"]] == ["pycc-stencil"], unit
    run([CC, "-O3", "-c", "main.c"], tmp_path, env)
    run([CC, "-O3", "-c", "heat.c", "-o", "cc.o"], tmp_path, env)
    outputs = []
    for kernel in ("cc.o", "pycc.o"):
        run([CC, "-o", "app", "main.o", kernel], tmp_path, env)
        outputs.append(run(["./app"], tmp_path, env).stdout)
    assert outputs[0] == outputs[1]

    checked = run(
        [tool, "check", "--passes", "time-tile", "--param", "T=3", "--param", "n=11", "heat.c"],
        tmp_path,
        env,
    )
    assert "OK heat: bit-exact" in checked.stdout, checked.stdout
    assert "remark: time-tiled" in checked.stderr, checked.stderr
    # the C66x host emulation headers ship as package data
    on_c66x = run([tool, "check", "--target", "c66x", "--param", "T=2", "--param", "n=7", "heat.c"],
                  tmp_path, env)  # fmt: skip
    assert "OK heat: bit-exact" in on_c66x.stdout, on_c66x.stdout
