"""The front end's IR contract: what later passes may rely on, and what it refuses.

Semantics (bit-exact results) are proven by `check` in test_corpus.py; these tests pin the
shape of the IR (canonical loops, i64 nsw indices, noalias, C conversions, locations) and the
diagnostics for what the front end does not lower.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import llvmlite.binding as llvm
import pytest
from llvmlite import ir
from pycc_stencil.diagnostics import CompilerError
from pycc_stencil.frontend import c_types as ct
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.debuginfo import location_of
from pycc_stencil.ir_passes.core.symbolic import Expr

CORPUS = Path(__file__).parent / "corpus"


def lower_source(tmp_path: Path, source: str, cflags=(), name: str = "k.c"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    lowered = lower_file(str(path), list(cflags))
    llvm.parse_assembly(str(lowered.module)).verify()
    return lowered


def function_text(lowered, name: str) -> str:
    return str(lowered.module.get_global(name))


def test_mean_filter_loops_are_canonical_with_induction_phis():
    lowered = lower_file(str(CORPUS / "c66x/mean_filter_3x3.c"))
    fn = lowered.module.get_global("MeanFilter3x3")
    assert lowered.functions["MeanFilter3x3"].loop_count == 2
    headers = [b for b in fn.blocks if b.name.startswith("header")]
    assert len(headers) == 2
    for header in headers:
        phi = header.instructions[0]
        assert isinstance(phi, ir.PhiInstr) and phi.name in ("i", "j")
        preds = [b for b in fn.blocks if header in _successors(b)]
        assert sorted(p.name.split(".")[0] for p in preds) == ["latch", "preheader"]
        preheader = next(p for p in preds if p.name.startswith("preheader"))
        assert _successors(preheader) == [header]
    # every scalar is in SSA form: no stack slots at all
    assert "alloca" not in str(fn)


def _successors(block: ir.Block) -> list[ir.Block]:
    return [op for op in block.terminator.operands if isinstance(op, ir.Block)]


def test_double_literal_keeps_c_conversions():
    """`float v; v * 0.33` is fpext -> fmul double -> fptrunc (C's usual conversions)."""
    text = function_text(lower_file(str(CORPUS / "c66x/mean_filter_1x3.c")), "MeanFilter1x3")
    assert re.search(r"fpext float %\S+ to double", text)
    assert re.search(r"fmul double %\S+, 0x3fd51eb851eb851f", text)  # 0.33 as a double
    assert "fptrunc double" in text
    assert "fmuladd" not in text and "contract" not in text and "fast" not in text


def test_indices_are_i64_nsw_and_accesses_inbounds():
    text = function_text(lower_file(str(CORPUS / "c66x/mean_filter_3x3.c")), "MeanFilter3x3")
    geps = re.findall(r"getelementptr[^\n]*", text)
    assert geps and all(g.startswith("getelementptr inbounds float, ptr") for g in geps)
    assert all(re.search(r"i64 %\S+ ,", g) for g in geps)
    assert re.search(r"mul nsw i64", text) and re.search(r"add nsw i64", text)


def test_restrict_becomes_noalias_on_pointers_and_array_parameters(tmp_path):
    lowered = lower_source(
        tmp_path,
        """
        void f(int n, const float *restrict in, float out[restrict n], float *alias) {
          for (int i = 0; i < n; i++) out[i] = in[i] + alias[i];
        }
        """,
    )
    args = {a.name: a for a in lowered.module.get_global("f").args}
    assert "noalias" in args["in"].attributes
    assert "noalias" in args["out"].attributes
    assert "noalias" not in args["alias"].attributes


def test_parameters_keep_declared_array_types(tmp_path):
    lowered = lower_source(
        tmp_path,
        """
        #define N 8
        void f(int n, int m, float A[n][m + 1], double B[N][N], float C[][N], float *p) {
          for (int i = 0; i < n; i++) A[i][0] = B[i][0] + C[i][1] + p[i];
        }
        """,
    )
    params = {p.name: p.ctype for p in lowered.functions["f"].params}
    a = params["A"]
    assert isinstance(a, ct.ArrayType) and a.is_vla and a.length == Expr.symbol("n")
    assert str(a.element.length) == "m + 1"
    assert a.element.length.evaluate({"m": 4}) == 5
    assert params["B"] == ct.ArrayType(ct.ArrayType(ct.DOUBLE, 8), 8)
    assert params["C"] == ct.ArrayType(ct.ArrayType(ct.FLOAT, 8), None)
    assert params["p"] == ct.PointerType(ct.FLOAT)


def test_small_integer_parameters_carry_abi_extension(tmp_path):
    lowered = lower_source(
        tmp_path,
        """
        unsigned char f(signed char a, unsigned short b, _Bool c) { return a + b + c; }
        """,
    )
    text = function_text(lowered, "f")
    assert 'define zeroext i8 @"f"(i8 signext %"a", i16 zeroext %"b", i8 zeroext %"c")' in text


def test_every_instruction_knows_its_source_location():
    path = str(CORPUS / "c66x/mean_filter_3x3.c")
    fn = lower_file(path).module.get_global("MeanFilter3x3")
    source = Path(path).read_text().splitlines()
    stores = [i for b in fn.blocks for i in b.instructions if i.opname == "store"]
    (store,) = stores
    where = location_of(store)
    assert where.file == path
    assert source[where.line - 1][where.column - 1 :].startswith("output[")
    missing = [
        str(i)
        for b in fn.blocks
        for i in b.instructions
        if not isinstance(i, ir.PhiInstr) and i.opname != "ret" and location_of(i) is None
    ]
    assert missing == []


def test_system_headers_and_user_flags(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "coef.h").write_text("#define COEF 0.5f\n")
    lowered = lower_source(
        tmp_path,
        """
        #include <stdint.h>
        #include <stdlib.h>
        #include <math.h>
        #include "coef.h"
        void f(int n, uint8_t *a, float *b) {
          for (int i = 0; i < n; i++) b[i] = sqrtf(a[i]) * COEF * SCALE + abs(i - 3);
        }
        """,
        cflags=["-I", str(tmp_path / "inc"), "-DSCALE=3", "-std=c99"],
    )
    assert "llvm.sqrt.f32" in str(lowered.module)
    assert list(lowered.functions) == ["f"]


def test_polybench_macros_with_their_header():
    """A PolyBench-style file: kernels lower, and so does the printing of the arrays (calls
    into the C library); main's cast to a pointer to a VLA is skipped, naming it."""
    include = str(CORPUS / "polybench/include")
    path = str(CORPUS / "polybench/macro/jacobi-2d.c")
    lowered = lower_file(path, ["-I", include, "-DMINI_DATASET", "-DPOLYBENCH_USE_C99_PROTO"])
    info = lowered.functions["kernel_jacobi_2d"]
    assert info.is_static and info.loop_count == 5
    assert [p.name for p in info.params] == ["tsteps", "n", "A", "B"]
    assert info.params[2].ctype.is_vla
    skipped = {s.name: s.reason for s in lowered.skipped}
    assert "print_array" in lowered.functions
    assert "pointers to variable-length arrays" in skipped["main"], skipped


# construct -> (function f using it, the text where the diagnostic must point, the message)
UNSUPPORTED = {
    "goto": (
        "void f(int n, float *a) {\n"
        "  for (int i = 0; i < n; i++) { if (a[i] < 0) goto out; }\nout:\n  return;\n}\n",
        "goto out",
        "goto is not supported",
    ),
    "asm": (
        'void f(int n, float *a) {\n  for (int i = 0; i < n; i++) __asm__ volatile("");\n}\n',
        "__asm__",
        "inline assembly is not supported",
    ),
    "setjmp": (
        "#include <setjmp.h>\nstatic jmp_buf env;\n"
        "int f(int n) {\n  for (int i = 0; i < n; i++) if (setjmp(env)) return 1;\n"
        "  return 0;\n}\n",
        "setjmp(env)",
        "setjmp/longjmp is not supported",
    ),
    "varargs": (
        "#include <stdarg.h>\n"
        "int f(int n, ...) {\n  int s = 0;\n  for (int i = 0; i < n; i++) s += i;\n"
        "  return s;\n}\n",
        "f(int n, ...)",
        "variadic functions are not supported",
    ),
    "unprototyped": (
        "void log_value();\n"
        "void f(int n, float *a) {\n  for (int i = 0; i < n; i++) log_value(a[i]);\n}\n",
        "log_value(a",
        "call to external function 'log_value' declared without a prototype",
    ),
    "union": (
        "union P { float x; int i; };\n"
        "void f(int n, union P *p) {\n  for (int i = 0; i < n; i++) p[i].x = 0;\n}\n",
        "p) {",
        "union type 'union P' is not supported",
    ),
    "bit-field": (
        "struct P { int lo : 4, hi : 4; };\n"
        "void f(int n, struct P *p) {\n  for (int i = 0; i < n; i++) p[i].lo = 0;\n}\n",
        "lo = 0",  # the access: a struct with bit-fields is lowered, a bit-field is not
        "bit-field 'lo' is not supported",
    ),
    "function pointer dereference": (
        "typedef double (*unop)(double);\n"
        "void f(int n, unop *src, unop *dst) {\n"
        "  for (int i = 0; i < n; i++) dst[i] = *src[i];\n}\n",
        "*src[i]",
        "dereferencing a function pointer ('double (double) *') is not supported",
    ),
    "packed struct": (
        "struct __attribute__((packed)) P { char c; double x; };\n"
        "void f(int n, struct P *p) {\n  for (int i = 0; i < n; i++) p[i].x = 0;\n}\n",
        "P { char",
        "packed struct 'struct P' (members below their natural alignment)",
    ),
    "struct designated initializer": (
        "struct P { float x, y; };\n"
        "void f(int n, float *a) {\n"
        "  for (int i = 0; i < n; i++) { struct P p = {.y = a[i]}; a[i] = p.x + p.y; }\n}\n",
        "{.y = a[i]}",
        "designated initializers are not supported",
    ),
    "struct brace elision": (
        "struct P { float x[2], y; };\n"
        "void f(int n, float *a) {\n"
        "  for (int i = 0; i < n; i++) { struct P p = {a[i], 1, 2}; a[i] = p.y; }\n}\n",
        "a[i], 1, 2}",
        "brace-elided initializers of structs are not supported",
    ),
    "recursive struct": (
        "struct L { struct L *next; float x; };\n"
        "void f(int n, struct L *p) {\n  for (int i = 0; i < n; i++) p->next->x = 0;\n}\n",
        "x = 0;",
        "'struct L' reached through a pointer member of its own definition",
    ),
    "vla cast": (
        "void f(int n, int m, float *p) {\n"
        "  for (int i = 0; i < n; i++) ((float (*)[m])p)[i][1] = 0;\n}\n",
        "(float (*)[m])p",
        "casts to pointers to variable-length arrays",
    ),
    "static local of a static function": (
        "static void f(int n, int *a) {\n  static int calls;\n"
        "  for (int i = 0; i < n; i++) a[i] = calls++;\n}\n",
        "calls;\n",
        "static local variable 'calls' of a static or inline function is not supported",
    ),
    "anonymous member": (
        "struct D { struct { int x; }; int k; };\n"
        "void f(int n, struct D *d) {\n  for (int i = 0; i < n; i++) d[i].x = d[i].k;\n}\n",
        "x = d[i]",
        "member 'x' of an anonymous struct or union member is not supported",
    ),
    "global array of pointers": (
        "double *rows[4];\nvoid f(int n) {\n  for (int i = 0; i < n; i++) rows[0][i] = 0;\n}\n",
        "rows[0]",
        "global array of pointers 'rows' is not supported",
    ),
    "thread-local global": (
        "_Thread_local int hits;\nvoid f(int n) {\n  for (int i = 0; i < n; i++) hits++;\n}\n",
        "hits++",
        "thread-local variable 'hits' is not supported",
    ),
}


@pytest.mark.parametrize("construct", sorted(UNSUPPORTED))
def test_unsupported_construct_skips_only_its_function(tmp_path, construct):
    body, marker, message = UNSUPPORTED[construct]
    source = body + "void ok(int n, float *a) {\n  for (int i = 0; i < n; i++) a[i] += 1.0f;\n}\n"
    before = source[: source.index(marker)]
    line, column = before.count("\n") + 1, len(before) - before.rfind("\n")
    lowered = lower_source(tmp_path, source)
    (skip,) = lowered.skipped
    assert skip.name == "f" and message in skip.reason
    assert (skip.location.line, skip.location.column) == (line, column)
    assert list(lowered.functions) == ["ok"]


def test_loops_inside_an_openmp_parallel_region_are_named_in_the_skip(tmp_path):
    """libclang does not expose the body of `#pragma omp parallel`: the function is skipped
    for the directive, and counted as one with loops (so compiler mode's report gives that
    reason, not "no loops")."""
    path = tmp_path / "omp.c"
    path.write_text(
        "void f(int n, double *a) {\n#pragma omp parallel\n  {\n#pragma omp for\n"
        "    for (int i = 0; i < n; i++) a[i] += 1.0;\n  }\n}\n"
    )
    (skip,) = lower_file(str(path), ["-fopenmp"]).skipped
    assert "omp_parallel_directive" in skip.reason and skip.has_loops


def test_caller_of_a_skipped_function_is_skipped_with_the_reason(tmp_path):
    lowered = lower_source(
        tmp_path,
        """
        static int bad(int x) { if (x) goto end; x++; end: return x; }
        void f(int n, int *a) { for (int i = 0; i < n; i++) a[i] = bad(a[i]); }
        void g(int n, int *a) { for (int i = 0; i < n; i++) a[i] = -a[i]; }
        """,
    )
    reasons = {s.name: s.reason for s in lowered.skipped}
    assert reasons["bad"] == "goto is not supported"
    assert reasons["f"].startswith("calls 'bad', which is skipped:")
    assert list(lowered.functions) == ["g"]


def test_helpers_are_lowered_and_kernels_counted(tmp_path):
    lowered = lower_source(
        tmp_path,
        """
        static inline float sq(float x) { return x * x; }
        void f(int n, float *a) { for (int i = 0; i < n; i++) a[i] = sq(a[i]); }
        """,
    )
    assert not lowered.functions["sq"].is_kernel and lowered.functions["f"].is_kernel
    assert 'call float @"sq"' in function_text(lowered, "f")


@pytest.mark.parametrize(
    "name, content, expected",
    [
        ("syntax.c", "void f(int n) { for (i = 0; i < n; i++) }\n", r"syntax\.c:1:\d+: error: "),
        ("python.c", "import os\nprint(os.getcwd())\n", r"python\.c:1:1: error: "),
        ("binary.c", b"\x7fELF\x00\x01\x02\xff\xfe\x00garbage", r"binary\.c:1:\d+: error: "),
    ],
)
def test_invalid_input_is_a_compiler_error(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(CompilerError) as info:
        lower_file(str(path))
    assert re.match(expected, str(info.value.diagnostics[0]).replace(str(tmp_path) + "/", ""))


def test_missing_file_is_a_compiler_error(tmp_path):
    with pytest.raises(CompilerError, match="no such file or directory"):
        lower_file(str(tmp_path / "nope.c"))


# ---------------------------------------------------------------- mutable globals (issue 14)
def test_mutable_globals_are_external_declarations_of_their_symbols(tmp_path):
    """Kernels read and write the program's globals in place: the module declares each
    symbol (no initializer, no copy), and every function lists the globals it reaches."""
    lowered = lower_source(
        tmp_path,
        """
        double u[19][23];
        static float tmp[7];
        extern double ext[];
        extern double ext[];
        long total = 5;
        static int scale(int i) { return i * (int)tmp[i % 7]; }
        void sweep(int n) {
            for (int j = 1; j < 18; j++)
                for (int i = 1; i < 22; i++)
                    u[j][i] = 0.5 * (u[j - 1][i] + ext[i]) + scale(i);
        }
        void add(int n) { for (int i = 0; i < n; i++) total += i; }
        """,
    )
    text = str(lowered.module)
    assert '@"u" = external global [19 x [23 x double]], align 8' in text
    assert '@"tmp" = external global [7 x float], align 4' in text
    assert '@"ext" = external global [0 x double], align 8' in text
    assert '@"total" = external global i64, align 8' in text
    assert "store double" in function_text(lowered, "sweep")
    assert lowered.functions["sweep"].globals == ("ext", "tmp", "u")
    assert lowered.functions["add"].globals == ("total",)
    info = lowered.globals
    assert info["tmp"].is_static and not info["u"].is_static
    assert info["u"].defined and not info["ext"].defined and info["ext"].size is None
    assert info["u"].size == 19 * 23 * 8


def test_an_extern_array_defined_later_has_its_definition_size(tmp_path):
    lowered = lower_source(
        tmp_path,
        """
        extern double a[];
        void f(int n) { for (int i = 0; i < n; i++) a[i] += 1; }
        double a[13];
        """,
    )
    assert '@"a" = external global [13 x double]' in str(lowered.module)
    assert lowered.globals["a"].size == 13 * 8


def test_globals_used_through_mutual_recursion(tmp_path):
    lowered = lower_source(
        tmp_path,
        """
        int depth; double acc[5];
        void odd(int n);
        void even(int n) { for (int i = 0; i < 1; i++) acc[n % 5] += n; if (n) odd(n - 1); }
        void odd(int n) { depth++; if (n) even(n - 1); }
        """,
    )
    assert lowered.functions["even"].globals == ("acc", "depth")
    assert lowered.functions["odd"].globals == ("acc", "depth")
