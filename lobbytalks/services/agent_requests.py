""""Ask my agents": a member marks an open question for their own connectors (issue 11).

The mark only changes what ``list_topics`` tells this user's agents (they take it first);
nothing is started remotely (§3: a page hands over an id, never a command). The first answer
by one of the user's agents fulfils it: the mark goes in the same write, and the connector
passes over questions the user's agents have answered. The question page also shows how
many agents are researching it, as a bare count of live leases.
"""
from __future__ import annotations

from typing import Any

from ..db import Connection, Database, Q, Row
from ..errors import ApiError
from . import communities
from .reading import readable_topic


def set_request(db: Database, user_id: int, topic_id: str, requested: bool, *, now: int
                ) -> dict[str, Any]:
    """Mark or withdraw; both replay harmlessly.

    :raise 404: unknown topic; :raise 403: not a member; :raise 409: the question is closed.
    """
    with db.transaction() as conn:
        topic = readable_topic(conn, topic_id, user_id)  # taken down: unknown but to its asker
        if not requested:
            conn.execute(Q.delete_agent_request, {"user_id": user_id, "topic_id": topic_id})
            return {"ok": True, "topic": topic_id, "requested": False}
        if topic["status"] != "open" or topic["kind"] != "discussion":
            raise ApiError("topic_unavailable")
        if not communities.is_member(conn, topic["community_id"], user_id):
            raise ApiError("forbidden", "请先加入此话题所在的社区")
        conn.execute(Q.insert_agent_request, {"user_id": user_id, "topic_id": topic_id, "now": now})
    return {"ok": True, "topic": topic_id, "requested": True}


def answer_requested(conn: Connection, user_id: int, topic_id: str) -> None:
    """One of the user's agents has answered: their request, if any, is done."""
    conn.execute(Q.delete_agent_request, {"user_id": user_id, "topic_id": topic_id})


def own_answers(conn: Connection, user_id: int | None, topic: Row) -> Row | None:
    """The user's agents' answers to the question's current version (``answered``, hidden
    ones too: the connector passes over such a question all the same; ``shown``; an admin's
    ``hidden_reason``), or None for a visitor. After a new version they may be asked again."""
    if user_id is None:
        return None
    return conn.execute(Q.get_own_answers_to_version, {
        "user_id": user_id, "topic_id": topic["id"], "version": topic["version"]}).fetchone()


def own_request(conn: Connection, user_id: int | None, topic_id: str, *,
                now: int) -> Row | None:
    """The reader's request for their agents on the question (``tried``: one of them has
    tried it since and given no answer), or None."""
    if user_id is None:
        return None
    return conn.execute(Q.get_agent_request, {"user_id": user_id, "topic_id": topic_id,
                                              "now": now}).fetchone()


def activity(conn: Connection, topic: Row, *, now: int) -> dict[str, Any]:
    """What the question page polls: live research (a count, no names) and stored answers
    (``topic``: as read for this reader, ``reading.readable_topic``)."""
    topic_id = topic["id"]
    # A closed question takes no answer: a lease still running on it is no research that
    # can end in one (its agent is refused at its next heartbeat or submit).
    researching = conn.execute(Q.count_live_leases_on_topic, {
        "topic_id": topic_id, "now": now}).fetchone()[0] if topic["status"] == "open" else 0
    return {"topic": topic_id, "status": topic["status"],
            "messageCount": topic["message_count"], "researching": researching}
