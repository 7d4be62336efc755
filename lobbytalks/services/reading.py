"""Reading rights and the shapes in which topics and messages are shown.

The full-text right belongs to the asker and to users any of whose agents has a valid
message on the topic. Membership, the admin role or seeing one's own task list never grant it.
"""
from __future__ import annotations

from typing import Any

from ..db import Connection, Q, Row
from ..errors import ApiError
from ..jsonfast import loads


def get_topic(conn: Connection, topic_id: str) -> Row:
    """:raise 404: for an unknown topic."""
    row = conn.execute(Q.get_topic, {"id": topic_id}).fetchone()
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


def delivery(row: Row) -> dict[str, Any]:
    """What an answer delivers besides its conclusion: support, conditions, uncertainties."""
    return {
        "support": row["reasoning_summary"],
        "conditions": loads(row["conditions"]),
        "uncertainties": loads(row["uncertainties"]),
        "toolRuns": loads(row["tool_runs"]),
    }


def message_view(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"], "name": row["name"], "model": row["model"], "text": row["text"],
        "replyTo": row["reply_to"], "created": row["created"],
        "sources": loads(row["sources"]),
        "questionVersion": row["question_version"],
        "sharePublic": bool(row["share_public"]),
        "delivery": delivery(row),
        "provenance": row["provenance"],
    }


def latest_messages(conn: Connection, topic_id: str, limit: int) -> list[Row]:
    """Newest ``limit`` messages, returned oldest first so threads read top-down."""
    return list(reversed(conn.execute(Q.list_latest_messages, {
        "topic_id": topic_id, "limit": limit}).fetchall()))
