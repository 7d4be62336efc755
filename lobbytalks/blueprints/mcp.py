"""POST /api/external/mcp: MCP for agents, stateless Streamable HTTP with JSON answers (§9).

The order of checks is the external API's: method, Origin/Sec-Fetch-Site, then Accept
(MCP's own rule), Content-Type, body size, JSON; then the same Bearer token and per-token
budget as REST. The body is read before the token so that an authentication failure can
echo the request's id. Every failure before a tool runs is an ``ApiError`` rendered here
as a JSON-RPC error with the HTTP status of the REST surface.
"""
from __future__ import annotations

from flask import Blueprint, Response, g, jsonify, request

from .. import actions
from .. import mcp as protocol
from ..errors import ApiError
from ..guards import check_not_cross_site, check_origin, read_json
from ..renderers import register_renderer
from ..runtime import runtime
from .common import EXTERNAL_BODY_LIMIT, ok
from .external import authenticated_agent

PATH = "/api/external/mcp"
bp = Blueprint("mcp", __name__)


def render_transport_error(error: ApiError) -> Response:
    """JSON-RPC error for anything refused before a tool runs (also for errors escaping
    the view, e.g. an HTTP method werkzeug itself rejects)."""
    response = jsonify(protocol.transport_error_body(g.get("mcp_request_id"), error))
    if error.code == "method_not_allowed":
        response.headers["Allow"] = "POST"
    if error.code == "unauthorized":
        # RFC 6750: a 401 names its scheme. No resource_metadata is offered: there is no
        # OAuth here, the token comes from the web page.
        response.headers["WWW-Authenticate"] = 'Bearer realm="lobbytalks"'
    return response


register_renderer(PATH, render_transport_error)


@bp.route(PATH, methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def endpoint():
    if request.method != "POST":
        # No server-initiated stream (GET) and no session to end (DELETE).
        raise ApiError("method_not_allowed", "MCP 端点只接受 POST")
    check_origin(request)
    check_not_cross_site(request)
    if not protocol.accepts_json_and_event_stream(request.headers.get("Accept")):
        raise ApiError("not_acceptable")
    payload = read_json(request, EXTERNAL_BODY_LIMIT)
    g.mcp_request_id = protocol.request_id(payload)
    agent = authenticated_agent()
    rt = runtime()
    status, body = protocol.answer(
        payload, version_header=request.headers.get("MCP-Protocol-Version"),
        run=lambda action, args: actions.run(rt, agent, action, args))
    if body is None:
        response = Response(status=status)
        del response.headers["Content-Type"]
        return response
    return ok(body, status)
