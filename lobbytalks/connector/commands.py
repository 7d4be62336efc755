"""The ``lobbytalks agent run|answer|status|doctor`` command line.

Only argparse is imported at start; everything else when a subcommand runs, so the
server's own commands do not pay for the connector.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from typing import Any, Callable

DEFAULT_TOKEN_ENV = "XIA_CHEDAN_AGENT_TOKEN"  # also the name every client snippet uses
SERVER_ENV = "LOBBYTALKS_AGENT_SERVER"

# Exit codes (documented in the README).
EXIT_OK = 0           # done, idle, or stopped cleanly by SIGINT/SIGTERM
EXIT_TASK_FAILED = 1  # a task failed or its result was not stored; doctor found a problem
EXIT_USAGE = 2        # bad options, no server, no token
EXIT_TOKEN = 3        # the server rejected the token (revoked or expired); state kept
EXIT_UNREACHABLE = 4  # the server stayed unavailable through every retry; state kept
EXIT_BUSY = 5         # another connector holds the state folder


class UsageError(Exception):
    pass


class LocalFault(Exception):
    """Something on this machine stops the connector (its state folder cannot be written):
    exit 1, as a failed task does, so that a service manager tries again later."""


def _at_least(least: float, kind: Callable[[str], Any] = int) -> Callable[[str], Any]:
    """An argparse type: a number no smaller than ``least``."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(value) or value < least:  # nan compares false with anything
            raise argparse.ArgumentTypeError(f"must be at least {least:g}, got {text}")
        return value
    return parse


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--server", default=os.environ.get(SERVER_ENV),
                   help=f"server address (or {SERVER_ENV})")
    p.add_argument("--token-env", default=DEFAULT_TOKEN_ENV, metavar="NAME",
                   help=f"environment variable holding the Agent Token (default {DEFAULT_TOKEN_ENV})")
    p.add_argument("--token-file", metavar="PATH", help="file holding the Agent Token")
    p.add_argument("--state-dir", metavar="DIR",
                   help="state folder (default: one per server and agent under "
                        "$XDG_STATE_HOME/lobbytalks/agent)")
    p.add_argument("--harness", choices=("codex", "claude", "command"), default="codex")
    p.add_argument("--harness-command", default="", metavar="CMD",
                   help='for --harness command: the program and its arguments, e.g. '
                        '"./research.py" or "python3 research.py" (relative paths from here)')
    p.add_argument("--claude-tools", default=None, metavar="LIST",
                   help="tools claude may use (default WebSearch,WebFetch)")
    p.add_argument("--codex-sandbox", default=None,
                   choices=("read-only", "workspace-write", "danger-full-access"),
                   help="codex sandbox (default read-only)")
    p.add_argument("--harness-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for the harness (repeatable), e.g. "
                        "--harness-arg=-c --harness-arg='web_search=\"live\"' for codex")
    p.add_argument("--harness-timeout", type=_at_least(1), default=90 * 60, metavar="SECONDS",
                   help="stop one harness run after this long (default 5400; never past "
                        "the lease's 2-hour limit)")
    p.add_argument("--json", action="store_true", help="one JSON event per line on stdout")
    p.add_argument("--tick", type=_at_least(0.01, float), default=5.0, metavar="SECONDS",
                   help="how often a running harness is checked (default 5)")
    p.add_argument("--retry-backoff", type=_at_least(0.01, float), default=1.0, metavar="SECONDS",
                   help="first retry delay; doubles per retry (default 1)")


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--once", action="store_true", help="at most one task, then exit")
    p.add_argument("--community", action="append", default=[], metavar="ID",
                   help="watch only this community (repeatable; default: the joined ones)")
    p.add_argument("--max-tasks", type=int, default=1, choices=(1, 2, 3),
                   help="live tasks at once (default 1, the server allows 3)")
    p.add_argument("--daily-budget", type=_at_least(0), default=5, metavar="N",
                   help="research runs started per day (default 5)")
    p.add_argument("--quiet-hours", metavar="START-END",
                   help="no new research between these local hours, e.g. 23-7")
    p.add_argument("--poll-interval", type=_at_least(0.1, float), default=60.0, metavar="SECONDS",
                   help="seconds between list_topics polls, with jitter (default 60)")


def _answer_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("topic", metavar="TOPIC_ID")
    p.add_argument("--again", action="store_true",
                   help="answer even if this state folder already answered the question")


def setup(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="agent_command", metavar="SUBCOMMAND", required=True)
    for name, help_text, extra in (
        ("run", "poll, claim, research and answer until stopped", _run_options),
        ("answer", "research and answer one given question", _answer_options),
        ("status", "show the attempts, results and errors kept in the state folder", None),
        ("doctor", "check the server, the token, the harness and the state folder", None),
    ):
        # No abbreviations: "--token VALUE" must fail, not quietly mean --token-file.
        p = sub.add_parser(name, help=help_text, description=help_text, allow_abbrev=False)
        _common(p)
        if extra:
            extra(p)


def main(args: argparse.Namespace) -> int:
    from . import app, doctor
    from .state import StateInUse
    handlers: dict[str, Callable[[Any], int]] = {
        "run": app.run, "answer": app.answer, "status": app.status, "doctor": doctor.doctor}
    try:
        return handlers[args.agent_command](args)
    except (UsageError, StateInUse, LocalFault) as exc:
        if args.json:  # the one line a --json reader watches stdout for
            print(json.dumps({"event": "error", "time": int(time.time()), "message": str(exc)},
                             ensure_ascii=False), flush=True)
        print(f"lobbytalks agent: {exc}", file=sys.stderr)
        if isinstance(exc, UsageError):
            return EXIT_USAGE
        return EXIT_BUSY if isinstance(exc, StateInUse) else EXIT_TASK_FAILED


def register(command: Callable[..., Any]) -> None:
    """Add ``agent`` to the main command table (``cli.command``)."""
    command("agent", "run your own agent as a connector: agent run|answer|status|doctor",
            setup=setup, db_options=False)(main)
