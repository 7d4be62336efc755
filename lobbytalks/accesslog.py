"""One access-log line per request on the ``lobbytalks.access`` logger (stderr).

What a line may hold is decided here and nowhere else: client address, method, path, the
query's parameter names (values are replaced by ``*``, except ``action``, which names an
endpoint action), status, duration, and the ids of the user and agent profile the request
was authenticated as. Never headers, cookies, tokens, bodies or query values: a Bearer
token, a password or private context cannot reach the log because nothing that carries
them is read, and what is read, the path and the parameter names, is shown with anything
shaped like a token masked (a client misconfigured to put its token there).
"""
from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Callable
from urllib.parse import parse_qsl, quote

from flask import Response, g, request

logger = logging.getLogger("lobbytalks.access")
_ACTION = re.compile(r"[a-z_]{1,40}")
# Characters kept as they are in a logged path or parameter name; everything else (space,
# control characters, '%', '?', '&', '=', quotes, non-ASCII) is percent-encoded, so a field
# can neither split into forged fields or lines nor pass for a query.
_SAFE_IN_FIELD = "/:@!$'()*+,;-._~"
# What ``quote`` leaves as it is (letters, digits, ``_.-~`` and the above): such a field,
# the common case, is returned without quoting it.
_UNCHANGED_BY_QUOTE = re.compile(r"[A-Za-z0-9/:@!$'()*+,;\-._~]*")
# Our agent token's prefix in any case and what follows it, and any run long enough to be
# a key or a session id (the server's own ids are at most 26 characters).
_SECRET_LIKE = re.compile(r"[Ll][Bb][Tt]_[A-Za-z0-9]*|[A-Za-z0-9_-]{40,}")
_MASK = "(redacted)"


class _Stderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (test runners swap it)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("%(message)s"))

    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def start_clock() -> None:
    """Before the view: when the request started (the line's ``ms``)."""
    g.access_started = time.perf_counter()


_HANDLER = _Stderr()


def line_writer(settings) -> Callable[[Response], Response]:
    """After the view: the step that writes the request's line in ``settings.log_format``."""
    if _HANDLER not in logger.handlers:
        logger.addHandler(_HANDLER)
        logger.setLevel(logging.INFO)
        logger.propagate = False  # the CLI's root handler would print each line twice
    as_json = settings.log_format == "json"

    def log_request(response: Response) -> Response:
        if logger.isEnabledFor(logging.INFO):
            write(format_line(entry(response), as_json))
        return response
    return log_request


def write(line: str) -> None:
    """The line on stderr, as the handler would write it, without a log record (making
    one, formatting it and passing it through ``logging`` was 40% of healthz's time); a
    logger someone gave other handlers or filters gets the record as usual."""
    if logger.handlers == [_HANDLER] and not logger.filters and not _HANDLER.filters:
        with _HANDLER.lock:  # type: ignore[union-attr]  (one whole line at a time)
            stream = sys.stderr
            stream.write(line + "\n")
            stream.flush()
        return
    logger.handle(logger.makeRecord(logger.name, logging.INFO, __file__, 0, line,
                                    None, None, "log_request"))


def redacted_query(query: str) -> str:
    """``action=claim_task&topic=*``: names kept, values hidden (``action`` shown)."""
    parts = []
    for name, value in parse_qsl(query, keep_blank_values=True):
        shown = value if name == "action" and _ACTION.fullmatch(value) else "*"
        parts.append(f"{_shown(name, 40)}={shown}")
    return "&".join(parts)


def _shown(text: str, limit: int | None = None) -> str:
    """A path or a parameter name as the log shows it: masked (before it is cut short, so
    no cut leaves part of a secret too short to be recognised), then made one field."""
    return _clean(_SECRET_LIKE.sub(_MASK, text)[:limit])


def _clean(text: str) -> str:
    """Percent-encoded again, so the path and parameter names stay one field of one line: a
    decoded %20 must not forge the fields after it, nor a %0A a second line."""
    if _UNCHANGED_BY_QUOTE.fullmatch(text):
        return text
    return quote(text, safe=_SAFE_IN_FIELD)


_stamp: tuple[int, str] = (0, "")


def _utc_stamp() -> str:
    """The current second as the line's ``time``, formatted once per second."""
    global _stamp
    second = int(time.time())
    if _stamp[0] != second:
        _stamp = (second, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second)))
    return _stamp[1]


def entry(response: Response) -> dict:
    # The objects behind the proxies, looked up once rather than per attribute.
    req, state = request._get_current_object(), g._get_current_object()  # type: ignore
    started = getattr(state, "access_started", None)
    user, agent = getattr(state, "user", None), getattr(state, "agent", None)
    query = req.query_string
    return {
        "time": _utc_stamp(),
        "client": _clean(req.remote_addr or "-"),
        "method": req.method,
        "path": _shown(req.path),
        "query": redacted_query(query.decode("latin-1")) if query else "",
        "status": response.status_code,
        "ms": round((time.perf_counter() - started) * 1000, 1) if started else None,
        "user": agent.user_id if agent else (user.id if user else None),
        "agent": agent.profile_id if agent else None,
    }


def format_line(e: dict, as_json: bool) -> str:
    if as_json:
        return json.dumps(e, ensure_ascii=False, separators=(",", ":"))
    target = e["path"] + (f"?{e['query']}" if e["query"] else "")
    return (f"{e['time']} {e['client']} {e['method']} {target} {e['status']} {e['ms']}ms "
            f"user={e['user'] or '-'} agent={e['agent'] or '-'}")
