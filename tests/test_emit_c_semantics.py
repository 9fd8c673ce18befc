"""The C emitter's operations mean what LLVM's do: each operation, on edge values (wrapping
overflow, INT_MIN, NaN, -0.0, infinities, shift counts up to the width), computed by the JIT
from the IR and by cc from the emitted C, bit for bit; scalars and vector lanes alike."""

from __future__ import annotations

import ctypes
import itertools
import math
from functools import partial

import numpy as np
import pytest
from corpus_check import in_child
from llvmlite import ir
from pycc_stencil.emit.c_module import emit_c
from pycc_stencil.emit.host_jit import compile_module
from pycc_stencil.runtime.emitted import EmittedLibrary

I1, I8, I16, I32, I64 = (ir.IntType(w) for w in (1, 8, 16, 32, 64))
F32, F64 = ir.FloatType(), ir.DoubleType()
_DTYPES = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def _dtype(t: ir.Type) -> np.dtype:
    if isinstance(t, ir.VectorType):
        return _dtype(t.element)
    if isinstance(t, ir.IntType):
        return np.dtype(np.uint8 if t.width == 1 else _DTYPES[t.width])
    return np.dtype(np.float32 if isinstance(t, ir.FloatType) else np.float64)


def _edges(t: ir.Type) -> list:
    if isinstance(t, ir.IntType):
        if t.width == 1:
            return [0, 1]
        lo, hi = -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
        return [0, 1, -1, 2, 7, lo, hi, lo + 1, hi - 1, 100 % (hi + 1)]
    return [0.0, -0.0, 1.0, -1.5, 2.5, math.inf, -math.inf, math.nan, 1e-30, 3.0e38]


def _run_both(build, operand_types: list[ir.Type], result: ir.Type, rows: list[tuple]):
    """`build(builder, operands) -> value` over every row, run by the JIT and by the emitted
    C: (jit output, C output, emitted text)."""
    module = ir.Module(name="ops")
    ptr = ir.PointerType()
    function = ir.Function(
        module, ir.FunctionType(ir.VoidType(), [ptr] * (len(operand_types) + 1)), "f"
    )
    b = ir.IRBuilder(function.append_basic_block("entry"))
    *inputs, out = function.args
    stored = I8 if result == I1 else result
    for k in range(len(rows)):
        index = ir.Constant(I64, k)
        ops = []
        for arg, t in zip(inputs, operand_types):
            memory = I8 if t == I1 else t
            value = b.load(b.gep(arg, [index], source_etype=memory), typ=memory)
            ops.append(b.trunc(value, I1) if t == I1 else value)
        value = build(b, ops)
        if result == I1:
            value = b.zext(value, I8)
        b.store(value, b.gep(out, [index], source_etype=stored))
    b.ret_void()
    columns = [
        np.array([row[i] for row in rows], dtype=_dtype(t)) for i, t in enumerate(operand_types)
    ]
    emitted = emit_c(module)
    assert emitted.functions == ["f"], emitted.skipped
    library = EmittedLibrary(emitted)
    jit = compile_module(module, ["f"], opt_level=0)

    def run(address: int) -> bytes:
        outputs = np.zeros(len(rows), dtype=_dtype(stored))
        args = [c.ctypes.data for c in columns] + [outputs.ctypes.data]
        ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * len(args))(address)(*args)
        return outputs.tobytes()

    return in_child(
        lambda: (run(jit.function_address("f")), run(library.function_address("f")))
    ), emitted.text


def _pairs(t: ir.Type, keep=lambda a, b: True) -> list[tuple]:
    return [(a, b) for a, b in itertools.product(_edges(t), repeat=2) if keep(a, b)]


INT_TYPES = [I8, I16, I32, I64]
_WRAPPING = ["add", "sub", "mul", "and", "or", "xor"]


@pytest.mark.parametrize("t", INT_TYPES, ids=str)
@pytest.mark.parametrize("op", [*_WRAPPING, "sdiv", "srem", "udiv", "urem", "shl", "lshr", "ashr"])
def test_integer_operation(op, t):
    lo = -(1 << (t.width - 1))

    def keep(a, b):
        if op in ("sdiv", "srem"):
            return b != 0 and not (a == lo and b == -1)
        if op in ("udiv", "urem"):
            return b != 0
        if op in ("shl", "lshr", "ashr"):
            return 0 <= b < t.width
        return True

    rows = _pairs(t, keep)
    (jit, c), text = _run_both(lambda b, o: getattr(b, _BUILDER.get(op, op))(*o), [t, t], t, rows)
    assert jit == c
    if op in ("add", "sub", "mul", "shl") and t.width >= 32:
        # signed overflow is undefined in C (cc happens to wrap here, an optimizer may not):
        # without `nsw` the operation must go through the unsigned type
        assert f"(uint{t.width}_t)" in text


_BUILDER = {"and": "and_", "or": "or_", "sdiv": "sdiv", "udiv": "udiv", "lshr": "lshr"}


_COMPARISONS = [
    *((t, p, kind) for t in INT_TYPES for p in ["==", "!=", "<", "<=", ">", ">="]
      for kind in ("icmp_signed", "icmp_unsigned")),
    *((t, p, kind) for t in (F32, F64) for p in ["==", "!=", "<", "<=", ">", ">=", "ord", "uno"]
      for kind in ("fcmp_ordered", "fcmp_unordered")),
]  # fmt: skip


@pytest.mark.parametrize("t, predicate, kind", _COMPARISONS, ids=str)
def test_comparison(t, predicate, kind):
    """Every integer predicate signed and unsigned; every float one ordered and unordered,
    with NaN among the operands."""
    compare = getattr(ir.IRBuilder, kind)
    (jit, c), _ = _run_both(lambda b, o: compare(b, predicate, *o), [t, t], I1, _pairs(t))
    assert jit == c


@pytest.mark.parametrize("t", [F32, F64], ids=str)
@pytest.mark.parametrize("op", ["fadd", "fsub", "fmul", "fdiv", "frem"])
def test_float_operation(t, op):
    (jit, c), _ = _run_both(lambda b, o: getattr(b, op)(*o), [t, t], t, _pairs(t))
    assert jit == c


_CONVERSIONS = [
    ("trunc", I64, I8), ("trunc", I32, I16), ("trunc", I32, I1),
    ("sext", I8, I32), ("sext", I1, I64), ("sext", I32, I64),
    ("zext", I8, I64), ("zext", I1, I32), ("zext", I16, I32),
    ("sitofp", I32, F32), ("sitofp", I64, F64), ("uitofp", I32, F64), ("uitofp", I8, F32),
    ("fpext", F32, F64), ("fptrunc", F64, F32),
]  # fmt: skip


@pytest.mark.parametrize("op, source, target", _CONVERSIONS, ids=lambda v: str(v))
def test_conversion(op, source, target):
    rows = [(v,) for v in _edges(source)]
    (jit, c), _ = _run_both(lambda b, o: getattr(b, op)(o[0], target), [source], target, rows)
    assert jit == c


@pytest.mark.parametrize("op, source, target", [("fptosi", F64, I32), ("fptoui", F32, I16)])
def test_float_to_integer_in_range(op, source, target):
    rows = [(v,) for v in (0.0, -0.0, 1.5, 2.9, 100.25, 65000.0 if op == "fptoui" else -7.5)]
    (jit, c), _ = _run_both(lambda b, o: getattr(b, op)(o[0], target), [source], target, rows)
    assert jit == c


def test_select_and_negation():
    rows = [(c, a, b) for c in (0, 1) for a, b in _pairs(F32)[:20]]
    (jit, c), _ = _run_both(
        lambda b, o: b.select(o[0], b.fneg(o[1]), o[2]), [I1, F32, F32], F32, rows
    )
    assert jit == c


V4I32, V4F32, V8I16 = ir.VectorType(I32, 4), ir.VectorType(F32, 4), ir.VectorType(I16, 8)


def _vector_rows(t: ir.VectorType, count: int) -> list[tuple]:
    """`count` rows of two operands, each an element of a lane (vectors are read from
    consecutive elements)."""
    values = _edges(t.element)
    return [(values[k % len(values)], values[(3 * k + 1) % len(values)]) for k in range(count)]


def _vector_function(t: ir.VectorType, result: ir.VectorType, operation):
    module = ir.Module(name="vectors")
    ptr = ir.PointerType()
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, ptr, ptr]), "f")
    b = ir.IRBuilder(function.append_basic_block("entry"))
    x, y, out = function.args
    a, c = b.load(x, typ=t), b.load(y, typ=t)
    value = operation(b, a, c)
    if result.element == I1:
        value = b.zext(value, ir.VectorType(I8, result.count))
    b.store(value, out)
    b.ret_void()
    return module


_VECTOR_OPERATIONS = {
    "add": (V4I32, V4I32, lambda b, a, c: b.add(a, c)),
    "mul": (V8I16, V8I16, lambda b, a, c: b.mul(a, c)),
    "ashr": (V4I32, V4I32, lambda b, a, c: b.ashr(a, b.and_(c, ir.Constant(V4I32, [31] * 4)))),
    "icmp_ult": (V4I32, ir.VectorType(I1, 4), lambda b, a, c: b.icmp_unsigned("<", a, c)),
    "fcmp_une": (V4F32, ir.VectorType(I1, 4), lambda b, a, c: b.fcmp_unordered("!=", a, c)),
    "select": (
        V4F32,
        V4F32,
        lambda b, a, c: b.select(b.fcmp_ordered("<", a, c), a, c),
    ),
    "sitofp": (V4I32, V4F32, lambda b, a, c: b.sitofp(b.sub(a, c), V4F32)),
    "shuffle": (
        V4F32,
        V4F32,
        lambda b, a, c: b.shuffle_vector(a, c, ir.Constant(V4I32, [1, 2, 3, 4])),
    ),
    "insert_extract": (
        V4I32,
        V4I32,
        lambda b, a, c: b.insert_element(
            a, b.extract_element(c, ir.Constant(I32, 2)), ir.Constant(I32, 0)
        ),
    ),
}


@pytest.mark.parametrize("name", list(_VECTOR_OPERATIONS))
def test_vector_operation(name):
    t, result, operation = _VECTOR_OPERATIONS[name]
    module = _vector_function(t, result, operation)
    emitted = emit_c(module)
    assert emitted.functions == ["f"], emitted.skipped
    library = EmittedLibrary(emitted)
    jit = compile_module(module, ["f"], opt_level=0)
    rng = np.random.default_rng(7)
    for trial in range(8):
        rows = _vector_rows(t, t.count)
        rng.shuffle(rows)
        x = np.array([r[0] for r in rows], dtype=_dtype(t))
        y = np.array([r[1] for r in rows], dtype=_dtype(t))

        out_dtype = _dtype(I8 if result.element == I1 else result.element)
        operands = (x, y, result.count, out_dtype)
        jit_out = in_child(partial(_call_vector, jit.function_address("f"), *operands))
        c_out = in_child(partial(_call_vector, library.function_address("f"), *operands))
        assert jit_out == c_out, (trial, x, y)


def _call_vector(address: int, x: np.ndarray, y: np.ndarray, count: int, dtype) -> bytes:
    out = np.zeros(count, dtype=dtype)
    call = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    call(address)(x.ctypes.data, y.ctypes.data, out.ctypes.data)
    return out.tobytes()
