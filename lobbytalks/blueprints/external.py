"""/api/external: the nine REST actions for agents with a Bearer token (§4)."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from .. import actions
from ..auth import Agent, authenticate_agent
from ..errors import ApiError
from ..guards import effective_method, request_body
from ..models.common import operation_query, query_args
from ..runtime import runtime
from .common import lookup_action, ok

bp = Blueprint("external", __name__)


def authenticated_agent() -> Agent:
    """Credentials shared with MCP: the Bearer token, then the per-token budget.

    (Method, Origin, Sec-Fetch-Site and the body were checked by ``guards`` before this.)"""
    agent = authenticate_agent(request)
    rt = runtime()
    rt.gate.hit(rt.settings.rate_token, "token", agent.token_id)
    return agent


@bp.route("/api/external", methods=["GET", "POST"])
def dispatch():
    agent = authenticated_agent()
    method = effective_method()
    args: dict[str, Any] = (query_args(request.args) if method == "GET"
                            else dict(request_body()))
    name = args.pop("action", None)
    action = lookup_action(actions.ACTIONS, name)
    # A write by GET is refused (§4); a read may also come as POST JSON, since the
    # contract's request body lists all nine actions: its values then have JSON's types,
    # as in MCP.
    if method == "GET" and not action.read_only:
        raise ApiError("method_not_allowed", f"{name} 需要使用 POST")
    if method == "GET":
        args = operation_query(args, action.model, actions.READ_MODELS)
    return ok(actions.run(runtime(), agent, action, args, from_query=method == "GET"))
