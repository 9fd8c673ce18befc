"""Innermost loops of optimized LLVM IR read through llvmlite.binding (which has no loop
analysis): after LLVM's pipeline a stencil's innermost loop is one block branching to itself.
Shared by the C66x model (which counts its instructions) and the host cost (which needs the
original iterations one trip of it covers, LLVM's vectorizer and unroller included)."""

from __future__ import annotations

import ctypes

import llvmlite.binding as llvm


def value_key(value: llvm.ValueRef) -> int:
    """Identity of an LLVM value (binding objects for the same value are distinct)."""
    return ctypes.cast(value._ptr, ctypes.c_void_p).value


def largest_self_loop(function: llvm.ValueRef) -> llvm.ValueRef | None:
    """The block with the most instructions among those that branch to themselves."""
    best, size = None, -1
    for block in function.blocks:
        instructions = list(block.instructions)
        terminator = instructions[-1]
        mine = value_key(block)
        if any(value_key(t) == mine for t in terminator.operands) and len(instructions) > size:
            best, size = block, len(instructions)
    return best


def induction_step(block: llvm.ValueRef) -> int | None:
    """The largest constant step of an integer phi of `block` (`%iv.next = add %iv, C`)."""
    instructions = {value_key(i): i for i in block.instructions}
    steps = []
    for phi in (i for i in block.instructions if i.opcode == "phi"):
        if not str(phi.type).startswith("i"):
            continue
        for incoming in phi.operands:
            update = instructions.get(value_key(incoming))
            if update is None or update.opcode not in ("add", "sub"):
                continue
            left, right = list(update.operands)
            if value_key(left) == value_key(phi) and right.is_constant:
                steps.append(abs(right.get_constant_value(signed_int=True)))
    return max(steps, default=None)
