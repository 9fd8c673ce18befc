"""Import every module of a plug-in package (passes, targets), so registries fill themselves
without a list to edit.

The directory is listed here rather than by `pkgutil`, which reads a directory it cannot list
as empty: under the memory limit ENOMEM then became "unknown target 'host' (valid: )". Here the
OSError reaches the caller, whose `runtime.limits.out_of_memory` reports the limit.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def import_modules(package: str) -> list[ModuleType]:
    """The plain modules of `package` (not its sub-packages, not `_private` files), imported
    in name order."""
    directory = importlib.import_module(package).__path__[0]
    names = sorted(
        entry[: -len(".py")]
        for entry in os.listdir(directory)
        if entry.endswith(".py") and not entry.startswith("_")
    )
    return [importlib.import_module(f"{package}.{name}") for name in names]
