"""`align`: prove the alignment of every load and store and record it for the back ends.

For each access (scalar or vector, whatever its type) the pass proves the largest power of two
dividing its address (`alignment.prove_alignment`: declarations, constant coefficients,
induction variables), raises the instruction's `align` to it (never lowers it) and marks the
access `!pycc.aligned !{i1 aligned}`, aligned meaning the final `align` is at least the access
size: the C66x dialect of the C emitter (`emit/c_dialect_c66x.py`) writes `_amem8` for a
64-bit access whose `align` is 8 and `_mem8` otherwise.

Remarks: per loop, `-Rpass=align` "3 of 4 accesses aligned to 8 bytes"; per access that is not
aligned, `-Rpass-missed=align` with the limiting fact (no declaration, odd start, ...).
"""

from __future__ import annotations

from llvmlite import ir

from .core.affine import Access, accesses
from .core.alignment import Proof, mark_access, prove_alignment, row_alignment
from .core.analyses import ALL, loops_of
from .core.loops import Loop
from .registry import PassContext, register


@register("align", preserves=ALL)
def align(module: ir.Module, *, context: PassContext) -> ir.Module:
    """Set `align` and `!pycc.aligned` on every load and store, with remarks."""
    for function in module.functions:
        if function.blocks:
            _align_function(function, context)
    return module


def _align_function(function: ir.Function, context: PassContext) -> None:
    loops = loops_of(function)
    rows = row_alignment(function)
    by_loop: dict[Loop, list[tuple[Access, int, int]]] = {}
    undeclared: dict[Loop, set[str]] = {}
    for access in accesses(function):
        instruction = access.instruction
        loop = loops.loop_for(instruction.parent)
        proof = prove_alignment(access, loop, rows)
        before = instruction.align or 1
        final = max(before, proof.alignment)
        aligned = final >= access.size
        mark_access(instruction, final, aligned)
        if not aligned:
            context.missed(_missed_message(access, final, proof), at=instruction)
        if loop is not None:
            by_loop.setdefault(loop, []).append((access, before, final))
            if proof.alignment == 1:
                undeclared.setdefault(loop, set()).add(access.address.base.name or "?")
    for loop, found in by_loop.items():
        context.passed(_loop_message(found), at=loop.header)
        if not any(final > before for _, before, final in found) and loop in undeclared:
            names = ", ".join(f"'{n}'" for n in sorted(undeclared[loop]))
            context.missed(
                "no access proven more aligned than its element: no alignment declared for "
                f"{names} (#pragma pycc row_align(N), --row-align N, aligned(N), "
                "__builtin_assume_aligned)",
                at=loop.header,
            )


def _missed_message(access: Access, alignment: int, proof: Proof) -> str:
    kind = "store" if access.is_store else "load"
    return (
        f"{kind} of {access.size} bytes not proven aligned (only {alignment}-byte): {proof.reason}"
    )


def _loop_message(found: list[tuple[Access, int, int]]) -> str:
    """`3 of 4 accesses aligned to 8 bytes`, and how many `align` values were raised."""
    sizes = sorted({a.size for a, _, _ in found})
    aligned = sum(final >= a.size for a, _, final in found)
    size_text = f"{sizes[0]} bytes" if len(sizes) == 1 else "their size"
    message = f"{aligned} of {len(found)} accesses aligned to {size_text}"
    raised = [final for _, before, final in found if final > before]
    if raised:
        counts = {value: raised.count(value) for value in sorted(set(raised))}
        text = ", ".join(f"{value} on {count}" for value, count in counts.items())
        message += f"; align raised to {text}"
    return message
