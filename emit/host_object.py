"""LLVM IR -> an object file (or assembly) for the target a `cc` command line asks for."""

from __future__ import annotations

import os

from .cc_target import TargetSpec
from .host_jit import optimize, parse_verified
from .vector_sqrt import bind_vector_sqrt


def compile_to_object(module_text: str, target: TargetSpec, source: str = "") -> bytes:
    """Verify, optimize at the target's -O level and emit an ELF relocatable object, whose
    `FILE` symbol names `source` (the C file's base name, as cc's object does; linkers quote
    it in their messages)."""
    machine = target.target_machine()
    return machine.emit_object(_optimized(module_text, target, machine, source))


def compile_to_assembly(module_text: str, target: TargetSpec, source: str = "") -> str:
    """As `compile_to_object`, but the assembly text (`cc -S`)."""
    machine = target.target_machine()
    return machine.emit_assembly(_optimized(module_text, target, machine, source))


def _named(module_text: str, source: str) -> str:
    """`module_text` with its `source_filename` (LLVM's string escapes: `\\XX`)."""
    if not source:
        return module_text
    name = "".join(
        c if c.isprintable() and c not in '"\\' else "".join(f"\\{b:02X}" for b in c.encode())
        for c in os.path.basename(source)
    )
    return f'source_filename = "{name}"\n{module_text}'


def _optimized(module_text: str, target: TargetSpec, machine, source: str):
    """The verified module after LLVM's pipeline for the target's -O level and
    -f[no-]tree-*-vectorize switches; without AVX, with the square roots LLVM scalarized in
    vector loops packed again (`vector_sqrt`: gcc's `sqrtpd`)."""
    parsed = parse_verified(_named(module_text, source))
    loop, slp = target.vectorizers
    optimize(parsed, target.opt_level, machine, target.size_level, loop_vectorize=loop,
             slp_vectorize=slp)  # fmt: skip
    if "+avx" in target.features.split(","):
        return parsed
    packed = bind_vector_sqrt(text := str(parsed))
    return parsed if packed is text else parse_verified(packed)
