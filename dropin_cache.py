"""A content-addressed cache of per-translation-unit results, so rebuilds are cheap.

The key covers everything the result depends on: the tool version, the system compiler, the
command line, the source bytes and the fully preprocessed text (so an edited header misses).
Entries are written atomically (temporary file + rename), so concurrent `make -j` jobs and
interrupted builds never see a partial entry.
"""

from __future__ import annotations

import hashlib
import json
import os

from .emit.output_files import write_atomically


def cache_dir() -> str | None:
    """`$PYCC_CACHE_DIR`, else `$XDG_CACHE_HOME/pycc-stencil` or `~/.cache/pycc-stencil`;
    None when `PYCC_NO_CACHE=1`."""
    if os.environ.get("PYCC_NO_CACHE") == "1":
        return None
    explicit = os.environ.get("PYCC_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pycc-stencil")


def tool_identity() -> str:
    """The version plus a fingerprint of pycc-stencil's own files (so an edited or upgraded
    tool never reuses results of the old one)."""
    from . import __version__

    package = os.path.dirname(os.path.abspath(__file__))
    stamps = [__version__]
    for directory, subdirectories, files in os.walk(package):
        subdirectories[:] = sorted(d for d in subdirectories if d not in _NOT_CODE)
        for name in sorted(files):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(directory, name))
                stamps.append(f"{directory}/{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return cache_key(*stamps)


_NOT_CODE = frozenset({"tests", "scripts", "docs", ".git", ".venv", "__pycache__", "build"})

#: environment variables read while the kernels are compiled, so part of the key: the cache-size
#: overrides (`ir_passes.core.target.CACHE_OVERRIDE`: tile sizes and the `-large` passes'
#: threshold) and `polyhedral.codegen.POISON_SCRATCH`
CODEGEN_ENVIRONMENT = ("PYCC_CACHE_L1", "PYCC_CACHE_L2", "PYCC_CACHE_L3", "PYCC_POISON_SCRATCH")


def codegen_environment() -> str:
    """The set ones of CODEGEN_ENVIRONMENT, `NAME=value` lines (empty values are unset)."""
    values = ((name, os.environ.get(name, "").strip()) for name in CODEGEN_ENVIRONMENT)
    return "\n".join(f"{name}={value}" for name, value in values if value)


def cache_key(*parts: bytes | str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def load(key: str) -> tuple[dict, dict[str, bytes]] | None:
    """The cached (metadata, blobs) for `key`, or None."""
    directory = cache_dir()
    if directory is None:
        return None
    path = os.path.join(directory, key[:2], key)
    try:
        with open(path + ".json", encoding="utf-8") as handle:
            meta = json.load(handle)
        blobs = {}
        for name, digest in meta["blobs"].items():
            with open(f"{path}.{name}", "rb") as handle:
                blobs[name] = handle.read()
            if hashlib.sha256(blobs[name]).hexdigest() != digest:
                return None  # damaged (disk full, a killed build, an overwrite): a miss
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return meta, blobs


def store(key: str, meta: dict, blobs: dict[str, bytes]) -> None:
    """Record a result; a cache that cannot be written is silently not used."""
    directory = cache_dir()
    if directory is None:
        return
    path = os.path.join(directory, key[:2], key)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        for name, data in blobs.items():
            write_atomically(f"{path}.{name}", data)
        digests = {name: hashlib.sha256(data).hexdigest() for name, data in blobs.items()}
        meta = {**meta, "blobs": digests}
        write_atomically(path + ".json", json.dumps(meta).encode())  # last: marks it complete
    except OSError:
        return
