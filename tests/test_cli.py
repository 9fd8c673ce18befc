"""The command line: output lines, exit codes, diagnostics instead of tracebacks."""

from __future__ import annotations

import os
import stat

import pytest
from pycc_stencil import __version__
from pycc_stencil.cli import main, split_cc_flags
from pycc_stencil.ir_passes import pipeline

KERNELS = """
#include <math.h>
#ifndef SCALE
#error SCALE must be defined
#endif
void scale(const float *in, float *out, int n) {
    for (int i = 0; i < n; i++) out[i] = SCALE * sqrtf(in[i]);
}
void weird(float *a) { goto x; x: a[0] = 1; }
"""


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_check_prints_one_line_per_function_and_a_summary(capsys, c_file):
    path = c_file(KERNELS)
    status, out, err = run(capsys, "check", str(path), "-DSCALE=2.0f", "--param", "n=5")
    assert out.splitlines() == [
        "OK scale: bit-exact, 2 buffers, 10 elements",
        f"SKIPPED weird: {path}:9:24: goto is not supported",
        "1 OK, 0 MISMATCH, 1 SKIPPED, 0 ERROR",
    ]
    assert status == 0 and err == ""


def test_cc_flags_attached_or_separate():
    assert split_cc_flags(
        ["check", "-I", "inc", "-Iother", "-D", "N=4", "-UX", "-std=c99", "-include", "h.h", "f.c"]
    ) == (
        ["-I", "inc", "-Iother", "-D", "N=4", "-UX", "-std=c99", "-include", "h.h"],
        ["check", "f.c"],
    )


def test_requested_skipped_function_fails(capsys, c_file):
    path = c_file(KERNELS)
    status, out, _ = run(capsys, "check", str(path), "-DSCALE=2", "--function", "weird")
    assert status == 1 and out.startswith("SKIPPED weird:")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check", "missing.c"], "pycc-stencil: error: no such file or directory: 'missing.c'"),
        (["check", "{path}", "-DSCALE=2", "--function", "nope"], "no function named 'nope'"),
        (
            ["check", "{path}", "-DSCALE=2", "--passes", "vectorize(8)"],
            "unknown pass 'vectorize' (valid passes: align, auto, ",
        ),
        (["check", "{path}", "--param", "n"], "expected NAME=VALUE"),
        (["check", "{path}", "--seed", "-3"], "argument --seed: expected an integer >= 0"),
        (["check", "{path}", "--timeout", "-1"], "argument --timeout: expected a number of"),
        (["check", "{path}", "--timeout", "0"], "argument --timeout: expected a number of"),
        (["check", "{path}", "--timeout", "nan"], "argument --timeout: expected a number of"),
        (["check", "{path}", "-O7"], "argument -O: invalid choice: 7"),
        (["check", "{path}"], "error: SCALE must be defined"),
        (
            ["emit", "{path}", "-DSCALE=2", "--emit", "llvm", "-o", "/nonexistent/dir/x.ll"],
            "cannot write '/nonexistent/dir/x.ll'",
        ),
    ],
)
def test_bad_input_is_a_diagnostic_with_status_1(capsys, c_file, argv, message):
    path = c_file(KERNELS)
    status, _, err = run(capsys, *(a.format(path=path) for a in argv))
    assert status == 1
    assert message in err
    assert "Traceback" not in err


def test_emit_writes_verified_ir_only_on_success(capsys, c_file, tmp_path):
    path = c_file(KERNELS)
    output = tmp_path / "out.ll"
    assert run(capsys, "emit", str(path), "-DSCALE=2", "--emit", "llvm", "-o", str(output))[0] == 0
    assert 'define void @"scale"' in output.read_text()
    failed = tmp_path / "failed.ll"
    assert run(capsys, "emit", str(path), "--emit", "llvm", "-o", str(failed))[0] == 1
    assert not failed.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kernels.c", "out.ll"]


def test_emit_to_stdout(capsys, c_file):
    status, out, _ = run(capsys, "emit", str(c_file(KERNELS)), "-DSCALE=2", "--emit", "llvm")
    assert status == 0 and "llvm.sqrt.f32" in out


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"pycc-stencil {__version__}"
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "check" in capsys.readouterr().out


def multiply_becomes_add(module):
    """A deliberately wrong "pass"."""
    for function in module.functions:
        for block in function.blocks:
            for instr in block.instructions:
                if instr.opname == "fmul":
                    instr.opname = "fadd"
                    instr._clear_string_cache()
    return module


def test_mismatch_exits_1(capsys, c_file, monkeypatch):
    monkeypatch.setitem(pipeline.REGISTRY, "wrong", pipeline.PassSpec(multiply_becomes_add))
    path = c_file(KERNELS)
    status, out, _ = run(capsys, "check", str(path), "-DSCALE=2.0f", "--passes", "wrong")
    assert status == 1
    assert out.splitlines()[0].startswith("MISMATCH scale: out[0] = ")
    assert out.splitlines()[-1] == "0 OK, 1 MISMATCH, 1 SKIPPED, 0 ERROR"


def test_mismatch_names_the_multidimensional_index(capsys, c_file, monkeypatch):
    monkeypatch.setitem(pipeline.REGISTRY, "wrong", pipeline.PassSpec(multiply_becomes_add))
    source = """
    void j2(int n, const float A[n][n], float B[n][n]) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++) B[i][j] = A[i][j - 1] * A[i][j + 1];
    }
    """
    status, out, _ = run(
        capsys, "check", str(c_file(source)), "--passes", "wrong", "--param", "n=5"
    )
    assert status == 1
    assert out.splitlines()[0].startswith("MISMATCH j2: B[1,1] = ")
    assert out.splitlines()[0].endswith(", 9 of 50 elements differ")


def test_a_misspelt_parameter_is_an_error(capsys, c_file):
    path = c_file("void scale(float *a, int n) { for (int i = 0; i < n; i++) a[i] *= 2; }")
    status, out, err = run(capsys, "check", str(path), "--param", "m=3")
    assert status == 1 and out == ""
    assert err == (
        "pycc-stencil: error: --param m: no checked function has a scalar parameter named 'm'\n"
    )


def test_a_parameter_of_an_unchecked_function_is_a_warning(capsys, c_file):
    source = """
    void pitched(const void *src, float *dst, int w, int h, int pitch) {
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                dst[y * w + x] = ((const float *)((const char *)src + y * pitch))[x];
    }
    void scale(float *a, int w, int h) {
        for (int i = 0; i < w * h; i++) a[i] *= 0.5f;
    }
    """
    status, out, err = run(capsys, "check", str(c_file(source)), "--param", "pitch=160")
    assert status == 0
    assert out.splitlines()[-1] == "1 OK, 0 MISMATCH, 1 SKIPPED, 0 ERROR"
    assert err == (
        "pycc-stencil: warning: --param pitch is ignored: only pitched, which is not checked, "
        "has a scalar parameter named 'pitch'\n"
    )


def test_output_to_a_special_file_writes_it_in_place(tmp_path):
    """`-o /dev/null` (here a FIFO) must be written, never replaced by a regular file."""
    import threading

    from pycc_stencil.emit.output_files import write_atomically

    fifo = tmp_path / "sink"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_atomically(str(fifo), b"IR")
    reader.join(timeout=10)
    assert received == [b"IR"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
