"""A module's functions as AI Engine kernels (`--target aie`): each convolution nest
(`aie_convolution`, after `unroll-reductions`) written by `aie_kernel`, every other function
left out with the construct that stops it. The file is C++ for the AIE compiler, and for the
host against runtime/aie/pycc_aie.h."""

from __future__ import annotations

from llvmlite import ir

from ..frontend import c_types as ct
from .aie_convolution import NotAConvolution, convolution
from .aie_glue import ports
from .aie_layout import host_wrapper
from .aie_schedule import kernel_plan
from .aie_styles import STYLES
from .emitted_code import EmittedC

#: the C dialect of each style (`--target aie:style=api`)
AIE_STYLES = {"aie": STYLES["intrinsics"], "aie-api": STYLES["api"]}
#: the C++ type of a kernel parameter, by its IR type (pointers keep their address only)
_PARAMETERS = {"i32": "int32_t", "i64": "int64_t", "float": "float", "double": "double"}


def aie_module(
    module: ir.Module,
    header: str = "",
    style=STYLES["intrinsics"],
    functions: dict | None = None,
) -> EmittedC:
    """The AIE kernels of `module`'s functions in `style`, and the reasons of the others
    (`functions`: the front end's FunctionInfo of each, for what the IR does not say)."""
    dialect = next(d for d, s in AIE_STYLES.items() if s is style)
    emitted = EmittedC("", dialect=dialect)
    kernels = []
    for function in module.functions:
        if not function.blocks:
            continue
        try:
            _signed((functions or {}).get(function.name))
            signature = [(_parameter(a), a.name) for a in function.args]
            plan = kernel_plan(convolution(function))
            kernels.append(plan.write(signature, style))
            if plan.conv.layouts:
                kernels.append(
                    host_wrapper(plan.conv, plan.kernel_name, signature, plan.buffer_elements())
                )
        except NotAConvolution as exc:
            emitted.skipped[function.name] = f"not an AI Engine kernel: {exc}"
            continue
        try:
            emitted.aie_ports[function.name] = ports(plan, [a.name for a in function.args])
        except NotAConvolution as exc:
            emitted.aie_ports[function.name] = f"no graph glue: {exc}"
        emitted.functions.append(function.name)
        emitted.c_names[function.name] = function.name
    lines = [header] if header else []
    lines += ["#include <cstdint>", f'#include "{style.header}"', ""]
    emitted.text = "\n".join(lines) + "\n".join(kernels)
    return emitted


def _signed(info) -> None:
    """NotAConvolution for arrays of unsigned integers: the AI Engine's `srs` saturates as
    signed, where C's unsigned arithmetic wraps (the IR's i32 does not tell them apart)."""
    for param in info.params if info is not None else ():
        element = param.ctype
        while isinstance(element, (ct.ArrayType, ct.PointerType)):
            element = element.element if isinstance(element, ct.ArrayType) else element.pointee
        if isinstance(element, ct.IntType) and not element.signed:
            raise NotAConvolution(
                f"'{param.name}' holds unsigned integers (the AI Engine saturates as signed "
                "where C's unsigned arithmetic wraps)"
            )


def _parameter(argument: ir.Argument) -> str:
    if isinstance(argument.type, ir.PointerType):
        return "void *__restrict"
    name = "float" if isinstance(argument.type, ir.FloatType) else str(argument.type)
    if name not in _PARAMETERS:
        raise NotAConvolution(f"a parameter of type {argument.type}")
    return _PARAMETERS[name]
