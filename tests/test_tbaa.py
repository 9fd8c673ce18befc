"""Type-based alias tags (`!tbaa`, frontend/tbaa.py): present as clang emits them, used by
LLVM, absent under -fno-strict-aliasing, and never a miscompile of code that type-puns the
ways C allows (through a character type; through a union, which gcc documents) or the ways
-fno-strict-aliasing allows."""

from __future__ import annotations

import re
from pathlib import Path

import llvmlite.binding as llvm
import pytest
from pycc_stencil.emit.cc_target import target_from_flags
from pycc_stencil.emit.host_jit import optimize
from pycc_stencil.frontend import lower_file
from pycc_stencil.frontend.tbaa import type_name
from pycc_stencil.runtime.check import CheckOptions, check_file
from test_dropin_flags import compiled_by, env, programs_like_cc  # noqa: F401 - fixture
from test_frontend import function_text, lower_source

POLYBENCH = Path(__file__).parents[1] / "scripts" / "polybench"

MIXED = """
void mixed(int n, double *restrict d, float *f, unsigned *u, int *i, char *c, double **rows) {
  for (int k = 0; k < n; k++) {
    d[k] = f[k] + u[k] + i[k] + c[k];
    rows[k][0] = d[k];
  }
}
"""


def tags_of(text: str) -> dict[str, str]:
    """Each load/store's `!tbaa` node id -> the type name its tag's base type node names."""
    nodes = dict(re.findall(r"^(!\d+) = !\{ (.*) \}$", text, re.M))
    names = {}
    for tag in set(re.findall(r"!tbaa (!\d+)", text)):
        base = nodes[tag].split(",")[0].strip()
        names[tag] = re.match(r'!"([^"]*)"', nodes[base]).group(1)
    return names


def accesses(text: str) -> list[tuple[str, str | None]]:
    """(the loaded or stored LLVM type, its tag's type name or None) per memory access."""
    names = tags_of(text)
    found = []
    for line in text.splitlines():
        m = re.search(r"= load (\S+), |store (\S+) ", line)
        if m:
            tag = re.search(r"!tbaa (!\d+)", line)
            found.append((m.group(1) or m.group(2), names[tag.group(1)] if tag else None))
    return found


def test_every_access_carries_clang_s_tag_and_restrict_is_noalias(tmp_path):
    lowered = lower_source(tmp_path, MIXED)
    text = str(lowered.module)
    kinds = set(accesses(text))
    assert kinds == {
        ("double", "double"),
        ("float", "float"),
        ("i32", "int"),  # unsigned and int share clang's "int" node: C lets them alias
        ("i8", "omnipotent char"),
        ("ptr", "any pointer"),
    }
    assert '!{ !"Simple C/C++ TBAA" }' in text
    assert re.search(r'!\{ !"double", (!\d+), i64 0 \}', text)
    args = {a.name: a for a in lowered.module.get_global("mixed").args}
    assert "noalias" in args["d"].attributes and "noalias" not in args["f"].attributes


def test_no_tags_under_no_strict_aliasing(tmp_path):
    lowered = lower_source(tmp_path, MIXED, ["-fno-strict-aliasing"])
    assert "tbaa" not in str(lowered.module)
    lowered = lower_source(tmp_path, MIXED, ["-fno-strict-aliasing", "-fstrict-aliasing"])
    assert "tbaa" in str(lowered.module)


def test_type_names_follow_c():
    from pycc_stencil.frontend import c_types as ct

    assert type_name(ct.ULONG) == type_name(ct.LONG) == "long"
    assert type_name(ct.LONGLONG) == "long long" != type_name(ct.LONG)
    assert {type_name(t) for t in (ct.CHAR, ct.SCHAR, ct.UCHAR)} == {"omnipotent char"}
    assert type_name(ct.BOOL) == "_Bool"
    assert type_name(ct.PointerType(ct.DOUBLE)) == type_name(ct.PointerType(ct.INT))


COUNT_THROUGH_POINTER = """
void zero(const int *n, double *a) {
  for (int i = 0; i < *n; i++) a[i] = 0.0;
}
"""


@pytest.mark.parametrize("flags, hoisted", [((), True), (("-fno-strict-aliasing",), False)])
def test_llvm_uses_the_tags(tmp_path, flags, hoisted):
    """The bound `*n` (int) cannot change through a double store: with the tags LLVM loads it
    once and the loop becomes a memset; without them it reloads it every iteration."""
    lowered = lower_source(tmp_path, COUNT_THROUGH_POINTER, flags)
    module = llvm.parse_assembly(str(lowered.module))
    optimize(module, 3)
    text = str(module.get_function("zero"))
    assert ("llvm.memset" in text) is hoisted
    assert len(re.findall(r"load i32", text)) == (1 if hoisted else 2)


@pytest.mark.parametrize(
    "file, params",
    [
        ("gemm.c", dict(ni=40, nj=44, nk=48, alpha=1.5, beta=1.2)),
        ("symm.c", dict(m=40, n=48, alpha=1.5, beta=1.2)),
        ("lu.c", dict(n=60)),
        ("nussinov.c", dict(n=90)),
        ("floyd-warshall.c", dict(n=70)),
        ("heat-3d.c", dict(tsteps=3, n=20)),
    ],
)
def test_polybench_kernels_with_tags_are_bit_exact(file, params):
    kernel = "kernel_" + file.removesuffix(".c").replace("-", "_")
    options = CheckOptions(functions=[kernel], params={k: str(v) for k, v in params.items()})
    [result] = check_file(POLYBENCH / file, [f"-I{POLYBENCH}"], options)
    assert result.status == "OK", str(result)
    assert "!tbaa" in function_text(lower_file(str(POLYBENCH / file), [f"-I{POLYBENCH}"]), kernel)


PUNS = {
    # flips the sign bit through an int view of the floats: C allows it only under
    # -fno-strict-aliasing; with an `int` tag LLVM would forward `f[i]` from before the store
    "k.c": """
    void through_int(int n, float *f, unsigned *bits) {
      for (int i = 0; i < n; i++) {
        float x = f[i];
        bits[i] ^= 0x80000000u;
        f[i] = x + f[i];
      }
    }
    void through_char(int n, double *d, unsigned char *bytes) {
      for (int i = 0; i < n; i++) {
        double x = d[i];
        bytes[8 * i + 7] ^= 0x80;
        d[i] = x - d[i];
      }
    }
    union word { float f; unsigned u; };
    void through_union(int n, union word *w) {
      for (int i = 0; i < n; i++) {
        float x = w[i].f;
        w[i].u ^= 0x80000000u;
        w[i].f = x + w[i].f;
      }
    }
    """,
    "main.c": """
    #include <stdio.h>
    union word { float f; unsigned u; };
    void through_int(int n, float *f, unsigned *bits);
    void through_char(int n, double *d, unsigned char *bytes);
    void through_union(int n, union word *w);
    int main(void) {
      float f[37]; double d[37]; union word w[37];
      for (int i = 0; i < 37; i++) { f[i] = w[i].f = 1.5f + i; d[i] = 0.25 * i; }
      through_int(37, f, (unsigned *)f);
      through_char(37, d, (unsigned char *)d);
      through_union(37, w);
      for (int i = 0; i < 37; i++) printf("%a %a %a\\n", f[i], d[i], w[i].f);
      return 0;
    }
    """,
}


@pytest.mark.parametrize(
    "flags", [["-O2", "-fno-strict-aliasing"], ["-O3", "-fno-strict-aliasing"]]
)
def test_type_punning_kernels_match_cc_without_strict_aliasing(tmp_path, env, flags):  # noqa: F811
    outputs, report = programs_like_cc(tmp_path, env, PUNS, flags)
    assert outputs[1] == outputs[0]
    by = compiled_by(report, "k.c")
    assert by["through_int"] == by["through_char"] == "pycc-stencil"
    assert "0x0p+0" in outputs[0]  # the pun did happen: x + -x


def test_char_and_union_puns_match_cc_under_strict_aliasing(tmp_path, env):  # noqa: F811
    """A character type and a union member (gcc documents it) may read any object even under
    -fstrict-aliasing: a `char` tag aliases everything; unions are cc's (front end)."""
    files = dict(PUNS)
    files["k.c"] = re.sub(r"void through_int.*?\n    \}\n", "", files["k.c"], flags=re.S)
    files["main.c"] = files["main.c"].replace("through_int(37, f, (unsigned *)f);", "")
    outputs, report = programs_like_cc(tmp_path, env, files, ["-O3"])
    assert outputs[1] == outputs[0]
    assert compiled_by(report, "k.c")["through_char"] == "pycc-stencil"


MIXED_TYPES = {
    "k.c": """
    void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x,
              double *y) {
      for (int i = 0; i < n; i++) {
        y[i] = 0.0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) y[i] += val[k] * x[col[k]];
      }
    }
    void zero(const int *n, double *a) {
      for (int i = 0; i < *n; i++) a[i] = 0.0;
    }
    """,
    "main.c": """
    #include <stdio.h>
    void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x,
              double *y);
    void zero(const int *n, double *a);
    int main(void) {
      int rowptr[41], col[400], n = 40, half = 20;
      double val[400], x[40], y[40];
      rowptr[0] = 0;
      for (int i = 0; i < n; i++) {
        rowptr[i + 1] = rowptr[i] + 1 + i % 9;
        x[i] = 1.0 / (i + 3);
      }
      for (int k = 0; k < rowptr[n]; k++) { col[k] = (k * 7) % n; val[k] = 0.1 * (k % 13); }
      spmv(n, rowptr, col, val, x, y);
      zero(&half, y);
      for (int i = 0; i < n; i++) printf("%a\\n", y[i]);
      return 0;
    }
    """,
}


def test_mixed_type_kernels_with_tags_match_cc(tmp_path, env):  # noqa: F811
    """Kernels whose code the tags change (a row bound kept in a register across the double
    stores) give cc's bits in compiler mode."""
    outputs, report = programs_like_cc(tmp_path, env, MIXED_TYPES, ["-O3", "-ffp-contract=off"])
    assert outputs[1] == outputs[0]
    assert set(compiled_by(report, "k.c").values()) == {"pycc-stencil"}


@pytest.mark.parametrize(
    "flags, strict",
    [
        (["-O2"], True),  # gcc assumes C's aliasing rules from -O2
        (["-O3"], True),
        (["-O1"], False),
        (["-O0"], False),
        (["-O1", "-fstrict-aliasing"], True),
        (["-O3", "-fno-strict-aliasing"], False),
    ],
)
def test_compiler_mode_keeps_the_tags_exactly_when_gcc_assumes_strict_aliasing(flags, strict):
    assert target_from_flags("cc", flags).strict_aliasing is strict
