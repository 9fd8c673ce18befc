"""What gcc accepts in old C (issue 14 §2): K&R and unprototyped definitions, implicit `int`
and implicit function declarations, intrinsic headers, `assert`, and where refusals point.

libclang 18 rejects as errors what gcc 12 only warns about; a file that cc builds must still
have its kernels lowered. Compiler-mode tests build `k.c` with cc and with pycc-stencil, link
both with a `main.c` built by cc, run them and compare (`test_dropin_unit.build_both`); the
report says which functions pycc-stencil took, so a feature that silently does nothing (every
function left to cc) fails. `check` tests prove the lowered kernels bit-exact against cc.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest
import test_dropin_unit
from pycc_stencil.frontend import lower_file
from pycc_stencil.runtime.check import CheckOptions, check_file
from test_compiler_mode import CC, PYCC, clean_env, functions_of, read_report, run, units_for
from test_dropin_unit import assert_by_pycc, build_both

#: the compiler-mode tests need the installed `pycc-stencil`
compiler_mode = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")


@pytest.fixture(autouse=True)
def take_over_all(monkeypatch):
    """Kernels are taken over whether or not a pass improves them (main's coming default
    takes over only improved kernels; these tests are about the front end)."""
    monkeypatch.setattr(
        test_dropin_unit,
        "clean_env",
        lambda cache, **extra: clean_env(cache, PYCC_TAKEOVER="all", **extra),
    )


def check_source(tmp_path: Path, source: str, params: dict[str, str], flags=("-std=gnu99",)):
    path = tmp_path / "k.c"
    path.write_text(textwrap.dedent(source))
    return {r.name: r for r in check_file(path, list(flags), CheckOptions(params=params))}


def lower_source(tmp_path: Path, source: str, flags=()):
    path = tmp_path / "k.c"
    path.write_text(textwrap.dedent(source))
    return lower_file(str(path), list(flags))


# ---------------------------------------------------------------- K&R and unprototyped
KR_C = """\
void axpy(n, a, x, y)
    int n; float a; float *x, *y;
{
    int i;
    for (i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

int sum_squares()
{
    int i, s = 0;
    for (i = 0; i < 10; i++)
        s += i * i;
    return s;
}

void nothing() { }

void calls_wrongly(float *y, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        nothing(i);
        y[i] += 1;
    }
}

void uses_both(y, n) float *y;
{
    int i;
    for (i = 0; i < n; i++)
        y[i] += sum_squares();
}
"""

KR_MAIN = """\
#include <stdio.h>
void axpy(), uses_both(), calls_wrongly();
int sum_squares();
int main(void)
{
    float x[5] = {1.25f, -2.5f, 3.0f, 0.1f, 7.75f}, y[5] = {0.5f, 0.3f, -1.0f, 2.0f, 1e-3f};
    int i;
    axpy(5, 1.1f, x, y);           /* 1.1f is passed as a double */
    uses_both(y, 5);
    calls_wrongly(y, 5);
    for (i = 0; i < 5; i++)
        printf("%a\\n", y[i]);
    printf("%d\\n", sum_squares());
    return 0;
}
"""


@compiler_mode
def test_k_and_r_and_unprototyped_kernels_called_from_cc_code(tmp_path):
    """main.c (cc) calls the K&R kernel with a float promoted to double and the
    unprototyped ones; a call whose arguments the definition does not take costs only
    its caller."""
    both = build_both(tmp_path, {"k.c": KR_C, "main.c": KR_MAIN}, ["-O2"])
    assert both.pycc_output == both.cc_output
    assert_by_pycc(both, "axpy", "sum_squares", "uses_both")
    refused = both.functions["calls_wrongly"]
    assert refused["compiled_by"] == "cc"
    assert "calls 'nothing' with arguments that do not match its definition" in refused["reason"]


def test_k_and_r_and_unprototyped_kernels_are_bit_exact(tmp_path):
    results = check_source(tmp_path, KR_C, {"n": "37", "a": "1.5"})
    for name in ("axpy", "sum_squares", "uses_both"):
        assert results[name].status == "OK", results[name]
    assert results["calls_wrongly"].status == "SKIPPED"
    assert "k.c:23:9: calls 'nothing'" in str(results["calls_wrongly"])


# ---------------------------------------------------------------- implicit declarations
IMPLICIT_C = """\
static const float table[4] = {0.5f, 1.5f, 2.5f, 3.5f};

setup(a, n) float *a;
{
    int i;
    for (i = 0; i < n; i++)
        a[i] = twice(i) + table[i & 3];
    return n;
}

print_all(a, n) float *a;
{
    int i;
    for (i = 0; i < n; i++)
        printf("%a\\n", a[i]);
}

void smooth(float *a, int n)
{
    int i;
    for (i = 1; i < n - 1; i++)
        a[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0f;
}

void outside(float *a, int n)
{
    int i;
    for (i = 0; i < n; i++)
        a[i] = external_scale(i);
}

void roots(float *a, int n)
{
    int i;
    for (i = 0; i < n; i++)
        a[i] = sqrt(a[i]);
}

twice(x) { return 2 * x; }
"""

IMPLICIT_MAIN = """\
int setup(), print_all();
void smooth(float *, int), outside(float *, int);
int external_scale(int i) { return 3 * i; }
int main(void)
{
    float a[9], b[9];
    print_all(a, setup(a, 9));
    smooth(a, 9);
    outside(b, 9);
    print_all(a, 9);
    print_all(b, 9);
    return 0;
}
"""


@compiler_mode
def test_a_file_with_implicit_declarations_still_has_its_kernels_taken(tmp_path):
    """libclang 18 rejected the whole file (implicit int, calls to undeclared functions);
    gcc only warns. A call to an undeclared function defined later is a call to `int f()`
    as gcc makes it; one to an undeclared external function is refused, naming it."""
    both = build_both(tmp_path, {"k.c": IMPLICIT_C, "main.c": IMPLICIT_MAIN}, ["-O2"])
    assert both.pycc_output == both.cc_output
    assert_by_pycc(both, "setup", "smooth")
    assert "undeclared function 'external_scale'" in both.functions["outside"]["reason"]
    assert "undeclared library function 'sqrt'" in both.functions["roots"]["reason"]
    assert both.functions["print_all"]["compiled_by"] == "cc"


def test_implicit_declarations_are_read_as_gcc_reads_them(tmp_path):
    """An undeclared `sqrt` is gcc's builtin, or `int sqrt()` under -fno-builtin (as the
    reference of `check` is built): refused, not lowered as the builtin."""
    results = check_source(tmp_path, IMPLICIT_C, {"n": "37"})
    assert "k.c:36:16: call to undeclared library function 'sqrt'" in str(results["roots"])
    assert results["setup"].status == "OK" and results["smooth"].status == "OK"
    assert "k.c:29:16: call to undeclared function 'external_scale' (gcc assumes 'int " in str(
        results["outside"]
    )


def test_return_without_a_value_in_an_int_function(tmp_path):
    """`return;` in an `int` function and `return x;` in a void one: gcc warns, clang
    rejected; the value returned is indeterminate (not compared here)."""
    results = check_source(
        tmp_path,
        """
        first_negative(a, n) int *a;
        {
            int i;
            for (i = 0; i < n; i++) { if (a[i] < 0) return; a[i] += 1; }
        }
        void bump(int *a, int n) { int i; for (i = 0; i < n; i++) a[i]++; return 0; }
        """,
        {"n": "37"},
    )
    assert results["bump"].status == "OK", results["bump"]
    lowered = lower_source(
        tmp_path, "int f(int *a) { int i; for (i = 0; i < 3; i++) if (a[i]) return; }\n"
    )
    assert "ret i32 undef" in str(lowered.module.get_global("f"))


# ---------------------------------------------------------------- intrinsic headers
HELPERS_H = """\
static inline int twice(int x) { int dbl(int y) { return 2 * y; } return dbl(x); }
static inline float sq(float x) { return x * x; }
static inline float sq_plus(float x) { return sq(x) + ((x > 0 ? '}' : '{') == '}'); }
static inline float unused(float x) { return x - 1; }
struct pair { int a, b; };
static const int table[2] = { 1, 2 };
"""

SIMD_C = """\
#include <immintrin.h>
#include <helpers.h>
void add4(float *a, const float *b, int n)
{
    for (int i = 0; i + 4 <= n; i += 4)
        _mm_storeu_ps(a + i, _mm_add_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i)));
}
void squares(float *a, int n) { for (int i = 0; i < n; i++) a[i] = sq_plus(a[i]); }
void doubles(int *a, int n) { for (int i = 0; i < n; i++) a[i] = twice(a[i]) + table[i & 1]; }
"""

SIMD_MAIN = """\
#include <stdio.h>
void add4(float *, const float *, int), squares(float *, int), doubles(int *, int);
int main(void)
{
    float a[8] = {1, -2.5f, 3, 0.25f, 5, 6, -7, 8}, b[8] = {0.5f, 1, 2, 3, 4, 5, 6, 7};
    int c[5] = {1, 2, 3, 4, 5};
    add4(a, b, 8);
    squares(a, 8);
    doubles(c, 5);
    for (int i = 0; i < 8; i++)
        printf("%a %d\\n", a[i], c[i % 5]);
    return 0;
}
"""


@compiler_mode
def test_a_file_including_immintrin_keeps_its_other_kernels(tmp_path):
    """The intrinsic kernel is refused naming the intrinsic; a kernel calling a system
    header's inline helpers (which call others) is taken over with their bodies intact,
    one calling a helper libclang cannot read (a GNU nested function) is refused."""
    files = {"k.c": SIMD_C, "main.c": SIMD_MAIN, "helpers.h": HELPERS_H}
    both = build_both(tmp_path, files, ["-O2", "-isystem", "."])
    assert both.pycc_output == both.cc_output
    assert_by_pycc(both, "squares")
    assert (
        "the intrinsic '_mm_loadu_ps' of <xmmintrin.h> is not supported"
        in (both.functions["add4"]["reason"])
    )
    assert (
        "libclang cannot read its definition: function definition is not allowed here"
        in (both.functions["doubles"]["reason"])
    )


def test_check_of_a_file_including_immintrin(tmp_path):
    """`check` refused the whole file (libclang's errors in gcc's intrinsic headers)."""
    (tmp_path / "helpers.h").write_text(HELPERS_H)
    results = check_source(tmp_path, SIMD_C, {"n": "37"}, ("-std=gnu99", "-isystem", str(tmp_path)))
    assert results["squares"].status == "OK", results["squares"]
    assert "k.c:6:41: the intrinsic '_mm_loadu_ps' of <xmmintrin.h>" in str(results["add4"])
    assert "helpers.h:1:49: libclang cannot read its definition" in str(results["doubles"])


def test_unused_header_bodies_are_blanked_before_libclang_reads_the_unit(tmp_path):
    """gcc's intrinsic headers cost libclang thousands of errors and most of its time; the
    bodies no kernel reaches are blanked (offsets and lines unchanged), the others kept."""
    from pycc_stencil.frontend.header_bodies import without_unused_header_bodies
    from pycc_stencil.frontend.parse import parse

    (tmp_path / "helpers.h").write_text(HELPERS_H)
    source = tmp_path / "k.c"
    source.write_text(SIMD_C)
    unit = tmp_path / "k.i"
    subprocess.run(
        ["cc", "-E", "-isystem", str(tmp_path), str(source), "-o", str(unit)], check=True
    )
    text = unit.read_bytes()
    blanked, offsets = without_unused_header_bodies(text)
    assert len(blanked) == len(text) and blanked.count(b"\n") == text.count(b"\n")
    for kept in (b"return x * x;", b"return sq(x) + ((x > 0 ? '}' : '{') == '}');"):
        assert kept in blanked
    assert b"return x - 1;" not in blanked and b"return x - 1;" in text
    assert b"__builtin_ia32_addss" in text and b"__builtin_ia32_addss" not in blanked
    assert text.index(b"{ return x - 1; }") in offsets
    assert len(parse(str(unit), [], preprocessed=True).header_errors.get(str(unit), [])) < 100


# ---------------------------------------------------------------- assert
ASSERT_C = """\
#include <assert.h>
#define MAX(a, b) ({ __typeof__(a) a_ = (a), b_ = (b); a_ > b_ ? a_ : b_; })
void clamp(float *a, int n, float limit)
{
    for (int i = 0; i < n; i++) {
        assert(a[i] < limit && "a value past the limit");
        a[i] = MAX(a[i] * 2, 1.0f);
    }
}
"""

ASSERT_MAIN = """\
#include <stdio.h>
void clamp(float *, int, float);
int main(int argc, char **argv)
{
    float a[6] = {0.25f, 3, -1, 7.5f, 2, 0.5f};
    clamp(a, 6, argc > 1 ? 5.0f : 100.0f);
    for (int i = 0; i < 6; i++)
        printf("%a\\n", a[i]);
    return 0;
}
"""


@compiler_mode
def test_assert_fails_as_in_the_cc_built_program(tmp_path):
    """glibc's `__assert_fail` with the strings cc's program passes: the same message
    (expression, file, line, gcc's `__PRETTY_FUNCTION__`, which is the name in C), abort."""
    both = build_both(tmp_path, {"k.c": ASSERT_C, "main.c": ASSERT_MAIN}, ["-O2"])
    assert both.pycc_output == both.cc_output
    assert_by_pycc(both, "clamp")
    failed = [
        subprocess.run(["./app", "fail"], cwd=d, capture_output=True, text=True)
        for d in (both.cc_dir, both.pycc_dir)
    ]
    assert failed[0].returncode == failed[1].returncode == -6  # SIGABRT
    assert failed[0].stderr == failed[1].stderr
    assert 'k.c:6: clamp: Assertion `a[i] < limit && "a value past the limit"\' failed.' in (
        failed[1].stderr
    )


def test_assert_and_statement_expressions_are_bit_exact(tmp_path):
    results = check_source(tmp_path, ASSERT_C, {"n": "37", "limit": "1e30"})
    assert results["clamp"].status == "OK", results["clamp"]
    ir_text = str(lower_source(tmp_path, ASSERT_C).module)
    assert 'call void @"__assert_fail"' in ir_text and 'c"clamp\\00"' in ir_text


# ---------------------------------------------------------------- what refusals say
NAMED_C = """\
#include <stddef.h>
struct pair { int a, b; };
#define KIND(x) _Generic((x), float: 1, default: 0)
void generic(float *a, int n) { for (int i = 0; i < n; i++) a[i] += KIND(a[i]); }
void offset(float *a, int n) { for (int i = 0; i < n; i++) a[i] += offsetof(struct pair,
                                                                           b); }
void popcount(int *a, int n) { for (int i = 0; i < n; i++) a[i] = __builtin_popcount(a[i]); }
void fallthrough(int *a, int n)
{
    for (int i = 0; i < n; i++)
        switch (a[i] & 3) { case 1: a[i]++; __attribute__((fallthrough)); case 2: a[i]++; }
}
void pragma(int *a, int n)
{
#pragma clang loop unroll(disable)
    for (int i = 0; i < n; i++) a[i] *= 3;
}
"""


def test_refusals_name_the_construct_and_its_place(tmp_path):
    """Once `expression '' is not supported` (a macro of a header), `statement
    'unexposed_stmt'`, `external function '__builtin_popcount'`, and in a cc -E unit the
    line markers in the text of a construct cc spread over lines."""
    results = check_source(tmp_path, NAMED_C, {"n": "37"})
    expected = {
        "generic": (4, "KIND", "'_Generic' is not supported"),
        "offset": (5, "offsetof", "the expansion of macro 'offsetof' is not supported here"),
        "popcount": (7, "__builtin_popcount", "the builtin '__builtin_popcount' is not supported"),
    }
    lines = NAMED_C.splitlines()
    for name, (line, token, message) in expected.items():
        column = lines[line - 1].index(token) + 1
        assert f"k.c:{line}:{column}: {message}" in str(results[name]), results[name]
    assert results["fallthrough"].status == "OK" and results["pragma"].status == "OK"
    unit = tmp_path / "k.i"
    subprocess.run(["cc", "-E", str(tmp_path / "k.c"), "-o", str(unit)], check=True)
    reasons = {s.name: s.reason for s in lower_file(str(unit), preprocessed=True).skipped}
    assert reasons["offset"] == "'__builtin_offsetof' is not supported"
    assert reasons["generic"] == "'_Generic' is not supported"


def test_an_internal_error_without_a_message_says_where(tmp_path, monkeypatch):
    """`internal front-end error (AssertionError: )` was all an unprototyped definition
    gave; now the front end's own place is named."""
    from pycc_stencil.frontend import statements

    def broken(self):
        raise AssertionError

    monkeypatch.setattr(statements.FunctionLowerer, "prescan", broken)
    (skip,) = lower_source(tmp_path, "void f(int *a) { a[0] = 1; }\n").skipped
    assert re.fullmatch(
        r"internal front-end error \(AssertionError at test_old_c\.py:\d+\); please report it",
        skip.reason,
    )


# ---------------------------------------------------------------- a whole old program
OLD_PROGRAM = """\
#include <stdio.h>

main(argc, argv) char **argv;
{
    float grid[64];
    int i, steps = argc > 1 ? 3 : 2;
    init(grid, 64);
    for (i = 0; i < steps; i++)
        relax(grid, 64);
    for (i = 0; i < 64; i += 9)
        printf("%a\\n", grid[i]);
    return 0;
}

init(g, n) float *g;
{
    int i;
    for (i = 0; i < n; i++)
        g[i] = (i * 7 % 13) * 0.125f;
}

relax(g, n) float *g;
{
    int i;
    for (i = 1; i < n - 1; i++)
        g[i] = 0.25f * g[i - 1] + 0.5f * g[i] + 0.25f * g[i + 1];
}
"""


@compiler_mode
def test_a_main_file_with_implicit_declarations_keeps_its_kernels(tmp_path):
    """Rodinia's and NPB's main files (`main(argc, argv)`, calls to functions defined
    after them) were refused whole: libclang 18 rejects implicit int and implicit
    declarations. Built and linked in one command by cc and by pycc-stencil."""
    env = clean_env(tmp_path / "cache", PYCC_TAKEOVER="all")
    report = tmp_path / "report.jsonl"
    outputs = {}
    for side, compiler in (("cc", CC), ("pycc", PYCC)):
        d = tmp_path / side
        d.mkdir()
        (d / "prog.c").write_text(OLD_PROGRAM)
        run([compiler, "-O2", "prog.c", "-o", "app"], d, dict(env, PYCC_REPORT=str(report)))
        outputs[side] = run(["./app"], d, env).stdout
    assert outputs["pycc"] == outputs["cc"]
    (unit,) = units_for(read_report(report), "prog.c")
    functions = functions_of(unit)
    assert {n for n, f in functions.items() if f["compiled_by"] == "pycc-stencil"} == {
        "main",  # its printf is a call into the C library
        "init",
        "relax",
    }, functions


def test_string_literals_are_constants(tmp_path):
    """What `assert(e && "why")` needs, and indexing a literal; a char array initialized by
    one is still refused, saying so (was: `array initializer is not a brace-enclosed list`)."""
    results = check_source(
        tmp_path,
        """
        void index(int *a, int n)
        {
            const char *p = "hello";
            for (int i = 0; i < n; i++) a[i] += p[i % 5] + (p != 0) + "\\xff\\x80"[i & 1];
        }
        void array(int *a, int n)
        {
            char s[4] = "abc";
            for (int i = 0; i < n; i++) a[i] += s[i & 3];
        }
        """,
        {"n": "37"},
    )
    assert results["index"].status == "OK", results["index"]
    assert "k.c:9:17: arrays initialized by a string literal are not supported" in str(
        results["array"]
    )
