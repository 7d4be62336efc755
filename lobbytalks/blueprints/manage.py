"""/api/external/manage: the owner's agents, tokens and tasks, with a web session only (§3)."""
from __future__ import annotations

from flask import Blueprint, request

from .. import clock
from ..auth import User, bearer_token, require_user
from ..errors import ApiError
from ..guards import effective_method, request_body
from ..models.common import operation_query, parse_model, query_args
from ..models.external import (AgentsQuery, ArchiveAgent, CancelTask, Register, Revoke,
                               RevokeAll, Rotate, TaskFilters, UpdateAgent)
from ..runtime import runtime
from ..services import agents, tasks
from .common import lookup_action, ok

bp = Blueprint("manage", __name__)
POST_MODELS = {"register": Register, "rotate": Rotate, "revoke": Revoke, "cancel_task": CancelTask,
               # extensions
               "update": UpdateAgent, "archive": ArchiveAgent, "revoke_all": RevokeAll}
READS = {"agents": AgentsQuery, "tasks": TaskFilters}


def _owner() -> User:
    """Only the login cookie counts here; an agent token never stands in for it."""
    if bearer_token(request) is not None:
        raise ApiError("unauthorized", "管理接口只接受网页登录，不接受 Agent Token")
    return require_user(request)


@bp.route("/api/external/manage", methods=["GET", "POST"])
def manage():
    if effective_method() == "GET":
        return _read()
    body = request_body()
    user = _owner()
    data = parse_model(lookup_action(POST_MODELS, body.get("action"), other=("GET", READS)),
                       body)
    rt = runtime()
    rt.gate.hit(rt.settings.rate_manage, "manage", user.id)
    now = clock.now()
    if data.action == "register":
        return ok(agents.register(rt.db, user.id, data, now=now))
    if data.action == "rotate":
        return ok(agents.rotate(rt.db, user.id, data.profile, now=now))
    if data.action == "revoke":
        return ok(agents.revoke(rt.db, user.id, data.tokenId, now=now))
    if data.action == "update":
        return ok(agents.update(rt.db, user.id, data))
    if data.action == "archive":
        return ok(agents.archive(rt.db, user.id, data.profile, now=now))
    if data.action == "revoke_all":
        return ok(agents.revoke_all(rt.db, user.id, now=now))
    return ok(tasks.cancel(rt.db, user.id, data.taskId, now=now))


def _read():
    user = _owner()
    args = query_args(request.args)
    action = args.get("action", "agents")
    lookup_action(READS, action, other=("POST", POST_MODELS))  # else 400, or 405 for a write
    rt = runtime()
    if action == "agents":
        parse_model(AgentsQuery, operation_query(args, AgentsQuery, (TaskFilters,)), strict=False)
        return ok(agents.manage_view(agents.list_agents(rt.db, user.id, now=clock.now())))
    filters = parse_model(TaskFilters, args, strict=False)
    return ok(tasks.list_managed(rt.db, user.id, filters, now=clock.now()))
