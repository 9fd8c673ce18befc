"""The C-simulation testbench of an FPGA kernel bundle (`emit --target hls -o DIR`): the
kernel and the original C run on the same pseudo-random inputs, every array compared byte
for byte, as a Vitis HLS user's `csim_design -tb` would; built with the sanitizers by the
bundle's Makefile. It can be written only for a kernel whose arrays have constant sizes and
whose scalars are floating point (a size or a count would have to be made up)."""

from __future__ import annotations

from ..frontend import c_types as ct
from ..frontend.signature import FunctionInfo

_TEMPLATE = """\
/* tb_{stem}.c: by pycc-stencil emit --target hls: runs {name} (the FPGA kernel) and
 * {name}_original (the original C, {source}) on the same inputs and compares every array. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {{
#endif
void {name}({parameters});
void {name}_original({parameters});
#ifdef __cplusplus
}}
#endif

static unsigned long pycc_seed = 12345;

static double pycc_random(void)
{{
    pycc_seed = pycc_seed * 6364136223846793005ul + 1442695040888963407ul;
    return (double)(pycc_seed >> 11) / 9007199254740992.0;
}}

int main(void)
{{
    int differs = 0;
{body}
    puts(differs ? "differs" : "same");
    return differs;
}}
"""


def testbench(info: FunctionInfo, stem: str, source: str) -> str | None:
    """The testbench's C, or None when the kernel's parameters cannot be made up."""
    declared, setup, kernel_args, original_args, checks = [], [], [], [], []
    for k, param in enumerate(info.params):
        t = param.ctype
        if isinstance(t, ct.FloatType):
            declared.append(f"{t} {param.name}")
            value = f"{0.375 + k / 8:.3f}"
            kernel_args.append(value)
            original_args.append(value)
            continue
        if not isinstance(t, ct.ArrayType) or not all(isinstance(d, int) for d in t.dims):
            return None
        scalar = t.scalar
        if not isinstance(scalar, (ct.FloatType, ct.IntType)):
            return None
        count = 1
        for dim in t.dims:
            count *= dim
        declared.append(f"{scalar} *{param.name}")
        kernel, original = f"{param.name}_kernel", f"{param.name}_original"
        setup += [
            f"    {scalar} *{kernel} = ({scalar} *)malloc(sizeof({scalar}) * {count});",
            f"    {scalar} *{original} = ({scalar} *)malloc(sizeof({scalar}) * {count});",
            f"    for (long e = 0; e < {count}; e++)",
            f"        {kernel}[e] = {original}[e] = ({scalar})({_value(scalar)});",
        ]
        kernel_args.append(kernel)
        original_args.append(original)
        checks += [
            f"    if (memcmp({kernel}, {original}, sizeof({scalar}) * {count})) {{",
            f'        printf("{param.name} differs\\n");',
            "        differs = 1;",
            "    }",
            f"    free({kernel});",
            f"    free({original});",
        ]
    calls = [
        f"    {info.name}({', '.join(kernel_args)});",
        f"    {info.name}_original({', '.join(original_args)});",
    ]
    return _TEMPLATE.format(
        stem=stem, name=info.name, source=source, parameters=", ".join(declared) or "void",
        body="\n".join(setup + calls + checks),
    )  # fmt: skip


def _value(scalar: ct.CType) -> str:
    if isinstance(scalar, ct.FloatType):
        return "pycc_random() - 0.5"
    return "pycc_random() * 256.0"
