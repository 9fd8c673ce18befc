"""A C target's output as a directory a user builds: the kernel C, the headers and runtime
sources it needs, and a Makefile (`make host`: cc against the host emulation; `make c66x`:
TI's cl6x, for users who have the toolchain).

Files are written one by one, each atomically; files of the directory that are not ours are
left alone, and one of the names we write is replaced only if a bundle wrote it (it says
`pycc-stencil` in its first lines): a user's own Makefile stops the command instead.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..emit.output_files import output_mode, write_atomically
from .emitted import HEADER_DIRS, STRICT_FLAGS

_MAKEFILE = """\
# {stem}: built from {source} by `pycc-stencil emit --target {target}`.
#
#   make host   lib{stem}.a for this machine: the host C compiler, against c6x_host.h, the
#               emulation of TI's C6000 intrinsics (what `pycc-stencil check --target {target}`
#               runs and compares bit for bit with the original C)
#   make c66x   lib{stem}.lib for the C66x DSP with TI's C6000 code generation tools:
#               make c66x C6000_CGT=/path/to/ti-cgt-c6000_8.x
#   make clean

CC ?= cc
AR ?= ar
HOST_CFLAGS ?= {host_flags}

C6000_CGT ?= /opt/ti/ti-cgt-c6000
CL6X ?= $(C6000_CGT)/bin/cl6x
AR6X ?= $(C6000_CGT)/bin/ar6x
# -mv6600: C66x instructions (DADDSP, DMPYSP, LDNDW); -mw -k: the software pipeliner's
# report of each loop (II, registers), kept in c66x/*.asm
C66X_CFLAGS ?= -mv6600 --abi=eabi --c99 -O3 -mw -k --asm_directory=c66x \\
	--include_path=$(C6000_CGT)/include

# the runtime's configuration, as the kernel's tiles were sized for it
RUNTIME_DEFINES = {defines}

SOURCES = {sources}
HEADERS = {headers}

.PHONY: host c66x clean

host: host/lib{stem}.a

host/lib{stem}.a: $(SOURCES:%.c=host/%.o)
\t$(AR) rcs $@ $^

host/%.o: %.c $(HEADERS)
\tmkdir -p host
\t$(CC) $(HOST_CFLAGS) $(RUNTIME_DEFINES) -I. -c $< -o $@

c66x: c66x/lib{stem}.lib

c66x/lib{stem}.lib: $(SOURCES:%.c=c66x/%.obj)
\t$(AR6X) r $@ $^

c66x/%.obj: %.c $(HEADERS)
\tmkdir -p c66x
\t$(CL6X) $(C66X_CFLAGS) $(RUNTIME_DEFINES) --include_path=. --obj_directory=c66x -c $<

clean:
\trm -rf host c66x
"""


#: every file of a bundle says so in its first lines (so it may be replaced)
MARKER = b"pycc-stencil"


class BundleError(Exception):
    """The directory holds a file of the user's where the bundle would write one."""


def bundle_files(
    dialect: str, stem: str, source_name: str, text: str, defines: list[str]
) -> dict[str, bytes]:
    """{file name: content} of the directory for emitted C `text` in `dialect`; `defines`:
    the `-D` flags of the target's runtime. The kernel's file is named after its source, made
    safe for make and kept apart from the runtime's files."""
    headers = sorted(p for p in HEADER_DIRS[dialect].iterdir() if p.suffix in (".h", ".c"))
    stem = re.sub(r"[^A-Za-z0-9_.+-]", "_", stem) or "kernel"
    if any(p.stem == stem for p in headers) or stem == "Makefile":
        stem = f"kernel_{stem}"
    files = {f"{stem}.c": text.encode()}
    for path in headers:
        files[path.name] = path.read_bytes()
    sources = sorted(name for name in files if name.endswith(".c"))
    makefile = _MAKEFILE.format(
        stem=stem,
        source=source_name,
        target=dialect,
        host_flags=" ".join(STRICT_FLAGS),
        defines=" ".join(defines),
        sources=" ".join(sources),
        headers=" ".join(sorted(name for name in files if name.endswith(".h"))),
    )
    files["Makefile"] = makefile.encode()
    return files


def write_bundle(directory: str | os.PathLike, files: dict[str, bytes]) -> None:
    """Create `directory` if needed and write `files` into it; a file there that a bundle did
    not write (no `pycc-stencil` in its first lines) is never replaced: BundleError, and
    nothing is written."""
    for name in files:
        path = Path(directory, name)
        if path.exists() and (not path.is_file() or MARKER not in path.read_bytes()[:400]):
            raise BundleError(f"'{path}' exists and was not written by pycc-stencil")
    Path(directory).mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        write_atomically(os.path.join(directory, name), content, mode=output_mode())
