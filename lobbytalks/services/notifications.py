"""Notifications: the inbox, the header's unread count and share requests.

A notification is written by ``notify`` inside the transaction of the event that causes it
(an answer arrives, a card is published or hidden, a task fails or expires, an admin acts on
the recipient's answer or question), so an event and its notification commit or roll back
together. A row stores ids only; ``view`` reads what it shows at display time -- the
question's public title (none of one taken down, but to its asker) and an agent's or the
asker's name, never an answer's text, a discussion or private context -- so the inbox and
the e-mails carry nothing the recipient may not read.

When the recipient opted in to e-mail at a confirmed address (``mail_address``), ``notify``
also queues the notification in ``mail_outbox`` (unless one of the same kind on the same
question, mailed within the hour, is still unread, or ``MAILS_PER_HOUR`` went out already);
``mailer.Mailer`` sends it from its own thread once the transaction has committed, so no
request ever waits on an SMTP server.
"""
from __future__ import annotations

from typing import Any, Callable

from .. import i18n
from ..db import Connection, Database, Q, Row
from ..errors import ApiError
from ..models.common import plain_int
from ..textrules import RIGHT_TO_LEFT
from .accounts import is_deleted_name
from .card_build import in_current_card
from .locks import hold_topic
from .reading import as_seen_by, can_read_full, refuse_if_taken_down

KINDS = ("answer", "share_request", "card_published", "card_hidden", "card_republishable",
         "task_failed", "task_expired",
         # what an admin did to the recipient's own answer or question
         "answer_hidden", "answer_restored", "question_closed", "question_reopened",
         "question_hidden", "question_restored",
         # an admin settled the recipient's report; (to admins) someone reported something
         "report_settled", "report_received")
INBOX_PAGE_SIZE = 30
BADGE_CAP = 100
# One e-mail per question and kind while the person has not read it, for an hour: a burst
# of answers (200 from one member in seconds) is one mail, the rest wait in the inbox.
MAIL_QUIET_SECONDS = 3600
# And at most this many mails an hour in all: one question each is still a flood when
# someone asks many (share requests from a stranger's questions, one per question).
MAILS_PER_HOUR = 10


def notify(conn: Connection, user_id: int, kind: str, topic_id: str, *, now: int,
           message_id: str | None = None, task_id: str | None = None,
           cause: str | None = None) -> int | None:
    """Write one notification in the caller's transaction; queue its e-mail when wanted.
    ``cause`` tells apart what the kind alone would mislead about, in words of its own
    ("notify.kind.KIND_CAUSE"): ``moderated`` on a card_hidden, when an admin hid the answer;
    ``answer`` on a report_settled or report_received, when the report was of an answer.
    None: the person deleted their account, and is told nothing."""
    mailed = _mail_wanted(conn, user_id, kind, topic_id, now)
    row = conn.execute(Q.insert_notification, {
        "user": user_id, "kind": kind, "topic": topic_id, "message": message_id,
        "task": task_id, "now": now, "mailed": int(mailed), "cause": cause}).fetchone()
    if row is None:
        return None
    if mailed:
        conn.execute(Q.enqueue_mail, {"notification_id": row[0], "now": now})
    return row[0]


def notify_asker(conn: Connection, actor_id: int, topic: Row, kind: str, *, now: int) -> None:
    """Tell the question's asker what someone else did to it (closing, reopening, taking it
    down or showing it again); what the asker did themselves is no news."""
    if topic["author_id"] != actor_id:
        notify(conn, topic["author_id"], kind, topic["id"], now=now)


def _mail_wanted(conn: Connection, user_id: int, kind: str, topic_id: str, now: int) -> bool:
    if conn.execute(Q.get_mail_address_if_wanted, {"user_id": user_id}).fetchone() is None:
        return False
    return not conn.execute(Q.mail_held_back, {
        "user": user_id, "kind": kind, "topic": topic_id, "since": now - MAIL_QUIET_SECONDS,
        "cap": MAILS_PER_HOUR}).fetchone()[0]


def notify_tasks_ended(conn: Connection, rows: list[Row], kind: str, *,
                       now: int) -> None:
    """Tell each task's owner that the task failed or expired (rows: id, user_id, topic_id)."""
    for row in rows:
        notify(conn, row["user_id"], kind, row["topic_id"], task_id=row["id"], now=now)


# --- showing -----------------------------------------------------------------------------

# Kinds that name someone else's agent: with the person it belongs to, since an agent's
# name is whatever its owner typed ("admin", "LobbyTalks 官方", the recipient's own name).
_OTHERS_AGENT = ("answer", "card_hidden", "card_republishable")


def _actor(row: Row) -> str | None:
    """The name a notification mentions; every one is readable by the recipient."""
    kind = row["kind"]
    if kind in _OTHERS_AGENT or kind in ("answer_hidden", "answer_restored"):
        return row["answer_agent"]
    if kind == "share_request":
        return row["asker_name"]
    if kind.startswith("task_"):
        return row["task_agent"]
    return None


def link(row: Row | dict[str, Any]) -> str:
    """Where a notification leads, as a path on this site."""
    kind, topic = row["kind"], row["topic_id"]
    if kind.startswith("task_"):
        return f"/tasks?topic={topic}"
    if kind in ("answer", "share_request", "answer_hidden", "answer_restored") \
            and row["message_id"]:
        return f"/q/{topic}?answer={row['message_id']}#m-{row['message_id']}"
    if kind == "card_republishable":
        return f"/q/{topic}#card-republish"
    if kind == "report_received":  # the queue, with the reason (the question: a click away)
        return "/admin#admin-reports"
    return f"/q/{topic}"


def view(row: Row) -> dict[str, Any]:
    return {"id": row["id"], "kind": row["kind"], "cause": row["cause"], "topic": row["topic_id"],
            "topicTitle": row["topic_title"], "actor": _actor(row),
            "actorOwner": row["answer_owner"] if row["kind"] in _OTHERS_AGENT else None,
            "messageId": row["message_id"], "taskId": row["task_id"],
            "created": row["created"], "read": row["read_at"] is not None, "link": link(row)}


def describe(item: dict[str, Any], lang: str, *,
             translate: Callable[..., str] | None = None,
             set_apart: Callable[[str], str] | None = None) -> str:
    """One sentence for a notification in ``lang`` (the inbox and e-mails share it).

    The name and the title are each passed through ``set_apart``: by default one holding
    right-to-left letters is set apart from the sentence quoting it by Unicode's
    first-strong isolate (invisible), so that its direction does not move the quotes and
    words around it; a page, whose text loses such controls, passes its own ``translate``
    and ``set_apart`` (``<bdi>``, with the words' language)."""
    translate = translate or (lambda key, **values: i18n.translate(lang, key, **values))
    set_apart = set_apart or _isolated
    key = f"notify.kind.{item['kind']}" + (f"_{item['cause']}" if item.get("cause") else "")
    if item["kind"] in ("report_settled", "report_received") and item["topicTitle"] is None:
        # a report on a question since taken down: "taken down" would say how it was settled
        key = f"notify.kind.{item['kind']}_untitled"
    name, owner = item["actor"] or "", item.get("actorOwner")
    gone = is_deleted_name(owner or (name if item["kind"] == "share_request" else ""))
    if owner:
        name = translate("notify.agent_of_deleted", agent=name) if gone \
            else translate("notify.agent_of", agent=name, owner=owner)
    elif gone:  # an asker since gone: said in words, not by the placeholder name
        name = translate("people.deleted")
    title = item["topicTitle"] if item["topicTitle"] is not None else \
        translate("notify.taken_down_title")  # none of a question taken down
    said = translate(key, title=set_apart(title), name=set_apart(name))
    # ("a deleted account …" may begin the sentence; a person's own name is left as it is)
    return said[:1].upper() + said[1:] if gone else said


def _isolated(words: str) -> str:
    return f"\u2068{words}\u2069" if RIGHT_TO_LEFT.search(words) else words


def by_id(conn: Connection, notification_id: int) -> dict[str, Any] | None:
    row = conn.execute(Q.get_notification, {"id": notification_id}).fetchone()
    return None if row is None else view(row)


def unread_count(conn: Connection, user_id: int) -> int:
    return conn.execute(Q.count_unread_notifications, {"user_id": user_id}).fetchone()[0]


def unread_badge(conn: Connection, user_id: int) -> str:
    """The header's unread count: "" for none, "99+" past ``BADGE_CAP - 1``."""
    n = conn.execute(Q.count_unread_notifications_capped, {
        "user": user_id, "cap": BADGE_CAP}).fetchone()[0]
    return "" if n == 0 else (f"{BADGE_CAP - 1}+" if n >= BADGE_CAP else str(n))


def cursor(value: str) -> int | None:
    """A ``before`` keyset from a query string (a positive id), or None for one that cannot be."""
    before = plain_int(value) if len(value) <= 15 else None
    return before if before else None


def inbox_page(conn: Connection, user_id: int, before: int | None = None) -> dict[str, Any]:
    """The user's notifications, newest first, a page at a time (keyset on the id)."""
    rows = conn.execute(Q.list_notifications_before, {"user": user_id, "before": before or 2**62,
                                                 "limit": INBOX_PAGE_SIZE + 1}).fetchall()
    items = [view(r) for r in rows[:INBOX_PAGE_SIZE]]
    more = len(rows) > INBOX_PAGE_SIZE
    return {"notifications": items, "next": items[-1]["id"] if more else None}


def inbox(conn: Connection, user_id: int, before: int | None = None) -> dict[str, Any]:
    """A page of the inbox with the exact number unread (the API's answer; the inbox page
    shows the header's capped count instead)."""
    return {**inbox_page(conn, user_id, before), "unread": unread_count(conn, user_id)}


# --- changing ----------------------------------------------------------------------------

def mark_read(db: Database, user_id: int, notification_id: int | None, *,
              now: int, up_to: int | None = None) -> dict[str, Any]:
    """Mark one notification read, or all of them when ``notification_id`` is None (those
    up to ``up_to`` only, when given).

    :raise 404: the notification does not exist or belongs to someone else.
    """
    with db.transaction() as conn:
        if notification_id is None:
            conn.execute(Q.mark_all_notifications_read, {
                "user": user_id, "now": now, "up_to": up_to or 2**62})
        else:
            owner = conn.execute(Q.get_notification_owner, {"id": notification_id}).fetchone()
            if owner is None or owner["user_id"] != user_id:
                raise ApiError("not_found", "通知不存在")
            conn.execute(Q.mark_notification_read,
                         {"id": notification_id, "user": user_id, "now": now})
        unread = conn.execute(Q.count_unread_notifications, {"user_id": user_id}).fetchone()[0]
    return {"ok": True, "unread": unread}


def request_share(db: Database, user_id: int, message_id: str, *, now: int) -> dict[str, Any]:
    """The asker asks an answer's author to allow the answer in the answer card.

    Asking again while the author has not read the request adds nothing (``replayed``).
    :raise 404: unknown message, or one an admin hid; :raise 403: not the asker of its question;
    :raise 409: the answer is the asker's own, already shared, about an earlier version of
        the question (a card uses answers to the current one only), or its author deleted
        their account.
    """
    with db.transaction() as conn:
        message = conn.execute(Q.get_message, {"id": message_id}).fetchone()
        if message is None:
            raise ApiError("not_found", "发言不存在")
        # One request at a time per question, the answer read again under the lock: two
        # at once would each find none pending and each tell the author.
        hold_topic(conn, message["topic_id"])
        message = conn.execute(Q.get_message, {"id": message_id}).fetchone()
        if message["hidden_at"] is not None:  # an admin hid it: shown to no one, as reports say
            raise ApiError("not_found", "发言不存在")
        # (read here, not through topics.get_topic: topics -> cards -> this module)
        topic = as_seen_by(conn.execute(Q.get_topic, {"id": message["topic_id"]}).fetchone(),
                           user_id, unknown="发言不存在")
        if topic["author_id"] != user_id:
            raise ApiError("forbidden", "只有题主可以请作者许可公开使用")
        refuse_if_taken_down(topic)
        if message["user_id"] == user_id:
            raise ApiError("invalid_request", "这是你自己的智能体的回答，直接许可即可", status=409)
        if message["share_public"]:
            raise ApiError("invalid_request", "作者已许可公开使用此回答", status=409)
        if not in_current_card(message["question_version"], topic["version"]):
            raise ApiError("invalid_request", "这条回答针对问题的较早版本，答案卡只用当前版本的回答",
                           status=409)
        if conn.execute(Q.get_account_state, {"id": message["user_id"]}).fetchone()["deleted_at"]:
            raise ApiError("invalid_request", "这条回答的作者已删除账号，无法再许可公开使用", status=409)
        asked = conn.execute(Q.get_pending_share_request, {"message_id": message_id})
        if asked.fetchone() is not None:
            return {"ok": True, "id": message_id, "requested": True, "replayed": True}
        notify(conn, message["user_id"], "share_request", topic["id"], message_id=message_id,
               now=now)
    return {"ok": True, "id": message_id, "requested": True}


def requested_shares(conn: Connection, user_id: int, topic: Row) -> set[str]:
    """Answers of the question whose authors the asker has already asked (asker only)."""
    if topic["author_id"] != user_id or not can_read_full(conn, user_id, topic):
        return set()
    return {r["message_id"] for r in conn.execute(Q.list_share_requests_of_topic, {
        "topic_id": topic["id"]}).fetchall()}
