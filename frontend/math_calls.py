"""How calls to the C math library and a few builtins are lowered.

Functions whose result IEEE 754 fixes exactly (sqrt, fabs, floor, ...) become LLVM intrinsics,
which LLVM can vectorize; the others call libm itself, so the JIT and the `cc`-built reference
compute the very same values.
"""

from __future__ import annotations

from ..c_library import NONLOCAL_JUMPS
from ..ir_passes.core.libm import LIBM_FUNCTIONS
from . import fp_builtins

#: C name -> (LLVM intrinsic stem, operand type: "f32"/"f64")
EXACT_INTRINSICS: dict[str, tuple[str, str]] = {}
for _stem in ("sqrt", "fabs", "floor", "ceil", "trunc", "round", "rint", "nearbyint"):
    EXACT_INTRINSICS[_stem] = (f"llvm.{_stem}", "f64")
    EXACT_INTRINSICS[_stem + "f"] = (f"llvm.{_stem}", "f32")


#: integer absolute values -> (LLVM intrinsic, bits)
INTEGER_ABS: dict[str, int] = {"abs": 32, "labs": 64, "llabs": 64}

#: what the INFINITY and HUGE_VAL macros expand to
INFINITIES = frozenset({"inf", "inff", "huge_val", "huge_valf"})

#: builtins that return their first argument for the purposes of lowering
PASS_THROUGH_BUILTINS = frozenset({"__builtin_expect", "__builtin_assume_aligned"})

#: what glibc's `assert` calls when the assertion fails (lowered: it only prints and aborts)
ASSERT_FAIL = "__assert_fail"

#: calls that cannot be compiled: the reason is specific
FORBIDDEN_CALLS: dict[str, str] = {
    name: "setjmp/longjmp is not supported (setjmp, vfork and getcontext return twice)"
    for name in NONLOCAL_JUMPS
}
FORBIDDEN_CALLS.update(
    {
        name: "variable arguments (va_list) are not supported"
        for name in (
            "__builtin_va_start",
            "__builtin_va_end",
            "__builtin_va_arg",
            "__builtin_va_copy",
            "__builtin_c23_va_start",
        )
    }
)


#: every library name `library_call` lowers
KNOWN_LIBRARY_CALLS = (
    set(EXACT_INTRINSICS)
    | LIBM_FUNCTIONS
    | set(INTEGER_ABS)
    | PASS_THROUGH_BUILTINS
    | INFINITIES
    | fp_builtins.NAMES
    | {"isnan", "nan", "nanf"}
)


def canonical_math_name(name: str) -> str:
    """`__builtin_sqrtf` -> `sqrtf`: clang's builtin spellings of library functions."""
    if name in PASS_THROUGH_BUILTINS or not name.startswith("__builtin_"):
        return name
    return name[len("__builtin_") :]
