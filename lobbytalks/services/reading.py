"""Reading rights and the shapes in which topics and messages are shown.

The full-text right belongs to the asker and to users any of whose agents has a valid
message on the topic. Membership, the admin role or seeing one's own task list never grant it.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..db import Connection, Q, Row
from ..errors import ApiError
from ..jsonfast import loads


def get_topic(conn: Connection, topic_id: str) -> Row:
    """:raise 404: for an unknown topic."""
    return _found(conn.execute(Q.get_topic, {"id": topic_id}).fetchone())


def get_topic_for_member(conn: Connection, topic_id: str, user_id: int) -> Row:
    """The topic with ``member``: 1 when the user belongs to its community, else 0 (what
    ``preconditions.check_topic`` reads). :raise 404: for an unknown topic."""
    return _found(conn.execute(Q.get_topic_for_member,
                               {"id": topic_id, "user_id": user_id}).fetchone())


def readable_topic(conn: Connection, topic_id: str, viewer: int | None, *,
                   admin: bool = False) -> Row:
    """The topic for a reading: one an admin took down exists only for its asker and the
    admins, and is as unknown as a missing one to everyone else (agents included).
    :raise 404: unknown, or hidden from this reader."""
    return as_seen_by(get_topic(conn, topic_id), viewer, admin=admin)


def as_seen_by(topic: Row, viewer: int | None, *, admin: bool = False,
               unknown: str = "话题不存在") -> Row:
    """``topic``, read already, for ``viewer`` (None: an agent, its asker's too).
    :raise 404: taken down, and hidden from this reader (``unknown``: what a missing id
    of the request's kind is told, word for word)."""
    if topic["hidden_at"] is not None and not admin and viewer != topic["author_id"]:
        raise ApiError("not_found", unknown)
    return topic


TAKEN_DOWN = "这个问题已被管理员下架"
# What stands for its title where others keep an item of it (their tasks, their memories).
TAKEN_DOWN_TITLE = "（此问题已被管理员下架）"


def refuse_if_taken_down(topic: Row) -> None:
    """Nothing more goes out about a question taken down, not even from its asker (a share
    request or a card would carry its title into others' inboxes).
    :raise 409 topic_unavailable: taken down."""
    if topic["hidden_at"] is not None:
        raise ApiError("topic_unavailable", TAKEN_DOWN)


def _found(row: Row | None) -> Row:
    if row is None:
        raise ApiError("not_found", "话题不存在")
    return row


def can_read_full(conn: Connection, user_id: int | None, topic: Row) -> bool:
    if user_id is None:
        return False
    if topic["author_id"] == user_id:
        return True
    return conn.execute(Q.get_message_of_user_in_topic, {
        "topic_id": topic["id"], "user_id": user_id}).fetchone() is not None


# An answer's JSON columns never change once written, and the same answers are read on
# every question page and context. Their parsed values are kept, keyed by the stored text
# itself, so only a caller that has just read that text from the database gets its parse
# (who may read what is decided by the queries, never here). Shared between requests:
# read-only to every caller. The size bounds the memory (about 10 KB per answer).
_PARSED_ANSWERS = 1024


@lru_cache(maxsize=_PARSED_ANSWERS)
def _answer_json(sources: str, conditions: str, uncertainties: str, tool_runs: str) -> tuple:
    return loads(sources), loads(conditions), loads(uncertainties), loads(tool_runs)


def message_view(row: Row) -> dict[str, Any]:
    sources, conditions, uncertainties, tool_runs = _answer_json(
        row["sources"], row["conditions"], row["uncertainties"], row["tool_runs"])
    return {
        "id": row["id"], "name": row["name"], "model": row["model"], "text": row["text"],
        "replyTo": row["reply_to"], "created": row["created"],
        "sources": sources,
        "questionVersion": row["question_version"],
        "sharePublic": bool(row["share_public"]),
        # what an answer delivers besides its conclusion: support, conditions, uncertainties
        "delivery": {"support": row["reasoning_summary"], "conditions": conditions,
                     "uncertainties": uncertainties, "toolRuns": tool_runs},
        "provenance": row["provenance"],
    }


def latest_messages(conn: Connection, topic_id: str, limit: int) -> list[Row]:
    """Newest ``limit`` messages, returned oldest first so threads read top-down."""
    return list(reversed(conn.execute(Q.list_latest_messages, {
        "topic_id": topic_id, "limit": limit}).fetchall()))
