"""A C target's output as a directory a user builds: the kernel C, the headers and runtime
sources it needs, and a Makefile (`make host`: cc against the host emulation; `make c66x`:
TI's cl6x, for users who have the toolchain).

Files are written one by one, each atomically; files of the directory that are not ours are
left alone, and one that is ours is replaced only by its new content.
"""

from __future__ import annotations

import os
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
# -mv6600: C66x instructions (DADDSP, DMPYSP, LDNDW); -mw: software-pipelining report per loop
C66X_CFLAGS ?= -mv6600 --abi=eabi --c99 -O3 -mw --include_path=$(C6000_CGT)/include

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
\t$(CC) $(HOST_CFLAGS) -I. -c $< -o $@

c66x: c66x/lib{stem}.lib

c66x/lib{stem}.lib: $(SOURCES:%.c=c66x/%.obj)
\t$(AR6X) r $@ $^

c66x/%.obj: %.c $(HEADERS)
\tmkdir -p c66x
\t$(CL6X) $(C66X_CFLAGS) --include_path=. --obj_directory=c66x -c $<

clean:
\trm -rf host c66x
"""


def bundle_files(
    dialect: str, stem: str, source_name: str, text: str, defines: list[str]
) -> dict[str, bytes]:
    """{file name: content} of the directory for emitted C `text` in `dialect`; `defines`:
    the `-D` flags of the target's runtime."""
    headers = sorted(p for p in HEADER_DIRS[dialect].iterdir() if p.suffix in (".h", ".c"))
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
    """Create `directory` if needed and write `files` into it."""
    Path(directory).mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        write_atomically(os.path.join(directory, name), content, mode=output_mode())
