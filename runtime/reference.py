"""The reference: the original C file built by the system compiler, callable through ctypes.

Every JIT result is compared against what `cc -O0 -ffp-contract=off` makes of the same source
(`PYCC_CC` overrides the compiler). A generated wrapper translation unit includes the original
file by absolute path and defines `__pycc_ref_<name>` for each function to check, so `static`
functions are reachable too. It also redeclares every non-static function the front end
lowered `extern`, so that C99 `inline` definitions (which alone define no symbol) are emitted.
Libraries are cached by a hash of the preprocessed wrapper without its line markers (so the
same text at another path, a test's temporary copy, is the same entry), the flags and the
compiler's version, so an unchanged file (headers included) is built once. The cache is a
private per-user directory (`runtime/private_cache.py`): a library another user could have
planted is never loaded.

One library serves all functions of a file; if it does not link (a function calls something
defined nowhere), each function gets its own, so only the functions that need the missing
symbol fail.

`build_library` builds the same functions with any other compiler command (pycc-stencil's
compiler mode, cc at other levels or for other targets) into a library that `KernelLibrary`
calls the same way, so two builds of one file can be compared run for run.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import shlex
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..frontend.c_types import (
    ArrayType,
    CType,
    FloatType,
    IntType,
    PointerType,
    StructType,
    VoidType,
)
from ..frontend.signature import FunctionInfo, GlobalInfo
from .marshal import prototype
from .private_cache import private_directory, read_entry, user_cache_dir, write_entry

PREFIX = "__pycc_ref_"
GLOBAL_PREFIX = "__pycc_refg_"
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
    if isinstance(t, StructType) and "(" not in t.name:  # `struct tag`, not an unnamed one
        return t.name
    raise TypeError(f"cannot pass {t} through the reference wrapper")


def wrapper_source(
    source: Path,
    functions: list[FunctionInfo],
    external: list[str],
    variables: Sequence[GlobalInfo] = (),
) -> str:
    """The wrapper translation unit for `functions` of `source`; `external` names the
    non-static functions the front end lowered; `variables` the globals they use, each
    reachable through `__pycc_refg_<name>` (its address), and defined here if the file only
    declares it (its definition is in another file of the program)."""
    quoted = str(source.resolve()).replace("\\", "\\\\").replace('"', '\\"')
    lines = [f'#include "{quoted}"', ""]
    lines += [f"extern __typeof__({name}) {name};" for name in external]
    lines += [_definition(g) for g in variables if not g.defined]
    lines += [
        f'__attribute__((visibility("default"))) void *{GLOBAL_PREFIX}{g.name}(void) '
        f"{{ return (void *)&{g.name}; }}"
        for g in variables
    ]
    return "\n".join(lines) + "\n" + _wrapper_definitions(functions)


def _definition(g: GlobalInfo) -> str:
    """Storage for a global the file only declares. A `const` one (a table another file
    defines) gets writable bytes under its symbol (`__asm__`): a `const` definition would be
    read-only memory, which the check seeds."""
    if not g.read_only:
        return f"__typeof__({g.name}) {g.name};"
    size = "16" if g.size is None else f"sizeof {g.name}"  # unknown size: never checked
    return (
        f"unsigned char {GLOBAL_PREFIX}storage_{g.name}[{size}] "
        f'__asm__("{g.name}") __attribute__((aligned(__alignof__({g.name}))));'
    )


def _wrapper_definitions(functions: list[FunctionInfo]) -> str:
    """One exported `__pycc_ref_<name>` function per entry of `functions`, forwarding to it."""
    lines = ""
    for info in functions:
        params = ", ".join(
            f"{_c_type_name(p.ctype)} __pycc_a{i}" for i, p in enumerate(info.params)
        )
        args = ", ".join(f"__pycc_a{i}" for i in range(len(info.params)))
        result = _c_type_name(info.result)
        ret = "" if isinstance(info.result, VoidType) else "return "
        lines += (
            f'__attribute__((visibility("default"))) {result} {PREFIX}{info.name}'
            f"({params or 'void'}) {{ {ret}{info.name}({args}); }}\n"
        )
    return lines


def _run(command: list[str], stdin: str) -> subprocess.CompletedProcess:
    try:
        result = subprocess.run(command, input=stdin.encode(), capture_output=True, check=False)
    except OSError as exc:
        raise ReferenceBuildError(f"cannot run {command[0]}: {exc.strerror}") from None
    if result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip()
        raise ReferenceBuildError(message or f"{command[0]} failed (status {result.returncode})")
    return result


@functools.cache
def _version(cc: tuple[str, ...]) -> bytes:
    """`cc --version` (asked once per process and compiler)."""
    return _run([*cc, "--version"], "").stdout


def _content_key(preprocessed: bytes) -> bytes:
    """The preprocessed text without its line markers (`# 12 "/path/file.c"`), which name
    the file's path: what cc compiles into the library is the rest (`__FILE__` is expanded)."""
    return b"\n".join(line for line in preprocessed.split(b"\n") if not _LINE_MARKER.match(line))


_LINE_MARKER = re.compile(rb"#(?:line)? \d+")


def load_reference(
    source: Path,
    cflags: list[str],
    functions: list[FunctionInfo],
    external: list[str],
    variables: Sequence[GlobalInfo] = (),
) -> ctypes.CDLL:
    """Compile the wrapper for `functions` into a shared library (cached) and load it.

    `cflags` are the user's -I/-D/-U/-std/-include flags. Relative include directories are
    resolved against the current directory, since the wrapper is compiled from stdin. Raises
    ReferenceLinkError if the wrapper compiles but does not link. The library is loaded from
    a private temporary directory, removed at once: the cache (`reference_cache`) holds
    checked copies, never a file that is loaded in place.
    """
    cc = compiler()
    wrapper = wrapper_source(source, functions, external, variables)
    flags = list(cflags)
    preprocessed = _run([*cc, *flags, "-E", "-x", "c", "-"], wrapper).stdout
    command = " ".join([*cc, *flags, *COMPILE_FLAGS, *LINK_FLAGS]).encode()
    parts = [_content_key(preprocessed), _version(tuple(cc)), command]
    key = hashlib.sha256(b"\0".join(parts)).hexdigest()
    cache = reference_cache()
    cached = None if cache is None else read_entry(cache, key)
    with tempfile.TemporaryDirectory(prefix="pycc-stencil-") as scratch:
        library = Path(scratch) / "reference.so"
        if cached is None:
            obj = Path(scratch) / "reference.o"
            _run([*cc, *flags, *COMPILE_FLAGS, "-c", "-x", "c", "-", "-o", str(obj)], wrapper)
            try:
                _run([*cc, *LINK_FLAGS, str(obj), "-o", str(library), "-lm"], "")
            except ReferenceBuildError as exc:
                raise ReferenceLinkError(str(exc)) from None
            if cache is not None:
                write_entry(cache, key, library.read_bytes())
        else:
            library.write_bytes(cached)
        return ctypes.CDLL(str(library))


def reference_cache() -> str | None:
    """`$XDG_CACHE_HOME/pycc-stencil/reference` (or under `~/.cache`), when it is private to
    the user (otherwise nothing is cached, with one warning)."""
    return private_directory(user_cache_dir("reference"))


class Reference:
    """The reference builds of the functions to check of one C file."""

    def __init__(
        self,
        source: Path,
        cflags: list[str],
        functions: list[FunctionInfo],
        external: list[str],
        variables: dict[str, GlobalInfo] | None = None,
    ):
        """Raises ReferenceBuildError if the file does not compile; a function that does not
        link is only listed in `errors` (name -> the linker's message). `variables` are the
        file's globals (`LoweredModule.globals`)."""
        self._functions = {info.name: info for info in functions}
        self._libraries: dict[str, ctypes.CDLL] = {}
        self.errors: dict[str, str] = {}
        variables = variables or {}

        def used(infos: list[FunctionInfo]) -> list[GlobalInfo]:
            names = sorted({g for info in infos for g in info.globals})
            # (a read-only one of unknown size is defined all the same: cc may address a
            # constant PC-relative, which no shared library leaves undefined)
            return [v for v in map(variables.get, names) if v.size is not None or v.read_only]

        try:
            library = load_reference(source, cflags, functions, external, used(functions))
            self._libraries = dict.fromkeys(self._functions, library)
        except ReferenceLinkError as exc:
            if len(functions) == 1:
                self.errors[functions[0].name] = str(exc)
                return
            for info in functions:
                try:
                    self._libraries[info.name] = load_reference(
                        source, cflags, [info], external, used([info])
                    )
                except ReferenceBuildError as error:
                    self.errors[info.name] = str(error)

    def function(self, name: str) -> ctypes._CFuncPtr:
        """The wrapper of `name`, callable with the lowered function's ctypes prototype."""
        return _bind(self._libraries[name], PREFIX + name, self._functions[name])

    def global_address(self, function: str, name: str) -> int:
        """Where the library of `function` keeps the global `name` (one it uses)."""
        accessor = getattr(self._libraries[function], GLOBAL_PREFIX + name)
        accessor.restype = ctypes.c_void_p
        return accessor()


def _bind(library: ctypes.CDLL, symbol: str, info: FunctionInfo) -> ctypes._CFuncPtr:
    """`symbol` of `library` as a ctypes function with the prototype of `info`."""
    address = ctypes.cast(getattr(library, symbol), ctypes.c_void_p).value
    return prototype(info)(address)


#: what `build_library` adds to the caller's command to build a shared library
LIBRARY_FLAGS = ["-shared", "-fPIC"]


class KernelLibrary:
    """A shared library built from one C file by `build_library`; its functions are called
    like the reference's (`function(name)`, with the lowered prototype)."""

    def __init__(
        self,
        path: Path,
        source: Path,
        functions: list[FunctionInfo],
        prefix: str,
        command: list[str],
        messages: str,
    ):
        self.path = path
        self.source = source  # the file that was compiled (the original, or an exporting copy)
        self.command = command  # the command line that built it
        self.messages = messages  # the compiler's stderr (warnings)
        self._prefix = prefix
        self._functions = {info.name: info for info in functions}
        self._library = ctypes.CDLL(str(path))

    def function(self, name: str) -> ctypes._CFuncPtr:
        """`name` (or its exported wrapper), callable with its lowered ctypes prototype."""
        return _bind(self._library, self._prefix + name, self._functions[name])


def exporting_source(source: Path, functions: list[FunctionInfo]) -> str:
    """The text of `source` followed by the exported wrappers of `functions` (as in
    `wrapper_source`), in the same translation unit, so that `static` functions are
    reachable while the file's own definitions stay in the file that is compiled."""
    text = source.read_text(encoding="utf-8", errors="surrogateescape")
    return text + ("" if text.endswith("\n") else "\n") + "\n" + _wrapper_definitions(functions)


def build_library(
    command: Sequence[str],
    source: Path,
    cflags: list[str],
    functions: list[FunctionInfo],
    directory: Path,
    env: dict[str, str] | None = None,
) -> KernelLibrary:
    """Build the C file `source` into a shared library with an arbitrary compiler command and
    return it loaded, its `functions` callable like the reference's.

    `command` is the compiler and its options (e.g. ``["pycc-stencil", "-O2"]`` or
    ``["cc", "-O3", "-march=native"]``); `cflags` are the file's -I/-D/-std flags; the command
    line is `command cflags -shared -fPIC FILE -o LIB -lm`, run with `env`, and the library
    is written into `directory` (which must not be shared with another build). Unlike the
    reference, the file itself is compiled, not a wrapper that includes it: when every one of
    `functions` has external linkage, the original file, called by the functions' own names;
    otherwise a copy of it with exported wrappers appended (`exporting_source`), compiled
    with `-iquote` the original directory so its `#include "..."` still resolve. (A C99
    `inline` function with external linkage defines no symbol, so it is not callable.)

    Raises ReferenceBuildError (with the compiler's message) if the command fails.
    """
    directory.mkdir(parents=True, exist_ok=True)
    flags, prefix, compiled = list(cflags), "", source
    if any(info.is_static for info in functions):
        compiled = directory / source.name
        compiled.write_text(
            exporting_source(source, functions), encoding="utf-8", errors="surrogateescape"
        )
        flags = ["-iquote", str(source.resolve().parent), *flags]
        prefix = PREFIX
    output = directory / f"lib{source.stem}.so"
    argv = [*command, *flags, *LIBRARY_FLAGS, str(compiled), "-o", str(output), "-lm"]
    try:
        done = subprocess.run(argv, capture_output=True, env=env, check=False)
    except OSError as exc:
        raise ReferenceBuildError(f"cannot run {argv[0]}: {exc.strerror}") from None
    messages = done.stderr.decode(errors="replace")
    if done.returncode != 0:
        raise ReferenceBuildError(
            f"`{shlex.join(argv)}` failed (status {done.returncode}): {messages.strip()}"
        )
    return KernelLibrary(output, compiled, functions, prefix, argv, messages)
