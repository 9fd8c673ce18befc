"""Copies of a module to try pass pipelines on (the strategy search, `auto`).

llvmlite caches the text of an instruction and of its reference (`%"name"`) once printed,
and a deep copy keeps those caches; a pass that clones an instruction and renames the clone
would then print the old name twice. The copies made here drop the caches.
"""

from __future__ import annotations

import copy

from llvmlite import ir

from .deep import deep_call
from .rewrite import forget_text


def forget_strings(function: ir.Function) -> None:
    """Drop llvmlite's cached instruction and reference strings: once a function has been
    printed, a pass that clones and renames its values would otherwise print stale names."""
    for block in function.blocks:
        for instruction in block.instructions:
            forget_text(instruction)


def fresh_copy(module: ir.Module) -> ir.Module:
    """A deep copy of `module` with no cached strings (see `forget_strings`)."""
    copied = deep_call(copy.deepcopy, module)  # it recurses from block to block
    for function in copied.functions:
        forget_strings(function)
    return copied
