"""Branches on constant conditions are taken (ir_passes/core/branches.py): every integer
predicate on constants of both signs and several widths, JIT-run against the same function
unfolded; the blocks no path reaches go, phis of one value are replaced, the straight line is
one block, and a loop's latch stays a block of its own."""

from __future__ import annotations

import ctypes
import itertools

from llvmlite import ir
from pycc_stencil.emit.host_jit import compile_module
from pycc_stencil.ir_passes.core.branches import fold_constant_branches

PREDICATES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
SYMBOLS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
VALUES = {8: [-128, -1, 0, 1, 127], 32: [-(2**31), -7, 0, 5, 2**31 - 1], 64: [-1, 0, 2**63 - 1]}


def _choose(module: ir.Module, name: str, pred: str, width: int, a: int, b: int) -> ir.Function:
    """`i32 name(i32 x)`: `if (a pred b) r = x + 1; else r = x * 3; return r` with a phi."""
    i32 = ir.IntType(32)
    function = ir.Function(module, ir.FunctionType(i32, [i32]), name)
    entry, yes, no, join = (function.append_basic_block(n) for n in ("entry", "yes", "no", "join"))
    b_ = ir.IRBuilder(entry)
    t = ir.IntType(width)
    compare = b_.icmp_signed if pred[0] == "s" or pred in ("eq", "ne") else b_.icmp_unsigned
    kind = pred[1:] if pred[0] in "su" else pred
    b_.cbranch(compare(SYMBOLS[kind], ir.Constant(t, a), ir.Constant(t, b)), yes, no)
    b_.position_at_end(yes)
    one = b_.add(function.args[0], ir.Constant(i32, 1))
    b_.branch(join)
    b_.position_at_end(no)
    three = b_.mul(function.args[0], ir.Constant(i32, 3))
    b_.branch(join)
    b_.ret(_phi_at(b_, join, [(one, yes), (three, no)]))
    return function


def _phi_at(builder: ir.IRBuilder, block: ir.Block, incomings) -> ir.PhiInstr:
    """A phi of `incomings` ((value, block) pairs) at the end of `block`."""
    builder.position_at_end(block)
    phi = builder.phi(incomings[0][0].type)
    for value, source in incomings:
        phi.add_incoming(value, source)
    return phi


def _cases():
    for pred, (width, values) in itertools.product(PREDICATES, VALUES.items()):
        for a, b in itertools.product(values, values):
            yield pred, width, a, b


def test_constant_branches_go_the_way_the_comparison_does():
    cases = list(_cases())
    folded_module, plain_module = ir.Module("folded"), ir.Module("plain")
    names = [f"f{k}" for k in range(len(cases))]
    for name, case in zip(names, cases, strict=True):
        function = _choose(folded_module, name, *case)
        assert fold_constant_branches(function) > 0
        assert len(function.blocks) == 1, str(function)  # one straight line, no phi
        assert "phi" not in str(function)
        _choose(plain_module, name, *case)
    signature = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)
    folded, plain = compile_module(folded_module, names), compile_module(plain_module, names)
    for name, case in zip(names, cases, strict=True):
        got = signature(folded.function_address(name))(10)
        assert got == signature(plain.function_address(name))(10), case
    assert {signature(plain.function_address(n))(10) for n in names} == {11, 30}


def test_a_latch_is_not_merged_into_the_loop_body():
    """`for (i = 0; i < n; i++) { if (1 == 1) s += i; }`: the folded body joins its block,
    but not the latch (the loop analysis wants a latch of the update alone)."""
    i32 = ir.IntType(32)
    module = ir.Module("loop")
    function = ir.Function(module, ir.FunctionType(i32, [i32]), "sum")
    names = "entry header body yes join latch exit".split()
    entry, header, body, yes, join, latch, exit_ = (function.append_basic_block(n) for n in names)
    b = ir.IRBuilder(entry)
    b.branch(header)
    b.position_at_end(header)
    i, s = b.phi(i32, "i"), b.phi(i32, "s")
    b.cbranch(b.icmp_signed("<", i, function.args[0]), body, exit_)
    b.position_at_end(body)
    b.cbranch(b.icmp_signed("==", ir.Constant(i32, 1), ir.Constant(i32, 1)), yes, join)
    b.position_at_end(yes)
    more = b.add(s, i)
    b.branch(join)
    s2 = _phi_at(b, join, [(more, yes), (s, body)])
    b.branch(latch)
    b.position_at_end(latch)
    step = b.add(i, ir.Constant(i32, 1))
    b.branch(header)
    b.position_at_end(exit_)
    b.ret(s)
    i.add_incoming(ir.Constant(i32, 0), entry)
    i.add_incoming(step, latch)
    s.add_incoming(ir.Constant(i32, 0), entry)
    s.add_incoming(s2, latch)
    assert fold_constant_branches(function) > 0
    blocks = [blk.name for blk in function.blocks]
    assert "latch" in blocks and "yes" not in blocks and "join" not in blocks, blocks
    jit = compile_module(module, ["sum"])
    assert ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)(jit.function_address("sum"))(5) == 10
