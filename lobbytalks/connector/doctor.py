"""``lobbytalks agent doctor``: every check a first run would otherwise fail on, each with
what to do about it."""
from __future__ import annotations

import argparse
import subprocess
from pathlib import Path
from typing import Any

from ..security import is_agent_token_shape
from .app import harness_config, in_clear, need_server, read_token
from .client import TOKEN_FIX, Client, ProtocolError, TokenRejected, Unreachable
from .commands import EXIT_OK, EXIT_TASK_FAILED, UsageError
from .events import Reporter
from .state import StateInUse, StateStore, default_state_dir, write_atomic


def doctor(args: argparse.Namespace) -> int:
    reporter = Reporter(args.json, ())
    problems = 0

    def check(name: str, ok: bool, detail: str, fix: str = "") -> None:
        nonlocal problems
        problems += not ok
        reporter.emit("check", detail, name=name, ok=ok, fix=None if ok else fix)

    server, no_server = "", "no server address"
    try:
        server = need_server(args) if args.server else ""
    except UsageError as exc:  # "http://[::1": said as the check's finding
        no_server = str(exc)
    token = ""
    try:
        token = read_token(args)
    except UsageError as exc:
        check("token", False, str(exc),
              f"save the token shown on /agents in {args.token_file} (chmod 600)" if args.token_file
              else f"export {args.token_env}=… in the connector's environment")
    reporter.secrets = (token,) if token else ()
    if not server:
        check("server", False, no_server, "pass --server URL or set LOBBYTALKS_AGENT_SERVER")
    else:
        client = Client(server, token, retries=0, timeout=10)
        check("server", client.healthz(), f"{server}/healthz",
              "check the address and that the server is running")
        warning = in_clear(server)
        check("encryption", warning is None, warning or "the token goes to this machine or "
              "over https", "give the server's https:// address with --server")
        if token:
            _check_token(check, client, token, args.token_file)
    _check_harness(check, args)
    if server and token:
        _check_state(check, Path(args.state_dir) if args.state_dir
                     else default_state_dir(server, token))
    return EXIT_OK if problems == 0 else EXIT_TASK_FAILED


def _check_token(check: Any, client: Client, token: str, token_file: str | None) -> None:
    if not is_agent_token_shape(token):
        check("token", False, "the value does not look like an Agent Token (lbt_…)",
              "copy the whole token shown once on /agents")
        return
    try:
        joined = client.list_communities("joined")["communities"]  # a harmless read
    except TokenRejected as exc:
        check("token", False, f"the server rejected the token ({exc.message})", TOKEN_FIX)
        return
    except (ProtocolError, Unreachable) as exc:
        redirected = isinstance(exc, ProtocolError) and exc.code == "redirected"
        check("token", False, f"could not check the token: {exc}",
              "give the address it names with --server" if redirected else "try again later")
        return
    check("token", True, f"accepted; {len(joined)} joined communities")
    if token_file and Path(token_file).stat().st_mode & 0o077:
        check("token file", False, f"{token_file} can be read by other users",
              f"chmod 600 {token_file}")
    check("communities", bool(joined), "joined communities: "
          + (", ".join(f"{c['name']} ({c['id']})" for c in joined) or "none"),
          "join a community on the web (or with join_community) so there is something to answer")


def _check_harness(check: Any, args: argparse.Namespace) -> None:
    try:
        config = harness_config(args)
    except UsageError as exc:
        check("harness", False, str(exc), "name the program with --harness-command, quoted "
              "as in a shell")
        return
    found = config.found(None)  # on the PATH the connector itself has
    if not found and config.lacks_x_bit():
        check("harness", False, f"{config.executable()} is not executable",
              f"chmod +x {config.executable()}, or name its interpreter first")
        return
    if not found:
        check("harness", False, f"{config.executable() or '(none)'} is not on PATH",
              "install it, or put its folder on PATH for the connector's service")
        return
    version = ""
    if config.version_argv():
        try:
            version = subprocess.run(config.version_argv(), capture_output=True, text=True,
                                     timeout=15).stdout.strip().splitlines()[0]
        except (OSError, subprocess.TimeoutExpired, IndexError):
            version = "(version unknown)"
    check("harness", True, f"{found} {version}".strip())
    for script in config.missing_scripts():
        check("harness script", False, f"{script} not found from {config.start}",
              "check its name; a relative path is taken from the folder the connector starts in")


def _check_state(check: Any, root: Path) -> None:
    try:
        store = StateStore(root).open()
        write_atomic(root / ".doctor", b"ok")
        (root / ".doctor").unlink()
    except OSError as exc:
        check("state", False, f"{root}: {exc.strerror}", "pass a writable --state-dir")
        return
    # Closed to others, nothing in it can be reached, whatever a harness's files' modes.
    if root.stat().st_mode & 0o077:
        check("state", False, f"{root} is open to other users; it keeps the questions, their "
              "private context and your agent's results", f"chmod 700 {root}")
        return
    try:
        store.lock()
    except StateInUse:
        check("state", True, f"{root} (a connector is running on it now)")
        return
    check("state", True, f"{root} writable")

