"""isl's work, bounded: the polyhedral analysis and scheduling of one SCoP may spend at most
MAX_OPERATIONS of isl's counted operations (`isl_ctx_set_max_operations`), so that a nest isl
would take minutes to model is refused with a reason instead of stalling the compile."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import islpy as isl

#: isl operations for one SCoP's dependences, or for its schedule: isl counts about 1.5
#: million a second here (heat-3d's full-tile check, schedule/bands.py), so minutes of isl;
#: the slowest nest of the tests (star3d_r2 under overlap-tile(3,5,4,3), 47 s) stays within
MAX_OPERATIONS = 200_000_000


class BudgetExceeded(Exception):
    """isl needed more operations than its budget."""


@contextmanager
def isl_budget(operations: int | None = None) -> Iterator[None]:
    """isl work with at most `operations` (default MAX_OPERATIONS) counted operations; beyond
    them isl fails and BudgetExceeded is raised (other isl errors propagate as they are). An
    inner budget restores the outer one's maximum when it ends; isl's counter restarts there."""
    operations = operations or MAX_OPERATIONS
    ctx = isl.DEFAULT_CONTEXT
    outer = ctx.get_max_operations()
    ctx.reset_operations()
    ctx.set_max_operations(operations)
    try:
        yield
    except isl.Error:
        if _exhausted():
            raise BudgetExceeded(f"isl needed more than {operations} operations") from None
        raise
    finally:
        ctx.reset_operations()
        ctx.set_max_operations(outer)


def _exhausted() -> bool:
    """Once past its maximum, isl refuses every further operation until it is reset."""
    try:
        isl.Set("{ [i] : 0 <= i < 2 }").lexmin()
    except isl.Error:
        return True
    return False
