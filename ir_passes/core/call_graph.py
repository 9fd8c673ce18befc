"""Which functions of a module a function may run: its calls and the functions it passes as
pointers (parallel loop bodies, thread entries), followed through the module."""

from __future__ import annotations

from llvmlite import ir


def reachable_functions(
    module: ir.Module, roots: set[str], internal_only: bool = False
) -> set[str]:
    """Functions called or passed as pointers (parallel loop bodies, thread entries), directly
    or not, from `roots`; with `internal_only`, only through functions of internal linkage
    (`static` ones, parallel bodies) besides the roots."""
    seen, work = set(), list(roots)
    while work:
        name = work.pop()
        if name in seen:
            continue
        function = module.globals.get(name)
        if internal_only and name not in roots and getattr(function, "linkage", "") == "":
            continue  # external linkage: the program can call it by its name
        seen.add(name)
        if not isinstance(function, ir.Function):
            continue
        for block in function.blocks:
            for instruction in block.instructions:
                work.extend(o.name for o in instruction.operands if isinstance(o, ir.Function))
    return seen
