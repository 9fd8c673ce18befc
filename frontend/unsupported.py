"""The signal that a function uses something the front end does not lower."""

from __future__ import annotations

import clang.cindex as ci

from ..diagnostics import SourceLocation
from .clang_ast import location


class Unsupported(Exception):
    """Raised while lowering a function; the function is skipped with this reason and place."""

    def __init__(
        self, message: str, where: ci.Cursor | SourceLocation, *, not_a_kernel: bool = False
    ):
        super().__init__(message)
        self.message = message
        self.location = where if isinstance(where, SourceLocation) else location(where)
        #: the function does something a stencil kernel does not (I/O, allocation, any call
        #: with unknown side effects): the drop-in compiler leaves it to cc without a warning
        self.not_a_kernel = not_a_kernel
