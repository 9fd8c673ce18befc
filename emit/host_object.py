"""LLVM IR -> an object file (or assembly) for the target a `cc` command line asks for."""

from __future__ import annotations

from .cc_target import TargetSpec
from .host_jit import optimize, parse_verified


def compile_to_object(module_text: str, target: TargetSpec) -> bytes:
    """Verify, optimize at the target's -O level and emit an ELF relocatable object."""
    machine = target.target_machine()
    parsed = parse_verified(module_text)
    _optimize_for(parsed, target, machine)
    return machine.emit_object(parsed)


def compile_to_assembly(module_text: str, target: TargetSpec) -> str:
    """As `compile_to_object`, but the assembly text (`cc -S`)."""
    machine = target.target_machine()
    parsed = parse_verified(module_text)
    _optimize_for(parsed, target, machine)
    return machine.emit_assembly(parsed)


def _optimize_for(parsed, target: TargetSpec, machine) -> None:
    """LLVM's pipeline for the target's -O level and -f[no-]tree-*-vectorize switches."""
    loop, slp = target.vectorizers
    optimize(parsed, target.opt_level, machine, target.size_level, loop_vectorize=loop,
             slp_vectorize=slp)  # fmt: skip
