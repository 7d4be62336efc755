"""POST /api/external/mcp: MCP for agents, stateless Streamable HTTP with JSON answers (§9).

The guards every API surface shares (``guards.SURFACES``: method, Origin/Sec-Fetch-Site,
Accept, Content-Type, body size, JSON) run before this view; then the same Bearer token
and per-token budget as REST. Because the body is read before the token, an
authentication failure can echo the request's id. Every failure before a tool runs is an
``ApiError`` rendered here as a JSON-RPC error with the HTTP status of the REST surface.
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, g, jsonify, request

from .. import actions
from .. import mcp as protocol
from .. import mcp_batch as batch
from ..auth import authenticate_agent
from ..errors import ApiError
from ..guards import SURFACES, read_json, request_body
from ..renderers import register_renderer
from ..runtime import runtime
from .common import ok
from .external import authenticated_agent

PATH = protocol.PATH
bp = Blueprint("mcp", __name__)


def id_to_echo() -> str | int | None:
    """The request's id for its error: a client pairs answers with requests by id (rmcp,
    Codex's client, drops an error without one, and the call waits for its timeout). From
    the body the guards read or, when they refused the request before reading it (an Accept
    without both types, a foreign Origin), from the body read now under the same rules; null
    when there is none to read (not JSON, too large, unparseable)."""
    payload = request_body()
    if payload is None and request.method == "POST":
        try:
            payload = read_json(request, SURFACES[PATH].body_limit)
        except ApiError:
            return None
    return protocol.request_id(payload)


def render_transport_error(error: ApiError) -> Response:
    """JSON-RPC error for anything refused before a tool runs (also for errors escaping
    the view, e.g. an HTTP method the guards refuse)."""
    response = jsonify(protocol.transport_error_body(id_to_echo(), error))
    if error.code == "method_not_allowed":
        response.headers["Allow"] = "POST"
    return response  # render_error adds the Bearer challenge to a 401


register_renderer(PATH, render_transport_error)


@bp.post(PATH)
def endpoint():
    payload = request_body()
    agent = authenticated_agent()
    rt = runtime()
    version = request.headers.get("MCP-Protocol-Version")

    def run(action: actions.Action, args: dict[str, Any]) -> dict[str, Any]:
        return actions.run(rt, agent, action, args)

    def run_in_batch(action: actions.Action, args: dict[str, Any]) -> dict[str, Any]:
        # Each tool call of a batch shows its token again, as a request of its own would:
        # a rotation, a revocation or a suspension that answered while the batch ran
        # stops the calls after it.
        g.pop("agent", None)
        return actions.run(rt, authenticate_agent(request), action, args)

    def charge(extra: int) -> None:  # a batch's further messages, each a request's worth
        budget = rt.gate.capacity(rt.settings.rate_token)
        if extra + 1 > budget:  # a 429 would have it wait for room that never comes
            raise ApiError("invalid_request", f"批量请求的 {extra + 1} 条消息多于此 Token 一个"
                                              f"时间窗的全部请求预算（{budget} 条），请拆小")
        if extra:  # all at once: a batch refused for want of budget spends none of it
            rt.gate.hit(rt.settings.rate_token, "token", agent.token_id, cost=extra)

    if isinstance(payload, list):
        status, body = batch.answer(payload, version_header=version, run=run_in_batch,
                                    settings=rt.settings, charge=charge)
    else:
        status, body = protocol.answer(payload, version_header=version, run=run,
                                       settings=rt.settings)
    if body is None:
        response = Response(status=status)
        del response.headers["Content-Type"]
        return response
    return ok(body, status)
