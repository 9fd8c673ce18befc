"""Emitted C, built and loaded: the `check --target c` side that replaces the JIT.

The emitted file, followed by accessors of each function's and each defined global's
address (so `static` ones are reachable), is compiled as users will (`cc -std=c99 -Wall
-Wextra -Werror`, optimized, no floating-point contraction: a warning in generated code fails
the check) into a shared library, with a second translation unit that defines storage for the
globals the file only declares (another file of the user's program defines them). A check
copies its global inputs into that storage before the call and back after it, as for the
reference (`runtime/globals.bind_addresses`).
"""

from __future__ import annotations

import ctypes
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..emit.c_module import EmittedC
from ..frontend.signature import GlobalInfo
from .hls_vendor import ap_types_dir
from .reference import ReferenceBuildError, compiler

#: how emitted C is compiled: as strict as a user's build may be, and optimized
STRICT_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-ffp-contract=off"]
#: the headers a dialect's C includes on the host (C66x: the emulation of TI's intrinsics;
#: HLS: the ship runtime) and its runtime's sources (the EDMA manager)
HEADER_DIRS = {
    "c66x": Path(__file__).parent / "c66x",
    "hls": Path(__file__).parent / "hls",
    "aie": Path(__file__).parent / "aie",
    "aie-api": Path(__file__).parent / "aie",
}
#: flags a dialect's C needs besides the strict ones (the HLS pragmas are unknown to cc)
DIALECT_FLAGS = {"hls": ["-Wno-unknown-pragmas"]}
#: pycc_edma.h's host backends, by the value of `pycc_edma_backend`
EDMA_BACKENDS = {0: "immediate", 1: "deferred", 2: "checking"}
#: the library's references to its own functions and globals bind to its own definitions: a
#: kernel named like a libc function (`select`, `index`) is the kernel, as in the user's
#: program, not the libc function already loaded in the process (ELF interposition)
SELF_BOUND = ["-Wl,-Bsymbolic"]
#: ap_private.h's templates, instantiated in the kernel's file, read words their
#: constructors leave unset (gcc 12 -O2 says so): those warnings are the vendor's
VENDOR_QUIET = ["-Wno-uninitialized", "-Wno-maybe-uninitialized"]
#: the accessors keep C's names when the file is built as C++
_C_LINKAGE = (
    ["#ifdef __cplusplus", 'extern "C" {', "#endif"],
    ["#ifdef __cplusplus", "}", "#endif"],
)
_FUNCTION = "__pycc_emitted_fn_"
_GLOBAL = "__pycc_emitted_gv_"


class EmittedBuildError(ReferenceBuildError):
    """cc rejected (or warned about) the emitted C; carries its message."""


class EmittedLibrary:
    """The emitted C of one module, compiled and loaded."""

    def __init__(
        self, emitted: EmittedC, variables: Iterable[GlobalInfo] = (), defines: list[str] = ()
    ):
        """`defines`: the `-D` flags of the target's runtime (`Target.runtime_defines`)."""
        self.emitted = emitted
        variables = [v for v in variables if v.size is not None]
        with tempfile.TemporaryDirectory(prefix="pycc-stencil-") as scratch:
            directory = Path(scratch)
            source = directory / "emitted.c"
            source.write_text(emitted.text + self._exports(variables), encoding="utf-8")
            storage = directory / "storage.c"
            storage.write_text(self._storage(variables), encoding="utf-8")
            library = directory / "emitted.so"
            runtime = runtime_sources(emitted.dialect) if emitted.tiled else []
            _run(
                [*self._language(defines), *DIALECT_FLAGS.get(emitted.dialect, []),
                 *include_flags(emitted.dialect), *defines, "-fPIC",
                 "-shared", *SELF_BOUND, str(source), str(storage), *map(str, runtime), "-o",
                 str(library), "-lm"]
            )  # fmt: skip
            self._library = ctypes.CDLL(str(library))

    def _language(self, defines: list[str]) -> list[str]:
        """The compiler and its strict flags: C, or for FPGA kernels with wide DDR words
        C++ against Vitis HLS's own ap_int.h (as its C simulation builds them), where a
        package ships it (`hls_vendor`); `self.vendor_types` says which. The code Vitis
        synthesizes (`-D__SYNTHESIS__`) is C: its ships are typed loops."""
        if self.emitted.dialect.startswith("aie"):  # AI Engine kernels are C++
            # at -O0: the emulated intrinsics inline into thousands of lines per kernel, which
            # -O2 takes seconds to optimize (4.3 s against 0.3 s for a 3x3x3 CONV3D); the
            # check needs the kernel's values, which the optimization level does not change
            strict = [f if f != "-O2" else "-O0" for f in STRICT_FLAGS if not f.startswith("-std=")]
            return ["c++", "-x", "c++", "-std=c++14", *strict]
        wide = self.emitted.dialect == "hls" and self.emitted.burst > 1
        headers = ap_types_dir() if wide and "-D__SYNTHESIS__" not in defines else None
        self.vendor_types = headers is not None
        if headers is None:
            return [*compiler(), *STRICT_FLAGS]
        strict = [f for f in STRICT_FLAGS if not f.startswith("-std=")]
        return ["c++", "-x", "c++", "-std=c++14", *strict, *VENDOR_QUIET, f"-isystem{headers}",
                f"-DPYCC_SHIP_BURST={self.emitted.burst}"]  # fmt: skip

    def _exports(self, variables: list[GlobalInfo]) -> str:
        """Accessors of every function's and defined global's address, appended to the
        emitted text (so `static` ones are reachable)."""
        lines = ["", *_C_LINKAGE[0]]
        for name in self.emitted.functions:
            c_name = self.emitted.c_names[name]
            lines.append(f"void *{_FUNCTION}{c_name}(void) {{ return (void *)&{c_name}; }}")
        for info in variables:
            if info.name in self.emitted.defined_globals:
                c_name = self.emitted.c_names[info.name]
                lines.append(f"void *{_GLOBAL}{c_name}(void) {{ return (void *)&{c_name}; }}")
        return "\n".join([*lines, *_C_LINKAGE[1]]) + "\n"

    def _storage(self, variables: list[GlobalInfo]) -> str:
        lines = list(_C_LINKAGE[0])
        for info in variables:
            if info.name not in self.emitted.defined_globals:
                name = info.name  # external linkage: a C identifier
                size = max(1, info.size or 0)
                lines.append(f"unsigned char {name}[{size}] __attribute__((aligned(64)));")
                lines.append(f"void *{_GLOBAL}{name}(void) {{ return {name}; }}")
        return "\n".join([*lines, *_C_LINKAGE[1]]) + "\n"

    def edma_backends(self, function: str) -> list[int]:
        """The host EDMA backends `function` is to be checked under (none if not tiled)."""
        return list(EDMA_BACKENDS) if function in self.emitted.tiled else []

    def set_edma_backend(self, backend: int) -> None:
        ctypes.c_int.in_dll(self._library, "pycc_edma_backend").value = backend

    def set_tile(self, function: str, rows: int, cols: int) -> None:
        """Run the tiled `function` over tiles of rows x cols outputs from now on."""
        ctypes.c_int.in_dll(self._library, f"pycc_tile_rows_{function}").value = rows
        ctypes.c_int.in_dll(self._library, f"pycc_tile_cols_{function}").value = cols

    def function_address(self, name: str) -> int:
        return self._address(_FUNCTION + self.emitted.c_names[name])

    def global_address(self, name: str) -> int:
        return self._address(_GLOBAL + self.emitted.c_names.get(name, name))

    def _address(self, symbol: str) -> int:
        accessor = getattr(self._library, symbol)
        accessor.restype = ctypes.c_void_p
        return accessor()


def runtime_sources(dialect: str) -> list[Path]:
    """The C files of the dialect's runtime (C66x: the EDMA manager and the tile driver)."""
    return sorted(HEADER_DIRS[dialect].glob("*.c")) if dialect in HEADER_DIRS else []


def include_flags(dialect: str) -> list[str]:
    """`-I` of the headers the dialect's C includes on the host."""
    return [f"-I{HEADER_DIRS[dialect]}"] if dialect in HEADER_DIRS else []


def _run(command: list[str]) -> None:
    try:
        done = subprocess.run(command, capture_output=True, check=False)
    except OSError as exc:
        raise EmittedBuildError(f"cannot run {command[0]}: {exc.strerror}") from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip()
        raise EmittedBuildError(message or f"{command[0]} failed (status {done.returncode})")
