"""The C math library functions that generated code calls as they are (not as LLVM intrinsics):
the front end lowers them to calls, and SIMD binding calls them once per lane, so both the JIT
and the `cc`-built reference compute the very same values."""

from __future__ import annotations

import re

#: LLVM intrinsics that compute like arithmetic (no memory, no errno): matched against a
#: callee's name followed by "." (`llvm.sqrt.f64.`, `llvm.smax.i32.`)
ARITHMETIC_INTRINSIC = re.compile(
    r"llvm\.(sqrt|fabs|floor|ceil|trunc|rint|round|fma|fmuladd|minnum|"
    r"maxnum|copysign|smin|smax|umin|umax|abs)\."
)

#: libm functions called as they are (double forms; the `f` forms take and return float)
LIBM_FUNCTIONS: frozenset[str] = frozenset(
    name + suffix
    for name in (
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "pow",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "cbrt",
        "hypot",
        "fmod",
        "remainder",
        "fmin",
        "fmax",
        "fdim",
        "erf",
        "erfc",
        "copysign",
        "lround",
        "lrint",
        "llround",
        "llrint",
        "tgamma",
        "lgamma",
        "ldexp",
        "scalbn",
        "ilogb",
        "logb",
        "nextafter",
        "fma",
    )
    for suffix in ("", "f")
)
