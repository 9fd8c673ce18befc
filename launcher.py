"""The `pycc-stencil` executable: `check`/`emit`/`tune` go to the command-line tool, anything else
makes it a drop-in `cc`. Kept tiny, because every step of a build starts it."""

from __future__ import annotations

import sys

from .exit_signals import run_until_signal

#: first arguments that select a pycc-stencil subcommand instead of compiler mode
SUBCOMMANDS = frozenset({"check", "emit", "tune", "-h", "--help"})


def main() -> int:
    argv = sys.argv[1:]
    return run_until_signal(lambda: _run(argv))


def _run(argv: list[str]) -> int:
    if argv and argv[0] in SUBCOMMANDS:
        from .cli import main as cli_main

        return cli_main(argv)
    from .dropin import run_compiler

    return run_compiler(argv)
