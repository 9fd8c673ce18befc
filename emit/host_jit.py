"""Compile LLVM IR for the host CPU and run it in this process with MCJIT.

The harness needs the same code the drop-in compiler would produce for this machine, so the
target machine is built from the host CPU name and features at run time. MCJIT takes
ownership of the target machine it is given (reusing it after the engine is freed crashes),
so every engine and every optimization run gets a fresh one.

Floating-point semantics stay C's: no fast-math flags are added, and LLVM's default
contraction mode only fuses operations the IR marks `contract` (the front end never does),
so the code matches `cc -ffp-contract=off`.
"""

from __future__ import annotations

import ctypes.util
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

import llvmlite.binding as llvm
from llvmlite import ir

from ..polyhedral.parallel import PARALLEL_FOR
from .vector_width import with_preferred_width

_initialized = False
#: Engines whose code hosts the parallel runtime's worker threads: those threads outlive the
#: call that started them (they wait for the next one), so their code must never be freed.
_PINNED: list[llvm.ExecutionEngine] = []


class IRVerificationError(RuntimeError):
    """LLVM rejected the IR (a compiler bug, never the user's input)."""


def initialize() -> None:
    """Initialize the native target once and make libm's symbols visible to JIT code."""
    global _initialized
    if _initialized:
        return
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    libm = ctypes.util.find_library("m")
    if libm:
        llvm.load_library_permanently(libm)
    _initialized = True


def host_target_machine(opt_level: int = 3) -> llvm.TargetMachine:
    """A new target machine for the host CPU with all of its features (and the vector width
    `emit.vector_width` chooses)."""
    initialize()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=with_preferred_width((), llvm.get_host_cpu_features().flatten()),
        opt=opt_level,
        jit=True,
    )


def parse_verified(module: ir.Module | str) -> llvm.ModuleRef:
    """Parse IR text (or a llvmlite.ir module) and run LLVM's verifier on it."""
    initialize()
    try:
        parsed = llvm.parse_assembly(str(module))
        parsed.verify()
    except RuntimeError as exc:
        raise IRVerificationError(f"LLVM rejected the IR: {exc}") from exc
    return parsed


def optimize(
    module: llvm.ModuleRef,
    opt_level: int = 3,
    target_machine: llvm.TargetMachine | None = None,
    size_level: int = 0,
    *,
    loop_transforms: bool = True,
    loop_vectorize: bool | None = None,
    slp_vectorize: bool | None = None,
) -> None:
    """Run LLVM's standard new-pass-manager pipeline for `-O<opt_level>` on `module`.

    The target machine defaults to the host's; the drop-in compiler passes the one its
    command line asks for, so vectorization uses exactly the ISA `cc` would use. Without
    `loop_transforms` LLVM's unroller and vectorizers are off (`tune` measures its own
    strategies, which must stay the only unrolling and vectorization).
    `loop_vectorize`/`slp_vectorize` turn LLVM's loop and SLP vectorizers on or off (gcc's
    `-f[no-]tree-{loop,slp}-vectorize`, e.g. to measure pycc-stencil's own SIMD binding
    alone); None keeps llvmlite's default for the level (loop vectorizer on, SLP off).
    """
    if opt_level not in (0, 1, 2, 3):
        raise ValueError(f"optimization level must be 0..3, not {opt_level}")
    target_machine = target_machine or host_target_machine(opt_level)
    module.triple = target_machine.triple
    module.data_layout = str(target_machine.target_data)
    tuning = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    if size_level or not loop_transforms:  # -Os/-Oz: -O2 without unrolling
        tuning.loop_unrolling = False
    if loop_vectorize is not None:
        tuning.loop_vectorization = loop_vectorize
    if slp_vectorize is not None:
        tuning.slp_vectorization = slp_vectorize
    if not loop_transforms:  # after the explicit switches: tune's measurements
        tuning.loop_vectorization = tuning.slp_vectorization = False
    builder = llvm.create_pass_builder(target_machine, tuning)
    builder.getModulePassManager().run(module, builder)


def _check_external_symbols(module: llvm.ModuleRef, symbols: dict[str, int]) -> None:
    """Refuse unresolvable external calls and globals up front: MCJIT would abort the whole
    process. A global variable must be one of `symbols` (the caller's storage for it), never
    whatever the process happens to define under that name."""
    for function in module.functions:
        name = function.name
        if function.is_declaration and not name.startswith("llvm."):
            if llvm.address_of_symbol(name) is None:
                raise IRVerificationError(f"external function {name!r} is not in libc or libm")
    for variable in module.global_variables:
        if variable.is_declaration and variable.name not in symbols:
            raise IRVerificationError(f"global variable {variable.name!r} has no storage here")


def _bind_globals(module: llvm.ModuleRef, symbols: dict[str, int]) -> None:
    """Resolve the module's global declarations to `symbols`. The symbol table MCJIT looks
    names up in is the process's, for every later compile too: each declaration is renamed
    to a name of its own first, so a C global named like a library function (`y0`, `gamma`)
    never redirects another module's call, nor another compile's globals."""
    for variable in module.global_variables:
        if variable.is_declaration:
            unique = f"__pycc_global.{next(_BINDINGS)}.{variable.name}"
            llvm.add_symbol(unique, symbols[variable.name])
            variable.name = unique


#: numbers the bindings of `_bind_globals`
_BINDINGS = itertools.count()


@dataclass
class JitModule:
    """Machine code of one module; addresses stay valid while this object is alive."""

    engine: llvm.ExecutionEngine
    exported: frozenset[str]
    _globals: frozenset[str] = field(default_factory=frozenset)

    def function_address(self, name: str) -> int:
        if name not in self.exported:
            raise KeyError(f"function {name!r} was not compiled for export")
        return self.engine.get_function_address(name)

    def global_address(self, name: str) -> int:
        if name not in self._globals:
            raise KeyError(f"no global variable {name!r} in the compiled module")
        return self.engine.get_global_value_address(name)


def compile_module(
    module: ir.Module | str,
    export: Iterable[str],
    opt_level: int = 3,
    symbols: dict[str, int] | None = None,
    codegen_level: int | None = None,
) -> JitModule:
    """Verify, optimize and JIT-compile `module`, keeping the functions in `export` callable;
    `symbols` gives the address of each global variable the module declares (C globals:
    runtime/globals.py), bound at this compile.

    `codegen_level` is the instruction selector's level (default: `opt_level`). A run that only
    proves what the IR computes asks for 0: the IR is still optimized at `opt_level`, and the
    machine code computes the same values (no fast-math, contraction only as explicit `fma`
    calls) without Loop Strength Reduction, which takes most of a tiled kernel's codegen time.

    `static` C functions have internal linkage and O3 would inline and delete them; they are
    made external here (on the parsed copy, so the caller's module is untouched).
    """
    parsed = parse_verified(module)
    exported = frozenset(export)
    for name in exported:
        parsed.get_function(name).linkage = "external"
    symbols = symbols or {}
    _check_external_symbols(parsed, symbols)
    _bind_globals(parsed, symbols)
    optimize(parsed, opt_level)
    global_names = frozenset(g.name for g in parsed.global_variables)
    level = opt_level if codegen_level is None else codegen_level
    engine = llvm.create_mcjit_compiler(parsed, host_target_machine(level))
    engine.finalize_object()
    if any(function.name == PARALLEL_FOR for function in parsed.functions):
        _PINNED.append(engine)
    return JitModule(engine, exported, global_names)
