"""The parts of compiler mode on their own: reading cc command lines, deriving the target from
the flags, choosing kernels, and rewriting the file for cc (line numbers must not move)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from pycc_stencil.dropin_command import (
    default_output,
    expand_response_files,
    parse_command,
)
from pycc_stencil.dropin_split import split_source
from pycc_stencil.dropin_takeover import choose, unit_tag
from pycc_stencil.emit.cc_target import UnsupportedTarget, target_from_flags
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file

HOST = host_target()


# ---------------------------------------------------------------- command lines
@pytest.mark.parametrize(
    "argv, stage",
    [
        (["-c", "a.c"], "object"),
        (["-S", "a.c"], "assembly"),
        (["-E", "a.c"], "preprocess"),
        (["-M", "a.c"], "preprocess"),
        (["-fsyntax-only", "a.c"], "syntax"),
        (["a.c", "-o", "prog"], "link"),
        (["--version"], "information"),
        (["-print-file-name=include"], "information"),
        (["-v"], "information"),
        (["-c", "-MD", "a.c"], "object"),
    ],
)
def test_stage(argv, stage):
    assert parse_command(argv).stage == stage


def test_inputs_languages_and_values_of_options():
    command = parse_command(
        ["-I", "inc", "-o", "out", "-x", "c", "k.txt", "-x", "none", "m.o", "-lm", "b.c", "-L", "x"]
    )
    assert command.output == "out"
    assert [(i.path, i.is_c) for i in command.inputs] == [
        ("k.txt", True),
        ("m.o", False),
        ("b.c", True),
    ]
    assert [i.path for i in command.c_inputs] == ["k.txt", "b.c"]


def test_compile_flags_drop_inputs_output_stage_language_and_dependencies():
    command = parse_command(
        ["-O2", "-Iinc", "-c", "-x", "c", "k.c", "-o", "k.o", "-MD", "-MF", "k.d", "-DN=3", "-g",
         "-std=c99", "-funsigned-char"]
    )  # fmt: skip
    assert command.compile_flags() == [
        "-O2", "-Iinc", "-DN=3", "-g", "-std=c99", "-funsigned-char"
    ]  # fmt: skip
    assert command.dependency_flags() == ["-MD", "-MF", "k.d"]
    # the front end reads cc's preprocessed unit: only how C is read, no -I/-D
    assert command.language_flags() == ["-std=c99", "-funsigned-char"]


def test_pycc_options_are_taken_out():
    command = parse_command(["-fpycc-report=r.json", "-c", "k.c", "-fpycc-passes="])
    assert command.pycc_options == {"report": "r.json", "passes": ""}
    assert command.args == ["-c", "k.c"]


def test_response_files_expand_recursively_and_missing_ones_stay(tmp_path):
    inner = tmp_path / "inner.rsp"
    inner.write_text('-DNAME="a b" -O2\n')
    outer = tmp_path / "outer.rsp"
    outer.write_text(f"-c @{inner} k.c")
    assert expand_response_files([f"@{outer}", "@missing.rsp"]) == [
        "-c",
        "-DNAME=a b",
        "-O2",
        "k.c",
        "@missing.rsp",
    ]


def test_default_outputs_are_in_the_current_directory():
    assert default_output("src/dir/k.c", "object") == "k.o"
    assert default_output("src/k.txt", "assembly") == "k.s"


# ---------------------------------------------------------------- target from the flags
def test_no_march_means_the_baseline_isa():
    target = target_from_flags("cc", ["-O3"])
    assert target.cpu == "x86-64" and "-avx2" in target.features and "-fma" in target.features
    assert target.opt_level == 3


def test_isa_options_reach_llvm():
    target = target_from_flags("cc", ["-O2", "-mavx2", "-mfma"])
    assert "+avx2" in target.features and "+fma" in target.features


@pytest.mark.parametrize(
    "flags, levels",
    [([], (0, 0)), (["-O"], (1, 0)), (["-O2"], (2, 0)), (["-Os"], (2, 1)), (["-Ofast"], (3, 0))],
)
def test_optimization_levels(flags, levels):
    target = target_from_flags("cc", flags)
    assert (target.opt_level, target.size_level) == levels


@pytest.mark.parametrize(
    "flags, vectorizers",
    [
        (["-O3"], (None, None)),  # LLVM's pipeline default for the level
        (["-O3", "-fno-tree-vectorize"], (False, False)),
        (["-O3", "-fno-tree-vectorize", "-ftree-slp-vectorize"], (False, True)),
        (["-O2", "-ftree-vectorize", "-fno-tree-loop-vectorize"], (False, True)),
        (["-O3", "-fno-tree-slp-vectorize"], (None, False)),
    ],
)
def test_vectorizer_switches_follow_gcc(flags, vectorizers):
    assert target_from_flags("cc", flags).vectorizers == vectorizers


VECTORIZABLE = """\
void add(int n, float *restrict a, const float *restrict b, const float *restrict c)
{
    for (int i = 0; i < n; i++)
        a[i] = b[i] + c[i];
}
void add4(float *restrict a, const float *restrict b, const float *restrict c)
{
    a[0] = b[0] + c[0]; a[1] = b[1] + c[1]; a[2] = b[2] + c[2]; a[3] = b[3] + c[3];
}
"""


@pytest.mark.parametrize("loop, slp", [(True, True), (False, False), (None, False)])
def test_vectorizer_switches_reach_llvm(tmp_path, loop, slp):
    """Every x86-64 has SSE2: LLVM vectorizes the loop and the four adds when allowed to."""
    from pycc_stencil.emit.host_jit import optimize, parse_verified

    source = tmp_path / "v.c"
    source.write_text(VECTORIZABLE)
    module = parse_verified(str(lower_file(str(source), []).module))
    optimize(module, 3, loop_vectorize=loop, slp_vectorize=slp)
    vector = {f.name: "x float>" in str(f) for f in module.functions if not f.is_declaration}
    assert vector == {"add": loop is not False, "add4": slp}


@pytest.mark.parametrize(
    "flags, vector", [(["-O3"], True), (["-O3", "-fno-tree-vectorize"], False)]
)
def test_compiler_mode_code_is_vectorized_at_O3(tmp_path, flags, vector):
    """The object/assembly path keeps LLVM's loop vectorizer on at -O3 unless the flags turn
    it off (SSE2's packed addps: every x86-64 has it)."""
    from pycc_stencil.emit.host_object import compile_to_assembly

    source = tmp_path / "v.c"
    source.write_text(VECTORIZABLE)
    module = str(lower_file(str(source), []).module)
    assembly = compile_to_assembly(module, target_from_flags("cc", flags))
    add = assembly.split("add4:")[0]
    assert bool(re.search(r"\bv?addps\b", add)) == vector


def test_integer_and_stack_options():
    assert target_from_flags("cc", ["-fwrapv"]).wrapv
    assert not target_from_flags("cc", ["-fwrapv", "-fno-wrapv"]).wrapv
    assert target_from_flags("cc", ["-fstack-protector-strong"]).stack_protector == "sspstrong"


@pytest.mark.parametrize("flag", ["-fsanitize=address", "-ftrapv", "--coverage", "-flto", "-pg"])
def test_options_only_cc_implements_are_refused(flag):
    with pytest.raises(UnsupportedTarget, match="cc only"):
        target_from_flags("cc", ["-O2", flag])


def test_32_bit_targets_are_refused():
    probe = subprocess.run(["cc", "-m32", "-dM", "-E", "-x", "c", "/dev/null"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("cc has no -m32 support installed")
    with pytest.raises(UnsupportedTarget):
        target_from_flags("cc", ["-m32"])


# ---------------------------------------------------------------- choosing and splitting
SOURCE = """\
#define NAME(x) x##_k
static const float w[3] = {0.25f, 0.5f, 0.25f};
static void blur(int n, float *restrict out,
                 const float *restrict in)
{
    for (int i = 1; i < n - 1; i++)
        out[i] = w[0] * in[i - 1] + w[1] * in[i] + w[2] * in[i + 1];
}
int line_after_blur(void) { return __LINE__; }
inline void c99_inline(int n, float *a) { for (int i = 0; i < n; i++) a[i] = 0; }
void NAME(scale)(int n, float *a) { for (int i = 0; i < n; i++) a[i] *= 2; }
double sum(int n, const double *a)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[i];
    return s;
}
void call_blur(int n, float *o, const float *i) { blur(n, o, i); }
int line_at_end(void) { return __LINE__; }
"""


def preprocessed(path, flags=()):
    """`cc -E` of `path` (the unit compiler mode lowers and splits), and its lowering."""
    unit = path.with_suffix(".i")
    subprocess.run(["cc", *flags, "-E", str(path), "-o", str(unit)], check=True)
    return unit, lower_file(str(unit), preprocessed=True)


def compile_unit(unit, *flags):
    """cc on a (split) preprocessed unit, as the driver compiles it."""
    obj = unit.with_suffix(".o")
    done = subprocess.run(
        ["cc", *flags, "-c", "-x", "cpp-output", str(unit), "-o", str(obj)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return obj


@pytest.fixture
def unit(tmp_path):
    path = tmp_path / "unit.c"
    path.write_text(SOURCE)
    return preprocessed(path)


def test_choose_takes_over_written_out_kernels_only(unit):
    """A kernel whose name a macro makes is written out in cc's preprocessed unit."""
    path, lowered = unit
    takeovers, refused = choose(lowered, path.read_bytes(), "TAG")
    assert {t.info.name: t.symbol for t in takeovers} == {
        "blur": "__pycc_TAG_blur",
        "scale_k": "scale_k",
        "sum": "sum",
    }
    assert "C99 inline" in refused["c99_inline"]


@pytest.mark.parametrize("passes", ["", "unroll(2)"])
def test_fp_semantics_survive_the_passes(unit, passes):
    """gcc -O2 -mfma fuses multiply-adds and -ffast-math reassociates; the passes print
    (verify) the module before either is applied, and llvmlite caches instruction text."""
    from pycc_stencil.dropin_takeover import kernel_module
    from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes

    path, _ = unit
    texts = {}
    for flags in (["-O2", "-mfma"], ["-O2", "-ffast-math"]):
        lowered = lower_file(str(path), preprocessed=True)
        takeovers, _ = choose(lowered, path.read_bytes(), "TAG")
        lowered.module = run_passes(
            lowered.module, parse_pipeline(passes), verify=True, target=HOST
        ).module
        texts[flags[-1]] = kernel_module(lowered, takeovers, target_from_flags("cc", flags),
                                         False, False)  # fmt: skip
    assert '@"llvm.fma.f' in texts["-mfma"] and " contract " not in texts["-mfma"]
    operations = re.findall(r"= (fadd|fmul)( fast)?", texts["-ffast-math"])
    assert operations and all(flag for _, flag in operations)


def test_unit_tags_differ_per_file_and_flags():
    assert unit_tag("/a.c", ["-O2"]) != unit_tag("/b.c", ["-O2"]) != unit_tag("/a.c", ["-O3"])


def test_split_source_keeps_lines_and_compiles(unit, tmp_path):
    path, lowered = unit
    text = path.read_bytes()
    takeovers, _ = choose(lowered, text, "TAG")
    split = tmp_path / "split.i"
    split.write_bytes(split_source(text, takeovers))
    # clean but for what only the cut bodies used (the driver compiles the split with -w)
    obj = compile_unit(split, "-O0", "-Wall", "-Werror", "-Wno-unused")
    symbols = subprocess.run(["nm", str(obj)], capture_output=True, text=True).stdout
    assert " U __pycc_TAG_blur" in symbols  # the static kernel is reached through a trampoline
    assert " sum\n" not in symbols  # pycc-stencil's object defines it
    assert " T call_blur" in symbols
    assert "__pycc_shadow" not in symbols  # the checked copy of each body is discarded
    program = tmp_path / "lines.c"
    program.write_text(
        "#include <stdio.h>\nint line_after_blur(void); int line_at_end(void);\n"
        'int main(void) { printf("%d %d\\n", line_after_blur(), line_at_end()); return 0; }\n'
    )
    helper = tmp_path / "helpers.c"  # the split file defines the lines functions; link them
    helper.write_text(
        "void __pycc_TAG_blur(int n, float *o, const float *i) {}\n"
        "double sum(int n, const double *a) { return 0; }\n"
    )
    exe = tmp_path / "lines"
    subprocess.run(["cc", str(program), str(obj), str(helper), "-o", str(exe)], check=True)
    assert subprocess.run([str(exe)], capture_output=True, text=True).stdout.split() == [
        "9",
        "20",
    ]


def test_a_signature_ending_in_a_line_comment_still_declares(tmp_path):
    """`void k(...) // comment` + `{`: the `;` of the declaration must not be commented out."""
    path = tmp_path / "comment.c"
    path.write_text(
        "void k(int n, float *a) // scale\n{\n    for (int i = 0; i < n; i++) a[i] *= 2;\n}\n"
        "static void s(int n, float *a) // static\n{ for (int i = 0; i < n; i++) a[i] = 0; }\n"
        "void use(float *a) { s(3, a); }\n"
    )
    unit, lowered = preprocessed(path, ["-C"])  # -C: cc -E keeps the comments
    assert b"// scale" in unit.read_bytes()
    takeovers, _ = choose(lowered, unit.read_bytes(), "T")
    split = tmp_path / "split.i"
    split.write_bytes(split_source(unit.read_bytes(), takeovers))
    compile_unit(split, "-Wall", "-Werror")


def test_k_and_r_definitions_are_declared_without_a_prototype(tmp_path):
    """`f(a, n) float *a; int n;` becomes `f();`: a prototype would change how callers
    promote `float` arguments, and `f(a, n) ...;` is not a declaration at all."""
    path = tmp_path / "kr.c"
    path.write_text(
        "void scale(a, n) float *a; int n; { int i; for (i = 0; i < n; i++) a[i] *= 2; }\n"
        "static void mul(a, n, f) float *a; int n; float f;\n"
        "{ int i; for (i = 0; i < n; i++) a[i] *= f; }\n"
        "void use(float *a, int n) { mul(a, n, 3.0f); }\n"
    )
    unit, lowered = preprocessed(path)
    takeovers, refused = choose(lowered, unit.read_bytes(), "T")
    assert {t.info.name for t in takeovers} == {"scale", "mul"}, refused
    split = split_source(unit.read_bytes(), takeovers)
    assert b"void scale()\n;" in split and b"extern void __pycc_T_mul()\n;" in split
    (tmp_path / "split.i").write_bytes(split)
    compile_unit(tmp_path / "split.i", "-std=c99")


def test_compile_steps_get_no_linker_options():
    """clang warns about -l/-L/-Wl,/-shared in a compile step; -pthread also defines macros."""
    command = parse_command(
        ["-O2", "-pthread", "-shared", "k.c", "-L", "lib", "-lm", "-Wl,-O1", "-Xlinker", "-x"]
    )
    assert command.compile_flags() == ["-O2", "-pthread"]


def test_volatile_and_other_calling_conventions_are_not_lowered(tmp_path):
    """Found by acceptance testing: a volatile poll loop became `jmp .`, an ms_abi kernel
    read its arguments from the SysV registers. Both are left to cc now."""
    path = tmp_path / "v.c"
    path.write_text(
        "__attribute__((ms_abi)) void k1(float *a, int n) { for (int i = 0; i < n; i++) a[i]++; }\n"
        "void k2(volatile const int *f, int *o, int n)\n"
        "{ for (int i = 0; i < n; i++) { while (!*f) { } o[i] = *f; } }\n"
        "void k3(float *a, int n) { volatile int t = 0; for (int i = 0; i < n; i++) a[i] += t; }\n"
        "void k4(float *a, int n) { for (int i = 0; i < n; i++) *(volatile float *)&a[i] = 1; }\n"
        "void k5(float *a, int n) { for (int i = 0; i < n; i++) a[i] = 1; }\n"
    )
    lowered = lower_file(str(path))
    assert list(lowered.functions) == ["k5"]
    reasons = {s.name: s.reason for s in lowered.skipped}
    assert "calling convention" in reasons["k1"]
    assert all("volatile" in reasons[k] for k in ("k2", "k3", "k4"))


@pytest.mark.parametrize(
    "flag",
    ["-mno-red-zone", "-mfpmath=387", "-mgeneral-regs-only", "-mindirect-branch=thunk",
     "-mno-sse2", "-fno-builtin", "-ffreestanding", "-frounding-math", "-mcmodel=large"],
)  # fmt: skip
def test_options_changing_code_generation_beyond_the_isa_are_cc_only(flag):
    with pytest.raises(UnsupportedTarget):
        target_from_flags("cc", ["-O2", flag])


@pytest.mark.parametrize(
    "flags",
    [["-mavx2", "-mfma"], ["-march=haswell"], ["-mtune=generic"], ["-mno-avx"], ["-m64"]],
)
def test_isa_and_tuning_options_are_fine(flags):
    target_from_flags("cc", ["-O2", *flags])


def test_math_errno_follows_the_flags():
    assert target_from_flags("cc", ["-O2"]).math_errno
    assert not target_from_flags("cc", ["-O2", "-fno-math-errno"]).math_errno
    assert not target_from_flags("cc", ["-O2", "-ffast-math"]).math_errno


def test_sqrt_of_a_negative_sets_errno_as_with_cc(tmp_path):
    pycc = shutil.which("pycc-stencil", path=os.path.dirname(sys.executable))
    (tmp_path / "k.c").write_text(
        "#include <math.h>\n"
        "void ks(int n, const double *x, double *o) { for (int i = 0; i < n; i++) "
        "o[i] = sqrt(x[i]); }\n"
    )
    (tmp_path / "m.c").write_text(
        "#include <stdio.h>\n#include <errno.h>\nvoid ks(int, const double *, double *);\n"
        "int main(void) { double x[3] = {4, -1, 9}, o[3]; errno = 0; ks(3, x, o);\n"
        '  printf("%g %g errno=%d\\n", o[0], o[2], errno); return 0; }\n'
    )
    env = dict(os.environ, PYCC_NO_CACHE="1", PYCC_REPORT=str(tmp_path / "r.json"))
    outputs = []
    for compiler in ("cc", pycc):
        exe = tmp_path / f"{os.path.basename(compiler)}.exe"
        subprocess.run(
            [compiler, "-O2", "k.c", "m.c", "-o", str(exe), "-lm"], cwd=tmp_path, env=env,
            check=True,
        )  # fmt: skip
        outputs.append(subprocess.run([str(exe)], capture_output=True, text=True).stdout)
    assert outputs[0] == outputs[1] == "2 3 errno=33\n"
    assert '"compiled_by": "pycc-stencil"' in (tmp_path / "r.json").read_text()
