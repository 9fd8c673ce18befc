"""A warm compile gives back the outputs of the identical earlier one (`dropin_replay`): the
object, what cc printed, the dependency file, with no compile run; anything outside the key
(a header's text, the directory under -g, extra output files) makes it compile again."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from test_compiler_mode import PYCC, clean_env
from test_dropin_speculative import compiles_of, logging_cc
from test_tiling import STENCILS_C, _split_functions

pytestmark = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")

#: a tiled kernel (taken over at -O3) and a warning of cc's
KERNEL = '#include "k.h"\n' + _split_functions(STENCILS_C)["jacobi2d_two"].replace(
    "{\n", "{\n  int unused = 1 / 0;\n", 1
).replace("0.2 *", "SCALE *")


def _compile(
    directory: Path,
    flags: list[str],
    tools: Path,
    tail: tuple[str, ...] = ("-c", "k.c", "-o", "k.o"),
    dependencies: tuple[str, ...] = ("-MD",),
) -> tuple[list[str], dict, str]:
    """k.c compiled (`-O3`, `dependencies`, `flags`, `tail`) with the logging cc and the cache
    in `tools`: (the compiles of k.c that ran, k.c's report, stderr)."""
    wrapper, log = logging_cc(tools)
    cache = tools / "cache"
    log.unlink(missing_ok=True)
    report = directory / "report.jsonl"
    report.unlink(missing_ok=True)
    env = clean_env(cache, PYCC_TAKEOVER="", PYCC_REPORT=str(report), PYCC_CC=str(wrapper))
    done = subprocess.run(
        [PYCC, "-O3", *dependencies, *flags, *tail], cwd=directory, env=env, capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    units = [json.loads(line) for line in report.read_text().splitlines()]
    return compiles_of(log, "k.c"), next(u for u in units if u["source"] == "k.c"), done.stderr


def _project(directory: Path) -> Path:
    directory.mkdir()
    (directory / "k.c").write_text(KERNEL)
    (directory / "k.h").write_text("#define SCALE 0.2\n")
    return directory


def test_a_warm_compile_gives_the_outputs_back_without_compiling(tmp_path):
    project = _project(tmp_path / "p")
    ran, unit, printed = _compile(project, [], tmp_path)
    assert ran and unit["status"] == "pycc" and "division by zero" in printed, unit
    first = [(project / name).read_bytes() for name in ("k.o", "k.d")]
    (project / "k.o").unlink()
    (project / "k.d").write_text("old\n")  # cc writes into it: a hard link sees the new text
    os.link(project / "k.d", project / "linked.d")
    ran, unit, again = _compile(project, [], tmp_path)
    assert ran == [] and unit["cache"] == "hit" and unit["status"] == "pycc", ran
    assert again == printed
    assert [(project / name).read_bytes() for name in ("k.o", "k.d")] == first
    assert (project / "linked.d").read_bytes() == first[1]


def test_a_compile_and_link_gives_the_object_back_too(tmp_path):
    """`cc k.c main.c -o app` compiles k.c to a temporary object whose name changes every
    run: the warm build gives it back all the same, and links the same program."""
    project = _project(tmp_path / "p")
    (project / "main.c").write_text("int main(void) { return 0; }\n")
    tail = ("k.c", "main.c", "-o", "app")
    ran, unit, printed = _compile(project, [], tmp_path, tail)
    assert ran and unit["status"] == "pycc", unit
    first = (project / "app").read_bytes()
    (project / "app").unlink()
    ran, unit, again = _compile(project, [], tmp_path, tail)
    assert ran == [] and unit["cache"] == "hit" and unit["status"] == "pycc", ran
    assert again == printed and (project / "app").read_bytes() == first


def test_an_object_built_into_another_directory_is_given_back(tmp_path):
    """An object's bytes do not hold its name: the same compile with `-o b/k.o` after
    `-o a/k.o` (an out-of-tree build, a fresh build directory) is given back. A dependency
    file names its target, so under -MD it compiles again."""
    project = _project(tmp_path / "p")
    for name in ("a", "b", "c", "d"):
        (project / name).mkdir()
    ran, unit, _ = _compile(project, [], tmp_path, ("-c", "k.c", "-o", "a/k.o"), ())
    assert ran and unit["status"] == "pycc", unit
    ran, unit, _ = _compile(project, [], tmp_path, ("-c", "k.c", "-o", "b/k.o"), ())
    assert ran == [] and unit["cache"] == "hit", ran
    assert (project / "a" / "k.o").read_bytes() == (project / "b" / "k.o").read_bytes()
    _compile(project, [], tmp_path, ("-c", "k.c", "-o", "c/k.o"))
    ran, unit, _ = _compile(project, [], tmp_path, ("-c", "k.c", "-o", "d/k.o"))
    assert ran and "d/k.o:" in (project / "d" / "k.d").read_text()


def test_a_changed_header_compiles_again(tmp_path):
    project = _project(tmp_path / "p")
    _compile(project, [], tmp_path)
    (project / "k.h").write_text("#define SCALE 0.25\n")
    ran, unit, _ = _compile(project, [], tmp_path)
    assert ran and unit["cache"] == "miss", ran


@pytest.mark.parametrize(
    "flags, moved", [(["-fstack-usage"], False), (["-g"], True)], ids=["su", "g-cwd"]
)
def test_outputs_outside_the_key_compile_again(tmp_path, flags, moved):
    """`-fstack-usage` writes k.su besides the object; under -g the object names the
    directory it was compiled in."""
    project = _project(tmp_path / "p")
    _compile(project, flags, tmp_path)
    if moved:
        project = project.rename(tmp_path / "q")
    else:
        (project / "k.su").unlink()
    ran, _, _ = _compile(project, flags, tmp_path)
    assert ran, "the outputs were given back"
    assert moved or (project / "k.su").exists()


def test_a_file_left_to_cc_before_parsing_is_given_back_too(tmp_path):
    """No nest the -O3 passes could tile in the preprocessed unit (the macro, which might
    have been an access, is a call): the warm compile runs no compile either."""
    project = tmp_path / "p"
    project.mkdir()
    code = (
        "#define ADD(s, x) s += g(x)\nint g(int);\nint f(int n, int *a) { int s = 0;\n"
        "for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) ADD(s, a[i]); return s; }"
    )
    (project / "k.c").write_text(code + "\n")
    _compile(project, [], tmp_path)
    ran, unit, _ = _compile(project, [], tmp_path)
    assert ran == [] and unit["status"] == "passthrough", (ran, unit)


def test_a_file_the_assembler_reads_is_not_replayed(tmp_path):
    """`.incbin` makes the object depend on a file outside the key."""
    project = _project(tmp_path / "p")
    (project / "data.bin").write_bytes(b"1234")
    with open(project / "k.c", "a") as source:
        source.write('__asm__(".section .rodata\\n.incbin \\"data.bin\\"\\n.text");\n')
    _compile(project, [], tmp_path)
    (project / "data.bin").write_bytes(b"5678")
    ran, _, _ = _compile(project, [], tmp_path)
    assert ran, "the outputs were given back"
