"""SIGINT, SIGTERM and SIGHUP end pycc-stencil as they end `cc`, but only after its temporary
files are gone.

The signal unwinds the stack as an exception, so every `with` and `finally` removes what it
made (temporary directories, partial outputs, the forked compile worker); then the process
kills itself with the same signal, so `make` and the shell see a command killed by it (and
stop, for SIGINT). Kept light: every build step starts the executable.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

from .emit.output_files import TERMINATING

SIGNALS = TERMINATING


class Interrupted(BaseException):
    """A terminating signal arrived (not an Exception: `except Exception` must let it pass)."""

    def __init__(self, number: int):
        super().__init__(signal.Signals(number).name)
        self.number = number


#: the signal that arrived, kept apart from the exception: raised inside a finalizer or a
#: gc callback, Python reports the exception as ignored and carries on, and the signal would
#: be lost (the step then exiting 0 after SIGINT, which `make` takes for a finished target)
_received: list[int] = []


def _interrupt(number: int, frame: object) -> None:
    _received.append(number)
    for other in SIGNALS:  # the cleanup runs once, not interrupted by a second signal
        if signal.getsignal(other) is _interrupt:
            signal.signal(other, signal.SIG_IGN)
    raise Interrupted(number)


def _quiet_about_interruptions(report: Callable) -> Callable:
    """`sys.unraisablehook` that says nothing of an Interrupted raised where Python cannot
    propagate it (`_received` keeps the signal) and passes everything else to `report`."""

    def hook(unraisable) -> None:
        if not isinstance(unraisable.exc_value, Interrupted):
            report(unraisable)

    return hook


def run_until_signal(main: Callable[[], int]) -> int:
    """`main()`; after a terminating signal and the cleanup it triggers, die by that signal.
    Signals the caller ignores (`nohup`, background jobs) stay ignored."""
    sys.unraisablehook = _quiet_about_interruptions(sys.unraisablehook)
    for number in SIGNALS:
        if signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, _interrupt)
    try:
        status = main()
        if not _received:
            return status
        number = _received[0]  # its exception was swallowed where it was raised
    except Interrupted as stop:
        number = stop.number
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken pipe: nothing more can be said there
    signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)
    return 128 + number  # not reached: the signal is not blocked
