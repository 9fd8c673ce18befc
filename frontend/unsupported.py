"""The signal that a function uses something the front end does not lower."""

from __future__ import annotations

import clang.cindex as ci

from ..diagnostics import SourceLocation
from .clang_ast import location


class Unsupported(Exception):
    """Raised while lowering a function; the function is skipped with this reason and place."""

    def __init__(self, message: str, where: ci.Cursor | SourceLocation):
        super().__init__(message)
        self.message = message
        self.location = where if isinstance(where, SourceLocation) else location(where)
