"""Request guards shared by every ``/api/`` surface, one step of the request order that
``lobbytalks.wiring`` declares (after the access log's clock, before the view).

``guard_api_request`` applies, for every path in ``SURFACES``, the first failure answering
(HEAD counts as GET; a GET stops after step 3, it has no body):

1. method                     405 ``method_not_allowed``
2. Origin (reads too)         403 ``forbidden_origin``
3. ``Sec-Fetch-Site: cross-site`` on writes (external surfaces: reads too)  403 ``forbidden_origin``
4. Accept (MCP only)          406 ``not_acceptable``
5. Content-Type, Content-Encoding  415 ``unsupported_media_type``
6. body size                  413 ``payload_too_large``
7. JSON                       400 ``invalid_json``; a body that must be an object and is not,
                              400 ``invalid_request``

Then the view: 8. credentials (401), 9. the action (``unknown_action``, or
``method_not_allowed`` for an action the surface answers with the other method), 10. its
fields. MCP checks its JSON-RPC envelope between 8 and 9. The transport comes before
credentials because ``/api/community`` takes ``register`` and ``login`` from people without
a session: there no surface could say what credentials a request needs before reading it,
so every surface reads first and a malformed request gets the same answer whoever sends it.
On ``/api/community`` the action decides whether credentials are needed at all, so there 9
comes before 8.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Request, Response, current_app, g, request
from werkzeug.wsgi import get_content_length

from .errors import ApiError
from .mcp import accepts_json_and_event_stream
from .origins import origin_of
from .quotas import COMMUNITIES_BODY_LIMIT, EXTERNAL_BODY_LIMIT, WEB_BODY_LIMIT
from .strict_json import parse_json
from .textrules import HTTP_WHITESPACE

# What the server itself buffers at most (lobbytalks.serving): the largest of the above.
LARGEST_BODY_LIMIT = max(WEB_BODY_LIMIT, COMMUNITIES_BODY_LIMIT, EXTERNAL_BODY_LIMIT)


@dataclass(frozen=True)
class Surface:
    methods: tuple[str, ...]
    body_limit: int
    json_object: bool = True         # MCP tells a batch (array) apart itself
    cross_site_reads: bool = False   # the external surfaces refuse cross-site reads as well
    event_stream: bool = False       # MCP: Accept must admit JSON and an event stream


SURFACES: dict[str, Surface] = {
    "/api/external": Surface(("GET", "POST"), EXTERNAL_BODY_LIMIT, cross_site_reads=True),
    "/api/external/manage": Surface(("GET", "POST"), EXTERNAL_BODY_LIMIT, cross_site_reads=True),
    "/api/external/mcp": Surface(("POST",), EXTERNAL_BODY_LIMIT, json_object=False,
                                 cross_site_reads=True, event_stream=True),
    "/api/communities": Surface(("GET", "POST"), COMMUNITIES_BODY_LIMIT),
    "/api/community": Surface(("GET", "POST"), WEB_BODY_LIMIT),
}


def guard_api_request() -> None:
    """The before-request hook: steps 1–7 above; the parsed body waits in ``request_body``."""
    surface = SURFACES.get(request.path)
    if surface is None:
        return
    method = effective_method()
    if method not in surface.methods:
        raise ApiError("method_not_allowed")
    check_origin(request)
    writing = method == "POST"
    if writing or surface.cross_site_reads:
        check_not_cross_site(request)
    if not writing:
        return
    if surface.event_stream and not accepts_json_and_event_stream(request.headers.get("Accept")):
        raise ApiError("not_acceptable")
    read = read_json_object if surface.json_object else read_json
    g.api_body = read(request, surface.body_limit)


def effective_method() -> str:
    """The request's method as the API surfaces treat it: HEAD is a GET without its body."""
    return "GET" if request.method == "HEAD" else request.method


def request_body() -> Any:
    """The JSON body ``guard_api_request`` read for this POST (None before it has)."""
    return g.get("api_body")

# Set in the WSGI environ by ``lobbytalks serve`` when it stopped reading a body at its size
# limit (lobbytalks.serving): the body is absent, and the request is answered 413.
BODY_REFUSED = "lobbytalks.body_refused"


def service_origin(request: Request) -> str | None:
    public_url = current_app.config["LOBBYTALKS"].settings.public_url
    return origin_of(public_url or request.host_url, path_allowed=True)


def check_origin(request: Request) -> None:
    """An Origin header, when present, must be the service's own address."""
    origin = request.headers.get("Origin")
    if origin is not None and (origin_of(origin) or "?") != service_origin(request):
        raise ApiError("forbidden_origin")


def check_from_this_site(request: Request) -> None:
    """A form the browser sends by itself (no script, no JSON) may come from any site, so
    it must show it comes from this one: its own Origin, or, without one,
    ``Sec-Fetch-Site: same-origin``. Not merely the absence of a foreign Origin."""
    check_origin(request)
    if "Origin" not in request.headers and \
            request.headers.get("Sec-Fetch-Site", "").lower() != "same-origin":
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
    environ = request.environ
    if media_type(environ.get("CONTENT_TYPE", "")) != "application/json":
        raise ApiError("unsupported_media_type")
    coding = (environ.get("HTTP_CONTENT_ENCODING") or "identity").strip(HTTP_WHITESPACE)
    if coding.lower() != "identity":
        raise ApiError("unsupported_media_type", "请求体不能压缩（不支持 Content-Encoding）")
    length = get_content_length(environ)
    if environ.get(BODY_REFUSED) or (length is not None and length > limit):
        raise ApiError("payload_too_large")
    raw = _body_bytes(environ, length, limit)
    if len(raw) > limit:
        raise ApiError("payload_too_large")
    return parse_json(raw)


def media_type(content_type: str) -> str:
    """``Content-Type``'s type/subtype, lower-cased (werkzeug's ``request.mimetype``)."""
    return content_type.partition(";")[0].strip().lower()


def _body_bytes(environ: dict[str, Any], length: int | None, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the body, as werkzeug's ``request.stream`` would give
    them, read from the WSGI input itself: the stream and ``content_length`` properties
    cost 10-13 µs a request more, looking the same headers up again. A server that ends the
    input (waitress, for a chunked body too) is read to its end; otherwise no further than
    Content-Length, and a body without one is empty."""
    stream = environ["wsgi.input"]
    if "wsgi.input_terminated" in environ:
        return stream.read(limit + 1)
    return stream.read(length) if length else b""


SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    # the pages use none of these powerful features: nothing in them (nor anything that
    # ever got into them) may ask for the camera, microphone, location, payments or USB
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
}
_SECURITY_HEADERS_LOWERED = tuple((name.lower(), name, value)
                                  for name, value in SECURITY_HEADERS.items())


_REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _drop_own_host(headers: Any) -> None:
    """Werkzeug's own redirects (``//a`` to ``/a``) are absolute, built from the request's
    Host header, which anyone can set: pointing back at this server, a path says the same
    without repeating it."""
    location, own = headers.get("Location"), request.host_url
    if location and location.startswith(own):
        headers["Location"] = "/" + location[len(own):]


# Pages load scripts and styles from this server only: no inline script or style, no
# framing, forms post back here only.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)


def finish_response(response: Response) -> Response:
    """Security headers everywhere; a strict CSP on HTML; JSON is never cached; a redirect
    to this server names no host and carries no page.

    A header the view set already is kept. (Looked up in one pass over the headers:
    ``Headers.setdefault`` raises and catches a ``KeyError`` for each absent one.)"""
    headers = response.headers
    if response.status_code in _REDIRECTS:
        _drop_own_host(headers)
        if response.mimetype == "text/html":
            # werkzeug's own redirects (``//a`` to ``/a``) carry an English page linking
            # to the address built from the request's Host: the Location says it all
            response.set_data(b"")
    present = {name.lower() for name, _ in headers.items()}
    for lowered, name, value in _SECURITY_HEADERS_LOWERED:
        if lowered not in present:
            headers.add(name, value)
    mimetype = response.mimetype
    if mimetype == "text/html" and "content-security-policy" not in present:
        headers.add("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    if mimetype == "application/json":
        headers["Cache-Control"] = "no-store"
    return response
