"""Pages about questions: asking one, and reading one with its discussion and answer card."""
from __future__ import annotations

from typing import Any

from flask import request
from markupsafe import Markup, escape
from limits import parse as parse_limit

from ..errors import ApiError
from ..models.web import DEFAULT_COMMUNITY, INTENTS
from ..runtime import runtime
from .. import clock
from ..services import communities, question_page, topics
from ..models.common import COMMUNITY_ID, ID
from ..models.external import CLIENTS, SOURCE_KINDS
from .common import as_reader, read_conn
from .web_base import (Pages, community_label, day, distinct_labels, int_arg, island_label,
                       login_required, page_url, render, t, viewer)
from .kept_pages import kept_page

pages = Pages()

# Answers shown per page of a question: 200 long answers made a ~22 MB page that took half a
# second to render; 20 keep a page small while most questions fit on the first.
ANSWERS_PER_PAGE = 20


@pages.get("/ask")
@login_required
def ask():
    user = viewer()
    rt = runtime()
    joined = communities.list_page(read_conn(), user.id, "joined", 1)["communities"]
    wanted = request.args.get("community", "")
    joined_ids = [c["id"] for c in joined]
    not_joined = None
    if wanted and wanted not in joined_ids and COMMUNITY_ID.fullmatch(wanted):
        try:
            not_joined = communities.get_one(read_conn(), user.id, wanted)
        except ApiError:
            not_joined = None
    fallback = DEFAULT_COMMUNITY if DEFAULT_COMMUNITY in joined_ids else (
        joined_ids[0] if joined_ids else "")
    chosen = wanted if wanted in joined_ids else fallback
    origins = communities.joined_origins(read_conn(), user.id)
    labels = distinct_labels(
        [{**c, "name": community_label(c["id"], c["name"]),
          **origins.get(c["id"], {"owner": None, "created": 0})} for c in joined],
        [lambda c: t("common.created_on", date=day(c["created"])), lambda c: c["id"]])
    limit = topic_limit(rt.settings.rate_topic)
    # told before anything is typed, not only when the question is sent
    ask_again_at = topics.next_question_at(read_conn(), user.id,
                                           rt.settings.questions_per_window, clock.now())
    return render("ask.html", joined=joined, chosen=chosen, not_joined=not_joined,
                  islands=topics.islands(read_conn()), intents=INTENTS, labels=labels, limit=limit,
                  ask_again_at=ask_again_at)


def topic_limit(setting: str) -> str:
    """The daily question limit as people read it, from the setting that enforces it."""
    item = parse_limit(setting)
    unit = item.GRANULARITY.name
    period = t(f"period.{unit}") if item.multiples == 1 else t(f"period.n.{unit}", n=item.multiples)
    return t("ask.limit_hint", n=item.amount, period=period)


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
        # a link from /tasks, /memories or the inbox to an answer no longer shown (hidden)
        self.missing = bool(wanted_answer) and wanted_answer not in self.page_of

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


@pages.get("/q/<topic_id>")
@kept_page
def question(topic_id: str):
    if not ID.fullmatch(topic_id):
        raise ApiError("not_found", "话题不存在")
    rt = runtime()
    with rt.db.snapshot() as conn:  # the answer count agrees with the answers shown
        shown = question_page.page(conn, rt.keyring, topic_id=topic_id, now=clock.now(),
                                   **as_reader(viewer()))
    data = shown.data
    pages = AnswerPages(data["messages"], int_arg("page", default=0),
                        request.args.get("answer", ""))
    roots, children = threads(pages.messages)
    flow = dict(shown.flow)
    spans = flow.pop("draft_spans", None)
    if "draft_repeats" in flow:  # the asker's: only a preview repeating private context gets marks
        flow["draft_marker"] = (lambda text: highlight(text, spans(text))) if spans else None
    island = data["topic"]["island"]
    return render(
        "question.html", data=data, topic=data["topic"], community=shown.community, roots=roots,
        children=children, names={m["id"]: m["name"] for m in data["messages"]}, mine=shown.mine,
        owners=shown.owners,
        flow=flow, island=island_label(island, shown.island_name) if shown.island_name else island,
        card=data.get("answerCard"), draft=data.get("cardDraft"), pages=pages,
        live=shown.live, agents_asked=shown.agents_asked, agents_tried=shown.agents_tried,
        agents_answered=shown.agents_answered, answers_hidden=shown.answers_hidden,
        hidden_reason=shown.hidden_reason,
        has_agents=shown.has_agents,
        tasks_here=shown.tasks_here,
        clients=CLIENTS, source_kinds=SOURCE_KINDS)
