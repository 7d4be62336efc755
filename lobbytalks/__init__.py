"""LobbyTalks: a self-hostable community where people ask and their own AI agents answer."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from flask import Flask, request
from werkzeug.exceptions import HTTPException

__version__ = "0.7.3"
log = logging.getLogger("lobbytalks")

# HTTP statuses that werkzeug raises itself, mapped onto the protocol's machine codes.
_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large",
               415: "unsupported_media_type"}


def create_app(settings: Any = None, **overrides: Any) -> Flask:
    """Build the app: settings, database (migrated), keyring, rate gate, surfaces."""
    from . import accesslog, clock, jsonfast
    from .blueprints import register_all
    from .guards import finish_response, guard_api_request
    from .limits import RateGate
    from .runtime import Runtime
    from .services import accounts
    from .settings import Settings

    settings = settings.with_overrides(**overrides) if settings else Settings.load(**overrides)
    clock.configure(settings.clock_offset_file or None)
    if settings.clock_offset_file:
        log.warning("clock offset file %s is set: time may be shifted (testing only)",
                    settings.clock_offset_file)

    db, keyring = _open_database(settings)
    app = Flask(__name__)
    jsonfast.install(app)
    if settings.trusted_proxies:
        from werkzeug.middleware.proxy_fix import ProxyFix
        n = settings.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n)  # type: ignore

    rt = Runtime(settings=settings, db=db, keyring=keyring,
                 gate=RateGate(app, settings.ratelimit_storage), extras={})
    app.config["LOBBYTALKS"] = rt
    if settings.admin_username and settings.admin_password:
        accounts.ensure_admin(rt.db, settings.admin_username, settings.admin_password,
                              now=clock.now(), cost=settings.password_cost)

    if settings.smtp_host:
        from .mailer import Mailer
        rt.extras["mailer"] = Mailer(settings, rt.db).start()

    register_all(app)
    _register_error_handlers(app)
    app.after_request(finish_response)
    accesslog.install(app, settings)
    # After the access log's own hook, so that a request the guards refuse is timed too.
    app.before_request(guard_api_request)
    # PostgreSQL: hand the request's pooled connection back (SQLite keeps its per thread).
    app.teardown_appcontext(lambda _exc: rt.db.release_connection())
    return app


def _open_database(settings: Any):
    """The database, migrated and indexed for search, and the keyring that opens it.

    On SQLite a copy of the file is kept before migrating; PostgreSQL has no file of ours
    (its operator backs it up with pg_dump) and several processes may start at once, which
    ``migrate`` serialises with an advisory lock.
    """
    from . import clock, ops
    from .db import Database, connect, make_private_dir, open_database

    make_private_dir(Path(settings.db_path).parent)  # the secret key's folder on PostgreSQL
    if settings.uses_postgres:
        db = open_database(settings)
        try:
            return db, _prepare(db.conn, settings)
        except BaseException:
            db.close()
            raise
        finally:
            db.release_connection()
    db_path = Path(settings.db_path)
    conn = connect(db_path)
    try:
        ops.backup_before_migrate(conn, db_path, clock.now())  # refuses a too-new schema too
        keyring = _prepare(conn, settings)
    finally:
        conn.close()
    return Database(db_path), keyring


def _prepare(conn, settings: Any):
    from . import clock, crypto
    from .db import migrate

    migrate(conn, clock.now())
    _index_for_search(conn)
    # A new key is generated only while nothing is encrypted yet: a lost key file must
    # stop the server, not be silently replaced by a key that opens nothing.
    encrypted = conn.execute("SELECT 1 FROM question_versions "
                             "WHERE private_context IS NOT NULL LIMIT 1").fetchone()
    keyring = crypto.load_keyring(env_value=settings.secret_key,
                                  key_path=settings.secret_key_path,
                                  create=encrypted is None)
    crypto.verify_keyring(conn, keyring)
    return keyring


def _index_for_search(conn) -> None:
    """Questions written before the search index existed (or restored from such a backup)."""
    from .services import search

    from .db.schema import dialect_of

    conn.execute("BEGIN" if dialect_of(conn) == "postgresql" else "BEGIN IMMEDIATE")
    try:
        added = search.index_missing(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    if added:
        log.info("indexed %d questions for search", added)


def _register_error_handlers(app: Flask) -> None:
    from .errors import ApiError
    from .renderers import is_api_path, render_error

    @app.errorhandler(ApiError)
    def api_error(error: ApiError):
        return render_error(request, error)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        status = error.code or 500
        code = _HTTP_CODES.get(status)
        if not is_api_path(request.path):
            # Pages, static files and unknown paths: the site's own page, whatever the status.
            code = code or ("invalid_request" if status < 500 else "service_unavailable")
        if code is None:
            return error
        return render_error(request, ApiError(code, status=status))

    @app.errorhandler(Exception)
    def unexpected(error: Exception):
        log.exception("unhandled error on %s %s", request.method, request.path)
        return render_error(request, ApiError("service_unavailable"))
