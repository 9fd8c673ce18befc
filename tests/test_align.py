"""Alignment detection (issue 4 §5): declarations, the `align` pass, run-time verification.

The per-access expectations are the dissertation's §5.3 table (row_align(8), 2-wide float
accesses): align8 <=> (j0 + dx) even. They are checked on hand-written IR with `<2 x float>`
loads (what SIMD binding emits) and on the front end's IR unrolled by 2 (the first copy of each
pair has the pair's alignment).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from corpus.manifest import CORPUS_DIR, KERNELS
from corpus_check import assert_fired, check, missed_by, on_source, passed_by
from llvmlite import ir
from pycc_stencil.cli import main as cli_main
from pycc_stencil.emit.targets import host_target
from pycc_stencil.frontend import lower_file
from pycc_stencil.frontend.declarations import apply_row_align
from pycc_stencil.ir_passes.core.affine import accesses
from pycc_stencil.ir_passes.core.alignment import (
    access_is_marked_aligned,
    declare_row_alignment,
    pointer_alignment,
    row_alignment,
)
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from pycc_stencil.runtime.buffers import GUARD_BYTE, BufferSpec, make_inputs
from pycc_stencil.runtime.check import CheckOptions, check_file

HOST = host_target()

I32, I64, F32 = ir.IntType(32), ir.IntType(64), ir.FloatType()
V2 = ir.VectorType(F32, 2)


# ------------------------------------------------------------------------------ declarations

DECLARATIONS = """
typedef float f8 __attribute__((aligned(8)));
static const float table[8] __attribute__((aligned(32))) = {1, 2, 3, 4, 5, 6, 7, 8};

/* rows padded to 16 bytes */
#pragma pycc row_align(16)
// nothing but comments in between
void padded(float *in, int n, int m, float *out) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i * m + j] = in[i * m + j] + table[j & 7];
}

void typed(f8 *in, int n, float *out) {
  float tmp[64] __attribute__((aligned(16)));
  for (int j = 0; j < 64; j++) tmp[j] = in[j];
  for (int j = 0; j < n; j++) out[j] = tmp[j & 63];
}

void assumed(float *in, int n, float *out) {
  float *a = __builtin_assume_aligned(in, 32);
  for (int j = 0; j < n; j += 8) out[j] = a[j];
}

void rows(int n, float a[n][64], float *out) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 64; j += 2) out[j] = a[i][j];
}
"""


@pytest.fixture
def declared(tmp_path):
    path = tmp_path / "decl.c"
    path.write_text(DECLARATIONS)
    return lower_file(str(path))


def _args(function: ir.Function) -> dict[str, ir.Argument]:
    return {a.name: a for a in function.args}


def _aligns(function: ir.Function) -> list[tuple[str, int]]:
    return [(a.address.base.name, a.instruction.align) for a in accesses(function)]


def test_pragma_declares_row_alignment_on_the_ir(declared):
    padded = declared.module.get_global("padded")
    assert declared.functions["padded"].row_align == 16
    assert row_alignment(padded) == 16
    assert [pointer_alignment(a) for a in padded.args] == [16, 1, 1, 16]
    assert 'ptr align 16 %"in"' in str(padded)
    for name in ("typed", "assumed", "rows"):
        assert row_alignment(declared.module.get_global(name)) is None
        assert declared.functions[name].row_align is None


def test_aligned_attributes_and_assume_aligned_are_recorded(declared):
    module = declared.module
    assert module.get_global("table").align == 32
    typed = module.get_global("typed")
    assert pointer_alignment(_args(typed)["in"]) == 8
    assert pointer_alignment(_args(typed)["out"]) == 1
    allocas = [i for b in typed.blocks for i in b.instructions if i.opname == "alloca"]
    assert [pointer_alignment(a) for a in allocas] == [16]
    assumed = module.get_global("assumed")
    bases = [i for b in assumed.blocks for i in b.instructions if i.name == "assume_aligned"]
    assert [pointer_alignment(p) for p in bases] == [32]


def test_the_align_pass_uses_each_declaration(declared):
    run_passes(declared.module, parse_pipeline("align"), verify=True, target=HOST)
    module = declared.module
    # row_align(16), j steps by 1 from 0: only the element size; table[j & 7]: 4
    assert _aligns(module.get_global("padded")) == [("in", 4), ("table", 4), ("out", 4)]
    # assume_aligned(in, 32) and j = 0, 8, 16, ...: 32-byte loads, stores only 4
    assert _aligns(module.get_global("assumed")) == [("in", 32), ("out", 4)]
    # a[i][j] with rows of 256 bytes, j = 0, 2, 4: 8-byte aligned from the row size alone
    # once the base is known; without a declaration for `a`, only its element size
    assert _aligns(module.get_global("rows")) == [("a", 4), ("out", 4)]


def test_row_sizes_of_array_parameters_count_with_a_declared_base(tmp_path):
    path = tmp_path / "rows.c"
    path.write_text(DECLARATIONS)
    lowered = lower_file(str(path))
    apply_row_align(lowered, 8)  # every kernel without a pragma: typed, assumed, rows
    assert lowered.functions["padded"].row_align == 16  # the pragma wins
    assert lowered.functions["rows"].row_align == 8
    run_passes(lowered.module, parse_pipeline("align"), verify=True, target=HOST)
    assert ("a", 8) in _aligns(lowered.module.get_global("rows"))


@pytest.mark.parametrize(
    "pragma, message",
    [
        ("#pragma pycc row_align(6)", "power of two"),
        ("#pragma pycc row_align(x)", "malformed"),
        ("#pragma pycc unroll(4)", "malformed"),
    ],
)
def test_bad_pragmas_are_diagnosed(tmp_path, capsys, pragma, message):
    path = tmp_path / "bad.c"
    path.write_text(f"int x;\n  {pragma}\nvoid k(float *a) {{ for (;;) a[0] = 0; }}\n")
    assert cli_main(["emit", "--emit", "llvm", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2:3: error:" in err and message in err


def test_a_pragma_must_precede_a_definition(tmp_path, capsys):
    path = tmp_path / "bad.c"
    path.write_text("#pragma pycc row_align(8)\nint x;\nvoid k(float *a) { a[0] = 0; }\n")
    assert cli_main(["emit", "--emit", "llvm", str(path)]) == 1
    assert "must immediately precede a function definition" in capsys.readouterr().err


# -------------------------------------------------------------- the §5.3 table, <2 x float>


def vector_kernel(j0: int, loads: list[tuple[int, int]], row_align: int | None) -> ir.Function:
    """`for i: for (j = j0; j < size_x - 1; j += 2) output[i][j..j+1] = Σ input[i+dy][j+dx..]`
    with `<2 x float>` loads and store of `align 4`, as SIMD binding emits them."""
    module = ir.Module()
    ptr = ir.PointerType()
    f = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, I32, I32, ptr]), "kernel")
    src, size_x, size_y, dst = f.args
    for arg, name in zip(f.args, ("input", "size_x", "size_y", "output")):
        arg.name = name
    entry, oh, ipre, ih, body, olatch, exit_ = (
        f.append_basic_block(n)
        for n in ("entry", "outer", "inner.pre", "inner", "body", "outer.latch", "exit")
    )
    b = ir.IRBuilder(entry)
    b.branch(oh)
    b.position_at_end(oh)
    i = b.phi(I32, "i")
    b.cbranch(b.icmp_signed("<", i, size_y), ipre, exit_)
    b.position_at_end(ipre)
    bound = b.sub(size_x, ir.Constant(I32, 1))
    b.branch(ih)
    b.position_at_end(ih)
    j = b.phi(I32, "j")
    b.cbranch(b.icmp_signed("<", j, bound), body, olatch)
    b.position_at_end(body)

    def address(base, dy, dx):
        row = b.mul(b.sext(b.add(i, ir.Constant(I32, dy)), I64), b.sext(size_x, I64))
        index = b.add(row, b.sext(b.add(j, ir.Constant(I32, dx)), I64))
        return b.gep(base, [index], inbounds=True, source_etype=F32)

    total = None
    for dy, dx in loads:
        value = b.load(address(src, dy, dx), typ=V2, align=4)
        total = value if total is None else b.fadd(total, value)
    b.store(total, address(dst, 0, 0), align=4)
    j_next = b.add(j, ir.Constant(I32, 2), flags=["nsw"])
    b.branch(ih)
    b.position_at_end(olatch)
    i_next = b.add(i, ir.Constant(I32, 1), flags=["nsw"])
    b.branch(oh)
    b.position_at_end(exit_)
    b.ret_void()
    i.add_incoming(ir.Constant(I32, 0), entry)
    i.add_incoming(i_next, olatch)
    j.add_incoming(ir.Constant(I32, j0), ipre)
    j.add_incoming(j_next, body)
    if row_align is not None:
        declare_row_alignment(f, row_align)
    return f


MEAN_1X3 = (1, [(0, -1), (0, 0), (0, 1)])
MATRIX_ADD = (0, [(0, 0), (0, 0)])
JACOBI = (1, [(-1, 0), (1, 0), (0, -1), (0, 1)])


def _table(function: ir.Function) -> tuple[list[bool], list[bool]]:
    result = run_passes(function.module, parse_pipeline("align"), verify=True, target=HOST)
    found = accesses(function)
    for access in found:
        marked = access_is_marked_aligned(access.instruction)
        assert marked == (access.instruction.align >= 8)
    loads = [a.instruction.align >= 8 for a in found if not a.is_store]
    stores = [a.instruction.align >= 8 for a in found if a.is_store]
    function.remarks = result.remarks
    return loads, stores


@pytest.mark.parametrize(
    "kernel, loads, stores",
    [
        (MEAN_1X3, [True, False, True], [False]),
        (MATRIX_ADD, [True, True], [True]),
        (JACOBI, [False, False, True, True], [False]),
    ],
    ids=["mean1x3", "matrix_add", "jacobi"],
)
def test_dissertation_table_with_row_align_8(kernel, loads, stores):
    function = vector_kernel(*kernel, row_align=8)
    assert _table(function) == (loads, stores)


@pytest.mark.parametrize("kernel", [MEAN_1X3, MATRIX_ADD, JACOBI])
def test_without_row_align_nothing_is_aligned_beyond_the_element(kernel):
    function = vector_kernel(*kernel, row_align=None)
    loads, stores = _table(function)
    assert not any(loads) and not any(stores)
    assert {a.instruction.align for a in accesses(function)} == {4}
    missed = [str(r) for r in function.remarks if r.kind == "missed"]
    assert any("nothing is declared" in m for m in missed)


def test_remarks_count_aligned_accesses_and_say_why_not():
    function = vector_kernel(*MEAN_1X3, row_align=8)
    _table(function)
    passed = [r.message for r in function.remarks if r.kind == "passed"]
    assert passed == ["2 of 4 accesses aligned to 8 bytes; align raised to 8 on 2"]
    missed = [r.message for r in function.remarks if r.kind == "missed"]
    assert len(missed) == 2  # the dx = 0 load and the store
    assert all("first iteration's offset 4 is only 4-byte aligned" in m for m in missed)


def test_the_pass_never_lowers_an_alignment():
    function = vector_kernel(*MEAN_1X3, row_align=None)
    for access in accesses(function):
        access.instruction.align = 16
    run_passes(function.module, parse_pipeline("align"), verify=True, target=HOST)
    assert {a.instruction.align for a in accesses(function)} == {16}
    assert all(access_is_marked_aligned(a.instruction) for a in accesses(function))


def test_a_wider_vector_loop_follows_the_step():
    # j = 0, 4, 8, ... (a 4-wide loop) under row_align(16): 16-byte aligned
    function = vector_kernel(0, [(0, 0)], row_align=16)
    j = next(i for b in function.blocks for i in b.instructions if i.name == "j")
    step = j.incomings[1][0]
    step.operands = [step.operands[0], ir.Constant(I32, 4)]
    run_passes(function.module, parse_pipeline("align"), verify=True, target=HOST)
    assert {a.instruction.align for a in accesses(function)} == {16}


# -------------------------------------------------------- front-end IR unrolled by 2


def _corpus(name: str) -> str:
    return os.path.join(CORPUS_DIR, "c66x", name)


@pytest.mark.parametrize(
    "file, loads, store",
    [
        ("mean_filter_1x3.c", [8, 4, 8], 4),
        ("matrix_add.c", [8, 8], 8),
        ("jacobi.c", [4, 4, 8, 8], 4),
    ],
)
def test_unrolled_pairs_follow_the_table(file, loads, store):
    lowered = lower_file(_corpus(file))
    apply_row_align(lowered, 8)
    run_passes(lowered.module, parse_pipeline("unroll(2),align"), verify=True, target=HOST)
    (function,) = [f for f in lowered.module.functions if f.blocks]
    first = [a for a in accesses(function) if a.instruction.parent.name.endswith(".u0")]
    assert [a.instruction.align for a in first if not a.is_store] == loads
    assert [a.instruction.align for a in first if a.is_store] == [store]
    second = [a for a in accesses(function) if a.instruction.parent.name.endswith(".u1")]
    assert [a.instruction.align for a in second if not a.is_store] == [12 - x for x in loads]


# ------------------------------------------------------------------------- check runs

C66X = [e for e in KERNELS if e["file"].startswith("c66x/")]
EVEN_SIZES = [{"size_x": 38, "size_y": 7}, {"size_x": 2, "size_y": 3}, {"size_x": 4, "size_y": 1}]


def _check(entry, params, passes, row_align=8):
    """The check of a c66x kernel (compiled once per pipeline and declaration), and the
    remarks about it."""
    path = os.path.join(CORPUS_DIR, entry["file"])
    return check(path, entry["function"], params, passes, ["-std=c99"], row_align=row_align)


def _raised(remarks) -> list[str]:
    """The align pass's remarks that it raised the alignment of some accesses."""
    return [m for m in passed_by(remarks, "align") if "align raised to 8 on" in m]


@pytest.mark.parametrize("passes", ["align", "unroll(4),align"])
@pytest.mark.parametrize(
    "entry",
    [pytest.param(e, marks=on_source(e["file"])) for e in C66X],
    ids=lambda e: e["function"],
)
def test_c66x_kernels_with_row_align_are_bit_exact(entry, passes):
    """Scalar accesses (align alone) rely on nothing but the element size: the pass reports
    every access and raises none; unrolled by 4, every other copy is raised to 8 bytes."""
    changed = 0
    for params in EVEN_SIZES:
        result, remarks = _check(entry, params, passes)
        assert result.status == "OK", (params, str(result))
        changed += result.changed
    assert changed, "no run changed anything"
    assert_fired(remarks, passes)
    assert bool(_raised(remarks)) == passes.startswith("unroll"), remarks


@on_source("c66x/jacobi.c")
@pytest.mark.parametrize("passes", ["align", "unroll(2),align"])
def test_odd_sizes_without_a_declaration_are_bit_exact(passes):
    entry = next(e for e in C66X if e["function"] == "Jacobi")
    for params in ({"size_x": 37, "size_y": 23}, {"size_x": 1, "size_y": 3}):
        result, remarks = _check(entry, params, passes, row_align=None)
        assert result.status == "OK", str(result)
    assert not _raised(remarks)
    assert any(
        "no alignment declared for 'input', 'output'" in m for m in missed_by(remarks, "align")
    )


@pytest.mark.parametrize(
    "function",
    [
        pytest.param(name, marks=on_source(file))
        for name, file in [
            ("MeanFilter1x3", "c66x/mean_filter_1x3.c"),
            ("MatrixAdd", "c66x/matrix_add.c"),
            ("Jacobi", "c66x/jacobi.c"),
        ]
    ],
)
def test_a_wrong_row_align_is_reported_not_miscompiled(function):
    entry = next(e for e in C66X if e["function"] == function)
    result, remarks = _check(entry, {"size_x": 37, "size_y": 5}, "unroll(2),align")
    assert _raised(remarks), remarks
    assert result.status == "ERROR", str(result)
    assert "declared row_align(8) does not hold" in result.message
    assert f"{entry['file'].split('/')[1]}:" in result.message  # file:line:col
    assert "a wrong declaration" in result.message
    # the same size with scalar accesses relies on nothing but the element size
    assert _check(entry, {"size_x": 37, "size_y": 5}, "align")[0].status == "OK"


def test_buffers_honour_a_large_declared_alignment():
    specs = [BufferSpec("a", __import__("numpy").dtype("float32"), -3, 17, True)]
    buffers = make_inputs(specs, 0, "x", alignment=256)
    assert buffers.pointer("a") % 256 == 0
    before, after = buffers.guards("a")
    assert len(before) >= 64 and len(after) >= 64
    assert (before == GUARD_BYTE).all() and (after == GUARD_BYTE).all()
    twin = buffers.copy()
    assert twin.pointer("a") % 256 == 0 and (twin.data("a") == buffers.data("a")).all()


# ----------------------------------------------------------------------- command lines


def test_row_align_options_of_check_and_emit(capsys):
    path = _corpus("mean_filter_1x3.c")
    assert cli_main(["emit", "--emit", "llvm", "--row-align", "8", path]) == 0
    out = capsys.readouterr().out
    assert 'ptr align 8 %"input"' in out and "!pycc.row_align" in out
    args = ["check", path, "--passes", "unroll(2),align", "--row-align", "8", "--param"]
    assert cli_main([*args, "size_x=16"]) == 0
    assert "OK MeanFilter1x3" in capsys.readouterr().out
    assert cli_main([*args, "size_x=15"]) == 1
    assert "declared row_align(8) does not hold" in capsys.readouterr().out
    assert cli_main(["emit", "--emit", "llvm", "--row-align", "12", path]) == 1
    assert "power of two" in capsys.readouterr().err


PYCC = shutil.which("pycc-stencil") or shutil.which(
    "pycc-stencil", path=os.path.dirname(sys.executable)
)


@pytest.mark.skipif(PYCC is None or shutil.which("cc") is None, reason="no pycc-stencil or cc")
def test_compiler_mode_row_align_option(tmp_path):
    source = tmp_path / "mf.c"
    source.write_text(open(_corpus("mean_filter_1x3.c")).read())
    env = dict(os.environ, PYCC_CACHE_DIR=str(tmp_path / "cache"))
    env["PYCC_REPORT"] = str(tmp_path / "report.jsonl")
    command = [PYCC, "cc", "-O2", "-fpycc-passes=unroll(2),align", "-c", str(source)]
    run = subprocess.run(
        [*command, "-fpycc-row-align=8", "-o", str(tmp_path / "mf.o")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    report = (tmp_path / "report.jsonl").read_text()
    assert "align raised to 8 on 4" in report
    bad = subprocess.run(
        [*command, "-fpycc-row-align=3", "-o", str(tmp_path / "bad.o")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "-fpycc-row-align=3" in bad.stderr


ASSUMED = """
void assumed(const float *in, int n, int shift, float *out) {
  const float *a = __builtin_assume_aligned(in + shift, 16);
  for (int j = 0; j < n; j += 4) out[j] = a[j] * 0.5f;
}
"""


@pytest.mark.parametrize("shift, status", [(0, "OK"), (4, "OK"), (1, "ERROR")])
def test_a_wrong_assume_aligned_is_reported(tmp_path, shift, status):
    path = tmp_path / "assumed.c"
    path.write_text(ASSUMED)
    result, remarks = check(path, "assumed", {"n": 13, "shift": shift}, "align")
    assert result.status == status, str(result)
    assert any("align raised to 16 on 1" in m for m in passed_by(remarks, "align")), remarks
    if status == "ERROR":
        assert result.message.startswith("the declared alignment does not hold: the load at")
        assert f"{path}:4:" in result.message


INVARIANT = """
#pragma pycc row_align(8)
void scale(const float *in, int size_x, int size_y, const float *coef, float *out) {
  for (int i = 0; i < size_y; i++)
    for (int j = 0; j < size_x; j++)
      out[i * size_x + j] = in[i * size_x + j] * coef[i];
}
"""


def test_row_align_does_not_apply_to_accesses_that_do_not_walk_a_row(tmp_path):
    path = tmp_path / "scale.c"
    path.write_text(INVARIANT)
    lowered = lower_file(str(path))
    run_passes(lowered.module, parse_pipeline("unroll(2),align"), verify=True, target=HOST)
    function = lowered.module.get_global("scale")
    first = [a for a in accesses(function) if a.instruction.parent.name.endswith(".u0")]
    assert [(a.address.base.name, a.instruction.align) for a in first] == [
        ("in", 8),
        ("coef", 4),  # coef[i] with i odd is not 8-aligned whatever row_align says
        ("out", 8),
    ]
    options = CheckOptions(params={"size_x": "6", "size_y": "5"}, passes="unroll(2),align")
    (result,) = check_file(str(path), [], options)
    assert result.status == "OK", str(result)
