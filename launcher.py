"""The `pycc-stencil` executable: `check`/`emit`/`tune`/`batch` go to the command-line tool,
anything else makes it a drop-in `cc`. Kept tiny, because every step of a build starts it."""

from __future__ import annotations

import os
import sys

from .closed_streams import stand_in_for_closed_streams
from .exit_signals import run_until_signal

#: first arguments that select a pycc-stencil subcommand instead of compiler mode
SUBCOMMANDS = frozenset({"check", "emit", "tune", "batch", "-h", "--help"})
#: `pycc-stencil server status|stop`: the warm compile server (dropin_server)
SERVER = "server"


def main() -> int:
    argv = sys.argv[1:]
    undo_locale_coercion()
    stand_in_for_closed_streams()
    return run_until_signal(lambda: _run(argv))


def undo_locale_coercion() -> None:
    """Python coerces a C locale to C.UTF-8 at startup by setting `LC_CTYPE` in the
    environment (PEP 538), and cc inherits it: its diagnostics would quote ‘so’ where the
    user's cc, under `LANG=C`, quotes 'so'. The variable goes again when the environment the
    process was started with (Linux: /proc/self/environ) did not have it."""
    if "LC_CTYPE" not in os.environ:
        return
    try:
        with open("/proc/self/environ", "rb") as handle:
            started_with = handle.read().split(b"\0")
    except OSError:
        return
    if not any(entry.startswith(b"LC_CTYPE=") for entry in started_with):
        del os.environ["LC_CTYPE"]


def _run(argv: list[str]) -> int:
    if argv and argv[0] in SUBCOMMANDS:
        from .cli import main as cli_main

        return cli_main(argv)
    if argv[:1] == [SERVER]:
        from .dropin_server import main as server_main

        return server_main(argv[1:])
    from .dropin import run_compiler

    return run_compiler(argv, _through_server, _start_server_on_miss)


def _through_server(argv: list[str], scanned: list[str]) -> int | None:
    """The step's status from the warm compile server, or None (imported only past the
    front door)."""
    from .dropin_server import compile_through_server, enabled

    return compile_through_server(argv, scanned) if enabled() else None


def _start_server_on_miss() -> None:
    """A step that has to analyse a unit starts the server for the next steps when none
    answered."""
    from .dropin_server import start_absent_server

    start_absent_server()
