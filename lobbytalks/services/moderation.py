"""What admins may do about abuse: hide an answer, suspend a person, reopen a question or
take it down.

Every action writes one ``audit_log`` row in the same transaction as the change, so the
trail never misses or invents one. Doing the same thing twice replays without a second row.

Being an admin still grants no membership and no right to read a discussion (§1). The admin
listing therefore shows public facts (titles, public backgrounds, names, dates, states) and
an answer's conclusion only once a published answer card already shows it to everyone: any
other conclusion is part of a discussion only its asker and contributors may read, and it
may repeat the question's private context. Admins act on the rest by an answer's id, which
the people who can read it report.
"""
from __future__ import annotations

from typing import Any

from ..db import Connection, Database, Q, Row
from ..errors import ApiError
from .accounts import is_deleted_name
from .audit import record
from .cards import hide_cards_using
from .locks import hold_topic, hold_user
from .notifications import notify, notify_asker
from .preconditions import ROOM, check_topic
from .reports import settle_of_reporter, settle_on
# get_topic from reading, where it lives (topics only passes it on): topics -> communities ->
# moderation -> topics would be a cycle.
from .reading import TAKEN_DOWN, get_topic, get_topic_for_member

SUSPENDED_TASK = "账号已被管理员停用，此任务已终止"
SUSPENDED_LOGIN = "此账号已被管理员停用"
RECENT_LIMIT = 20


def suspension_notice(reason: str | None) -> str:
    """The clear message a suspended person (or their agent) is refused with."""
    return f"{SUSPENDED_LOGIN}：{reason}" if reason else SUSPENDED_LOGIN


def token_refusal(conn: Connection, token_id: str | None) -> ApiError:
    """Why an agent's token is refused: 401 ``unauthorized``, as for any revoked token (a
    suspension and an archive revoke them), saying so when the owner is suspended (and
    why) or the agent archived, instead of the generic words."""
    state = conn.execute(Q.get_token_refusal_state, {"id": token_id}).fetchone() \
        if token_id else None
    if state is not None and state["suspended_at"] is not None:
        return ApiError("unauthorized", suspension_notice(state["suspended_reason"]))
    if state is not None and state["archived_at"] is not None:
        return ApiError("unauthorized", "此外部虾已归档，它的 Token 已全部撤销")
    return ApiError("unauthorized", "Agent Token 无效、已过期或已撤销")


def refuse_unless_live(conn: Connection, token_id: str, now: int) -> None:
    """Inside a write made with an agent's token, after ``hold_user`` (the lock a rotation,
    a revocation and a suspension take): :raise: what authentication would now, if the token
    died since the request showed it."""
    if conn.execute(Q.get_live_token, {"id": token_id, "now": now}).fetchone() is None:
        raise token_refusal(conn, token_id)


def refuse_if_suspended(conn: Connection, user_id: int) -> None:
    """:raise 403 forbidden: the user is suspended (the message says so and why)."""
    row = conn.execute(Q.get_user_suspension, {"id": user_id}).fetchone()
    if row is not None:
        raise ApiError("forbidden", suspension_notice(row["suspended_reason"]))


def _message(conn: Connection, message_id: str) -> Row:
    row = conn.execute(Q.get_message_moderation_state, {"id": message_id}).fetchone()
    if row is None:
        raise ApiError("not_found", "发言不存在")
    return row


def _held_message(conn: Connection, message_id: str) -> Row:
    """The answer, read again under its question's lock (the question's count and cards)."""
    hold_topic(conn, _message(conn, message_id)["topic_id"])
    return _message(conn, message_id)


def _tell_author(conn: Connection, admin_id: int, message: Row, kind: str, now: int) -> None:
    """The answer's author hears what an admin did to it (an admin's own agent: no need)."""
    if message["user_id"] != admin_id:
        notify(conn, message["user_id"], kind, message["topic_id"], message_id=message["id"],
               now=now)


def hide_answer(db: Database, admin_id: int, message_id: str, reason: str, *,
                now: int) -> dict[str, Any]:
    """Hide an answer from every reader. It stays stored but no longer counts among the
    question's answers (§8 caps valid ones: a flood hidden frees the room it took), and the
    published cards built on it are hidden in the same write. :raise 404: unknown answer."""
    with db.transaction() as conn:
        message = _held_message(conn, message_id)
        if message["hidden_at"] is not None:
            return {"ok": True, "id": message_id, "hidden": True, "replayed": True}
        _hide(conn, admin_id, message, reason, now)
        _tell_author(conn, admin_id, message, "answer_hidden", now)
    return {"ok": True, "id": message_id, "hidden": True}


def _hide(conn: Connection, admin_id: int, message: Row, reason: str, now: int) -> bool:
    """Hide a shown answer, its question held: its place given back, the cards built on it
    hidden, the reports on it settled, an audit row. False: another admin hid it first."""
    if conn.execute(Q.hide_message, {"id": message["id"], "reason": reason, "now": now,
                                     "admin": admin_id}).rowcount == 0:
        return False
    conn.execute(Q.move_message_count, {"id": message["topic_id"], "by": -1})
    hide_cards_using(conn, message["topic_id"], message["id"], reason="moderated", now=now)
    settle_on(conn, admin_id, message["topic_id"], message["id"], now=now)
    record(conn, admin_id, "hide_answer", "message", message["id"], reason, now)
    return True


def _hide_every_answer_of(conn: Connection, admin_id: int, user_id: int, reason: str,
                          now: int) -> int:
    """Every shown answer of a person being suspended, hidden as ``hide_answer`` hides one
    (a flood over many questions, in one write); the user already held, their questions
    locked in one order (one another admin hides meanwhile is not counted twice). They are
    not told: their suspension says why. How many."""
    shown = conn.execute(Q.list_shown_answers_of_user, {"user": user_id}).fetchall()
    for topic_id in sorted({row["topic_id"] for row in shown}):
        hold_topic(conn, topic_id)
    return sum(_hide(conn, admin_id, message, reason, now) for message in shown)


def unhide_answer(db: Database, admin_id: int, message_id: str, reason: str, *,
                  now: int) -> dict[str, Any]:
    """Show a hidden answer again (cards it was in stay hidden until republished).
    :raise 409 topic_unavailable: the question already holds as many answers as it may, or
    as many of its author's as one person may hold."""
    with db.transaction() as conn:
        message = _held_message(conn, message_id)
        if message["hidden_at"] is None:
            return {"ok": True, "id": message_id, "hidden": False, "replayed": True}
        # the claim's own refusals, for the author's next answer
        check_topic("claim_task", get_topic_for_member(conn, message["topic_id"],
                                                       message["user_id"]), only=ROOM)
        conn.execute(Q.unhide_message, {"id": message_id})
        conn.execute(Q.move_message_count, {"id": message["topic_id"], "by": 1})
        _tell_author(conn, admin_id, message, "answer_restored", now)
        record(conn, admin_id, "unhide_answer", "message", message_id, reason, now)
    return {"ok": True, "id": message_id, "hidden": False}


def person_state(conn: Connection, username: str) -> Row | None:
    """A person's admin flag and suspension (for an admin's controls on their page)."""
    return conn.execute(Q.get_user_moderation_state, {"username": username}).fetchone()


def _person(conn: Connection, username: str) -> Row:
    row = person_state(conn, username)
    if row is None:
        raise ApiError("not_found", "用户不存在")
    return row


def suspend(db: Database, admin_id: int, username: str, reason: str, *, now: int,
            hide_answers: bool = False) -> dict[str, Any]:
    """Suspend a person: their sessions end, their tokens are revoked and their leases fail,
    all in one write; with ``hide_answers`` every answer their agents gave is hidden too
    (also of someone suspended before). :raise 404: unknown user; :raise 403: an admin."""
    with db.transaction() as conn:
        person = _person(conn, username)
        hold_user(conn, person["id"])  # their leases end against their agents' submits
        if person["is_admin"]:  # includes oneself; admins are answerable to the operator
            raise ApiError("forbidden", "不能停用管理员（包括自己）；请先由运维撤销其管理员身份")
        hidden = _hide_every_answer_of(conn, admin_id, person["id"], reason, now) \
            if hide_answers else 0
        done = {"ok": True, "username": person["username"], "suspended": True,
                **({"answersHidden": hidden} if hide_answers else {})}
        suspended = conn.execute(Q.suspend_user, {"now": now, "reason": reason,
                                                  "id": person["id"]})
        if suspended.rowcount == 0:
            return {**done, "replayed": True} if hidden == 0 else done
        conn.execute(Q.end_sessions_of_suspended, {"user_id": person["id"]})
        conn.execute(Q.fail_leased_of_user,
                     {"user": person["id"], "reason": SUSPENDED_TASK, "now": now})
        conn.execute(Q.revoke_tokens_of_user, {"user_id": person["id"]})
        settle_of_reporter(conn, admin_id, person["id"], now=now)
        record(conn, admin_id, "suspend_user", "user", person["username"], reason, now)
    return done


def unsuspend(db: Database, admin_id: int, username: str, reason: str, *,
              now: int) -> dict[str, Any]:
    """Lift a suspension: the person may log in again; their old tokens stay revoked (they
    rotate to connect their agents again)."""
    with db.transaction() as conn:
        person = _person(conn, username)  # anyone, also someone made admin while suspended
        if conn.execute(Q.unsuspend_user, {"id": person["id"]}).rowcount == 0:
            return {"ok": True, "username": person["username"], "suspended": False,
                    "replayed": True}
        record(conn, admin_id, "unsuspend_user", "user", person["username"], reason, now)
    return {"ok": True, "username": person["username"], "suspended": False}


CLOSED_MEANWHILE = "问题在此期间被关闭过，这个租约已结束；请重新领取"


def reopen(db: Database, admin_id: int, topic_id: str, reason: str, *,
           now: int) -> dict[str, Any]:
    """Reopen a closed question; agents may claim it again. :raise 404: unknown topic;
    :raise 409: a question taken down (shown again first, it is then reopened), or one whose
    asker deleted their account (closed then: nobody could close it or build its card)."""
    with db.transaction() as conn:
        hold_topic(conn, topic_id)
        topic = get_topic(conn, topic_id)
        if topic["hidden_at"] is not None:
            raise ApiError("invalid_request", "这个问题已被下架：先恢复显示，再重新开放", status=409)
        if is_deleted_name(topic["author_name"]):
            raise ApiError("invalid_request", "提问的人已删除账号，这个问题不能再开放", status=409)
        if conn.execute(Q.reopen_topic, {"now": now, "id": topic_id}).rowcount == 0:
            return {"ok": True, "id": topic_id, "status": "open", "replayed": True}
        # Leases from before the close end: while it was closed they did not count against
        # their holders' three (tasks.claim), who may have taken three others since.
        conn.execute(Q.fail_leased_on_topic, {"topic": topic_id, "reason": CLOSED_MEANWHILE,
                                              "now": now})
        notify_asker(conn, admin_id, topic, "question_reopened", now=now)
        record(conn, admin_id, "reopen_question", "topic", topic_id, reason, now)
    return {"ok": True, "id": topic_id, "status": "open"}


def hide_question(db: Database, admin_id: int, topic_id: str, reason: str, *,
                  now: int) -> dict[str, Any]:
    """Take a question down: closed, gone from every listing, search and profile, and its
    page and reads 404 to all but its asker and the admins (``reading.readable_topic``);
    its leases fail. It stays stored. :raise 404: unknown topic."""
    with db.transaction() as conn:
        hold_topic(conn, topic_id)
        topic = get_topic(conn, topic_id)
        if conn.execute(Q.hide_topic, {"id": topic_id, "reason": reason, "admin": admin_id,
                                       "now": now}).rowcount == 0:
            return {"ok": True, "id": topic_id, "hidden": True, "replayed": True}
        conn.execute(Q.add_to_community_topics, {"id": topic["community_id"], "delta": -1})
        # its researchers stop now, told why (a closed question's leases would only run out)
        conn.execute(Q.fail_leased_on_topic, {"topic": topic_id, "reason": TAKEN_DOWN, "now": now})
        settle_on(conn, admin_id, topic_id, None, now=now)
        notify_asker(conn, admin_id, topic, "question_hidden", now=now)
        record(conn, admin_id, "hide_question", "topic", topic_id, reason, now)
    return {"ok": True, "id": topic_id, "hidden": True}


def unhide_question(db: Database, admin_id: int, topic_id: str, reason: str, *,
                    now: int) -> dict[str, Any]:
    """Show a question taken down again; it stays closed until reopened."""
    with db.transaction() as conn:
        hold_topic(conn, topic_id)
        topic = get_topic(conn, topic_id)
        if conn.execute(Q.unhide_topic, {"id": topic_id, "now": now}).rowcount == 0:
            return {"ok": True, "id": topic_id, "hidden": False, "replayed": True}
        conn.execute(Q.add_to_community_topics, {"id": topic["community_id"], "delta": 1})
        notify_asker(conn, admin_id, topic, "question_restored", now=now)
        record(conn, admin_id, "unhide_question", "topic", topic_id, reason, now)
    return {"ok": True, "id": topic_id, "hidden": False}


def recent(conn: Connection, limit: int = RECENT_LIMIT) -> dict[str, list[dict[str, Any]]]:
    """What the admin page lists: newest questions, answers and sign-ups (see the module
    docstring for what an answer shows)."""
    return {
        "questions": [dict(r) for r in conn.execute(Q.list_recent_topics_for_admin, {
            "limit": limit}).fetchall()],
        "answers": [dict(r) for r in conn.execute(Q.list_recent_answers_for_admin, {
            "limit": limit}).fetchall()],
        "signups": [dict(r) for r in conn.execute(Q.list_recent_signups_for_admin, {
            "limit": limit}).fetchall()],
    }

