"""Test tooling, never imported by pycc_stencil: `scripts/mutation_check.py` copies this file as
`sitecustomize.py` into a temporary directory on PYTHONPATH, so that the pytest process and every
Python process it starts (xdist workers, compiler-mode `pycc-stencil` builds) apply the mutation
named by the environment variable MUTATION_CHECK to pycc_stencil as its modules are imported.
Without MUTATION_CHECK it does nothing. (The variable is not a PYCC_* one: test helpers drop
those from the environment of the compilers they start.)

Mutations (see mutation_check.py):
  noop:PASS               the registry entry of PASS returns the module unchanged, no remarks
  broken:last-iteration   generated polyhedral code: the first loop of every nest stops one
                          iteration early (the last wavefront or row of tiles never runs)
  broken:large-inverted   the `-large` passes' run-time size check is inverted
  broken:trap-tiled       the generated (tiled) branch traps instead of running
"""

from __future__ import annotations

import dataclasses
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

VARIABLE = "MUTATION_CHECK"


def _after_import(name: str, patch) -> None:
    """Call `patch(module)` right after module `name` is executed, before anyone imports from it."""

    class Loader(importlib.abc.Loader):
        def __init__(self, loader):
            self.loader = loader

        def create_module(self, spec):
            return self.loader.create_module(spec)

        def exec_module(self, module):
            self.loader.exec_module(module)
            patch(module)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname != name:
                return None
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None and spec.loader is not None:
                spec.loader = Loader(spec.loader)
            return spec

    sys.meta_path.insert(0, Finder())


def declined(module, *args):
    """A pass that does nothing and says nothing."""
    return module


def _noop(passes: list[str]):
    def patch(pipeline):
        from pycc_stencil.ir_passes import registry

        load = pipeline.load_passes

        def load_passes() -> None:
            load()
            for name in passes:
                spec = registry.REGISTRY[name]
                if spec.function is not declined:
                    registry.REGISTRY[name] = dataclasses.replace(spec, function=declined)

        pipeline.load_passes = load_passes

    _after_import("pycc_stencil.ir_passes.pipeline", patch)


def _last_iteration(codegen) -> None:
    generate, counted_loop = codegen.generate, codegen._Generator.counted_loop
    armed = [False]

    def mutated_generate(*args, **kwargs):
        armed[0] = True  # the first loop this call emits is the outermost one
        try:
            return generate(*args, **kwargs)
        finally:
            armed[0] = False

    def mutated_counted_loop(self, name, init, condition, step, body, offset=None):
        if not armed[0]:
            return counted_loop(self, name, init, condition, step, body, offset)
        armed[0] = False

        def shortened(counter):  # is the next iteration in range? (skips the last one)
            return condition(self.builder.add(counter, step))

        return counted_loop(self, name, init, shortened, step, body, offset)

    codegen.generate = mutated_generate
    codegen._Generator.counted_loop = mutated_counted_loop


def _large_inverted(codegen) -> None:
    entry_condition = codegen._Generator.entry_condition

    def mutated(self, b, build, min_bytes):
        if not min_bytes:
            return entry_condition(self, b, build, min_bytes)
        compare = b.icmp_signed

        def inverted(op, lhs, rhs, *args, **kwargs):
            if op == ">=" and getattr(rhs, "constant", None) == min_bytes:
                op = "<"
            return compare(op, lhs, rhs, *args, **kwargs)

        b.icmp_signed = inverted
        try:
            return entry_condition(self, b, build, min_bytes)
        finally:
            del b.icmp_signed

    codegen._Generator.entry_condition = mutated


def _trap_tiled(codegen) -> None:
    from llvmlite import ir

    entry_condition = codegen._Generator.entry_condition

    def mutated(self, b, build, min_bytes):
        condition = entry_condition(self, b, build, min_bytes)
        function = b.function
        trap = function.append_basic_block("mutation.trap")
        rest = function.append_basic_block("mutation.rest")
        b.cbranch(condition, trap, rest)
        b.position_at_end(trap)
        module = function.module
        intrinsic = module.globals.get("llvm.trap") or ir.Function(
            module, ir.FunctionType(ir.VoidType(), []), "llvm.trap"
        )
        b.call(intrinsic, [])
        b.unreachable()
        b.position_at_end(rest)
        return ir.Constant(ir.IntType(1), 0)  # the generated code is never entered

    codegen._Generator.entry_condition = mutated


BROKEN = {
    "last-iteration": _last_iteration,
    "large-inverted": _large_inverted,
    "trap-tiled": _trap_tiled,
}


def install(mutation: str) -> None:
    kind, _, what = mutation.partition(":")
    if kind == "noop":
        _noop(what.split("+"))
    elif kind == "broken":
        _after_import("pycc_stencil.polyhedral.codegen", BROKEN[what])
    else:
        raise ValueError(f"{VARIABLE}={mutation!r}: expected noop:PASS or broken:NAME")


def _chain() -> None:
    """Run the sitecustomize this file shadows, if there is one."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


if os.environ.get(VARIABLE):
    install(os.environ[VARIABLE])
if __name__ == "sitecustomize":
    _chain()
