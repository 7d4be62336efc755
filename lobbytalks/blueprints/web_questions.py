"""Pages about questions: asking one, and reading one with its discussion and answer card."""
from __future__ import annotations

import re
from typing import Any

from flask import request
from limits import parse as parse_limit

from ..errors import ApiError
from ..models.web import INTENTS
from ..runtime import runtime
from ..services import communities, topics
from ..services.reading import latest_messages
from ..models.common import COMMUNITY_ID
from .web_base import (bp, day, distinct_labels, island_label, login_required, render, t,
                       viewer, viewer_id)

TOPIC_ID = re.compile(r"^[a-zA-Z0-9:_-]{1,64}$")


@bp.get("/ask")
@login_required
def ask():
    user = viewer()
    rt = runtime()
    joined = communities.list_page(rt.db, user.id, "joined", 1)["communities"]
    wanted = request.args.get("community", "")
    joined_ids = [c["id"] for c in joined]
    not_joined = None
    if wanted and wanted not in joined_ids and COMMUNITY_ID.match(wanted):
        try:
            not_joined = communities.get_one(rt.db, user.id, wanted)
        except ApiError:
            not_joined = None
    chosen = wanted if wanted in joined_ids else ("lobby" if "lobby" in joined_ids else
                                                  (joined_ids[0] if joined_ids else ""))
    origins = communities.joined_origins(rt.db, user.id)
    labels = distinct_labels(
        [{**c, **origins.get(c["id"], {"owner": None, "created": 0})} for c in joined],
        [lambda c: c["owner"] or t("common.site_owned"),
         lambda c: t("common.created_on", date=day(c["created"])), lambda c: c["id"]])
    limit = topic_limit(rt.settings.rate_topic)
    return render("ask.html", joined=joined, chosen=chosen, not_joined=not_joined,
                  islands=topics.islands(rt.db), intents=INTENTS, labels=labels, limit=limit)


def topic_limit(setting: str) -> str:
    """The daily question limit as people read it, from the setting that enforces it."""
    item = parse_limit(setting)
    unit = item.GRANULARITY.name
    period = t(f"period.{unit}") if item.multiples == 1 else t(f"period.n.{unit}", n=item.multiples)
    return t("ask.limit_hint", n=item.amount, period=period)


def own_message_ids(topic_id: str, user_id: int) -> set[str]:
    """Which answers on the page came from the viewer's own agents (they may share them)."""
    rows = latest_messages(runtime().db.conn, topic_id, topics.WEB_MESSAGE_LIMIT)
    return {r["id"] for r in rows if r["user_id"] == user_id}


def threads(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, list]]:
    """Top-level answers and each answer's replies; a reply to an answer not shown here
    stays top-level rather than disappearing."""
    shown = {m["id"] for m in messages}
    roots, children = [], {}
    for m in messages:
        if m["replyTo"] in shown:
            children.setdefault(m["replyTo"], []).append(m)
        else:
            roots.append(m)
    return roots, children


@bp.get("/q/<topic_id>")
def question(topic_id: str):
    if not TOPIC_ID.match(topic_id):
        raise ApiError("not_found", "话题不存在")
    reader = viewer_id()
    rt = runtime()
    data = topics.read(rt.db, rt.keyring, reader, topic_id)
    topic = data["topic"]
    community = communities.get_one(rt.db, reader, topic["communityId"])
    roots, children = threads(data["messages"])
    mine = own_message_ids(topic_id, reader) if data["allowed"] and reader else set()
    shareable = sum(1 for m in data["messages"]
                    if m["sharePublic"] and m["questionVersion"] == topic["questionVersion"])
    islands = {i["id"]: island_label(i["id"], i["name"]) for i in topics.islands(rt.db)}
    return render(
        "question.html", data=data, topic=topic, community=community, roots=roots,
        children=children, names={m["id"]: m["name"] for m in data["messages"]}, mine=mine,
        shareable=shareable, island=islands.get(topic["island"], topic["island"]),
        card=data.get("answerCard"), draft=data.get("cardDraft"))
