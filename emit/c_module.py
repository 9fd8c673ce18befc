"""A whole LLVM module as one C file: includes, types, helpers, globals, functions.

What the passes made (loops, if-converted selects, vectors, tile loops) reads back as C99
that any C compiler with GCC's vector extension builds (`cc -std=c99 -Wall -Wextra -Werror`).
Functions keep their names and linkage (an outlined tile body is `static`); a function the
emitter cannot express is left out with the reason (`EmittedC.skipped`), and so is every
function that calls one, never written wrong.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as ins

from ..c_library import STREAMS
from ..polyhedral.hls_buffers import NotPlannable
from .aie_module import AIE_STYLES, aie_module
from .c66x_tiling import TiledKernel, wrapper
from .c_dialect import Helpers, PortableDialect
from .c_dialect_c66x import C66xDialect
from .c_function import FunctionWriter, c_identifier
from .c_types import TypeTable, Unexpressible, float_literal, int_literal
from .emitted_code import EmittedC
from .hls_kernel import HlsKernelWriter, HlsOptions, hls_kernel

_PRELUDE = """\
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>"""

#: the C dialects by name (a Target's `c_dialect`)
DIALECTS = {"c": PortableDialect, "c66x": C66xDialect, "hls": PortableDialect}

_BITS_HELPERS = {
    "pycc_bits_f32": "static inline float pycc_bits_f32(uint32_t b)\n"
    "{\n    float f;\n    memcpy(&f, &b, sizeof f);\n    return f;\n}",
    "pycc_bits_f64": "static inline double pycc_bits_f64(uint64_t b)\n"
    "{\n    double f;\n    memcpy(&f, &b, sizeof f);\n    return f;\n}",
}


#: C library functions generated or user code calls, declared by the prelude's headers (a
#: prototype of our own would conflict with cc's builtin declaration)
_LIBRARY = frozenset(
    "malloc calloc realloc free abort exit atoi atol strtol strtod rand srand qsort memcpy "
    "memmove memset memcmp strlen strcmp strncmp strcpy strncpy strcat strchr printf fprintf "
    "sprintf snprintf puts putchar fputs fputc fwrite fread fopen fclose fflush".split()
)


def emit_c(
    module: ir.Module,
    dialect: str = "c",
    header: str = "",
    tiled: dict[str, TiledKernel | HlsOptions] | None = None,
    functions: dict | None = None,
) -> EmittedC:
    """The C of every function definition of `module` in `dialect` (`c`: portable C99 with
    GCC vectors; `c66x`; `hls`); `header` is a comment put first (what the file was made
    from); `tiled`: the image kernels to run tile by tile (C66x: `c66x_tiling`), or the
    functions to write as FPGA kernels and how (`HlsOptions`); `aie`, `aie-api`: the AI
    Engine kernels of `aie_module` (`functions`: the front end's view of their C signatures)."""
    if dialect in AIE_STYLES:
        return aie_module(module, header, AIE_STYLES[dialect], functions or {})
    types, helpers = TypeTable(), Helpers()
    writer_dialect = DIALECTS[dialect](types, helpers)
    chosen = {
        f.name: tiled[f.name] for f in module.functions if f.blocks and f.name in (tiled or {})
    }
    fpga = {name: value for name, value in chosen.items() if isinstance(value, HlsOptions)}
    tiled = {name: value for name, value in chosen.items() if name not in fpga}
    taken: set[str] = set()
    names: dict[ir.GlobalValue, str] = {}
    for value in module.global_values:
        names[value] = c_identifier(value.name, taken, "g") if _local(value) else value.name
        taken.add(names[value])
    for value in module.functions:
        if value.name in tiled:
            names[value] = c_identifier(f"{value.name}_body", taken, "f")
    definitions = [f for f in module.functions if f.blocks]
    skipped: dict[str, str] = {}
    bodies: dict[str, tuple[str, str]] = {}
    called = {callee for f in definitions for callee in _callees(f)}
    wrappers: dict[str, str] = {}
    written_for_fpga: list[str] = []
    for function in definitions:
        if function.name == "main":  # the program's entry, with its own required prototype
            skipped[function.name] = "main is the program's entry point, not a kernel"
            continue
        storage = "static" if function.name in tiled else _storage(function, called)
        arguments = (function, names[function], names, types, writer_dialect, storage)
        writer = FunctionWriter(*arguments)
        if function.name in fpga:
            try:
                kernel = hls_kernel(function, fpga[function.name])
            except NotPlannable:
                pass  # written as plain C (the target's remark said why)
            else:
                writer = HlsKernelWriter(*arguments, kernel=kernel)
                written_for_fpga.append(function.name)
        try:
            bodies[function.name] = (writer.prototype(), writer.definition())
        except Unexpressible as exc:
            skipped[function.name] = str(exc)
            continue
        if function.name in tiled:
            prototype = writer.prototype(c_name=function.name, storage="")
            wrappers[function.name] = wrapper(
                tiled[function.name], prototype, writer.parameters(), names[function]
            )
    _skip_callers(definitions, skipped)
    variables = []
    for value in module.global_values:
        if value.name in STREAMS and value.initializer is None:
            continue  # <stdio.h> declares it
        if isinstance(value, ir.GlobalVariable) and _used_by(value, definitions, skipped):
            try:
                variables.append(_global(value, names[value], types))
            except Unexpressible as exc:
                for user in _users(value, definitions):
                    skipped.setdefault(user.name, f"global '{value.name}': {exc}")
    _skip_callers(definitions, skipped)
    kept = [f for f in definitions if f.name not in skipped]
    for name in list(bodies):
        if name in skipped:
            del bodies[name]
    text_parts = [header.rstrip()] if header else []
    tiles_header = '\n#include "pycc_tiles.h"' if wrappers else ""
    if written_for_fpga:
        tiles_header += '\n#include "pycc_ship.h"'
    text_parts.append(_PRELUDE + "\n" + writer_dialect.prelude() + tiles_header)
    body_text = "\n".join(b for _, b in bodies.values())
    for name, helper in _BITS_HELPERS.items():
        if name in body_text or name in "\n".join(variables):
            helpers.need(name, lambda helper=helper: helper)
    if types.typedefs:
        text_parts.append("\n".join(types.typedefs))
    if helpers.texts:
        text_parts.append("\n\n".join(helpers.texts.values()))
    if variables:
        text_parts.append("\n".join(variables))
    prototypes = [bodies[f.name][0] + ";" for f in kept]
    declared = _external_prototypes(module, kept, names, types)
    if prototypes or declared:
        if written_for_fpga:  # built as C++ too (Vitis HLS's C simulation): C's names
            prototypes = ["#ifdef __cplusplus", 'extern "C" {', "#endif", *prototypes,
                          "#ifdef __cplusplus", "}", "#endif"]  # fmt: skip
        text_parts.append("\n".join([*declared, *prototypes]))
    text_parts += [bodies[f.name][1] for f in kept]
    text_parts += [wrappers[f.name] for f in kept if f.name in wrappers]
    defined = {
        g.name
        for g in module.global_values
        if isinstance(g, ir.GlobalVariable) and g.initializer is not None
    }
    c_names = {value.name: name for value, name in names.items()}
    c_names.update({name: name for name in wrappers})  # the wrapper has the kernel's name
    return EmittedC(
        "\n\n".join(text_parts) + "\n",
        [f.name for f in kept],
        skipped,
        c_names,
        defined,
        dialect,
        [f.name for f in kept if f.name in wrappers],
        [name for name in written_for_fpga if name not in skipped],
        max((fpga[name].burst for name in written_for_fpga), default=1),
    )


def _storage(function: ir.Function, called: set) -> str:
    """`static` for internal functions; one nothing here calls (a kernel taken out of its
    program) is marked unused, so -Wunused-function does not fail a -Werror build."""
    if not _local(function):
        return ""
    return "static" if function in called else "static __attribute__((unused))"


def _local(value: ir.GlobalValue) -> bool:
    return value.linkage in ("internal", "private")


def _skip_callers(definitions: list[ir.Function], skipped: dict[str, str]) -> None:
    """A function that calls a left-out one is left out too."""
    changed = True
    while changed:
        changed = False
        for function in definitions:
            if function.name in skipped:
                continue
            for callee in _callees(function):
                if callee.name in skipped:
                    skipped[function.name] = f"calls '{callee.name}', which is not emitted"
                    changed = True
                    break


def _callees(function: ir.Function) -> list[ir.Function]:
    return [
        i.callee
        for b in function.blocks
        for i in b.instructions
        if isinstance(i, ins.CallInstr) and isinstance(i.callee, ir.Function)
    ]


def _users(value: ir.GlobalValue, definitions: list[ir.Function]) -> list[ir.Function]:
    return [
        f for f in definitions if any(value in i.operands for b in f.blocks for i in b.instructions)
    ]


def _used_by(value: ir.GlobalValue, definitions, skipped) -> bool:
    return value.linkage not in ("internal", "private") or any(
        f.name not in skipped for f in _users(value, definitions)
    )


def _global(value: ir.GlobalVariable, name: str, types: TypeTable) -> str:
    t = types.name(value.value_type)
    const = "const " if value.global_constant else ""
    if value.initializer is None:  # defined in another file
        return f"extern {const}{t} {name};"
    storage = "static " if _local(value) else ""
    data = value.initializer.constant
    if value.global_constant and isinstance(data, (bytes, bytearray)) and data.endswith(b"\0"):
        # a string literal: `char`, so cc checks a format string passed to printf
        return f"{storage}const char {name}[{len(data)}] = {_string_literal(bytes(data))};"
    return f"{storage}{const}{t} {name} = {_initializer(value.initializer, types)};"


def _string_literal(data: bytes) -> str:
    """`data` (ending in its 0) as a C string literal of the same bytes."""
    text = "".join(
        chr(b) if 32 <= b < 127 and chr(b) not in '"\\?' else f"\\{b:03o}" for b in data[:-1]
    )
    return f'"{text}"'


def _initializer(c: ir.Constant, types: TypeTable) -> str:
    t = c.type
    if c.constant is None or c.constant is ir.Undefined:
        return "{0}" if isinstance(t, (ir.ArrayType, ir.BaseStructType, ir.VectorType)) else "0"
    if isinstance(t, ir.IntType):
        return int_literal(int(c.constant), t.width)
    if isinstance(t, (ir.FloatType, ir.DoubleType)):
        return float_literal(float(c.constant), t)
    if isinstance(t, ir.ArrayType) and isinstance(c.constant, (bytes, bytearray)):
        return "{" + ", ".join(str(b) for b in c.constant) + "}"
    if isinstance(t, (ir.ArrayType, ir.BaseStructType)) and isinstance(c.constant, list):
        return "{" + ", ".join(_initializer(e, types) for e in c.constant) + "}"
    raise Unexpressible(f"initializer '{c}'")


def _external_prototypes(module, kept, names, types) -> list[str]:
    """Prototypes of the functions called but not defined here (not C library ones)."""
    from ..ir_passes.core.libm import LIBM_FUNCTIONS

    out = []
    called = {c for f in kept for c in _callees(f)}
    for function in module.functions:
        if function.blocks or function not in called:
            continue
        if function.name.startswith("llvm.") or function.name in _LIBRARY | LIBM_FUNCTIONS:
            continue
        fn_type = function.function_type
        named = [types.name(a) for a in fn_type.args]
        params = ", ".join([*named, "..."] if fn_type.var_arg else named) or "void"
        out.append(f"{types.name(fn_type.return_type)} {names[function]}({params});")
    return out
