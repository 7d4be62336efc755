"""Command line: serve, init, healthcheck, admin, config, rotate-key and the admin tools."""
from __future__ import annotations

import argparse
import logging
import sys
import urllib.error
import urllib.request
from typing import Callable

from . import __version__

COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], str]] = {}


def command(name: str, help: str):
    def register(func):
        COMMANDS[name] = (func, help)
        return func
    return register


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


@command("serve", "start the server (creates and migrates the database)")
def serve(args: argparse.Namespace) -> int:
    from pathlib import Path

    import waitress

    from . import create_app, serverlock
    from .db import SchemaTooNew

    settings = settings_from(args, host=args.host, port=args.port)
    try:
        Path(settings.db_path).parent.mkdir(parents=True, exist_ok=True)
        lock = serverlock.acquire(Path(settings.db_path))
    except serverlock.DatabaseInUse as exc:
        print(f"lobbytalks: {exc}", file=sys.stderr)
        return 1
    try:
        app = create_app(settings)
    except (SchemaTooNew, RuntimeError) as exc:
        print(f"lobbytalks: {exc}", file=sys.stderr)
        return 1
    try:
        shown = settings.public_url or f"http://{settings.host}:{settings.port}"
        print(f"LobbyTalks {__version__} serving {settings.db_path} at {shown}", flush=True)
        waitress.serve(app, host=settings.host, port=settings.port, threads=settings.threads,
                       ident="lobbytalks", clear_untrusted_proxy_headers=True,
                       _quiet=True)
    finally:
        serverlock.release(lock)
    return 0


@command("init", "create or migrate the database and key without serving")
def init(args: argparse.Namespace) -> int:
    from . import create_app
    from .db import SchemaTooNew

    settings = settings_from(args)
    try:
        create_app(settings)
    except (SchemaTooNew, RuntimeError) as exc:
        print(f"lobbytalks: {exc}", file=sys.stderr)
        return 1
    print(f"database ready: {settings.db_path}")
    return 0


@command("healthcheck", "exit 0 when the server at URL answers /healthz with ok")
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


@command("admin", "grant or revoke the admin role: admin grant|revoke USERNAME")
def admin(args: argparse.Namespace) -> int:
    from .db import Database, connect, migrate
    from . import clock
    from .services import accounts

    settings = settings_from(args)
    conn = connect(settings.db_path)
    migrate(conn, clock.now())
    conn.close()
    if not accounts.set_admin(Database(settings.db_path), args.username, args.change == "grant"):
        print(f"lobbytalks: no user named {args.username!r}", file=sys.stderr)
        return 1
    print(f"{args.username}: admin {'granted' if args.change == 'grant' else 'revoked'}")
    return 0


@command("config", "print the effective configuration (secrets masked)")
def config(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    for name, value, help_text in settings.describe():
        print(f"{name}={value}    # {help_text}")
    return 0


@command("rotate-key", "re-encrypt private question context under a new secret key")
def rotate_key(args: argparse.Namespace) -> int:
    from . import crypto
    from .db import connect

    settings = settings_from(args)
    if settings.secret_key:
        print("lobbytalks: the key comes from LOBBYTALKS_SECRET_KEY; rotate it there: "
              "add a new KEYID:BASE64 line as the last line, then run rotate-key with "
              "--data-dir pointing to a key file, or re-encrypt via a key file", file=sys.stderr)
        return 1
    keyring = crypto.load_keyring(env_value="", key_path=settings.secret_key_path, create=False)
    conn = connect(settings.db_path)
    try:
        crypto.verify_keyring(conn, keyring)
        new, count = crypto.rotate_key(conn, settings.secret_key_path, keyring)
    finally:
        conn.close()
    print(f"re-encrypted {count} private context value(s) under key {new.current_id} "
          f"({new.fingerprint()}); key file: {settings.secret_key_path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lobbytalks",
        description="LobbyTalks: a community where people ask and their own AI agents answer.")
    parser.add_argument("--version", action="version", version=f"lobbytalks {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == "healthcheck":
            p.add_argument("url", nargs="?", default="http://127.0.0.1:8000",
                           help="server address (default http://127.0.0.1:8000)")
            p.add_argument("--timeout", type=float, default=5.0)
            continue
        _add_db_options(p)
        if name == "serve":
            p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
            p.add_argument("--port", type=int, help="port (default 8000)")
        if name == "admin":
            p.add_argument("change", choices=("grant", "revoke"))
            p.add_argument("username")
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    return COMMANDS[args.command][0](args)
