"""Multiply-adds fused where gcc fuses them (emit/cc_contraction.py).

Under -ffp-contract=fast with FMA (GNU C at -O2 and above with -mfma), which `a*b + c` become
one fma changes the last bits, so the kernels are compared bit for bit with cc's build; the
same kernels without contraction give other bits, so a comparison that passes proves the
fusions were made, and made like gcc's."""

from __future__ import annotations

import llvmlite.binding as llvm
import pytest
from pycc_stencil.dropin_report import internal_error_reason
from pycc_stencil.emit.cc_contraction import fuse_like_gcc, paired_fusion, unpredictable_fusion
from pycc_stencil.emit.cc_target import target_from_flags
from pycc_stencil.frontend import lower_file
from test_compiler_mode import clean_env, functions_of, units_for
from test_dropin_flags import compiled_by, programs_like_cc

llvm.initialize_native_target()
HOST_HAS_FMA = bool(llvm.get_host_cpu_features().get("fma"))
needs_fma = pytest.mark.skipif(not HOST_HAS_FMA, reason="the host CPU has no FMA to run it")

#: every shape gcc's rule distinguishes, each in its own kernel (a loop makes it one)
KERNELS = """\
void shapes(int n, double *restrict o, const double *x, const double *y)
{
    for (int i = 0; i < n; i++) {
        double p = x[i] * y[i];
        o[5 * i] = 3.0 * x[i] + y[i] + 2.0 * x[i] * y[i] + y[i] * y[i]; /* a chain */
        o[5 * i + 1] = x[i] * y[i] + y[i] * 0.3;     /* two products: the first fuses */
        o[5 * i + 2] = x[i] - y[i] * 0.7 + (0.1 * x[i] - 1.0) - -(y[i] * y[i]);
        o[5 * i + 3] = -(x[i] * 0.9) + y[i]          /* through a negation; gcc folds */
                       + (-(x[i] * 1.3) + y[i] * 0.45); /* (-A) + B into B - A first */
        o[5 * i + 4] = p + x[i] + (p - y[i])         /* a product used by two additions */
                       + (y[i] * 1.7 + x[i] * x[i]) * 0.01 + (x[i] * x[i] - y[i] * 1.7);
                       /* products written twice: gcc's value numbering makes each one */
    }
}

void kept(int n, double *restrict o, double *restrict q, const double *x)
{
    for (int i = 0; i < n; i++) {
        double p = x[i] * 1.1;
        q[i] = p;                                    /* also stored: gcc keeps the product */
        o[i] = p + x[i] + x[i] * x[i] + x[i] * x[i];
    }
}

void floats(int n, float *restrict o, const float *x)
{
    for (int i = 1; i < n - 1; i++)
        o[i] = 0.25f * x[i - 1] + 0.5f * x[i] + 0.25f * x[i + 1] - x[i] * x[i]
               + (x[i - 1] * x[i + 1] - x[i] * 0.75f);   /* a difference of products */
}
"""

MAIN = """\
#include <stdio.h>
#include <string.h>
void shapes(int n, double *restrict o, const double *x, const double *y);
void kept(int n, double *restrict o, double *restrict q, const double *x);
void floats(int n, float *restrict o, const float *x);
static unsigned long long mix(unsigned long long h, const void *p, unsigned long size)
{
    const unsigned char *b = p;
    for (unsigned long i = 0; i < size; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}
int main(void)
{
    enum { N = 37 };
    double x[N], y[N], o[5 * N], q[N];
    float xf[N], of[N];
    for (int i = 0; i < N; i++) {
        x[i] = 1.0 / (i + 3);
        y[i] = (i % 7) * 0.1 + 1.0 / (i + 1);
        xf[i] = (float)x[i] * 3.3f;
    }
    memset(of, 0, sizeof of);
    shapes(N, o, x, y);
    kept(N, o, q, x);
    floats(N, of, xf);
    printf("%016llx\\n", mix(mix(mix(1469598103934665603ULL, o, sizeof o), q, sizeof q),
                                of, sizeof of));
    return 0;
}
"""

FILES = {"k.c": KERNELS, "main.c": MAIN}


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    return clean_env(tmp_path / "cache")


FMA = ["-O2", "-mfma"]


@pytest.mark.parametrize(
    "flags, contraction",
    [
        (["-O2", "-mfma"], True),  # GNU C: gcc fuses across expressions
        (["-O2"], False),  # no FMA in the ISA
        (["-O1", "-mfma"], False),  # gcc fuses from -O2 (-fexpensive-optimizations)
        (["-O1", "-fexpensive-optimizations", "-mfma"], True),
        (["-O3", "-fno-expensive-optimizations", "-mfma"], False),
        (["-O2", "-mfma", "-std=c99"], False),  # ISO C
        (["-O2", "-mfma", "-std=c99", "-ffp-contract=fast"], True),
        (["-O2", "-mfma", "-ffp-contract=off"], False),
        (["-O2", "-mfma", "-ffast-math"], False),  # reassociation instead
        (["-O2", "-mavx512f"], True),  # AVX-512F's own multiply-adds, no `__FMA__`
    ],
)
def test_contraction_follows_gcc(flags, contraction):
    target = target_from_flags("cc", flags)
    assert target.contraction is contraction
    assert ("+fma" in target.features.split(",")) is ("-mfma" in flags or "-mavx512f" in flags)


def test_fast_math_is_the_only_llvm_flag():
    assert target_from_flags("cc", ["-O2", "-mfma"]).fp_flags == ()
    assert target_from_flags("cc", ["-O2", "-ffast-math"]).fp_flags == ("fast",)


def _fused(tmp_path, source: str, name: str) -> str:
    path = tmp_path / "f.c"
    path.write_text(source)
    function = lower_file(str(path)).module.globals[name]
    fuse_like_gcc(function)
    return str(function)


def test_the_first_product_of_a_sum_fuses(tmp_path):
    source = "double f(double a, double b, double c, double d) { return a*b + c*d; }"
    text = _fused(tmp_path, source, "f")
    assert text.count("llvm.fma.f64") == 1 and text.count("fmul") == 1
    assert 'call double @"llvm.fma.f64"(double %"a' in text


def test_a_difference_of_products_fuses_the_first(tmp_path):
    """`a*b - c*d` (LucasKanade's determinant): fma(a, b, -(c*d)), c*d kept, as gcc does; the
    second product used to be planned into the subtraction the first one had replaced (an
    internal error that left the kernel to cc)."""
    source = "float f(float a, float b, float c, float d) { return a*b - c*d; }"
    text = _fused(tmp_path, source, "f")
    assert text.count("llvm.fma.f32") == 1 and text.count("fmul") == 1 and "fneg" in text
    assert 'call float @"llvm.fma.f32"(float %"a' in text


def test_a_negated_product_plus_a_product_fuses_the_second(tmp_path):
    """`-(a*b) + c*d`: gcc folds it into `c*d - a*b` before fusing, so c*d fuses:
    fma(c, d, -(a*b)), not fma(-a, b, c*d) (other bits)."""
    source = "double f(double a, double b, double c, double d) { return -(a*b) + c*d; }"
    text = _fused(tmp_path, source, "f")
    assert text.count("llvm.fma.f64") == 1 and text.count("fmul") == 1
    assert 'call double @"llvm.fma.f64"(double %"c' in text


def test_a_product_written_again_after_a_store_that_may_change_it_stays_with_cc(tmp_path):
    """Whether gcc makes the two `x[i] * x[i]` one depends on whether the store to `o`
    (not restrict) may change `x[i]`: not told, so the kernel is cc's; with `restrict` on
    `o` (gcc merges them, and so does `fuse_like_gcc`) it is pycc-stencil's."""
    source = (
        "void f(int n, double *o, const double *x) {\n"
        "  for (int i = 0; i < n; i++) { o[i] = x[i] * x[i] + 1.0; o[n + i] = x[i] * x[i]; }\n}"
    )
    path = tmp_path / "f.c"
    path.write_text(source)
    assert "written twice" in unpredictable_fusion(lower_file(str(path)).module.globals["f"])
    path.write_text(source.replace("double *o", "double *restrict o"))
    assert unpredictable_fusion(lower_file(str(path)).module.globals["f"]) is None


def test_an_internal_error_is_quoted_short():
    """The reason an internal error gives quotes the first line of its text, clipped: the
    difference of products above quoted a whole llvmlite expression tree (100 KB per warning)."""
    long = ValueError("<ir.Instruction '.331' " + "operands (" * 2000 + "\nsecond line")
    reason = internal_error_reason("code generation", long)
    assert reason.startswith("internal error in code generation (ValueError: <ir.Instruction")
    assert len(reason) < 220 and reason.endswith("...)") and "second line" not in reason
    assert internal_error_reason("x", KeyError()) == "internal error in x (KeyError: )"


def test_a_stored_product_is_not_fused(tmp_path):
    source = "double f(double a, double *q) { double p = a * 3.0; *q = p; return p + a; }"
    assert "llvm.fma" not in _fused(tmp_path, source, "f")


@needs_fma
@pytest.mark.parametrize("level", ["-O3"])  # -O2 fuses alike (tests of the flags above)
def test_kernels_give_cc_bits(tmp_path, env, level):
    outputs, report = programs_like_cc(tmp_path, env, FILES, [level, "-mfma"])
    assert outputs[1] == outputs[0]
    assert set(compiled_by(report, "k.c").values()) == {"pycc-stencil"}
    # without contraction on both sides the bits are other ones: the test sees the fusions
    plain, _ = programs_like_cc(tmp_path / "off", env, FILES, [level, "-mfma", "-ffp-contract=off"])
    assert plain[0] == plain[1] != outputs[0]


ACCUMULATIONS = """\
double dot(int n, const double *x, const double *y)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}
void gemv(int n, double c[n], double a[n][n], const double *x)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            c[i] = c[i] + a[i][j] * x[j];
}
void clamped(int n, double *restrict o, const double *x)
{
    for (int i = 0; i < n; i++)
        o[i] = 0.5 * x[i] + (x[i] > 0.1 ? x[i] : 0.1);
}
"""
ACCUMULATION_MAIN = """\
#include <stdio.h>
double dot(int n, const double *x, const double *y);
void gemv(int n, double c[n], double a[n][n], const double *x);
void clamped(int n, double *restrict o, const double *x);
int main(void)
{
    double x[13], a[13][13], c[13] = {0}, o[13];
    for (int i = 0; i < 13; i++) {
        x[i] = 1.0 / (i + 2);
        for (int j = 0; j < 13; j++)
            a[i][j] = (i * 13 + j) % 11 * 0.37;
    }
    gemv(13, c, a, x);
    clamped(13, o, x);
    printf("%a %a %a %a %a\\n", dot(13, x, x), c[0], c[12], o[0], o[12]);
    return 0;
}
"""


@pytest.mark.parametrize(
    "flags, by",
    [
        (["-O2", "-mfma"], "cc"),  # gcc's fusion there depends on its vectorizer
        (["-O2", "-mfma", "-ffp-contract=off"], "pycc-stencil"),
        (["-O2"], "pycc-stencil"),
    ],
)
def test_accumulations_and_branches_stay_with_cc_under_contraction(tmp_path, env, flags, by):
    files = {"k.c": ACCUMULATIONS, "main.c": ACCUMULATION_MAIN}
    outputs, report = programs_like_cc(tmp_path, env, files, flags)
    assert compiled_by(report, "k.c") == {"dot": by, "gemv": by, "clamped": by}
    if HOST_HAS_FMA or "-mfma" not in flags:
        assert outputs[1] == outputs[0]


@pytest.mark.parametrize(
    "extra, reason",
    [
        # gcc inlines or specializes (ipa-cp) a kernel at its calls in the same file, and
        # fuses other products there
        ("void run(int n, double *o, const double *x, const double *y) { shapes(n, o, x, y); }",
         "its own file calls it"),
        # gcc fuses a helper's product with the caller's addition once it has inlined it
        ("static double sq(double v) { return v * v; }\n"
         "void with_helper(int n, double *o, const double *x)\n"
         "{ for (int i = 0; i < n; i++) o[i] = x[i] + sq(x[i]); }",
         "it calls 'sq'"),
    ],
)  # fmt: skip
def test_kernels_of_a_file_where_gcc_may_fuse_elsewhere_stay_with_cc(tmp_path, env, extra, reason):
    """A function with products that cc keeps may be fused differently by gcc once anything
    of its file changes (what it inlines): then every function of the file stays with cc."""
    files = {"k.c": KERNELS + extra + "\n", "main.c": MAIN}
    outputs, report = programs_like_cc(tmp_path, env, files, ["-O2", "-mfma"])
    (unit,) = units_for(report, "k.c")
    functions = functions_of(unit)
    assert {f["compiled_by"] for f in functions.values()} == {"cc"}
    assert any(reason in (f["reason"] or "") for f in functions.values()), functions
    assert "stays with cc and may fuse" in functions["kept"]["reason"]
    if HOST_HAS_FMA:
        assert outputs[1] == outputs[0]


def test_names_used_inside_braces():
    from pycc_stencil.dropin_takeover import Takeover, used_inside_braces
    from pycc_stencil.frontend.signature import DefinitionText, FunctionInfo

    text = (
        b"void k(int n);\nvoid k(int n) { if (n) k(n - 1); }\n"
        b'const char *s = "{ k }";\nvoid m(void) { puts("k"); }\n'
        b"void (*table[])(int) = { k };\nvoid j(int n) { }\nvoid u(void) { j(1); }\n"
    )

    def takeover(name: bytes) -> Takeover:
        start = text.index(b"void " + name + b"(int n) {")
        body = text.index(b"{", start)
        where = DefinitionText(start, start + 5, start + 6, body, text.index(b"}", body) + 1)
        return Takeover(FunctionInfo(name.decode(), (), None, None, False, 1, where), "")

    assert used_inside_braces(text, [takeover(b"k"), takeover(b"j")]) == {"k", "j"}
    only_self = text.replace(b"{ k };", b"{ 0 };")
    assert used_inside_braces(only_self, [takeover(b"k")]) == set()


@pytest.mark.parametrize("main_multiplies, by", [(False, "pycc-stencil"), (True, "cc")])
def test_a_function_the_front_end_skips_blocks_the_file_if_it_multiplies_floats(
    tmp_path, env, main_multiplies, by
):
    """`main` calls printf, so the front end skips it: its own products decide whether gcc may
    fuse differently once the file's kernel is taken over (csmith's integer programs are)."""
    scale = "x * 0.5" if main_multiplies else "x"
    program = f"""\
#include <stdio.h>
void count(int n, int *restrict o, const int *a)
{{
    for (int i = 0; i < n; i++)
        o[i] = a[i] * 3 + 1;
}}
int main(void)
{{
    int a[9] = {{1, 2, 3, 4, 5, 6, 7, 8, 9}}, o[9];
    double x = 0.25;
    count(9, o, a);
    printf("%d %a\\n", o[8], {scale} + 1.0);
    return 0;
}}
"""
    outputs, report = programs_like_cc(tmp_path, env, {"k.c": program, "main.c": ""}, FMA)
    (unit,) = units_for(report, "k.c")
    assert functions_of(unit)["count"]["compiled_by"] == by, functions_of(unit)["count"]
    if HOST_HAS_FMA:
        assert outputs[1] == outputs[0]


#: a complex multiply over interleaved (re, im) pairs and kernels of the same shape that gcc
#: does not pair: two sums side by side, a difference and a sum into two arrays
COMPLEX = """\
void cmul(int n, double *restrict o, const double *a, const double *b)
{
    for (int j = 0; j < n; j++) {
        double ar = a[2 * j], ai = a[2 * j + 1], br = b[2 * j], bi = b[2 * j + 1];
        o[2 * j] = ar * br - ai * bi;
        o[2 * j + 1] = ar * bi + ai * br;
    }
}

void cmac(int n, double *restrict o, const double *a, const double *b)
{
    for (int j = 0; j < n; j++) {   /* accumulated: gcc's complex FMA pattern */
        double ar = a[2 * j], ai = a[2 * j + 1], br = b[2 * j], bi = b[2 * j + 1];
        o[2 * j] = o[2 * j] + (ar * br - ai * bi);
        o[2 * j + 1] = o[2 * j + 1] + (ar * bi + ai * br);
    }
}

void sums(int n, double *restrict o, const double *a, const double *b)
{
    for (int j = 0; j < n; j++) {
        o[2 * j] = a[j] * b[j] + a[j];
        o[2 * j + 1] = a[j] * a[j] + b[j];
    }
}

void cmm(int n, double *restrict o, const double *a, const double *b)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double sr = 0, si = 0;
            for (int k = 0; k < n; k++) {
                int x = 2 * (i * n + k), y = 2 * (k * n + j);
                sr += a[x] * b[y] - a[x + 1] * b[y + 1];
                si += a[x] * b[y + 1] + a[x + 1] * b[y];
            }
            o[2 * (i * n + j)] = sr;
            o[2 * (i * n + j) + 1] = si;
        }
}

void apart(int n, double *restrict o, double *restrict q, const double *a, const double *b)
{
    for (int j = 0; j < n; j++) {
        o[j] = a[j] * b[j] - a[j];
        q[j] = a[j] * a[j] + b[j];
    }
}
"""

COMPLEX_MAIN = """\
#include <stdio.h>
void cmul(int n, double *restrict o, const double *a, const double *b);
void cmac(int n, double *restrict o, const double *a, const double *b);
void sums(int n, double *restrict o, const double *a, const double *b);
void apart(int n, double *restrict o, double *restrict q, const double *a, const double *b);
void cmm(int n, double *restrict o, const double *a, const double *b);
int main(void)
{
    enum { N = 203 };
    double a[2 * N], b[2 * N], o[2 * N], q[2 * N];
    unsigned s = 7;
    for (int i = 0; i < 2 * N; i++) {
        s = s * 1103515245u + 12345u; a[i] = s / 4294967296.0 - 0.5;
        s = s * 1103515245u + 12345u; b[i] = s / 4294967296.0 - 0.5;
    }
    cmul(N, o, a, b);
    for (int i = 0; i < 2 * N; i++) printf("%a\\n", o[i]);
    cmac(N, o, a, b);
    for (int i = 0; i < 2 * N; i++) printf("%a\\n", o[i]);
    sums(N, o, a, b);
    apart(N, o, q, a, b);
    for (int i = 0; i < N; i++) printf("%a %a %a\\n", o[i], o[N + i], q[i]);
    cmm(14, o, a, b);
    for (int i = 0; i < 2 * 14 * 14; i++) printf("%a\\n", o[i]);
    return 0;
}
"""


@pytest.mark.parametrize(
    "flags, vector_fma",
    [
        (["-O3", "-mfma", "-ffp-contract=off"], True),
        (["-O2", "-mfma", "-std=c99"], True),  # gcc 12 vectorizes at -O2
        (["-O3", "-mavx512f", "-ffp-contract=off"], True),
        (["-O1", "-mfma", "-ffp-contract=off"], False),
        (["-O1", "-mfma", "-ftree-slp-vectorize"], True),
        (["-O3", "-mfma", "-fno-tree-vectorize"], False),
        (["-O3", "-mfma", "-fno-tree-slp-vectorize"], True),  # the loop vectorizer pairs too
        (["-O3", "-ffp-contract=off"], False),  # no FMA in the ISA
    ],
)
def test_gccs_vectorizer_fuses_with_fma_whatever_the_contraction(flags, vector_fma):
    assert target_from_flags("cc", flags).vector_fma is vector_fma


def test_paired_fusion_is_a_difference_and_a_sum_of_products_into_one_array(tmp_path):
    source = tmp_path / "k.c"
    source.write_text(COMPLEX)
    module = lower_file(str(source)).module
    names = ("cmul", "cmac", "sums", "apart", "cmm")
    reasons = {name: paired_fusion(module.get_global(name)) for name in names}
    assert "vfmaddsub" in reasons["cmul"] and "vfmaddsub" in reasons["cmac"]
    assert "vfmaddsub" in reasons["cmm"]  # accumulated in the loop, stored after it
    assert reasons["sums"] is None and reasons["apart"] is None


@pytest.mark.parametrize(
    "flags, by",
    [
        (["-O3", "-mfma", "-ffp-contract=off"], "cc"),
        (["-O2", "-mfma", "-std=c99"], "cc"),
        (["-O3", "-mfma", "-ffp-contract=off", "-fno-tree-vectorize"], "pycc-stencil"),
        (["-O3", "-ffp-contract=off"], "pycc-stencil"),
    ],
)
def test_a_complex_multiply_stays_with_cc_where_gccs_vectorizer_fuses_it(tmp_path, env, flags, by):
    """gcc 12 vectorizes `ar*br - ai*bi` and `ar*bi + ai*br` stored side by side into one
    `vfmaddsub` with FMA in the ISA, even under -ffp-contract=off or an ISO -std (a review
    found it: a time-tiled complex stencil and kissfft's butterflies gave other last bits)."""
    files = {"k.c": COMPLEX, "main.c": COMPLEX_MAIN}
    outputs, report = programs_like_cc(tmp_path, env, files, flags)
    assert compiled_by(report, "k.c") == {
        "cmul": by,
        "cmac": by,
        "cmm": by,
        "sums": "pycc-stencil",
        "apart": "pycc-stencil",
    }
    if HOST_HAS_FMA or "-mfma" not in flags:
        assert outputs[1] == outputs[0]
