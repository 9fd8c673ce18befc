"""Address expressions (ir_passes/core/affine.py) of the loads and stores of lowered C kernels."""

from __future__ import annotations

import itertools

import pytest
from llvmlite import ir
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.affine import accesses
from pycc_stencil.ir_passes.core.symbolic import Expr, integer_expr


def _function(tmp_path, source: str, name: str = "k") -> ir.Function:
    path = tmp_path / "k.c"
    path.write_text(source)
    lowered = lower_file(str(path))
    assert name in lowered.functions, lowered.skipped
    return lowered.module.get_global(name)


def _named(function: ir.Function) -> dict[str, ir.Value]:
    """Arguments and phis by their C names (the front end names IV phis after the variable)."""
    values = {a.name: a for a in function.args}
    for block in function.blocks:
        for instruction in block.instructions:
            if instruction.opname == "phi":
                values.setdefault(instruction.name, instruction)
    return values


def _evaluate(p: Expr, env: dict[ir.Value, int]) -> int:
    total = 0
    for monomial, c in p.terms:
        product = c
        for v in monomial:
            product *= env[v]
        total += product
    return total


def test_one_dimensional_neighbours_are_consecutive_elements(tmp_path):
    f = _function(
        tmp_path,
        "void k(int n, float *restrict out, const float *restrict in)\n"
        "{ for (int i = 1; i < n - 1; i++) out[i] = in[i - 1] + in[i] + in[i + 1]; }\n",
    )
    v = _named(f)
    found = [(a.is_store, a.address.base.name, str(a.address.offset)) for a in accesses(f)]
    assert found == [
        (False, "in", "4*%i - 4"),
        (False, "in", "4*%i"),
        (False, "in", "4*%i + 4"),
        (True, "out", "4*%i"),
    ]
    for a in accesses(f):
        assert a.address.offset.is_affine_in({v["i"]})
        assert a.address.offset.coefficient(v["i"]) == Expr.constant(a.size)


def test_variable_length_rows_have_a_parametric_stride(tmp_path):
    f = _function(
        tmp_path,
        "void k(int n, int m, float A[n][m], const float *restrict B, double (*C)[8]) {\n"
        " for (int i = 1; i < n - 1; i++) for (int j = 0; j < m; j += 2) {\n"
        "  A[i][j] = B[(i - 1) * m + j] + B[i * m + j + 1]; C[i][3] = 2 * j; } }\n",
    )
    v = _named(f)
    i, j, m = v["i"], v["j"], v["m"]
    found = {(a.address.base.name, a.is_store): a.address.offset for a in accesses(f)}
    assert found[("A", True)].coefficient(i) == Expr.symbol(m).scaled(4)
    assert found[("A", True)].coefficient(j) == Expr.constant(4)
    assert str(found[("C", True)]) == "64*%i + 24"
    for offset in found.values():
        assert offset.is_affine_in({i, j})
    # the polynomial is the C byte offset for every value of the symbols
    loads = [a.address.offset for a in accesses(f) if a.address.base.name == "B"]
    for iv, jv, mv in itertools.product((0, 1, 5, 17), (0, 3), (1, 7, 64)):
        env = {i: iv, j: jv, m: mv}
        assert _evaluate(loads[0], env) == 4 * ((iv - 1) * mv + jv)
        assert _evaluate(loads[1], env) == 4 * (iv * mv + jv + 1)


def test_loaded_row_pointers_are_opaque_bases(tmp_path):
    f = _function(
        tmp_path,
        "void k(int n, float **rows)\n"
        "{ for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) rows[i][j] = 0; }\n",
    )
    (store,) = [a for a in accesses(f) if a.is_store]
    assert store.address.base.opname == "load"  # rows[i], loaded in the loop
    assert str(store.address.offset) == "4*%j"


def test_products_of_loop_variables_are_not_affine(tmp_path):
    f = _function(
        tmp_path,
        "void k(int n, double *a) { for (int i = 0; i < n; i++) a[i * i] = a[i] + 1; }\n",
    )
    v = _named(f)
    offsets = {a.is_store: a.address.offset for a in accesses(f)}
    assert not offsets[True].is_affine_in({v["i"]})
    assert offsets[False].is_affine_in({v["i"]})


@pytest.mark.parametrize("shift", [0, 3])
def test_shifts_by_constants_are_multiplications(shift):
    builder = ir.IRBuilder(ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), []), "f")
                           .append_basic_block())  # fmt: skip
    x = ir.Argument(builder.function, ir.IntType(64), "x")
    shifted = builder.shl(x, ir.Constant(ir.IntType(64), shift))
    assert integer_expr(shifted) == Expr.symbol(x).scaled(1 << shift)


def test_alignment_follows_coefficients_bases_and_known_divisors(tmp_path):
    from pycc_stencil.ir_passes.core.alignment import address_alignment, power_of_two_dividing

    f = _function(
        tmp_path,
        "void k(int n, int m, float A[n][m])\n"
        "{ for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) A[i][j] = A[i][j + 1]; }\n",
    )
    v = _named(f)
    by_kind = {a.is_store: a.address for a in accesses(f)}
    store, load = by_kind[True], by_kind[False]
    A = store.base
    assert address_alignment(store) == 1  # nothing known about A
    assert address_alignment(store, {A: 32}) == 4  # 4*j, 4*i*m: float alignment only
    # rows a multiple of 8 floats and j stepping by 8 from 0: every store is 32-byte aligned
    facts = {v["m"]: 8, v["j"]: 8}
    assert address_alignment(store, {A: 32}, facts) == 32
    assert address_alignment(load, {A: 32}, facts) == 4  # A[i][j + 1]: one float off
    assert [power_of_two_dividing(x) for x in (0, 1, 6, 24, -8, 1 << 20)] == [64, 1, 2, 8, 8, 64]
