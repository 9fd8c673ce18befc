"""The reference: the original C file built by the system compiler, callable through ctypes.

Every JIT result is compared against what `cc -O0 -ffp-contract=off` makes of the same source
(`PYCC_CC` overrides the compiler). A generated wrapper translation unit includes the original
file by absolute path and defines `__pycc_ref_<name>` for each function to check, so `static`
functions are reachable too. It also redeclares every non-static function the front end
lowered `extern`, so that C99 `inline` definitions (which alone define no symbol) are emitted.
Libraries are cached by a hash of the preprocessed wrapper, the flags and the compiler's
version, so an unchanged file (headers included) is built once.

One library serves all functions of a file; if it does not link (a function calls something
defined nowhere), each function gets its own, so only the functions that need the missing
symbol fail.
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
#: -fno-builtin: gcc folds some library calls even at -O0 (pow(x, -1.0) -> 1.0/x); the
#: reference must compute what the C says, with the platform's libm.
COMPILE_FLAGS = [
    "-O0",
    "-ffp-contract=off",
    "-fno-builtin",
    "-fPIC",
    "-fvisibility=hidden",
    "-ffunction-sections",
    "-fdata-sections",
]
#: Only the wrappers are exported and the linker keeps only what they reach, so a function
#: of the file that calls something undefined (and is skipped) does not break the build.
LINK_FLAGS = ["-shared", "-Wl,--gc-sections", "-Wl,-z,defs"]

_INT_NAMES = {8: "char", 16: "short", 32: "int", 64: "long long"}


class ReferenceBuildError(RuntimeError):
    """The system compiler rejected the original file or the wrapper; carries cc's message."""


class ReferenceLinkError(ReferenceBuildError):
    """The wrapper compiled but did not link (an undefined symbol); carries the linker's
    message."""


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


def wrapper_source(source: Path, functions: list[FunctionInfo], external: list[str]) -> str:
    """The wrapper translation unit for `functions` of `source`; `external` names the
    non-static functions the front end lowered."""
    quoted = str(source.resolve()).replace("\\", "\\\\").replace('"', '\\"')
    lines = [f'#include "{quoted}"', ""]
    lines += [f"extern __typeof__({name}) {name};" for name in external]
    for info in functions:
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


def build_reference(
    source: Path, cflags: list[str], functions: list[FunctionInfo], external: list[str]
) -> Path:
    """Compile the wrapper for `functions` into a shared library (cached) and return its path.

    `cflags` are the user's -I/-D/-U/-std/-include flags. Relative include directories are
    resolved against the current directory, since the wrapper is compiled from stdin. Raises
    ReferenceLinkError if the wrapper compiles but does not link.
    """
    cc = compiler()
    wrapper = wrapper_source(source, functions, external)
    flags = list(cflags)
    preprocessed = _run([*cc, *flags, "-E", "-x", "c", "-"], wrapper).stdout
    version = _run([*cc, "--version"], "").stdout
    command = " ".join([*cc, *flags, *COMPILE_FLAGS, *LINK_FLAGS]).encode()
    key = hashlib.sha256(b"\0".join([preprocessed, version, command])).hexdigest()[:32]
    library = _cache_dir() / f"{key}.so"
    if not library.exists():
        partial = library.with_suffix(f".{os.getpid()}.tmp")
        obj = library.with_suffix(f".{os.getpid()}.o")
        _run([*cc, *flags, *COMPILE_FLAGS, "-c", "-x", "c", "-", "-o", str(obj)], wrapper)
        try:
            _run([*cc, *LINK_FLAGS, str(obj), "-o", str(partial), "-lm"], "")
        except ReferenceBuildError as exc:
            raise ReferenceLinkError(str(exc)) from None
        finally:
            obj.unlink()
        os.replace(partial, library)
    return library


class Reference:
    """The reference builds of the functions to check of one C file."""

    def __init__(
        self, source: Path, cflags: list[str], functions: list[FunctionInfo], external: list[str]
    ):
        """Raises ReferenceBuildError if the file does not compile; a function that does not
        link is only listed in `errors` (name -> the linker's message)."""
        self._functions = {info.name: info for info in functions}
        self._libraries: dict[str, ctypes.CDLL] = {}
        self.errors: dict[str, str] = {}
        try:
            library = ctypes.CDLL(str(build_reference(source, cflags, functions, external)))
            self._libraries = dict.fromkeys(self._functions, library)
        except ReferenceLinkError as exc:
            if len(functions) == 1:
                self.errors[functions[0].name] = str(exc)
                return
            for info in functions:
                try:
                    path = build_reference(source, cflags, [info], external)
                    self._libraries[info.name] = ctypes.CDLL(str(path))
                except ReferenceBuildError as error:
                    self.errors[info.name] = str(error)

    def function(self, name: str) -> ctypes._CFuncPtr:
        """The wrapper of `name`, callable with the lowered function's ctypes prototype."""
        symbol = getattr(self._libraries[name], PREFIX + name)
        return prototype(self._functions[name])(ctypes.cast(symbol, ctypes.c_void_p).value)
