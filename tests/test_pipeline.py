"""Pass pipelines: syntax, names, arguments; registration, remarks, timing, verification, and
the pipeline as `check`, `emit`, `load` and the compiler mode see it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from llvmlite import ir
from pycc_stencil import load
from pycc_stencil.cli import main
from pycc_stencil.diagnostics import SourceLocation
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes import pipeline
from pycc_stencil.ir_passes.core.analyses import ALL, analyses, loops_of
from pycc_stencil.ir_passes.pipeline import (
    PassVerificationError,
    PipelineError,
    parse_pipeline,
    run_passes,
    verify_passes_default,
)
from pycc_stencil.ir_passes.registry import PassContext, PassSpec, Remark, register

HOST = host_target()

REGISTRY = {
    "unroll": PassSpec(lambda m, n: m, (int,)),
    "align": PassSpec(lambda m: m),
}


def test_parses_names_and_arguments():
    assert parse_pipeline(" unroll(4) , align", REGISTRY) == [("unroll", (4,)), ("align", ())]
    assert parse_pipeline("", REGISTRY) == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("unroll(4", "missing ')'"),
        ("unroll(4))", "unbalanced ')'"),
        ("unroll(4),,align", "cannot parse pass ''"),
        ("4unroll", "cannot parse pass '4unroll'"),
        ("simd(8)", "unknown pass 'simd' (valid passes: align, unroll)"),
        ("unroll", "pass unroll takes 1 argument(s), 0 given"),
        ("unroll(four)", "argument 'four' is not a valid int"),
        ("align(1)", "pass align takes 0 argument(s), 1 given"),
    ],
)
def test_errors_are_clear(text, message):
    with pytest.raises(PipelineError) as error:
        parse_pipeline(text, REGISTRY)
    assert message in str(error.value)


def test_unknown_names_list_the_registered_passes():
    with pytest.raises(PipelineError) as error:
        parse_pipeline("vectorize(8)")
    listed = str(error.value).split("valid passes: ")[1].rstrip(")").split(", ")
    assert str(error.value).startswith("unknown pass 'vectorize'")
    ours = {"align", "loop-info", "simd", "unroll", "unroll-full", "unroll-jam"}
    assert ours <= set(listed) and listed == sorted(listed)
    with pytest.raises(PipelineError, match=r"valid passes: none available yet"):
        parse_pipeline("unroll(4)", {})


STENCIL = """
void blur(int n, float *a, const float *b) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 0; j < 3; j++)
      a[i] += b[i - 1 + j] * 0.25f;
}
"""
#: what loop-info says of STENCIL's two loops (trip counts from ir_passes/core/loops.py)
OUTER_LOOP = "loop at depth 1: 8 blocks, 1 exit, 1 latch, trip count max(0, ceil((%n - 2) / 1))"
INNER_LOOP = "loop at depth 2: 3 blocks, 1 exit, 1 latch, trip count max(0, ceil((3) / 1))"


def test_register_adds_a_pass_with_its_argument_types():
    registry: dict[str, PassSpec] = {}

    @register("tag", (int, str), registry=registry)
    def tag(module, count, text):
        return module

    assert registry == {"tag": PassSpec(tag, (int, str))}
    assert parse_pipeline("tag(3, x)", registry) == [("tag", (3, "x"))]
    with pytest.raises(ValueError, match="already registered"):
        register("tag", registry=registry)(lambda m: m)


def test_trailing_arguments_with_defaults_may_be_left_out():
    registry: dict = {}

    @register("width", (int, int), registry=registry, defaults=(0,))
    def width(module, lanes, unroll):
        return module

    assert parse_pipeline("width(8)", registry) == [("width", (8, 0))]
    assert parse_pipeline("width(8, 2)", registry) == [("width", (8, 2))]
    with pytest.raises(PipelineError, match="takes 1 to 2 argument"):
        parse_pipeline("width", registry)


def test_remarks_print_in_compiler_form():
    where = SourceLocation("k.c", 3, 5)
    assert (
        str(Remark("passed", "simd", "loop vectorized by SIMD binding, width 8", where))
        == "k.c:3:5: remark: loop vectorized by SIMD binding, width 8 [-Rpass=simd]"
    )
    assert (
        str(Remark("missed", "unroll", "trip count unknown", where))
        == "k.c:3:5: remark: trip count unknown [-Rpass-missed=unroll]"
    )
    assert (
        str(Remark("analysis", "loop-info", "x"))
        == "pycc-stencil: remark: x [-Rpass-analysis=loop-info]"
    )
    with pytest.raises(ValueError, match="remark kind"):
        Remark("done", "p", "m")


def test_loop_info_reports_each_loop_at_its_header_and_is_timed(c_file):
    path = c_file(STENCIL)
    module = lower_file(str(path), []).module
    before = str(module)
    result = run_passes(module, parse_pipeline("loop-info"), verify=True, target=HOST)
    assert str(result.module) == before  # analysis only
    assert [str(r) for r in result.remarks] == [
        f"{path}:3:23: remark: {OUTER_LOOP} [-Rpass-analysis=loop-info]",
        f"{path}:4:21: remark: {INNER_LOOP} [-Rpass-analysis=loop-info]",
    ]
    assert {r.function for r in result.remarks} == {"blur"}
    assert result.passes == ["loop-info"]
    assert [name for name, _ in result.time_ms] == ["loop-info"]
    assert result.records[0].seconds > 0


def test_a_pass_gets_a_context_only_if_it_asks_for_one(c_file):
    registry: dict[str, PassSpec] = {}
    seen = []

    @register("plain", registry=registry)
    def plain(module):
        seen.append("plain")
        return module

    @register("talks", (int,), registry=registry)
    def talks(module, width, *, context: PassContext):
        function = module.get_global("blur")
        context.missed(f"not vectorized at width {width}: no reason", at=function.blocks[0])
        return module

    module = lower_file(str(c_file(STENCIL)), []).module
    result = run_passes(module, parse_pipeline("plain,talks(8)", registry), registry)
    assert seen == ["plain"] and result.passes == ["plain", "talks(8)"]
    (remark,) = result.remarks
    assert remark.kind == "missed" and remark.location.line == 3
    assert str(remark).endswith(": not vectorized at width 8: no reason [-Rpass-missed=talks]")


def drop_terminators(module):
    """A deliberately broken pass: blocks without terminators."""
    for function in module.functions:
        for block in function.blocks:
            if block.instructions:
                del block.instructions[-1]
    return module


def test_invalid_ir_after_a_pass_is_an_internal_error_naming_it(c_file, monkeypatch):
    registry = {"broken": PassSpec(drop_terminators)}
    module = lower_file(str(c_file(STENCIL)), []).module
    with pytest.raises(PassVerificationError, match="pass 'broken' produced invalid IR"):
        run_passes(module, [("broken", ())], registry, verify=True)
    module = lower_file(str(c_file(STENCIL)), []).module
    monkeypatch.setenv("PYCC_VERIFY_PASSES", "0")
    run_passes(module, [("broken", ())], registry)  # not verified: production may switch it off
    monkeypatch.setenv("PYCC_VERIFY_PASSES", "1")
    with pytest.raises(PassVerificationError):
        run_passes(module, [("broken", ())], registry)
    with pytest.raises(PassVerificationError, match="returned NoneType, not a module"):
        run_passes(module, [("none", ())], {"none": PassSpec(lambda m: None)})


def test_compiler_mode_verifies_after_each_pass_only_when_asked(monkeypatch):
    """The drop-in compiler leaves it to the object's compile (which verifies the module);
    the other commands verify unless told not to; the variable decides for both."""
    monkeypatch.delenv("PYCC_VERIFY_PASSES", raising=False)
    assert verify_passes_default() and not verify_passes_default(unset=False)
    for value, verify in (("1", True), ("yes", True), ("0", False), ("off", False)):
        monkeypatch.setenv("PYCC_VERIFY_PASSES", value)
        assert verify_passes_default() is verify
        assert verify_passes_default(unset=False) is verify


def test_emit_prints_the_ir_after_the_pipeline_and_the_remarks(c_file, capsys, monkeypatch):
    def rename(module):
        module.get_global("blur").blocks[0].name = "renamed_by_the_pass"
        return module

    monkeypatch.setitem(pipeline.REGISTRY, "rename", PassSpec(rename))
    path = str(c_file(STENCIL))
    assert main(["emit", path, "--emit", "llvm", "--passes", "rename,loop-info"]) == 0
    out, err = capsys.readouterr()
    assert "renamed_by_the_pass:" in out and "fmul" in out  # not optimized by LLVM
    assert err.count("[-Rpass-analysis=loop-info]") == 2
    assert main(["emit", path, "--emit", "llvm", "--passes", "loop-info", "--remarks", "none"]) == 0
    assert capsys.readouterr().err == ""
    assert (
        main(["emit", path, "--emit", "llvm", "--passes", "loop-info", "--remarks", "missed"]) == 0
    )
    assert capsys.readouterr().err == ""
    assert main(["emit", path, "--emit", "llvm", "--remarks", "bogus"]) == 1
    assert "unknown remark kind 'bogus'" in capsys.readouterr().err


def test_emit_reports_a_broken_pass_as_an_internal_error(c_file, capsys, monkeypatch):
    monkeypatch.setitem(pipeline.REGISTRY, "broken", PassSpec(drop_terminators))
    assert main(["emit", str(c_file(STENCIL)), "--emit", "llvm", "--passes", "broken"]) == 70
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("pycc-stencil: error: internal error: pass 'broken' produced invalid IR")


def test_check_with_loop_info_stays_bit_exact_and_prints_remarks(c_file, capsys):
    path = str(c_file(STENCIL))
    assert main(["check", path, "--passes", "loop-info", "--param", "n=9"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].startswith("OK blur: bit-exact")
    assert out.splitlines()[-1] == "1 OK, 0 MISMATCH, 0 SKIPPED, 0 ERROR"
    assert err.count("remark: loop at depth") == 2


def test_load_keeps_remarks_and_times(c_file):
    library = load(str(c_file(STENCIL)), passes="loop-info")
    assert [r.kind for r in library.remarks] == ["analysis", "analysis"]
    assert [r.name for r in library.pass_records] == ["loop-info"]
    assert library.pass_records[0].seconds >= 0


def test_compiler_mode_reports_the_passes_and_their_remarks(tmp_path):
    pycc = shutil.which("pycc-stencil", path=os.path.dirname(sys.executable))
    (tmp_path / "k.c").write_text(STENCIL)
    report = tmp_path / "r.json"
    env = dict(os.environ, PYCC_NO_CACHE="1", PYCC_REPORT=str(report), PYCC_VERBOSE="1")
    proc = subprocess.run(
        [pycc, "-O2", "-c", "k.c", "-fpycc-passes=loop-info"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    (unit,) = [json.loads(line) for line in report.read_text().splitlines()]
    (blur,) = unit["functions"]
    assert blur["compiled_by"] == "pycc-stencil" and blur["passes"] == ["loop-info"]
    assert blur["remarks"] == [
        f"k.c:3:23: remark: {OUTER_LOOP} [-Rpass-analysis=loop-info]",
        f"k.c:4:21: remark: {INNER_LOOP} [-Rpass-analysis=loop-info]",
    ]
    assert unit["time_ms"]["passes"] >= 0
    assert blur["remarks"][0] in proc.stderr  # PYCC_VERBOSE prints them


def test_a_broken_module_with_debug_info_raises_instead_of_aborting(c_file):
    """LLVM's parser aborts the process on a broken module that has debug info; the
    verification after each pass must raise PassVerificationError instead."""
    registry: dict = {}

    @register("swap", registry=registry)
    def swap(module):
        block = next(b for f in module.functions for b in f.blocks if len(b.instructions) > 4)
        block.instructions[0], block.instructions[1] = block.instructions[1], block.instructions[0]
        return module

    module = lower_file(str(c_file(STENCIL)), []).module
    assert "!dbg" in str(module)
    with pytest.raises(PassVerificationError, match="swap"):
        run_passes(module, parse_pipeline("swap", registry), registry, verify=True)


def test_the_pass_manager_drops_what_a_pass_does_not_preserve(c_file):
    """Analyses are cached per function; after each pass the pass manager drops the ones it
    did not declare preserved, and (verifying) checks the ones it claims to preserve."""
    module = lower_file(str(c_file(STENCIL)), []).module
    blur = module.get_global("blur")
    registry: dict = {}

    @register("look", registry=registry, preserves=ALL)
    def look(module):
        loops_of(blur)  # computed once, kept for the next pass
        return module

    @register("touch", registry=registry)
    def touch(module):
        return module

    @register("liar", registry=registry, preserves=("cfg", "loops"))
    def liar(module):  # claims to keep the CFG, and adds a block
        loops_of(blur)
        ir.IRBuilder(blur.append_basic_block("unreachable")).ret_void()
        return module

    run_passes(module, parse_pipeline("look", registry), registry, verify=True)
    assert analyses(blur).cached == ["cfg", "dominators", "loops"]
    cached = loops_of(blur)
    run_passes(module, parse_pipeline("look,look", registry), registry, verify=True)
    assert loops_of(blur) is cached
    run_passes(module, parse_pipeline("touch", registry), registry, verify=True)
    assert analyses(blur).cached == []
    with pytest.raises(PassVerificationError, match="the cfg analysis of @blur changed"):
        run_passes(module, parse_pipeline("liar", registry), registry, verify=True)
