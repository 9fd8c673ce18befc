"""Temporary files are removed on every exit path: SIGINT, SIGTERM or SIGHUP in the middle of
a compile (compiler mode) or of `check`, `emit` and `tune` leave nothing behind (no
`$TMPDIR/pycc-stencil-*`, no partial output, no cache partials, no worker process), and the
process still dies by the signal, so `make` and the shell see the status they expect."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_compiler_mode import PYCC, clean_env

#: iterated 2-D stencils: at -O3 (time tiling, isl) each takes seconds, so a signal sent
#: once the work has started always lands in the middle of it
KERNEL = """\
void heat{k}(int T, int n, double a[restrict n][n], double b[restrict n][n])
{{
    for (int t = 0; t < T; t++) {{
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                b[i][j] = 0.2 * (a[i][j] + a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                a[i][j] = b[i][j] + {k}.0;
    }}
}}
"""


@pytest.fixture
def slow_file(tmp_path) -> Path:
    path = tmp_path / "slow.c"
    path.write_text("".join(KERNEL.format(k=k) for k in range(6)))
    return path


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _interrupt(
    tmp_path: Path, argv: list[str], number: int, started, ignored: bool = False
) -> list[int]:
    """Run `argv` in tmp_path with a private TMPDIR and cache; once `started(process)` holds,
    send signal `number`; return the worker processes it had then. Asserts death by it, or
    when the caller `ignored` it (nohup), a successful end."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = clean_env(
        tmp_path / "cache",
        TMPDIR=str(scratch),
        XDG_CACHE_HOME=str(tmp_path / "xdg"),
        PYCC_SERVER="0",  # this process's own cleanup (a served step's: test_dropin_server)
    )
    process = subprocess.Popen(
        argv,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # as from an interactive shell (or nohup), whatever the test runner ignores
        preexec_fn=lambda: [
            signal.signal(s, signal.SIG_IGN if ignored and s == number else signal.SIG_DFL)
            for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM)
        ],
    )
    deadline = time.monotonic() + 120
    while not started(process, scratch) and process.poll() is None:
        assert time.monotonic() < deadline, "the work never started"
        time.sleep(0.005)
    workers = _children(process.pid)
    process.send_signal(number)
    _, errors = process.communicate(timeout=60)
    assert process.returncode == (0 if ignored else -number), (process.returncode, errors)
    assert b"Traceback" not in errors, errors.decode()
    return workers


def _assert_nothing_left(tmp_path: Path, workers: list[int], outputs: list[str]) -> None:
    assert not list((tmp_path / "tmp").iterdir()), list((tmp_path / "tmp").iterdir())
    partials = [p for p in tmp_path.rglob(".*") if p.is_file()]
    assert not partials, partials
    for output in outputs:
        assert not (tmp_path / output).exists(), output
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{w}").exists() for w in workers):
        assert time.monotonic() < deadline, f"worker processes {workers} outlived the tool"
        time.sleep(0.01)


def _compiling(process: subprocess.Popen, scratch: Path) -> bool:
    """The scratch directory exists and the forked compile worker runs (not cc -E)."""
    return any(scratch.glob("pycc-stencil-*")) and any(
        b"python" in _command_line(c) for c in _children(process.pid)
    )


def _command_line(pid: int) -> bytes:
    """The process's command line; empty once it has exited (a child of the tool may end
    between being listed and being read)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


#: SIGINT (Ctrl-C) in the default run; the same cleanup under SIGTERM and SIGHUP in the sweep
#: (about 15 s each of waiting for a compile to be half-way)
@pytest.mark.parametrize(
    "number",
    [
        signal.SIGINT,
        pytest.param(signal.SIGTERM, marks=pytest.mark.sweep),
        pytest.param(signal.SIGHUP, marks=pytest.mark.sweep),
    ],
)
def test_a_signal_mid_compile_leaves_nothing_behind(tmp_path, slow_file, number):
    argv = [PYCC, "-O3", "-c", slow_file.name, "-o", "slow.o"]
    workers = _interrupt(tmp_path, argv, number, _compiling)
    assert workers, "the signal did not land during the compile"
    _assert_nothing_left(tmp_path, workers, ["slow.o"])


def _lowering(process: subprocess.Popen, scratch: Path) -> bool:
    """libclang is loaded: the signal handlers are in place and the work has begun."""
    try:
        return b"libclang" in Path(f"/proc/{process.pid}/maps").read_bytes()
    except OSError:
        return False


@pytest.mark.parametrize(
    "command, number",
    [
        (["check", "--passes", "time-tile", "--param", "T=1", "--param", "n=40"], signal.SIGTERM),
        (["emit", "--emit", "llvm", "--passes", "time-tile", "-o", "slow.ll"], signal.SIGHUP),
        (["tune"], signal.SIGINT),
    ],
)
def test_a_signal_ends_a_subcommand_cleanly(tmp_path, slow_file, command, number):
    argv = [PYCC, *command, slow_file.name]
    workers = _interrupt(tmp_path, argv, number, _lowering)
    _assert_nothing_left(tmp_path, workers, ["slow.ll"])


def test_a_signal_the_caller_ignores_stays_ignored(tmp_path):
    """Under `nohup` (SIGHUP ignored) a hangup does not stop the compile."""
    (tmp_path / "k.c").write_text(KERNEL.format(k=0))
    argv = [PYCC, "-O2", "-c", "k.c", "-o", "k.o"]
    _interrupt(tmp_path, argv, signal.SIGHUP, _compiling, ignored=True)
    assert (tmp_path / "k.o").exists()
    _assert_nothing_left(tmp_path, [], [])


FINALIZER_GETS_THE_SIGNAL = """
import os, signal, sys
from pycc_stencil.exit_signals import run_until_signal

class Finalized:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        sum(range(1000))  # the handler runs here: Python cannot raise its exception

def main():
    Finalized()
    return 0

sys.exit(run_until_signal(main))
"""


def test_a_signal_whose_exception_a_finalizer_swallows_still_ends_the_process():
    """Python reports an exception raised in a finalizer (or a gc callback) as ignored and
    carries on: the signal must not be lost with it (a step interrupted there exited 0)."""
    done = subprocess.run(
        [sys.executable, "-c", FINALIZER_GETS_THE_SIGNAL], capture_output=True, text=True
    )
    assert done.returncode == -signal.SIGINT, done.stderr
    assert done.stderr == ""  # not Python's "Exception ignored ... Traceback": cc says nothing
