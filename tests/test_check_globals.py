"""`check` of kernels that read and write global variables (issue 14 §2).

The JIT code and the reference library each have their own copy of every global; the harness
seeds both alike, runs both, and compares the globals bit for bit like pointer buffers, with
guard zones around the JIT's. A pass mutated to shift every store to a global by one element
must give MISMATCH (inside the array: a wrong element; past its end: the guard zone).
"""

from __future__ import annotations

import pytest
from llvmlite import ir
from llvmlite.ir import instructions as ins
from pycc_stencil.cli import main
from pycc_stencil.ir_passes import pipeline
from pycc_stencil.ir_passes.core.memory import pointer_roots
from pycc_stencil.runtime.check import CheckOptions, check_file, summary

#: NAS-style: grids, coefficients and sizes at file scope (odd sizes), a static scratch grid,
#: counters updated in loops, and a kernel mixing a pointer parameter with the globals
NAS_C = """\
#define NX 23
#define NY 19
double u[NY][NX], r[NY][NX];
static double tmp[NY][NX];
double coef[4] = {0.5, 0.25, 0.125, 0.0625};
int nx = 21, ny = 17;
long counter;
static int steps = 3;

void resid(void)
{
    for (int j = 1; j < ny; j++)
        for (int i = 1; i < nx; i++)
            r[j][i] = u[j][i] - coef[1] * (u[j - 1][i] + u[j + 1][i] + u[j][i - 1] + u[j][i + 1]);
}

void smooth(void)
{
    for (int j = 1; j < NY - 1; j++)
        for (int i = 1; i < NX - 1; i++)
            tmp[j][i] = coef[0] * r[j][i];
    for (int j = 1; j < NY - 1; j++)
        for (int i = 1; i < NX - 1; i++)
            u[j][i] += tmp[j][i];
}

void count(int n)
{
    for (int i = 0; i < n; i++) {
        counter += i * steps;
        steps++;
    }
}

void scale(int n, double *p)
{
    for (int i = 0; i < n; i++)
        p[i] *= u[1][i % NX] + (double)counter;
}

void fill(void)
{
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++)
            r[j][i] = 0.5 * u[j][i];
}
"""

KERNELS = ["resid", "smooth", "count", "scale", "fill"]


@pytest.fixture
def nas_file(tmp_path):
    path = tmp_path / "nas.c"
    path.write_text(NAS_C)
    return path


@pytest.mark.parametrize("passes", [None, "tile", "unroll(3)", "simd", "unroll-jam(2)"])
def test_nas_kernels_with_global_grids_check_ok(nas_file, passes):
    results = check_file(nas_file, [], CheckOptions(passes=passes, params={"n": "31"}))
    assert summary(results) == "5 OK, 0 MISMATCH, 0 SKIPPED, 0 ERROR", [str(r) for r in results]
    by_name = {r.name: r for r in results}
    assert "5 globals" in by_name["resid"].message
    # the runs changed the globals (the check compared something)
    assert all(by_name[name].changed for name in KERNELS)


def _shift_global_stores(module: ir.Module) -> ir.Module:
    """Every store whose address is based on a mutable global goes one element further."""
    for function in module.functions:
        for block in function.blocks:
            for store in [i for i in block.instructions if isinstance(i, ins.StoreInstr)]:
                roots = pointer_roots(store.operands[1]) or frozenset()
                if not any(isinstance(r, ir.GlobalVariable) for r in roots):
                    continue
                builder = ir.IRBuilder(block)
                builder.position_before(store)
                value = store.operands[0]
                shifted = builder.gep(
                    store.operands[1], [ir.Constant(ir.IntType(64), 1)], source_etype=value.type
                )
                store.operands = [value, shifted]
                store._clear_string_cache()
    return module


@pytest.fixture
def off_by_one(monkeypatch):
    """A pass named `off-by-one` that makes every store to a global miss by one element."""
    monkeypatch.setitem(pipeline.REGISTRY, "off-by-one", pipeline.PassSpec(_shift_global_stores))


def test_a_store_one_element_off_is_a_mismatch(nas_file, off_by_one):
    results = {r.name: r for r in check_file(nas_file, [], CheckOptions(passes="off-by-one"))}
    for name in ("resid", "smooth"):  # interior points: the neighbour is wrong
        assert results[name].status == "MISMATCH", str(results[name])
    assert "global r[" in results["resid"].message
    # count's scalars: the store lands in the guard zone after `counter` / `steps`
    assert results["count"].status == "MISMATCH", str(results["count"])
    assert "wrote outside buffer 'global " in results["count"].message
    # fill writes the whole of r: its last store is past the end
    assert results["fill"].status == "MISMATCH"
    assert "wrote outside buffer 'global r'" in results["fill"].message
    assert results["scale"].status == "OK"  # stores only through its pointer


def test_static_initial_values_are_the_inputs(tmp_path, pycc):
    """A global with an initializer starts from it (the loop bound `n` must be 13, not a
    random value); a kernel that only reads globals changes its pointer buffer."""
    path = tmp_path / "k.c"
    path.write_text(
        "int n = 13;\nfloat w[3] = {0.5f, 2.0f, -1.0f};\n"
        "void k(float *out) { for (int i = 0; i < n; i++) out[i] = w[i % 3] * i; }\n"
    )
    assert pycc.check(path, "k", strict=True).changed == 13


def test_extern_globals_of_another_file(tmp_path):
    """Globals the file only declares: the reference defines them; one of unknown size
    cannot be checked (an ERROR naming it), the other functions still are."""
    path = tmp_path / "k.c"
    path.write_text(
        "extern double grid[5][7];\nextern double open[];\nextern int hits;\n"
        "void sweep(void) { for (int j = 1; j < 4; j++) for (int i = 1; i < 6; i++)"
        " { grid[j][i] = 0.5 * (grid[j - 1][i] + grid[j][i + 1]); hits++; } }\n"
        "void last(int n) { for (int i = 0; i < n; i++) open[i] = i; }\n"
    )
    sweep, last = check_file(path, [], CheckOptions(params={"n": "3"}))
    assert sweep.status == "OK", str(sweep)
    assert sweep.changed == 15 + 1
    assert last.status == "ERROR"
    assert "global 'open'" in last.message and "unknown size" in last.message


def test_a_constant_table_of_another_file(tmp_path, pycc):
    """`extern const` data defined elsewhere (a clip table, a size): read through its symbol
    (it was "the value of constant 'clip' is not in this file"); the reference gives it
    writable storage, so both sides are seeded alike."""
    path = tmp_path / "k.c"
    path.write_text(
        "extern const unsigned char clip[512];\nextern const int width;\n"
        "void add_clip(int n, const unsigned char *a, const unsigned char *b,\n"
        "              unsigned char *out) {\n"
        "  for (int i = 0; i < n && i < width; i++) out[i] = clip[a[i] + b[i]]; }\n"
    )
    assert pycc.check(path, "add_clip", params={"n": 37}, strict=True).changed > 0


def test_constant_tables_declared_extern_in_their_own_file_or_of_unknown_size(tmp_path):
    """A table declared `extern` and defined later in the file is folded like any constant;
    one of unknown size gets the harness's own ERROR (not a link error of the reference); a
    table of indices into itself is seeded below its length (`t[t[i]]` stays in bounds)."""
    path = tmp_path / "k.c"
    path.write_text(
        "extern const int later[8];\n"
        "void k_later(int n, int *a) { for (int i = 0; i < n; i++) a[i] += later[7 - (i & 7)]; }\n"
        "const int later[8] = {8, 7, 6, 5, 4, 3, 2, 1};\n"
        "extern const double coef[];\n"
        "void k_coef(int n, double *a) { for (int i = 0; i < n; i++) a[i] = coef[0] * a[i]; }\n"
        "extern const int itab[16];\n"
        "void k_index(int n, int *a) { for (int i = 0; i < n; i++) a[i] = itab[itab[i & 15]]; }\n"
    )
    results = {r.name: r for r in check_file(path, [], CheckOptions(params={"n": "37"}))}
    assert results["k_later"].status == "OK", str(results["k_later"])
    assert results["k_coef"].status == "ERROR" and "unknown size" in results["k_coef"].message
    assert results["k_index"].status == "OK", str(results["k_index"])


def test_distinct_globals_need_no_overlap_check(nas_file):
    """`simd` on smooth: `tmp`, `r` and `u` are distinct objects, so the vector loops run
    without a run-time overlap test (a pointer parameter would need one)."""
    remarks = []
    results = check_file(
        nas_file, [], CheckOptions(passes="simd", functions=["smooth"]), remarks=remarks.extend
    )
    assert summary(results) == "1 OK, 0 MISMATCH, 0 SKIPPED, 0 ERROR"
    vectorized = [
        str(r) for r in remarks if r.function == "smooth" and "vectorized by SIMD" in str(r)
    ]
    assert len(vectorized) == 2 and not any("overlap" in r for r in vectorized), vectorized


def test_a_global_over_the_memory_budget_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PYCC_STENCIL_MEMORY_BUDGET", "100000")
    path = tmp_path / "k.c"
    path.write_text(
        "double big[20011];\nvoid k(void) { for (int i = 0; i < 20011; i++) big[i] *= 2; }\n"
    )
    [result] = check_file(path, [], CheckOptions())
    assert result.status == "ERROR" and "global big" in result.message, str(result)


JACOBI_C = """\
#define N 67
double A[N][N], B[N][N];

void jacobi(void)
{
    for (int t = 0; t < 7; t++) {
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                B[i][j] = 0.2 * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                A[i][j] = B[i][j];
    }
}

void heat(int T, int n, double (*P)[N])
{
    for (int t = 0; t < T; t++)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < N - 1; j++)
                A[i][j] = 0.25 * (P[i - 1][j] + P[i + 1][j] + P[i][j - 1] + P[i][j + 1])
                          + A[i][j] * 0.125;
}
"""


@pytest.mark.parametrize("passes", ["tile", "time-tile", "overlap-tile"])
def test_tiled_sweeps_over_global_grids(tmp_path, monkeypatch, passes):
    """Time tiles over global grids (wavefronts on the JIT's thread pool, private buffers):
    the tiled code writes the global in place, as the reference does."""
    monkeypatch.setenv("PYCC_CACHE_L2", "16K")
    monkeypatch.setenv("PYCC_CACHE_L3", "32K")  # the tiled code runs from 16 KiB
    path = tmp_path / "jacobi.c"
    path.write_text(JACOBI_C)
    remarks = []
    options = CheckOptions(passes=passes, params={"T": "5", "n": "61"})
    results = check_file(path, [], options, remarks=remarks.extend)
    assert summary(results) == "2 OK, 0 MISMATCH, 0 SKIPPED, 0 ERROR", [str(r) for r in results]
    applied = {r.function for r in remarks if f"[-Rpass={passes}]" in str(r)}
    assert applied >= ({"jacobi", "heat"} if passes != "overlap-tile" else {"heat"}), remarks


def test_the_check_command_prints_ok_for_global_grids(capsys, nas_file):
    status = main(["check", str(nas_file), "--param", "n=29"])
    out, err = capsys.readouterr()
    assert status == 0 and err == ""
    assert out.splitlines()[0] == "OK resid: bit-exact, 0 buffers, 5 globals, 1319 elements"
    assert out.splitlines()[-1] == "5 OK, 0 MISMATCH, 0 SKIPPED, 0 ERROR"


def test_a_global_named_like_a_library_function(tmp_path):
    """A global `lgamma` (legal C without <math.h>) must not become what a later JIT
    module's call to libm's lgamma resolves to (the process has one symbol table)."""
    data = tmp_path / "data.c"
    data.write_text(
        "double lgamma[7];\nvoid k(int n) { for (int i = 0; i < n; i++) lgamma[i % 7] += i; }\n"
    )
    calls = tmp_path / "calls.c"
    calls.write_text(
        "#include <math.h>\n"
        "void g(int n, double *a) { for (int i = 0; i < n; i++) a[i] = lgamma(a[i]); }\n"
    )
    checked = check_file(data, ["-fno-builtin"], CheckOptions(params={"n": "11"}))
    assert summary(checked).startswith("1 OK"), [str(r) for r in checked]
    [result] = check_file(calls, [], CheckOptions(params={"n": "13"}))
    assert result.status == "OK", str(result)


#: loop bounds read from a global array (NAS BT/SP/LU: `grid_points[0]`)
BOUNDS_C = """\
int grid_points[3] = {12, 13, 11};
double u[13][13][13][5], rhs[13][13][13][5];
double dt = 0.015;

void add(void)
{
    for (int i = 1; i < grid_points[0] - 1; i++)
        for (int j = 1; j < grid_points[1] - 1; j++)
            for (int k = 1; k < grid_points[2] - 1; k++)
                for (int m = 0; m < 5; m++)
                    u[i][j][k][m] = u[i][j][k][m] + rhs[i][j][k][m];
}

void smooth(void)
{
    for (int i = 1; i < grid_points[0] - 1; i++)
        for (int j = 1; j < grid_points[1] - 1; j++)
            for (int k = 1; k < grid_points[2] - 1; k++)
                rhs[i][j][k][0] = dt * (u[i - 1][j][k][0] + u[i + 1][j][k][0] + u[i][j - 1][k][0]
                                        + u[i][j + 1][k][0]);
}

void shrink(void)
{
    for (int i = 0; i < grid_points[0]; i++) {
        u[i][0][0][0] += 1.0;
        grid_points[0]--;
    }
}

void through(int *p)
{
    for (int i = 0; i < grid_points[1]; i++)
        p[i] = i;
}
"""


def test_loop_bounds_read_from_globals_are_parameters(tmp_path, monkeypatch):
    """`tile` reads a bound from a global once, before the nest, when nothing in the nest may
    write it: the NAS-style nests are tiled; a nest that writes its bound, or stores through
    a pointer (which may point at the bound), keeps reading it."""
    monkeypatch.setenv("PYCC_CACHE_L2", "16K")
    monkeypatch.setenv("PYCC_CACHE_L3", "32K")  # the tiled code runs from 16 KiB
    path = tmp_path / "bounds.c"
    path.write_text(BOUNDS_C)
    remarks = []
    results = check_file(path, [], CheckOptions(passes="tile"), remarks=remarks.extend)
    assert summary(results) == "4 OK, 0 MISMATCH, 0 SKIPPED, 0 ERROR", [str(r) for r in results]
    tiled = {r.function for r in remarks if "[-Rpass=tile]" in str(r)}
    assert tiled == {"add", "smooth"}, [str(r) for r in remarks]
    for name in ("shrink", "through"):
        [why] = [str(r) for r in remarks if r.function == name]
        assert "loop bound is not computable" in why


def test_param_sets_a_global_scalar(tmp_path, capsys):
    """`--param n=37`: the size a kernel reads from a zero-initialized global (a program sets
    it before the call); an array global is not a scalar."""
    path = tmp_path / "k.c"
    path.write_text(
        "int n;\ndouble a[40];\nvoid k(void) { for (int i = 0; i < n; i++) a[i] += i; }\n"
    )
    [result] = check_file(path, [], CheckOptions(params={"n": "37"}))
    assert result.status == "OK" and result.changed == 36, str(result)  # a[0] += 0
    [result] = check_file(path, [], CheckOptions(params={"a": "3"}))
    assert result.status == "ERROR" and "global array" in result.message
    assert main(["check", str(path), "--param", "n=29"]) == 0
    assert capsys.readouterr().out.startswith("OK k: bit-exact, 0 buffers, 2 globals")


def test_global_structs_are_seeded_run_and_compared_by_member(tmp_path, off_by_one):
    """Globals of struct type (NPB ft.c's `dcomplex u[...]`): each member seeded as its own
    type (a struct's integers small, as integer globals: `span.hi` bounds a loop), compared
    member by member; a store one element off is a mismatch, and a struct with a pointer
    member is refused by name."""
    from test_dropin_globals import STRUCT_GLOBALS_C

    path = tmp_path / "s.c"
    path.write_text(STRUCT_GLOBALS_C + "struct link { double *at; } head;\n"
                    "void follow(void) { head.at[0] = 1; }\n")  # fmt: skip
    results = {r.name: r for r in check_file(path, [], CheckOptions())}
    for name in ("twiddle", "accumulate", "walk", "total"):
        assert results[name].status == "OK", str(results[name])
        assert "global" in results[name].message
    assert all(results[name].changed for name in ("twiddle", "accumulate", "walk"))
    assert results["follow"].status == "SKIPPED"
    assert "global struct 'head' with a pointer member" in results["follow"].message
    shifted = {r.name: r for r in check_file(path, [], CheckOptions(passes="off-by-one"))}
    for name in ("twiddle", "accumulate", "walk"):
        assert shifted[name].status == "MISMATCH", str(shifted[name])


def test_a_static_local_starts_from_its_initializer_on_both_sides(tmp_path):
    """An external function's static locals (zeroed, initialized, constant) are the JIT
    module's own storage and the reference's: each run starts from C's initial values."""
    from test_dropin_globals import STATIC_LOCALS_C

    path = tmp_path / "s.c"
    path.write_text(STATIC_LOCALS_C)
    results = {r.name: r for r in check_file(path, [], CheckOptions())}
    assert results["scratch_sum"].status == "OK", str(results["scratch_sum"])
    assert results["fill"].status == "SKIPPED"


def test_a_global_of_unknown_size_is_named_before_the_reference_is_built(tmp_path):
    """`extern double t[];`, `extern struct s tab[];` updated in place: the harness's own
    ERROR naming the global, not the reference's link error (a review found the latter)."""
    path = tmp_path / "k.c"
    path.write_text(
        "struct s { int a; double b; };\nextern struct s tab[];\nextern double t[];\n"
        "void f(int n) { for (int i = 0; i < n; i++) tab[i].b += tab[i].a; }\n"
        "void g(int n) { for (int i = 0; i < n; i++) t[i] *= 2; }\n"
    )
    for result in check_file(path, [], CheckOptions(params={"n": "5"})):
        assert result.status == "ERROR", str(result)
        assert "unknown size" in result.message and "undefined reference" not in result.message
