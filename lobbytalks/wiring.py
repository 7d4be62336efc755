"""What an app is made of, in one place: its surfaces, the steps every request goes through
(in order) and the error handlers.

Flask runs ``before_request`` functions in the order they were added and ``after_request``
functions in the reverse order. Here each phase is one hook that calls its steps as
listed, so the order reads top to bottom. Nothing is mounted by being imported, and
nothing is optional: a surface that fails to import stops start-up with its error.
The one teardown step hands the request's database connection back (to PostgreSQL's pool;
SQLite keeps one per thread).
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from flask import Flask, Response, g, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed, RequestedRangeNotSatisfiable
from werkzeug.http import parse_range_header

from . import accesslog, guards, hosts, renderers, textrules
from .blueprints import (communities, community, community_account, community_admin,
                         community_agents, community_cards, community_memories,
                         community_notifications, community_recovery, community_reports, docs,
                         external, health, manage, mcp, web, web_admin, web_agents, web_base,
                         web_browse, web_developers, web_inbox, web_people, web_questions,
                         kept_pages)
from .db import ContentionError
from .db.errors import OperationalError, PgOperationalError, disk_full
from .runtime import runtime
from .uri_secrets import hide_uri_secrets
from .errors import UNAVAILABLE_RETRY_AFTER, ApiError
from .services.locks import CONTENTION_RETRY_AFTER_SECONDS

log = logging.getLogger("lobbytalks")

# One blueprint each.
BLUEPRINTS = (health, communities, community, manage, external, mcp, docs)
# The modules whose ``actions`` /api/community answers.
COMMUNITY_ACTIONS = (community, community_account, community_admin, community_agents,
                     community_cards, community_memories, community_notifications,
                     community_recovery, community_reports)
# The modules whose ``pages`` make up the ``web`` blueprint.
WEB_PAGES = (web, web_admin, web_agents, web_browse, web_developers, web_inbox, web_people,
             web_questions)
# What every template sees (any surface's page extends base.html).
TEMPLATE_GLOBALS = (web_base.page_globals, web_inbox.header_counts)

# HTTP statuses that werkzeug raises itself, mapped onto the protocol's machine codes.
_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large",
               415: "unsupported_media_type"}


def before_steps(settings: Any) -> tuple[Callable[[], None], ...]:
    """What runs before every view, in order: the access log's clock first, so that a
    request the guards refuse is timed too; a host name that can be read at all and, on a
    server only this machine reaches, the names it answers to; then the guards of the /api/
    surfaces."""
    clock = (accesslog.start_clock,) if settings.access_log else ()
    return (*clock, *hosts.host_step(settings), guards.guard_api_request, _ignore_unusable_range)


def _ignore_unusable_range() -> None:
    """A Range the static files cannot serve by (another unit than bytes, or malformed) was
    answered 416 with an error page; RFC 9110 §14.2 says to ignore it: the whole file."""
    value = request.environ.get("HTTP_RANGE")
    if value is not None and getattr(parse_range_header(value), "units", None) != "bytes":
        del request.environ["HTTP_RANGE"]


def after_steps(settings: Any) -> tuple[Callable[[Response], Response], ...]:
    """What runs on every response (a refused request's too), in order: the language
    cookie, the security and cache headers, and last the access-log line, whose duration
    then covers the steps before it."""
    log = (accesslog.line_writer(settings),) if settings.access_log else ()
    return (web_base.remember_language, guards.finish_response, *log)


def install(app: Flask, settings: Any) -> None:
    """Mount every surface on ``app`` and add its request steps and error handlers."""
    community.mount_actions(COMMUNITY_ACTIONS)
    # The protocol's surfaces match their paths as written: "/api//external" was werkzeug's
    # empty text/html 308 to the merged path, before authentication, where every /api path
    # answers JSON. Pages keep the redirect (a link mistyped by a person).
    app.url_map.merge_slashes = False
    for module in BLUEPRINTS:
        app.register_blueprint(module.bp)
    app.url_map.merge_slashes = True
    app.register_blueprint(web_base.blueprint(WEB_PAGES))
    for processor in TEMPLATE_GLOBALS:
        app.context_processor(processor)
    app.jinja_env.finalize = textrules.for_pages  # every value a template shows
    renderers.register_renderer(mcp.PATH, mcp.render_transport_error)
    renderers.register_page_renderer(web_base.error_page)
    _register_error_handlers(app)
    app.before_request(_before_request(before_steps(settings)))
    app.after_request(_after_request(after_steps(settings)))
    database = app.config["LOBBYTALKS"].db
    kept_pages.install(app)
    app.teardown_appcontext(lambda _exc: database.release_connection())


def _before_request(steps: tuple[Callable[[], None], ...]) -> Callable[[], None]:
    def before_request() -> None:
        for step in steps:
            step()  # a step refuses by raising ApiError; none answers in the view's place
    return before_request


def _after_request(steps: tuple[Callable[[Response], Response], ...]
                   ) -> Callable[[Response], Response]:
    def after_request(response: Response) -> Response:
        for step in steps:
            response = step(response)
        return response
    return after_request


def _register_error_handlers(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def api_error(error: ApiError):
        return renderers.render_error(request, error)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        status = error.code or 500
        code = _HTTP_CODES.get(status)
        if not renderers.is_api_path(request.path):
            # Pages, static files and unknown paths: the site's own page, whatever the status.
            code = code or ("invalid_request" if status < 500 else "service_unavailable")
        if code is None:
            return error
        response = renderers.render_error(request, ApiError(code, status=status))
        if isinstance(error, MethodNotAllowed) and error.valid_methods:
            response.headers["Allow"] = ", ".join(error.valid_methods)  # this route's own
        if isinstance(error, RequestedRangeNotSatisfiable) and error.length is not None:
            response.headers["Content-Range"] = f"{error.units} */{error.length}"  # the size
        return response

    _register_database_handlers(app)
    app.errorhandler(Exception)(_unexpected)


def _register_database_handlers(app: Flask) -> None:
    @app.errorhandler(ContentionError)
    def contention(error: ContentionError):
        # Rolled back, nothing written: the client may simply try again (services/locks.py).
        log.warning("%s %s lost a lock race (SQLSTATE %s); answered 503",
                    request.method, request.path, error.sqlstate)
        return renderers.render_error(request, ApiError(
            "service_unavailable", retry_after=CONTENTION_RETRY_AFTER_SECONDS))

    @app.errorhandler(PgOperationalError)
    def database_unavailable(error: PgOperationalError):
        # PostgreSQL down, restarting or out of connections: an outage, its password masked.
        said = hide_uri_secrets(str(error).splitlines()[0] if str(error) else "",
                                runtime().settings.database_url)
        return _unavailable(f"the database is unavailable ({said[:300]})")

    @app.errorhandler(OperationalError)  # PostgreSQL's own handler above comes first
    def sqlite_failed(error: OperationalError):
        if not disk_full(error):
            return _unexpected(error)
        # Nothing was written (the transaction rolled back); served again once space is freed.
        return _unavailable(f"the disk holding {runtime().settings.db_path} is full")


def _unavailable(why: str) -> Response:
    """A 503 that says when to try again, and one line a request in the log saying why (a
    traceback each was what the log showed of an outage or a full disk)."""
    log.warning("%s %s: %s; answered 503", request.method, request.path, why)
    g.setdefault("user", None)  # the error page asks no database who is signed in
    return renderers.render_error(request, ApiError("service_unavailable",
                                                    retry_after=UNAVAILABLE_RETRY_AFTER))


def _unexpected(error: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.path)
    g.setdefault("user", None)  # nor here: the database may be what failed
    return renderers.render_error(request, ApiError("service_unavailable"))
