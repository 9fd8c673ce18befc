"""A content-addressed cache of per-translation-unit results, so rebuilds are cheap.

The key covers everything the result depends on: the command line, the source bytes and the
fully preprocessed text (so an edited header misses), and `environment()`: the tool itself,
the system compiler, the host CPU under `-march=native`, the cache sizes the tile model sees,
the `-fpycc-*` options and the variables read while compiling. The store
(`runtime.private_cache`) is private to the user, bounded (`PYCC_CACHE_MAX_SIZE`), written
atomically and checksummed, so concurrent `make -j` jobs, interrupted builds and damaged
entries never yield a wrong result.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable

from .code_stamp import code_stamp
from .dropin_command import CompilerCommand
from .emit import cc_machine
from .runtime.private_cache import compile_cache_dir, read_entry, write_entry


def tool_identity(cc: str, command: CompilerCommand) -> str:
    """The version plus the stamp of pycc-stencil's own code files (so an edited checkout or
    an upgraded tool never reuses results of the old one)."""
    from .version import __version__

    return cache_key(__version__, code_stamp())


def compiler_identity(cc: str, command: CompilerCommand) -> str:
    """Which `cc` this is: its resolved path, size and mtime, and its `--version`."""
    path = shutil.which(cc) or cc
    try:
        real = os.path.realpath(path)
        info = os.stat(real)
        version = subprocess.run([path, "--version"], capture_output=True, check=False).stdout
    except OSError:
        return path
    return f"{real}:{info.st_size}:{info.st_mtime_ns}:{version.decode(errors='replace')}"


#: flags under which gcc asks the build machine's CPU
NATIVE_FLAGS = ("-march=native", "-mtune=native", "-mcpu=native")


def host_cpu(cc: str, command: CompilerCommand) -> str:
    """Under a `NATIVE_FLAGS` flag, the build machine's CPU: its identification and feature
    lines of /proc/cpuinfo (cheap), else LLVM's host CPU name and features; otherwise ""."""
    if not set(NATIVE_FLAGS) & set(command.compile_flags()):
        return ""
    try:
        with open(_CPUINFO, encoding="utf-8", errors="replace") as handle:
            lines = []
            for line in handle:
                if not line.strip():
                    break  # the first processor describes the machine
                if line.split(":")[0].strip() in _CPU_FIELDS:
                    lines.append(line.strip())
        if lines:
            return "\n".join(lines)
    except OSError:
        pass
    import llvmlite.binding as llvm

    return f"{llvm.get_host_cpu_name()}:{llvm.get_host_cpu_features().flatten()}"


_CPUINFO = "/proc/cpuinfo"
_CPU_FIELDS = frozenset({"vendor_id", "cpu family", "model", "model name", "stepping", "flags"})


#: where Linux describes the caches the host target sizes tiles for (emit/targets/host.py)
def cache_model(cc: str, command: CompilerCommand) -> str:
    """The cache model and thread runtime the flags select (`emit.cc_machine`): the host's
    caches only under -march=native/-mtune=native, else a documented default or a flag."""
    return cc_machine.describe(command.compile_flags(), command.pycc_options)


#: `-fpycc-*` options that change nothing in the output
_REPORTING_OPTIONS = frozenset({"report", "fallback-warnings"})


def pycc_options(cc: str, command: CompilerCommand) -> str:
    """The `-fpycc-*` options (any new one is in the key unless listed as reporting only)."""
    chosen = {k: v for k, v in command.pycc_options.items() if k not in _REPORTING_OPTIONS}
    return json.dumps(chosen, sort_keys=True)


#: environment variables read while the kernels are compiled, so part of the key: the cache-size
#: overrides (`ir_passes.core.target.CACHE_OVERRIDE`: tile sizes and the `-large` passes'
#: threshold), `polyhedral.codegen.POISON_SCRATCH` and the takeover policy
CODEGEN_ENVIRONMENT = (
    "PYCC_CACHE_L1",
    "PYCC_CACHE_L2",
    "PYCC_CACHE_L3",
    "PYCC_POISON_SCRATCH",
    "PYCC_TAKEOVER",
)


def codegen_environment(cc: str, command: CompilerCommand) -> str:
    """The set ones of CODEGEN_ENVIRONMENT, `NAME=value` lines (empty values are unset)."""
    values = ((name, os.environ.get(name, "").strip()) for name in CODEGEN_ENVIRONMENT)
    return "\n".join(f"{name}={value}" for name, value in values if value)


#: what the generated code depends on besides the source, its preprocessed text and the
#: compile flags: each part maps (cc, command) to text; a new input is one more function here
ENVIRONMENT: tuple[Callable[[str, CompilerCommand], str], ...] = (
    tool_identity,
    compiler_identity,
    host_cpu,
    cache_model,
    pycc_options,
    codegen_environment,
)


def environment(cc: str, command: CompilerCommand) -> str:
    """Every ENVIRONMENT part for this compile, one key input."""
    return cache_key(*(part(cc, command) for part in ENVIRONMENT))


def cache_key(*parts: bytes | str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def load(key: str) -> tuple[dict, dict[str, bytes]] | None:
    """The cached (metadata, blobs) for `key`, or None."""
    directory = compile_cache_dir()
    payload = None if directory is None else read_entry(directory, key)
    if payload is None:
        return None
    try:
        header, _, data = payload.partition(b"\n")
        meta = json.loads(header)
        blobs, offset = {}, 0
        for name, size in meta.pop("blobs").items():
            blobs[name] = data[offset : offset + size]
            offset += size
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # an entry of another layout
    return (meta, blobs) if offset == len(data) else None


def store(key: str, meta: dict, blobs: dict[str, bytes]) -> None:
    """Record a result: one entry, the metadata (a JSON line naming the blobs' sizes), then
    the blobs; a cache that cannot be written is silently not used."""
    directory = compile_cache_dir()
    if directory is None:
        return
    header = json.dumps({**meta, "blobs": {name: len(data) for name, data in blobs.items()}})
    write_entry(directory, key, b"\n".join([header.encode(), b"".join(blobs.values())]))
