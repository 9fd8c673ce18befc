"""A resource model of the TI C66x software-pipelined loop, the `c66x` feedback of `tune`.

There is no C66x back end in LLVM, so the II the TI assembler reported in the dissertation is
estimated from the IR (reference §3, §6.2, test idea T6). What is counted is what the C66x
would execute: the IR after LLVM's -O2 pipeline (LLVM's unroller and vectorizers off, so the
strategy under test stays the only unrolling and vectorization). -O2 folds the front end's
per-access address arithmetic into one induction variable and constant-offset
`getelementptr`s, which the C66x covers with its addressing modes (`*+A4[k]`, `*A4++`).

The innermost loop is the single-block loop (a block branching to itself) with the most
instructions; loops whose body keeps several blocks after -O2 are not modelled.

Units and what they execute per cycle (one calibration for every kernel, against the
baseline IIs of Table 5.1; nothing is tuned per kernel):

- .D x2: loads and stores, one per unit and cycle; a 64-bit access (`<2 x float>`, LDDW/
  LDNDW/STDW/STNDW) counts 1, wider ones one per 8 bytes. A non-aligned 64-bit access
  (LDNDW/STNDW: IR alignment below 8) issues at most once per cycle [assumed]: this is what
  reproduces Table 5.1's MatrixAdd "Unroll 2x + SIMD" II of 1.5 (3 non-aligned accesses per
  2 iterations) and the ~30 % gain the dissertation's Fig. 5.10 reports once alignment is
  proven (3 aligned accesses on 2 units: II 1.0).
- .M x2: multiplies. A `<2 x float>` multiply is one DMPYSP; the TI compiler pairs
  independent scalar float multiplies the same way, so a scalar one costs half a slot (this
  is what makes Lucas-Kanade's 57 multiplies fit its .D-bound II of 15); a double multiply
  costs a whole slot; an integer multiply one slot. A float division is a reciprocal
  (RCPSP on .S, two Newton-Raphson steps: 4 multiplies, 2 subtractions), shared by the
  divisions by the same divisor, and one multiply per division.
- .L/.S x4: floating-point add/sub/negate, comparisons, conversions, selects, shuffles,
  integer arithmetic, and the loop branch (BDEC; the induction variable update and exit test
  it replaces are not counted).

II = max(ResMII, RecMII) cycles per loop trip, ResMII = max(ceil(.D/2), non-aligned
64-bit accesses, ceil(.M/2), ceil(.L.S/4)), RecMII the longest loop-carried chain through a
non-induction phi (reductions; memory dependences are assumed absent, as the dissertation's
.D-bound IIs imply).
Registers: MaxLive of the modulo schedule, estimated by the average number of live values,
sum of lifetimes / II (64-bit values take a pair; lifetimes from the write to the last use in
a schedule that issues each value as late as its users allow, with the latencies below), plus
one pointer per base of the memory accesses, the loop counter, and invariants (FP constants,
scalars). The loop is
software-pipelined only if it has no calls, at most 250 instructions and at most 64
registers (the TI compiler's limits, reference §3.1); otherwise its II is the length of one
iteration's schedule. Latencies (cycles to a usable result, C674x/C66x delay slots + 1,
assumed): load 5, single-precision arithmetic and conversions 4, double add 7, double
multiply 10, integer 1.

Known deviation: Harris Corner's baseline II is 27 in Table 5.1 and 10 here (.D-bound); the
paper's number is not explained by resources (its one double multiply, presumably).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import llvmlite.binding as llvm
from llvmlite import ir

from .host_jit import host_target_machine, optimize
from .ir_loops import largest_self_loop, value_key

D_UNITS, M_UNITS, LS_UNITS = 2, 2, 4
REGISTER_LIMIT = 64
INSTRUCTION_LIMIT = 250

_LATENCY = {"load": 5, "float": 4, "double_add": 7, "double_mul": 10, "int": 1}
_FLOAT_ARITH = {"fadd", "fsub", "fneg", "fcmp"}
_CONVERSIONS = {"fpext", "fptrunc", "sitofp", "uitofp", "fptosi", "fptoui"}
_INT_ARITH = {"add", "sub", "and", "or", "xor", "shl", "lshr", "ashr", "icmp", "select"}
_TRAFFIC = {"extractelement", "insertelement", "shufflevector"}
_FREE = {"getelementptr", "phi", "bitcast", "sext", "zext", "trunc", "freeze", "br"}


@dataclass(frozen=True)
class C66xLoop:
    """The model's view of one function's innermost loop (cycles are per loop trip)."""

    d_ops: float
    m_ops: float
    ls_ops: float
    res_mii: int
    rec_mii: int
    schedule_length: int
    instructions: int
    registers: int
    has_call: bool

    @property
    def pipelined(self) -> bool:
        return (
            not self.has_call
            and self.instructions <= INSTRUCTION_LIMIT
            and self.registers <= REGISTER_LIMIT
        )

    @property
    def cycles(self) -> int:
        """II of the pipelined loop, or the length of an iteration when SWP fails."""
        if self.pipelined:
            return max(self.res_mii, self.rec_mii)
        return max(self.schedule_length, self.res_mii)


def _type(value: llvm.ValueRef) -> tuple[str, int]:
    """(element kind 'float'/'double'/'int'/'ptr'/'other', lanes)."""
    text = str(value.type).strip()
    lanes = 1
    if text.startswith("<"):
        count, _, text = text.strip("<>").partition(" x ")
        lanes = int(count)
    kind = text if text in ("float", "double", "ptr") else "int" if text[:1] == "i" else "other"
    return kind, lanes


def _bytes(kind: str, lanes: int) -> int:
    return {"float": 4, "double": 8, "ptr": 4}.get(kind, 4) * lanes


def _registers_of(value: llvm.ValueRef) -> int:
    kind, lanes = _type(value)
    return max(1, math.ceil(_bytes(kind, lanes) / 4))


def _optimized(module: ir.Module | str) -> llvm.ModuleRef:
    parsed = llvm.parse_assembly(str(module))
    optimize(parsed, 2, host_target_machine(2), loop_transforms=False)
    return parsed


def _loop_control(instructions: list, users: dict[int, list]) -> set[int]:
    """The exit test and induction update the C66x's BDEC replaces."""
    by_key = {value_key(i): i for i in instructions}
    operands = list(instructions[-1].operands)
    if len(operands) != 3:  # br i1 %cond, label %false, label %true
        return set()
    control: set[int] = set()
    work = [value_key(operands[0])]
    while work:
        key = work.pop()
        value = by_key.get(key)
        if value is None or key in control or value.opcode not in ("icmp", "add", "sub"):
            continue
        if all(value_key(u) in control or u.opcode in ("phi", "br") for u in users[key]):
            control.add(key)
            work.extend(value_key(o) for o in value.operands)
    return control


def _addressing(instructions: list, users: dict[int, list]) -> set[int]:
    """Integer arithmetic used only by getelementptrs: the C66x's addressing modes."""
    result: set[int] = set()
    for instruction in reversed(instructions):
        key = value_key(instruction)
        if instruction.opcode in ("add", "sub", "shl", "mul") and users[key]:
            if all(u.opcode == "getelementptr" or value_key(u) in result for u in users[key]):
                result.add(key)
    return result


def model_loop(block: llvm.ValueRef) -> C66xLoop:
    """The C66x resource model of one single-block loop (see the module docstring)."""
    instructions = list(block.instructions)
    inside = {value_key(i) for i in instructions}
    users: dict[int, list] = {k: [] for k in inside}
    for instruction in instructions:
        for operand in instruction.operands:
            if value_key(operand) in users:
                users[value_key(operand)].append(instruction)
    control = _loop_control(instructions, users) | _addressing(instructions, users)
    d = m = ls = 0.0
    count = nonaligned = 0
    has_call = False
    divisors: set[int] = set()
    latency: dict[int, int] = {}
    for instruction in instructions:
        op = instruction.opcode
        key = value_key(instruction)
        kind, lanes = _type(instruction)
        wide = math.ceil(_bytes(kind, lanes) / 8)
        latency[key] = _LATENCY["int"]
        if key in control:
            continue
        if op in ("load", "store"):
            value = instruction if op == "load" else list(instruction.operands)[0]
            size = _bytes(*_type(value))
            d += math.ceil(size / 8)
            count += 1
            alignment = re.search(r", align (\d+)", str(instruction))
            if size > 4 and (alignment is None or int(alignment.group(1)) < 8):
                nonaligned += math.ceil(size / 8)
            latency[key] = _LATENCY["load"]
        elif op in ("fmul", "fdiv"):
            m += lanes if kind == "double" else lanes / 2
            count += 1
            latency[key] = _LATENCY["double_mul" if kind == "double" else "float"]
            if op == "fdiv":
                divisor = value_key(list(instruction.operands)[1])
                if divisor not in divisors:  # RCPSP, then 2 x (2 multiplies, 1 subtraction)
                    divisors.add(divisor)
                    multiplies = 4 * (lanes if kind == "double" else lanes / 2)
                    m, ls, count = m + multiplies, ls + 3 * wide, count + 7
        elif op == "mul":
            m += wide
            count += 1
        elif op in _FLOAT_ARITH or op in _CONVERSIONS:
            ls += wide if kind != "double" else lanes
            count += 1
            double_add = kind == "double" and op in _FLOAT_ARITH
            latency[key] = _LATENCY["double_add" if double_add else "float"]
        elif op in _INT_ARITH or op in _TRAFFIC:
            ls += wide
            count += 1
        elif op == "call":
            callee = list(instruction.operands)[-1].name
            if not callee.startswith("llvm."):
                has_call = True
            ls, count = ls + wide, count + 1
            latency[key] = _LATENCY["float"]
        elif op == "br":
            ls, count = ls + 1, count + 1
        elif op not in _FREE:
            ls, count = ls + wide, count + 1
    d_cycles = max(math.ceil(d / D_UNITS), nonaligned)
    res_mii = max(d_cycles, math.ceil(m / M_UNITS), math.ceil(ls / LS_UNITS), 1)
    start = _alap(instructions, users, _asap(instructions, inside, latency), latency)
    rec_mii = 0
    for phi in (i for i in instructions if i.opcode == "phi" and _type(i)[0] != "int"):
        for value in phi.operands:
            if value_key(value) in inside and value_key(value) not in control:
                rec_mii = max(rec_mii, start[value_key(value)] + latency[value_key(value)])
    length = max((start[k] + latency[k] for k in start), default=1)
    ii = max(res_mii, rec_mii)
    registers = _max_live(instructions, users, start, latency, ii, control)
    return C66xLoop(d, m, ls, res_mii, rec_mii, length, count, registers, has_call)


def _asap(instructions: list, inside: set[int], latency: dict[int, int]) -> dict[int, int]:
    start: dict[int, int] = {}
    for instruction in instructions:
        key = value_key(instruction)
        if instruction.opcode == "phi":
            start[key] = 0
            continue
        ready = [
            start[value_key(o)] + latency[value_key(o)]
            for o in instruction.operands
            if value_key(o) in inside and value_key(o) in start
        ]
        start[key] = max(ready, default=0)
    return start


def _alap(instructions: list, users: dict, asap: dict[int, int], latency: dict) -> dict[int, int]:
    """Each value as late as its users allow (never earlier than ASAP): a modulo scheduler
    issues a load just before its use, so its register is not held for the whole chain."""
    start = dict(asap)
    for instruction in reversed(instructions):
        key = value_key(instruction)
        later = [start[value_key(u)] for u in users[key] if u.opcode != "phi"]
        if later and instruction.opcode != "phi":
            start[key] = max(asap[key], min(later) - latency[key])
    return start


def _max_live(instructions, users, start, latency, ii, free: set[int]) -> int:
    """Registers of the modulo-scheduled loop: the computed values' average live count
    (sum of lifetimes / II, which a modulo schedule's MaxLive closely attains), one pointer
    per distinct base of the memory accesses (offsets are addressing modes), the loop
    counter, and the invariant operands (FP constants, scalars)."""
    by_key = {value_key(i): i for i in instructions}
    lifetimes = 0
    streams: set[int] = set()
    invariants: dict[int, int] = {}
    for instruction in instructions:
        key = value_key(instruction)
        opcode = instruction.opcode
        if opcode in ("load", "store"):
            pointer = list(instruction.operands)[-1 if opcode == "load" else 1]
            while (address := by_key.get(value_key(pointer))) is not None:
                if address.opcode != "getelementptr":
                    break
                pointer = list(address.operands)[0]
            streams.add(value_key(pointer))
        if key in free or opcode in _FREE or str(instruction.type) == "void":
            continue
        ends = [ii if u.opcode == "phi" else start[value_key(u)] for u in users[key]]
        written = start[key] + latency[key]
        lifetime = max([1, *(e - written + 1 for e in ends)])
        lifetimes += _registers_of(instruction) * lifetime
        for operand in instruction.operands:
            kind, _ = _type(operand)
            if value_key(operand) in by_key or kind in ("ptr", "other") or operand.is_global:
                continue
            if operand.is_constant and kind not in ("float", "double"):
                continue  # integer immediates are encoded in the instruction
            invariants[value_key(operand)] = _registers_of(operand)
    counter = 1
    return math.ceil(lifetimes / ii) + counter + len(streams) + sum(invariants.values())


def c66x_loops(module: ir.Module | str) -> dict[str, C66xLoop]:
    """The model of each function's innermost single-block loop, after -O2."""
    optimized = _optimized(module)
    result = {}
    for function in optimized.functions:
        if function.is_declaration:
            continue
        block = largest_self_loop(function)
        if block is not None:
            result[function.name] = model_loop(block)
    return result
