"""Structs across the boundary between cc's code and pycc-stencil's (issue 14 §2).

A kernel pycc-stencil compiles in compiler mode is called by code cc compiled, so a struct
passed or returned by value must travel exactly as gcc passes it (x86-64 SysV: INTEGER and
SSE eightbytes in registers, larger structs in memory, `sret` results, all-or-nothing when
the registers run out). Each test builds k.c by cc and by pycc-stencil, links it with a main.c
built by cc, and compares the outputs (floating-point values printed with %a: bit for bit);
the report must say pycc-stencil compiled every kernel, or the test proves nothing.
"""

from __future__ import annotations

import glob
import re
import shutil
import subprocess

import pytest
from pycc_stencil.frontend.module import lower_file
from test_compiler_mode import PYCC, SMALL_CACHES
from test_dropin_unit import assert_by_pycc, build_both

pytestmark = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")

#: the takeover of every kernel the front end lowers, passes or not
TAKEOVER_ALL = {"PYCC_TAKEOVER": "all"}

TYPES = """\
struct ii { int a, b; };                       /* INTEGER */
struct dd { double x, y; };                    /* SSE, SSE */
struct fif { float x; int k; float y; };       /* INTEGER, SSE (12 bytes) */
struct di { double x; int k; };                /* SSE, INTEGER */
struct c3 { char a, b, c; };                   /* INTEGER (3 bytes) */
struct ff3 { float v[3]; };                    /* SSE, SSE: an array member */
struct big { double a; int k; double c; };     /* MEMORY: 24 bytes with padding */
struct arr { short s; double v[4]; };          /* MEMORY: an array member */
struct fd { float x; double y; };            /* SSE (a float, then padding), SSE */
struct a16 { double x; } __attribute__((aligned(16)));          /* SSE; 16 bytes */
struct b16 { double a, b, c; } __attribute__((aligned(16)));    /* MEMORY, 16-aligned */
struct grid { int n, m; double *row; double a[5][7]; };
struct pt { float x, vx; short tag; };
"""

KERNELS = """\
#include "types.h"

int sum_ii(struct ii s, int n) {
    int t = 0;
    for (int i = 0; i < n; i++) t += s.a * i - s.b;
    return t;
}

double sum_dd(struct dd s, int n) {
    double t = 0;
    for (int i = 0; i < n; i++) t = t * s.x + s.y;
    return t;
}

float sum_fif(struct fif s, int n) {
    float t = 0;
    for (int i = 0; i < n; i++) t = t * s.x + s.k - s.y;
    return t;
}

double sum_di(struct di s, int n) {
    double t = 0;
    for (int i = 0; i < n; i++) t = t * s.x + s.k;
    return t;
}

int sum_c3(struct c3 s, int n) {
    int t = 0;
    for (int i = 0; i < n; i++) t = t * 3 + s.a - s.b * s.c;
    return t;
}

float sum_ff3(struct ff3 s, int n) {
    float t = 0;
    for (int i = 0; i < n; i++) t = t * s.v[0] + s.v[1] - s.v[2];
    return t;
}

double sum_big(struct big s, int n) {
    for (int i = 0; i < n; i++) s.a = s.a * s.c + s.k;  /* the callee's own copy */
    return s.a;
}

double sum_arr(struct arr s, int n) {
    double t = s.s;
    for (int i = 0; i < n; i++) t = t * 0.5 + s.v[i % 4];
    return t;
}

double sum_fd(struct fd s, int n) {
    double t = 0;
    for (int i = 0; i < n; i++) t = t * s.x + s.y;
    return t;
}

double sum_a16(int k, struct a16 s, int n) {
    double t = k;
    for (int i = 0; i < n; i++) t = t * 0.5 + s.x;
    return t;
}

double sum_b16(int k, struct b16 s, int n) {
    double t = k;
    for (int i = 0; i < n; i++) t = t * s.a + s.b - s.c;
    return t;
}

/* six integer registers: s1 takes the last one, s2 must go to memory whole */
long exhaust_int(long a, long b, long c, long d, long e, struct ii s1, struct ii s2, int n) {
    long t = a + b + c + d + e;
    for (int i = 0; i < n; i++) t = t * 3 + s1.a - s1.b + 7 * s2.a - s2.b;
    return t;
}

/* eight SSE registers: seven doubles, then s needs two, so s goes to memory */
double exhaust_sse(double a, double b, double c, double d, double e, double f, double g,
                   struct dd s, int n) {
    double t = a + b + c + d + e + f + g;
    for (int i = 0; i < n; i++) t = t * s.x - s.y;
    return t;
}

struct ii ret_ii(int n) {
    struct ii r;
    r.a = 0; r.b = 1;
    for (int i = 0; i < n; i++) { r.a += i; r.b *= 3; }
    return r;
}

struct dd ret_dd(const double *v, int n) {
    struct dd r;
    r.x = 0; r.y = 1;
    for (int i = 0; i < n; i++) { r.x += v[i]; r.y *= v[i]; }
    return r;
}

struct fif ret_fif(const float *v, int n) {
    struct fif r;
    r.x = 0; r.k = 0; r.y = 1;
    for (int i = 0; i < n; i++) { r.x += v[i]; r.k += i; r.y *= v[i]; }
    return r;
}

struct di ret_di(const double *v, int n) {
    struct di r;
    r.x = 0; r.k = 0;
    for (int i = 0; i < n; i++) { r.x += v[i]; r.k -= i; }
    return r;
}

struct c3 ret_c3(int n) {
    struct c3 r;
    r.a = 1; r.b = 2; r.c = 3;
    for (int i = 0; i < n; i++) { r.a += r.b; r.c ^= r.a; }
    return r;
}

struct ff3 ret_ff3(const float *v, int n) {
    struct ff3 r;
    r.v[0] = 0; r.v[1] = 1; r.v[2] = 2;
    for (int i = 0; i < n; i++) { r.v[i % 3] += v[i]; r.v[(i + 1) % 3] *= v[i]; }
    return r;
}

struct big ret_big(const double *v, int n) {
    struct big r;
    r.a = 0; r.k = n; r.c = 1;
    for (int i = 0; i < n; i++) { r.a += v[i]; r.c *= v[i]; }
    return r;
}

struct arr ret_arr(const double *v, int n) {
    struct arr r;
    r.s = (short)n;
    for (int j = 0; j < 4; j++) r.v[j] = 0;
    for (int i = 0; i < n; i++) r.v[i % 4] += v[i];
    return r;
}

void update_grid(struct grid *g) {
    for (int i = 1; i < g->n - 1; i++)
        for (int j = 1; j < g->m - 1; j++)
            g->a[i][j] = 0.25 * (g->a[i - 1][j] + g->a[i + 1][j] + g->a[i][j - 1]) + g->row[j];
}

/* a static kernel: cc's code reaches it through a trampoline to pycc-stencil's symbol */
static struct fif scale_fif(struct fif s, int n) {
    for (int i = 0; i < n; i++) { s.x *= 1.5f; s.y -= s.x; s.k += i; }
    return s;
}

float via_static(int n) {
    struct fif s = {0.25f, 3, 4.0f};
    struct fif r = scale_fif(s, n);
    return r.x + r.y + r.k;
}

void move(struct pt *pts, int n, float dt) {
    for (int i = 0; i < n; i++) {
        struct pt p = pts[i];
        p.x += p.vx * dt;
        p.tag = (short)(p.tag + i);
        pts[i] = p;
    }
}
"""

MAIN = r"""#include <stdio.h>
#include "types.h"
int sum_ii(struct ii, int);
double sum_dd(struct dd, int);
float sum_fif(struct fif, int);
double sum_di(struct di, int);
int sum_c3(struct c3, int);
float sum_ff3(struct ff3, int);
double sum_big(struct big, int);
double sum_arr(struct arr, int);
long exhaust_int(long, long, long, long, long, struct ii, struct ii, int);
double sum_fd(struct fd, int);
double sum_a16(int, struct a16, int);
double sum_b16(int, struct b16, int);
double exhaust_sse(double, double, double, double, double, double, double, struct dd, int);
struct ii ret_ii(int);
struct dd ret_dd(const double *, int);
struct fif ret_fif(const float *, int);
struct di ret_di(const double *, int);
struct c3 ret_c3(int);
struct ff3 ret_ff3(const float *, int);
struct big ret_big(const double *, int);
struct arr ret_arr(const double *, int);
void update_grid(struct grid *);
void move(struct pt *, int, float);
float via_static(int);

int main(void)
{
    double v[13];
    float f[13];
    for (int i = 0; i < 13; i++) { v[i] = 1.0 + i / 7.0; f[i] = 1.0f + i / 9.0f; }
    struct ii ii = {5, -3};
    struct dd dd = {0.3, 1.7};
    struct fif fif = {0.7f, 3, 0.1f};
    struct di di = {1.1, -4};
    struct c3 c3 = {1, 2, 3};
    struct ff3 ff3 = {{0.5f, 0.25f, 0.125f}};
    struct big big = {0.9, 2, 1.01};
    struct arr arr = {7, {0.1, 0.2, 0.3, 0.4}};
    printf("%d\n", sum_ii(ii, 13));
    printf("%a\n", sum_dd(dd, 13));
    printf("%a\n", sum_fif(fif, 13));
    printf("%a\n", sum_di(di, 13));
    printf("%d\n", sum_c3(c3, 5));
    printf("%a\n", sum_ff3(ff3, 13));
    printf("%a %a\n", sum_big(big, 13), big.a);
    printf("%a\n", sum_arr(arr, 13));
    printf("%ld\n", exhaust_int(1, 2, 3, 4, 5, ii, (struct ii){11, 13}, 9));
    printf("%a\n", exhaust_sse(1, 2, 3, 4, 5, 6, 7, dd, 9));
    struct fd fd = {0.75f, 0.5};
    struct a16 a16 = {0.125};
    struct b16 b16 = {0.5, 0.25, 0.125};
    printf("%a %a %a\n", sum_fd(fd, 13), sum_a16(3, a16, 13), sum_b16(5, b16, 13));
    printf("%a\n", via_static(9));
    struct ii rii = ret_ii(11);
    printf("%d %d\n", rii.a, rii.b);
    struct dd rdd = ret_dd(v, 13);
    printf("%a %a\n", rdd.x, rdd.y);
    struct fif rfif = ret_fif(f, 13);
    printf("%a %d %a\n", rfif.x, rfif.k, rfif.y);
    struct di rdi = ret_di(v, 13);
    printf("%a %d\n", rdi.x, rdi.k);
    struct c3 rc3 = ret_c3(7);
    printf("%d %d %d\n", rc3.a, rc3.b, rc3.c);
    struct ff3 rff3 = ret_ff3(f, 13);
    printf("%a %a %a\n", rff3.v[0], rff3.v[1], rff3.v[2]);
    struct big rbig = ret_big(v, 13);
    printf("%a %d %a\n", rbig.a, rbig.k, rbig.c);
    struct arr rarr = ret_arr(v, 13);
    printf("%d %a %a %a %a\n", rarr.s, rarr.v[0], rarr.v[1], rarr.v[2], rarr.v[3]);
    struct grid g;
    g.n = 5; g.m = 7; g.row = v;
    for (int i = 0; i < 5; i++) for (int j = 0; j < 7; j++) g.a[i][j] = i * 0.5 - j * 0.25;
    update_grid(&g);
    for (int i = 0; i < 5; i++) for (int j = 0; j < 7; j++) printf("%a ", g.a[i][j]);
    printf("\n");
    struct pt pts[11];
    for (int i = 0; i < 11; i++) {
        pts[i].x = i * 0.3f; pts[i].vx = 1.0f / (i + 1); pts[i].tag = (short)i;
    }
    move(pts, 11, 0.1f);
    for (int i = 0; i < 11; i++) printf("%a %d ", pts[i].x, pts[i].tag);
    printf("\n");
    return 0;
}
"""

NAMES = (
    "sum_ii sum_dd sum_fif sum_di sum_c3 sum_ff3 sum_big sum_arr exhaust_int exhaust_sse "
    "sum_fd sum_a16 sum_b16 "
    "ret_ii ret_dd ret_fif ret_di ret_c3 ret_ff3 ret_big ret_arr update_grid move scale_fif"
).split()


@pytest.mark.parametrize("flags", [["-O0"], ["-O2"], ["-O3", "-march=native", "-ffp-contract=off"]])
def test_structs_by_value_follow_gcc_s_convention(tmp_path, flags):
    files = {"types.h": TYPES, "k.c": KERNELS, "main.c": MAIN}
    both = build_both(tmp_path, files, flags, extra_env=TAKEOVER_ALL)
    assert_by_pycc(both, *NAMES)
    assert both.functions["via_static"]["compiled_by"] == "cc"  # the caller of the trampoline
    assert both.pycc_output == both.cc_output
    assert both.cc_output.count("\n") == 22


RELAX_C = """\
#define N 97
struct field { int steps; double a[N][N]; double b[N][N]; };

void relax(struct field *f)
{
    int steps = f->steps;
    for (int t = 0; t < steps; t++) {
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                f->b[i][j] = 0.25 * (f->a[i - 1][j] + f->a[i + 1][j]
                                     + f->a[i][j - 1] + f->a[i][j + 1]);
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                f->a[i][j] = f->b[i][j] - 0.125 * f->a[i][j];
    }
}
"""

RELAX_MAIN = r"""#include <stdio.h>
#include <stdlib.h>
#define N 97
struct field { int steps; double a[N][N]; double b[N][N]; };
void relax(struct field *f);
int main(void)
{
    struct field *f = calloc(1, sizeof *f);
    f->steps = 7;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) f->a[i][j] = ((i * 7 + j * 13) % 17) * 0.125;
    relax(f);
    for (int i = 0; i < N; i += 3)
        for (int j = 0; j < N; j += 5) printf("%a %a\n", f->a[i][j], f->b[i][j]);
    return 0;
}
"""


def test_time_tiling_through_a_struct_pointer_is_bit_exact(tmp_path):
    """At -O3 compiler mode time-tiles the sweeps over the member arrays of `*f` (one object
    to the polyhedral model: the flow from b back to a is a dependence)."""
    files = {"k.c": RELAX_C, "main.c": RELAX_MAIN}
    both = build_both(tmp_path, files, ["-O3"], extra_env=dict(TAKEOVER_ALL, **SMALL_CACHES))
    assert_by_pycc(both, "relax")
    assert any("time-tiled" in r for r in both.functions["relax"]["remarks"]), both.functions
    assert both.pycc_output == both.cc_output


CALLBACK_H = """\
typedef int (*writer_fn)(const unsigned char *data, int size);
struct picture { int width, height; float *y; writer_fn writer; void *custom; };
"""

CALLBACK_C = """\
#include "picture.h"
void brighten(struct picture *p, float gain)
{
    for (int j = 0; j < p->height; j++)
        for (int i = 0; i < p->width; i++)
            p->y[j * p->width + i] *= gain;
}
int has_writer(const struct picture *p, int n, float *out)
{
    for (int i = 0; i < n; i++) out[i] = (float)i;
    return p->writer != 0;
}
int call_writer(struct picture *p, int n, float *out)
{
    for (int i = 0; i < n; i++) out[i] = (float)i;
    return p->writer((const unsigned char *)out, n);
}
static int quiet(const unsigned char *data, int size) { return size - data[0]; }
void silence(struct picture *p, int n, float *out)
{
    for (int i = 0; i < n; i++) out[i] = 0;
    p->writer = quiet;
}
"""

CALLBACK_MAIN = r"""#include <stdio.h>
#include "picture.h"
void brighten(struct picture *p, float gain);
int has_writer(const struct picture *p, int n, float *out);
int call_writer(struct picture *p, int n, float *out);
void silence(struct picture *p, int n, float *out);
static int count(const unsigned char *data, int size) { return data[1] + size; }
int main(void)
{
    float y[35], out[9];
    for (int i = 0; i < 35; i++) y[i] = i * 0.25f;
    struct picture p = {7, 5, y, count, 0};
    brighten(&p, 1.5f);
    for (int i = 0; i < 35; i++) printf("%a\n", y[i]);
    printf("%d %d\n", has_writer(&p, 9, out), call_writer(&p, 9, out));
    silence(&p, 9, out);
    printf("%d %d\n", has_writer(&p, 3, out), call_writer(&p, 9, out));
    return 0;
}
"""


def test_structs_with_callback_members(tmp_path):
    """A struct with a function pointer member (libwebp's `WebPPicture.writer`): kernels that
    only pass it on or compare it are pycc-stencil's; calling through it or storing a
    function's address is refused by name."""
    files = {"picture.h": CALLBACK_H, "k.c": CALLBACK_C, "main.c": CALLBACK_MAIN}
    both = build_both(tmp_path, files, ["-O2"], extra_env=TAKEOVER_ALL)
    assert_by_pycc(both, "brighten", "has_writer")
    assert "calls through function pointers" in both.functions["call_writer"]["reason"]
    assert "function pointers are not supported" in both.functions["silence"]["reason"]
    assert both.pycc_output == both.cc_output
    assert both.cc_output.count("\n") == 37


BITS_H = """\
struct token { unsigned type : 3; unsigned len : 12; int value; unsigned char flags : 2; float w; };
struct mix { int tag : 3; float f; };
"""

BITS_C = """\
#include "bits.h"
float total(const struct token *t, int n)
{
    float s = 0;
    for (int i = 0; i < n; i++) s += t[i].value * t[i].w;
    return s;
}
void copy_tokens(struct token *dst, const struct token *src, int n)
{
    for (int i = 0; i < n; i++) dst[i] = src[i];
}
int kinds(const struct token *t, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) s += t[i].type;
    return s;
}
int by_value(struct token t, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) s += t.value;
    return s;
}
struct mix remix(struct mix m, int n)
{
    for (int i = 0; i < n; i++) m.f += 1.0f;
    return m;
}
"""

BITS_MAIN = r"""#include <stdio.h>
#include "bits.h"
float total(const struct token *t, int n);
void copy_tokens(struct token *dst, const struct token *src, int n);
int kinds(const struct token *t, int n);
int by_value(struct token t, int n);
struct mix remix(struct mix m, int n);
int main(void)
{
    struct token a[13], b[13];
    for (int i = 0; i < 13; i++) {
        a[i].type = i % 8; a[i].len = i * 100; a[i].value = i * 3 - 7;
        a[i].flags = i % 4; a[i].w = i * 0.5f;
    }
    copy_tokens(b, a, 13);
    for (int i = 0; i < 13; i++)
        printf("%u %u %d %u %a\n", b[i].type, b[i].len, b[i].value, b[i].flags, b[i].w);
    struct mix m = {-2, 1.25f}, r = remix(m, 5);
    printf("%a %d %d %d %a\n", total(b, 13), kinds(b, 13), by_value(a[5], 4), r.tag, r.f);
    return 0;
}
"""


def test_structs_with_bit_fields(tmp_path):
    """Bit-fields' bytes travel with their struct (copied, passed by value in the registers
    gcc uses: `struct mix` is one INTEGER eightbyte); reading or writing a bit-field is
    refused by name."""
    files = {"bits.h": BITS_H, "k.c": BITS_C, "main.c": BITS_MAIN}
    both = build_both(tmp_path, files, ["-O2"], extra_env=TAKEOVER_ALL)
    assert_by_pycc(both, "total", "copy_tokens", "by_value", "remix")
    assert "bit-field 'type' is not supported" in both.functions["kinds"]["reason"]
    assert both.pycc_output == both.cc_output
    assert both.cc_output.count("\n") == 14


def _clang() -> str | None:
    """A clang binary (its CodeGen is the model frontend/abi.py follows), if installed."""
    found = shutil.which("clang")
    candidates = sorted(glob.glob("/usr/lib/llvm-*/bin/clang"), reverse=True)
    return found or (candidates[0] if candidates else None)


def _split_top(text: str) -> list[str]:
    """`a, {b, c}, <2 x float> d` split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for k, char in enumerate(text):
        depth += char in "({[<"
        depth -= char in ")}]>"
        if char == "," and depth == 0:
            parts.append(text[start:k].strip())
            start = k + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _where(result: str, params: str) -> tuple[list[str], list[str]]:
    """Where an LLVM signature puts its values on x86-64: registers in order, `stack` for an
    argument past the registers or passed `byval` (an i64 on the stack and an 8-byte `byval`
    struct are the same bytes), `sret` for a hidden result pointer."""
    gp = ["rdi", "rsi", "rdx", "rcx", "r8", "r9"]
    sse = [f"xmm{k}" for k in range(8)]
    args = []
    for param in _split_top(params):
        if "sret(" in param:
            args.append("sret:" + gp.pop(0))
        elif "byval(" in param:
            args.append("stack")
        else:
            pool = sse if re.match(r"(float|double|<2 x float>)", param) else gp
            args.append(pool.pop(0) if pool else "stack")
    returned = _split_top(result.strip("{} ")) if result != "void" else []
    gp_out, sse_out = ["rax", "rdx"], ["xmm0", "xmm1"]
    out = [
        (sse_out if re.match(r"(float|double|<2 x float>)", t) else gp_out).pop(0) for t in returned
    ]
    return out, args


def _signatures(ir_text: str) -> dict[str, tuple[list[str], list[str]]]:
    found = {}
    for line in ir_text.splitlines():
        m = re.match(r'define (?:dso_local |internal )?(.+?) @"?(\w+)"?\((.*)\)', line)
        if m:
            found[m.group(2)] = _where(m.group(1), m.group(3))
    return found


@pytest.mark.skipif(_clang() is None, reason="no clang to compare with")
def test_struct_signatures_put_values_where_clang_does(tmp_path):
    """The LLVM signatures of the by-value kernels put every argument and result in the
    register (or the stack) clang's CodeGen chooses for the same C."""
    (tmp_path / "types.h").write_text(TYPES)
    (tmp_path / "k.c").write_text(KERNELS)
    done = subprocess.run(
        [_clang(), "-S", "-emit-llvm", "-O0", "-o", "-", "k.c"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = _signatures(done.stdout)
    ours = _signatures(str(lower_file(str(tmp_path / "k.c")).module))
    by_value = [n for n in NAMES if n.startswith(("sum_", "exhaust_", "ret_", "scale_"))]
    assert len(by_value) == 22
    assert {n: ours[n] for n in by_value} == {n: theirs[n] for n in by_value}
