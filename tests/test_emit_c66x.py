"""`--target c66x`: the passes' result as C with TI C66x intrinsics and pragmas, built by cc
against the host emulation of the intrinsics (`runtime/c66x`) with `-std=c99 -Wall -Wextra
-Werror`, and run against the original C bit for bit at odd, prime and too-small sizes; each
case also asserts what the C66x dialect must show (the SIMD intrinsics, aligned or unaligned
64-bit accesses, the loop pragmas), so a dialect that silently fell back to plain C fails."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from corpus.manifest import CORPUS_DIR, KERNELS
from corpus_check import case_label, compiled, corpus_cflags, corpus_extents, on_entry, sweep_if
from llvmlite import ir
from pycc_stencil.cli import main
from pycc_stencil.emit.c_dialect_c66x import _integer_lanes

#: pipeline -> what its C66x C must contain (None: nothing in particular)
_DISSERTATION = {
    "": None,
    "auto,align": None,  # the target's default: the C66x model's choice per kernel
    "simd(2),align": r"_mem8_f2\(",
    "unroll(2),simd(2),align": r"#pragma UNROLL\(1\)",
    "unroll(4)": r"#pragma UNROLL\(1\)\n\s*for .*\n(.*\n)*\s*#pragma MUST_ITERATE\(0, 3\)",
}
#: double precision: `<2 x double>` has no C66x register form (structs of lanes); the default
#: pipeline on them (time tiling, seconds each) is in the sweep (scripts/check_emitted_c.py)
_POLYBENCH = {"simd(2),align": None}


def _entries(prefix: str, suffix: str = ".c"):
    seen = set()
    for entry in KERNELS:
        if entry["file"].startswith(prefix) and entry["file"].endswith(suffix):
            if entry["file"] not in seen:
                seen.add(entry["file"])
                yield entry


#: each dissertation kernel keeps one of these (rotating) and `auto,align`; all run in the
#: sweep
_ROTATED = ("simd(2),align", "unroll(2),simd(2),align", "unroll(4)")


def _cases():
    for prefix, suffix, pipelines in (
        ("c66x/", ".c", _DISSERTATION),
        ("polybench/", "_ptr.c", _POLYBENCH),
    ):
        for index, entry in enumerate(_entries(prefix, suffix)):
            variant = entry["variants"][0]
            for passes, shows in pipelines.items():
                label = case_label(entry, variant, {}, passes or "no-passes")
                # the dissertation kernels' untransformed C: a sweep (the pipelines each
                # kernel keeps emit the same operations, and `auto` may keep the loop)
                sweep = (passes in _ROTATED and passes != _ROTATED[index % 3]) or (
                    not passes and prefix == "c66x/"
                )
                if prefix == "polybench/":  # every other one (the same operations)
                    sweep = index % 2 == 1
                marks = [on_entry(entry, variant), *sweep_if(sweep)]
                yield pytest.param(entry, variant, passes, shows, id=label, marks=marks)


def _check_all(unit, entry, variant, params_list) -> None:
    assert unit.setup_error is None, unit.setup_error
    assert entry["function"] in unit.emitted.emitted.functions
    for params in params_list:
        text = {k: repr(v) for k, v in params.items()}
        result = unit.check(entry["function"], text, corpus_extents(entry, variant, params))
        assert result.status == "OK", f"{params}: {result}"
        assert result.message.startswith("bit-exact")


@pytest.mark.parametrize("entry, variant, passes, shows", list(_cases()))
def test_c66x_c_is_bit_exact(entry, variant, passes, shows):
    path = os.path.join(CORPUS_DIR, entry["file"])
    unit = compiled(path, corpus_cflags(entry, variant), passes, target="c66x")
    _check_all(unit, entry, variant, entry["params"])
    text = unit.emitted.emitted.text
    assert '#include "pycc_c66x.h"' in text
    if shows:
        assert re.search(shows, text), f"the C66x C of {passes} does not show {shows}"
    if "simd" in passes:
        assert "_amem8_f2(" not in text  # nothing is declared aligned
        assert "vector_size" not in text  # no GCC vectors: cl6x has none
        double = entry["file"].startswith("polybench/") or entry["function"] == "GaussianX7"
        if not double:  # (GaussianX7 sums in double) a float SIMD operation
            assert re.search(r"_daddsp\(|_dmpysp\(|_dsubsp\(", text), "no DADDSP/DMPYSP"
    if passes == "simd(2),align" and entry["file"].startswith("c66x/"):  # one loop each
        checked = any("overlap check" in r.message for r in unit.remarks)
        # when the overlap check fails the scalar remainder runs every iteration: no bound
        assert checked == (not re.search(r"MUST_ITERATE\(0, \d+\)", text))


def _row_aligned_cases():
    for index, entry in enumerate(_entries("c66x/")):  # half of them in the sweep, alternating
        variant = entry["variants"][0]
        label = case_label(entry, variant, {}, "row-align-8")
        marks = [on_entry(entry, variant), *sweep_if(index % 2 == 1)]
        yield pytest.param(entry, variant, id=label, marks=marks)


@pytest.mark.parametrize("entry, variant", list(_row_aligned_cases()))
def test_declared_rows_give_aligned_accesses(entry, variant):
    """With row_align(8) and even row lengths, the accesses the `align` pass proves become
    LDDW/STDW (`_amem8_f2`, checked at run time by the emulation) and the parameters'
    alignment an `_nassert`; the others stay LDNDW/STNDW."""
    path = os.path.join(CORPUS_DIR, entry["file"])
    unit = compiled(path, corpus_cflags(entry, variant), "simd(2),align", row_align=8,
                    target="c66x")  # fmt: skip
    sizes = [{"size_x": 38, "size_y": 13}, {"size_x": 10, "size_y": 3}, {"size_x": 2, "size_y": 7}]
    _check_all(unit, entry, variant, sizes)
    text = unit.emitted.emitted.text
    assert "_amem8_f2(" in text, "no access was written as aligned"
    assert re.search(r"_nassert\(\(\(uintptr_t\)\w+ & 7\) == 0\);", text)


@pytest.mark.parametrize(
    "file, passes, shows",
    [
        # <2 x i32>: a `long long` pair, DADD (`_dadd`), lanes by `_hill`/`_loll`
        ("legacy/box_blur_u8.c", "simd(2)", [r"long long", r"_dadd\(", r"_loll\("]),
        # <4 x i8>: one word (LDNW `_mem4`), bytes by `_extu`, packed by PACKL4
        ("legacy/box_blur_u8.c", "simd(4)", [r"_mem4\(&src", r"_extu\(", r"_packl4\("]),
        # <2 x i16>: one word of halfwords, packed by PACK2
        # ... whose products by 2 (sign-extended to int) are MPY2s
        (
            "legacy/sobel_s16.c",
            "simd(2)",
            [r"_mem4\(&", r"_extu\(\w+, 16, 16\)", r"_mpy2ll\(_pack2\(2, 2\), _mem4"],
        ),
    ],
)
def test_integer_lanes_use_the_packed_intrinsics(file, passes, shows):
    """Integer vectors the C66x holds in a register or a pair are kept there and operated
    on with its intrinsics (no struct of lanes, no memcpy)."""
    entry = next(e for e in KERNELS if e["file"] == file)
    variant = entry["variants"][0]
    path = os.path.join(CORPUS_DIR, entry["file"])
    unit = compiled(path, corpus_cflags(entry, variant), passes, target="c66x")
    _check_all(unit, entry, variant, entry["params"])
    text = unit.emitted.emitted.text
    for pattern in shows:
        assert re.search(pattern, text), f"{passes} on {file} does not show {pattern}"


_NARROW_SUMS = """
#include <stdint.h>
void add_u8(const uint8_t *a, const uint8_t *b, uint8_t *c, int n)
{
    for (int i = 0; i < n; i++)
        c[i] = a[i] + b[i];
}
void sub_s16(const int16_t *a, const int16_t *b, int16_t *c, int n)
{
    for (int i = 0; i < n; i++)
        c[i] = (int16_t)(a[i] - b[i] + 3);
}
"""


@pytest.mark.parametrize(
    "passes, shows", [("simd(2)", [r"_sub2\(", r"_add2\("]), ("simd(4)", [r"_add4\(", r"_dsub2\("])]
)
def test_narrow_sums_are_packed_adds(tmp_path, capsys, passes, shows):
    """C adds bytes and halfwords in `int` and truncates the result: the low bits of a sum are
    the sum of the low bits, so the C66x adds the packed lanes (ADD4, ADD2, DADD2...)."""
    source = tmp_path / "sums.c"
    source.write_text(_NARROW_SUMS)
    assert main(["emit", str(source), "--target", "c66x", "--passes", passes, "-o", "-"]) == 0
    text = capsys.readouterr().out
    for pattern in shows:
        assert re.search(pattern, text), f"{passes} does not show {pattern}"
    assert main(["check", str(source), "--target", "c66x", "--passes", passes]) == 0
    assert "2 OK, 0 MISMATCH" in capsys.readouterr().out


_HDIFF = """
#include <stdint.h>
void hdiff_s16(const int16_t *src, int16_t *dst, int width, int height)
{
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width - 2; x++)
            dst[y * width + x] = (int16_t)(src[y * width + x + 2] - src[y * width + x]);
}
"""


def test_a_broken_row_alignment_is_named_not_a_crash(tmp_path, capsys):
    """With `--row-align 8` and rows of 17 halfwords the declaration is false: check says so
    (as on the host) before the emitted C stops at the first `_amem4` it breaks."""
    source = tmp_path / "hdiff.c"
    source.write_text(_HDIFF)
    argv = ["check", str(source), "--target", "c66x", "--passes", "simd(2),align"]
    argv += ["--row-align", "8", "--remarks", "none", "--param", "height=3", "--param"]
    assert main([*argv, "width=17"]) != 0
    assert "declared row_align(8) does not hold" in capsys.readouterr().out
    assert main([*argv, "width=16"]) == 0
    assert "OK hdiff_s16: bit-exact" in capsys.readouterr().out


def test_constant_lanes_in_any_form_of_llvmlite():
    """A pass may build a vector constant from lane Constants, plain ints or one splat value:
    the packed patterns read all three (and give up on an undefined lane)."""
    i32 = ir.IntType(32)
    pair = ir.VectorType(i32, 2)
    assert _integer_lanes(ir.Constant(pair, [ir.Constant(i32, 2), ir.Constant(i32, -3)])) == [2, -3]
    assert _integer_lanes(ir.Constant(pair, [2, 3])) == [2, 3]
    assert _integer_lanes(ir.Constant(pair, 5)) == [5, 5]
    assert _integer_lanes(ir.Constant(pair, [ir.Constant(i32, ir.Undefined), 2])) is None


_CONSTANT_TRIPS = """
void taps(const float *in, const float *w, float *out, int n) {
  int i, k;
  for (i = 0; i < n; i++) {
    float s = 0.0f;
    for (k = 0; k < 3; k++) s += in[i + k] * w[k];
    out[i] = s;
  }
}
"""


def test_must_iterate_from_a_constant_trip_count(tmp_path, capsys):
    source = tmp_path / "taps.c"
    source.write_text(_CONSTANT_TRIPS)
    assert main(["emit", str(source), "--target", "c66x", "--passes", "", "-o", "-"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"#pragma MUST_ITERATE\(3, 3\)\n\s*for \([^;]*k = 0; k < 3;", text)
    assert main(["check", str(source), "--target", "c66x", "--passes", ""]) == 0


_MIXED_WIDTHS = """
#include <stdint.h>
void grad_u8_s16(const uint8_t *src, int16_t *dst, int n)
{
    for (int i = 1; i < n - 3; i++)
        dst[i] = (int16_t)(src[i + 1] - src[i - 1]);
}
"""


def test_no_iteration_bound_where_a_check_in_the_loop_can_fail(tmp_path, capsys):
    """Arrays of two element widths are checked for overlap in each vector iteration; a
    failed check leaves the remainder every iteration left, so it gets no MUST_ITERATE (a
    false one is a licence for cl6x to miscompile)."""
    source = tmp_path / "grad.c"
    source.write_text(_MIXED_WIDTHS)
    assert main(["emit", str(source), "--target", "c66x", "--passes", "simd(2)", "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert "with a run-time overlap check" in captured.err
    assert "MUST_ITERATE(0" not in captured.out


_TWO_REDUCTIONS = """
#include <stdint.h>
int sum_u8(const uint8_t *a, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += a[i];
    return s;
}
int16_t sum_s16_wrap(const int16_t *a, int n)
{
    int16_t s = 0;
    for (int i = 0; i < n; i++)
        s = (int16_t)(s + a[i]);
    return s;
}
"""


def test_the_default_pipeline_tunes_each_function_on_the_original_module(tmp_path, capsys):
    """`auto` tries strategies for the second function on the module as it was, not on one
    whose first function it already vectorized (which `simd` would bind again: it declines
    a vectorized loop instead)."""
    source = tmp_path / "sums.c"
    source.write_text(_TWO_REDUCTIONS)
    assert main(["check", str(source), "--target", "c66x"]) == 0
    assert "2 OK, 0 MISMATCH" in capsys.readouterr().out
    assert main(["check", str(source), "--target", "c66x", "--passes", "simd(4),simd(4)"]) == 0
    captured = capsys.readouterr()
    assert "loop not vectorized: it is already" in captured.err
    assert "2 OK, 0 MISMATCH" in captured.out


def test_emit_writes_a_directory_that_builds(tmp_path, capsys):
    """`emit --target c66x -o DIR`: the kernel C, the headers it includes, the EDMA runtime
    and a Makefile whose `host` target builds with cc and whose `c66x` target calls cl6x."""
    source = os.path.join(CORPUS_DIR, "c66x/jacobi.c")
    out = tmp_path / "jacobi_c66x"
    assert main(["emit", source, "--target", "c66x", "--remarks", "none", "-o", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["Makefile", "c6x_host.h", "jacobi.c", "pycc_c66x.h", "pycc_edma.c",
                     "pycc_edma.h", "pycc_tiles.c", "pycc_tiles.h"]  # fmt: skip
    makefile = (out / "Makefile").read_text()
    assert re.search(r"\$\(CL6X\) \$\(C66X_CFLAGS\)", makefile) and "-mv6600" in makefile
    assert "passes 'auto,align'" in (out / "jacobi.c").read_text()
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    built = subprocess.run(["make", "-C", str(out), "host"], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (out / "host" / "libjacobi.a").is_file()
    one_file = tmp_path / "one.c"
    assert main(["emit", source, "--target", "c66x", "--remarks", "none", "-o", str(one_file)]) == 0
    assert one_file.read_text() == (out / "jacobi.c").read_text()


def test_check_target_c66x_from_the_command_line(capsys):
    source = os.path.join(CORPUS_DIR, "c66x/matrix_add.c")
    argv = ["check", source, "--target", "c66x", "--remarks", "none"]
    assert main([*argv, "--param", "size_x=17", "--param", "size_y=5"]) == 0
    assert "OK MatrixAdd: bit-exact" in capsys.readouterr().out


def test_l2_budget_is_a_target_option(tmp_path, capsys):
    """`--target c66x:l2=16K`: smaller tiles, and the runtime's arena built for that size."""
    source = os.path.join(CORPUS_DIR, "c66x/sobel.c")
    sizes = {}
    for spec in ("c66x", "c66x:l2=16K"):
        out = tmp_path / spec.replace(":", "_")
        assert main(["emit", source, "--target", spec, "--remarks", "none", "-o", str(out)]) == 0
        found = re.search(r"over tiles of (\d+) x (\d+) points", (out / "sobel.c").read_text())
        rows, cols = found.groups()
        sizes[spec] = int(rows) * int(cols)
    assert sizes["c66x:l2=16K"] * 16 < sizes["c66x"]
    assert "RUNTIME_DEFINES = -DPYCC_SPM_BYTES=16384" in (out / "Makefile").read_text()
    for bad in ("c66x:l2=1G", "c66x:speed=3", "c66x:l2"):
        assert main(["emit", source, "--target", bad, "-o", str(tmp_path / "x")]) == 1
        assert "error:" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_output_directory_keeps_user_files_and_odd_names(tmp_path, capsys):
    """A Makefile of the user's in the directory stops the command (nothing written); a
    source named like a runtime file, or with a space, still gives a directory that builds."""
    source = tmp_path / "my kernel.c"
    source.write_text(open(os.path.join(CORPUS_DIR, "c66x/jacobi.c")).read())
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "Makefile").write_text("all:\n\techo mine\n")
    argv = ["emit", str(source), "--target", "c66x", "--passes", "", "--remarks", "none"]
    assert main([*argv, "-o", str(mine)]) == 1
    assert "was not written by pycc-stencil" in capsys.readouterr().err
    assert sorted(p.name for p in mine.iterdir()) == ["Makefile"]
    out = tmp_path / "out"
    assert main([*argv, "-o", str(out)]) == 0
    assert (out / "my_kernel.c").is_file()
    assert main([*argv, "-o", str(out)]) == 0  # its own files are replaced
    clash = tmp_path / "pycc_tiles.c"
    clash.write_text(source.read_text())
    argv[1] = str(clash)
    assert main([*argv, "-o", str(tmp_path / "clash")]) == 0
    assert (tmp_path / "clash" / "kernel_pycc_tiles.c").is_file()
    if shutil.which("make"):
        for directory in (out, tmp_path / "clash"):
            built = subprocess.run(["make", "-C", str(directory), "host"], capture_output=True)
            assert built.returncode == 0, built.stderr
