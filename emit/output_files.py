"""Writing outputs as compilers do: a file appears whole or not at all."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

#: the signals that end a compile (exit_signals.py turns them into a cleanup)
TERMINATING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """The terminating signals wait while the block runs (they arrive when it ends): for the
    steps between creating a temporary file and the code that removes it, where an
    interruption would leave it behind."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, TERMINATING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def output_mode() -> int:
    """The mode a compiler's output gets: `0666` less the umask (as `open(..., O_CREAT)`)."""
    umask = os.umask(0o022)  # the only way to read it: set it, then put it back
    os.umask(umask)
    return 0o666 & ~umask


def write_atomically(path: str, data: bytes, mode: int = 0o600) -> None:
    """Write `data` to `path` through a temporary file in the same directory and a rename,
    so a failure or an interruption never leaves a partial file (and readers never see one);
    the new file has `mode` (user outputs: `output_mode()`). A path that exists and is not a
    regular file (`/dev/null`, a FIFO, a terminal) is written in place: replacing it would
    destroy the device."""
    if os.path.exists(path) and not os.path.isfile(path):
        write_in_place(path, data)
        return
    import tempfile  # here: the front door, which hands most files to cc, writes none

    directory = os.path.dirname(os.path.abspath(path))
    with signals_held():  # an interruption comes before the file or after the rename
        fd, partial = tempfile.mkstemp(dir=directory, prefix=".pycc-stencil-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                os.fchmod(out.fileno(), mode)
            os.replace(partial, path)
        except BaseException:
            os.unlink(partial)
            raise


def write_in_place(path: str, data: bytes) -> None:
    """Truncate and write the existing file at `path` (its inode, mode and every hard link
    stay), as cc does for a device or, through `as`, an `-S` output or an empty object; an
    interruption waits until the bytes, all in memory already, are written, and a failed
    write (a full disk) removes the regular file it truncated, as gcc deletes its outputs."""
    with signals_held(), open(path, "wb") as out:
        try:
            out.write(data)
            out.flush()
        except OSError:
            if os.path.isfile(path):
                os.unlink(path)
            raise


def write_output(path: str, data: bytes, into_existing: bool) -> None:
    """A compiler's output file: written into the existing regular file where cc writes into
    it (`into_existing`: `-S`, dependency files, an empty object), else a new file with
    `output_mode()`, whole or not at all."""
    if into_existing and os.path.isfile(path):
        write_in_place(path, data)
    else:
        write_atomically(path, data, mode=output_mode())
