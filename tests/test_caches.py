"""The on-disk caches (runtime/private_cache.py, compiler mode's dropin_cache.py, `check`'s
reference libraries): private directories only, every input of the output in the key, damaged
entries rebuilt and never used, bounded size with least-recently-used eviction, and concurrent
writers that never corrupt an entry."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest
from conftest import BLUR3_C
from pycc_stencil import code_stamp, dropin_cache
from pycc_stencil.dropin_command import parse_command
from pycc_stencil.runtime import private_cache, reference
from pycc_stencil.runtime.check import CheckOptions, check_file
from pycc_stencil.runtime.private_cache import (
    SHARDS,
    entry_path,
    private_directory,
    read_entry,
    write_entry,
)
from test_compiler_mode import CC, PYCC, clean_env, read_report, run, units_for

KERNEL = """\
void smooth(int n, float *restrict a, const float *restrict b)
{
    for (int i = 1; i < n - 1; i++)
        a[i] = (b[i - 1] + b[i] + b[i + 1]) / 3.0f;
}
"""
MAIN = """\
#include <stdio.h>
void smooth(int n, float *restrict a, const float *restrict b);
int main(void)
{
    float a[5] = {0}, b[5] = {1.5f, -2.25f, 0.1f, 7.0f, 3.0f};
    smooth(5, a, b);
    printf("%a %a %a\\n", a[1], a[2], a[3]);
    return 0;
}
"""


@pytest.fixture
def store(tmp_path, monkeypatch) -> str:
    """A fresh private cache directory, no size limit from the caller's environment."""
    monkeypatch.delenv("PYCC_CACHE_MAX_SIZE", raising=False)
    monkeypatch.setattr(private_cache, "_warned", set())
    directory = private_directory(str(tmp_path / "cache"))
    assert directory is not None
    return directory


# -------------------------------------------------------------------------- damaged entries


def test_an_entry_reads_back_and_a_hit_refreshes_its_time(store):
    write_entry(store, "ab" * 32, b"payload")
    path = entry_path(store, "ab" * 32)
    os.utime(path, (1, 1))
    assert read_entry(store, "ab" * 32) == b"payload"
    assert os.stat(path).st_mtime > 1
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o700


@pytest.mark.parametrize("cut", [0, 1, 10, 27, 35, 67, 68, 69, -1])
def test_a_truncated_entry_is_a_miss_and_is_removed(store, cut):
    """A cut anywhere (in the magic, the length, the digest, the payload) is detected."""
    key, payload = "cd" * 32, bytes(range(256)) * 4
    write_entry(store, key, payload)
    path = Path(entry_path(store, key))
    data = path.read_bytes()
    path.write_bytes(data[:cut])
    assert read_entry(store, key) is None
    assert not path.exists()
    write_entry(store, key, payload)  # the caller's rebuild
    assert read_entry(store, key) == payload


@pytest.mark.parametrize("damage", ["flipped", "appended", "foreign"])
def test_a_damaged_entry_is_a_miss(store, damage):
    key = "ef" * 32
    write_entry(store, key, b"x" * 1000)
    path = Path(entry_path(store, key))
    data = bytearray(path.read_bytes())
    if damage == "flipped":
        data[-500] ^= 1
    elif damage == "appended":
        data += b"\0"
    else:
        data = bytearray(b"x" * len(data))
    path.write_bytes(bytes(data))
    assert read_entry(store, key) is None


# -------------------------------------------------------------------------- size and eviction


def _key(shard: str, number: int) -> str:
    return shard + f"{number:062x}"


def test_eviction_removes_the_least_recently_used_entries_of_the_shard(store, monkeypatch):
    """Each shard holds its share of PYCC_CACHE_MAX_SIZE (here 1 KiB of 256 KiB): a write
    over it removes the oldest entries (a hit makes an entry young) down to 80 %."""
    monkeypatch.setenv("PYCC_CACHE_MAX_SIZE", "256K")
    keys = [_key("00", n) for n in range(4)]
    for age, key in enumerate(keys[:3]):
        write_entry(store, key, b"." * 200)  # 200 B + the frame: about 270 B each
        os.utime(entry_path(store, key), (1000 + age, 1000 + age))
    write_entry(store, _key("01", 0), b"." * 900)  # another shard: not counted
    assert read_entry(store, keys[0]) is not None  # the oldest is used again
    write_entry(store, keys[3], b"." * 200)  # 4 x 270 B > 1 KiB: trim to 819 B
    left = {k for k in keys if os.path.exists(entry_path(store, k))}
    assert left == {keys[0], keys[2], keys[3]}, left
    assert os.path.exists(entry_path(store, _key("01", 0)))


def test_a_write_removes_temporaries_of_killed_writers(store):
    shard = Path(store) / "00"
    shard.mkdir()
    stale, fresh = shard / ".pycc-stencil-stale", shard / ".pycc-stencil-fresh"
    stale.write_bytes(b"partial")
    fresh.write_bytes(b"being written")
    os.utime(stale, (1, 1))
    write_entry(store, _key("00", 1), b"entry")
    assert not stale.exists() and fresh.exists()


@pytest.mark.parametrize(
    "value, expected",
    [(None, 1 << 30), ("0", None), ("2G", 2 << 30), ("64K", 64 << 10), ("lots", 1 << 30)],
)
def test_the_size_limit_is_read_like_ccache_max_size(monkeypatch, capsys, value, expected):
    monkeypatch.setattr(private_cache, "_warned", set())
    if value is None:
        monkeypatch.delenv("PYCC_CACHE_MAX_SIZE", raising=False)
    else:
        monkeypatch.setenv("PYCC_CACHE_MAX_SIZE", value)
    limit = private_cache.max_bytes()
    assert limit == expected if expected else limit > 1 << 60  # 0: no limit
    warning = capsys.readouterr().err
    assert ("is not a size" in warning) == (value == "lots"), warning


# -------------------------------------------------------------------------- concurrency


def _hammer(directory: str, worker: int) -> list[str]:
    """Write a shared key and an own key, read both back, many times; return what was wrong."""
    wrong = []
    for round_ in range(40):
        mine = (f"{worker:02x}" * 32)[:64]
        shared = "ff" * 32
        write_entry(directory, shared, bytes([round_ % 7]) * 5000)
        write_entry(directory, mine, bytes([worker]) * (1000 + round_))
        got = read_entry(directory, shared)
        if got is not None and (len(got) != 5000 or len(set(got)) != 1):
            wrong.append(f"shared entry read as {len(got)} bytes")
        got = read_entry(directory, mine)
        if got is not None and got != bytes([worker]) * (1000 + round_):
            wrong.append(f"own entry of worker {worker} read wrong")
    return wrong


def test_concurrent_writers_never_corrupt_an_entry(store, monkeypatch):
    """8 processes write one shared key and one key each while a small limit makes them
    trim each other's shards: every read is a whole entry or a miss, nothing partial is
    left behind."""
    monkeypatch.setenv("PYCC_CACHE_MAX_SIZE", str(SHARDS * 8 << 10))  # 8 KiB per shard
    with ProcessPoolExecutor(8, mp_context=get_context("fork")) as pool:
        results = list(pool.map(_hammer, [store] * 8, range(8)))
    assert results == [[]] * 8
    assert read_entry(store, "ff" * 32) is not None
    leftovers = [p for p in Path(store).rglob(".*") if p.is_file()]
    assert not leftovers, leftovers


# -------------------------------------------------------------------------- private directories


def test_a_new_cache_directory_is_created_private(tmp_path):
    path = tmp_path / "a" / "b" / "cache"
    assert private_directory(str(path)) == str(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


def test_a_cache_directory_that_cannot_be_made_is_silently_no_cache(tmp_path, capsys):
    (tmp_path / "file").write_bytes(b"")
    assert private_directory(str(tmp_path / "file" / "cache")) is None
    assert capsys.readouterr().err == ""


def test_group_writable_is_fine_for_the_users_private_group(tmp_path):
    """Under umask 002 (user private groups) every directory is group-writable, by a group of
    one: the cache is used."""
    if not private_cache._private_group(os.getgid()):
        pytest.skip("the user has no private group")
    previous = os.umask(0o002)
    try:
        (tmp_path / "home").mkdir()
        assert stat.S_IMODE((tmp_path / "home").stat().st_mode) == 0o775
        path = tmp_path / "home" / ".cache" / "pycc-stencil" / "compile"
        assert private_directory(str(path)) == str(path)
    finally:
        os.umask(previous)


@pytest.mark.parametrize("plant", ["world-writable", "group-writable", "symlink", "file",
                                   "other owner", "open parent"])  # fmt: skip
def test_a_directory_others_can_change_is_refused(tmp_path, monkeypatch, capsys, plant):
    """What another local user could have created first (or can write into) is never used."""
    monkeypatch.setattr(private_cache, "_warned", set())
    path = tmp_path / "cache"
    if plant == "world-writable":
        path.mkdir()
        path.chmod(0o777)
    elif plant == "group-writable":
        if os.getuid() != 0:
            pytest.skip("only root can give a directory to a group it is not in")
        path.mkdir()
        path.chmod(0o770)
        os.chown(path, -1, 65534)
    elif plant == "symlink":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        path.symlink_to(tmp_path / "elsewhere")
    elif plant == "file":
        path.write_bytes(b"")
    elif plant == "other owner":
        if os.getuid() != 0:
            pytest.skip("only root can give a directory away")
        path.mkdir(mode=0o700)
        os.chown(path, 65534, 65534)
    else:
        (tmp_path / "open").mkdir()
        (tmp_path / "open").chmod(0o777)  # not sticky: another user can swap `cache`
        path = tmp_path / "open" / "cache"
    assert private_directory(str(path)) is None
    assert private_directory(str(path)) is None
    warning = capsys.readouterr().err
    assert warning.count("warning: cache directory") == 1, warning


# -------------------------------------------------------------------------- the compile key


def _command(*args: str):
    return parse_command(["-O2", "-c", "k.c", *args])


def _environment(*args: str) -> str:
    return dropin_cache.environment("cc", _command(*args))


def test_the_key_changes_with_the_tool_source(tmp_path, monkeypatch):
    package = tmp_path / "pycc_stencil"
    shutil.copytree(
        Path(dropin_cache.__file__).parent / "runtime", package / "runtime", dirs_exist_ok=True
    )
    monkeypatch.setattr(code_stamp, "PACKAGE", str(package))
    before = _environment()
    assert _environment() == before
    edited = package / "runtime" / "private_cache.py"
    edited.write_text(edited.read_text() + "\n# edited\n")
    assert _environment() != before


def test_the_key_changes_with_the_compiler(tmp_path):
    versions = []
    for version in ("12.2.0", "12.3.0"):
        script = tmp_path / version / "cc"
        script.parent.mkdir()
        script.write_text(f"#!/bin/sh\necho 'cc (Debian {version}) {version}'\n")
        script.chmod(0o755)
        versions.append(dropin_cache.environment(str(script), _command()))
    assert versions[0] != versions[1]


def test_the_host_cpu_is_in_the_key_only_under_native_flags(tmp_path, monkeypatch):
    cpus = []
    for flags in ("avx2 fma", "avx2 fma avx512f"):
        info = tmp_path / f"cpuinfo-{len(cpus)}"
        info.write_text(f"processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: {flags}\n\n")
        monkeypatch.setattr(dropin_cache, "_CPUINFO", str(info))
        cpus.append([_environment(), _environment("-march=native"), _environment("-mtune=native")])
    assert cpus[0][0] == cpus[1][0], "a build without native flags depends on the host CPU"
    assert cpus[0][1] != cpus[1][1] and cpus[0][2] != cpus[1][2]
    assert "avx512f" in dropin_cache.host_cpu("cc", _command("-march=native"))


def test_the_key_changes_with_the_cache_model(monkeypatch):
    """The cache sizes the tile model uses (emit.cc_machine: flags, then the test override)."""
    monkeypatch.delenv("PYCC_CACHE_L2", raising=False)
    keys = {
        _environment(),
        _environment("-fpycc-cache-size=1M"),
        _environment("--param=l2-cache-size=256"),
    }
    monkeypatch.setenv("PYCC_CACHE_L2", "16K")
    keys.add(_environment())
    assert len(keys) == 4


def test_the_key_has_every_pycc_option_but_the_reporting_ones():
    plain = _environment()
    assert _environment("-fpycc-report=r.json", "-Wno-pycc-fallback") == plain
    assert _environment("-fpycc-cache-size=1M") != plain
    assert _environment("-fpycc-passes=") != plain


# -------------------------------------------------------------------------- compiler mode


def _build(tmp_path: Path, env: dict[str, str], name: str) -> tuple[str, dict]:
    report = tmp_path / f"{name}.jsonl"
    run([PYCC, "-O2", "-c", "k.c", "-o", f"{name}.o"], tmp_path, dict(env, PYCC_REPORT=str(report)))
    run([CC, "-o", name, "main.o", f"{name}.o"], tmp_path, env)
    (unit,) = units_for(read_report(report), "k.c")
    return run([f"./{name}"], tmp_path, env).stdout, unit


def test_a_truncated_compile_entry_is_rebuilt(tmp_path):
    """Compiler mode: an entry cut short is a miss (the kernel compiled again, the program
    right), and the rebuilt entry is a hit."""
    (tmp_path / "k.c").write_text(KERNEL)
    (tmp_path / "main.c").write_text(MAIN)
    env = clean_env(tmp_path / "cache")
    run([CC, "-O2", "-c", "main.c", "k.c"], tmp_path, env)
    run([CC, "-o", "ref", "main.o", "k.o"], tmp_path, env)
    expected = run(["./ref"], tmp_path, env).stdout
    output, unit = _build(tmp_path, env, "cold")
    assert (output, unit["cache"]) == (expected, "miss")
    # the result and the outputs of the compile (dropin_replay)
    entries = {p: p.read_bytes() for p in (tmp_path / "cache").rglob("*") if p.is_file()}
    assert len(entries) == 2
    for cut in (2, 1):
        for entry, whole in entries.items():
            entry.write_bytes(whole[: len(whole) // cut - (cut == 1)])
        output, unit = _build(tmp_path, env, f"cut{cut}")
        assert (output, unit["cache"]) == (expected, "miss"), cut
        assert unit["functions"][0]["compiled_by"] == "pycc-stencil"
    output, unit = _build(tmp_path, env, "warm")
    assert (output, unit["cache"]) == (expected, "hit")


def test_a_cache_directory_others_can_write_is_not_used(tmp_path):
    (tmp_path / "k.c").write_text(KERNEL)
    (tmp_path / "main.c").write_text(MAIN)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)
    env = clean_env(cache)
    run([CC, "-O2", "-c", "main.c"], tmp_path, env)
    done = run([PYCC, "-O2", "-c", "k.c"], tmp_path, env)
    assert f"warning: cache directory '{cache}' not used" in done.stderr
    assert not any(cache.iterdir())


# -------------------------------------------------------------------------- check's reference


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A user cache (`XDG_CACHE_HOME`) and a temporary directory of the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setattr(private_cache, "_warned", set())
    return tmp_path


def _check_blur3(c_file, monkeypatch) -> tuple[list[str], int]:
    """check's results for blur3, and how many times cc compiled the reference."""
    compiles, original = [], reference._run

    def counting(command: list[str], stdin: str):
        if "-c" in command:
            compiles.append(command)
        return original(command, stdin)

    monkeypatch.setattr(reference, "_run", counting)
    results = check_file(c_file(BLUR3_C), [], CheckOptions(params={"n": "37"}))
    return [str(r) for r in results], len(compiles)


BLUR3_OK = ["OK blur3: bit-exact, 2 buffers, 76 elements"]


def test_reference_libraries_are_cached_in_a_private_user_directory(c_file, home, monkeypatch):
    assert _check_blur3(c_file, monkeypatch) == (BLUR3_OK, 1)
    cache = home / "xdg" / "pycc-stencil" / "reference"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert len([p for p in cache.rglob("*") if p.is_file()]) == 1
    assert _check_blur3(c_file, monkeypatch) == (BLUR3_OK, 0)  # a hit
    assert not any((home / "tmp").iterdir()), "a temporary directory was left behind"


def test_a_damaged_reference_library_is_rebuilt(c_file, home, monkeypatch):
    _check_blur3(c_file, monkeypatch)
    (entry,) = [p for p in (home / "xdg").rglob("*") if p.is_file()]
    entry.write_bytes(entry.read_bytes()[:-100])
    assert _check_blur3(c_file, monkeypatch) == (BLUR3_OK, 1)
    assert _check_blur3(c_file, monkeypatch) == (BLUR3_OK, 0)


@pytest.mark.parametrize("plant", ["world-writable", "symlink"])
def test_a_reference_cache_others_can_write_is_never_loaded(
    c_file, home, monkeypatch, capsys, plant
):
    """Another local user creates the directory first (or a link to one of theirs) and fills
    it: check builds in a private temporary directory instead, says so once, loads nothing
    from it and writes nothing into it."""
    cache = home / "xdg" / "pycc-stencil" / "reference"
    cache.parent.mkdir(parents=True)
    if plant == "symlink":
        (home / "theirs").mkdir(mode=0o700)
        cache.symlink_to(home / "theirs")
        planted = home / "theirs"
    else:
        cache.mkdir()
        cache.chmod(0o777)
        planted = cache
    for _ in range(2):
        assert _check_blur3(c_file, monkeypatch) == (BLUR3_OK, 1)
    assert not any(planted.iterdir())
    warnings = capsys.readouterr().err
    assert warnings.count(f"warning: cache directory '{cache}' not used") == 1, warnings
    assert not any((home / "tmp").iterdir())
