"""Command line: serve, init, healthcheck, admin, config, rotate-key and the admin tools."""
from __future__ import annotations

import argparse
import logging
import sys
import urllib.error
import urllib.request
from typing import Callable

from . import __version__
from .connector import commands as connector_commands

Setup = Callable[[argparse.ArgumentParser], None]
COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], str, Setup | None, bool]] = {}


def command(name: str, help: str, *, setup: Setup | None = None, db_options: bool = True):
    """Register a command; ``setup`` adds its own arguments, ``db_options`` --db/--data-dir."""
    def register(func):
        COMMANDS[name] = (func, help, setup, db_options)
        return func
    return register


def fail(message: str) -> int:
    print(f"lobbytalks: {message}", file=sys.stderr)
    return 1


def _add_db_options(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--db", metavar="PATH", help="SQLite database file")
    where.add_argument("--data-dir", metavar="DIR",
                       help="data folder holding lobbytalks.db and secret.key "
                            "(default ./lobbytalks-data)")


def settings_from(args: argparse.Namespace, **extra):
    from .settings import Settings
    return Settings.load(db=getattr(args, "db", None), data_dir=getattr(args, "data_dir", None),
                         **extra)


def _serve_setup(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 8000)")


@command("serve", "start the server (creates and migrates the database)", setup=_serve_setup)
def serve(args: argparse.Namespace) -> int:
    import signal
    from pathlib import Path

    from . import serverlock, serving
    from .db import make_private_dir

    from .settings import mask_uri_credentials

    settings = settings_from(args, host=args.host, port=args.port)
    try:
        make_private_dir(Path(settings.db_path).parent)
        # One process per SQLite file; PostgreSQL serves many processes itself.
        lock = None if settings.uses_postgres else serverlock.acquire(Path(settings.db_path))
    except serverlock.DatabaseInUse as exc:
        return fail(str(exc))
    try:
        app = _app_or_none(settings)
        if app is None:
            return 1
        shown = settings.public_url or f"http://{settings.host}:{settings.port}"
        where = (mask_uri_credentials(settings.database_url) if settings.uses_postgres
                 else settings.db_path)
        print(f"LobbyTalks {__version__} serving {where} at {shown}", flush=True)
        # waitress leaves its loop on SystemExit/KeyboardInterrupt, lets the worker threads
        # finish (up to 5 s) and returns; turning SIGTERM (docker stop, systemd) into
        # SystemExit gives the same clean stop as Ctrl-C, and the lock is released below.
        signal.signal(signal.SIGTERM, _stop_on_signal)
        serving.serve(app, settings)
        print("LobbyTalks stopped", flush=True)
    finally:
        if lock is not None:
            serverlock.release(lock)
    return 0


def _stop_on_signal(signum, frame) -> None:
    raise SystemExit(0)


def _app_or_none(settings):
    """create_app, or None after printing why it cannot start (too-new schema, key problem)."""
    from . import create_app
    from .db import DatabaseError, SchemaTooNew
    from .ops import OpsError

    try:
        return create_app(settings)
    except (SchemaTooNew, OpsError, RuntimeError, DatabaseError) as exc:
        fail(str(exc))
        return None


@command("init", "create or migrate the database and key without serving")
def init(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    if _app_or_none(settings) is None:
        return 1
    print(f"database ready: {settings.db_path}")
    return 0


def _healthcheck_setup(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", nargs="?", default="http://127.0.0.1:8000",
                   help="server address (default http://127.0.0.1:8000)")
    p.add_argument("--timeout", type=float, default=5.0)


@command("healthcheck", "exit 0 when the server at URL answers /healthz with ok",
         setup=_healthcheck_setup, db_options=False)
def healthcheck(args: argparse.Namespace) -> int:
    url = args.url.rstrip("/")
    if not url.endswith("/healthz"):
        url += "/healthz"
    try:
        with urllib.request.urlopen(url, timeout=args.timeout) as response:
            healthy = response.status == 200
    except (urllib.error.URLError, OSError, ValueError) as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1
    print("ok" if healthy else "unhealthy")
    return 0 if healthy else 1


def _admin_setup(p: argparse.ArgumentParser) -> None:
    p.add_argument("change", choices=("grant", "revoke", "log"))
    p.add_argument("username", nargs="?", help="the user to grant or revoke (not for log)")
    p.add_argument("--limit", type=int, default=50, metavar="N",
                   help="log: how many of the newest entries to print (default 50)")


@command("admin", "grant or revoke the admin role (admin grant|revoke USERNAME), or print "
                  "the audit log of admin actions (admin log [--limit N])", setup=_admin_setup)
def admin(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import clock, ops
    from .db import Database, SchemaTooNew, connect, migrate
    from .services import accounts, audit

    if (args.change == "log") != (args.username is None):
        return fail("usage: admin grant|revoke USERNAME, or admin log [--limit N]")
    if not 1 <= args.limit <= 10000:
        return fail("--limit must be between 1 and 10000")

    settings = settings_from(args)
    if not Path(settings.db_path).exists():
        return fail(f"no database at {settings.db_path} (lobbytalks init creates one)")
    conn = connect(settings.db_path)
    try:
        ops.backup_before_migrate(conn, settings.db_path, clock.now())
        migrate(conn, clock.now())
    except (SchemaTooNew, ops.OpsError) as exc:
        return fail(str(exc))
    finally:
        conn.close()
    db = Database(settings.db_path)
    if args.change == "log":
        print_audit_log(audit.recent(db, args.limit))
        return 0
    with db.transaction() as conn:  # the change and its audit entry commit together
        if not accounts.set_admin(db, args.username, args.change == "grant"):
            return fail(f"no user named {args.username!r}")
        audit.record(conn, None, f"{args.change}_admin", "user", args.username, "", clock.now())
    print(f"{args.username}: admin {'granted' if args.change == 'grant' else 'revoked'}")
    return 0


def print_audit_log(entries: list[dict]) -> None:
    """One tab-separated line per entry, oldest first so the newest ends up at the prompt."""
    from datetime import datetime, timezone

    if not entries:
        print("(no admin actions recorded)")
    for e in reversed(entries):
        when = datetime.fromtimestamp(e["created"], tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")
        print("\t".join((when, e["actor"] or "(command line)", e["action"],
                         f"{e['target_kind']}:{e['target_id']}", e["reason"])))


@command("config", "print the effective configuration (secrets masked)")
def config(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    for name, value, help_text in settings.describe():
        print(f"{name}={value}    # {help_text}")
    return 0


@command("rotate-key", "re-encrypt private question context under a new secret key")
def rotate_key(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import crypto, serverlock
    from .db import connect

    settings = settings_from(args)
    if settings.secret_key:
        return fail("the key comes from LOBBYTALKS_SECRET_KEY; rotate it there: "
                    "add a new KEYID:BASE64 line as the last line, then run rotate-key with "
                    "--data-dir pointing to a key file, or re-encrypt via a key file")
    try:
        # A running server keeps the old keyring in memory and could not open rows re-sealed
        # under the new key, so rotation needs the server stopped (and keeps it stopped).
        lock = serverlock.acquire(Path(settings.db_path))
    except serverlock.DatabaseInUse as exc:
        return fail(f"stop the server before rotating the key: {exc}")
    conn = connect(settings.db_path)
    try:
        keyring = crypto.load_keyring(env_value="", key_path=settings.secret_key_path,
                                      create=False)
        crypto.verify_keyring(conn, keyring)
        new, count = crypto.rotate_key(conn, settings.secret_key_path, keyring)
    except crypto.SecretKeyProblem as exc:
        return fail(str(exc))
    finally:
        conn.close()
        serverlock.release(lock)
    print(f"re-encrypted {count} private context value(s) under key {new.current_id} "
          f"({new.fingerprint()}); key file: {settings.secret_key_path}")
    return 0


# --- backup, restore, check --------------------------------------------------------------------

class ProgressBar:
    """Progress of a page copy on stderr, shown only when the copy takes several steps.

    On a terminal it redraws one bar; otherwise (logs, cron mail) it writes a plain line
    at every tenth, so nothing fills a log with carriage returns.
    """

    def __init__(self, label: str, stream=None, min_pages: int = 0) -> None:
        from .ops import STEP_PAGES
        self.label = label
        self.stream = stream or sys.stderr
        self.min_pages = min_pages or STEP_PAGES + 1
        self.tty = self.stream.isatty()
        self.shown = -1

    def __call__(self, done: int, total: int) -> None:
        if total < self.min_pages or total <= 0:
            return
        percent = done * 100 // total
        if self.tty:
            filled = percent * 30 // 100
            self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] "
                              f"{percent:3d}%" + ("\n" if done >= total else ""))
        elif percent // 10 > self.shown // 10 or (done >= total and self.shown < 100):
            self.stream.write(f"{self.label}: {percent}% ({done}/{total} pages)\n")
        else:
            return
        self.shown = percent
        self.stream.flush()


def _key_source(settings) -> str:
    return ("LOBBYTALKS_SECRET_KEY" if settings.secret_key.strip()
            else str(settings.secret_key_path))


def _backup_setup(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="where to write the backup (must not exist)")
    p.add_argument("--force", action="store_true", help="overwrite FILE (and FILE.key)")
    p.add_argument("--with-key", action="store_true",
                   help="also write the secret key to FILE.key (mode 0600)")


@command("backup", "consistent copy of the database while it may be serving, verified",
         setup=_backup_setup)
def backup(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import crypto, ops

    settings = settings_from(args)
    dest = Path(args.file)
    key_dest = ops.key_file_for(dest)
    if args.with_key and key_dest.exists() and not args.force:
        return fail(f"{key_dest} already exists; choose another name or pass --force")
    try:
        result = ops.backup(settings.db_path, dest, force=args.force,
                            progress=ProgressBar("backup"))
    except ops.OpsError as exc:
        return fail(str(exc))
    print(f"backup written: {result.path} ({result.size / 2**20:.1f} MiB, schema version "
          f"{result.version}); integrity_check ok")
    sealed = ", ".join(result.sealed_key_ids)
    print("The secret key is NOT in the backup. Private question context stays encrypted in "
          "it" + (f" (sealed with key id(s) {sealed})" if sealed else
                  " (none stored yet, but later backups will need the key)") +
          f"; only the key from {_key_source(settings)} opens it.")
    if not args.with_key:
        print(f"Keep that key with the backup, stored as carefully: run with --with-key to "
              f"write it to {key_dest}, or copy it yourself.")
        return 0
    try:
        fingerprint = ops.export_key(settings.secret_key, settings.secret_key_path, key_dest,
                                     force=args.force)
    except (ops.OpsError, crypto.SecretKeyProblem) as exc:
        return fail(f"the backup is written but the key is not: {exc}")
    print(f"key written: {key_dest} (mode 0600, fingerprint {fingerprint}). Anyone holding "
          f"both files can read private context: store them accordingly.")
    return 0


def _restore_setup(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a backup made by `lobbytalks backup`")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--with-key", action="store_true",
                   help="also install FILE.key as the data folder's secret.key "
                        "(the previous key file is kept)")


@command("restore", "replace the database with a backup (server must be stopped)",
         setup=_restore_setup)
def restore(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import clock, ops

    settings = settings_from(args)
    source, db_path = Path(args.file), Path(settings.db_path)
    key_file = ops.key_file_for(source)
    if args.with_key:
        if settings.secret_key.strip():
            return fail("--with-key installs a key file, but LOBBYTALKS_SECRET_KEY is set and "
                        "would override it; put the backup's key in that variable instead")
        if not key_file.is_file():
            return fail(f"--with-key: no key file {key_file} beside the backup")
    if not args.yes and not _confirm(f"Replace {db_path} with {source}? Everyone will have to "
                                     f"log in again. [y/N] "):
        return fail("not restoring (pass --yes to skip this question)")
    now = clock.now()
    try:
        result = ops.restore(db_path, source, now=now, progress=ProgressBar("restore"))
        kept_key = ops.install_key(key_file, settings.secret_key_path, now) \
            if args.with_key else None
    except ops.OpsError as exc:
        return fail(str(exc))
    print(f"restored {source} into {result.db_path} (schema version {result.version}"
          + ("" if result.version == result.latest else
             f"; it migrates to {result.latest} at the next start") + ")")
    if result.previous:
        print(f"the replaced database is kept as {result.previous}")
    print(f"ended {result.sessions_ended} web session(s): everyone logs in again")
    if args.with_key:
        print(f"installed the key from {key_file} as {settings.secret_key_path}"
              + (f" (previous key kept as {kept_key})" if kept_key else ""))
    status = ops.check_key(db_path, settings.secret_key, settings.secret_key_path)
    if status.matches is False:
        hint = (f" The backup's own key is at {key_file}: rerun with --with-key or copy it "
                f"to {settings.secret_key_path}." if key_file.is_file() else "")
        print(f"WARNING: {status.message}. The server refuses to start until the key used "
              f"with this backup is back: in {settings.secret_key_path} or "
              f"LOBBYTALKS_SECRET_KEY.{hint}", file=sys.stderr)
    else:
        print(f"key: {status.message}")
    return 0


def _confirm(question: str) -> bool:
    if not sys.stdin or not sys.stdin.isatty():
        return False
    return input(question).strip().lower() in {"y", "yes"}


@command("check", "integrity and foreign-key checks; reports the schema version")
def check(args: argparse.Namespace) -> int:
    from . import ops

    settings = settings_from(args)
    try:
        report = ops.check(settings.db_path)
    except ops.OpsError as exc:
        return fail(str(exc))
    for line in report.lines():
        print(line)
    return 0 if report.ok else 1


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
            _add_db_options(p)
        if setup:
            setup(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    return COMMANDS[args.command][0](args)
