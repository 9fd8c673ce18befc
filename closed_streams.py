"""Standard streams the caller closed (`>&-`, `2>&-`): Python then has None for them, and
`print(..., file=sys.stderr)` would write to stdout instead. A stand-in that takes and drops
the text keeps each message where the caller sent it (nowhere), without opening a file on
the closed descriptor (which `cc`, started later, must find closed too)."""

from __future__ import annotations

import errno
import io
import os
import sys


class _ClosedBytes(io.RawIOBase):
    """Output written as bytes (`-S -o -`) fails as it would on the closed descriptor."""

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))


class _Closed(io.TextIOBase):
    """Accepts text and drops it, as a print to a closed stream does."""

    buffer = _ClosedBytes()

    def write(self, text: str) -> int:
        return len(text)


def stand_in_for_closed_streams(closed: set[int] | None = None) -> None:
    """Give `sys.stdout`/`sys.stderr` the stand-in where the stream is closed: the ones Python
    found closed at startup (None), or the descriptors in `closed`."""
    closed = closed or set()
    if sys.stdout is None or 1 in closed:
        sys.stdout = _Closed()
    if sys.stderr is None or 2 in closed:
        sys.stderr = _Closed()
