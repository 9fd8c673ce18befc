"""cc compiles the whole original file once, alongside pycc-stencil's look at it: its object is
the output when nothing is taken over, its diagnostics and dependency file are the user's when
something is (compiler mode's cost is then the slower of the two, not their sum)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from test_compiler_mode import CC, PYCC, clean_env

pytestmark = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")

#: two nests the -O3 scan lets through (the second reads what the first writes), which no
#: locality pass transforms (the counter, declared apart, is unsigned: no SCoP); `int x =
#: 1 / 0` makes cc warn
UNTOUCHED = """
void f(int n, float *a, float *b)
{
    int x = 1 / 0;
    unsigned i;
    for (i = 0; i < n; i++) a[i] = 1;
    for (i = 0; i < n; i++) b[i] = a[i] + x;
}
"""


def logging_cc(directory: Path) -> tuple[Path, Path]:
    """A cc that appends each of its command lines to a log: (the cc, the log). Made once
    (its mtime is part of the cache key)."""
    log = directory / "cc.log"
    wrapper = directory / "logging-cc"
    if not wrapper.exists():
        wrapper.write_text(
            f'#!/bin/sh\necho "$*" >> "$(dirname "$0")/{log.name}"\nexec {CC} "$@"\n'
        )
        wrapper.chmod(0o755)
    return wrapper, log


def compiles_of(log: Path, source: str) -> list[str]:
    """The logged commands that compiled `source` itself (not `-E`)."""
    lines = log.read_text().splitlines() if log.exists() else []
    return [c for c in lines if c.split()[-3:-2] == [source] and "-E" not in c.split()]


def _compile(tmp_path: Path, flags: list[str], **env: str) -> tuple[list[str], dict, str]:
    """k.c compiled with `flags` through a cc that logs its commands: (the commands that
    compiled k.c itself, the report, pycc-stencil's stderr)."""
    (tmp_path / "k.c").write_text(UNTOUCHED)
    wrapper, log = logging_cc(tmp_path)
    report = tmp_path / "report.jsonl"
    environment = clean_env(tmp_path / "cache", PYCC_REPORT=str(report), PYCC_CC=str(wrapper))
    environment.update(env)
    done = subprocess.run(
        [PYCC, *flags, "-MD", "-c", "k.c", "-o", "k.o"], cwd=tmp_path, env=environment,
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    commands = compiles_of(log, "k.c")
    logged = log.read_text().splitlines()
    query = next(i for i, c in enumerate(logged) if "-dM" in c.split())  # the analysis asks cc
    assert logged.index(commands[0]) < query, "cc's compile did not run alongside the analysis"
    return commands, json.loads(report.read_text()), done.stderr


def test_nothing_taken_over_is_one_compile_of_the_file(tmp_path):
    commands, unit, stderr = _compile(tmp_path, ["-O3"], PYCC_TAKEOVER="")
    assert unit["status"] == "cc" and unit["functions"][0]["compiled_by"] == "cc", unit
    assert len(commands) == 1 and " -c " in f" {commands[0]} ", commands
    reference = subprocess.run(
        [CC, "-O3", "-MD", "-c", "k.c", "-o", "ref.o"], cwd=tmp_path, capture_output=True,
        text=True, env=dict(os.environ, LC_ALL="C"),
    )  # fmt: skip
    assert (tmp_path / "k.o").read_bytes() == (tmp_path / "ref.o").read_bytes()
    assert stderr == reference.stderr and "division by zero" in stderr
    dependencies = (tmp_path / "ref.d").read_text().replace("ref.o", "k.o")
    assert (tmp_path / "k.d").read_text() == dependencies


def test_a_takeover_compiles_the_file_once_for_its_diagnostics(tmp_path):
    commands, unit, stderr = _compile(tmp_path, ["-O2"], PYCC_TAKEOVER="all")
    assert unit["status"] == "pycc", unit
    assert len(commands) == 1 and "division by zero" in stderr, commands


def test_with_v_cc_compiles_the_file_after_the_analysis_naming_the_users_output(tmp_path):
    """`-v` prints cc's commands: the compile that gives the output must name the user's
    object (not a scratch file), so none runs ahead of the analysis."""
    (tmp_path / "k.c").write_text(UNTOUCHED)
    wrapper, log = logging_cc(tmp_path)
    environment = clean_env(tmp_path / "cache", PYCC_CC=str(wrapper), PYCC_TAKEOVER="")
    done = subprocess.run(
        [PYCC, "-v", "-O3", "-c", "k.c", "-o", "k.o"], cwd=tmp_path, env=environment,
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    commands = compiles_of(log, "k.c")
    assert commands and all(c.split()[-1] == "k.o" for c in commands), commands
    assert "-o k.o" in done.stderr and "cc-whole" not in done.stderr
    logged = log.read_text().splitlines()
    query = next(i for i, c in enumerate(logged) if "-dM" in c.split())
    assert query < logged.index(commands[0]), "the compile ran ahead of the analysis"
    subprocess.run([CC, "-O3", "-c", "k.c", "-o", "ref.o"], cwd=tmp_path, check=True)
    assert (tmp_path / "k.o").read_bytes() == (tmp_path / "ref.o").read_bytes()
