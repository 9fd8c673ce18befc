"""scripts/reliability.py cannot rot: its generator writes warning-free C that cc builds, its
harness runs generated programs through pycc-stencil (kernels taken over, passes fired) and
tells a wrong compiler from a right one, and its summary keeps what was written by hand.

Generated stencil programs only: nothing here needs csmith."""

from __future__ import annotations

import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
sys.path.insert(0, str(SCRIPTS))
import reliability  # noqa: E402  (scripts/ is not a package)
import stencil_gen  # noqa: E402

PYCC = shutil.which("pycc-stencil", path=reliability.default_path())
#: one-step builds (odd seeds): a time-tiling and an unroll-and-jam pipeline forced on them
SEEDS = (9, 25)
needs_pycc = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")


def task(root: Path, name: str, compiler: str | None = PYCC, configs=("O2", "passes")):
    return reliability.Task(name, root, compiler, "cc", configs, False, 10.0)


@pytest.mark.parametrize("seed", [*range(1, 13), 141])  # (141: grids in struct members)
def test_generated_programs_are_warning_free_c(tmp_path, seed):
    """gcc -Wall -Werror builds every program (a warning would be a false break) and the
    program runs to an exit status from its data; the same seed gives the same text."""
    program = stencil_gen.generate(seed)
    assert program.source == stencil_gen.generate(seed).source
    (tmp_path / "prog.c").write_text(program.source)
    build = ["cc", "-O2", "-Werror", *program.cflags, "prog.c", "-o", "prog"]
    subprocess.run(build, cwd=tmp_path, check=True, capture_output=True)
    run = subprocess.run(["./prog"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert 0 <= run.returncode < 7
    assert [line.split()[0] for line in run.stdout.splitlines()[-4:]] == ["A", "B", "C", "P"]


@pytest.mark.sweep  # 10 s; the harness's verdicts are tested below with stand-in compilers
@needs_pycc
def test_stencil_programs_are_taken_over_and_match_cc(tmp_path):
    """Both programs build and run as with cc at -O2 and under their forced pipeline, every
    kernel is compiled by pycc-stencil, and the forced pipeline's pass fires somewhere."""
    outcomes = []
    for seed in SEEDS:
        outcomes += reliability.run_task(task(tmp_path, f"stencil-{seed}"))
    assert [o.config for o in outcomes] == [
        "O2",
        "passes=time-tile(3,5,7,5)",
        "O2",
        "passes=unroll-jam(2),simd",
    ]
    for outcome in outcomes:
        assert (outcome.status, outcome.detail) == ("ok", ""), outcome
        assert outcome.built and outcome.taken == outcome.kernels > 0, outcome
    assert all(o.fired for o in outcomes[1::2]), outcomes


def fake_compiler(tmp_path: Path, body: str) -> str:
    """A bash script standing in for pycc-stencil: cc with a twist. `wrong SED` writes
    prog.c edited by SED to $WRONG, which `cc "${@/#prog.c/$WRONG}"` compiles instead."""
    path = tmp_path / "wrong-cc"
    lines = ["#!/bin/bash", f"WRONG={tmp_path / 'wrong.c'}", 'wrong() { sed "$1" prog.c >$WRONG; }']
    path.write_text("\n".join([*lines, body, ""]))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


INSTEAD = 'cc "${@/#prog.c/$WRONG}"'
#: right whenever both compilers are told not to fuse a*b+c
STRICT = 'case "$*" in *-ffp-contract=off*) cc "$@"; chmod 700 prog; exit;; esac;'
#: a break in the program's files (its mode), which the strict rebuild has too
MODE = "trap 'chmod 700 prog' EXIT;"


@pytest.mark.parametrize(
    "body, status, detail",
    [
        (f"wrong 's/seed \\* 13/seed * 11/' && {INSTEAD}", "miscompile", "stdout differs"),
        ('echo "prog.c:1:1: warning: odd" >&2; exec cc "$@"', "break", "diagnostics differ"),
        ('echo "Traceback (most recent call last):" >&2; exec cc "$@"', "break", "crash"),
        ('cc "$@" && chmod 700 prog', "break", "build files differ"),
        ("exit 1", "break", "exit status 1 (cc: 0)"),
        (f"wrong 's/(h % 7)/(h % 7 + 1)/' && {INSTEAD}", "miscompile", "exit status"),
        (f"{STRICT} wrong 's/seed \\* 13/seed * 11/' && {INSTEAD}", "contraction", "stdout"),
        (f"{STRICT} {MODE} wrong 's/seed \\* 13/seed * 11/' && {INSTEAD}", "contraction", "stdout"),
    ],
    ids=[
        "wrong-output",
        "extra-warning",
        "traceback",
        "file-mode",
        "fails",
        "wrong-exit",
        "only-where-contraction-is-allowed",
        "only-contraction-and-a-file-mode",
    ],
)
def test_a_wrong_compiler_is_caught(tmp_path, body, status, detail):
    """Each way a drop-in compiler can fail its promise is reported as what it is, with a
    reproducer; a compiler that writes no report has taken nothing over."""
    wrong = fake_compiler(tmp_path, body)
    (outcome,) = reliability.run_task(task(tmp_path, "stencil-9", wrong, configs=("O2",)))
    assert outcome.status == status and outcome.detail.startswith(detail), outcome
    assert "--program stencil-9 --configs O2" in outcome.reproducer
    assert (outcome.kernels, outcome.taken) == (0, 0)


def test_a_program_cc_cannot_run_to_the_end_is_a_timeout(tmp_path, monkeypatch):
    """A cc-built run that does not finish proves nothing: a timeout, not a miscompile."""
    looping = stencil_gen.generate(7)
    endless = looping.source.replace("int main(void)\n{", "int main(void)\n{\n  for (;;) {}")
    monkeypatch.setitem(
        reliability.SOURCES,
        "stencil",
        lambda seed: reliability.Program("stencil-7", "stencil", 7, endless, (), "?"),
    )
    short = reliability.Task("stencil-7", tmp_path, "cc", "cc", ("O2",), False, 0.5)
    (outcome,) = reliability.run_task(short)
    assert outcome.status == "timeout", outcome


def test_csmith_checksum_includes_func_1():
    """Without globals csmith's checksum is 0 whatever the program computes: func_1's
    result is folded in, and a pointer-returning func_1 is left alone."""
    source = "static uint32_t  func_1(void);\nint main(void)\n{\n    func_1();\n}\n"
    folded = reliability.checksum_func_1(source)
    assert '    transparent_crc(func_1(), "func_1", print_hash_value);' in folded
    pointer = source.replace("uint32_t  func_1", "int32_t * func_1")
    assert reliability.checksum_func_1(pointer) == pointer


def test_program_names_and_configurations():
    assert reliability.program_names(4, 10, ["stencil", "csmith"]) == [
        "stencil-10",
        "csmith-11",
        "stencil-12",
        "csmith-13",
    ]
    with pytest.raises(ValueError):
        reliability.parse_name("gcc-torture-1")
    program = reliability.stencil_program(3)
    every = reliability.configs_for(program, ("O3-native", "passes"), all_pipelines=True)
    assert every[0].flags == ("-O3", "-march=native") and not every[0].pycc_flags
    pipelines = reliability.PIPELINES + reliability.STENCIL_PIPELINES
    forced = [(f"-fpycc-passes={p}",) for p in pipelines]
    forced[pipelines.index("parallel-sweep")] += ("-fpycc-parallel",)  # (threads: else refused)
    assert [c.pycc_flags for c in every[1:]] == forced
    (threads,) = reliability.configs_for(program, ("O3-openmp",), all_pipelines=False)
    assert threads.flags == ("-O3", "-march=native", "-fopenmp")


@needs_pycc
def test_markdown_summary_keeps_the_hand_written_part(tmp_path, monkeypatch):
    """main() runs the named program, writes the summary (machine, commit, command, the
    table) and keeps the text below the marker; exit status 0 when nothing failed."""
    summary = tmp_path / "reliability.md"
    marker = "<!-- written by hand below this line: kept by scripts/reliability.py -->"
    summary.write_text(f"old table\n{marker}\n## Findings\nminimized reproducers\n")
    argv = ["--program", "stencil-9", "--configs", "O2", "--markdown", str(summary)]
    monkeypatch.chdir(tmp_path)
    assert reliability.main(argv) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reliability.md"]  # csmith's files
    text = summary.read_text()
    assert "old table" not in text and text.endswith(
        f"{marker}\n## Findings\nminimized reproducers\n"
    )
    assert "- machine: " in text and "- commit: " in text and "--program stencil-9" in text
    assert "| O2 | 1 | 1 | 1 (100% of" in text and "None." in text
