"""Limits and bad input (issue 13 §5): deep C, bounded pass arguments, `auto` on kernels that
call kernels, standard output on a full device. Each case ends in a result or a diagnostic,
never a traceback."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time

import pytest
from pycc_stencil.cli import main
from pycc_stencil.frontend import lower_file, statements
from pycc_stencil.ir_passes import auto, unroll
from pycc_stencil.ir_passes.core.copying import fresh_copy
from pycc_stencil.ir_passes.core.target import Cost
from pycc_stencil.ir_passes.strategy import OUT_OF_TIME, SearchOptions, Strategy, search
from pycc_stencil.polyhedral import budget
from pycc_stencil.polyhedral.scop import MAX_LOOP_DEPTH
from test_compiler_mode import clean_env
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


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_compiler_mode_compiles_a_1000_term_sum_as_cc_does(tmp_path):
    main_c = """\
#include <stdio.h>
#include <stdlib.h>
void deep(int n, float *a, const float *b);
int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  float *a = calloc(n + 1, sizeof *a), *b = malloc((n + 1) * sizeof *b);
  for (int i = 0; i < n; i++) b[i] = (float)(i % 17) * 0.37f;
  deep(n, a, b);
  for (int i = 0; i < n; i++) printf("%a\\n", a[i]);
  return 0;
}
"""
    env, compiled = build_both(tmp_path, main_c, sum_kernel(1000), [], [])
    assert compiled["deep"]["compiled_by"] == "pycc-stencil", compiled["deep"]
    assert_same_output(tmp_path, env, [["1"], ["13"]])


def test_compiler_mode_beyond_its_memory_limit_leaves_the_file_to_cc(tmp_path):
    """PYCC_MEMORY_LIMIT bounds pycc-stencil's part of a file (its child's RLIMIT_DATA): past
    it, the file is cc's and the program still behaves as cc's; the default limit compiles."""
    main_c = """\
#include <stdio.h>
void deep(int n, float *a, const float *b);
int main(void) {
  float a[40] = {0}, b[40];
  for (int i = 0; i < 40; i++) b[i] = (float)(i % 7) * 0.5f;
  deep(37, a, b);
  for (int i = 0; i < 40; i++) printf("%a\\n", a[i]);
  return 0;
}
"""
    limited = tmp_path / "limited"
    limited.mkdir()
    env, compiled = build_both(limited, main_c, sum_kernel(4), [], [], {"PYCC_MEMORY_LIMIT": "16M"})
    assert compiled.get("deep", {}).get("compiled_by", "cc") == "cc", compiled
    assert_same_output(limited, env, [[]])
    _, compiled = build_both(tmp_path, main_c, sum_kernel(4), [], [])
    assert compiled["deep"]["compiled_by"] == "pycc-stencil", compiled["deep"]


@pytest.mark.parametrize("command", [["check"], ["emit", "--emit", "llvm", "-o", "-"], ["tune"]])
def test_commands_beyond_the_memory_limit_stop_with_a_diagnostic(c_file, command):
    """`check`, `emit` and `tune` run under PYCC_MEMORY_LIMIT (RLIMIT_DATA) as a whole: past
    it, an error naming the limit, exit status 1, no traceback and no output file."""
    path = c_file(sum_kernel(4))
    limited = dict(os.environ, PYCC_MEMORY_LIMIT="30M")
    done = subprocess.run([PYCC, *command, str(path)], capture_output=True, text=True, env=limited)
    assert done.returncode == 1, done.stderr
    assert "needed more than 30M of memory (PYCC_MEMORY_LIMIT)" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert done.stdout == ""
    if command == ["check"]:  # the limit, not the input, made it fail
        unlimited = subprocess.run([PYCC, *command, str(path)], capture_output=True, text=True)
        assert unlimited.returncode == 0, unlimited.stderr


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
    module = lower_file(str(c_file(loops_in_a_row(40)))).module
    copied = fresh_copy(module)
    blocks = [len(m.get_global("row_of_loops").blocks) for m in (module, copied)]
    assert blocks[0] == blocks[1] > 120


def test_auto_on_a_function_of_many_loops_does_not_fail(c_file, capsys, monkeypatch):
    """csmith's functions: `auto` failed with a RecursionError copying the module, and
    `-fpycc-passes=auto` took over nothing. The search is cut to unroll(1) to stay fast."""
    monkeypatch.setattr(auto, "OPTIONS", SearchOptions(1, 1, 1, min_gain=0.02))
    path = str(c_file(loops_in_a_row(40)))
    argv = ["emit", "--emit", "llvm", "--passes", "auto", "--remarks", "analysis", path]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert 'define void @"row_of_loops"' in out
    assert re.fullmatch(r"\S+:2:3: remark: (kept|tuned) .* \[-Rpass-analysis=auto\]\n", err), err


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


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["check", "--passes", "simd(1000000)"],
            "pass simd: SIMD width 1000000 exceeds the limit 256",
        ),
        (
            ["emit", "--emit", "llvm", "--passes", "unroll(20000)"],
            "unroll factor 20000 exceeds the limit 16384",
        ),
        (["emit", "--emit", "llvm", "--passes", "unroll-jam(99999)"], "unroll factor 99999"),
        (["emit", "--emit", "llvm", "--passes", "tile(2000000)"], "tile size 2000000 exceeds"),
        (["emit", "--emit", "llvm", "--passes", "unroll-full(99999)"], "full-unroll limit 99999"),
        (["tune", "--max-unroll", "65"], "--max-unroll: unroll factor 65 exceeds the limit 64"),
    ],
)
def test_pass_arguments_beyond_their_limit_are_refused(c_file, capsys, argv, message):
    """Before: `simd(1000000)` ran for minutes and took gigabytes, `tune --max-unroll 1000`
    too; every factor, width and size now has a declared maximum."""
    path = str(c_file(sum_kernel(3)))
    assert main([argv[0], path, *argv[1:]]) == 1
    assert message in capsys.readouterr().err


def test_a_loop_is_not_unrolled_beyond_the_instruction_limit(c_file, capsys, monkeypatch):
    """The copies of one loop are bounded (`unroll`, `simd` and `unroll-jam` unroll)."""
    monkeypatch.setattr(unroll, "MAX_UNROLLED_INSTRUCTIONS", 200)
    path = str(c_file(sum_kernel(40)))
    assert main(["emit", "--emit", "llvm", "--passes", "unroll(8)", path, "-o", "/dev/null"]) == 0
    err = capsys.readouterr().err
    assert re.search(
        r"remark: loop not unrolled: 8 copies of its \d+ instructions exceed the limit of 200 "
        r"instructions \[-Rpass-missed=unroll\]",
        err,
    ), err
    assert "loop unrolled by 8" in err  # `plain` is small


def test_a_huge_function_is_skipped_with_a_reason(c_file, monkeypatch):
    """A 10 000-statement function took minutes and gigabytes in `check`: bodies beyond
    MAX_NODES syntax nodes are left alone (to cc in compiler mode)."""
    monkeypatch.setattr(statements, "MAX_NODES", 500)
    body = "".join(f"  a[{k}] = b[{k}] * 0.5f;\n" for k in range(100))
    source = f"void big(float *a, const float *b) {{\n{body}}}\n" + sum_kernel(2)
    lowered = lower_file(str(c_file(source)))
    (skipped,) = lowered.skipped
    assert (skipped.name, skipped.reason) == ("big", "function body larger than 500 syntax nodes")
    assert {"deep", "plain"} <= set(lowered.functions)


HEAT = """\
void heat(int t, int n, float *a, float *b) {
  for (int s = 0; s < t; s++) {
    for (int i = 1; i < n - 1; i++) b[i] = 0.25f * (a[i - 1] + 2.0f * a[i] + a[i + 1]);
    for (int i = 1; i < n - 1; i++) a[i] = 0.25f * (b[i - 1] + 2.0f * b[i] + b[i + 1]);
  }
}
"""


def test_isl_beyond_its_operation_budget_refuses_the_transformation(c_file, capsys, monkeypatch):
    monkeypatch.setattr(budget, "MAX_OPERATIONS", 2000)
    path = str(c_file(HEAT))
    assert main(["emit", "--emit", "llvm", "--passes", "time-tile", path]) == 0
    out, err = capsys.readouterr()
    assert "remark: refused: isl needed more than 2000 operations [-Rpass-missed=time-tile]" in err
    assert "poly." not in out  # the nest is as it was


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_compiler_mode_assembly_to_a_full_stdout_is_a_write_error(c_file, tmp_path):
    """`-S -o -` (assembly to stdout) is cc's: on a full device, its error and status (it
    was once an internal error and a second compile by cc)."""
    env = clean_env(tmp_path / "cache")
    results = []
    for compiler in ("cc", PYCC):
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [compiler, "-O2", "-S", str(c_file(sum_kernel(3))), "-o", "-"],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                timeout=300,
            )
        results.append((done.returncode, done.stderr))
    assert results[1] == results[0] and results[0][0] == 1
    assert "No space left on device" in results[0][1]


#: runs argv[1:] for at most 120 s; prints its exit code and its peak memory (KiB). A child of
#: this small process: a child the test worker forks would count the worker's memory as its own
PEAK_MEMORY = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, timeout=120)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_the_largest_factors_allowed_stay_within_a_time_and_memory_budget(c_file):
    """`simd(1000000)` reached 4.4 GB in a minute: at the limits, the loop's copies are
    refused before they are made (the child's peak memory stays small)."""
    path = str(c_file(sum_kernel(3)))
    argv = [PYCC, "emit", "--emit", "llvm", "--passes", "unroll(16384),simd(256)", path]
    done = subprocess.run(
        [sys.executable, "-c", PEAK_MEMORY, *argv], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr  # (else no answer in 120 s)
    returncode, peak = map(int, done.stdout.split())
    assert returncode == 0, done.stderr
    assert "exceed the limit of 20000 instructions [-Rpass-missed=unroll]" in done.stderr
    assert peak < 1 << 20, f"{peak} KiB"


def test_the_strategy_search_stops_when_its_time_is_spent():
    """Each strategy costs a copy, a compile and a measurement (`tune` on 200 nested loops took
    minutes): past its time the search keeps what it measured."""

    def evaluate(strategy: Strategy) -> Cost:
        time.sleep(0.01)
        return Cost(10.0 / strategy.uf, 4, None, 10)

    result = search(evaluate, [1, 4], SearchOptions(max_unroll=8, eps=8, seconds=0.005))
    assert [t.strategy for t in result.trials] == [Strategy(1)]
    assert result.trials[0].stop == OUT_OF_TIME
    assert result.best is result.trials[0]


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_without_memory_for_a_deep_stack_the_work_runs_on_the_callers(c_file):
    """`ulimit -v` below the deep stack's size: the thread cannot start, the compile goes on."""

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (900 << 20, 900 << 20))

    argv = [PYCC, "emit", "--emit", "llvm", "--passes", "unroll(2)", str(c_file(sum_kernel(3)))]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=120, preexec_fn=limit_memory
    )
    assert done.returncode == 0, done.stderr
    assert 'define void @"deep"' in done.stdout


def test_a_nest_deeper_than_the_polyhedral_limit_is_not_modelled(c_file, capsys):
    """isl's dependences of 200 nested loops ran past the compiler mode's time limit."""
    depth = MAX_LOOP_DEPTH + 2
    loops = "".join(f"for (int i{d} = 0; i{d} < n; i{d}++)\n" for d in range(depth))
    path = str(c_file(f"void nest(int n, float *a) {{\n{loops}a[i0] += 1;\n}}\n"))
    assert main(["emit", "--emit", "llvm", "--passes", "time-tile", path, "-o", "/dev/null"]) == 0
    err = capsys.readouterr().err
    assert f"loop nest is not a SCoP: loop nest deeper than {MAX_LOOP_DEPTH} levels" in err, err


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
@pytest.mark.sweep  # the 1000-term sums are lowered in the default run; this limit is swept
def test_a_20000_term_sum_is_skipped_not_a_crash(c_file):
    """libclang parsed it on a thread of its own with an 8 MB stack: a segmentation fault."""
    path = str(c_file(sum_kernel(20000)))
    done = subprocess.run(
        [PYCC, "check", path, "--function", "plain"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "1 OK, 0 MISMATCH, 0 SKIPPED, 0 ERROR"


def test_a_directory_listing_that_runs_out_of_memory_is_the_memory_diagnostic(
    c_file, monkeypatch, capsys
):
    """ENOMEM from a system call (here: listing the pass and target modules, which `pkgutil`
    read as an empty directory, so CI once said "unknown target 'host' (valid: )") is the
    memory diagnostic, not a wrong answer."""
    import errno

    from pycc_stencil.emit import targets
    from pycc_stencil.ir_passes.pipeline import load_passes

    def no_memory(path: str) -> list[str]:
        raise OSError(errno.ENOMEM, "Cannot allocate memory", path)

    path = c_file(sum_kernel(4))
    registries = (targets._classes, targets._class_named, load_passes)
    for registry in registries:
        registry.cache_clear()
    monkeypatch.setattr(os, "listdir", no_memory)
    monkeypatch.setenv("PYCC_MEMORY_LIMIT", "0")
    try:
        assert main(["tune", str(path)]) == 1
    finally:
        for registry in registries:
            registry.cache_clear()
    assert "pycc-stencil ran out of memory" in capsys.readouterr().err
