"""Reports: how the people who can read something tell the admins what is wrong with it.

A signed-in person reports a question they can see, or an answer they may read in full (the
asker, or someone one of whose agents answered: the discussion's readers, §1), with a reason
written for the admins; never their own. Admins may not read discussions, so the queue on
/admin shows the report's public facts (the question's title, the answer's agent and owner,
the states) with that reason and the reporter's name, and links the thing reported. A report
waits until an admin settles it: by hand (``settle``), or by hiding the answer or taking the
question down (``moderation``), which settles every waiting report on it in the same write,
and its sender is told (``report_settled``: that it was handled, never how or by whom);
every admin is told of a new report (``report_received``);
suspending a person settles the reports they sent, and tells them nothing. The queue is served oldest first, so a
flood of new reports pushes no earlier one out of sight.

Sending a report again while it waits changes nothing (``replayed``); an answer or question
that does not exist, or is not the reporter's to read, is the same 404.
"""
from __future__ import annotations

from typing import Any

from ..db import Connection, Database, Q, Row
from ..errors import ApiError
from ..security import new_id
from .audit import record
from .locks import hold_topic
from .notifications import notify
from .reading import can_read_full, readable_topic, refuse_if_taken_down

WAITING_ON_PAGE = 50
UNKNOWN_ANSWER = "发言不存在"
UNKNOWN_REPORT = "举报不存在"


def report(db: Database, user_id: int, topic_id: str, message_id: str | None, reason: str,
           *, now: int) -> dict[str, Any]:
    """Report the question ``topic_id`` or, with ``message_id``, one of its answers.
    :raise 404: unknown, or not the reporter's to read; :raise 409 topic_unavailable: the
    question is taken down; :raise 400 invalid_request: the reporter's own."""
    with db.transaction() as conn:
        hold_topic(conn, topic_id)  # the lock an admin's hide takes: no report slips past it
        topic = readable_topic(conn, topic_id, user_id)
        refuse_if_taken_down(topic)
        if message_id is None:
            if topic["author_id"] == user_id:
                raise ApiError("invalid_request", "不能举报自己的问题")
        else:
            _reportable_answer(conn, topic, message_id, user_id)
        row = conn.execute(Q.insert_report, {"id": new_id("rep"), "now": now,
                                             "reporter": user_id, "topic": topic_id,
                                             "message": message_id, "reason": reason}).fetchone()
        if row is not None:
            _tell_admins(conn, user_id, topic_id, message_id, now)
    if row is None:  # theirs on the same thing still waits
        return {"ok": True, "reported": True, "replayed": True}
    return {"ok": True, "reported": True, "id": row[0]}


def _tell_admins(conn: Connection, reporter_id: int, topic_id: str, message_id: str | None,
                 now: int) -> None:
    """Every admin hears of a new report (``report_received``; by mail where they asked
    for it, one a question an hour): the queue waited unseen for whoever next opened /admin.
    What was reported is named as the reporter's notice names it, the answer by its
    question; the reason stays on /admin."""
    for admin in conn.execute(Q.list_admins_but, {"user": reporter_id}).fetchall():
        notify(conn, admin["id"], "report_received", topic_id, now=now,
               cause="answer" if message_id else None)


def _reportable_answer(conn: Connection, topic: Row, message_id: str, user_id: int) -> None:
    message = conn.execute(Q.get_message_moderation_state, {"id": message_id}).fetchone()
    if (message is None or message["topic_id"] != topic["id"]
            or message["hidden_at"] is not None  # shown to no one
            or not can_read_full(conn, user_id, topic)):
        raise ApiError("not_found", UNKNOWN_ANSWER)
    if message["user_id"] == user_id:
        raise ApiError("invalid_request", "不能举报自己的智能体的回答")


def settle(db: Database, admin_id: int, report_id: str, reason: str, *,
           now: int) -> dict[str, Any]:
    """An admin marks a report handled (audited with ``reason``). :raise 404: unknown."""
    with db.transaction() as conn:
        row = conn.execute(Q.get_report_state, {"id": report_id}).fetchone()
        if row is None:
            raise ApiError("not_found", UNKNOWN_REPORT)
        if row["settled_at"] is not None:
            return {"ok": True, "id": report_id, "settled": True, "replayed": True}
        _tell_reporters(conn, conn.execute(Q.settle_report, {
            "id": report_id, "admin": admin_id, "now": now}).fetchall(), now)
        record(conn, admin_id, "settle_report", "report", report_id, reason, now)
    return {"ok": True, "id": report_id, "settled": True}


def settle_of_reporter(conn: Connection, admin_id: int, reporter_id: int, *, now: int) -> None:
    """Inside a suspension: the person's own waiting reports go with them (a flood of
    reports is a reason to suspend, and each would otherwise wait for a click)."""
    conn.execute(Q.settle_reports_of_reporter, {"reporter": reporter_id, "admin": admin_id,
                                                "now": now})


def settle_on(conn: Connection, admin_id: int, topic_id: str, message_id: str | None, *,
              now: int) -> None:
    """Inside an admin's hide: settle the waiting reports on the answer ``message_id``, or
    (None) on the question and all its answers."""
    if message_id is None:
        settled = conn.execute(Q.settle_reports_on_topic, {"topic": topic_id, "admin": admin_id,
                                                           "now": now})
    else:
        settled = conn.execute(Q.settle_reports_on_message, {
            "topic": topic_id, "message": message_id, "admin": admin_id, "now": now})
    _tell_reporters(conn, settled.fetchall(), now)


def _tell_reporters(conn: Connection, settled: list[Row], now: int) -> None:
    """One notification for each person whose reports on a question were settled (one who
    reported the question and an answer of it hears once, of the question)."""
    told: dict[int, Row] = {}
    for row in settled:
        if row["reporter_id"] not in told or row["message_id"] is None:
            told[row["reporter_id"]] = row
    for reporter_id, row in told.items():
        notify(conn, reporter_id, "report_settled", row["topic_id"],
               message_id=row["message_id"], cause="answer" if row["message_id"] else None,
               now=now)


def waiting_count(conn: Connection) -> int:
    """How many reports wait (every page's header for an admin; /admin reads it there)."""
    return conn.execute(Q.count_waiting_reports).fetchone()[0]


def waiting(conn: Connection) -> list[dict[str, Any]]:
    """The admin page's queue: the oldest ``WAITING_ON_PAGE`` waiting reports."""
    return [dict(r) for r in conn.execute(Q.list_waiting_reports,
                                          {"limit": WAITING_ON_PAGE}).fetchall()]


def of_reporter(conn: Connection, user_id: int) -> list[dict[str, Any]]:
    """A person's own reports, for their data download (``people.export``)."""
    return [{"id": r["id"], "topic": r["topic_id"], "message": r["message_id"],
             "reason": r["reason"], "created": r["created"], "settled": r["settled_at"]}
            for r in conn.execute(Q.list_reports_for_export, {"user": user_id}).fetchall()]
