"""The four subcommands, built from the parsed options."""
from __future__ import annotations

import argparse
import ipaddress
import os
import re
import shlex
import signal
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import clock
from ..origins import origin_of
from ..stop_signals import STOP_SIGNALS  # SIGHUP too: the harness would run on, lease held
from .attempt import AttemptRunner
from .client import TOKEN_FIX, Client, ProtocolError, TokenRejected, Unreachable
from .commands import (EXIT_OK, EXIT_TASK_FAILED, EXIT_TOKEN, EXIT_UNREACHABLE, LocalFault,
                       UsageError)
from .events import Reporter, describe
from .harness import (DEFAULT_CLAUDE_TOOLS, DEFAULT_CODEX_SANDBOX, HarnessConfig, scrubbed_env,
                      tokens_in_environment)
from .pacing import Stopped, Timing
from .plan import Plan, parse_quiet_hours
from .scheduler import Scheduler
from .state import StateStore, default_state_dir

# What an HTTP header can carry: a token with anything else (a second line, a byte-order
# mark) made the request itself fail, in a traceback quoting the header, token and all.
_ONE_TOKEN = re.compile(r"[\x21-\x7e]+")
_TOKEN_FILE_MAX = 4096  # bytes: a token is about 50, a line break and a BOM aside


def read_token(args: argparse.Namespace) -> str:
    """From ``--token-file`` or the environment variable; never from the command line.

    :raise UsageError: naming where the token was looked for, never showing it."""
    if args.token_file:
        where = f"--token-file {args.token_file}"
        try:
            with open(args.token_file, "rb") as file:  # (bounded: /dev/zero named by mistake)
                held = file.read(_TOKEN_FILE_MAX + 1)
            if len(held) > _TOKEN_FILE_MAX:
                raise UsageError(f"{where} is larger than a token file ({_TOKEN_FILE_MAX} "
                                 "bytes); save the token shown on /agents in it, alone")
            token = held.decode("utf-8-sig").strip()
        except OSError as exc:
            raise UsageError(f"cannot read {where}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise UsageError(f"{where} is not text (UTF-8); save the token shown on /agents "
                             "in it, alone") from None
        if not token:
            raise UsageError(f"no Agent Token: {where} is empty")
    else:
        where = args.token_env
        token = os.environ.get(args.token_env, "").strip()
        if not token:
            raise UsageError(f"no Agent Token: set {args.token_env} (or use --token-file); "
                             "the token is shown once when you create the agent on /agents")
    if not _ONE_TOKEN.fullmatch(token):
        raise UsageError(f"{where} is not an Agent Token (lbt_…) alone: it holds a line "
                         "break, a space or other characters (not shown here); keep the token "
                         "alone on one line")
    return token


def need_server(args: argparse.Namespace) -> str:
    if not args.server:
        raise UsageError("no server: pass --server URL or set LOBBYTALKS_AGENT_SERVER")
    if not args.server.startswith(("http://", "https://")):
        raise UsageError("--server must be an http:// or https:// address")
    if "@" in args.server.partition("://")[2].split("/", 1)[0]:  # its errors would repeat it
        raise UsageError("--server must not hold a user or password (http://host:port): the "
                         "Agent Token is the only credential; the value is not shown")
    if origin_of(args.server, path_allowed=True) is None:  # "http://[::1", a port "port"
        raise UsageError(f"--server is not a server address (http://host:port): "
                         f"{args.server!r}")
    return args.server.rstrip("/")


def in_clear(server: str) -> str | None:
    """What to say when the token would cross a network unencrypted: plain http:// to a
    host other than this machine (a reverse proxy on the same host is fine)."""
    host = (urllib.parse.urlsplit(server).hostname or "").lower()
    if not server.startswith("http://") or host == "localhost" or _loopback(host):
        return None
    return (f"{server} is plain http: the Agent Token crosses the network unencrypted to "
            f"{host}; use its https:// address")


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def harness_config(args: argparse.Namespace) -> HarnessConfig:
    if args.harness == "command" and not args.harness_command.strip():
        raise UsageError('--harness command needs --harness-command "PROGRAM ARGS"')
    if args.harness == "command":
        try:  # read as a shell would: a quote left open is the option's mistake
            shlex.split(args.harness_command)
        except ValueError as exc:
            raise UsageError(f"--harness-command cannot be read as a command: {exc} "
                             "(quote it as you would in a shell)") from None
    return HarnessConfig(kind=args.harness, command=args.harness_command,
                         claude_tools=args.claude_tools or DEFAULT_CLAUDE_TOOLS,
                         codex_sandbox=args.codex_sandbox or DEFAULT_CODEX_SANDBOX,
                         extra_args=list(args.harness_arg))


@dataclass
class Connection:
    """Everything one subcommand needs, built once from the options."""
    client: Client
    store: StateStore
    reporter: Reporter
    runner: AttemptRunner
    stop: threading.Event
    signalled: threading.Event  # the stop came from SIGINT/SIGTERM: a clean stop, exit 0


def connect(args: argparse.Namespace) -> Connection:
    server, token = need_server(args), read_token(args)
    harness = harness_config(args)
    secrets = (token, *(t for t in tokens_in_environment() if t != token))
    reporter = Reporter(args.json, secrets)
    # Absolute: the harness runs from its own folder inside, and is handed paths into it.
    store = StateStore((Path(args.state_dir) if args.state_dir
                        else default_state_dir(server, token)).absolute(), secrets)
    # LOBBYTALKS_CLOCK_OFFSET_FILE moves this clock exactly as it moves the server's (tests).
    clock.configure(os.environ.get("LOBBYTALKS_CLOCK_OFFSET_FILE"))
    stop = threading.Event()
    client = Client(server, token, backoff=args.retry_backoff, sleep=stop.wait,
                    on_retry=lambda why, delay: reporter.emit(
                        "retrying", why, delay=round(delay, 2)))
    timing = Timing(tick=args.tick, harness_timeout=args.harness_timeout,
                    backoff=args.retry_backoff)
    runner = AttemptRunner(client, store, harness, reporter,
                           env=scrubbed_env(token, args.token_env), secrets=secrets,
                           now=clock.now, stop=stop, timing=timing)
    return Connection(client, store, reporter, runner, stop, threading.Event())


def _stop_on_signals(conn: Connection) -> None:
    def handler(signum: int, frame: Any) -> None:
        conn.reporter.emit("stopping", _what_a_stop_does(conn.store),
                           signal=signal.Signals(signum).name)
        conn.signalled.set()
        conn.stop.set()
    for sig in STOP_SIGNALS:
        signal.signal(sig, handler)


def _what_a_stop_does(store: StateStore) -> str:
    """Said as a stop begins: an idle connector holds nothing that could fail."""
    try:
        held = {a["state"] for a in store.open_attempts()} if store.attempts.is_dir() else set()
    except (OSError, ValueError, KeyError):  # unreadable now: say the most it may do
        held = {"leased", "submitting"}
    said = [what for state, what in _AT_A_STOP if state in held]
    return "; ".join(said) if said else "stopping: no task is held"


# What a stop does with an attempt in each open state (``state.OPEN_STATES``).
_AT_A_STOP = (
    ("leased", "stopping the harness and reporting the current task failed"),
    ("new", "a claim not yet answered is sent again at the next start"),
    ("submitting", "a saved result is sent at the next start"),
    ("failing", "a failure the server has not yet heard of is sent again at the next start"),
)


def _exit_for(conn: Connection, error: BaseException | None) -> int | None:
    if isinstance(error, LocalFault):
        conn.reporter.emit("error", str(error), stateDir=str(conn.store.root))
        return EXIT_TASK_FAILED
    if isinstance(error, TokenRejected):
        conn.reporter.emit("token_rejected", f"the server rejected the Agent Token "
                           f"({error.message}): {TOKEN_FIX}; the local state is kept",
                           code=error.code, stateDir=str(conn.store.root))
        return EXIT_TOKEN
    if isinstance(error, Unreachable):
        conn.reporter.emit("unreachable", f"the server stayed unavailable: {error}",
                           stateDir=str(conn.store.root))
        # asked to stop while it was away: a clean stop, what it could not hear is kept
        return EXIT_OK if conn.signalled.is_set() else EXIT_UNREACHABLE
    return None


def working(args: argparse.Namespace) -> Connection:
    """A connection holding its state folder, stopped cleanly by SIGINT/SIGTERM, with a
    harness it can start: one missing from PATH (cron's is /usr/bin:/bin), or a script its
    command names that is not there, is said before anything is claimed, instead of failing
    one question after another.

    :raise StateInUse: another connector holds the folder.
    """
    conn = connect(args)
    problem = conn.runner.harness.unusable(conn.runner.env.get("PATH"))
    if problem:  # may come back (an upgrade under way): not final, 1
        raise LocalFault(problem)
    try:
        conn.store.open().make_private().lock()
    except OSError as exc:
        raise LocalFault(f"cannot use the state folder: {describe(exc)}") from None
    _stop_on_signals(conn)
    warning = in_clear(conn.client.base)
    if warning:
        conn.reporter.emit("insecure", warning)
    return conn


def run(args: argparse.Namespace) -> int:
    try:
        quiet = parse_quiet_hours(args.quiet_hours) if args.quiet_hours else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    plan = Plan(communities=args.community, max_tasks=args.max_tasks,
                daily_budget=args.daily_budget, quiet_hours=quiet,
                poll_interval=args.poll_interval, once=args.once)
    conn = working(args)
    conn.reporter.emit("started", server=args.server, harness=args.harness,
                       stateDir=str(conn.store.root), once=args.once)
    scheduler = Scheduler(conn.client, conn.store, conn.runner, conn.reporter, plan,
                          now=clock.now, stop=conn.stop)
    fatal = scheduler.run()
    code = _exit_for(conn, fatal)
    conn.reporter.emit("stopped")
    if code is not None:
        return code
    if isinstance(fatal, ProtocolError):  # --once and the poll itself was refused
        return EXIT_TASK_FAILED
    if args.once and (scheduler.errors or any(state in ("failed", "failing", "rejected", "expired")
                                              for state in scheduler.outcomes)):
        return EXIT_TASK_FAILED
    return EXIT_OK


def answer(args: argparse.Namespace) -> int:
    conn = working(args)
    open_ones = [a for a in conn.store.open_attempts() if a["topic"] == args.topic]
    answered = [a for a in conn.store.all_attempts()
                if a["topic"] == args.topic and a["state"] == "done"]
    if answered and not open_ones and not args.again:  # a second answer costs a second research
        conn.reporter.emit("idle", "already answered from this state folder; --again answers "
                           "it once more", topic=args.topic, messageId=answered[-1].get("messageId"))
        return EXIT_OK
    attempt = open_ones[0] if open_ones else conn.store.new_attempt(args.topic)
    conn.reporter.emit("attempt_created", topic=args.topic, requestId=attempt["requestId"],
                       resumed=bool(open_ones))
    try:
        state = conn.runner.run(attempt)
    except Stopped:
        return EXIT_OK
    except (TokenRejected, Unreachable) as exc:
        if isinstance(exc, TokenRejected):  # `agent status` says why it stopped here
            conn.store.note_token_rejected(attempt, exc.code)
        code = _exit_for(conn, exc)  # EXIT_OK for a stop while the server was away
        return EXIT_TASK_FAILED if code is None else code
    except Exception as exc:  # said as the run loop says it, not as a traceback
        conn.reporter.emit("error", f"attempt stopped by an unexpected error: {describe(exc)}",
                           requestId=attempt["requestId"])
        return EXIT_TASK_FAILED
    return EXIT_OK if state == "done" else EXIT_TASK_FAILED


def status(args: argparse.Namespace) -> int:
    if args.state_dir:
        root = Path(args.state_dir)
    else:
        root = default_state_dir(need_server(args), read_token(args))
    reporter = Reporter(args.json, ())
    store = StateStore(root)
    attempts, unreadable = store.read_attempts() if store.attempts.is_dir() else ([], [])
    for path in unreadable:  # each file read once
        reporter.emit("error", f"{path} is no attempt this connector wrote (damaged?): "
                      "skipped; remove it if it is not needed")
    if not attempts:
        reporter.emit("idle", f"no attempts in {root}")
    for a in attempts:
        kept = store.kept_result(a) is not None
        task = a.get("task") or {}
        reporter.emit("attempt", topic=a["topic"], requestId=a["requestId"],
                      taskId=task.get("id"), state=a["state"], messageId=a.get("messageId"),
                      result=str(store.result_path(a)) if kept else None,
                      errors=a.get("errors", [])[-3:])
    return EXIT_OK
