"""What a check runs of a file: not the functions that call, directly or not, a function
another object defines (a helper of another file) that the checking process does not have.
The C library's and libm's are there; the others would abort the JIT's link of the whole
file, so such a function is skipped, naming the call, and the rest of the file is checked.
The C library's streams (`stderr`) are the process's own, not globals a check seeds."""

from __future__ import annotations

from dataclasses import replace

from ..c_library import STREAMS
from ..emit.host_jit import initialize
from ..frontend.signature import LoweredModule, SkippedFunction
from ..ir_passes.core.call_graph import reachable_functions


def without_unresolved_calls(lowered: LoweredModule) -> LoweredModule:
    """`lowered` without the functions that reach a call the process cannot resolve."""
    import llvmlite.binding as llvm

    initialize()
    lowered = _without_streams(lowered)
    module = lowered.module
    missing = {
        f.name
        for f in module.functions
        if not f.blocks
        and not f.name.startswith("llvm.")
        and llvm.address_of_symbol(f.name) is None
    }
    if not missing:
        return lowered
    functions, skipped = dict(lowered.functions), list(lowered.skipped)
    for name, info in lowered.functions.items():
        callee = sorted(reachable_functions(module, {name}) & missing)
        if callee:
            reason = (
                f"calls '{callee[0]}', which another object defines: a check runs the file "
                "alone (compiler mode links it)"
            )
            skipped.append(SkippedFunction(name, info.location, reason, definition=info.location))
            del functions[name]
    kept = reachable_functions(module, set(functions))
    for function in list(module.functions):
        if function.name not in kept:  # (what only the skipped functions call, too)
            del module.globals[function.name]
    return replace(lowered, functions=functions, skipped=skipped)


def _without_streams(lowered: LoweredModule) -> LoweredModule:
    """`lowered` with the C library's streams no longer among the file's globals."""
    if not STREAMS & lowered.globals.keys():
        return lowered
    functions = {
        name: replace(info, globals=tuple(g for g in info.globals if g not in STREAMS))
        for name, info in lowered.functions.items()
    }
    variables = {k: v for k, v in lowered.globals.items() if k not in STREAMS}
    return replace(lowered, functions=functions, globals=variables)
