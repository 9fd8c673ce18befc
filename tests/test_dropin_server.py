"""The warm compile server (`dropin_server`): a step it serves behaves exactly as one that
does all of its work itself, and it goes away when it should.

Each test has a server of its own (a private `$XDG_RUNTIME_DIR`), started by a first step that
compiles alone, then asked for by `pycc-stencil server status` (how many requests it took).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from pycc_stencil import dropin_server
from pycc_stencil.dropin_prescan import has_locality_nest
from pycc_stencil.dropin_textscan import may_have_locality_nest
from test_compiler_mode import CC, PYCC, clean_env
from test_temp_files import KERNEL

#: an iterated 2-D stencil: taken over at -O3 (time tiling)
STENCIL = """\
#include "scale.h"
static int unused_helper(int x) { int y; return x; }
void jacobi(int T, int n, double a[restrict n][n], double b[restrict n][n])
{
    for (int t = 0; t < T; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                b[i][j] = SCALE * (a[i][j] + a[i - 1][j] + a[i + 1][j] + a[i][j - 1]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                a[i][j] = b[i][j];
    }
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """src/k.c including inc/scale.h (found through a relative -I), a private runtime
    directory for the socket, and a private TMPDIR."""
    (tmp_path / "src").mkdir()
    (tmp_path / "inc").mkdir()
    (tmp_path / "src" / "k.c").write_text(STENCIL)
    (tmp_path / "inc" / "scale.h").write_text("#define SCALE 0.25\n")
    (tmp_path / "tmp").mkdir()
    # a socket's path has at most 107 bytes: the runtime directory is short, not in tmp_path
    with tempfile.TemporaryDirectory(prefix="pycc-run-", dir="/tmp") as runtime:
        (tmp_path / "run").symlink_to(runtime)
        yield tmp_path
        subprocess.run([PYCC, "server", "stop"], env=_env(tmp_path, "stop"))


def _env(root: Path, cache: str, **extra: str) -> dict[str, str]:
    """The steps' environment; each `cache` name is a cache of its own (a real compile)."""
    return clean_env(
        root / cache,
        XDG_RUNTIME_DIR=os.readlink(root / "run"),
        TMPDIR=str(root / "tmp"),
        PYCC_TAKEOVER="",
        **extra,
    )


def _step(
    root: Path, cache: str, output: str, *flags: str, env: dict | None = None, **popen
) -> subprocess.Popen:
    argv = [PYCC, "-O3", "-Wall", *flags, "-I", "../inc", "-c", "k.c", "-o", output]
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen(argv, cwd=root / "src", env=env or _env(root, cache), **popen)


def _status(root: Path) -> tuple[int, int] | None:
    """(requests served, server pid), None if no server answers."""
    done = subprocess.run(
        [PYCC, "server", "status"], env=_env(root, "status"), capture_output=True, text=True
    )
    words = done.stdout.split()
    return (int(words[2]), int(words[4])) if done.returncode == 0 else None


def _started(root: Path) -> tuple[int, int]:
    """Start the server with a first step (compiled alone) and wait until it answers."""
    first = _step(root, "first", "first.o")
    assert first.wait(120) == 0, first.stderr.read()
    deadline = time.monotonic() + 30
    while (status := _status(root)) is None:
        assert time.monotonic() < deadline, "no server started"
        time.sleep(0.1)
    return status


def _serving(root: Path, monkeypatch, idle: str = "60") -> subprocess.Popen:
    """The server for the steps' environment, started directly (as a first step would
    start it), once it answers."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", os.readlink(root / "run"))
    server = subprocess.Popen(
        [sys.executable, "-m", "pycc_stencil.dropin_server", dropin_server.socket_path()],
        env=_env(root, "server", PYCC_SERVER_IDLE=idle),
    )
    deadline = time.monotonic() + 30
    while _status(root) is None:
        assert time.monotonic() < deadline and server.poll() is None, "no server started"
        time.sleep(0.05)
    return server


def _descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        found.update(int(c) for c in children)
        todo += [int(c) for c in children]
    return found


def test_a_served_step_builds_what_a_lone_one_does(project):
    """The same object bytes, report and diagnostics as without the server, through a
    relative include directory, from the step's directory; the server counts the step."""
    served_before, _ = _started(project)
    alone = subprocess.run(
        [PYCC, "-O3", "-Wall", "-I", "../inc", "-c", "k.c", "-o", "alone.o"],
        cwd=project / "src", env=_env(project, "alone", PYCC_SERVER="0"),
        capture_output=True, text=True,
    )  # fmt: skip
    served = _step(project, "served", "served.o", "-fpycc-report=report.json")
    errors = served.stderr.read().decode()
    assert served.wait(120) == 0, errors
    assert _status(project)[0] == served_before + 2  # the step, then this status request
    src = project / "src"
    assert (src / "served.o").read_bytes() == (src / "alone.o").read_bytes()
    assert "unused variable" in errors and errors == alone.stderr.replace("alone.o", "served.o")
    unit = json.loads((src / "report.json").read_text())
    assert unit["status"] == "pycc" and unit["cache"] == "miss", unit


def test_a_served_step_keeps_the_steps_umask_and_exit_status(project, monkeypatch):
    _serving(project, monkeypatch)
    step = _step(project, "umask", "masked.o", preexec_fn=lambda: os.umask(0o077))
    assert step.wait(120) == 0, step.stderr.read()
    reference = subprocess.run(
        [CC, "-O3", "-I", "../inc", "-c", "k.c", "-o", "cc.o"], cwd=project / "src",
        preexec_fn=lambda: os.umask(0o077),
    )  # fmt: skip
    assert reference.returncode == 0
    mode = (project / "src" / "masked.o").stat().st_mode & 0o777
    assert mode == (project / "src" / "cc.o").stat().st_mode & 0o777 == 0o600
    (project / "src" / "k.c").write_text(STENCIL.replace("a[i][j] = b[i][j];", "a[i][j] = b[i][j]"))
    broken = _step(project, "broken", "broken.o")
    errors = broken.stderr.read().decode()
    assert broken.wait(120) == 1 and "k.c:11:" in errors and "error:" in errors, errors
    assert not (project / "src" / "broken.o").exists()


def _slow_file(project: Path) -> None:
    (project / "src" / "k.c").write_text("".join(KERNEL.format(k=k) for k in range(6)))


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGKILL])
def test_a_signal_to_a_served_step_ends_its_worker_cleanly(project, number, monkeypatch):
    """SIGINT: the step passes it on and dies by it, as a lone step would. SIGKILL (the step
    cannot pass it on): the server sees the step gone and stops the worker. Either way the
    worker's scratch files and the partial output are gone, and so is the worker."""
    server = _serving(project, monkeypatch).pid
    _slow_file(project)
    # as from `make -j` (GNU make 4.3 names its jobserver pipes but closes them in a
    # recipe): the step's socket to the server gets one of their numbers, and must stay
    # the step's alone, or the server never sees the step go
    env = _env(project, "slow", MAKEFLAGS=" -j2 --jobserver-auth=3,4")
    step = _step(project, "slow", "slow.o", env=env)
    scratch = project / "tmp"
    deadline = time.monotonic() + 120
    while not any(scratch.glob("pycc-stencil-*")) and step.poll() is None:
        assert time.monotonic() < deadline, "the work never started"
        time.sleep(0.005)
    workers = _descendants(server)
    assert workers, "no worker under the server"
    if Path(f"/proc/{step.pid}/task/{step.pid}/children").read_text().split():
        step.kill()  # (its own compile: the server did not answer within 10 s)
        pytest.skip("the step compiled alone: the machine is too loaded for its server")
    step.send_signal(number)
    step.wait(60)
    assert step.returncode == -number
    assert b"Traceback" not in step.stderr.read()
    deadline = time.monotonic() + 60
    while workers & _descendants(server) or list(scratch.iterdir()):
        assert time.monotonic() < deadline, (
            workers & _descendants(server),
            list(scratch.iterdir()),
        )
        time.sleep(0.05)
    assert not (project / "src" / "slow.o").exists()
    assert not [p for p in (project / "src").rglob(".*") if p.is_file()]


def test_the_server_goes_when_stopped_or_idle(project, monkeypatch):
    server = _serving(project, monkeypatch)
    assert subprocess.run([PYCC, "server", "stop"], env=_env(project, "stop")).returncode == 0
    assert server.wait(30) == 0 and _status(project) is None
    idle = _serving(project, monkeypatch, idle="1")
    assert idle.wait(30) == 0  # (asking its status meanwhile would keep it busy)
    assert _status(project) is None and not list(
        Path(os.readlink(project / "run")).glob("*/*.sock")
    )


def test_without_the_server_no_server_starts(project):
    env = _env(project, "off", PYCC_SERVER="0")
    for _ in range(2):
        done = subprocess.run(
            [PYCC, "-O3", "-I", "../inc", "-c", "k.c", "-o", "off.o"], cwd=project / "src", env=env
        )
        assert done.returncode == 0
    assert _status(project) is None
    assert not list((project / "run").glob("*/*.sock"))


def _server_processes(root: Path) -> list[int]:
    """The processes running a server for the steps' runtime directory (its socket's path
    is on the server's command line, from the moment the step that starts it returns)."""
    runtime = os.readlink(root / "run").encode()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(w.startswith(runtime) for w in words) and b"pycc_stencil.dropin_server" in words:
            found.append(int(entry.name))
    return found


def test_a_warm_step_starts_no_server_a_cold_one_does(project):
    """Only a step that has to compile the kernels starts the server: a warm build gives
    back what the cache holds and loads nothing the server preloads."""
    alone = _env(project, "cache", PYCC_SERVER="0")
    assert _step(project, "cache", "k.o", env=alone).wait(120) == 0  # fills the cache
    assert _step(project, "cache", "k.o").wait(120) == 0  # given back
    assert _server_processes(project) == []
    assert _step(project, "cold", "k.o").wait(120) == 0
    assert _server_processes(project)


def test_a_step_whose_unit_the_scan_clears_starts_no_server(project):
    """A file that is preprocessed (its text's macro may hide an access) and whose tokens
    then hold no nest the passes transform is cc's: nothing for a server to preload for."""
    (project / "src" / "k.c").write_text(
        "#define GET(p, i) (p)[(i)]\n"
        "void f(int T, int n, double *a, double *b) { for (int t = 0; t < T; t++)\n"
        " for (int i = 0; i < n; i++) b[i] = GET(a, i) * 2; }\n"
    )
    source = project / "src" / "k.c"
    assert may_have_locality_nest(str(source), [])
    assert not has_locality_nest(subprocess.run([CC, "-E", source], capture_output=True).stdout)
    assert _step(project, "cold", "k.o").wait(120) == 0
    assert _server_processes(project) == []


def test_the_server_is_per_code_and_interpreter_settings(monkeypatch):
    """A `PYTHON*` variable changes how Python runs the server's code: another server."""
    before = dropin_server.code_key()
    monkeypatch.setenv("PYTHONWARNINGS", "error")
    assert dropin_server.code_key() != before
    monkeypatch.delenv("PYTHONWARNINGS")
    assert dropin_server.code_key() == before


def _lone_and_served(project: Path, monkeypatch, name: str, **popen) -> list:
    """(exit status, stderr, object bytes or None) of the step alone, then served."""
    _serving(project, monkeypatch)
    results = []
    for served in (False, True):
        count = _status(project)[0]
        output = f"{name}-{served}.o"
        env = _env(project, f"{name}-{served}", PYCC_SERVER="1" if served else "0")
        step = _step(project, "", output, env=env, **popen)
        errors = step.stderr.read().decode() if step.stderr else ""
        status = step.wait(120)
        made = project / "src" / output
        results.append(
            (status, errors.replace(output, "OUT"), made.read_bytes() if made.exists() else None)
        )
        asked = _status(project)[0] - count - 1  # (less this status request)
        assert asked == (1 if served else 0), "the served step did not reach the server"
    return results


def test_a_step_with_few_descriptors_builds_as_alone(project, monkeypatch):
    """`ulimit -n 64`: the worker still places the step's streams (or the step works alone);
    never a success without an object."""
    limit = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))  # noqa: E731
    alone, served = _lone_and_served(project, monkeypatch, "few", preexec_fn=limit)
    assert alone[0] == 0 and alone[2] is not None
    assert served == alone


@pytest.mark.sweep  # the stdout-closed step takes the same path in the default run
def test_a_step_with_stderr_closed_builds_as_alone(project, monkeypatch):
    """`2>&-`: the warnings cc cannot write make it fail, alone or served alike."""
    closed = lambda: os.close(2)  # noqa: E731
    alone, served = _lone_and_served(project, monkeypatch, "quiet", stderr=None, preexec_fn=closed)
    assert served[0] == alone[0] and served[2] == alone[2]


def test_the_server_imports_nothing_from_the_first_steps_directory(project, monkeypatch):
    """A project file named like a module the server imports (`random.py`) stays the
    project's: the server starts in / without a working directory on sys.path."""
    marker = project / "imported"
    (project / "src" / "random.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    first = _step(project, "first", "first.o")
    assert first.wait(120) == 0, first.stderr.read()
    deadline = time.monotonic() + 30
    while _status(project) is None:
        assert time.monotonic() < deadline, "no server started"
        time.sleep(0.1)
    served = _step(project, "second", "second.o")
    assert served.wait(120) == 0, served.stderr.read()
    assert not marker.exists()


def _can_sandbox() -> bool:
    try:
        return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


@pytest.mark.skipif(not _can_sandbox(), reason="no mount namespaces here (unshare -m)")
def test_a_step_in_a_sandbox_compiles_the_sandboxs_file(project, monkeypatch):
    """A step in another mount namespace, where the source's directory shows other files,
    compiles the file it sees into the directory it sees, as a lone step does (the server
    outside would see the outer files): a server of its own, started there."""
    _serving(project, monkeypatch)
    inner = project / "inner"
    inner.mkdir()
    (inner / "k.c").write_text(STENCIL.replace("SCALE *", "0.75 *"))
    src = project / "src"
    script = (
        "mount --make-rprivate / && mount --bind {inner} {src} && cd {src} && "
        "{pycc} -O3 -I ../inc -c k.c -o k.o"
    )
    for name, served in (("alone", "0"), ("served", "1")):
        env = _env(project, f"sandbox-{name}", PYCC_SERVER=served)
        command = script.format(inner=inner, src=src, pycc=PYCC)
        done = subprocess.run(["unshare", "-m", "sh", "-c", command], env=env)
        assert done.returncode == 0
        (inner / "k.o").rename(inner / f"{name}.o")
        assert not (src / "k.o").exists(), "written outside the sandbox"
    assert (inner / "served.o").read_bytes() == (inner / "alone.o").read_bytes()
    outer = _step(project, "outer", "outer.o", env=_env(project, "outer", PYCC_SERVER="0"))
    assert outer.wait(120) == 0  # the outer file's object: another constant
    assert (src / "outer.o").read_bytes() != (inner / "served.o").read_bytes()


def test_the_socket_directory_is_private_whatever_the_umask(tmp_path, monkeypatch):
    runtime = Path(tempfile.mkdtemp(prefix="pycc-run-", dir="/tmp"))
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        old = os.umask(0o277)
        try:
            path = dropin_server.socket_path()
        finally:
            os.umask(old)
        assert path is not None
        assert Path(path).parent.stat().st_mode & 0o777 == 0o700
    finally:
        shutil.rmtree(runtime)


def test_a_step_with_stdout_closed_builds_as_alone(project, monkeypatch):
    """`>&-`: nothing is printed there, and no internal error either way."""
    closed = lambda: os.close(1)  # noqa: E731
    alone, served = _lone_and_served(project, monkeypatch, "mute", preexec_fn=closed)
    assert alone[0] == 0 and alone[2] is not None and "internal error" not in alone[1]
    assert served == alone


def test_a_step_gone_before_its_request_leaves_no_handler(project, monkeypatch):
    """A step killed between connecting and sending its request: the server's handler for
    it ends (it once read the closed socket forever)."""
    server = _serving(project, monkeypatch).pid
    count = _status(project)[0]
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(dropin_server.socket_path())
    connection.close()
    assert _status(project)[0] == count + 2  # accepted (before this status request)
    deadline = time.monotonic() + 30
    while _descendants(server):
        assert time.monotonic() < deadline, "a handler outlived its step"
        time.sleep(0.05)
