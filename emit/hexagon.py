"""The Hexagon oracle: LLVM's Hexagon back end as a real VLIW DSP giving `tune` its feedback.

The dissertation tuned its C66x code on the TI assembler's report (II, registers, whether the
loop was software-pipelined). Hexagon is the closest VLIW DSP with a software pipeliner inside
llvmlite's LLVM, so the module is retargeted (hexagon-unknown-elf, hexagonv68 with 128-byte
HVX), optimized by LLVM's -O3 pipeline with LLVM's own unroller and vectorizers off (the
strategy under test is the only unrolling and vectorization), and compiled to assembly, from
which we read, for the innermost loop of each function:

- packets: `{ ... }` bundles, and a packet per instruction line outside braces. A packet
  issues in one cycle, so the packets of the loop body are its static II in cycles; divided
  by the original iterations per trip (UF*VF) this is the II per original iteration.
- instructions: the instructions of those packets (`;` separates several on one line),
  without `nop`s.
- registers: the distinct `r`, `v`, `q` and `p` registers named in the loop (pairs such as
  `r17:16` count both halves); a spill or reload inside the loop means the allocator ran out.
- software-pipelined: decided by LLVM's MachinePipeliner itself. Its optimization remarks
  (`-pass-remarks=pipeliner`, printed by LLVM's diagnostic handler on stderr, captured here)
  say `Schedule found with Initiation Interval: II, MaxStageCount: S` then `Pipelined
  succesfully!` for each loop it pipelines. A loop is pipelined iff such a remark's II equals
  its packet count (the pipeliner's kernel is exactly II packets, nops included); that pairs
  remarks and loops even when the unrolled loop and its remainder share a source line.
  A textual prologue/epilogue test is not reliable: LICM and loop rotation also leave body
  code before and after a loop that was not pipelined.

The innermost loop of a function is the one with the most instructions: with an unrolled
strategy that is the unrolled loop, not the remainder loop.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from dataclasses import dataclass

import llvmlite.binding as llvm
from llvmlite import ir

from .asm_loops import AsmLoop, functions, innermost_loops
from .host_jit import optimize

TRIPLE = "hexagon-unknown-elf"
CPU = "hexagonv68"
FEATURES = "+hvxv68,+hvx-length128b"
#: HVX vector registers in bytes (128-byte mode)
VECTOR_BYTES = 128
#: r0..r31 less the stack pointer, frame pointer and link register (r29..r31)
SCALAR_REGISTERS = 29
VECTOR_REGISTERS = 32

_REGISTER = re.compile(r"\b([rvqp])(\d+)(?::(\d+))?\b")
_SCHEDULE = re.compile(r"Schedule found with Initiation Interval: (\d+), MaxStageCount: (\d+)")
_lock = threading.Lock()
_initialized = False


@dataclass(frozen=True)
class HexagonLoop:
    """What the Hexagon assembly says about one function's innermost loop."""

    packets: int
    instructions: int
    registers: int
    vector_registers: int
    pipelined: bool
    spills: int

    @property
    def registers_exceeded(self) -> bool:
        return (
            self.spills > 0
            or self.registers > SCALAR_REGISTERS
            or self.vector_registers > VECTOR_REGISTERS
        )


def _initialize() -> None:
    global _initialized
    if _initialized:
        return
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    for kind in ("", "-missed", "-analysis"):
        llvm.set_option("pycc-stencil", f"-pass-remarks{kind}=pipeliner")
    _initialized = True


def target_machine() -> llvm.TargetMachine:
    """A new Hexagon v68 target machine with 128-byte HVX."""
    _initialize()
    target = llvm.Target.from_triple(TRIPLE)
    machine = target.create_target_machine(cpu=CPU, features=FEATURES, opt=3)
    machine.set_asm_verbosity(True)
    return machine


def compile_to_assembly(module: ir.Module | str) -> tuple[str, str]:
    """(assembly, LLVM's remarks) of `module` compiled for Hexagon at -O3 (LLVM's unroller
    and vectorizers off)."""
    machine = target_machine()
    parsed = llvm.parse_assembly(str(module))
    optimize(parsed, 3, machine, loop_transforms=False)
    with _lock:
        assembly, remarks = _capture_stderr(lambda: machine.emit_assembly(parsed))
    return assembly, remarks


def _capture_stderr(run):
    """Run `run()` with file descriptor 2 redirected: LLVM prints remarks from C++."""
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        try:
            os.dup2(sink.fileno(), 2)
            result = run()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        return result, sink.read().decode(errors="replace")


def packets(loop: AsmLoop) -> list[list[str]]:
    """The loop's packets, each a list of its instructions (nops included)."""
    result: list[list[str]] = []
    current: list[str] | None = None
    for line in loop.lines:
        text = line.replace(":endloop0", "").replace(":endloop1", "").strip()
        if text.startswith("{"):
            current = []
            text = text[1:].strip()
        closing = text.endswith("}")
        if closing:
            text = text[:-1].strip()
        instructions = [i.strip() for i in text.split(";") if i.strip()]
        if current is None:
            if instructions:
                result.append(instructions)
        else:
            current.extend(instructions)
            if closing:
                result.append(current)
                current = None
    return result


def successful_schedules(remarks: str) -> list[int]:
    """IIs of the loops the MachinePipeliner pipelined, in the order of its remarks."""
    found, result = None, []
    for line in remarks.splitlines():
        match = _SCHEDULE.search(line)
        if match:
            found = int(match.group(1))
        elif "Pipelined succesfully" in line and found is not None:
            result.append(found)
            found = None
    return result


def _registers(bundles: list[list[str]]) -> tuple[int, int]:
    scalar, vector = set(), set()
    for instruction in (i for bundle in bundles for i in bundle):
        for kind, first, second in _REGISTER.findall(instruction):
            names = {f"{kind}{first}"} | ({f"{kind}{second}"} if second else set())
            (vector if kind in "vq" else scalar).update(names)
    return len(scalar), len(vector)


def analyze(assembly: str, remarks: str) -> dict[str, HexagonLoop]:
    """The innermost loop of each function of Hexagon `assembly` that has one."""
    schedules = successful_schedules(remarks)
    result = {}
    for name, lines in functions(assembly).items():
        loops = innermost_loops(lines, "//")
        if not loops:
            continue
        measured = [(loop, packets(loop)) for loop in loops]
        loop, bundles = max(measured, key=lambda m: sum(len(b) for b in m[1]))
        instructions = sum(1 for b in bundles for i in b if i != "nop")
        scalar, vector = _registers(bundles)
        result[name] = HexagonLoop(
            packets=len(bundles),
            instructions=instructions,
            registers=scalar,
            vector_registers=vector,
            pipelined=len(bundles) in schedules,
            spills=loop.spills,
        )
    return result


def hexagon_loops(module: ir.Module | str) -> dict[str, HexagonLoop]:
    """Compile `module` for Hexagon and read each function's innermost loop."""
    return analyze(*compile_to_assembly(module))
