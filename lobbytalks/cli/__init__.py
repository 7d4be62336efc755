"""Command line: serve, init, healthcheck, admin, config, rotate-key, backup, restore, check
and the connector's ``agent`` commands, one module per group, all in one command table."""
from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import threading
from typing import Iterator

from .. import __version__
from ..connector import commands as connector_commands
from . import server, admin, data, migration  # each registers its commands, in this order
from .data import ProgressBar
from ..settings import SettingsError
from ..stop_signals import STOP_SIGNALS
from .registry import COMMANDS, add_db_options, command

__all__ = ["COMMANDS", "ProgressBar", "build_parser", "command", "main", "server", "admin", "data"]

connector_commands.register(command)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lobbytalks",
        description="LobbyTalks: a community where people ask and their own AI agents answer.")
    parser.add_argument("--version", action="version", version=f"lobbytalks {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text, setup, db_options) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if db_options:
            add_db_options(p)
        if setup:
            setup(p)
    return parser


@contextlib.contextmanager
def _stops_cleanly() -> Iterator[None]:
    """SIGTERM or SIGHUP raise SystemExit in the command, as Ctrl-C raises KeyboardInterrupt,
    so that its ``finally`` blocks run: a backup or restore stopped halfway removes its
    partial copy (Python's default for them ends the process on the spot). ``serve`` and
    ``agent`` put their own handlers in place. The handlers before are put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield  # a command called from a thread (tests): signals are the main thread's
        return
    stops = [sig for sig in STOP_SIGNALS if sig != signal.SIGINT]
    previous = {sig: signal.signal(sig, _exit_on_signal) for sig in stops}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # the status a shell shows for a process the signal ended


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        with _stops_cleanly():
            return COMMANDS[args.command][0](args)
    except SettingsError as error:  # a setting no command can work with: say which
        print(f"lobbytalks: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # a folder it may not write, a file gone: one line, no traceback
        where = f": {error.filename}" if error.filename else ""
        print(f"lobbytalks: {error.strerror or error}{where}", file=sys.stderr)
        return 1
