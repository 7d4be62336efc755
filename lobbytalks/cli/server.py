"""Running the server: serve, init, healthcheck."""
from __future__ import annotations

import argparse
import http.client
import json
import logging
import sys
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from .. import __version__
from ..hosts import is_loopback
from ..origins import origin_of
from ..stop_signals import STOP_SIGNALS
from .registry import command, fail, settings_from

log = logging.getLogger("lobbytalks")


def _serve_setup(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default 8000)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="server processes sharing the port (default 1; more need PostgreSQL "
                        "and LOBBYTALKS_RATELIMIT_STORAGE=redis://…)")


@command("serve", "start the server (creates and migrates the database)", setup=_serve_setup)
def serve(args: argparse.Namespace) -> int:
    import signal

    from .. import draining, serverlock, serving, workers

    settings = settings_from(args, host=args.host, port=args.port, workers=args.workers)
    if settings.workers != 1:
        refused = workers.refusal(settings)
        if refused:
            fail(refused)
            return 2
        return workers.serve_several(settings, _app_or_none)
    try:
        lock = _hold_database(settings)
    except CannotHold as exc:
        return fail(str(exc))
    try:
        app = _app_or_none(settings)
        if app is None:
            return 1
        try:
            sockets = workers.bind(settings)
        except OSError as exc:  # the port is taken: one line, not a traceback
            return fail(workers.listen_refusal(settings, exc))
        public = f" (public address {settings.public_url})" if settings.public_url else ""
        print(f"LobbyTalks {__version__} serving {settings.database_shown} at "
              f"{workers.listening_at(settings, sockets)}{public}", flush=True)
        if not settings.public_url and not is_loopback(settings.host):
            log.warning("LOBBYTALKS_PUBLIC_URL is not set: the Origin rule and the addresses "
                        "in the docs follow each request's Host header; set it to the address "
                        "people use (e.g. https://talk.example.org)")
        # SIGTERM (docker stop, systemd), Ctrl-C and SIGHUP (the terminal it ran in closed):
        # what was received is answered, then the loop ends (``draining``) and the lock is
        # released below.
        for sig in STOP_SIGNALS:
            signal.signal(sig, draining.ask_to_stop)
        serving.serve(app, settings, sockets)
        print("LobbyTalks stopped", flush=True)
    finally:
        if lock is not None:
            serverlock.release(lock)
    return 0


def _app_or_none(settings):
    """create_app, or None after printing why it cannot start (too-new schema, key problem)."""
    from .. import create_app
    from ..db import DatabaseError, SchemaTooNew
    from ..ops import OpsError

    try:
        return create_app(settings)
    except (SchemaTooNew, OpsError, RuntimeError, DatabaseError) as exc:
        # which database could not be reached or written ("database or disk is full"):
        # the one the settings name, a password masked, unless the message names it already
        shown = settings.database_shown
        where = f"{shown}: " if isinstance(exc, DatabaseError) and shown not in str(exc) else ""
        fail(f"{where}{exc}")
        return None


@command("init", "create or migrate the database and key without serving")
def init(args: argparse.Namespace) -> int:
    from .. import serverlock

    settings = settings_from(args)
    try:
        lock = _hold_database(settings)  # never migrate a file an older server is serving
    except CannotHold as exc:
        return fail(str(exc))
    try:
        if _app_or_none(settings) is None:
            return 1
    finally:
        if lock is not None:
            serverlock.release(lock)
    print(f"database ready: {settings.database_shown}")
    return 0


class CannotHold(Exception):
    """Why serve or init cannot have the database, in one line."""


def _hold_database(settings) -> int | None:
    """The data folder made, and the SQLite file's serving lock held (None on PostgreSQL,
    which serves many processes itself).

    :raise CannotHold: the file is in use, or the folder cannot be made or written."""
    from pathlib import Path

    from .. import serverlock
    from ..db import make_private_dir

    try:
        make_private_dir(Path(settings.db_path).parent)
        return None if settings.uses_postgres else serverlock.acquire(Path(settings.db_path))
    except serverlock.DatabaseInUse as exc:
        raise CannotHold(str(exc)) from None
    except OSError as exc:  # a folder it may not create or write: one line, no traceback
        raise CannotHold(f"cannot use the data folder {Path(settings.db_path).parent}: "
                         f"{exc.strerror or exc}") from None


def _seconds(text: str) -> float:
    """A wait: more than nothing and less than a day (argparse says the rest, exit 2)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 86400, got {text}")
    return value


def _address(text: str) -> str:
    """A server address: ``http(s)://host[:port][/path]``, ``host:port`` as one writes it
    in a container's check, or a port alone on this machine (argparse says what is wrong,
    exit 2)."""
    text = text.strip()
    url = (f"http://127.0.0.1:{int(text)}" if text.isdigit() else
           text if "://" in text else f"http://{text}")
    # (a zero-padded port would be sent as written, in Host)
    if (origin_of(url, path_allowed=True) is None or "\\" in url
            or urlsplit(url).netloc.rpartition("]")[2].partition(":")[2].startswith("0")):
        raise argparse.ArgumentTypeError(f"not a server address (http://host:port): {text!r}")
    return url


def _healthcheck_setup(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", nargs="?", default=None, type=_address,
                   help="server address (default: LOBBYTALKS_HOST and LOBBYTALKS_PORT, "
                        "http://127.0.0.1:8000 unless set; the loopback for 0.0.0.0 or ::)")
    p.add_argument("--timeout", type=_seconds, default=5.0, metavar="SECONDS",
                   help="how long to wait for the answer (default 5)")


def _local_url(settings: Any) -> str:
    """Where this machine's own server answers: the address it listens on, the loopback of
    its family when that is every address (a server on :: or ::1 was asked on 127.0.0.1)."""
    host = settings.host.strip("[]")  # "[::1]" serves as "::1" does
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://{f'[{host}]' if ':' in host else host}:{settings.port}"


@command("healthcheck", "exit 0 when the server at URL answers /healthz with ok",
         setup=_healthcheck_setup, db_options=False)
def healthcheck(args: argparse.Namespace) -> int:
    url = (args.url or _local_url(settings_from(args))).rstrip("/")
    if not url.endswith("/healthz"):
        url += "/healthz"
    # This machine's own server is asked directly: through the proxy that http_proxy
    # names (a container inherits it), a healthy server looked down.
    host = urlsplit(url).hostname or ""
    opener = (urllib.request.build_opener(urllib.request.ProxyHandler({}))
              if is_loopback(host) else urllib.request.build_opener())
    try:
        with opener.open(url, timeout=args.timeout) as response:
            # the health answer itself: any page that answers 200 (a person named healthz
            # has /u/healthz) is not a healthy server
            healthy = response.status == 200 and json.loads(response.read(64)) == {"ok": True}
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)  # (a JSON error is a ValueError)
        return 1
    print("ok" if healthy else "unhealthy")
    return 0 if healthy else 1

