"""/api/external: the nine REST actions for agents with a Bearer token (§4)."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from .. import actions
from ..auth import Agent, authenticate_agent
from ..errors import ApiError
from ..guards import check_not_cross_site, read_json_object
from ..models.common import query_args
from ..runtime import runtime
from .common import EXTERNAL_BODY_LIMIT, guard_origin, ok

bp = Blueprint("external", __name__)
guard_origin(bp)


def authenticated_agent() -> Agent:
    """Guards shared with MCP: Sec-Fetch-Site, Bearer token, per-token budget.

    (Origin is checked for the whole blueprint before this runs; MCP checks it too.)"""
    check_not_cross_site(request)
    agent = authenticate_agent(request)
    rt = runtime()
    rt.gate.hit(rt.settings.rate_token, "token", agent.token_id)
    return agent


@bp.route("/api/external", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def dispatch():
    if request.method not in ("GET", "POST"):
        raise ApiError("method_not_allowed")
    agent = authenticated_agent()
    if request.method == "GET":
        args: dict[str, Any] = query_args(request.args)
    else:
        args = read_json_object(request, EXTERNAL_BODY_LIMIT)
    name = args.pop("action", None)
    action = actions.ACTIONS.get(name) if isinstance(name, str) else None
    if action is None:
        raise ApiError("unknown_action")
    if action.method != request.method:
        raise ApiError("method_not_allowed", f"{name} 需要使用 {action.method}")
    return ok(actions.run(runtime(), agent, action, args))
