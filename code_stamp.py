"""Which pycc-stencil code this is, cheaply: a digest of its code files' names, sizes and
times of change. They are stat'ed, not read: every build step that reaches the compile server
or the result cache needs the digest, and reading the package's files cost a step 13 ms."""

from __future__ import annotations

import hashlib
import os

#: the installed package (a test points it at a copy)
PACKAGE = os.path.dirname(os.path.abspath(__file__))
#: the package's code: its own files and these folders, recursively (not its tests or scripts)
CODE_DIRS = ("frontend", "ir_passes", "polyhedral", "emit", "runtime")


def code_stamp() -> str:
    """The digest of the `.py` and `.h` files of the code under `PACKAGE` (a C header of the
    runtime is part of the code the emitters include)."""
    digest = hashlib.sha256()
    folders = [PACKAGE, *(os.path.join(PACKAGE, d) for d in CODE_DIRS)]
    while folders:
        folder = folders.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith((".py", ".h")) and entry.is_file():
                info = entry.stat()
                name = os.path.relpath(entry.path, PACKAGE)
                digest.update(f"{name}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
            elif folder != PACKAGE and entry.is_dir() and entry.name != "__pycache__":
                folders.append(entry.path)
    return digest.hexdigest()
