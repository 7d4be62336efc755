"""/api/community: accounts, questions and discussion reading for people (protocol §11).

POST actions are dispatched through ``POST_ACTIONS`` and GET views through ``GET_ACTIONS``.
This module and the ``community_*`` modules (accounts, memories, answer cards ...) each
declare theirs in an ``ActionTable``; ``mount_actions`` (called by ``lobbytalks.wiring``)
fills the two tables from all of them.
"""
from __future__ import annotations

from typing import Any, Callable

from flask import Blueprint, Response, request

from .. import clock
from ..auth import User, current_user, require_user
from ..guards import request_body
from ..models.common import check_declared, parse_model, query_args
from ..models.web import (CommunityQuery, TopicListQuery, TopicRef, TopicRevise,
                          WebTopicCreate)
from ..runtime import Runtime, runtime
from ..services import question_page, topics
from .common import ActionTable, as_reader, lookup_action, merged_actions, ok, read_conn

bp = Blueprint("community", __name__)
POST_ACTIONS: dict[str, Callable[[dict[str, Any]], Response]] = {}
GET_ACTIONS: dict[str, Callable[[], Response]] = {}


actions = ActionTable()


def mount_actions(modules: tuple[Any, ...]) -> None:
    """Answer every module's ``actions`` (the same set for every app: filled afresh)."""
    tables = [module.actions for module in modules]
    for table, method in ((POST_ACTIONS, "POST"), (GET_ACTIONS, "GET")):
        merged = merged_actions(tables, method)
        table.clear()
        table.update(merged)


@bp.get("/api/community")
def read():
    # The contract lists one query for the whole operation: what it declares is checked
    # even where the view asked for does not use it (``action`` is looked up below).
    check_declared(query_args(request.args), CommunityQuery, skip=("action",))
    action = request.args.get("action")
    if action is not None:
        return lookup_action(GET_ACTIONS, action, other=("POST", POST_ACTIONS))()
    if "topic" in request.args:
        return _read_topic(request.args["topic"])
    return _list_topics()  # the named community's, or the default one's


@bp.post("/api/community")
def write():
    body = request_body()
    return lookup_action(POST_ACTIONS, body.get("action"), other=("GET", GET_ACTIONS))(body)


def signed_in_write(model: Any, body: dict[str, Any], *, limit: str | None = "rate_web_write",
                    scope: str = "web-write") -> tuple[User, Any, Runtime]:
    """The logged-in user, the validated body and the runtime, after spending the user's
    write budget (``limit`` names the setting; None: a write each thing undergoes once)."""
    user = require_user(request)
    data = parse_model(model, body)
    rt = runtime()
    if limit is not None:
        rt.gate.hit(getattr(rt.settings, limit), scope, user.id)
    return user, data, rt


def _read_topic(topic_id: str) -> Response:
    user = current_user(request)
    rt = runtime()
    with rt.db.snapshot() as conn:  # the answer count agrees with the answers listed
        return ok(question_page.read(conn, rt.keyring, topic_id=topic_id, **as_reader(user)))


def _list_topics() -> Response:
    query = parse_model(TopicListQuery, query_args(request.args), strict=False)
    user = current_user(request)
    return ok(topics.list_in_community(read_conn(), user.id if user else None, query.community,
        q=query.q.strip(), status=query.status, sort=query.sort, page=query.page))


@actions.get("me")
def me() -> Response:
    user = current_user(request)
    account = None if user is None else {
        "id": user.id, "username": user.username, "isAdmin": user.is_admin}
    # The platform never runs a model: the official-model status is always "not offered".
    return ok({"user": account, "officialModel": {"available": False, "dailyQuota": 0}})


@actions.get("islands")
def islands() -> Response:
    return ok({"islands": topics.islands(read_conn())})


@actions.post("topic")
def ask(body: dict[str, Any]) -> Response:
    user = require_user(request)
    data = parse_model(WebTopicCreate, body)
    rt = runtime()
    # The day's questions are counted by the service from those asked: a send again of one
    # already asked (its first answer lost) is answered after the last of them too, and one
    # refused (not a member yet, an unknown category, a secret in it) spends nothing.
    return ok(topics.create(rt.db, rt.keyring, user.id, data, now=clock.now(),
                            per_window=rt.settings.questions_per_window))


@actions.post("close")
def close(body: dict[str, Any]) -> Response:
    user = require_user(request)
    data = parse_model(TopicRef, body)
    return ok(topics.close(runtime().db, user.id, user.is_admin, data.topic, now=clock.now()))


@actions.post("revise")
def revise(body: dict[str, Any]) -> Response:
    user, data, rt = signed_in_write(TopicRevise, body)
    return ok(topics.revise(rt.db, rt.keyring, user.id, data, now=clock.now()))
