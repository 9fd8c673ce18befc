"""Compiler mode compiles the translation unit cc compiles (issue 13 §1).

pycc-stencil lowers, and cc compiles the rest of, one unit: `cc -E` of the user's file with
the user's flags. Each test builds a small program twice, `k.c` by `cc` and by
`pycc-stencil` (same flags, sibling directories), links both with cc, runs both, and
compares the output; the report (`PYCC_REPORT`) says whether pycc-stencil compiled the
kernel itself or left it to cc, and why. Each case was a wrong result, a broken build or a
silent fallback when libclang preprocessed the file itself (clang's predefined macros, no
`-Wp,-D`) and cc compiled the original file with the kernels' bodies cut out.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from pycc_stencil.frontend.line_markers import LineMarkers
from test_compiler_mode import CC, PYCC, clean_env, functions_of, read_report, run, units_for

pytestmark = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")


@dataclass
class Both:
    """The two builds of one program: outputs, pycc-stencil's report of k.c, stderr."""

    cc_dir: Path
    pycc_dir: Path
    cc_output: str
    pycc_output: str
    functions: dict[str, dict]
    pycc_stderr: str
    unit: dict  # the report line of k.c


def build_both(
    tmp_path: Path,
    files: dict[str, str],
    flags: list[str],
    output: str = "k.o",
    others: tuple[str, ...] = (),
    extra_env: dict[str, str] | None = None,
) -> Both:
    """Compile k.c with `flags` by cc and by pycc-stencil into `output`, link it with main.c
    and `others` by cc, run (`extra_env`: PYCC_* variables for both builds)."""
    env = clean_env(tmp_path / "cache", **(extra_env or {}))
    report = tmp_path / "report.jsonl"
    outputs, stderr = {}, ""
    for side, compiler in (("cc", CC), ("pycc", PYCC)):
        d = tmp_path / side
        d.mkdir()
        for name, text in files.items():
            (d / name).write_text(text)
        (d / output).parent.mkdir(exist_ok=True)
        done = run(
            [compiler, *flags, "-c", "k.c", "-o", output], d, dict(env, PYCC_REPORT=str(report))
        )
        stderr = done.stderr
        run([CC, "main.c", output, *others, "-o", "app", "-lm"], d, env)
        outputs[side] = run(["./app"], d, env).stdout
    (unit,) = units_for(read_report(report), "k.c")
    return Both(
        tmp_path / "cc",
        tmp_path / "pycc",
        outputs["cc"],
        outputs["pycc"],
        functions_of(unit),
        stderr,
        unit,
    )


def assert_by_pycc(both: Both, *names: str) -> None:
    for name in names:
        assert both.functions[name]["compiled_by"] == "pycc-stencil", both.functions[name]


def main_printing(*calls: str, declarations: str = "") -> str:
    """A main.c that prints each `call` (an int expression) on a line of its own."""
    lines = "".join(f'    printf("%d\\n", {call});\n' for call in calls)
    return f"#include <stdio.h>\n{declarations}\nint main(void)\n{{\n{lines}    return 0;\n}}\n"


# ---------------------------------------------------------------- predefined macros
MACROS_C = """\
void which(int n, int *a)
{
    for (int i = 0; i < n; i++) {
        int m = 0;
#ifdef __clang__
        m |= 1;
#endif
#if __GNUC__ >= 5
        m |= 2;
#endif
#ifdef __OPTIMIZE__
        m |= 4;
#endif
#ifdef __AVX2__
        m |= 8;
#endif
#ifdef __FAST_MATH__
        m |= 16;
#endif
#ifdef __NO_MATH_ERRNO__
        m |= 32;
#endif
        a[i] = 100 * i + m;
    }
}
"""
MACROS_MAIN = main_printing(
    "(which(3, a), a[0])",
    "a[2]",
    declarations="void which(int n, int *a);\nstatic int a[3];",
)


@pytest.mark.parametrize(
    "flags",
    [
        ["-O0"],
        ["-O2"],
        ["-O2", "-march=native"],
        ["-O2", "-ffast-math"],
        ["-O2", "-fno-math-errno"],
    ],
    ids=["O0", "O2", "native", "fast-math", "no-math-errno"],
)
def test_predefined_macros_are_cc_s(tmp_path, flags):
    """Code under `#ifdef __clang__`, `__GNUC__ >= 5`, `__OPTIMIZE__`, `__AVX2__`,
    `__FAST_MATH__`, `__NO_MATH_ERRNO__` computes what cc's build computes (whatever the
    CPU: with -march=native both see the host's ISA macros)."""
    both = build_both(tmp_path, {"k.c": MACROS_C, "main.c": MACROS_MAIN}, flags)
    assert both.pycc_output == both.cc_output
    assert int(both.cc_output.split()[0]) & 3 == 2  # gcc, not clang
    assert_by_pycc(both, "which")


# ---------------------------------------------------------------- state inside a cut body
STATE_C = """\
#define LIMIT 7
int counter_before(void) { return __COUNTER__; }
void scale(int n, int *a)
{
#define SCALE 3
    for (int i = 0; i < n; i++)
        a[i] = i * SCALE + __COUNTER__ + LIMIT;
#pragma pack(push, 1)
#undef LIMIT
#define LIMIT 9
}
struct packed { char c; int i; };
#pragma pack(pop)
int scale_after(void) { return SCALE; }
int counter_after(void) { return __COUNTER__; }
int packed_size(void) { return sizeof(struct packed); }
int limit_after(void) { return LIMIT; }
#line 500
void lines(int n, int *a) { for (int i = 0; i < n; i++) a[i] = __LINE__; }
int line_after(void) { return __LINE__; }
"""
STATE_MAIN = main_printing(
    "(scale(3, a), a[2])",
    "(lines(2, a), a[1])",
    "counter_before()",
    "scale_after()",
    "counter_after()",
    "packed_size()",
    "limit_after()",
    "line_after()",
    declarations="void scale(int, int *); void lines(int, int *); int counter_before(void);\n"
    "int scale_after(void); int counter_after(void); int packed_size(void);\n"
    "int limit_after(void); int line_after(void);\nstatic int a[3];",
)


def test_preprocessor_state_inside_a_kernel_body_stays(tmp_path):
    """A `#define`/`#undef` and `#pragma pack(push, 1)` inside a kernel's body, `__COUNTER__`
    and a user `#line` before a kernel act on the rest of the file as with cc."""
    both = build_both(tmp_path, {"k.c": STATE_C, "main.c": STATE_MAIN}, ["-O2"])
    assert both.pycc_output == both.cc_output
    assert both.cc_output.split()[3:] == ["3", "2", "5", "9", "501"]
    assert_by_pycc(both, "scale", "lines")


@pytest.mark.parametrize("flags", [["-O0", "-g"], ["-O0", "-g", "-P"]], ids=["g", "P"])
def test_debug_lines_after_a_cut_body_name_the_source(tmp_path, flags):
    """With -g, the functions cc compiles after a taken-over kernel keep their file and
    lines (the split unit re-marks the line after each cut body), also when the flags hold
    `-P`, which would drop the line markers from `cc -E`'s output."""
    both = build_both(tmp_path, {"k.c": STATE_C, "main.c": STATE_MAIN}, flags)
    assert_by_pycc(both, "scale", "lines")
    tables = []
    for d in (both.cc_dir, both.pycc_dir):
        dump = run(["objdump", "--dwarf=decodedline", "k.o"], d, clean_env(tmp_path)).stdout
        rows = re.findall(r"^(k\.c)\s+(\d+)\s+0x", dump, re.MULTILINE)
        tables.append({int(line) for _, line in rows})
    for line in (2, 14, 15, 16, 17, 501):  # the functions cc compiles
        assert line in tables[1], (line, tables[1])
    # pycc-stencil's own code: the kernels' lines (and LLVM's line 0)
    assert tables[1] <= tables[0] | set(range(3, 12)) | {0, 500}


LOOP_PRAGMAS_C = """\
#define OMP(x) _Pragma(#x)
void ivdep(int n, int *a)
{
#pragma GCC ivdep
    for (int i = 0; i < n; i++)
        a[i] = 2 * i;
#pragma GCC ivdep
    for (int i = 0; i < n; i++)
        a[i] += 1;
}
void parallel(int n, int *a)
{
    OMP(omp parallel for)
    for (int i = 0; i < n; i++)
        a[i] = 3 * i;
}
"""
LOOP_PRAGMAS_MAIN = main_printing(
    "(ivdep(3, a), a[2])",
    "(parallel(3, a), a[2])",
    declarations="void ivdep(int, int *); void parallel(int, int *);\nint a[3];",
)


def test_loop_pragmas_go_with_the_cut_body(tmp_path):
    """`#pragma GCC ivdep` only applies to the loop after it (at file scope it is an error):
    it leaves with the body; `_Pragma("omp ...")` under -fopenmp is an OpenMP directive in
    cc's unit, so that kernel is cc's."""
    files = {"k.c": LOOP_PRAGMAS_C, "main.c": LOOP_PRAGMAS_MAIN}
    both = build_both(tmp_path, files, ["-O2", "-fopenmp"], others=("-fopenmp",))
    assert both.pycc_output == both.cc_output == "5\n6\n"
    assert_by_pycc(both, "ivdep")
    parallel = both.functions["parallel"]
    assert parallel["compiled_by"] == "cc" and "omp" in parallel["reason"].lower(), parallel


G3_C = """\
static const int v = 1;
#define v (v + 1)
void inc(int n, int *a) { for (int i = 0; i < n; i++) a[i] = v; }
"""
G3_MAIN = main_printing("(inc(3, a), a[2])", declarations="void inc(int, int *);\nint a[3];")


def test_macro_definitions_kept_by_g3_are_not_expanded_again(tmp_path):
    """With -g3, `cc -E` keeps the `#define` lines (for the debug info): `v` in the
    expansion `(v + 1)` is the variable, not the macro a second time."""
    both = build_both(tmp_path, {"k.c": G3_C, "main.c": G3_MAIN}, ["-O2", "-g3"])
    assert both.pycc_output == both.cc_output == "2\n"
    assert_by_pycc(both, "inc")


BASE_FILE_C = """\
void name_length(int n, int *a)
{
    for (int i = 0; i < n; i++)
        a[i] = (int)sizeof(__BASE_FILE__) + (int)sizeof(__FILE__);
}
"""
BASE_FILE_MAIN = main_printing(
    "(name_length(3, a), a[2])", declarations="void name_length(int, int *);\nint a[3];"
)


def test_base_file_is_the_source(tmp_path):
    """`__BASE_FILE__` and `__FILE__` are cc's (the source, never a temporary): such a
    kernel is pycc-stencil's like any other."""
    both = build_both(tmp_path, {"k.c": BASE_FILE_C, "main.c": BASE_FILE_MAIN}, ["-O2"])
    assert both.pycc_output == both.cc_output == "8\n"
    assert_by_pycc(both, "name_length")


OPTIMIZE_H = """\
#pragma GCC push_options
#pragma GCC optimize("O1")
static inline int one(void) { return 1; }
#pragma GCC pop_options
"""
OPTIMIZE_MAIN = main_printing(
    "(fill(3, a), a[2])", declarations="void fill(int, int *);\nint a[3];"
)


@pytest.mark.parametrize("where", ["header", "file"])
def test_file_level_pragmas_count_where_written_in_the_file(tmp_path, where):
    """`#pragma GCC optimize` written in the file leaves its kernels to cc; a header's
    balanced push/optimize/pop (as in gcc's own immintrin.h) does not."""
    pragmas = '#include "opt.h"\n' if where == "header" else OPTIMIZE_H
    kernel = pragmas + "void fill(int n, int *a) { for (int i = 0; i < n; i++) a[i] = one(); }\n"
    files = {"k.c": kernel, "opt.h": OPTIMIZE_H, "main.c": OPTIMIZE_MAIN}
    both = build_both(tmp_path, files, ["-O2"])
    assert both.pycc_output == both.cc_output == "1\n"
    fill = both.functions["fill"]
    if where == "header":
        assert_by_pycc(both, "fill")
    else:
        assert fill["compiled_by"] == "cc" and "#pragma GCC push_options" in fill["reason"], fill


ROW_ALIGN_C = """\
#include <stdio.h>

#pragma pycc row_align(ALIGN)
void ones(int n, float a[][n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            a[i][j] = 1;
}
"""
ROW_ALIGN_MAIN = main_printing(
    "(ones(4, a), (int)a[3][3])",
    declarations="void ones(int n, float a[][n]);\n_Alignas(64) float a[4][4];",
)


@pytest.mark.parametrize("align", ["16", "3"])
def test_row_align_pragma_in_the_preprocessed_unit(tmp_path, align):
    """`#pragma pycc row_align(N)` still declares the kernel's row alignment (cc -E puts a
    line marker between it and the definition); a malformed one is reported at the user's
    line, and the file goes to cc."""
    files = {"k.c": ROW_ALIGN_C.replace("ALIGN", align), "main.c": ROW_ALIGN_MAIN}
    both = build_both(tmp_path, files, ["-O2"])
    assert both.pycc_output == both.cc_output == "1\n"
    if align == "16":
        assert_by_pycc(both, "ones")
    else:
        assert "k.c:3:1: error: row_align(3)" in both.pycc_stderr, both.pycc_stderr
        assert "[-Wpycc-fallback]" in both.pycc_stderr


GENERATED_C = """\
#define DEFINE_SCALE(name, f) \\
    static void name(int n, int *a) { for (int i = 0; i < n; i++) a[i] *= f; }
DEFINE_SCALE(twice, 2) DEFINE_SCALE(thrice, 3)
int scale_both(int n, int *a) { twice(n, a); thrice(n, a); return __LINE__; }
"""
GENERATED_MAIN = main_printing(
    "scale_both(3, a)", "a[2]", declarations="int scale_both(int, int *);\nint a[3] = {1, 1, 1};"
)


def test_kernels_a_macro_defines_are_taken_over(tmp_path):
    """In cc's unit a macro-generated definition is written out (two on one line here):
    pycc-stencil takes both over, the line after them keeps its number."""
    both = build_both(tmp_path, {"k.c": GENERATED_C, "main.c": GENERATED_MAIN}, ["-O2", "-g"])
    assert both.pycc_output == both.cc_output == "4\n6\n"
    assert_by_pycc(both, "twice", "thrice")


# ---------------------------------------------------------------- macros not given by -D
DEFINE_C = "void times(int n, int *a) { for (int i = 0; i < n; i++) a[i] = i * X; }\n"
DEFINE_MAIN = main_printing(
    "(times(3, a), a[2])", declarations="void times(int, int *);\nint a[3];"
)


#: defines X, and a struct: included twice, the struct would be redefined
INCLUDED_H = "#define X 2\nstruct once { int a; };\n"


@pytest.mark.parametrize(
    "flags",
    [["-Wp,-DX=2"], ["--define-macro=X=2"], ["--define-macro", "X=2"], ["-Xpreprocessor", "-DX=2"],
     ["-include", "x.h"], ["-DX=2", "-Wp,-include,x.h", "-UX", "-DX=2"]],
    ids=["Wp", "define-macro=", "define-macro", "Xpreprocessor", "include", "Wp-include"],
)  # fmt: skip
def test_macros_given_other_ways_than_D(tmp_path, flags):
    """cc's preprocessor applies them, once: the split unit is compiled as preprocessed C,
    where `-D`/`-include` no longer act (`-include` twice would redefine the struct)."""
    files = {"k.c": DEFINE_C, "main.c": DEFINE_MAIN, "x.h": INCLUDED_H}
    both = build_both(tmp_path, files, ["-O2", *flags])
    assert both.pycc_output == both.cc_output == "4\n"
    assert_by_pycc(both, "times")


# ---------------------------------------------------------------- symbols
WEAK_C = """\
#pragma weak fill
void fill(int n, int *a) { for (int i = 0; i < n; i++) a[i] = 1; }
"""
STRONG_C = "void fill(int n, int *a) { for (int i = 0; i < n; i++) a[i] = 2; }\n"
WEAK_MAIN = main_printing("(fill(3, a), a[2])", declarations="void fill(int, int *);\nint a[3];")


def test_pragma_weak_kernel_is_weak(tmp_path):
    """`#pragma weak fill` on a taken-over kernel: a weak definition, so a strong one in
    another object wins at link time (no multiple definition)."""
    files = {"k.c": WEAK_C, "main.c": WEAK_MAIN, "strong.c": STRONG_C}
    both = build_both(tmp_path, files, ["-O2"], others=("strong.c",))
    assert both.pycc_output == both.cc_output == "2\n"
    assert_by_pycc(both, "fill")


RENAMED_C = """\
void fill(int n, int *a);
#pragma redefine_extname fill fill_impl
void fill(int n, int *a) { for (int i = 0; i < n; i++) a[i] = 5; }
#pragma weak fill_alias = other
void other(int n, int *a) { for (int i = 0; i < n; i++) a[i] = 6; }
"""
RENAMED_MAIN = main_printing(
    "(fill_impl(3, a), a[2])",
    "(fill_alias(3, a), a[2])",
    declarations="void fill_impl(int, int *); void fill_alias(int, int *);\nint a[3];",
)


def test_kernels_renamed_or_aliased_by_pragmas_stay_with_cc(tmp_path):
    """`#pragma redefine_extname` changes the kernel's symbol, `#pragma weak a = k` makes
    another symbol an alias of it: both are cc's to emit."""
    both = build_both(tmp_path, {"k.c": RENAMED_C, "main.c": RENAMED_MAIN}, ["-O2"])
    assert both.pycc_output == both.cc_output == "5\n6\n"
    reasons = {name: both.functions[name]["reason"] for name in ("fill", "other")}
    assert "redefine_extname" in reasons["fill"] and "alias" in reasons["other"], reasons


ATTRIBUTES_C = """\
#define PRIV __attribute__((visibility("hidden")))
#define WEAK __attribute__((weak))
#define HOT __attribute__((hot, noinline))
PRIV HOT void hidden_k(int n, int *a) { for (int i = 0; i < n; i++) a[i] = 3; }
WEAK void weak_k(int n, int *a) { for (int i = 0; i < n; i++) a[i] = 4; }
void call_hidden(int n, int *a) { hidden_k(n, a); }
"""
ATTRIBUTES_MAIN = main_printing(
    "(call_hidden(3, a), a[2])",
    "(weak_k(3, a), a[2])",
    declarations="void call_hidden(int, int *); void weak_k(int, int *);\nint a[3];",
)


def _symbols(obj: Path, names: tuple[str, ...]) -> dict[str, tuple[str, str, str]]:
    """name -> (type, binding, visibility) from readelf."""
    out = subprocess.run(["readelf", "-sW", str(obj)], capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[7] in names:
            found[fields[7]] = (fields[3], fields[4], fields[5])
    return found


@pytest.mark.skipif(shutil.which("readelf") is None, reason="binutils not installed")
def test_attributes_written_through_macros(tmp_path):
    """Attributes spelled by a macro are real attributes in cc's preprocessed unit: the
    kernels are taken over with the symbol binding and visibility cc gives them."""
    files = {"k.c": ATTRIBUTES_C, "main.c": ATTRIBUTES_MAIN}
    both = build_both(tmp_path, files, ["-O2"])
    assert both.pycc_output == both.cc_output == "3\n4\n"
    assert_by_pycc(both, "hidden_k", "weak_k")
    names = ("hidden_k", "weak_k")
    want = _symbols(both.cc_dir / "k.o", names)
    assert want == {"hidden_k": ("FUNC", "GLOBAL", "HIDDEN"), "weak_k": ("FUNC", "WEAK", "DEFAULT")}
    assert _symbols(both.pycc_dir / "k.o", names) == want


# ---------------------------------------------------------------- headers
HEADER_H = "void from_header(int n, int *a) { for (int i = 0; i < n; i++) a[i] = 5; }\n"
HEADER_C = '#include "kern.h"\nvoid here(int n, int *a) { for (int i = 0; i < n; i++) a[i] = 6; }\n'
HEADER_MAIN = main_printing(
    "(from_header(3, a), a[2])",
    "(here(3, a), a[2])",
    declarations="void from_header(int, int *); void here(int, int *);\nint a[3];",
)


def test_a_kernel_defined_in_a_header_stays_with_cc(tmp_path):
    """The unit holds the header's text too; its line markers say it is not the file's."""
    files = {"k.c": HEADER_C, "kern.h": HEADER_H, "main.c": HEADER_MAIN}
    both = build_both(tmp_path, files, ["-O2"])
    assert both.pycc_output == both.cc_output == "5\n6\n"
    assert_by_pycc(both, "here")
    assert "from_header" not in both.functions  # not a function of k.c: cc's, unreported


# ---------------------------------------------------------------- auxiliary outputs
KERNEL_C = '#include "k.h"\nvoid fill(int n, int *a) { for (int i = 0; i < n; i++) a[i] = K; }\n'
KERNEL_FILES = {"k.c": KERNEL_C, "k.h": "#define K 7\n", "main.c": WEAK_MAIN}


@pytest.mark.parametrize(
    "options",
    [["-Wp,-MD,out/k.d"], ["-Wp,-MMD,out/k.d"], ["-Wp,-MD,out/k.d", "-MT", "target", "-MP"]],
    ids=["MD", "MMD", "MT-MP"],
)
def test_dependency_file_through_wp_names_the_sources(tmp_path, options):
    """The dependency file lists k.c and k.h (not a temporary copy), as cc's does, with the
    target and phony rules `-MT`/`-MP` ask for; the kernel is still pycc-stencil's."""
    both = build_both(tmp_path, KERNEL_FILES, ["-O2", *options], output="out/k.o")
    assert both.pycc_output == both.cc_output == "7\n"
    assert_by_pycc(both, "fill")
    want = (both.cc_dir / "out/k.d").read_text()
    assert "k.c" in want and "k.h" in want
    assert (both.pycc_dir / "out/k.d").read_text() == want


MAKEFILE = """\
OBJS = k.o main.o
app: $(OBJS)
\t$(CC) $(OBJS) -o $@
%.o: %.c
\t$(CC) -O2 -Wp,-MD,.$@.d -c $< -o $@
-include .k.o.d .main.o.d
"""


def test_make_twice_with_wp_md_dependencies(tmp_path):
    """kbuild's `-Wp,-MD,.k.o.d`: the second `make` has nothing to do, and touching the
    header rebuilds k.o."""
    d = tmp_path / "proj"
    d.mkdir()
    for name, text in {**KERNEL_FILES, "Makefile": MAKEFILE}.items():
        (d / name).write_text(text)
    env = clean_env(tmp_path / "cache", PYCC_REPORT=str(tmp_path / "report.jsonl"))
    run(["make", f"CC={PYCC}"], d, env)
    assert run(["./app"], d, env).stdout == "7\n"
    assert run(["make", "-q", f"CC={PYCC}"], d, env, check=False).returncode == 0
    assert "k.c" in (d / ".k.o.d").read_text() and "k.h" in (d / ".k.o.d").read_text()
    (d / "k.h").write_text("#define K 8\n")
    run(["make", f"CC={PYCC}"], d, env)
    assert run(["./app"], d, env).stdout == "8\n"
    report = read_report(tmp_path / "report.jsonl")
    assert all(
        functions_of(u)["fill"]["compiled_by"] == "pycc-stencil" for u in units_for(report, "k.c")
    )


@pytest.mark.parametrize(
    "option, suffix", [("-gsplit-dwarf", ".dwo"), ("-fstack-usage", ".su")], ids=["dwo", "su"]
)
def test_auxiliary_outputs_as_cc_writes_them(tmp_path, option, suffix):
    """`.dwo` and `.su` files describe the code of the object and are named after it: the
    kernels go to cc (with the documented warning), whose files are then exactly cc's."""
    flags = ["-O2", "-g", option]
    both = build_both(tmp_path, KERNEL_FILES, flags, output="out/k.o")
    assert both.pycc_output == both.cc_output == "7\n"
    # refused from the flags alone: the file is not parsed, its one report line says why
    assert both.unit["status"] == "cc" and not both.functions, both.unit
    assert both.unit["reason"] == f"'{option}' is implemented by cc only", both.unit
    assert "[-Wpycc-fallback]" in both.pycc_stderr
    if option == "-fstack-usage":
        want = (both.cc_dir / "out/k.su").read_text()
        assert "fill" in want and (both.pycc_dir / "out/k.su").read_text() == want
    else:  # the .dwo next to the object, named by the object as cc's names it
        dwo_names = []
        for d in (both.cc_dir, both.pycc_dir):
            assert "DW_TAG_subprogram" in _debug_info(d, "out/k.dwo", tmp_path)
            dump = _debug_info(d, "out/k.o", tmp_path)
            dwo_names.append(re.findall(r"DW_AT_dwo_name .*: (\S+)$", dump, re.MULTILINE))
        assert dwo_names[0] and dwo_names[1] == dwo_names[0]


def test_auxiliary_outputs_of_a_one_command_build(tmp_path):
    """`cc -fstack-usage -gsplit-dwarf k.c main.c -o out/app` names them `out/app-k.su`,
    `out/app-k.dwo`: so do pycc-stencil's separate compiles of each source, and the
    program's skeleton debug info points at those files, not at a deleted temporary."""
    env = clean_env(tmp_path / "cache")
    args = ["-O2", "-g", "-gsplit-dwarf", "-fstack-usage", "k.c", "main.c", "-o", "out/app"]
    files, names = [], []
    for side, compiler in (("cc", CC), ("pycc", PYCC)):
        d = tmp_path / side
        (d / "out").mkdir(parents=True)
        for name, text in KERNEL_FILES.items():
            (d / name).write_text(text)
        run([compiler, *args], d, env)
        assert run(["out/app"], d, env).stdout == "7\n"
        files.append({p.name: p.read_bytes() for p in (d / "out").glob("*.su")})
        files[-1].update({p.name: b"" for p in (d / "out").glob("*.dwo")})
        dump = _debug_info(d, "out/app", tmp_path)
        names.append(re.findall(r"DW_AT_dwo_name .*: (\S+)$", dump, re.MULTILINE))
    assert set(files[0]) == {"app-k.su", "app-main.su", "app-k.dwo", "app-main.dwo"}
    assert files[1] == files[0]
    assert names[1] == names[0] == ["out/app-k.dwo", "out/app-main.dwo"]


def _debug_info(d: Path, name: str, tmp_path: Path) -> str:
    """readelf's dump of the debug info of `d/name`."""
    return run(["readelf", "--debug-dump=info", name], d, clean_env(tmp_path)).stdout


# ---------------------------------------------------------------- line markers
def test_line_markers_map_lines_and_includes():
    unit = (
        b'# 0 "k.c"\n# 0 "<built-in>"\n# 0 "<command-line>"\n'
        b'# 1 "/usr/include/stdc-predef.h" 1 3 4\n# 0 "<command-line>" 2\n# 1 "k.c"\n'
        b'# 1 "a \\"q\\".h" 1\nint h;\n\nint h2;\n# 2 "k.c" 2\nint m;\n# 40 "k.c"\nint late;\n'
    )
    markers = LineMarkers(unit)
    assert markers.main_file == "k.c"
    lines = unit.split(b"\n")
    h, h2, m, late = (lines.index(x) + 1 for x in (b"int h;", b"int h2;", b"int m;", b"int late;"))
    origin = markers.origin(h2)
    assert (origin.quoted_file, origin.line, origin.in_main_file) == (b'"a \\"q\\".h"', 3, False)
    assert markers.origin(h).line == 1
    assert (markers.origin(m).line, markers.origin(m).in_main_file) == (2, True)
    assert markers.origin(late).marker() == b'# 40 "k.c"\n'


def test_aligned_columns_are_the_user_s():
    """cc -E collapses white space, drops comments and expands macros; columns of its unit are
    mapped back to the line as written (macro expansions to the macro's name)."""
    from pycc_stencil.frontend.columns import aligned_column

    written = b"\ta[i]   =  /* c */ SCALE(i) +   b[i];  // end"
    unit = b" a[i] = ((i) * 2) + b[i];"

    def user(token: bytes, occurrence: int = 0) -> int:
        start = -1
        for _ in range(occurrence + 1):
            start = unit.index(token, start + 1)
        return aligned_column(unit, written, start + 1)

    assert user(b"a") == written.index(b"a") + 1
    assert user(b"=") == written.index(b"=") + 1
    assert user(b"((") == user(b"*") == written.index(b"SCALE") + 1
    assert user(b"+") == written.index(b"+") + 1
    assert user(b"b") == written.index(b"b") + 1
    assert user(b";") == written.index(b";") + 1
    assert aligned_column(b"x = 1;", b"#line 3 other text", 3) == 3  # nothing in common


COLUMNS_C = """\
#define SCALE(x) ((x) * 2)
void scaled(int n, int *restrict a, const int *restrict b)
{
\tfor (int i = 0;   i < n;   i++)   /* a comment */
\t\ta[i]   =  /* c */ SCALE(i) +   b[i];
}
"""


@pytest.mark.skipif(shutil.which("objdump") is None, reason="binutils not installed")
def test_debug_columns_are_the_user_s(tmp_path):
    """Every column of the kernel's line table is where a token starts in the user's line."""
    env = clean_env(tmp_path / "cache")
    (tmp_path / "k.c").write_text(COLUMNS_C)
    report = tmp_path / "report.jsonl"
    run([PYCC, "-O1", "-g", "-c", "k.c"], tmp_path, dict(env, PYCC_REPORT=str(report)))
    (unit,) = units_for(read_report(report), "k.c")
    assert functions_of(unit)["scaled"]["compiled_by"] == "pycc-stencil"
    program = run(["objdump", "--dwarf=rawline", "k.o"], tmp_path, env).stdout
    rows, column = [], 0
    for opcode in program.splitlines():
        if match := re.search(r"Set column to (\d+)", opcode):
            column = int(match.group(1))
        elif match := re.search(r"Line by -?\d+ to (\d+)", opcode):
            rows.append((int(match.group(1)), column))
    lines = COLUMNS_C.split("\n")
    starts = {
        number: {m.start() + 1 for m in re.finditer(r"\w+|[^\s\w]", lines[number - 1])}
        for number in (4, 5)
    }
    columns = {(line, column) for line, column in rows if line in starts and column}
    assert {line for line, _ in columns} == {4, 5}, program
    assert all(column in starts[line] for line, column in columns), columns
