"""pycc-stencil's on-disk caches (compiler mode's results, `check`'s reference libraries):
private to the user, bounded in size, safe to share between concurrent builds.

A cache directory is used only when this user owns it and nobody else can write to it or to
a directory above it (sticky ones such as /tmp excepted): otherwise another local user could
plant an entry, e.g. a library that `check` then loads. Each entry is one file,
`<directory>/<key[:2]>/<key>`, written under a temporary name and renamed into place, so
readers never see a partial one; it carries its length and SHA-256, so a truncated or damaged
entry is a miss (and is removed), never used. A hit refreshes the entry's mtime; a write trims
the entry's shard (one of 256) to its share of `PYCC_CACHE_MAX_SIZE`, least recently used
first, as ccache cleans one subdirectory at a time: no operation looks at the whole cache.
"""

from __future__ import annotations

import os
import stat
import sys
import time

#: `PYCC_CACHE_MAX_SIZE` when unset: 1 GiB per cache directory (`0`: no limit)
DEFAULT_MAX_BYTES = 1 << 30
MAX_SIZE_VARIABLE = "PYCC_CACHE_MAX_SIZE"
SHARDS = 256  # the key's first two hex digits
#: a shard over its share is trimmed to this fraction of it, so not every write trims
TRIM_TO = 0.8
#: temporary files older than this were left by killed writers
STALE_SECONDS = 3600
_MAGIC = b"pycc-stencil cache entry 1\n"
_LENGTH_BYTES = 8
#: SHA-256's digest size (hashlib, like pwd, grp and the atomic writer, is imported where it
#: is used: the front door asks `private_directory` on every step and needs none of them)
_DIGEST_BYTES = 32

_warned: set[str] = set()


def user_cache_dir(name: str) -> str:
    """`$XDG_CACHE_HOME/pycc-stencil/<name>`, `~/.cache/pycc-stencil/<name>` by default."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pycc-stencil", name)


def compile_cache_dir() -> str | None:
    """Compiler mode's cache: `$PYCC_CACHE_DIR`, else `$XDG_CACHE_HOME/pycc-stencil/compile`
    (or under `~/.cache`), when it is private to the user; None when `PYCC_NO_CACHE=1`."""
    if os.environ.get("PYCC_NO_CACHE") == "1":
        return None
    return private_directory(os.environ.get("PYCC_CACHE_DIR") or user_cache_dir("compile"))


def private_directory(path: str) -> str | None:
    """`path` (created 0700 if missing) when it is safe to load from; otherwise None, with
    one warning per process and path saying why another user could change it. A directory
    that cannot be made (`HOME=/nonexistent`, a read-only home) is silently no cache: a build
    step's stderr stays cc's."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except FileExistsError:
        pass  # a file or a dangling link is there: `_unsafe` says which
    except OSError:
        return None
    try:
        problem = _unsafe(path)
    except OSError:
        return None
    if problem is None:
        return path
    if path not in _warned:
        _warned.add(path)
        print(
            f"pycc-stencil: warning: cache directory '{path}' not used: {problem}", file=sys.stderr
        )
    return None


def _unsafe(path: str) -> str | None:
    """Why another user could change what is in `path`, or None."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    if info.st_uid != os.getuid():
        return f"it belongs to user {info.st_uid}"
    if _others_can_write(info):
        return f"other users can write to it (mode {stat.S_IMODE(info.st_mode):04o})"
    directory = os.path.realpath(path)
    while directory != os.path.dirname(directory):
        directory = os.path.dirname(directory)
        info = os.stat(directory)
        if info.st_uid not in (0, os.getuid()) or (
            _others_can_write(info) and not info.st_mode & stat.S_ISVTX
        ):
            return f"other users can change '{directory}'"
    return None


def _others_can_write(info: os.stat_result) -> bool:
    """World-writable, or group-writable for a group that is not the user's private group
    (as umask 002 makes every directory on systems with such groups)."""
    return bool(info.st_mode & 0o002) or bool(
        info.st_mode & 0o020 and not _private_group(info.st_gid)
    )


def _private_group(gid: int) -> bool:
    """`gid` is the user's own group: their primary group, named after them, no other member."""
    import grp
    import pwd

    try:
        user, group = pwd.getpwuid(os.getuid()), grp.getgrgid(gid)
    except KeyError:
        return False
    return (
        gid == user.pw_gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}
    )


def entry_path(directory: str, key: str) -> str:
    return os.path.join(directory, key[:2], key)


def read_entry(directory: str, key: str) -> bytes | None:
    """The payload stored under `key`, or None (missing, truncated or damaged: removed)."""
    path = entry_path(directory, key)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    payload = _unframe(data)
    if payload is None:
        _remove(path)
        return None
    try:
        os.utime(path)  # recently used: evicted last
    except OSError:
        pass  # evicted meanwhile by another build: the payload is still good
    return payload


def write_entry(directory: str, key: str, payload: bytes) -> None:
    """Store `payload` under `key`, then trim its shard; a cache that cannot be written is
    silently not used."""
    from ..emit.output_files import write_atomically  # (signal, contextlib: not for readers)

    path = entry_path(directory, key)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        write_atomically(path, _frame(payload))
        trim(os.path.dirname(path), max_bytes() // SHARDS)
    except OSError:
        return


def _frame(payload: bytes) -> bytes:
    import hashlib

    length = len(payload).to_bytes(_LENGTH_BYTES, "little")
    return _MAGIC + length + hashlib.sha256(payload).digest() + payload


def _unframe(data: bytes) -> bytes | None:
    import hashlib

    header = len(_MAGIC) + _LENGTH_BYTES + _DIGEST_BYTES
    if len(data) < header or not data.startswith(_MAGIC):
        return None
    length = int.from_bytes(data[len(_MAGIC) : len(_MAGIC) + _LENGTH_BYTES], "little")
    digest, payload = data[header - _DIGEST_BYTES : header], data[header:]
    if len(payload) != length or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def max_bytes() -> int:
    """`PYCC_CACHE_MAX_SIZE` (`500M`, `2G`, `0` for no limit), else DEFAULT_MAX_BYTES."""
    text = os.environ.get(MAX_SIZE_VARIABLE, "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    from ..ir_passes.core.machine_model import parse_size  # not on the path of a cache hit

    try:
        size = parse_size(text)
    except ValueError:
        size = -1
    if size < 0:
        if MAX_SIZE_VARIABLE not in _warned:
            _warned.add(MAX_SIZE_VARIABLE)
            print(
                f"pycc-stencil: warning: {MAX_SIZE_VARIABLE}='{text}' is not a size; "
                f"using {DEFAULT_MAX_BYTES >> 30}G",
                file=sys.stderr,
            )
        return DEFAULT_MAX_BYTES
    return size or sys.maxsize


def trim(shard: str, budget: int) -> None:
    """When the entries of `shard` exceed `budget` bytes, remove the least recently used
    down to TRIM_TO of it; temporary files of killed writers go too."""
    entries, total, now = [], 0, time.time()
    with os.scandir(shard) as found:
        for entry in found:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # removed by another build
            if entry.name.startswith("."):
                if now - info.st_mtime > STALE_SECONDS:
                    _remove(entry.path)
                continue
            entries.append((info.st_mtime, entry.path, info.st_size))
            total += info.st_size
    if total <= budget:
        return
    for _, path, size in sorted(entries):
        if total <= budget * TRIM_TO:
            break
        _remove(path)
        total -= size


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass  # already gone (another build trimmed it)
