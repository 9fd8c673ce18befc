"""Host feedback for `tune`: cycles per iteration of each function's innermost loop on this CPU.

The module is optimized by LLVM's -O3 pipeline for the host CPU (LLVM's own unroller and
vectorizers off, so the strategy under test is the only unrolling and vectorization) and
compiled to assembly; the innermost loop with the most instructions (the unrolled loop, not
its remainder) is cut out and given to `llvm-mca` (the newest installed; `PYCC_LLVM_MCA`
names another), whose `Total Cycles / Iterations` is the loop's cycles per trip.

Without llvm-mca a documented throughput model stands in: a trip costs
max(instructions / 4, loads / 2, stores / 1) cycles (4-wide issue, 2 load ports, 1 store
port: every x86-64 core of the last decade has at least that). Registers are the distinct
general-purpose and vector registers the loop names; a spill or reload inside the loop means
the register limit was exceeded. An out-of-order core has no software-pipelining verdict.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

import llvmlite.binding as llvm
from llvmlite import ir

from .asm_loops import AsmLoop, functions, innermost_loops
from .host_jit import host_target_machine, optimize
from .ir_loops import induction_step, largest_self_loop

_MCA_NAMES = [f"llvm-mca-{v}" for v in range(30, 13, -1)] + ["llvm-mca"]
_REGISTER = re.compile(r"%([a-z][a-z0-9]*)")


@dataclass(frozen=True)
class HostLoop:
    cycles: float  # per loop trip
    instructions: int
    registers: int
    spills: int
    source: str  # "llvm-mca" or "model"


@functools.cache
def llvm_mca() -> str | None:
    """Path of the llvm-mca to use, or None."""
    named = os.environ.get("PYCC_LLVM_MCA")
    if named:
        return shutil.which(named)
    for name in _MCA_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def compile_to_assembly(module: ir.Module | str, llvm_loops: bool = False) -> str:
    """Host assembly at -O3; `llvm_loops`: with LLVM's unroller and vectorizers, as the JIT
    and the compiler mode build it."""
    return _compile(module, llvm_loops)[0]


def _compile(module: ir.Module | str, llvm_loops: bool) -> tuple[str, llvm.ModuleRef]:
    machine = host_target_machine(3)
    machine.set_asm_verbosity(True)
    parsed = llvm.parse_assembly(str(module))
    optimize(parsed, 3, machine, loop_transforms=llvm_loops)
    return machine.emit_assembly(parsed), parsed


def _mca_cycles(loop: AsmLoop) -> float | None:
    path = llvm_mca()
    if path is None:
        return None
    text = f"{loop.label}:\n" + "\n".join(loop.lines) + "\n"
    for cpu in (llvm.get_host_cpu_name(), None):
        command = [path, "-iterations=100"] + ([f"-mcpu={cpu}"] if cpu else [])
        try:
            run = subprocess.run(command, input=text, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        total = re.search(r"Total Cycles:\s+(\d+)", run.stdout)
        iterations = re.search(r"Iterations:\s+(\d+)", run.stdout)
        if run.returncode == 0 and total and iterations:
            return int(total.group(1)) / int(iterations.group(1))
    return None


def model_cycles(loop: AsmLoop) -> float:
    """The fallback throughput model (module docstring)."""
    loads = stores = 0
    for line in loop.lines:
        mnemonic, _, operands = line.partition(" ")
        memory = "(" in operands
        if memory and mnemonic.startswith(("mov", "vmov")) and operands.rstrip().endswith(")"):
            stores += 1
        elif memory:
            loads += 1
    return max(len(loop.lines) / 4, loads / 2, stores / 1)


def analyze(assembly: str, use_mca: bool = True) -> dict[str, HostLoop]:
    result = {}
    for name, lines in functions(assembly).items():
        loops = innermost_loops(lines, "#")
        if not loops:
            continue
        loop = max(loops, key=lambda lp: len(lp.lines))
        cycles = _mca_cycles(loop) if use_mca else None
        registers = {r for line in loop.lines for r in _REGISTER.findall(line) if r != "rip"}
        result[name] = HostLoop(
            cycles=cycles if cycles is not None else model_cycles(loop),
            instructions=len(loop.lines),
            registers=len(registers),
            spills=loop.spills,
            source="llvm-mca" if cycles is not None else "model",
        )
    return result


def host_loops(module: ir.Module | str, use_mca: bool = True) -> dict[str, HostLoop]:
    """Compile `module` for the host and cost each function's innermost loop."""
    return analyze(compile_to_assembly(module), use_mca)


def as_built(module: ir.Module, original_steps: dict[str, int]) -> dict[str, float]:
    """Cycles per original iteration of each function's innermost loop as the JIT and the
    compiler mode build it (LLVM's vectorizer and unroller on), for `auto`'s baseline. One
    trip of the loop LLVM produced (its largest self-loop) covers its induction step divided
    by the original loop's step (`original_steps`) original iterations."""
    assembly, optimized = _compile(module, llvm_loops=True)
    loops = analyze(assembly)
    result = {}
    for name, original in original_steps.items():
        try:
            function = optimized.get_function(name)
        except NameError:  # a static function inlined into its callers and deleted
            continue
        block = largest_self_loop(function) if not function.is_declaration else None
        step = induction_step(block) if block is not None else None
        if name in loops and step:
            result[name] = loops[name].cycles / max(1, step // original)
    return result
