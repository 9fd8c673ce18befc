"""Compiler mode: kernels that read and write global variables (issue 14 §2).

Each test builds one program twice: `k.c` by `cc` and by `pycc-stencil` (same flags), the other
files by cc, links and runs both and compares the outputs, which print every element a kernel
wrote (as exact hex floats). The report must say pycc-stencil compiled the kernels: the object
it emits refers to the storage cc's object (or another file) defines, never to a copy.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_compiler_mode import (
    CC,
    PYCC,
    SMALL_CACHES,
    clean_env,
    functions_of,
    read_report,
    run,
    units_for,
)

pytestmark = pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")

#: NAS-style grids at file scope, of odd sizes; `tmp` and `steps` are the file's own (static)
GRIDS_C = """\
#define NX 23
#define NY 19
double u[NY][NX], r[NY][NX];
static double tmp[NY][NX];
int counter;
static int steps = 3;

void resid(void)
{
    for (int j = 1; j < NY - 1; j++)
        for (int i = 1; i < NX - 1; i++)
            r[j][i] = u[j][i] - 0.25 * (u[j - 1][i] + u[j + 1][i] + u[j][i - 1] + u[j][i + 1]);
}

void smooth(double w)
{
    for (int j = 1; j < NY - 1; j++)
        for (int i = 1; i < NX - 1; i++)
            tmp[j][i] = w * r[j][i];
    for (int j = 1; j < NY - 1; j++)
        for (int i = 1; i < NX - 1; i++)
            u[j][i] += tmp[j][i];
}

void count(int n)
{
    for (int i = 0; i < n; i++) {
        counter += i;
        steps++;
    }
}

double tmp_at(int j, int i) { return tmp[j][i]; }
int steps_now(void) { return steps; }
"""

GRIDS_MAIN = """\
#include <stdio.h>
#define NX 23
#define NY 19
extern double u[NY][NX], r[NY][NX];
extern int counter;
void resid(void); void smooth(double w); void count(int n);
double tmp_at(int j, int i); int steps_now(void);
int main(void)
{
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++)
            u[j][i] = ((j * 31 + i * 7) % 13) * 0.37 + 1.0 / (i + j + 1);
    for (int k = 0; k < 3; k++) {
        resid();
        smooth(0.5);
        count(11 + k);
    }
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++)
            printf("%a %a %a\\n", u[j][i], r[j][i], tmp_at(j, i));
    printf("%d %d\\n", counter, steps_now());
    return 0;
}
"""


def build_both(
    tmp_path: Path,
    files: dict[str, str],
    flags: list[str],
    shared: bool = False,
    env_extra: dict[str, str] | None = None,
    pycc_flags: tuple[str, ...] = (),
) -> tuple[str, str, dict[str, dict], Path]:
    """Build k.c with `flags` by cc and by pycc-stencil (plus `pycc_flags`; an object, or with
    `shared` a `-fPIC -shared` library), link main.c and the other files by cc, run both.
    Returns both outputs, pycc-stencil's report of k.c and its output file."""
    env = clean_env(tmp_path / "cache", **{"PYCC_TAKEOVER": "all", **(env_extra or {})})
    report = tmp_path / "report.jsonl"
    others = [name for name in files if name not in ("k.c", "main.c")]
    outputs = {}
    for side, compiler in (("cc", CC), ("pycc", PYCC)):
        d = tmp_path / side
        d.mkdir()
        for name, text in files.items():
            (d / name).write_text(text)
        output = "libk.so" if shared else "k.o"
        kind = ["-fPIC", "-shared"] if shared else ["-c"]
        side_env, own = (
            (dict(env, PYCC_REPORT=str(report)), pycc_flags) if side == "pycc" else (env, ())
        )
        run([compiler, *flags, *own, *kind, "k.c", "-o", output], d, side_env)
        link = ["-L.", "-lk", "-Wl,-rpath,$ORIGIN"] if shared else [output]
        run([CC, "-O1", "main.c", *others, *link, "-o", "app", "-lm"], d, env)
        outputs[side] = run(["./app"], d, env).stdout
    (unit,) = units_for(read_report(report), "k.c")
    return outputs["cc"], outputs["pycc"], functions_of(unit), tmp_path / "pycc" / output


def assert_by_pycc(functions: dict[str, dict], *names: str) -> None:
    for name in names:
        assert functions[name]["compiled_by"] == "pycc-stencil", functions[name]


def defined_symbols(path: Path) -> str:
    return subprocess.run(
        ["nm", "--defined-only", str(path)], capture_output=True, text=True
    ).stdout


@pytest.mark.parametrize("flags", [["-O2"], ["-O0", "-g"], ["-O3", "-march=haswell"]])
def test_grids_counters_and_static_globals(tmp_path, flags):
    """Global grids written by kernels and read by main, a static grid main reads through an
    accessor, a global counter and a static one updated in a loop."""
    cc_out, pycc_out, functions, obj = build_both(
        tmp_path, {"k.c": GRIDS_C, "main.c": GRIDS_MAIN}, flags
    )
    assert_by_pycc(functions, "resid", "smooth", "count")
    assert pycc_out == cc_out
    assert len(cc_out.splitlines()) == 19 * 23 + 1
    symbols = defined_symbols(obj)
    # the static globals are reached through their hidden aliases, not copied
    assert "_tmp" in symbols and "_steps" in symbols
    for line in symbols.splitlines():
        if line.endswith(("_tmp", "_steps")):
            assert line.split()[1] in "bBdD"


TENTATIVE_C = """\
double a[101];
double b[101];
int hits;

void blend(int n, double w)
{
    for (int i = 1; i < n - 1; i++) {
        b[i] = w * a[i - 1] + (1 - w) * a[i + 1];
        if (b[i] > 1.0)
            hits++;
    }
}
"""

TENTATIVE_MAIN = """\
#include <stdio.h>
double a[101];
double b[101];
int hits;
void blend(int n, double w);
int main(void)
{
    for (int i = 0; i < 101; i++)
        a[i] = (i % 7) * 0.3125 + 0.1;
    blend(101, 0.375);
    blend(57, 0.625);
    for (int i = 0; i < 101; i++)
        printf("%a\\n", b[i]);
    printf("%d\\n", hits);
    return 0;
}
"""


@pytest.mark.parametrize("common", ["-fcommon", "-fno-common"])
def test_tentative_definitions(tmp_path, common):
    """`double a[101];` without initializer at file scope: a common symbol with -fcommon
    (main.c repeats it: the link merges them), a definition in .bss with -fno-common (main.c's
    then must be `extern`)."""
    main = TENTATIVE_MAIN
    if common == "-fno-common":
        main = main.replace("double a[", "extern double a[").replace(
            "double b[", "extern double b["
        )
        main = main.replace("int hits;", "extern int hits;")
    cc_out, pycc_out, functions, _ = build_both(
        tmp_path, {"k.c": TENTATIVE_C, "main.c": main}, ["-O2", common]
    )
    assert_by_pycc(functions, "blend")
    assert pycc_out == cc_out
    assert len(cc_out.splitlines()) == 102


EXTERN_C = """\
extern double field[];
extern float weights[3][5];
extern long total;

void apply(int n)
{
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < n; i++) {
            field[i] = field[i] * weights[k][i % 5] + 1.0;
            total += (long)field[i];
        }
}
"""

EXTERN_DATA = """\
double field[97];
float weights[3][5] = {{1.5f, 0.5f, 0.25f, 2.0f, 1.0f}, {0.75f}, {1, 1, 1, 1, 0.5f}};
long total = 5;
"""

EXTERN_MAIN = """\
#include <stdio.h>
extern double field[97];
extern long total;
void apply(int n);
int main(void)
{
    for (int i = 0; i < 97; i++)
        field[i] = 1.0 / (i + 3);
    apply(97);
    apply(41);
    for (int i = 0; i < 97; i++)
        printf("%a\\n", field[i]);
    printf("%ld\\n", total);
    return 0;
}
"""


def test_extern_globals_defined_in_another_file(tmp_path):
    """`extern double field[];` (unknown size), a 2-D extern table and an extern scalar, all
    defined in data.c: the kernel's object needs the symbols, the link finds them."""
    files = {"k.c": EXTERN_C, "data.c": EXTERN_DATA, "main.c": EXTERN_MAIN}
    cc_out, pycc_out, functions, _ = build_both(tmp_path, files, ["-O2"])
    assert_by_pycc(functions, "apply")
    assert pycc_out == cc_out
    assert len(cc_out.splitlines()) == 98


TABLE_C = """\
extern const unsigned char clip[512];
extern const int gain;
void add_clip(int n, const unsigned char *a, const unsigned char *b, unsigned char *out)
{
    for (int i = 0; i < n; i++)
        out[i] = clip[(a[i] + b[i]) * gain % 512];
}
"""

TABLE_MAIN = (
    (
        "#include <stdio.h>\nconst unsigned char clip[512] = {"
        + ", ".join(str(i * 7 % 251) for i in range(512))
        + "};\n"
    )
    + """\
const int gain = 3;
void add_clip(int n, const unsigned char *a, const unsigned char *b, unsigned char *out);
int main(void)
{
    unsigned char a[41], b[41], out[41];
    for (int i = 0; i < 41; i++) { a[i] = (unsigned char)(i * 37); b[i] = (unsigned char)(i * 11); }
    add_clip(41, a, b, out);
    for (int i = 0; i < 41; i++) printf("%d\\n", out[i]);
    return 0;
}
"""
)


def test_constant_tables_defined_in_another_file(tmp_path):
    """`extern const` tables and scalars (libwebp's clip tables): the kernel reads them
    through their symbols, as cc's object does."""
    files = {"k.c": TABLE_C, "main.c": TABLE_MAIN}
    cc_out, pycc_out, functions, _ = build_both(tmp_path, files, ["-O2"])
    assert_by_pycc(functions, "add_clip")
    assert pycc_out == cc_out
    assert len(set(cc_out.splitlines())) > 10


SHARED_C = """\
#define N 61
double state[N];
static double history[N];
static int calls;

void relax(int n, const double *in)
{
    for (int i = 1; i < n - 1; i++) {
        history[i] += state[i];
        state[i] = 0.5 * state[i] + 0.25 * (in[i - 1] + in[i + 1]);
    }
    for (int i = 0; i < n; i++)
        calls++;
}

double history_at(int i) { return history[i]; }
int calls_made(void) { return calls; }
"""

SHARED_MAIN = """\
#include <stdio.h>
#define N 61
extern double state[N];
void relax(int n, const double *in);
double history_at(int i);
int calls_made(void);
int main(void)
{
    double in[N];
    for (int i = 0; i < N; i++) {
        in[i] = (i % 5) * 0.75 + 0.5;
        state[i] = 1.0 / (i + 1);
    }
    relax(N, in);
    relax(37, state);
    for (int i = 0; i < N; i++)
        printf("%a %a\\n", state[i], history_at(i));
    printf("%d\\n", calls_made());
    return 0;
}
"""


@pytest.mark.parametrize("extra", [[], ["-fvisibility=hidden"]])
def test_shared_library_kernel_updates_globals(tmp_path, extra):
    """A `-fPIC -shared` library whose kernel updates an exported global (main.c's `state` is
    the library's, by copy relocation or GOT), a static array and a static counter; the
    second call passes the global itself as the input pointer."""
    if extra:  # main cannot reach a hidden `state`: keep it exported
        source = SHARED_C.replace(
            "double state[N];", '__attribute__((visibility("default"))) double state[N];'
        )
        source = source.replace("void relax", '__attribute__((visibility("default"))) void relax')
        source = source.replace(
            "double history_at", '__attribute__((visibility("default"))) double history_at'
        )
        source = source.replace(
            "int calls_made", '__attribute__((visibility("default"))) int calls_made'
        )
    else:
        source = SHARED_C
    cc_out, pycc_out, functions, _ = build_both(
        tmp_path, {"k.c": source, "main.c": SHARED_MAIN}, ["-O2", *extra], shared=True
    )
    assert_by_pycc(functions, "relax")
    assert pycc_out == cc_out
    assert len(cc_out.splitlines()) == 62


ALIAS_C = """\
#define N 37
double u[N][N];

void sweep(int t, const double *p)
{
    for (int s = 0; s < t; s++)
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                u[i][j] = 0.25 * (p[(i - 1) * N + j] + p[(i + 1) * N + j] + p[i * N + j - 1]
                                  + p[i * N + j + 1]) + 0.125 * u[i][j];
}
"""

ALIAS_MAIN = """\
#include <stdio.h>
#define N 37
extern double u[N][N];
void sweep(int t, const double *p);
int main(void)
{
    double v[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            v[i * N + j] = u[i][j] = ((i * 7 + j * 3) % 11) * 0.5;
    sweep(3, v);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            printf("%a\\n", u[i][j]);
    sweep(3, &u[0][0]);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            printf("%a\\n", u[i][j]);
    return 0;
}
"""


@pytest.mark.parametrize("passes", ["tile", "time-tile", "simd", "unroll-jam(2)"])
def test_pointer_argument_into_a_global(tmp_path, passes):
    """The pointer argument points into the global the kernel writes (second call): the
    run-time check of the tiled (vector) code must see the overlap and run the original order
    (without it, the new order reads values the sweep already overwrote). The first call
    (apart) runs the transformed code."""
    cc_out, pycc_out, functions, _ = build_both(
        tmp_path,
        {"k.c": ALIAS_C, "main.c": ALIAS_MAIN},
        ["-O2"],
        env_extra=SMALL_CACHES,
        pycc_flags=(f"-fpycc-passes={passes}",),
    )
    assert_by_pycc(functions, "sweep")
    name = passes.partition("(")[0]
    assert any(f"[-Rpass={name}]" in r for r in functions["sweep"]["remarks"]), functions
    assert pycc_out == cc_out
    assert len(cc_out.splitlines()) == 2 * 37 * 37


BOUND_C = """\
int bounds[2] = {37, 11};
double grid[41][13];

void fill(int *p, double w)
{
    for (int i = 0; i < bounds[0]; i++)
        for (int j = 0; j < bounds[1]; j++) {
            grid[i][j] = w * i + j;
            p[j % 2] = p[j % 2] + (i == 3 && j == 5 ? -1 : 0);
        }
}

void sweep(double w)
{
    for (int i = 1; i < bounds[0] - 1; i++)
        for (int j = 1; j < bounds[1] - 1; j++)
            grid[i][j] = w * (grid[i - 1][j] + grid[i + 1][j]) + grid[i][j - 1];
}
"""

BOUND_MAIN = """\
#include <stdio.h>
extern int bounds[2];
extern double grid[41][13];
void fill(int *p, double w);
void sweep(double w);
int main(void)
{
    int spare[2] = {0, 0};
    fill(spare, 0.5);
    fill(bounds, 0.25);  /* shrinks its own bounds while it runs */
    sweep(0.375);
    bounds[0] = 29;
    sweep(0.125);
    for (int i = 0; i < 41; i++)
        for (int j = 0; j < 13; j++)
            printf("%a\\n", grid[i][j]);
    printf("%d %d\\n", bounds[0], bounds[1]);
    return 0;
}
"""


def test_loop_bounds_in_a_global_a_pointer_may_write(tmp_path):
    """`fill` stores through a pointer that main points at the bounds themselves: the bound
    must be read on every iteration. `sweep` writes no bound: tiled, its bounds read once per
    call (main changes them between calls)."""
    cc_out, pycc_out, functions, _ = build_both(
        tmp_path,
        {"k.c": BOUND_C, "main.c": BOUND_MAIN},
        ["-O2"],
        env_extra=SMALL_CACHES,
        pycc_flags=("-fpycc-passes=tile",),
    )
    assert_by_pycc(functions, "fill", "sweep")
    assert any("[-Rpass=tile]" in r for r in functions["sweep"]["remarks"]), functions
    assert not any("[-Rpass=tile]" in r for r in functions["fill"]["remarks"]), functions
    assert pycc_out == cc_out
    assert len(cc_out.splitlines()) == 41 * 13 + 1


#: NPB's ft.c keeps complex numbers in global arrays of a struct: an array of them, a static
#: one, a struct of ints (12 bytes, no multiple of 8), one with an initializer
STRUCT_GLOBALS_C = """\
typedef struct { double real, imag; } dcomplex;
struct range { int lo, hi, step; };
dcomplex u[37];
static dcomplex sums[7];
struct range span;
struct params { int n; double scale; } P = { 5, 0.5 };

void twiddle(int n)
{
    for (int i = 0; i < n; i++) {
        u[i].real = u[i].real * P.scale + i;
        u[i].imag = u[i].imag - u[(i + 1) % n].real;
    }
}

void accumulate(void)
{
    for (int k = 0; k < 7; k++) {
        sums[k].real += u[k].real;
        sums[k].imag += u[k].imag;
    }
}

void walk(void)
{
    for (int i = span.lo; i < span.hi; i++)
        u[i % 37].imag += span.step;
}

double total(void)
{
    double s = 0;
    for (int k = 0; k < 7; k++)
        s += sums[k].real * 3 + sums[k].imag;
    return s;
}
"""

STRUCT_GLOBALS_MAIN = """\
#include <stdio.h>
typedef struct { double real, imag; } dcomplex;
struct range { int lo, hi, step; };
extern dcomplex u[37];
extern struct range span;
void twiddle(int n); void accumulate(void); void walk(void); double total(void);
int main(void)
{
    for (int i = 0; i < 37; i++) { u[i].real = i * 0.25; u[i].imag = 37 - i; }
    span.lo = 3; span.hi = 29; span.step = 7;
    for (int r = 0; r < 5; r++) { twiddle(31 + r); walk(); accumulate(); }
    for (int i = 0; i < 37; i++) printf("%a %a\\n", u[i].real, u[i].imag);
    printf("%a\\n", total());
    return 0;
}
"""


@pytest.mark.parametrize("flags", [["-O2"], ["-O3", "-march=native", "-ffp-contract=off"]])
def test_global_structs_and_arrays_of_them(tmp_path, flags):
    """Globals of struct type (issue 14 §2: plain-data structs, arrays of them) are the
    program's own storage: the kernels read and write their members in place."""
    cc_out, pycc_out, functions, obj = build_both(
        tmp_path, {"k.c": STRUCT_GLOBALS_C, "main.c": STRUCT_GLOBALS_MAIN}, flags
    )
    assert_by_pycc(functions, "twiddle", "accumulate", "walk", "total")
    assert pycc_out == cc_out
    assert len(cc_out.splitlines()) == 38


#: static locals: an external function's (a counter, a zeroed scratch array, a constant table:
#: state kept between calls in its one definition), and a static function's, which a taken-
#: over caller would call in its own copy
STATIC_LOCALS_C = """\
static int counter(void) { static int n; return ++n; }
int bump(void) { return counter(); }
double scratch_sum(int n, const double *a)
{
    static double tmp[64];
    static int calls = 3;
    static const double w[3] = { 0.25, 0.5, 0.25 };
    calls++;
    double s = 0;
    for (int i = 0; i < n && i < 64; i++)
        tmp[i] += a[i] * w[i % 3] + calls;
    for (int i = 0; i < 64; i++)
        s += tmp[i];
    return s;
}
void fill(int n, double *a) { for (int i = 0; i < n; i++) a[i] = counter() * 0.5; }
"""

STATIC_LOCALS_MAIN = """\
#include <stdio.h>
int bump(void); double scratch_sum(int n, const double *a); void fill(int n, double *a);
int main(void)
{
    double a[50];
    fill(50, a);
    for (int r = 0; r < 4; r++) printf("%a %d\\n", scratch_sum(37 + r, a), bump());
    fill(7, a);
    printf("%a %d\\n", a[6], bump());
    return 0;
}
"""


def test_static_locals_keep_their_state_in_one_place(tmp_path):
    """A static local of an external function is the module's own storage (cc's object no
    longer defines the function); one of a static function, which both objects may hold a
    copy of, stays cc's with its callers, and the counter all of them share counts once."""
    cc_out, pycc_out, functions, _ = build_both(
        tmp_path, {"k.c": STATIC_LOCALS_C, "main.c": STATIC_LOCALS_MAIN}, ["-O2"]
    )
    assert_by_pycc(functions, "scratch_sum")
    for name in ("counter", "fill"):
        assert functions[name]["compiled_by"] == "cc", functions[name]
    assert "static local variable 'n' of a static or inline function" in functions["fill"]["reason"]
    assert pycc_out == cc_out


PLUGIN_C = """\
static struct st { double a, b; } sarr[10];
static double bump(int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) { sarr[i].a += i; s += sarr[i].a; }
    return s;
}
extern void reg(double (*)(int));
__attribute__((constructor)) static void init(void) { reg(bump); }
"""

PLUGIN_HOST = """\
#include <stdio.h>
static double (*fns[4])(int);
static int nf;
void reg(double (*f)(int)) { fns[nf++] = f; }
int main(void)
{
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < nf; i++) printf("%a\\n", fns[i](10));
    return 0;
}
"""


@pytest.mark.parametrize("together", [True, False])
def test_one_file_linked_twice_keeps_its_statics_apart(tmp_path, together):
    """A file whose static kernel and static global pycc-stencil takes over, built into two
    objects of one program (a plugin linked twice, `cc plug.c plug.c host.c`): each object's
    statics are its own, as cc's are (the hidden symbols that join pycc-stencil's part to
    cc's are made local; a review found the link failing: "multiple definition")."""
    (tmp_path / "plug.c").write_text(PLUGIN_C)
    (tmp_path / "host.c").write_text(PLUGIN_HOST)
    env = clean_env(tmp_path / "cache", PYCC_TAKEOVER="all")
    outputs = []
    for compiler in (CC, PYCC):
        if together:
            run([compiler, "-O2", "plug.c", "plug.c", "host.c", "-o", "app"], tmp_path, env)
        else:
            for name in ("one.o", "two.o"):
                run([compiler, "-O2", "-c", "plug.c", "-o", name], tmp_path, env)
            run([CC, "one.o", "two.o", "host.c", "-o", "app"], tmp_path, env)
        outputs.append(run(["./app"], tmp_path, env).stdout)
    assert outputs[1] == outputs[0] and len(outputs[0].splitlines()) == 4


UNNAMED_TYPES_C = """\
struct A { struct { int x, y; } s; int k; };
struct C { enum { P, Q } e; int k; };
struct A ga[8];
struct C gc[8];
void fa(int n) { for (int i = 0; i < n; i++) ga[i].s.x += ga[i].k * ga[i].s.y; }
void fc(int n) { for (int i = 0; i < n; i++) gc[i].k += gc[i].e == Q ? 5 : 1; }
"""

UNNAMED_TYPES_MAIN = """\
#include <stdio.h>
struct A { struct { int x, y; } s; int k; };
struct C { enum { P, Q } e; int k; };
extern struct A ga[8];
extern struct C gc[8];
void fa(int n); void fc(int n);
int main(void)
{
    for (int i = 0; i < 8; i++) {
        ga[i].s.x = i; ga[i].s.y = 3 - i; ga[i].k = 2 * i; gc[i].e = i & 1 ? Q : P; gc[i].k = i;
    }
    fa(7); fc(8);
    for (int i = 0; i < 8; i++) printf("%d %d\\n", ga[i].s.x, gc[i].k);
    return 0;
}
"""


def test_named_members_of_unnamed_types(tmp_path):
    """`struct { int x, y; } s;` and `enum { P, Q } e;` are named members of unnamed types,
    members like any other (they were refused as "anonymous struct or union members")."""
    cc_out, pycc_out, functions, _ = build_both(
        tmp_path, {"k.c": UNNAMED_TYPES_C, "main.c": UNNAMED_TYPES_MAIN}, ["-O2"]
    )
    assert_by_pycc(functions, "fa", "fc")
    assert pycc_out == cc_out


TICK_C = """\
int tick(void) { static int n; return ++n; }
int scale(int n, double *a)
{
    int k = tick();
    for (int i = 0; i < n; i++)
        a[i] = a[i] * 0.5 + k;
    return tick();
}
"""

TICK_MAIN = """\
#include <stdio.h>
int tick(void); int scale(int n, double *a);
int main(void)
{
    double a[13] = { 0 };
    int s = 0;
    for (int r = 0; r < 3; r++) { s += scale(13, a); s += tick(); }
    printf("%d %a\\n", s, a[5]);
    return 0;
}
"""

TIMED_C = """\
int jacobi(int T, int n, double *a, double *b)
{
    static int calls;
    for (int t = 0; t < T; t++) {
        for (int i = 1; i < n - 1; i++) b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
        for (int i = 1; i < n - 1; i++) a[i] = b[i];
    }
    return ++calls;
}
"""

TIMED_MAIN = """\
#include <stdio.h>
#include <stdlib.h>
int jacobi(int T, int n, double *a, double *b);
int main(void)
{
    int sizes[] = { 7, 5003, 11, 6007, 3 };
    for (int r = 0; r < 5; r++) {
        int n = sizes[r];
        double *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
        for (int i = 0; i < n; i++) a[i] = i % 17;
        int c = jacobi(9, n, a, b);
        printf("%d %a\\n", c, a[n / 2]);
        free(a); free(b);
    }
    return 0;
}
"""


@pytest.mark.parametrize(
    "files, taken, extra",
    [
        # an external function with a static local that is not taken over, called by one that
        # is: cc's definition is called (the module kept a copy counting on its own)
        ({"k.c": TICK_C, "main.c": TICK_MAIN}, "scale", {}),
        # a time-tiled kernel with a static local, too small for its tiles on some calls: it
        # is no try that gives those calls back to cc's definition (which counts on its own)
        ({"k.c": TIMED_C, "main.c": TIMED_MAIN}, "jacobi", SMALL_CACHES),
    ],
)
@pytest.mark.parametrize("policy", ["all", ""])
def test_a_static_local_has_one_copy_whoever_calls_it(tmp_path, files, taken, extra, policy):
    cc_out, pycc_out, functions, _ = build_both(
        tmp_path, files, ["-O3"], env_extra=dict(extra, PYCC_TAKEOVER=policy)
    )
    if policy or taken == "jacobi":  # (the default policy takes over only what is tiled)
        assert_by_pycc(functions, taken)
    assert pycc_out == cc_out
