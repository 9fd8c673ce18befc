"""Invalid floating-point operations on constants, as the machine computes them.

`0.0 / 0.0`, `inf - inf` and `0.0 * inf` (the legacy spelling of a NaN) are not folded by
gcc under its default `-ftrapping-math`: cc's program computes them at run time, and x86's
SSE unit gives its default NaN, whose sign bit is set (printed `-nan`). LLVM would fold them
to a NaN without the sign. The front end computes such an operation on the host's own
floating-point unit (numpy's scalars: the same instructions) and uses that NaN.
"""

from __future__ import annotations

import math
import operator

from llvmlite import ir

_OPERATIONS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


def machine_nan(op: str, a: ir.Value, b: ir.Value) -> ir.Constant | None:
    """The NaN `a op b` makes, for two constants that are not NaNs whose operation is
    invalid; None otherwise (LLVM folds every other operation exactly as the machine does)."""
    if not isinstance(a.type, (ir.FloatType, ir.DoubleType)) or op not in _OPERATIONS:
        return None
    x, y = _constant(a), _constant(b)
    if x is None or y is None or math.isnan(x) or math.isnan(y):
        return None
    import numpy as np  # (here: the front end does not load numpy for other files)

    scalar = np.float32 if isinstance(a.type, ir.FloatType) else np.float64
    with np.errstate(all="ignore"):
        result = _OPERATIONS[op](scalar(x), scalar(y))
    return ir.Constant(a.type, float(result)) if np.isnan(result) else None


def _constant(value: ir.Value) -> float | None:
    """A floating-point constant's value, also through a widening (`(double)INFINITY`), a
    conversion of an integer constant (`INFINITY * 0`) or a negation (`-HUGE_VAL`)."""
    if isinstance(value, ir.Instruction) and value.opname == "fneg":
        inner = _constant(value.operands[0])
        return None if inner is None else -inner
    if isinstance(value, ir.CastInstr) and value.opname in ("fpext", "sitofp", "uitofp"):
        value = value.operands[0]
    if isinstance(value, ir.Constant) and isinstance(value.constant, (int, float)):
        return float(value.constant)
    return None
