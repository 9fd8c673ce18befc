"""`--target c`: the passes' result written back as structured C, compiled by cc with
`-std=c99 -Wall -Wextra -Werror` and run against the original, bit for bit (the harness's
`check`, with the emitted library in place of the JIT), for corpus kernels under the pass
pipelines of every kind (unrolling, SIMD binding, alignment, tiling, time tiling, fusion);
each case also asserts that its pass did something, in the remarks and in the C."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from corpus.manifest import CORPUS_DIR, KERNELS
from corpus_check import (
    by_file,
    case_label,
    compiled,
    corpus_cflags,
    corpus_extents,
    on_entry,
    passed_by,
    remarks_about,
    sweep_if,
)
from llvmlite import ir
from pycc_stencil.cli import main
from pycc_stencil.emit.c_module import emit_c
from pycc_stencil.emit.c_structure import structure
from pycc_stencil.emit.c_types import Unexpressible

#: pipelines by the kind of kernel they transform, with the pass whose remark proves it
#: ran and what its C must show
_LOOPS = [
    ("unroll(4)", "unroll", r"\+= 4|\+ 4;"),
    ("simd", "simd", r"pycc_v\d+"),
]
_KINDS = {
    "c66x/": [
        *_LOOPS,
        ("unroll(2),simd(2),align", "simd", r"pycc_v2"),
        ("tile(4,5)", "tile", r"for \(c\d+ = "),
        ("unroll-jam(2)", "unroll-jam", r"\+= 2|\+ 2;"),
    ],
    "legacy/": _LOOPS,
    "polybench/": [
        ("time-tile(3,7)", "time-tile", r"for \(c\d+ = "),
        ("diamond-tile(3,0,5)", "diamond-tile", r"for \(c\d+ = "),
        ("overlap-tile(4,16)", "overlap-tile", r"for \(c\d+ = "),
    ],
    "pipelines/": [("fuse-tile(4,5)", "fuse-tile", r"for \(c\d+ = ")],
}
#: pipelines of a kind each kernel keeps in the default run, rotating over the files (the
#: kernels of a file keep the same ones: one compile each) so that every pipeline meets a
#: share of them; all run in the sweep (and, as C of every kernel under 14 pipelines, in
#: scripts/check_emitted_c.py)
_KEEP = {"c66x/": 2, "legacy/": 1, "polybench/": 1, "pipelines/": 1}
#: (function, pass) where the pass refuses, with its reason in a remark: the C is still checked
NOT_APPLICABLE = {
    # SIMD binding refuses: reductions it would reassociate, calls, conditional loads,
    # recurrences, data-dependent exits, non-affine stores
    *(
        (function, "simd")
        for function in (
            "apply_mask_f32", "checksum_u32", "conv1d_f32", "conv_col_f32", "count_above_u8",
            "downsample2_u8", "gain_clamp_f32", "gauss5x5_f32", "halve_ptrwalk_u8", "laplace_s8",
            "max_abs_f64", "mean_abs_diff_f32", "median3_h_u8", "prefix_sum_dowhile",
            "residual_2d", "row_diff_until_zero_u8", "sharpen_u8", "sum_f32",
        )
    ),
    ("row_diff_until_zero_u8", "unroll"),  # exits from the body (break)
    # Gauss-Seidel's in-place sweep (no diamonds, no overlap)
    ("kernel_seidel_2d", "diamond-tile"),
    ("kernel_seidel_2d_ptr", "diamond-tile"),
    ("kernel_seidel_2d_ptr", "overlap-tile"),
    ("kernel_seidel_2d_vla", "diamond-tile"),
    ("kernel_seidel_2d_vla", "overlap-tile"),
}  # fmt: skip


def _kind(entry: dict) -> str | None:
    return next((k for k in _KINDS if entry["file"].startswith(k)), None)


def _pipelines(entry: dict) -> list[tuple[str, str, str]]:
    """The pipelines the kernel may keep in the default run: its kind's, except for the VLA
    and macro forms (their loops are those of the _fixed and _ptr forms) and the _fixed ones
    (the _ptr form's loops with constant bounds: their pipelines run in the sweep only)."""
    if any(word in entry["file"] for word in ("_vla", "macro/", "_fixed")):
        return []
    return _KINDS[_kind(entry)]


def _cases():
    entries = [e for e in KERNELS if _kind(e) is not None]
    rotating = [e for e in entries if _pipelines(e)]
    index_of = dict(zip((id(e) for e in rotating), by_file(rotating)))
    for entry in entries:
        variant = entry["variants"][0]
        pipelines = _pipelines(entry)
        every = _KINDS[_kind(entry)] if "_fixed" in entry["file"] else pipelines
        index = index_of.get(id(entry), 0)
        kept = {
            pipelines[(index + k) % len(pipelines)]
            for k in range(min(_KEEP[_kind(entry)], len(pipelines)))
        }
        for passes, pass_name, shows in [("", None, None), *every]:
            label = case_label(entry, variant, {}, passes or "no-passes")
            # without passes only where no pipeline is kept: a kept one's C holds the same
            # operations (the sweep and scripts/check_emitted_c.py run the untransformed C too)
            sweep = (passes, pass_name, shows) not in kept if passes else bool(kept)
            marks = [on_entry(entry, variant), *sweep_if(sweep)]
            yield pytest.param(entry, variant, passes, pass_name, shows, id=label, marks=marks)


@pytest.mark.parametrize("entry, variant, passes, pass_name, shows", list(_cases()))
def test_emitted_c_is_bit_exact(entry, variant, passes, pass_name, shows):
    path = os.path.join(CORPUS_DIR, entry["file"])
    unit = compiled(path, corpus_cflags(entry, variant), passes or None, target="c")
    assert unit.setup_error is None, unit.setup_error
    assert unit.emitted is not None and entry["function"] in unit.emitted.emitted.functions
    for params in entry["params"]:
        text = {k: repr(v) for k, v in params.items()}
        result = unit.check(entry["function"], text, corpus_extents(entry, variant, params))
        assert result.status == "OK", f"{params}: {result}"
        assert result.message.startswith("bit-exact")
    if pass_name is None:
        return
    remarks = remarks_about(unit, entry["function"])
    if (entry["function"], pass_name) in NOT_APPLICABLE:
        assert not passed_by(remarks, pass_name), "applies now: take it off NOT_APPLICABLE"
        return
    assert passed_by(remarks, pass_name), f"{pass_name} did nothing"
    assert re.search(shows, unit.emitted.emitted.text), f"the C does not show {pass_name}"


def _c_of(source: str, tmp_path, passes: str = "") -> str:
    path = tmp_path / "k.c"
    path.write_text(source)
    out = tmp_path / "k.out.c"
    argv = ["emit", str(path), "--target", "c", "-o", str(out)]
    assert main([*argv, "--passes", passes] if passes else argv) == 0
    return out.read_text()


_CONTROL_FLOW = """
int first_above(const int *a, int n, int limit, int *where) {
  int i, found = -1, sum = 0;
  for (i = 0; i < n; i++) {
    if (a[i] < 0) continue;
    if (a[i] > limit) { found = i; break; }
    sum += a[i];
  }
  *where = found;
  if (found < 0) return sum;
  return -sum;
}
"""


def test_control_flow_reads_as_c(tmp_path):
    """break, continue, if/else and early returns become C's own statements (no goto): the
    `continue` arm is the `if` whose other arm goes on to the loop's end."""
    text = _c_of(_CONTROL_FLOW, tmp_path)
    body = text[text.index("\nint32_t first_above(") :]
    assert "goto" not in body
    assert re.search(r"if \(a\[\(int64_t\)i\] < 0\) \{", body), body
    assert re.search(r"if \(a\[\(int64_t\)i\] > limit\) \{\s+found = i;\s+break;", body), body
    assert "if (found >= 0) return 0 - sum" in body


def test_counted_loops_read_as_for(tmp_path):
    text = _c_of(
        "void f(float *a, int n) { for (int i = 1; i < n - 1; i += 2) a[i] = 0; }", tmp_path
    )
    assert re.search(r"for \(i = 1; i < n - 1; i \+= 2\) \{", text), text


def test_control_flow_is_bit_exact(tmp_path, capsys):
    path = tmp_path / "k.c"
    path.write_text(_CONTROL_FLOW)
    assert main(["check", str(path), "--target", "c", "--extent", "a=31", "--extent", "where=1",
                 "--param", "n=31", "--param", "limit=1000000"]) == 0  # fmt: skip
    assert "OK first_above: bit-exact" in capsys.readouterr().out


def test_emitted_file_builds_strictly_with_cc(tmp_path):
    """The file `emit` writes compiles on its own with the strictest usual flags."""
    source = os.path.join(CORPUS_DIR, "c66x", "harris_corner.c")
    out = tmp_path / "harris.c"
    assert main(["emit", source, "--target", "c", "--passes", "simd", "-o", str(out)]) == 0
    command = ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-c", str(out)]
    done = subprocess.run([*command, "-o", str(tmp_path / "h.o")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("/* harris_corner.c by pycc-stencil --target c")


def test_emit_c_needs_a_c_target(capsys):
    source = os.path.join(CORPUS_DIR, "c66x", "jacobi.c")
    assert main(["emit", source, "--emit", "c", "--target", "hexagon"]) == 1
    assert "has no C back end" in capsys.readouterr().err
    assert main(["check", source, "--target", "hexagon"]) == 1
    assert "check runs code on this machine" in capsys.readouterr().err


def _two_exit_loop() -> ir.Function:
    """Two nested loops whose inner one branches straight out of both to code that goes on
    branching (a multi-level break, which no C statement but goto expresses; one that only
    returns is a `return`)."""
    module = ir.Module()
    f = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.IntType(1)]), "f")
    entry, outer, inner, inner_latch, outer_latch, done, one, two = (
        f.append_basic_block(n)
        for n in ("entry", "outer", "inner", "inner_latch", "outer_latch", "done", "one", "two")
    )
    ir.IRBuilder(entry).branch(outer)
    ir.IRBuilder(outer).branch(inner)
    ir.IRBuilder(inner).cbranch(f.args[0], done, inner_latch)
    ir.IRBuilder(inner_latch).cbranch(f.args[0], inner, outer_latch)
    ir.IRBuilder(outer_latch).branch(outer)
    ir.IRBuilder(done).cbranch(f.args[0], one, two)
    ir.IRBuilder(one).ret_void()
    ir.IRBuilder(two).ret_void()
    return f


def test_flow_c_cannot_express_is_refused_with_its_reason():
    with pytest.raises(Unexpressible, match="C has no multi-level break"):
        structure(_two_exit_loop())
    emitted = emit_c(_two_exit_loop().module)
    assert emitted.functions == [] and "multi-level break" in emitted.skipped["f"]
    assert "void f(" not in emitted.text


def test_the_sweep_script_checks_kernels():
    script = os.path.join(os.path.dirname(__file__), "..", "scripts", "check_emitted_c.py")
    done = subprocess.run(
        [sys.executable, script, "--part", "0/80", "--pipelines", ";unroll(2)"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.fullmatch(r"OK: [1-9]\d*, compiles: [1-9]\d*", done.stdout.strip()), done.stdout


_EXITS = """
int find(const int *a, int n, int v) {
  for (int i = 0; i < n; i++) if (a[i] == v) return i;
  return -1;
}
int until(const int *a, int n) {
  int i = 0, s = 0;
  for (;;) { if (i >= n) break; s += a[i]; if (s > 1000) break; i++; }
  return s;
}
"""


def test_return_and_breaks_inside_loops(tmp_path, capsys):
    """A `return` inside a loop, and two `break`s whose paths meet after the loop, are C's
    own statements (once refused as 'several exit blocks')."""
    text = _c_of(_EXITS, tmp_path)
    assert "not written as C" not in capsys.readouterr().err
    assert re.search(r"if \(a\[\(int64_t\)i\] == v\) return i;", text), text
    path = tmp_path / "k.c"
    argv = ["check", str(path), "--target", "c", "--param", "n=29", "--param", "v=5"]
    assert main([*argv, "--extent", "a=29"]) == 0
    out = capsys.readouterr().out
    assert "OK find: bit-exact" in out and "OK until: bit-exact" in out


def test_names_the_emitted_file_uses_are_not_taken(tmp_path, capsys):
    """A parameter named `int64_t` is legal C without <stdint.h>; the emitted file renames it."""
    path = tmp_path / "k.c"
    path.write_text(
        "void g(const float *a, float *o, int int64_t) {\n"
        "  for (int i = 0; i < int64_t; i++) o[i] = a[i] * 2.0f;\n}\n"
    )
    argv = ["check", str(path), "--target", "c", "--passes", "simd", "--param", "int64_t=29"]
    assert main(argv) == 0
    assert "OK g: bit-exact" in capsys.readouterr().out


def test_kernels_named_like_libc_functions_are_the_kernels(tmp_path, capsys):
    """`select` and `index` are libc functions already loaded in the process: the emitted
    library must call its own (as the user's program does), not libc's (ELF interposition
    gave a crash and a wrong sum)."""
    path = tmp_path / "k.c"
    path.write_text(
        "void select(float *out, const float *a, int n) {\n"
        "  for (int i = 0; i < n; i++) out[i] = a[i] * 2.0f + 1.0f;\n}\n"
        "float index(const float *a, int n) {\n"
        "  float s = 0; for (int i = 0; i < n; i++) s += a[i]; return s;\n}\n"
    )
    assert main(["check", str(path), "--target", "c", "--param", "n=17"]) == 0
    out = capsys.readouterr().out
    assert "OK select: bit-exact" in out and "OK index: bit-exact" in out


def test_calls_of_variadic_library_functions_keep_their_arguments(tmp_path, capsys):
    """A call of `snprintf` passes its `...` arguments (promoted as C promotes them), and
    its prototype says `...`."""
    path = tmp_path / "k.c"
    path.write_text(
        "#include <stdio.h>\n"
        "void label(char *out, const float *a, int n) {\n"
        "  float s = 0; for (int i = 0; i < n; i++) s += a[i];\n"
        "  char text[40];\n  for (int i = 0; i < 40; i++) text[i] = 0;\n"
        '  snprintf(text, 40, "%d %.3f %c %hd", n, s, (char)(65 + n % 26), (short)-n);\n'
        "  for (int i = 0; i < 40; i++) out[i] = text[i];\n}\n"
    )
    argv = ["check", str(path), "--target", "c", "--param", "n=17"]
    assert main(argv) == 0
    assert "OK label: bit-exact" in capsys.readouterr().out
    text = _c_of(path.read_text(), tmp_path)
    assert "snprintf(" in text and "int32_t snprintf(" not in text  # <stdio.h> declares it
