"""The reference: the original C file built by the system compiler, callable through ctypes.

Every JIT result is compared against what `cc -O0 -ffp-contract=off` makes of the same source
(`PYCC_CC` overrides the compiler). A generated wrapper translation unit includes the original
file by absolute path and defines `__pycc_ref_<name>` for each function to check, so `static`
functions are reachable too and C99 `inline` definitions get emitted. Libraries are cached by a
hash of the preprocessed wrapper, the flags and the compiler's version, so an unchanged file
(headers included) is built once.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from ..frontend.c_types import ArrayType, CType, FloatType, IntType, PointerType, VoidType
from ..frontend.signature import FunctionInfo
from .marshal import prototype

PREFIX = "__pycc_ref_"
#: Only the wrappers are exported and the linker keeps only what they reach, so a function
#: of the file that calls something undefined (and is skipped) does not break the build.
#: -fno-builtin: gcc folds some library calls even at -O0 (pow(x, -1.0) -> 1.0/x); the
#: reference must compute what the C says, with the platform's libm.
BASE_FLAGS = [
    "-O0",
    "-ffp-contract=off",
    "-fno-builtin",
    "-fPIC",
    "-shared",
    "-fvisibility=hidden",
    "-ffunction-sections",
    "-fdata-sections",
    "-Wl,--gc-sections",
    "-Wl,-z,defs",
]

_INT_NAMES = {8: "char", 16: "short", 32: "int", 64: "long long"}


class ReferenceBuildError(RuntimeError):
    """The system compiler rejected the original file or the wrapper; carries cc's message."""


def compiler() -> list[str]:
    return shlex.split(os.environ.get("PYCC_CC", "cc"))


def _c_type_name(t: CType) -> str:
    if isinstance(t, IntType):
        if t.is_bool:
            return "_Bool"
        return ("signed " if t.signed else "unsigned ") + _INT_NAMES[t.bits]
    if isinstance(t, FloatType):
        return "float" if t.bits == 32 else "double"
    if isinstance(t, (PointerType, ArrayType)):
        return "void *"
    if isinstance(t, VoidType):
        return "void"
    raise TypeError(f"cannot pass {t} through the reference wrapper")


def wrapper_source(source: Path, functions: list[FunctionInfo]) -> str:
    """The wrapper translation unit for `functions` of `source`."""
    quoted = str(source.resolve()).replace("\\", "\\\\").replace('"', '\\"')
    lines = [f'#include "{quoted}"', ""]
    for info in functions:
        if not info.is_static:
            lines.append(f"extern __typeof__({info.name}) {info.name};")
        params = ", ".join(
            f"{_c_type_name(p.ctype)} __pycc_a{i}" for i, p in enumerate(info.params)
        )
        args = ", ".join(f"__pycc_a{i}" for i in range(len(info.params)))
        result = _c_type_name(info.result)
        ret = "" if isinstance(info.result, VoidType) else "return "
        lines.append(
            f'__attribute__((visibility("default"))) {result} {PREFIX}{info.name}'
            f"({params or 'void'}) {{ {ret}{info.name}({args}); }}"
        )
    return "\n".join(lines) + "\n"


def _cache_dir() -> Path:
    path = Path(tempfile.gettempdir()) / f"pycc-stencil-reference-{os.getuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def _run(command: list[str], stdin: str) -> subprocess.CompletedProcess:
    try:
        result = subprocess.run(command, input=stdin.encode(), capture_output=True, check=False)
    except OSError as exc:
        raise ReferenceBuildError(f"cannot run {command[0]}: {exc.strerror}") from None
    if result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip()
        raise ReferenceBuildError(message or f"{command[0]} failed (status {result.returncode})")
    return result


def build_reference(source: Path, cflags: list[str], functions: list[FunctionInfo]) -> Path:
    """Compile the wrapper for `functions` into a shared library (cached) and return its path.

    `cflags` are the user's -I/-D/-U/-std/-include flags. Relative include directories are
    resolved against the current directory, since the wrapper is compiled from stdin.
    """
    cc = compiler()
    wrapper = wrapper_source(source, functions)
    flags = list(cflags)
    preprocessed = _run([*cc, *flags, "-E", "-x", "c", "-"], wrapper).stdout
    version = _run([*cc, "--version"], "").stdout
    key = hashlib.sha256(
        b"\0".join([preprocessed, version, " ".join(cc + flags + BASE_FLAGS).encode()])
    ).hexdigest()[:32]
    library = _cache_dir() / f"{key}.so"
    if not library.exists():
        partial = library.with_suffix(f".{os.getpid()}.tmp")
        _run([*cc, *flags, *BASE_FLAGS, "-x", "c", "-", "-o", str(partial), "-lm"], wrapper)
        os.replace(partial, library)
    return library


class Reference:
    """The reference build of some functions of one C file."""

    def __init__(self, source: Path, cflags: list[str], functions: list[FunctionInfo]):
        self.path = build_reference(source, cflags, functions)
        self._library = ctypes.CDLL(str(self.path))
        self._functions = {info.name: info for info in functions}

    def function(self, name: str) -> ctypes._CFuncPtr:
        """The wrapper of `name`, callable with the lowered function's ctypes prototype."""
        symbol = getattr(self._library, PREFIX + name)
        return prototype(self._functions[name])(ctypes.cast(symbol, ctypes.c_void_p).value)
