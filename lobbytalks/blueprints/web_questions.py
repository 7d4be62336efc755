"""Pages about questions: asking one, and reading one with its discussion and answer card."""
from __future__ import annotations

import re
from typing import Any

from flask import request
from markupsafe import Markup, escape
from limits import parse as parse_limit

from ..errors import ApiError
from ..models.web import INTENTS
from ..runtime import runtime
from .. import clock
from ..services import agent_requests, cards, communities, notifications, overlap, topics
from ..services.reading import latest_messages
from ..models.common import COMMUNITY_ID
from .web_base import (Pages, day, distinct_labels, int_arg, island_label, login_required,
                       page_url, render, t, viewer, viewer_id)

pages = Pages()

TOPIC_ID = re.compile(r"^[a-zA-Z0-9:_-]{1,64}$")

# Answers shown per page of a question: 200 long answers made a ~22 MB page that took half a
# second to render; 20 keep a page small while most questions fit on the first.
ANSWERS_PER_PAGE = 20


@pages.get("/ask")
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


class AnswerPages:
    """The discussion cut into pages in reading order (oldest first), and where each answer is.

    A reply whose parent is on another page still shows, top-level, with a link to that page.
    """

    def __init__(self, messages: list[dict[str, Any]], wanted_page: int | None, wanted_answer: str):
        """``wanted_page`` (when given) wins; else the page holding ``wanted_answer``; else 1."""
        self.count = max(1, -(-len(messages) // ANSWERS_PER_PAGE))
        self.page_of = {m["id"]: i // ANSWERS_PER_PAGE + 1 for i, m in enumerate(messages)}
        self.page = wanted_page or self.page_of.get(wanted_answer, 1)
        start = (self.page - 1) * ANSWERS_PER_PAGE
        self.messages = messages[start:start + ANSWERS_PER_PAGE]
        self.past_end = self.page > self.count

    def href(self, message_id: str) -> str:
        """A link to one answer: its anchor here, or its page and anchor elsewhere."""
        page = self.page_of.get(message_id)
        if page is None or page == self.page:
            return f"#m-{message_id}"
        return page_url(page=page, answer=None) + f"#m-{message_id}"


def highlight(text: str, spans: list[tuple[int, int]]) -> Markup:
    """The text escaped, each repeated span of private context in a ``<mark>``."""
    out, at = [], 0
    for start, end in spans:
        out += [escape(text[at:start]),
                Markup('<mark class="private-repeat">{}</mark>').format(text[start:end])]
        at = end
    out.append(escape(text[at:]))
    return Markup("").join(out)


def card_flow(data: dict[str, Any], topic_id: str, reader: int | None,
              mine: set[str]) -> dict[str, Any]:
    """What the card tools need: why a preview cannot be built, requests already sent, a
    card an author's withdrawal hid, and the private-context guard for those entitled."""
    rt = runtime()
    conn = rt.db.conn
    row = topics.get_topic(conn, topic_id)
    guard = overlap.Guard(conn, rt.keyring, topic_id)
    current = [m for m in data["messages"] if m["questionVersion"] == row["version"]]
    withdrawn = None if data.get("answerCard") else cards.withdrawn_card(conn, topic_id)
    flow: dict[str, Any] = {
        "current_answers": len(current),
        "shareable": sum(1 for m in current if m["sharePublic"]),
        "withdrawn": withdrawn,
        # only one's own unshared answers get the author's warning, and only when entitled
        "author_repeats": {m["id"]: guard.author_repeats(m) for m in data["messages"]
                           if m["id"] in mine and not m["sharePublic"]},
    }
    if data["topic"]["isAsker"]:
        draft = data.get("cardDraft")
        repeats = guard.card_repeats(draft) if draft else []
        flow.update(
            requested=notifications.requested_shares(rt.db, reader, row),
            can_republish=cards.can_republish(conn, row, withdrawn),
            draft_repeats=repeats,
            # only a preview that repeats private context is shown with marks
            draft_marker=(lambda text: highlight(text, guard.spans(draft["version"], text)))
            if repeats else None)
    return flow


@pages.get("/q/<topic_id>")
def question(topic_id: str):
    if not TOPIC_ID.match(topic_id):
        raise ApiError("not_found", "话题不存在")
    reader = viewer_id()
    rt = runtime()
    data = topics.read(rt.db, rt.keyring, reader, topic_id)
    topic = data["topic"]
    community = communities.get_one(rt.db, reader, topic["communityId"])
    pages = AnswerPages(data["messages"], int_arg("page", default=0),
                        request.args.get("answer", ""))
    roots, children = threads(pages.messages)
    mine = own_message_ids(topic_id, reader) if data["allowed"] and reader else set()
    islands = {i["id"]: island_label(i["id"], i["name"]) for i in topics.islands(rt.db)}
    return render(
        "question.html", data=data, topic=topic, community=community, roots=roots,
        children=children, names={m["id"]: m["name"] for m in data["messages"]}, mine=mine,
        flow=card_flow(data, topic_id, reader, mine),
        island=islands.get(topic["island"], topic["island"]),
        card=data.get("answerCard"), draft=data.get("cardDraft"), pages=pages,
        live=agent_requests.activity(rt.db, topic_id, now=clock.now()),
        agents_asked=agent_requests.is_requested(rt.db, reader, topic_id))
