"""Request guards shared by every ``/api/`` surface.

Order matters and is the same everywhere: Origin, Sec-Fetch-Site, method, Content-Type,
body size, JSON. Each guard raises ``ApiError``; the surface decides how to render it.
"""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from flask import Request, Response, current_app

from .errors import ApiError

# Set in the WSGI environ by ``lobbytalks serve`` when it stopped reading a body at its size
# limit (lobbytalks.serving): the body is absent, and the request is answered 413.
BODY_REFUSED = "lobbytalks.body_refused"


def service_origin(request: Request) -> str:
    public_url = current_app.config["LOBBYTALKS"].settings.public_url
    base = public_url or request.host_url
    parts = urlsplit(base)
    return f"{parts.scheme}://{parts.netloc}".lower()


def check_origin(request: Request) -> None:
    """An Origin header, when present, must be the service's own address."""
    origin = request.headers.get("Origin")
    if origin is not None and origin.rstrip("/").lower() != service_origin(request):
        raise ApiError("forbidden_origin")


def check_not_cross_site(request: Request) -> None:
    if request.headers.get("Sec-Fetch-Site", "").lower() == "cross-site":
        raise ApiError("forbidden_origin", "不接受跨站请求")


def read_json_object(request: Request, limit: int) -> dict[str, Any]:
    """The POST body as a JSON object, or 415 / 413 / 400 ``invalid_json``."""
    data = read_json(request, limit)
    if not isinstance(data, dict):
        raise ApiError("invalid_request", "请求体必须是 JSON 对象")
    return data


def read_json(request: Request, limit: int) -> Any:
    """The POST body as any JSON value (MCP tells arrays apart), or 415 / 413 / 400."""
    if request.mimetype != "application/json":
        raise ApiError("unsupported_media_type")
    length = request.content_length
    if request.environ.get(BODY_REFUSED) or (length is not None and length > limit):
        raise ApiError("payload_too_large")
    raw = request.stream.read(limit + 1)
    if len(raw) > limit:
        raise ApiError("payload_too_large")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ApiError("invalid_json") from None


SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}


# Pages load scripts and styles from this server only: no inline script or style, no
# framing, forms post back here only.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)


def finish_response(response: Response) -> Response:
    """Security headers everywhere; a strict CSP on HTML; JSON is never cached."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    if response.mimetype == "text/html":
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    if response.mimetype == "application/json":
        response.headers["Cache-Control"] = "no-store"
    return response
