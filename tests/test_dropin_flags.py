"""Compiler mode's flags, files and links exactly as cc (issue 13 §2).

Each behaviour is checked against the system `cc` on the same input: exit status, the files
made and their modes, the built program's output, and (from the `PYCC_REPORT` lines) which
functions pycc-stencil compiled itself, so that a silent fallback to cc does not pass.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import llvmlite.binding as llvm
import pytest
from pycc_stencil.emit.cc_options import (
    CODEGEN_OPTIONS,
    ISA_EXTENSIONS,
    codegen_option,
    codegen_option_table,
    refusal_of_flags,
)
from pycc_stencil.emit.cc_target import UnsupportedTarget, target_from_flags
from pycc_stencil.emit.host_jit import initialize, optimize
from pycc_stencil.emit.vector_width import with_preferred_width
from test_compiler_mode import CC, PYCC, clean_env, functions_of, read_report, run, units_for

README = Path(__file__).parents[1] / "README.md"

pytestmark = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")

#: a kernel pycc-stencil takes over at every -O level, and a main that prints its result
STENCIL = """\
void blur(int n, const float *restrict in, float *restrict out)
{
    for (int i = 1; i < n - 1; i++)
        out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}
"""
MAIN = """\
#include <stdio.h>
void blur(int n, const float *restrict in, float *restrict out);
int main(void)
{
    float in[100], out[100] = {0};
    for (int i = 0; i < 100; i++)
        in[i] = (float)(i * i % 17);
    blur(100, in, out);
    for (int i = 0; i < 100; i += 7)
        printf("%a\\n", out[i]);
    return 0;
}
"""


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    return clean_env(tmp_path / "cache")


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))
    return folder


def both(tmp_path: Path, files: dict[str, str], args: list[str], env, check: bool = True):
    """`cc args` in tmp_path/cc and `pycc-stencil args` in tmp_path/pycc, each on a fresh copy
    of `files`; returns (cc's result, pycc-stencil's, pycc-stencil's report)."""
    report = tmp_path / "report.jsonl"
    ref = run([CC, *args], write(tmp_path / "cc", files), env, check)
    got = run([PYCC, *args], write(tmp_path / "pycc", files), dict(env, PYCC_REPORT=str(report)),
              check)  # fmt: skip
    return ref, got, read_report(report)


def compiled_by(report: list[dict], source: str) -> dict[str, str]:
    (unit,) = units_for(report, source)
    return {name: f["compiled_by"] for name, f in functions_of(unit).items()}


def programs_like_cc(tmp_path: Path, env, files: dict[str, str], flags: list[str]):
    """`k.c` of `files` compiled with `flags -c` by cc and by pycc-stencil, each linked by cc
    with main.c and run: (the two programs' outputs, pycc-stencil's report)."""
    _, _, report = both(tmp_path, files, [*flags, "-c", "k.c"], env)
    outputs = []
    for side in ("cc", "pycc"):
        run([CC, *flags, "main.c", "k.o", "-o", "app"], tmp_path / side, env)
        outputs.append(run(["./app"], tmp_path / side, env).stdout)
    return outputs, report


# ---------------------------------------------------------------- the table of options
def test_readme_table_is_the_code():
    """README's table of code-generation options is `CODEGEN_OPTIONS`, so neither drifts."""
    text = README.read_text()
    block = re.search(
        r"<!-- codegen options: [^\n]*-->\n(.*?)\n<!-- end of codegen options -->", text, re.S
    )
    assert block is not None, "README lost its table of code-generation options"
    assert block.group(1) == codegen_option_table(), (
        "README's table differs from emit/cc_options.py; paste codegen_option_table():\n"
        + codegen_option_table()
    )


#: the options issue 13 names, and gcc's other code-generation conventions: each decided
AUDITED = {
    "honoured": [
        "-fwrapv", "-fno-strict-aliasing", "-ffast-math", "-fno-math-errno",
        "-fexcess-precision=standard", "-ffp-contract=off", "-fcommon", "-fno-common",
        "-fPIC", "-fpic", "-fPIE", "-fshort-enums", "-fshort-wchar", "-fsigned-char",
        "-funsigned-char", "-fstack-clash-protection", "-ftrivial-auto-var-init=uninitialized",
        "-mcmodel=small", "-fno-omit-frame-pointer", "-fstack-protector-strong",
        "-fno-asynchronous-unwind-tables", "-funsafe-math-optimizations", "-ffinite-math-only",
    ],
    "left to cc": [
        "-ftrivial-auto-var-init=pattern", "-ftrivial-auto-var-init=zero", "-ftrapv",
        "-frounding-math", "-fsignaling-nans", "-fno-builtin", "-fno-builtin-memset",
        "-ffreestanding", "-fno-plt", "-mcmodel=large", "-fsanitize=address",
        "-fsanitize=undefined", "-fprofile-generate", "-fprofile-arcs", "--coverage", "-pg",
        "-finstrument-functions", "-fpatchable-function-entry=16", "-mfentry",
        "-fzero-call-used-regs=all", "-fharden-compares", "-mgeneral-regs-only", "-fpack-struct",
        "-fpack-struct=2", "-mabi=ms", "-m32", "-mx32", "-fvisibility=protected",
        "-fno-strict-overflow", "-fstack-check", "-fsplit-stack", "-fcf-protection=check",
        "-flto", "-save-temps", "-mno-red-zone", "-fno-delete-null-pointer-checks", "-ftrampolines",
    ],
}  # fmt: skip


@pytest.mark.parametrize("flag", AUDITED["left to cc"])
def test_options_only_cc_implements_leave_the_kernels_to_cc(flag):
    assert refusal_of_flags(["-O2", flag]) == f"'{flag}' is implemented by cc only"
    with pytest.raises(UnsupportedTarget, match="cc only"):
        target_from_flags("cc", ["-O2", flag])


@pytest.mark.parametrize("flag", AUDITED["honoured"])
def test_honoured_options_give_a_target(flag):
    assert codegen_option(flag).honoured
    target_from_flags("cc", ["-O2", flag])  # does not raise


def test_every_row_of_the_table_decides_its_own_spellings():
    """No spelling is shadowed by an earlier row of the other kind (first match wins)."""
    for option in CODEGEN_OPTIONS:
        for spelling in option.spellings:
            flag = spelling.rstrip("*").replace("<ISA>", "avx2")
            if flag.endswith("="):
                flag += "x"
            assert codegen_option(flag).honoured == option.honoured, (flag, option)


# ---------------------------------------------------------------- ISA flags
@pytest.mark.parametrize("name", sorted(ISA_EXTENSIONS))
def test_every_isa_flag_is_accepted(name):
    assert refusal_of_flags([f"-m{name}", f"-mno-{name}"]) is None


@pytest.mark.parametrize(
    "flags, on, off",
    [
        (["-msse4.1"], ["+sse4.1"], ["-sse4.2"]),
        (["-msse4.2"], ["+sse4.1", "+sse4.2"], ["-avx"]),
        (["-mavx2", "-mno-sse4.1"], [], ["-sse4.1", "-avx", "-avx2"]),
        # -march=native: the host's features less those the flags turn off, on any CPU
        (["-march=native", "-mno-avx2"], [], ["-avx2", "-avx512f"]),
        (["-march=native", "-mno-sse4.1"], [], ["-sse4.1", "-avx"]),
    ],
)
def test_isa_flags_reach_llvm(flags, on, off):
    features = target_from_flags("cc", ["-O2", *flags]).features.split(",")
    assert set(on) | set(off) <= set(features), features


WIDE, NARROW = "-prefer-128-bit,-prefer-256-bit", "+prefer-128-bit,+prefer-256-bit"


@pytest.mark.parametrize(
    "flags, expected",
    [
        (["-march=icelake-server"], WIDE),  # AVX-512: its width
        (["-march=icelake-server", "-mprefer-vector-width=256"], "-prefer-128-bit,+prefer-256-bit"),
        (["-march=icelake-server", "-mprefer-avx128"], NARROW),
        (["-mavx512f", "-mprefer-avx128", "-mprefer-vector-width=512"], WIDE),
        (["-mavx2", "-mprefer-vector-width=none"], WIDE),
        (["-march=icelake-server", "-mno-avx512f"], None),  # the CPU's own tuning
        (["-mavx2"], None),
    ],
)
def test_the_vector_width_reaches_llvm(flags, expected):
    features = target_from_flags("cc", ["-O2", *flags]).features.split(",")
    if expected is None:
        assert not any("prefer-" in f for f in features), features
    else:
        assert features[-2:] == expected.split(","), features


@pytest.mark.parametrize("cpu", ["sapphirerapids", "icelake-server"])
def test_512_bit_vectors_where_the_cpus_tuning_prefers_256(cpu):
    """LLVM tunes these CPUs (what `-march=native` names on such a host) for 256-bit vectors;
    the width features put 512 back (any host: the code is only assembled)."""
    initialize()
    loop = """
    define void @scale(ptr noalias %a, ptr noalias %b) {
    entry:
      br label %loop
    loop:
      %i = phi i64 [ 0, %entry ], [ %next, %loop ]
      %pa = getelementptr double, ptr %a, i64 %i
      %pb = getelementptr double, ptr %b, i64 %i
      %x = load double, ptr %pb
      %y = fmul double %x, 3.0
      store double %y, ptr %pa
      %next = add i64 %i, 1
      %done = icmp eq i64 %next, 4096
      br i1 %done, label %exit, label %loop
    exit:
      ret void
    }
    """
    features = "+avx512f,+avx512vl,+avx512bw,+avx512dq,+avx2,+avx,+fma"
    found = {}
    for name, chosen in {"tuned": features, "ours": with_preferred_width((), features)}.items():
        machine = llvm.Target.from_triple("x86_64-unknown-linux-gnu").create_target_machine(
            cpu=cpu, features=chosen, opt=3
        )
        module = llvm.parse_assembly(loop)
        optimize(module, 3, machine)
        found[name] = "zmm" in machine.emit_assembly(module)
    assert found == {"tuned": False, "ours": True}, found


@pytest.mark.skipif(shutil.which("objdump") is None, reason="binutils not installed")
def test_an_avx512_target_gets_512_bit_vectors_unless_the_flags_say_otherwise(tmp_path, env):
    """Any host: the objects are only disassembled. (gcc's `-mprefer-vector-width=` was
    accepted and ignored before.)"""
    found = {}
    for case, extra in {"default": [], "256": ["-mprefer-vector-width=256"]}.items():
        d = write(tmp_path / case, {"k.c": STENCIL})
        run([PYCC, "-O3", "-march=icelake-server", *extra, "-c", "k.c"], d,
            dict(env, PYCC_REPORT=str(d / "r.jsonl")))  # fmt: skip
        assert compiled_by(read_report(d / "r.jsonl"), "k.c") == {"blur": "pycc-stencil"}
        code = run(["objdump", "-d", "k.o"], d, env).stdout
        found[case] = ("%zmm" in code, "%ymm" in code)
    assert found == {"default": (True, True), "256": (False, True)}, found


def test_sse41_kernel_compiled_by_pycc_like_cc(tmp_path, env):
    """-msse4.1 (refused before: a typo in the pattern) takes the kernel over; same output."""
    files = {"k.c": STENCIL, "main.c": MAIN}
    outputs, report = programs_like_cc(tmp_path, env, files, ["-O2", "-msse4.1", "-mno-avx"])
    assert outputs[1] == outputs[0]
    assert compiled_by(report, "k.c") == {"blur": "pycc-stencil"}


@pytest.mark.skipif(shutil.which("objdump") is None, reason="binutils not installed")
@pytest.mark.parametrize("march", ["-march=native", "-march=icelake-server"])
def test_march_less_avx_has_no_avx_code(tmp_path, env, march):
    """-mno-avx: neither object uses a VEX-encoded instruction, on any host (pycc-stencil used
    to take the host's features whatever the -mno- flags said, and gcc keeps `__VAES__`,
    whose LLVM feature implies AVX2)."""
    flags = ["-O3", march, "-mno-avx"]
    _, _, report = both(tmp_path, {"k.c": STENCIL}, [*flags, "-c", "k.c"], env)
    assert compiled_by(report, "k.c") == {"blur": "pycc-stencil"}
    for side in ("cc", "pycc"):
        code = run(["objdump", "-d", "k.o"], tmp_path / side, env).stdout
        assert not re.search(r"%[yz]mm|\tv[a-z]+ ", code), (side, code)


# ---------------------------------------------------------------- options honoured end to end
#: a kernel whose frame is larger than a page
WINDOW = """\
float window(int n, const float *in)
{
    float tmp[8192];
    for (int i = 0; i < 8192; i++)
        tmp[i] = in[i % n] * 2.0f;
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += tmp[(i * 37) % 8192];
    return s;
}
"""
#: Ubuntu's gcc defaults, as a spec file gives them (no flag on the command line says them)
HARDENING_SPECS = "*cc1:\n+ -fstack-protector-strong -fcf-protection -fstack-clash-protection\n"


@pytest.mark.skipif(shutil.which("objdump") is None, reason="binutils not installed")
def test_stack_clash_protection_probes_kernel_frames(tmp_path, env):
    """-fstack-clash-protection, given or a distribution's default: the kernel touches each
    page of its frame (a probe store to (%rsp)) as cc's code does, and with that default's
    canary and CET note; without the option it does not probe."""
    cases = {"off": [], "flag": ["-fstack-clash-protection"], "specs": ["-specs=h.specs"]}
    found = {}
    for case, flags in cases.items():
        d = write(tmp_path / case, {"w.c": WINDOW, "h.specs": HARDENING_SPECS})
        args = ["-O2", *flags, "-c", "w.c"]
        run([PYCC, *args], d, dict(env, PYCC_REPORT=str(d / "r.jsonl")))
        assert compiled_by(read_report(d / "r.jsonl"), "w.c") == {"window": "pycc-stencil"}
        code = run(["objdump", "-dr", "--no-show-raw-insn", "w.o"], d, env).stdout
        notes = run(["readelf", "-n", "w.o"], d, env).stdout
        found[case] = (
            re.search(r"(mov|or)q\s+\$0x0,\(%rsp\)", code) is not None,
            "__stack_chk_fail" in code,
            "IBT, SHSTK" in notes,
        )
    assert found == {
        "off": (False, False, False),
        "flag": (True, False, False),
        "specs": (True, True, True),
    }


@pytest.mark.skipif(shutil.which("objdump") is None, reason="binutils not installed")
@pytest.mark.parametrize("flags", [["-fno-omit-frame-pointer"], ["-specs=h.specs"], []])
def test_frame_pointer_with_the_flag_or_a_spec_default(tmp_path, env, flags):
    """The kernel sets up %rbp as a frame pointer with -fno-omit-frame-pointer, given or a
    spec file's default (Fedora's and Ubuntu's gcc, for profilers), and not without."""
    files = {"k.c": STENCIL, "h.specs": "*cc1:\n+ -fno-omit-frame-pointer\n"}
    d = write(tmp_path, files)
    run([PYCC, "-O2", *flags, "-c", "k.c"], d, dict(env, PYCC_REPORT=str(d / "r.jsonl")))
    assert compiled_by(read_report(d / "r.jsonl"), "k.c") == {"blur": "pycc-stencil"}
    code = run(["objdump", "-d", "--no-show-raw-insn", "k.o"], d, env).stdout
    assert (re.search(r"mov\s+%rsp,%rbp", code) is not None) == bool(flags), code


def test_distribution_default_pattern_init_leaves_kernels_to_cc(tmp_path, env):
    """A spec file making -ftrivial-auto-var-init=pattern the default: no flag says it, cc's
    -Q --help=common does; the kernel goes to cc with that reason."""
    specs = "*cc1:\n+ -ftrivial-auto-var-init=pattern\n"
    files = {"k.c": STENCIL, "main.c": MAIN, "h.specs": specs}
    outputs, report = programs_like_cc(tmp_path, env, files, ["-O2", "-specs=h.specs"])
    (blur,) = functions_of(units_for(report, "k.c")[0]).values()
    assert blur["compiled_by"] == "cc"
    assert "default -ftrivial-auto-var-init=pattern" in blur["reason"], blur
    assert outputs[1] == outputs[0]


def test_no_strict_aliasing_type_punning_kernel(tmp_path, env):
    """-fno-strict-aliasing makes a kernel writing through `int *` and reading the same bytes
    through `float *` defined; pycc-stencil compiles it and the program prints cc's output."""
    kernel = """\
    void pun(int n, int *bits, float *values, float *out)
    {
        for (int i = 0; i < n; i++) {
            bits[i] ^= (int)0x80000000u;
            out[i] = values[i] * 2.0f;
        }
    }
    """
    main = """\
    #include <stdio.h>
    void pun(int n, int *bits, float *values, float *out);
    int main(void)
    {
        union { float f[8]; int i[8]; } u;
        float out[8];
        for (int i = 0; i < 8; i++) u.f[i] = 1.5f * i;
        pun(8, u.i, u.f, out);
        for (int i = 0; i < 8; i++) printf("%a\\n", out[i]);
        return 0;
    }
    """
    files = {"k.c": kernel, "main.c": main}
    outputs, report = programs_like_cc(tmp_path, env, files, ["-O2", "-fno-strict-aliasing"])
    assert compiled_by(report, "k.c") == {"pun": "pycc-stencil"}
    assert outputs[1] == outputs[0]
    assert "-0x1.8p+1" in outputs[0]  # the sign flip is seen through the float pointer


def test_short_wchar_kernel_like_cc(tmp_path, env):
    """-fshort-wchar: the front end reads `wchar_t` as cc does (2 bytes, unsigned), so the
    kernel writes exactly the elements cc's does."""
    kernel = """\
    #include <stddef.h>
    void widen(int n, const unsigned char *in, wchar_t *out)
    {
        for (int i = 0; i < n; i++)
            out[i] = (wchar_t)in[i] * 3 - 1;
    }
    """
    main = """\
    #include <stdio.h>
    #include <stddef.h>
    void widen(int n, const unsigned char *in, wchar_t *out);
    int main(void)
    {
        unsigned char in[8] = {0, 1, 2, 3, 200, 255, 7, 9};
        wchar_t out[9] = {0};
        widen(8, in, out);
        for (int i = 0; i < 9; i++)
            printf("%d ", (int)out[i]);
        return 0;
    }
    """
    files = {"k.c": kernel, "main.c": main}
    outputs, report = programs_like_cc(tmp_path, env, files, ["-O2", "-fshort-wchar"])
    assert compiled_by(report, "k.c") == {"widen": "pycc-stencil"}
    assert outputs[1] == outputs[0] == "65535 2 5 8 599 764 20 26 0 "


@pytest.mark.skipif(shutil.which("readelf") is None, reason="binutils not installed")
@pytest.mark.parametrize(
    "flags",
    [
        ["-fno-asynchronous-unwind-tables"],
        ["-fno-asynchronous-unwind-tables", "-funwind-tables"],
        ["-fno-asynchronous-unwind-tables", "-fexceptions"],
        ["-fno-unwind-tables"],
    ],
)
def test_unwind_tables_like_cc(tmp_path, env, flags):
    """The object has an .eh_frame exactly when cc's has one."""
    _, _, report = both(tmp_path, {"k.c": STENCIL}, ["-O2", *flags, "-c", "k.c"], env)
    assert compiled_by(report, "k.c") == {"blur": "pycc-stencil"}
    tables = []
    for side in ("cc", "pycc"):
        sections = run(["readelf", "-S", "-W", "k.o"], tmp_path / side, env).stdout
        tables.append(".eh_frame" in sections)
    assert tables[1] == tables[0]
    assert tables[0] == (flags != ["-fno-asynchronous-unwind-tables"])


@pytest.mark.skipif(shutil.which("readelf") is None, reason="binutils not installed")
@pytest.mark.parametrize("flag", ["-fcf-protection", "-fcf-protection=branch"])
def test_cf_protection_like_cc(tmp_path, env, flag):
    """-fcf-protection (Ubuntu's gcc default): the kernel starts with `endbr64` and the object
    keeps cc's x86 feature note (IBT, SHSTK), so the linked program stays CET-enabled."""
    _, _, report = both(tmp_path, {"k.c": STENCIL}, ["-O2", flag, "-c", "k.c"], env)
    assert compiled_by(report, "k.c") == {"blur": "pycc-stencil"}
    notes = []
    for side in ("cc", "pycc"):
        text = run(["readelf", "-n", "k.o"], tmp_path / side, env).stdout
        notes.append(re.findall(r"x86 feature: .*", text))
    assert notes[1] == notes[0] and "IBT" in notes[0][0], notes
    code = run(["objdump", "-d", "--disassemble=blur", "k.o"], tmp_path / "pycc", env).stdout
    assert re.search(r"<blur>:\n.*endbr64", code), code


# ---------------------------------------------------------------- refused before parsing
@pytest.mark.parametrize("flag", ["-ftrivial-auto-var-init=pattern", "-fsanitize=undefined"])
def test_flags_only_cc_implements_leave_the_file_unparsed(tmp_path, env, flag):
    """One warning for the file, the reason in the report, no front end run (no `frontend`
    time, no function records), and the program is cc's."""
    files = {"k.c": STENCIL, "main.c": MAIN}
    ref, got, report = both(tmp_path, files, ["-O2", flag, "-c", "k.c"], env)
    (unit,) = units_for(report, "k.c")
    assert unit["status"] == "cc" and unit["functions"] == [], unit
    assert unit["reason"] == f"'{flag}' is implemented by cc only"
    assert "frontend" not in unit["time_ms"] and unit["cache"] is None, unit
    warning = f"k.c: warning: '{flag}' is implemented by cc only; the file is compiled by cc"
    assert [line for line in got.stderr.splitlines() if "warning" in line] == [
        f"{warning} [-Wpycc-fallback]"
    ]
    assert (tmp_path / "pycc" / "k.o").read_bytes() == (tmp_path / "cc" / "k.o").read_bytes()


# ---------------------------------------------------------------- output files
@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_output_modes_follow_the_umask_like_cc(tmp_path, env, umask):
    """Objects, -S output and linked programs get cc's modes (0666/0777 less the umask)."""
    files = {"k.c": STENCIL, "main.c": MAIN}
    commands = [
        ["-O2", "-c", "k.c"],
        ["-O2", "-S", "k.c", "-o", "k.s"],
        ["-O2", "k.c", "main.c", "-o", "app"],
    ]
    report = tmp_path / "report.jsonl"
    modes = {}
    for side, compiler in (("cc", CC), ("pycc", PYCC)):
        d = write(tmp_path / side, files)
        for args in commands:
            subprocess.run(
                [compiler, *args], cwd=d, env=dict(env, PYCC_REPORT=str(report)), check=True,
                preexec_fn=lambda: os.umask(umask),
            )  # fmt: skip
        modes[side] = {n: oct((d / n).stat().st_mode & 0o777) for n in ("k.o", "k.s", "app")}
    assert modes["pycc"] == modes["cc"]
    assert modes["cc"]["k.o"] == oct(0o666 & ~umask)
    units = units_for(read_report(report), "k.c")
    assert [u["status"] for u in units] == ["pycc"] * 3  # pycc-stencil wrote them


@pytest.mark.parametrize("stage, output", [("-c", "k.o"), ("-S", "k.s")])
@pytest.mark.parametrize("before", ["empty", "full", "dangling link"])
def test_an_existing_output_gets_what_cc_makes_of_it(tmp_path, env, stage, output, before):
    """cc writes through a symbolic link (a dangling one makes its target), into an
    existing `-S` output and into an empty object (the same file: its mode stays, a hard
    link to it sees the new bytes; as replaces a full object): pycc-stencil used to replace
    the link and give every output the umask's mode, and a hard link kept the old bytes."""
    seen = {}
    for side, compiler in (("cc", CC), ("pycc", PYCC)):
        d = write(tmp_path / side, {"k.c": STENCIL})
        if before == "dangling link":
            (d / output).symlink_to("target")
        else:
            (d / output).write_text("" if before == "empty" else "old\n")
            (d / output).chmod(0o600)
            os.link(d / output, d / "hard")
        report = dict(env, PYCC_REPORT=str(tmp_path / "report.jsonl"))
        run([compiler, "-O2", stage, "k.c", "-o", output], d, report)
        written = d / ("target" if before == "dangling link" else output)
        linked = (d / "hard").exists() and (d / "hard").read_bytes() == written.read_bytes()
        seen[side] = ((d / output).is_symlink(), oct(written.stat().st_mode & 0o777), linked)
    assert seen["pycc"] == seen["cc"]
    units = units_for(read_report(tmp_path / "report.jsonl"), "k.c")
    assert [u["status"] for u in units] == ["pycc"]  # pycc-stencil wrote it


def test_a_command_whose_flags_are_cc_s_is_cc_s_whole(tmp_path, env):
    """`-save-temps` compiling and linking in one command: cc's temporaries, named after the
    program (`prog-k.o` too), not those of pycc-stencil's steps; a dependency file the
    environment asks for (`DEPENDENCIES_OUTPUT`) as cc writes it."""
    files = {"k.c": STENCIL, "main.c": MAIN}
    both(tmp_path / "temps", files, ["-O3", "-save-temps", "k.c", "main.c", "-o", "prog"], env)
    names = [sorted(p.name for p in (tmp_path / "temps" / s).iterdir()) for s in ("cc", "pycc")]
    assert names[0] == names[1] and "prog-k.o" in names[0]
    deps = dict(env, DEPENDENCIES_OUTPUT="deps.txt")
    both(tmp_path / "deps", files, ["-O3", "-c", "k.c"], deps)
    texts = [(tmp_path / "deps" / s / "deps.txt").read_text() for s in ("cc", "pycc")]
    assert texts[0] == texts[1] and texts[0].startswith("k.o: k.c")


def test_an_object_names_its_source_as_cc_s_does(tmp_path, env):
    """Its `FILE` symbol is the C file's name (linkers quote it), not LLVM's `<string>`."""
    _, _, report = both(tmp_path, {"k.c": STENCIL}, ["-O2", "-c", "k.c"], env)
    assert set(compiled_by(report, "k.c").values()) == {"pycc-stencil"}
    symbols = run(["readelf", "-s", "k.o"], tmp_path / "pycc", env).stdout
    files = {line.split()[-1] for line in symbols.splitlines() if " FILE " in line}
    assert files == {"k.c"}


def test_a_link_error_of_assembled_s_output_names_the_source_as_cc_s_does(tmp_path, env):
    """`-S` output assembled and linked: the linker's message names `k.c` before the offset
    (pycc-stencil's part used to add a second `.file`, and a second FILE symbol hid it)."""
    files = {"k.c": STENCIL + "void missing(void);\nint main(void) { missing(); return 0; }\n"}
    _, _, report = both(tmp_path, files, ["-O2", "-S", "k.c"], env)
    assert compiled_by(report, "k.c")["blur"] == "pycc-stencil"
    messages = []
    for side in ("cc", "pycc"):
        done = run([CC, "k.s", "-o", "app"], tmp_path / side, env, check=False)
        assert done.returncode == 1
        messages.append(re.sub(r"/tmp/\w+\.o", "TEMP.o", done.stderr))
    assert messages[0] == messages[1] and "k.c:(.text" in messages[0], messages


SOURCE_TEXT = STENCIL


@pytest.mark.parametrize(
    "args",
    [["-c", "k.c", "-o", "k.c"], ["-c", "k.c", "-o", "./k.c"], ["-S", "k.c", "-o", "k.c"],
     ["k.c", "main.c", "-o", "k.c"], ["-c", "k.c", "-o", "link.c"]],
    ids=["object", "dot-slash", "assembly", "link", "symlink"],
)  # fmt: skip
def test_output_naming_an_input_is_refused_like_gcc(tmp_path, env, args):
    """gcc refuses `-o` naming an input (symbolic links resolved): exit status 1, the source
    untouched; pycc-stencil used to overwrite it with the object."""
    results = []
    for side, compiler in (("cc", CC), ("pycc", PYCC)):
        d = write(tmp_path / side, {"k.c": SOURCE_TEXT, "main.c": MAIN})
        (d / "link.c").symlink_to("k.c")
        results.append(run([compiler, "-O2", *args], d, env, check=False))
        assert (d / "k.c").read_text() == SOURCE_TEXT, side
    ref, got = results
    assert got.returncode == ref.returncode == 1
    name = args[-1]
    assert got.stderr == (
        f"pycc-stencil: fatal error: input file '{name}' is the same as output file\n"
        "compilation terminated.\n"
    )
    assert ref.stderr.replace("cc: ", "pycc-stencil: ").replace("‘", "'").replace("’", "'") == (
        got.stderr
    )


@pytest.mark.parametrize(
    "args",
    [["-O3", "-c", "k.c", "-I"], ["-O3", "-c", "k.c", "-o"], ["-O3", "-c", "k.c", "-MF"],
     ["-O3", "-c", "k.c", "-o", "-"], ["-O3", "-c", "k.c", "-o", "."]],
    ids=["-I", "-o", "-MF", "-o -", "-o directory"],
)  # fmt: skip
def test_a_command_cc_rejects_is_rejected_by_cc(tmp_path, env, args):
    """An option missing its value at the end, or an object to stdout: cc's error and
    status, and no file (pycc-stencil used to compile it, `-I` writing an executable named
    `-`, `-o -` an object to stdout)."""
    ref, got, _ = both(tmp_path, {"k.c": STENCIL}, args, env, check=False)
    assert got.returncode == ref.returncode == 1
    assert got.stderr == ref.stderr and got.stdout == ref.stdout == ""
    assert sorted(p.name for p in (tmp_path / "pycc").iterdir()) == ["k.c"]


def test_output_hard_link_to_the_input_is_replaced_not_written_through(tmp_path, env):
    """gcc does not refuse a hard link to the input (it compares names): the output becomes a
    new file and the source keeps its text, with both compilers."""
    for compiler, side in ((CC, "cc"), (PYCC, "pycc")):
        d = write(tmp_path / side, {"k.c": SOURCE_TEXT})
        os.link(d / "k.c", d / "hard.c")
        run([compiler, "-O2", "-c", "k.c", "-o", "hard.c"], d, env)
        assert (d / "k.c").read_text() == SOURCE_TEXT, side
        assert (d / "hard.c").read_bytes()[:4] == b"\x7fELF", side


def test_emit_output_naming_its_input_is_refused(tmp_path, env):
    d = write(tmp_path, {"k.c": SOURCE_TEXT})
    done = run([PYCC, "emit", "--emit", "llvm", "k.c", "-o", "k.c"], d, env, check=False)
    assert done.returncode == 1
    assert "pycc-stencil: error: input file 'k.c' is the same as output file" in done.stderr
    assert (d / "k.c").read_text() == SOURCE_TEXT


# ---------------------------------------------------------------- quotes of the caller's locale
HAS_C_UTF8 = (
    "c.utf8" in subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.lower()
)


@pytest.mark.parametrize(
    "locale",
    [{"LC_ALL": "C"}, {"LANG": "C"}, {}, {"LC_ALL": "C.UTF-8"}, {"LANG": "C.UTF-8"}],
    ids=["LC_ALL=C", "LANG=C", "no-locale", "LC_ALL=C.UTF-8", "LANG=C.UTF-8"],
)
def test_diagnostics_quote_as_cc_does_in_the_callers_locale(tmp_path, env, locale):
    """cc quotes ‘so’ under a UTF-8 locale and 'so' under C. Python coerces a C locale to
    C.UTF-8 for the processes it starts (PEP 538): cc's own warnings then came out ‘so’ through
    pycc-stencil (launcher.undo_locale_coercion), and its own errors quoted 'so' under UTF-8
    (a new user's review)."""
    if "UTF-8" in str(locale) and not HAS_C_UTF8:
        pytest.skip("no C.UTF-8 locale here")
    env = {k: v for k, v in env.items() if k not in ("LC_ALL", "LC_CTYPE", "LANG")} | locale
    files = {"w.c": "int f(int x) { int y; return x; }\n", "k.c": STENCIL}
    runs = [
        ["-Wall", "-c", "w.c", "-o", "w.o"],
        ["-c", "k.c", "-o", "k.c"],
        ["-fwrapvv", "-c", "k.c"],
    ]
    for k, args in enumerate(runs):
        ref = run([CC, *args], write(tmp_path / f"cc{k}", files), env, check=False)
        got = run([PYCC, *args], write(tmp_path / f"pycc{k}", files), env, check=False)
        assert got.returncode == ref.returncode, args
        assert got.stderr.replace("pycc-stencil: ", "cc: ") == ref.stderr.replace("gcc: ", "cc: ")
    unknown = run([PYCC, "-fpycc-pases=auto", "-c", "k.c"], tmp_path / "pycc0", env, check=False)
    quote = "‘" if "UTF-8" in str(locale) else "'"
    assert f"option {quote}-fpycc-pases=auto" in unknown.stderr, unknown.stderr


# ---------------------------------------------------------------- unknown -fpycc-* options
@pytest.mark.parametrize(
    "option, message",
    [
        ("-fpycc-pases=auto", "'-fpycc-pases=auto'; did you mean '-fpycc-passes=auto'?"),
        ("-fpycc-passes", "'-fpycc-passes'; did you mean '-fpycc-passes='?"),
        ("-fpycc-frobnicate=1", "'-fpycc-frobnicate=1'"),
    ],
)
def test_unknown_pycc_options_are_errors_like_gccs(tmp_path, env, option, message):
    """As gcc diagnoses `-fwrapvv` ("unrecognized command-line option ...; did you mean ..."),
    exit status 1 and no output."""
    d = write(tmp_path, {"k.c": STENCIL})
    gcc_like = run([CC, "-fwrapvv", "-c", "k.c"], d, env, check=False)
    done = run([PYCC, option, "-O2", "-c", "k.c"], d, env, check=False)
    assert done.returncode == gcc_like.returncode == 1
    assert done.stderr == f"pycc-stencil: error: unrecognized command-line option {message}\n"
    assert not (d / "k.o").exists()


# ---------------------------------------------------------------- no symbol cc would not need
DERICHE_LIKE = """\
#include <math.h>
#include <stdio.h>
STORAGE void smooth(int n, float alpha, float *restrict y, const float *restrict x)
{
    float k = (1.0f - expf(-alpha)) * (1.0f - expf(-alpha));
    float a = expf(-0.25f);
    for (int i = 1; i < n; i++)
        y[i] = k * x[i] + a * y[i - 1];
}
int main(void)
{
    float x[64], y[64] = {0};
    for (int i = 0; i < 64; i++)
        x[i] = (float)(i % 7);
    smooth(64, 0.25f, y, x);
    for (int i = 0; i < 64; i += 9)
        printf("%a\\n", y[i]);
    return 0;
}
"""


@pytest.mark.parametrize("stage", ["link", "-S"])
def test_kernel_whose_libm_calls_gcc_folds_links_without_lm(tmp_path, env, stage):
    """gcc inlines the static kernel and folds its expf calls: the program links without -lm.
    pycc-stencil's out-of-line code would call expf, so the kernel is left to cc (with the
    reason) and the program links and prints the same; from -S output too."""
    files = {"d.c": DERICHE_LIKE.replace("STORAGE", "static")}
    args = ["-O2", "d.c", "-o", "app"] if stage == "link" else ["-O2", "-S", "d.c", "-o", "d.s"]
    ref, got, report = both(tmp_path, files, args, env)
    unit = functions_of(units_for(report, "d.c")[0])
    assert unit["smooth"]["compiled_by"] == "cc"
    assert "needs 'expf', which cc's object does not" in unit["smooth"]["reason"]
    assert "'smooth' compiled by cc instead of pycc-stencil" in got.stderr
    outputs = []
    for side in ("cc", "pycc"):
        if stage == "-S":
            run([CC, "d.s", "-o", "app"], tmp_path / side, env)
        outputs.append(run(["./app"], tmp_path / side, env).stdout)
    assert outputs[1] == outputs[0]


def test_kernel_calling_libm_like_cc_is_still_compiled_by_pycc(tmp_path, env):
    """The check leaves pycc-stencil a kernel whose calls cc's object makes too."""
    files = {"d.c": DERICHE_LIKE.replace("STORAGE", "")}
    _, _, report = both(tmp_path, files, ["-O2", "d.c", "-o", "app", "-lm"], env)
    assert functions_of(units_for(report, "d.c")[0])["smooth"]["compiled_by"] == "pycc-stencil"
    outputs = [run(["./app"], tmp_path / side, env).stdout for side in ("cc", "pycc")]
    assert outputs[1] == outputs[0]


def test_kernel_needing_other_libm_functions_than_cc_is_kept(tmp_path, env):
    """gcc inlines `floor`, LLVM calls it; cc's object needs libm anyway (for `expf`), so the
    program links libm and the kernel stays pycc-stencil's."""
    kernel = """\
    #include <math.h>
    void quantize(int n, const double *restrict a, float *restrict e, int *restrict q)
    {
        for (int i = 0; i < n; i++) {
            q[i] = (int)floor(a[i] * 8.0);
            e[i] = expf((float)a[i]);
        }
    }
    """
    _, _, report = both(tmp_path, {"q.c": kernel}, ["-O2", "-c", "q.c"], env)
    assert compiled_by(report, "q.c") == {"quantize": "pycc-stencil"}
    from pycc_stencil.dropin_symbols import undefined_symbols

    needs = [undefined_symbols((tmp_path / s / "q.o").read_bytes()) for s in ("cc", "pycc")]
    assert "floor" not in needs[0] and "expf" in needs[0] and "floor" in needs[1], needs


def test_undefined_symbols_of_an_object(tmp_path, env):
    from pycc_stencil.dropin_symbols import undefined_symbols

    d = write(
        tmp_path,
        {
            "u.c": "float expf(float);\n__attribute__((weak)) void w(void);\n"
            "int g;\nfloat f(float x) { if (w) w(); return expf(x) + g; }\n"
        },
    )
    run([CC, "-O2", "-fno-pic", "-c", "u.c"], d, env)
    assert undefined_symbols((d / "u.o").read_bytes()) == {"expf"}  # not weak w, not g, f
    with pytest.raises(ValueError):
        undefined_symbols(b"not an object")


def test_c_library_symbols_are_always_linked():
    """Symbols of the C library cc links never make a kernel fall back (the parallel runtime
    calls getenv and pthread_*); libm's are not among them."""
    from pycc_stencil.dropin_symbols import library_symbols

    libc, libm = library_symbols(CC, "libc.so.6"), library_symbols(CC, "libm.so.6")
    if not libc or not libm:
        pytest.skip("cc's C library is not an ELF64 libc.so.6 and libm.so.6")
    assert {"memcpy", "memset", "getenv", "__stack_chk_fail"} <= libc
    assert "expf" not in libc and {"expf", "floor"} <= libm
