"""The C emitter's operations mean what LLVM's do: each operation, on edge values (wrapping
overflow, INT_MIN, NaN, -0.0, infinities, shift counts up to the width), computed by the JIT
from the IR and by cc from the emitted C, bit for bit; scalars and vector lanes alike."""

from __future__ import annotations

import ctypes
import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Operation:
    """One function to build: `build(builder, operands) -> value` over every row."""

    name: str  # a C identifier
    build: Callable[[ir.IRBuilder, list[ir.Value]], ir.Value]
    operand_types: tuple[ir.Type, ...]
    result: ir.Type
    rows: list[tuple]


def _define(module: ir.Module, operation: Operation) -> list[np.ndarray]:
    """Add `operation` to `module` as `void name(in..., out)`; its input columns."""
    ptr = ir.PointerType()
    arguments = [ptr] * (len(operation.operand_types) + 1)
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), arguments), operation.name)
    b = ir.IRBuilder(function.append_basic_block("entry"))
    *inputs, out = function.args
    stored = I8 if operation.result == I1 else operation.result
    for k in range(len(operation.rows)):
        index = ir.Constant(I64, k)
        ops = []
        for arg, t in zip(inputs, operation.operand_types):
            memory = I8 if t == I1 else t
            value = b.load(b.gep(arg, [index], source_etype=memory), typ=memory)
            ops.append(b.trunc(value, I1) if t == I1 else value)
        value = operation.build(b, ops)
        if operation.result == I1:
            value = b.zext(value, I8)
        b.store(value, b.gep(out, [index], source_etype=stored))
    b.ret_void()
    return [
        np.array([row[i] for row in operation.rows], dtype=_dtype(t))
        for i, t in enumerate(operation.operand_types)
    ]


def _run_all(operations: list[Operation]) -> tuple[dict[str, tuple[bytes, bytes]], str]:
    """Every operation, each a function of one module, run by the JIT and by the emitted C
    (one cc build and one child for all): {name: (jit output, C output)}, the emitted text."""
    module = ir.Module(name="ops")
    columns = {op.name: _define(module, op) for op in operations}
    emitted = emit_c(module)
    assert emitted.functions == [op.name for op in operations], emitted.skipped
    library = EmittedLibrary(emitted)
    jit = compile_module(module, list(columns), opt_level=0)

    def run(address: int, operation: Operation) -> bytes:
        stored = I8 if operation.result == I1 else operation.result
        outputs = np.zeros(len(operation.rows), dtype=_dtype(stored))
        args = [c.ctypes.data for c in columns[operation.name]] + [outputs.ctypes.data]
        ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * len(args))(address)(*args)
        return outputs.tobytes()

    def run_every() -> dict[str, tuple[bytes, bytes]]:
        return {
            op.name: (
                run(jit.function_address(op.name), op),
                run(library.function_address(op.name), op),
            )
            for op in operations
        }

    return in_child(run_every), emitted.text


def _differing(outputs: dict[str, tuple[bytes, bytes]]) -> list[str]:
    """The operations whose JIT and C outputs differ."""
    return [name for name, (jit, c) in outputs.items() if jit != c]


def _definition(text: str, name: str) -> str:
    """The C definition of function `name` in the emitted `text`."""
    match = re.search(rf"^[^\n]*\b{name}\([^\n]*\)\n{{.*?^}}$", text, re.MULTILINE | re.DOTALL)
    assert match, f"no definition of {name}"
    return match.group(0)


def _pairs(t: ir.Type, keep=lambda a, b: True) -> list[tuple]:
    return [(a, b) for a, b in itertools.product(_edges(t), repeat=2) if keep(a, b)]


INT_TYPES = [I8, I16, I32, I64]
_INTEGER_OPERATIONS = [
    "add", "sub", "mul", "and", "or", "xor", "sdiv", "srem", "udiv", "urem", "shl", "lshr", "ashr"
]  # fmt: skip
_BUILDER = {"and": "and_", "or": "or_"}


def _operands_defined(op: str, width: int) -> Callable[[int, int], bool]:
    """Which operand pairs `op` is defined on at this width (no division by zero or overflow,
    shift counts below the width)."""
    lo = -(1 << (width - 1))
    if op in ("sdiv", "srem"):
        return lambda a, b: b != 0 and not (a == lo and b == -1)
    if op in ("udiv", "urem"):
        return lambda a, b: b != 0
    if op in ("shl", "lshr", "ashr"):
        return lambda a, b: 0 <= b < width
    return lambda a, b: True


def _binary(op: str, t: ir.Type, rows: list[tuple]) -> Operation:
    method = _BUILDER.get(op, op)
    return Operation(f"{op}_{t}", lambda b, o: getattr(b, method)(*o), (t, t), t, rows)


@pytest.mark.parametrize("t", INT_TYPES, ids=str)
def test_integer_operations(t):
    """Every integer operation at this width, on every defined pair of edge values."""
    operations = [
        _binary(op, t, _pairs(t, _operands_defined(op, t.width))) for op in _INTEGER_OPERATIONS
    ]
    outputs, text = _run_all(operations)
    assert not _differing(outputs)
    if t.width >= 32:
        # signed overflow is undefined in C (cc happens to wrap here, an optimizer may not):
        # without `nsw` the operation must go through the unsigned type
        for op in ("add", "sub", "mul", "shl"):
            assert f"(uint{t.width}_t)" in _definition(text, f"{op}_{t}"), op


_PREDICATES = {
    "icmp_signed": ["==", "!=", "<", "<=", ">", ">="],
    "icmp_unsigned": ["==", "!=", "<", "<=", ">", ">="],
    "fcmp_ordered": ["==", "!=", "<", "<=", ">", ">=", "ord", "uno"],
    "fcmp_unordered": ["==", "!=", "<", "<=", ">", ">=", "ord", "uno"],
}
_PREDICATE_NAMES = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def _comparison(t: ir.Type, kind: str, predicate: str) -> Operation:
    compare = getattr(ir.IRBuilder, kind)
    name = f"{kind}_{_PREDICATE_NAMES.get(predicate, predicate)}_{t}"
    return Operation(name, lambda b, o: compare(b, predicate, *o), (t, t), I1, _pairs(t))


#: comparisons at 8 and 32 bits and of both float types in the default run; at 16 and 64
#: bits in the sweep (every width's arithmetic stays: test_integer_operations)
_COMPARED = [I8, pytest.param(I16, marks=pytest.mark.sweep), I32,
             pytest.param(I64, marks=pytest.mark.sweep), F32, F64]  # fmt: skip


@pytest.mark.parametrize("t", _COMPARED, ids=str)
def test_comparisons(t):
    """Every integer predicate signed and unsigned; every float one ordered and unordered,
    with NaN among the operands."""
    kinds = (
        ("icmp_signed", "icmp_unsigned")
        if isinstance(t, ir.IntType)
        else ("fcmp_ordered", "fcmp_unordered")
    )
    operations = [_comparison(t, kind, p) for kind in kinds for p in _PREDICATES[kind]]
    outputs, _ = _run_all(operations)
    assert not _differing(outputs)


@pytest.mark.parametrize("t", [F32, F64], ids=str)
def test_float_operations(t):
    operations = [_binary(op, t, _pairs(t)) for op in ("fadd", "fsub", "fmul", "fdiv", "frem")]
    outputs, _ = _run_all(operations)
    assert not _differing(outputs)


_CONVERSIONS = [
    ("trunc", I64, I8), ("trunc", I32, I16), ("trunc", I32, I1),
    ("sext", I8, I32), ("sext", I1, I64), ("sext", I32, I64),
    ("zext", I8, I64), ("zext", I1, I32), ("zext", I16, I32),
    ("sitofp", I32, F32), ("sitofp", I64, F64), ("uitofp", I32, F64), ("uitofp", I8, F32),
    ("fpext", F32, F64), ("fptrunc", F64, F32),
]  # fmt: skip


def _conversion(op: str, source: ir.Type, target: ir.Type, values: list) -> Operation:
    rows = [(v,) for v in values]
    build = lambda b, o: getattr(b, op)(o[0], target)  # noqa: E731
    return Operation(f"{op}_{source}_{target}", build, (source,), target, rows)


def test_conversions():
    """Every conversion on the source type's edge values, and the float-to-integer ones on
    values in range."""
    operations = [_conversion(op, s, t, _edges(s)) for op, s, t in _CONVERSIONS]
    operations += [
        _conversion("fptosi", F64, I32, [0.0, -0.0, 1.5, 2.9, 100.25, -7.5]),
        _conversion("fptoui", F32, I16, [0.0, -0.0, 1.5, 2.9, 100.25, 65000.0]),
    ]
    outputs, _ = _run_all(operations)
    assert not _differing(outputs)


def test_select_and_negation():
    rows = [(c, a, b) for c in (0, 1) for a, b in _pairs(F32)[:20]]
    build = lambda b, o: b.select(o[0], b.fneg(o[1]), o[2])  # noqa: E731
    outputs, _ = _run_all([Operation("select_fneg", build, (I1, F32, F32), F32, rows)])
    assert not _differing(outputs)


V4I32, V4F32, V8I16 = ir.VectorType(I32, 4), ir.VectorType(F32, 4), ir.VectorType(I16, 8)


def _vector_rows(t: ir.VectorType, count: int) -> list[tuple]:
    """`count` rows of two operands, each an element of a lane (vectors are read from
    consecutive elements)."""
    values = _edges(t.element)
    return [(values[k % len(values)], values[(3 * k + 1) % len(values)]) for k in range(count)]


def _vector_function(
    module: ir.Module, name: str, t: ir.VectorType, result: ir.VectorType, operation
) -> None:
    ptr = ir.PointerType()
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, ptr, ptr]), name)
    b = ir.IRBuilder(function.append_basic_block("entry"))
    x, y, out = function.args
    a, c = b.load(x, typ=t), b.load(y, typ=t)
    value = operation(b, a, c)
    if result.element == I1:
        value = b.zext(value, ir.VectorType(I8, result.count))
    b.store(value, out)
    b.ret_void()


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


def test_vector_operations():
    """Each vector operation (a function of one module) on lanes of edge values in eight
    shuffled orders."""
    module = ir.Module(name="vectors")
    for name, (t, result, operation) in _VECTOR_OPERATIONS.items():
        _vector_function(module, name, t, result, operation)
    emitted = emit_c(module)
    assert emitted.functions == list(_VECTOR_OPERATIONS), emitted.skipped
    library = EmittedLibrary(emitted)
    jit = compile_module(module, list(_VECTOR_OPERATIONS), opt_level=0)
    rng = np.random.default_rng(7)
    calls = []
    for name, (t, result, _) in _VECTOR_OPERATIONS.items():
        out_dtype = _dtype(I8 if result.element == I1 else result.element)
        for _ in range(8):
            rows = _vector_rows(t, t.count)
            rng.shuffle(rows)
            x = np.array([r[0] for r in rows], dtype=_dtype(t))
            y = np.array([r[1] for r in rows], dtype=_dtype(t))
            calls.append((name, x, y, result.count, out_dtype))

    def run_every() -> list[tuple[bytes, bytes]]:
        return [
            (
                _call_vector(jit.function_address(name), *operands),
                _call_vector(library.function_address(name), *operands),
            )
            for name, *operands in calls
        ]

    outputs = in_child(run_every)
    differing = [call[:3] for call, (a, b) in zip(calls, outputs) if a != b]
    assert not differing


def _call_vector(address: int, x: np.ndarray, y: np.ndarray, count: int, dtype) -> bytes:
    out = np.zeros(count, dtype=dtype)
    call = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    call(address)(x.ctypes.data, y.ctypes.data, out.ctypes.data)
    return out.tobytes()
