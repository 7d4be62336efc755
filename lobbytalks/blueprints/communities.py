"""/api/communities: public community list, single item, create/join/leave (protocol §10)."""
from __future__ import annotations

from flask import Blueprint, request

from .. import clock
from ..auth import current_user, require_user
from ..errors import ApiError
from ..guards import request_body
from ..models.common import parse_model, query_args
from ..models.web import CommunitiesQuery, CommunityCreate, CommunityMembership, CommunityUpdate
from ..runtime import runtime
from ..services import communities
from .common import lookup_action, ok, read_conn

bp = Blueprint("communities", __name__)
MODELS = {"create": CommunityCreate, "join": CommunityMembership, "leave": CommunityMembership,
          "update": CommunityUpdate}  # update: an extension, the creator's description


@bp.get("/api/communities")
def list_or_get():
    user = current_user(request)
    viewer = user.id if user else None
    args = query_args(request.args)  # a parameter given twice is refused, id too
    if "id" in args:
        # With an id, scope and page take no part (§10): they are not checked; anything
        # else is as unknown here as in the list.
        query = parse_model(CommunitiesQuery, {
            k: v for k, v in args.items() if k not in ("scope", "page")})
        return ok({"community": communities.get_one(read_conn(), viewer, query.id)})
    query = parse_model(CommunitiesQuery, args, strict=False)
    if query.scope == "joined" and user is None:
        raise ApiError("unauthorized", "查看已加入的社区需要登录")
    return ok(communities.list_page(read_conn(), viewer, query.scope, query.page))


@bp.post("/api/communities")
def mutate():
    body = request_body()
    user = require_user(request)
    rt = runtime()
    action = body.get("action")
    model = lookup_action(MODELS, action, "action 必须是 create、join、leave 或 update")
    data = parse_model(model, body)
    if action == "create":  # a send again creates nothing: it is not counted
        again = communities.created_before(rt.db.conn, user.id, data.requestId, data.name,
                                           data.description)
        if again is not None:
            return ok(again)
    rt.gate.hit(rt.settings.rate_community, "community", user.id)
    now = clock.now()
    if action == "create":
        return ok(communities.create(rt.db, user.id, data.name, data.description, now=now,
                                     request_id=data.requestId))
    if action == "join":
        return ok(communities.join(rt.db, user.id, data.target, now=now))
    if action == "update":
        return ok(communities.update(rt.db, user.id, data.target, data.description, now=now,
                                     is_admin=user.is_admin))
    return ok(communities.leave(rt.db, user.id, data.target))
