"""The token scan that leaves a file to cc before parsing it at -O3 (`dropin_prescan`): it must
find every nest the locality passes could transform, and it must leave out files that have none
(without it every file of a project is parsed)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from pycc_stencil.dropin_prescan import TINY_NEST_BYTES, has_locality_nest, locality_candidates
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from pycc_stencil.ir_passes.presets import LOCALITY_PASSES
from test_compiler_mode import CC, PYCC, clean_env

CORPUS = Path(__file__).parent / "corpus"
HOST = host_target()

ITERATED = """
void jacobi(int T, int n, double *a, double *b) {
    for (int t = 0; t < T; t++) {
        for (int i = 1; i < n - 1; i++) b[i] = (a[i-1] + a[i] + a[i+1]) / 3.0;
        for (int i = 1; i < n - 1; i++) a[i] = b[i];
    }
}
"""


@pytest.mark.parametrize(
    "code, candidate",
    [
        (ITERATED, True),
        # a pipeline of two single loops
        ("void f(int n, float *a, float *b, float *c) {\n"
         " for (int i = 0; i < n; i++) b[i] = a[i] * 2;\n"
         " for (int i = 1; i < n; i++) c[i] = b[i] + b[i-1]; }", True),
        ("void f(int n, float *a) { for (int i = 0; i < n; i++) a[i] = 0; }", False),
        # arithmetic calls, casts, sizeof and a braceless nest are in the model's reach
        ("void f(int n, double a[n][n]) { for (int i = 0; i < n; i++)\n"
         " for (int j = 0; j < n; j++) a[i][j] = sqrt((double)fabsf(a[i][j])) + sizeof(int)\n"
         " + __builtin_fma(1.0, 2.0, 3.0); }", True),
        # a condition, a jump, a call or a do loop in the nest put it outside the model
        (ITERATED.replace("b[i] = (", "if (a[i] > 0) b[i] = ("), False),
        (ITERATED.replace("a[i] = b[i];", "{ a[i] = b[i]; if (a[i]) break; }"), False),
        (ITERATED.replace("a[i] = b[i];", "a[i] = b[i] && a[i];"), False),
        (ITERATED.replace("a[i] = b[i];", "a[i] = clamp(b[i]);"), False),
        # a do-while time loop is tested before its body (ir_passes/core/rotation.py); a
        # do-while inside a nest stays outside the model
        ("void f(int n, int m, float *a) { int i = 0; do { for (int j = 0; j < m; j++)"
         " a[j] += 1; } while (++i < n); }", True),
        ("void f(int n, int m, float *a) { for (int i = 0; i < n; i++) { int j = 0; do {"
         " a[j] += a[j + 1]; } while (++j < m); } }", False),
        # a SCoP is a run of the function's outermost loops: the nests inside a loop the
        # model refuses are never transformed
        ("void f(int n, double *a, double *b) { while (1) {\n"
         + ITERATED.split("{\n", 1)[1].rsplit("}", 1)[0]
         + " if (a[0] < 1) break; } }", False),
        # words in comments and strings are not code
        (ITERATED.replace("b[i] = (", "/* if (x) */ b[i] = ("), True),
        # old-style (K&R) definitions are functions too
        ("void f(n, a, b) int n; double *a, *b;" + ITERATED.split(")", 1)[1], True),
        # a counter declared unsigned: the model's loop tests are signed comparisons
        (ITERATED.replace("for (int i", "for (unsigned i"), False),
        (ITERATED.replace("for (int", "for (size_t"), False),
        # ... unless only the loop's header reads it (a time loop: rewritten to a signed one)
        (ITERATED.replace("for (int t", "for (unsigned t"), True),
        (ITERATED.replace("for (int t", "for (unsigned long t"), True),
        (ITERATED.replace("for (int t", "for (unsigned t").replace("b[i];", "b[i] + t;"), False),
        # a pointer that walks (in the body or the loop's header) is no invariant base
        ("void f(int n, int m, float *a) { for (int y = 0; y < n; y++) {\n"
         " for (int x = 0; x < m - 1; x++) a[x] = a[x] + a[x+1]; a += m; } }", False),
        ("void f(int n, int m, float *a) { for (int y = 0; y < n; ++y, a += m)\n"
         " for (int x = 0; x < m - 1; x++) a[x] = a[x] + a[x+1]; }", False),
        ("void f(int n, int m, float *a) { for (int y = 0; y < n; y++)\n"
         " for (int x = 0; x < m - 1; x++) a[y*m + x] = a[y*m + x] + (a)[y*m + x+1]; }", True),
        # ... but a counter declared an integer is no pointer, in a row's address too
        ("void f(int T, int n, double *a, double *b) { for (int t = 0; t < T; t++) {\n"
         " for (int i = 1; i < n - 1; i++) for (int j = 0; j < n; j++)\n"
         "  (b + i*n)[j] = (a + (i-1)*n)[j] + (a + (i+1)*n)[j];\n"
         " for (int i = 1; i < n - 1; i++) for (int j = 0; j < n; j++)\n"
         "  (a + i*n)[j] = (b + i*n)[j]; } }", True),
        ("void f(int n, int m, float *a) { int y, x, *p = 0;\n"
         " for (y = 0; y < n; y++) for (x = 0; x < m - 1; x++) (a + y*m)[x] += (a + y*m)[x+1]; }",
         True),
        # a subscript loaded from memory
        (ITERATED.replace("a[i] = b[i];", "a[i] = b[lut[i]];"), False),
        # no array carries data: one sweep, a reduction, a second nest reading other arrays
        ("void f(int n, double a[n][n], double b[n][n]) { for (int i = 1; i < n; i++)\n"
         " for (int j = 1; j < n; j++) b[i][j] = a[i-1][j] + a[i][j-1]; }", False),
        ("int f(int n, const unsigned char *a) { int s = 0; for (int i = 0; i < n; i++)\n"
         " for (int j = 0; j < n; j++) s += a[i*n + j] * a[i*n + j]; return s; }", False),
        ("void f(int n, float *a, float *b, float *c, float *d) {\n"
         " for (int i = 0; i < n; i++) b[i] = a[i] * 2;\n"
         " for (int i = 1; i < n; i++) d[i] = c[i] + c[i-1]; }", False),
        # ... unless under another name, a pointer swap, a store through a pointer
        ("void f(int n, float *a, float *b, float *c) { float *w = b;\n"
         " for (int i = 0; i < n; i++) w[i] = a[i] * 2;\n"
         " for (int i = 1; i < n; i++) c[i] = b[i] + b[i-1]; }", True),
        ("void f(int T, int n, double *a, double *b) { for (int t = 0; t < T; t++) {\n"
         " for (int i = 1; i < n - 1; i++) b[i] = a[i-1] + a[i+1];\n"
         " double *s = a; a = b; b = s; } }", True),
        ("void f(int n, float *a, float *b, float *c) {\n"
         " for (int i = 0; i < n; i++) *(b + i) = a[i] * 2;\n"
         " for (int i = 1; i < n; i++) c[i] = b[i] + b[i-1]; }", True),
        # a member is an array of its struct: `s->a` is not `t->a`
        ("void f(int n, struct S *s, struct S *t) {\n"
         " for (int i = 0; i < n; i++) s->a[i] = i;\n"
         " for (int i = 0; i < n; i++) s->b[i] = t->a[i]; }", False),
        ("void f(int n, struct S *s, struct S *t) {\n"
         " for (int i = 0; i < n; i++) s->a[i] = i;\n"
         " for (int i = 0; i < n; i++) s->b[i] = s->a[i]; }", True),
        # a call of a function declared, not defined, in the unit outside the nest: a call
        # into another object; setjmp and the like make the front end refuse the function
        ("void g(void);\n" + ITERATED.replace("{\n", "{\n g();\n", 1), True),
        (ITERATED.replace("{\n", "{\n memset(a, 0, 8);\n", 1), True),
        ("int _setjmp(void *);\n" + ITERATED.replace("{\n", "{\n _setjmp(a);\n", 1), False),
        ("int _setjmp(void *p) { return 0; }\n"
         + ITERATED.replace("{\n", "{\n _setjmp(a);\n", 1), True),
        # ... inside the nest, any call but an arithmetic one is outside the model
        ("void g(void);\n" + ITERATED.replace("a[i] = b[i];", "{ a[i] = b[i]; g(); }"), False),
        # a function of the unit is inlined: in the model unless it branches or recurses
        ("static double twice(double x) { return 2 * x; }\n"
         + ITERATED.replace("a[i] = b[i];", "a[i] = twice(b[i]);"), True),
        ("static double clip(double x) { return x < 0 ? 0 : x; }\n"
         + ITERATED.replace("a[i] = b[i];", "a[i] = clip(b[i]);"), False),
        ("static double up(double x) { if (x > 0) return x; return 0; }\n"
         + ITERATED.replace("a[i] = b[i];", "a[i] = up(b[i]);"), False),
        ("static double r(double x) { return x < 1 ? x : r(x / 2); }\n"
         + ITERATED.replace("a[i] = b[i];", "a[i] = r(b[i]);"), False),
        ("static double r(double x) { return r(x / 2); }\n"
         + ITERATED.replace("a[i] = b[i];", "a[i] = r(b[i]);"), False),
        # ... and a function with a goto or an asm statement
        (ITERATED.replace("{\n", "{\n if (!n) goto out;\n", 1).replace("\n}\n", "out:;}"),
         False),
        (ITERATED.replace("{\n", '{\n __asm__ volatile("" ::: "memory");\n', 1), False),
        # nests in the two branches of an `if` are no pipeline (one of them runs) ...
        ("void f(int n, int c, float *a, float *b) { int i; if (c) {\n"
         " for (i = 0; i < n; i++) a[i] = b[i] * 2; } else {\n"
         " for (i = 1; i < n; i++) b[i] = a[i] + a[i-1]; } }", False),
        # ... but a nest after the `if` may read what a branch wrote
        ("void f(int n, int c, float *a, float *b) { int i; if (c) {\n"
         " for (i = 0; i < n; i++) a[i] = b[i] * 2; }\n"
         " for (i = 1; i < n; i++) b[i] = a[i] + a[i-1]; }", True),
        # loops of literal bounds touching a few KiB at most: their arrays fit any L2
        (ITERATED.replace("t < T", "t < 4").replace("i < n - 1", "i < 4 + 4"), False),
        ("void f(float *a, float *b) { int i, s;\n for (s = 0, i = 2; i <= 15; i += 1)"
         " a[i] = a[1];\n for (i = 15; i >= 0; --i) b[i] = a[i] * 2; }", False),
        (ITERATED.replace("t < T", "t < 4").replace("i < n - 1", "i < 1000"), True),
        (ITERATED.replace("t < T", "t < 4"), True),
        # a system header's functions are never kernels
        ('# 1 "/usr/include/x.h" 1 3 4\n' + ITERATED + '# 3 "k.c" 2\nint x;', False),
        ('# 1 "k.h" 1\n' + ITERATED + '# 3 "k.c" 2\nint x;', True),
    ],
)  # fmt: skip
def test_scan(code, candidate):
    assert has_locality_nest(code.encode()) is candidate


GEMM = """
void gemm(int n, double alpha, double C[n][n], double A[n][n], double B[n][n]) {
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) C[i][j] *= 0.5;
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++) C[i][j] += alpha * A[i][k] * B[k][j];
    }
}
"""
PIPELINE = """
void f(int n, float *a, float *b, float *c) {
    for (int i = 0; i < n; i++) b[i] = a[i] * 2;
    for (int i = 1; i < n; i++) c[i] = b[i] + b[i-1];
}
"""
CARRIED = "{ C[i][j] *= g; g = C[i][j]; }"
TIME_LOOP = "for (int t = 0; t < T; t++) {"
#: a histogram by a member (`{}`: what the pointer to each record is), then read in a branch
HISTOGRAM = (
    "struct Info {{ int seg; }};\nvoid f(int n, const struct Info *info, int *out) {{\n"
    " int p[4] = {{0}};\n for (int k = 0; k < n; k++) {{ const struct Info *mb = {};"
    " ++p[mb->seg]; }}\n if (out) for (int k = 0; k < 4; k++) out[k] = p[k]; }}\n"
)


@pytest.mark.parametrize(
    "code, candidate",
    [
        # a counter stepping by other than +1 that its loop reads (a time loop that only
        # counts is rewritten to count up)
        (ITERATED.replace("for (int i = 1; i < n - 1; i++) b", "for (int i = n - 2; i > 0; i--) b"),
         False),
        (ITERATED.replace("i < n - 1; i++) b", "i < n - 1; i += 2) b"), False),
        (ITERATED.replace("i < n - 1; i++) b", "i < n - 1; i += T) b"), False),
        (ITERATED.replace("for (int t = 0; t < T; t++)", "for (int t = T; t > 0; t -= 2)"), True),
        # the outer loop only picks the row the nest updates: no time loop (gemm, syrk)
        (GEMM, False),
        (GEMM.replace("C[i][j] *= 0.5", "C[i][j] = C[i][j] * 0.5 + C[i-1][j]"), True),
        (GEMM.replace("C[i][j] += alpha", "C[j][i] += alpha"), True),
        (GEMM.replace("for (int k", "for (int i"), True),  # another `i` inside
        (GEMM.replace("C[i][j] *= 0.5;", "{ C[i][j] *= 0.5; i = i; }"), True),
        (GEMM.replace("(int n,", "(int n, double (*D)[8],").replace("*= 0.5;", "*= 0.5, D = C;"),
         True),
        # a value carried through a global, a member or a local whose address is taken
        ("double g;\n" + GEMM.replace("C[i][j] *= 0.5;", CARRIED), True),
        (GEMM.replace("C[i][j] *= 0.5;", CARRIED.replace("g", "s->g"))
         .replace("(int n,", "(struct S *s, int n,"), True),
        (GEMM.replace("{\n    for", "{ double g = 0, *p = &g;\n    for")
         .replace("C[i][j] *= 0.5;", CARRIED), True),
        (GEMM.replace("{\n    for", "{ double g = 0;\n    for")
         .replace("C[i][j] *= 0.5;", "{ g = C[i][j]; C[i][j] = g * 0.5; }"), False),
        # `?:` branches (floyd-warshall's `min`), in the loop's header as in its body
        (ITERATED.replace("a[i] = b[i];", "a[i] = b[i] > 0 ? b[i] : 0;"), False),
        (ITERATED.replace("t < T", "t < (T > 4 ? T : 4)"), False),
        # a store between the sweeps of the time loop, or an imperfect sweep
        (ITERATED.replace(TIME_LOOP, TIME_LOOP + " a[0] = t;"), False),
        (ITERATED.replace(TIME_LOOP, TIME_LOOP + " double *s = a;"), True),
        ("void f(int T, int n, double a[n][n]) { for (int t = 0; t < T; t++)\n"
         " for (int i = 1; i < n; i++) { a[i][0] = 0; for (int j = 1; j < n; j++)"
         " a[i][j] = a[i-1][j-1]; } }", False),
        ("void f(int T, int n, double a[n][n]) { for (int t = 0; t < T; t++)\n"
         " for (int i = 1; i < n; i++) { double x = 0; for (int j = 1; j < n; j++)"
         " a[i][j] = a[i-1][j-1] + x; } }", True),
        # what the scan cannot follow refutes nothing (each transformed by the passes): a
        # cast's or an expression's names before a subscript, `sizeof`, a loop that leaves
        # at the end of its first pass (no loop in the IR)
        ("void k(int n, void *in, void *tmp, void *out) {\n"
         " for (int i = 1; i < n-1; i++) ((float *)tmp)[i] = ((const float *)in)[i-1];\n"
         " for (int i = 1; i < n-1; i++) ((float *)out)[i] = ((float *)tmp)[i-1]; }", True),
        (PIPELINE.replace("a[i] * 2", "a[i] * (float)sizeof b[0]"), True),
        ("void f(int T, int n, double *a, double *b) { for (;;) {\n"
         + ITERATED.split("{\n", 1)[1].rsplit("}", 1)[0] + " break; } }", True),
        ("_Alignas(64) double g[8];\n"
         + ITERATED.replace("{\n", "{\n _Alignas(64) double w[3] = {0};\n", 1), True),
        # a pipeline whose nests are not pure: recomputing a producer per tile is wrong
        (PIPELINE, True),
        (PIPELINE.replace("c[i] = b[i]", "c[i] = c[i] + b[i]"), False),
        (PIPELINE.replace("c[i] = b[i] + b[i-1]", "b[i] = b[i] + b[i-1]"), False),
        (PIPELINE.replace("b[i] = a[i] * 2", "b[i] = a[i] * c[i]"), False),
        (PIPELINE.replace("{\n", "{\n for (int i = 0; i < n; i++) a[i] = a[i] * a[i];\n", 1),
         True),
        (PIPELINE.replace("{\n", "{\n for (int i = 0; i < n; i++) c[i] = c[i] * c[i];\n", 1),
         True),
        (PIPELINE.replace("b[i] = a[i] * 2;", "b[i] = a[i] * 2;\n for (int i = 0; i < n; i++)"
                          " b[i] = b[i] + 1;"), False),
        (PIPELINE.replace("b[i] = a[i] * 2;", "b[i] = a[i] * 2;\n if (n > 8)"
                          " for (int i = 0; i < n; i++) b[i] = b[i] + 1;"), True),
        (PIPELINE.replace("b[i] = a[i] * 2;", "b[i] = a[i] * 2;\n for (int i = 0; i < n; i++)"
                          " if (b[i] < 0) b[i] = 0;"), False),
        (PIPELINE.replace("float *c)", "float *c, float *d)")
         .replace("c[i] = b[i]", "c[i] = *d + b[i]"), True),
        # `do ... while (0)` is a loop that tests last (no counter: never rotated) or, once
        # a call is inlined, no loop at all: neither a time loop nor one more loop
        ("void f(int n, double *a) { do { for (int i = 1; i < n; i++) a[i] = a[i-1] + 1; }"
         " while (0); }", False),
        ("void f(int n, double *a) { do { for (int i = 1; i < n; i++) a[i] = a[i-1] + 1; }"
         " while ((0)); }", False),
        ("static double third(double x) { return x / 3.0; }\n"
         + ITERATED.replace(TIME_LOOP, "do { " + TIME_LOOP).replace("/ 3.0", "* third(1.0)")
         .replace("a[i] = b[i];\n    }", "a[i] = b[i];\n    } } while (0);"), True),
        # a do-while rotation cannot test first: no counter stepped by +1 in its test
        ("void f(int n, int m, float *a) { int k = n; do { for (int j = 1; j < m; j++)"
         " a[j] += a[j - 1]; k -= 2; } while (k > 0); }", False),
        ("void f(int n, int m, float *a) { int t = 0; do { for (int j = 1; j < m; j++)"
         " a[j] += a[j - 1]; t++; } while (t < n); }", True),
        # the `while` that ends a `do` is no second loop
        ("void f(const double *rgb, double *y, int w) { int i = 0; do { y[i] = rgb[i] + y[i];"
         " } while (++i < w); }", False),
        # a pointer to an array dereferenced and subscripted is the subscript's base
        ("typedef double Stats[8][64]; struct It { Stats *stats; };\n"
         "void z(int n, struct It *it) { for (int s = 0; s < n; s++)"
         " for (int i = 0; i < 64; i++) (*it->stats)[s][i] = 0; }", False),
        ("void h(int T, int n, double (*g)[1]) { for (int t = 0; t < T; t++)"
         " for (int i = 1; i < n - 1; i++) (*g)[i] = (*g)[i-1] + (*g)[i+1]; }", True),
        # a call through a pointer the body declares: the front end refuses the function
        ("typedef double (*Fn)(double); double sq(double), cube(double);\n"
         + ITERATED.replace("{\n", "{\n const Fn f = n > 4 ? sq : cube;\n", 1)
         .rsplit("}", 1)[0] + " a[0] = f(a[0]); }", False),
        # a subscript read through a pointer the nest sets from its counter is loaded from
        # memory at an address each iteration moves (not one a pointer set once gives)
        (HISTOGRAM.format("&info[k]"), False),
        (HISTOGRAM.format("info"), True),
        # ... not a local of a system header function's name called outside its block
        # (declared in a system header, which the scan does not read)
        (ITERATED.replace("{\n", "{\n { double exp = 2.0; a[0] *= exp; }\n", 1)
         .rsplit("}", 1)[0] + " a[1] = exp(a[1]); }", True),
        # a time loop of literal bounds around a sweep the passes inline: not a tiny nest
        ("static void sweep(int n, double *a, double *b) {\n"
         + ITERATED.split(TIME_LOOP, 1)[1].rsplit("}", 2)[0]
         + "}\nvoid steps(int n, double *a, double *b) {"
         " for (int t = 0; t < 4; t++) sweep(n, a, b); }", True),
    ],
)  # fmt: skip
def test_the_scan_knows_which_nests_the_passes_refuse(tmp_path, code, candidate):
    """The nests the scan leaves out for their shape (an outer loop that carries nothing, a
    store between sweeps, an impure pipeline, nests inside a loop outside the model) are
    refused by the -O3 passes; where it cannot follow a name it keeps the nest."""
    assert has_locality_nest(code.encode()) is candidate
    if candidate:
        return
    path = tmp_path / "k.c"
    path.write_text(code)
    module = lower_file(str(path)).module
    applied = run_passes(module, parse_pipeline(LOCALITY_PASSES), target=HOST)
    assert "passed" not in {r.kind for r in applied.remarks}, applied.remarks


def test_ill_formed_code_gets_an_answer():
    """cc -E passes code cc then refuses (a loop cut short): every cut of a kernel, closed
    by a brace or not, gets an answer, never an exception."""
    for end in range(len(ITERATED)):
        for code in (ITERATED[:end], ITERATED[:end] + "}", ITERATED[:end] + " for ("):
            assert has_locality_nest(code.encode()) in (True, False)
            assert isinstance(locality_candidates(code.encode()), (set, type(None)))


def test_the_large_passes_refuse_nests_known_to_touch_little(tmp_path):
    """What makes the scan's literal-bounds rule sound: a SCoP whose bounds are constants and
    that touches at most `TINY_NEST_BYTES` is refused, even when a stride spreads its
    elements over megabytes (the span alone would let it through) or a parameter offsets
    its subscripts; the same nest with parameters as bounds is transformed."""
    constant = ITERATED.replace("int T, int n, ", "").replace("t < T", "t < 3")
    constant = constant.replace("n - 1", "15").replace(
        "double *a, double *b", "double a[16], double b[16]"
    )
    strided = constant.replace("double a[16], double b[16]", "double *a, double *b")
    strided = re.sub(r"\[(i[^]]*)\]", r"[(\1) * 100000]", strided)
    offset = constant.replace("double a[16], double b[16]", "int k, double *a, double *b")
    offset = re.sub(r"\[(i[^]]*)\]", r"[\1 + k]", offset)  # a parameter, in subscripts only
    cases = ((constant, False), (strided, False), (offset, False), (ITERATED, True))
    assert [has_locality_nest(code.encode()) for code, _ in cases] == [False] * 3 + [True]
    for code, transformed in cases:
        path = tmp_path / "k.c"
        path.write_text(code)
        module = lower_file(str(path)).module
        applied = run_passes(module, parse_pipeline("time-tile-large"), target=HOST)
        kinds = {r.kind for r in applied.remarks}
        assert ("passed" in kinds) is transformed, applied.remarks
        if not transformed:
            touched = re.findall(r"it touches (\d+) bytes", str(applied.remarks))
            assert touched and int(touched[0]) <= TINY_NEST_BYTES, applied.remarks


def _preprocessed(path: Path) -> bytes | None:
    done = subprocess.run([CC, "-E", str(path)], capture_output=True)
    return done.stdout if done.returncode == 0 else None


@pytest.mark.sweep  # the whole corpus both ways (9 s): the sweep (docs/testing.md)
def test_the_scan_never_refuses_what_the_passes_transform(tmp_path):
    """No corpus function the scan leaves out (the front end lowers only those it names) is
    one the -O3 passes transform: their remarks name no transformation (whether the data
    exceed the L2 is only known at run time). Whole files are left to cc among them."""
    refused, checked = [], 0
    for path in sorted(CORPUS.rglob("*.c")):
        text = _preprocessed(path)
        if text is None:
            continue
        candidates = locality_candidates(text)
        assert candidates is not None, path
        if not candidates:
            refused.append(path.name)
        unit = tmp_path / (path.stem + ".i")
        unit.write_bytes(text)
        try:
            every = lower_file(str(unit), preprocessed=True)
            others = set(every.order) - candidates
            lowered = lower_file(str(unit), preprocessed=True, only=others) if candidates else every
        except Exception:  # noqa: BLE001 - a file the front end refuses has nothing to tile
            continue
        applied = run_passes(lowered.module, parse_pipeline(LOCALITY_PASSES), target=HOST)
        tiled = {r.function for r in applied.remarks if r.kind == "passed"}
        assert not tiled - candidates, (path, tiled)
        checked += len(others)
    assert {"clamp.c", "threshold.c", "goto.c", "independent.c"} <= set(refused)
    assert checked >= 50, checked


def _compile(tmp_path: Path, code: str) -> tuple[dict, str]:
    (tmp_path / "k.c").write_text(code)
    report = tmp_path / "report.jsonl"
    env = clean_env(
        tmp_path / "cache",
        PYCC_TAKEOVER="",
        PYCC_REPORT=str(report),
        PYTHONPROFILEIMPORTTIME="1",
        PYCC_SERVER="0",  # the imports of this process, not a warm server's
    )
    done = subprocess.run(
        [PYCC, "-O3", "-c", "k.c"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    reference = subprocess.run([CC, "-O3", "-c", "k.c", "-o", "ref.o"], cwd=tmp_path)
    assert reference.returncode == 0
    return json.loads(report.read_text()), done.stderr


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_a_file_without_a_candidate_nest_is_not_parsed(tmp_path):
    unit, imports = _compile(tmp_path, "void f(int n, float *a) { for (int i = 0; i < n; i++)"
                                       " a[i] = a[i] > 0 ? a[i] : 0; }")  # fmt: skip
    assert unit["status"] == "passthrough" and "no loop nest" in unit["reason"], unit
    loaded = set(re.findall(r"[\w.]+$", imports, re.M))
    assert not {"clang.cindex", "llvmlite.binding", "islpy"} & loaded
    assert (tmp_path / "k.o").read_bytes() == (tmp_path / "ref.o").read_bytes()


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_a_file_with_a_candidate_nest_is_analysed(tmp_path):
    unit, imports = _compile(tmp_path, ITERATED)
    assert unit["status"] != "passthrough" and "clang.cindex" in imports, unit
    assert [f["name"] for f in unit["functions"]] == ["jacobi"]


def test_the_passes_leave_unsigned_counters_alone(tmp_path):
    """What the scan assumes of the model: a nest whose counters are unsigned is no SCoP."""
    path = tmp_path / "k.c"
    for declared in ("unsigned i", "unsigned long i"):
        path.write_text(ITERATED.replace("int i", declared))
        lowered = lower_file(str(path))
        applied = run_passes(lowered.module, parse_pipeline(LOCALITY_PASSES), target=HOST)
        assert not [r for r in applied.remarks if r.kind == "passed"], declared
    path.write_text(ITERATED)
    applied = run_passes(lower_file(str(path)).module, parse_pipeline(LOCALITY_PASSES), target=HOST)
    assert [r for r in applied.remarks if r.kind == "passed"], "the signed twin is not tiled"


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
def test_only_the_candidate_functions_are_lowered(tmp_path):
    """In a file with a candidate nest, the functions without one are not lowered either
    (reported as such, without a warning); the candidate is still tiled."""
    single = "void single(int n, double *a) { for (int i = 0; i < n; i++) a[i] = 2 * a[i]; }\n"
    unit, stderr = _compile(tmp_path, single + ITERATED)
    by_name = {f["name"]: f for f in unit["functions"]}
    assert by_name["single"]["reason"].endswith("nothing to improve"), by_name
    assert by_name["single"]["kernel"] and "warning: 'single'" not in stderr
    assert by_name["jacobi"]["compiled_by"] == "pycc-stencil", by_name


@pytest.mark.parametrize(
    "header, name",
    [
        ("void kr(T, n, a, b)\nint T, n; double (*a)[64];\ndouble (*b)[64];\n", "kr"),
        ("double (*ra(int T, int n, double (*a)[64], double (*b)[64]))[64]\n", "ra"),
        ("typedef double row[64];\nrow *td(int T, int n, row *a, row *b)\n", "td"),
        ("static void __attribute__((hot)) at(int T, int n, double (*a)[64],"
         " double (*b)[64])\n", "at"),
    ],
)  # fmt: skip
def test_the_candidate_is_named_after_its_declarator(header, name):
    """The name before the parameter list, not a word of a K&R parameter declaration or of
    a parenthesized declarator's return type (both refused jacobi as `double` once)."""
    body = (
        "{ for (int t = 0; t < T; t++) {\n"
        "    for (int i = 1; i < n - 1; i++) for (int j = 1; j < 63; j++)\n"
        "      b[i][j] = 0.25 * (a[i-1][j] + a[i+1][j] + a[i][j-1] + a[i][j+1]);\n"
        "    for (int i = 1; i < n - 1; i++) for (int j = 1; j < 63; j++) a[i][j] = b[i][j]; } }\n"
    )
    assert locality_candidates((header + body).encode()) == {name}
