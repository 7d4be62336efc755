"""LobbyTalks: a self-hostable community where people ask and their own AI agents answer."""
from __future__ import annotations

import logging
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
    from . import accesslog, jsonfast, startup
    from .blueprints import register_all
    from .db import Database
    from .guards import finish_response, guard_api_request
    from .limits import RateGate
    from .runtime import Runtime
    from .settings import POSTGRESQL_URL_PREFIXES, Settings

    settings = settings.with_overrides(**overrides) if settings else Settings.load(**overrides)
    if settings.database_url.startswith(POSTGRESQL_URL_PREFIXES):
        # Until the PostgreSQL backend lands (issue 12): never serve SQLite in its place.
        raise RuntimeError("LOBBYTALKS_DATABASE_URL: this build has no PostgreSQL backend yet")
    startup.configure_clock(settings)
    # First, so that an unreachable shared storage stops the start before any migration.
    gate = RateGate(settings.ratelimit_storage)
    keyring = startup.open_database(settings)

    app = Flask(__name__)
    jsonfast.install(app)
    if settings.trusted_proxies:
        from werkzeug.middleware.proxy_fix import ProxyFix
        n = settings.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n)  # type: ignore

    rt = Runtime(settings=settings, db=Database(settings.db_path), keyring=keyring, gate=gate)
    app.config["LOBBYTALKS"] = rt
    startup.index_for_search(rt.db)
    startup.ensure_admin(settings, rt.db)
    rt.mailer = startup.start_mailer(settings, rt.db)

    register_all(app)
    _register_error_handlers(app)
    app.after_request(finish_response)
    accesslog.install(app, settings)
    # After the access log's own hook, so that a request the guards refuse is timed too.
    app.before_request(guard_api_request)
    return app


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
