"""Temporary files and an interruption (emit/output_files.py, dropin_driver.py): a terminating
signal that arrives between the creation of a temporary file or directory and the code that
removes it waits until that code is in place, so nothing is left behind (a CI run once found a
compile step's scratch directory left after SIGINT: the test sends the signal as soon as the
directory exists).

Each case runs in a child process whose SIGTERM ends it as pycc-stencil's steps end
(`exit_signals.run_until_signal`), and sends the signal to itself at the worst moment: from
inside the call that creates the file or directory.
"""

from __future__ import annotations

import os
import resource
import signal
import tempfile
from pathlib import Path

import pytest
from pycc_stencil.dropin_command import parse_command
from pycc_stencil.dropin_driver import Driver
from pycc_stencil.emit.output_files import signals_held, write_atomically, write_in_place
from pycc_stencil.exit_signals import run_until_signal


def _in_child(body) -> int:
    """The wait status of a forked child that runs `body` under `run_until_signal`."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(run_until_signal(body))
        except BaseException:  # noqa: BLE001 - never return into pytest's code
            os._exit(99)
    return os.waitpid(pid, 0)[1]


def _signalled_after(original):
    """`original` that sends SIGTERM to its own process once it has made its file."""

    def make(*args, **kwargs):
        made = original(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
        return made

    return make


def test_a_held_signal_arrives_when_the_block_ends():
    def body() -> int:
        with signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            Path(os.environ["PYCC_TEST_MARK"]).write_text("ran on")
        return 0

    with tempfile.TemporaryDirectory() as folder:
        mark = Path(folder) / "mark"
        os.environ["PYCC_TEST_MARK"] = str(mark)
        try:
            status = _in_child(body)
        finally:
            del os.environ["PYCC_TEST_MARK"]
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
        assert mark.read_text() == "ran on"


def test_an_interrupted_atomic_write_leaves_no_partial_file(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "mkstemp", _signalled_after(tempfile.mkstemp))
    status = _in_child(lambda: write_atomically(str(tmp_path / "out.o"), b"object") or 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
    # the signal waited for the rename: the output is whole, and no partial file is left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.o"]
    assert (tmp_path / "out.o").read_bytes() == b"object"


def test_a_failed_write_in_place_leaves_no_partial_file(tmp_path):
    """An `-S` output is written into the existing file, as cc does; when the disk is full
    (here: a file size limit) the truncated file is removed, as gcc deletes its outputs."""
    out = tmp_path / "k.s"
    out.write_text("old assembly\n")

    def body() -> int:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            write_in_place(str(out), b"x" * 10000)
        except OSError:
            return 0
        return 1

    assert os.waitstatus_to_exitcode(_in_child(body)) == 0
    assert not out.exists()


@pytest.mark.parametrize("held", [True, False], ids=["held", "not held (the mutation)"])
def test_an_interrupted_step_leaves_no_scratch_directory(tmp_path, monkeypatch, held):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    # inside TemporaryDirectory(): after its mkdir, before it registers the removal
    monkeypatch.setattr(tempfile, "mkdtemp", _signalled_after(tempfile.mkdtemp))
    if not held:
        monkeypatch.setattr("pycc_stencil.dropin_driver.signals_held", _nothing_held)
    (tmp_path / "k.c").write_text("int f(int x) { return x; }\n")
    command = parse_command(["-c", str(tmp_path / "k.c"), "-o", str(tmp_path / "k.o")])
    status = _in_child(lambda: Driver("cc", command).run())
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
    left = [p.name for p in scratch.iterdir()]
    assert (left == []) == held, left


def _nothing_held():
    import contextlib

    return contextlib.nullcontext()
