"""Plain-data structs in the front end, the passes and `check` (issue 14 §2).

The layout the front end gives each struct (member offsets, size, alignment) is compared with
what cc's own `sizeof`, `_Alignof` and `offsetof` print; kernels that use structs (members,
pointers to structs, arrays of structs, copies, by-value calls and results between functions
of the file) are checked bit for bit against cc; member addresses must reach the passes as
`base + constant offset`, so accesses to two members of one struct are accesses to one object.
"""

from __future__ import annotations

import subprocess

import pytest
from pycc_stencil.frontend import c_types as ct
from pycc_stencil.frontend.module import lower_file
from pycc_stencil.ir_passes.core.affine import accesses
from pycc_stencil.polyhedral.scop import extract_scops
from pycc_stencil.runtime.check import CheckOptions, check_file

#: struct definitions with their members (paths into nested structs), odd sizes on purpose
LAYOUTS = {
    "struct s1": ("struct s1 { char c; double d; };", ["c", "d"]),
    "struct s2": ("struct s2 { char c[3]; short s; };", ["c", "s"]),
    "struct s3": ("struct s3 { struct s1 in; char tail; };", ["in", "in.c", "in.d", "tail"]),
    "struct s4": (
        "struct s4 { char c; double d __attribute__((aligned(16))); int k; };",
        ["c", "d", "k"],
    ),
    "struct s5": (
        "struct s5 { short s; struct s2 arr[3]; float f; };",
        ["s", "arr", "arr[2].s", "f"],
    ),
    "struct s6": ("struct __attribute__((aligned(32))) s6 { int a; char b; };", ["a", "b"]),
    "struct s7": ("struct s7 { float x; int k; float y; };", ["x", "k", "y"]),
    "struct s8": (
        "struct s8 { long long a; char b; int c[5]; unsigned char u; };",
        ["a", "b", "c", "u"],
    ),
    "cplx": ("typedef struct { double re, im; } cplx;", ["re", "im"]),
    "struct s9": ("struct s9 { cplx z[3]; char tag; };", ["z", "z[1].im", "tag"]),
    "struct s10": (
        "struct s10 { _Bool b; void *p; unsigned short h[3]; };",
        ["b", "p", "h"],
    ),
}


def _cc_layout(tmp_path) -> dict[str, list[int]]:
    """sizeof, _Alignof and each member's offsetof of every LAYOUTS entry, as cc says."""
    lines = []
    for k, (name, (_, members)) in enumerate(LAYOUTS.items()):
        values = [f"sizeof({name})", f"_Alignof({name})"]
        values += [f"offsetof({name}, {m})" for m in members]
        lines.append(f'    printf("{k}' + " %zu" * len(values) + f'\\n", {", ".join(values)});')
    source = "\n".join(
        ["#include <stdio.h>", "#include <stddef.h>"]
        + [d for d, _ in LAYOUTS.values()]
        + ["int main(void) {", *lines, "    return 0;", "}"]
    )
    (tmp_path / "layout.c").write_text(source)
    subprocess.run(["cc", "layout.c", "-o", "layout"], cwd=tmp_path, check=True)
    out = subprocess.run(["./layout"], cwd=tmp_path, check=True, capture_output=True, text=True)
    names = list(LAYOUTS)
    rows = [line.split() for line in out.stdout.splitlines()]
    return {names[int(k)]: [int(v) for v in values] for k, *values in rows}


def _our_layout(tmp_path) -> dict[str, list[int]]:
    """The same numbers from the front end's model (each struct as a parameter's pointee)."""
    uses = [f"void use{k}({name} *p) {{ }}" for k, name in enumerate(LAYOUTS)]
    path = tmp_path / "uses.c"
    path.write_text("\n".join([d for d, _ in LAYOUTS.values()] + uses) + "\n")
    lowered = lower_file(str(path))
    result = {}
    for k, (name, (_, members)) in enumerate(LAYOUTS.items()):
        t = lowered.functions[f"use{k}"].params[0].ctype.pointee
        assert isinstance(t, ct.StructType)
        result[name] = [t.size, t.align] + [_member_offset(t, m) for m in members]
    return result


def test_layout_is_cc_s(tmp_path):
    assert _our_layout(tmp_path) == _cc_layout(tmp_path)


def _member_offset(t: ct.StructType, path: str) -> int:
    """The byte offset of `a.b[2].c` in our model."""
    offset = 0
    current: ct.CType = t
    for part in path.split("."):
        name, _, index = part.partition("[")
        assert isinstance(current, ct.StructType)
        member = current.field(name)
        offset += member.offset
        current = member.ctype
        if index:
            assert isinstance(current, ct.ArrayType)
            current = current.element
            offset += int(index.rstrip("]")) * ct.size_of(current)
    return offset


KERNEL_C = """
struct grid { int n, m; double a[5][7]; double *out; };
struct pt { float x; int k; float y; };
struct dd { double x, y; };
struct big { double a, b, c; };

static double sum_pt(struct pt p) { return p.x + p.k * p.y; }
static struct dd mk(double a, double b) { struct dd r; r.x = a; r.y = b; return r; }
static struct big mkbig(double a) { struct big r; r.a = a; r.b = 2 * a; r.c = 3 * a; return r; }
static void copy_pts(struct pt *d, const struct pt *s, int n) {
    for (int i = 0; i < n; i++) d[i] = s[i];  /* from const structs */
}
static void fill(struct grid *g, const double *in) {
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 7; j++) g->a[i][j] = in[i * 7 + j];
}

void kern(int n, const double *in, double *out, double *out2) {
    struct grid g;
    struct pt pts[3];
    g.n = 5; g.m = 7; g.out = out;
    fill(&g, in);
    struct pt pts0[3];
    for (int i = 0; i < 3; i++) { pts0[i].x = in[i]; pts0[i].k = i; pts0[i].y = in[i + 3]; }
    copy_pts(pts, pts0, 3);
    for (int i = 0; i < g.n; i++)
        for (int j = 0; j < g.m; j++)
            g.out[i * g.m + j] = g.a[i][j] * 2.0 + sum_pt(pts[i % 3]);
    for (int i = 0; i < n; i++) {
        struct dd d = mk(in[i], in[i + 1]);
        struct big b = mkbig(d.x);
        struct dd e;
        e = d;
        d.x = 0;  /* e is a copy */
        out2[i] = e.x + e.y + b.c + d.x + (i ? mk(1, 2) : mk(3, 4)).y;
    }
}
"""


def test_kernels_using_structs_are_bit_exact(tmp_path, pycc):
    """Members, pointers to structs, arrays of structs, copies, by-value calls and results,
    `sret` results, a conditional struct value: one kernel, checked against cc."""
    path = tmp_path / "k.c"
    path.write_text(KERNEL_C)
    extents = {"in": 40, "out": 35, "out2": 33}
    pycc.check(path, "kern", params={"n": 33}, extents=extents, strict=True)


SMOOTH_C = """
struct field { int n; double a[19][23]; double b[19][23]; };

static void load(struct field *f, const double *in) {
    for (int i = 0; i < 19; i++)
        for (int j = 0; j < 23; j++) { f->a[i][j] = in[i * 23 + j]; f->b[i][j] = 0; }
}

void smooth(const double *in, double *out, int steps) {
    struct field f;
    load(&f, in);
    for (int t = 0; t < steps; t++) {
        for (int i = 1; i < 18; i++)
            for (int j = 1; j < 22; j++)
                f.b[i][j] = 0.25 * (f.a[i - 1][j] + f.a[i + 1][j] + f.a[i][j - 1] + f.a[i][j + 1]);
        for (int i = 1; i < 18; i++)
            for (int j = 1; j < 22; j++)
                f.a[i][j] = f.b[i][j] + 0.5 * f.a[i][j];
    }
    for (int i = 0; i < 19 * 23; i++) out[i] = f.a[i / 23][i % 23];
}
"""


@pytest.mark.parametrize(
    "passes, done",
    [
        ("time-tile", "time-tiled"),
        ("tile(8,8)", "tiled a 2-deep band"),
        ("simd", "vectorized by SIMD binding"),
        ("align,simd", "accesses aligned to 8 bytes"),
        ("unroll(4)", "unrolled by 4"),
    ],
)
def test_passes_over_struct_members_are_bit_exact(tmp_path, passes, done):
    """The two member arrays are one object to the passes (the flow from `b` back to `a` is
    a dependence), so tiling, SIMD binding and unrolling stay exact."""
    path = tmp_path / "smooth.c"
    path.write_text(SMOOTH_C)
    remarks = []
    options = CheckOptions(
        functions=["smooth"],
        params={"steps": "5"},
        extents={"in": 437, "out": 437},
        passes=passes,
    )
    results = check_file(path, [], options, remarks=remarks.extend)
    assert [(r.name, r.status) for r in results] == [("smooth", "OK")], [str(r) for r in results]
    assert any(r.kind == "passed" and done in r.message for r in remarks), remarks


SWEEP_C = """
struct grid { int n; double a[9][11]; double b[9][11]; };
void sweep(struct grid *g) {
    for (int i = 1; i < 9; i++)
        for (int j = 1; j < 11; j++)
            g->b[i][j] = g->a[i - 1][j] + g->a[i][j - 1];
}
"""


def test_member_accesses_are_affine_at_a_constant_offset_from_the_struct(tmp_path):
    path = tmp_path / "sweep.c"
    path.write_text(SWEEP_C)
    function = lower_file(str(path)).module.get_global("sweep")
    g = function.args[0]
    found = {(a.is_store, a.address.offset.constant_term) for a in accesses(function)}
    # g->b[i][j] at 8 + 792 + 88*i + 8*j; g->a[i - 1][j] at 8 - 88 + ...; g->a[i][j - 1] at 0
    assert found == {(True, 800), (False, -80), (False, 0)}
    assert all(a.address.base is g for a in accesses(function))
    (scop,), rejected = extract_scops(function)
    assert not rejected
    assert [a.name for a in scop.arrays] == ["g"]  # both members: one object, no false "no alias"
    dom = "0 < i <= 8 and 0 < j <= 10"
    want = f"{{ S0[i, j] -> g[100 + 11i + j] : {dom} }}"
    assert scop.writes().is_equal(type(scop.writes())(want)), scop.writes()


BY_VALUE_C = """
struct ii { int a, b; };
struct dd { double x, y; };
struct fif { float x; int k; float y; };
struct di { double x; int k; };
struct c3 { char a, b, c; };
struct big { double a; int k; double c; };
struct arr { short s; float v[5]; };
struct nest { struct fif f; struct c3 c; double d; };

double by_value(struct ii i, struct dd d, struct fif f, struct di x, struct c3 c, struct big b,
                struct arr r, struct nest s, int count, double *out) {
    double t = 0;
    for (int k = 0; k < count; k++) {
        t = t * 0.5 + i.a - i.b + d.x * d.y + f.x + f.k - f.y + x.x * x.k + c.a + c.b * c.c
            + b.a * b.k - b.c + r.s + r.v[k % 5] + s.f.y + s.c.b + s.d;
        out[k] = t;
    }
    return t;
}
struct big ret_big(int n, const double *v) {
    struct big r; r.a = 0; r.k = n; r.c = 1;
    for (int i = 0; i < n; i++) { r.a += v[i]; r.c *= v[i]; }
    return r;
}
struct fif ret_fif(int n, const float *v) {
    struct fif r; r.x = 0; r.k = 0; r.y = 1;
    for (int i = 0; i < n; i++) { r.x += v[i]; r.k += i; r.y *= v[i]; }
    return r;
}
struct nest ret_nest(struct nest s, int m) {
    for (int i = 0; i < m; i++) { s.f.x += s.d; s.c.a += 1; }
    return s;
}
"""


@pytest.mark.parametrize("passes", [None, "auto"])
def test_check_passes_structs_by_value_and_compares_struct_results(tmp_path, passes, pycc):
    """The JIT code and the reference are called through ctypes mirrors of the structs
    (libffi classifies them itself), struct results compared member by member; `auto`
    searches strategies on copies of the module, which keep the `byval`/`sret` types."""
    path = tmp_path / "by_value.c"
    path.write_text(BY_VALUE_C)
    params = {"count": 13, "n": 11, "m": 7}
    for function in ("by_value", "ret_big", "ret_fif", "ret_nest"):
        pycc.check(path, function, params=params, passes=passes, strict=True)


def test_a_struct_parameter_cannot_be_given_a_value(tmp_path):
    path = tmp_path / "by_value.c"
    path.write_text(BY_VALUE_C)
    options = CheckOptions(functions=["ret_nest"], params={"s": "1", "m": "7"})
    (result,) = check_file(path, [], options)
    assert result.status == "ERROR"
    assert "bad --param: parameter 's' is a struct: its members are defaults" in str(result)


def test_check_refuses_structs_it_cannot_pass_with_a_reason(tmp_path):
    path = tmp_path / "refused.c"
    path.write_text(
        "struct g { int n; double *row; };\n"
        "double by_value(struct g s) {\n"
        "  double t = 0;\n  for (int i = 0; i < s.n; i++) t += s.row[i];\n  return t;\n}\n"
        "void by_pointer(struct g *s) {\n"
        "  for (int i = 0; i < s->n; i++) s->row[i] = 0;\n}\n"
    )
    results = {r.name: r for r in check_file(path, [], CheckOptions())}
    assert results["by_value"].status == "SKIPPED"
    assert "struct g (a struct with a pointer member" in str(results["by_value"])
    assert results["by_pointer"].status == "SKIPPED"
    assert "struct g *, which cannot be passed as an array" in str(results["by_pointer"])


INITIALIZERS_C = """
struct in { int a[2]; float f; };
struct P { double x; struct in i; short y; };
struct Q { double m[2][3]; int k; };

void inits(int n, const double *v, double *o) {
    for (int k = 0; k < n; k++) {
        struct P p = {v[k], {{k, 2 * k}, 3.0f}, (short)k};
        struct P q = {2.5};
        struct P t = {0};
        struct Q z = {{{v[k], 1, 2}, {3, 4, v[k + 1]}}, k};
        struct Q w = {0};
        struct P arr[3] = {{1, {{2, 3}, 4}, 5}, p, {v[k]}};
        struct P c = arr[k % 3];
        o[k] = p.x + p.i.a[1] + p.i.f + p.y + q.x + q.i.a[0] + q.y + t.x + t.i.f
             + z.m[1][2] + z.m[0][0] + z.k + w.m[1][1] + arr[0].i.a[1] + arr[2].x + arr[2].y
             + c.x + c.i.f;
    }
}
"""


def test_braced_struct_initializers_are_bit_exact(tmp_path):
    """Nested braces, trailing members left out (zero), `{0}`, arrays of structs."""
    path = tmp_path / "inits.c"
    path.write_text(INITIALIZERS_C)
    options = CheckOptions(params={"n": "17"}, extents={"v": 18, "o": 17})
    results = check_file(path, [], options)
    assert [(r.name, r.status) for r in results] == [("inits", "OK")], [str(r) for r in results]


FOOTPRINT_C = """
struct big { double a; int k; double c; };
void scatter(struct big s, const int *idx, double *out, int n) {
    for (int i = 0; i < n; i++) {
        s.k = idx[i];
        out[s.k] = s.a;
    }
}
void shifted(struct big s, double *out, int n) {
    for (int i = 0; i < n; i++) out[i + s.k] = s.a * i;
}
"""


def test_a_byval_struct_holds_data_only_once_data_is_stored_in_it(tmp_path):
    """A struct passed in memory (`byval`) is the call's own copy of the caller's values: the
    dry run measures `shifted`'s footprint at them; data stored into it (`s.k = idx[i]`)
    makes the addresses built from it depend on data, which the dry run cannot measure."""
    path = tmp_path / "footprint.c"
    path.write_text(FOOTPRINT_C)
    results = {r.name: r for r in check_file(path, [], CheckOptions(params={"n": "5"}))}
    assert results["shifted"].status == "OK", str(results["shifted"])
    assert results["scatter"].status == "ERROR"
    assert "cannot size out: the footprint depends on data" in str(results["scatter"])


POINTERS_C = """
struct cell { double v[3]; short tag; };
struct mesh { int n; struct cell cells[6]; };
static struct cell pick(int c, struct cell a, struct cell b) { return c ? a : b; }
void edge(int n, const double *in, double *out) {
    struct mesh m;
    m.n = 6;
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 3; j++) m.cells[i].v[j] = in[i * 3 + j];
        m.cells[i].tag = (short)i;
    }
    struct cell *p = m.cells, *q = &m.cells[5];
    for (int k = 0; k < n; k++) {
        struct cell *r = m.cells + (k % 6);
        (*r).v[0] += 1.0;
        r->v[1] = (q - p) + (r - p) + (int)sizeof *r;
        m.cells[(k + 3) % 6] = p[0];
        *q = pick(k & 1, m.cells[1], *r);
        struct cell c = (k, m.cells[2]);
        out[k] = r->v[0] + r->v[1] + r->v[2] + q->tag + c.v[1] + (r < q) + (p == m.cells);
        p++;
        if (p == m.cells + 6) p = m.cells;
    }
}
"""


def test_pointers_to_structs_walk_compare_and_copy_bit_exactly(tmp_path):
    """Struct pointers stepped, subtracted and compared in units of the struct; whole
    elements copied through them; a struct chosen by `?:`, one through the comma operator."""
    path = tmp_path / "pointers.c"
    path.write_text(POINTERS_C)
    options = CheckOptions(functions=["edge"], params={"n": "23"}, extents={"in": 18, "out": 23})
    results = check_file(path, [], options)
    assert [(r.name, r.status) for r in results] == [("edge", "OK")], [str(r) for r in results]


MUTUAL_C = """
struct B;
struct A { struct B *b; double x; };
struct B { struct A *a; double y; };
void mutual(int n, double *out) {
    struct A a;
    struct B b, c;
    a.b = &b; a.x = 1.5; b.a = &a; b.y = 2.5;
    for (int i = 0; i < n; i++) {
        c = *a.b;  /* struct B reached through a member of struct A */
        *a.b = c;
        c.y += i;
        out[i] = c.y + a.x + b.y + b.a->x;
    }
}
"""


def test_structs_pointing_to_each_other_copy_bit_exactly(tmp_path):
    path = tmp_path / "mutual.c"
    path.write_text(MUTUAL_C)
    options = CheckOptions(params={"n": "7"}, extents={"out": 7})
    results = check_file(path, [], options)
    assert [(r.name, r.status) for r in results] == [("mutual", "OK")], [str(r) for r in results]


UNPROTOTYPED_C = """
struct P { double x, y; };
double f();
double g();
void k(int n, double *o) {
    struct P p; p.x = 1; p.y = 2;
    for (int i = 0; i < n; i++) o[i] = f(p) + 1;
}
void k2(int n, double *o) {
    struct P p; p.x = 1; p.y = 2;
    for (int i = 0; i < n; i++) o[i] = g(p, i);
}
double f(struct P p) { return p.x + p.y; }
double g(double a, int i) { return a + i; }
"""


def test_a_struct_passed_without_a_prototype_must_match_the_definition(tmp_path):
    path = tmp_path / "unprototyped.c"
    path.write_text(UNPROTOTYPED_C)
    lowered = lower_file(str(path))
    assert lowered.functions["k"].is_kernel
    (skip,) = [s for s in lowered.skipped if s.name == "k2"]
    assert "calls 'g' with arguments that do not match its definition" in skip.reason


def test_bit_fields_occupy_bytes_of_their_struct(tmp_path):
    """A struct's bit-fields are bytes the layout keeps (at clang's offsets, runs merged):
    `check` seeds and compares them with the rest of a struct passed by value; reading one
    is refused by name."""
    path = tmp_path / "k.c"
    path.write_text(
        "struct mix { char c; int tag : 3; unsigned wide : 20; float f; short s : 2; };\n"
        "struct mix remix(struct mix m, int n) {\n"
        "    for (int i = 0; i < n; i++) m.f += 1.0f;\n    return m; }\n"
        "int tags(struct mix m, int n) {\n"
        "    int s = 0;\n    for (int i = 0; i < n; i++) s += m.tag;\n    return s; }\n"
    )
    struct = lower_file(str(path)).functions["remix"].params[0].ctype
    layout = [(f.offset, ct.size_of(f.ctype)) for f in struct.fields]
    assert layout == [(0, 1), (1, 3), (4, 4), (8, 1)]  # c, tag+wide, f, s
    results = {r.name: r for r in check_file(path, [], CheckOptions(params={"n": "5"}))}
    assert results["remix"].status == "OK", str(results["remix"])
    assert results["tags"].status == "SKIPPED"
    assert "bit-field 'tag' is not supported" in results["tags"].message
