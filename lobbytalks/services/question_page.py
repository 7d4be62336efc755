"""A question as its readers see it, composed above ``topics`` and ``cards``.

``read`` is the question, its discussion for those entitled to it and its answer cards (the
web API's topic read); ``page`` adds what the question page shows around it: the
community, the category, which answers are the reader's own, the card tools' state and
the agents' activity. The topic row is read once and handed down, so neither ``topics``
nor ``cards`` needs the other, and the page handler only parses, calls and renders.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from ..db import Connection, Q, Row
from . import agent_requests, agents, cards, communities, notifications, overlap, topics
from .reading import readable_topic

if TYPE_CHECKING:
    from ..crypto import Keyring

Spans = Callable[[str], list[tuple[int, int]]]


@dataclass(frozen=True)
class QuestionPage:
    data: dict[str, Any]            # what ``read`` returns
    community: dict[str, Any]
    island_name: str | None         # the category's stored name (None: no longer listed)
    mine: set[str]                  # the reader's own agents' answers (they may share them)
    owners: dict[str, str]          # each shown answer's id: the username of its agent's owner
    flow: dict[str, Any]            # see ``card_flow``
    live: Any                       # agent_requests.activity
    agents_asked: bool
    agents_tried: bool              # ... and one of them tried since, to no answer: ask again
    agents_answered: bool           # one of the viewer's agents has answered: nothing to ask
    answers_hidden: bool            # ... but an admin hid every such answer
    hidden_reason: str              # ... and why ("" when none hidden or none given)
    has_agents: bool                # "Ask my agents" would reach an agent of the viewer's
    tasks_here: bool                # the viewer's agents have claimed it: link to those tasks


def read(conn: Connection, keyring: "Keyring", viewer: int | None, topic_id: str, *,
         admin: bool = False) -> dict[str, Any]:
    """:raise 404: for an unknown topic, or one taken down that the reader may not see."""
    topic = readable_topic(conn, topic_id, viewer, admin=admin)
    data, _ = topics.read(conn, keyring, viewer, topic)
    return {**data, **cards.reader_cards(conn, topic, viewer)}


def page(conn: Connection, keyring: "Keyring", viewer: int | None, topic_id: str, *,
         now: int, admin: bool = False) -> QuestionPage:
    """:raise 404: for an unknown topic, or one taken down that the reader may not see."""
    topic = readable_topic(conn, topic_id, viewer, admin=admin)
    data, rows = topics.read(conn, keyring, viewer, topic)
    data.update(cards.reader_cards(conn, topic, viewer))
    mine = {r["id"] for r in rows if r["user_id"] == viewer} if viewer else set()
    island = next((i["name"] for i in topics.islands(conn) if i["id"] == topic["island_id"]), None)
    request = agent_requests.own_request(conn, viewer, topic_id, now=now)
    asked = request is not None
    own = agent_requests.own_answers(conn, viewer, topic) if topic["status"] == "open" else None
    answered = bool(own and own["answered"])
    hidden = answered and not own["shown"]
    return QuestionPage(
        data=data, community=communities.get_one(conn, viewer, topic["community_id"]),
        island_name=island, mine=mine, owners=answer_owners(conn, topic_id) if rows else {},
        flow=card_flow(conn, keyring, topic, data, viewer, mine),
        live=agent_requests.activity(conn, topic, now=now),
        agents_asked=asked, agents_tried=asked and bool(request["tried"]), agents_answered=answered,
        answers_hidden=hidden, hidden_reason=(own["hidden_reason"] or "") if hidden else "",
        # looked up only where the page could offer "Ask my agents"
        has_agents=viewer is not None and not asked and not answered
        and topic["status"] == "open" and agents.has_live_token(conn, viewer, now),
        # an answer of theirs came from a task: no need to look for one
        tasks_here=answered or viewer is not None and conn.execute(
            Q.get_task_of_user_on_topic, {"topic_id": topic_id, "user_id": viewer}
        ).fetchone() is not None)


def answer_owners(conn: Connection, topic_id: str) -> dict[str, str]:
    return {r["id"]: r["username"] for r in conn.execute(Q.list_message_owners, {
        "topic_id": topic_id}).fetchall()}


def card_flow(conn: Connection, keyring: "Keyring", topic: Row, data: dict[str, Any],
              reader: int | None, mine: set[str]) -> dict[str, Any]:
    """What the card tools need: why a preview cannot be built, requests already sent, a
    card an author's withdrawal hid, and the private-context guard for those entitled.

    For the asker also ``draft_spans``: where the draft repeats private context (a function
    of a draft text), or None when it does not.
    """
    guard = overlap.Guard(conn, keyring, topic["id"])
    current, shareable = cards.card_answers(data["messages"], topic["version"])
    own, _ = cards.card_answers([m for m in data["messages"] if m["id"] in mine], topic["version"])
    flow: dict[str, Any] = {
        "current_answers": current,
        "shareable": shareable,
        "own_current": own,  # the reader's own are allowed below them, not asked for
        "withdrawn": None,
        "moderated": None,
        # only one's own unshared answers get the author's warning, and only when entitled
        "author_repeats": guard.author_repeats(
            [m for m in data["messages"] if m["id"] in mine and not m["sharePublic"]], reader)
        if reader else {},
    }
    if data["topic"]["isAsker"]:
        # Only the asker can make a new card, so only the asker is told one is needed.
        hidden, why = (None, "") if data.get("answerCard") else \
            cards.last_hidden_card(conn, topic["id"])
        withdrawn = hidden if why == "withdrawn" else None
        # (an admin's hiding: said as plainly, never offered back, as the answer is hidden)
        moderated = hidden if why == "moderated" else None
        draft = data.get("cardDraft")
        repeats = guard.card_repeats(draft) if draft else []
        spans: Spans | None = (lambda text: guard.spans(draft["version"], text)) if repeats else None
        can_republish = cards.can_republish(conn, topic, withdrawn)
        flow.update(
            withdrawn=withdrawn, moderated=moderated,
            requested=notifications.requested_shares(conn, reader, topic),
            can_republish=can_republish, draft_repeats=repeats, draft_spans=spans,
            draft_outdated=data.get("cardDraftOutdated"),
            # republishing warns as publishing does when the card repeats private context
            republish_repeats=guard.card_repeats(withdrawn) if can_republish else [])
    return flow
