"""Leased tasks: claim, status, heartbeat, fail, and the owner's listing and cancel (§3, §6)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..db import Connection, Database, Q, Row
from ..errors import ApiError
from ..jsonfast import dumps, loads
from ..quotas import LEASE_SECONDS, MAX_LEASE_SECONDS, MAX_LIVE_LEASES
from ..security import new_id
from . import context, moderation
from .locks import hold_task, hold_user
from .notifications import notify_tasks_ended
from .preconditions import check_topic, lease_ran_out, lease_running, require_leased
from .reading import (TAKEN_DOWN_TITLE, as_seen_by, can_read_full, get_topic_for_member,
                      readable_topic)
from ..screening import refuse_secrets
from .settlement import CANCELLED, settle_for_view, settle_task, settle_user

# What a task on a question taken down shows instead of its title (a phishing title is why
# questions are taken down); the contract's topicTitle is a string.

if TYPE_CHECKING:
    from ..auth import Agent
    from ..crypto import Keyring

MANAGE_PAGE_SIZE = 20


def task_view(task: Row) -> dict[str, Any]:
    return {
        "id": task["id"], "topic": task["topic_id"], "profile": task["profile_id"],
        "state": task["state"], "replyTo": task["reply_to"], "created": task["created"],
        "expires": task["expires"], "messageId": task["message_id"], "error": task["error"],
        "questionVersion": task["question_version"],
        "privateContextIncluded": bool(task["private_included"]),
    }


def owned_task(conn: Connection, agent: "Agent", task_id: str, *, locked: bool = False) -> Row:
    """The task if it belongs to this user, agent AND token; else 404 (never 403).
    ``locked``: its row held until the transaction ends, and read as it is once held (a
    reopen or a rejoin ends leases without holding their user)."""
    task = hold_task(conn, task_id) if locked else _reload(conn, task_id)
    if task is None or (task["user_id"], task["profile_id"], task["token_id"]) != \
            (agent.user_id, agent.profile_id, agent.token_id):
        raise ApiError("not_found", "任务不存在或不属于当前 Token")
    return task


def _reload(conn: Connection, task_id: str) -> Row:
    return conn.execute(Q.get_task, {"id": task_id}).fetchone()


def check_reply_target(conn: Connection, user_id: int, topic: Row,
                       reply_to: str | None) -> None:
    """replyTo must be a message of the topic and needs the full-text right."""
    if reply_to is None:
        return
    target = conn.execute(Q.get_message_in_topic, {"id": reply_to, "topic_id": topic["id"]})
    if target.fetchone() is None:
        raise ApiError("invalid_reply", "replyTo 不是此话题的发言")
    if not can_read_full(conn, user_id, topic):
        raise ApiError("invalid_reply", "定向回应需要先获得此话题的全文资格", status=403)


def claim(db: Database, keyring: "Keyring", agent: "Agent", data: Any, *, now: int,
          count: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """Lease a question for research, or replay an earlier claim with the same requestId.
    ``count`` takes the claim's place in the claim rate (or refuses it), called once the
    claim is known to be no replay: a client recovering a lost answer, as §6 and §8 ask it
    to, asks for nothing new."""
    request_id = data.requestId.lower()
    with db.transaction() as conn:
        hold_user(conn, agent.user_id)  # the live-lease cap and requestId replays
        settle_user(conn, agent.user_id, now)
        earlier = conn.execute(Q.get_task_by_request, {"profile_id": agent.profile_id,
                                                       "request_id": request_id}).fetchone()
        if earlier is not None:
            return _replay_claim(conn, keyring, agent, earlier, data)
        count()
        topic = as_seen_by(get_topic_for_member(conn, data.topic, agent.user_id), None)
        check_topic("claim_task", topic)
        check_reply_target(conn, agent.user_id, topic, data.replyTo)
        live, soonest = conn.execute(Q.count_live_leases, {"user_id": agent.user_id,
                                                           "now": now}).fetchone()
        if live >= MAX_LIVE_LEASES:  # a slot frees when one ends, at the latest as it expires
            raise ApiError("task_limit", retry_after=max(1, soonest - now))
        allowed = can_read_full(conn, agent.user_id, topic)
        frozen = [r["id"] for r in conn.execute(
            Q.list_latest_message_ids, {"topic_id": topic["id"],
                                        "limit": context.AGENT_MESSAGE_LIMIT})] if allowed else []
        task = conn.execute(Q.insert_task, {
            "id": new_id("task"), "user": agent.user_id, "profile": agent.profile_id,
            "token": agent.token_id, "topic": topic["id"], "request": request_id,
            "reply_to": data.replyTo, "now": now, "expires": now + LEASE_SECONDS,
            "version": topic["version"], "private": int(allowed), "frozen": dumps(frozen),
        }).fetchone()
        if task is None:
            raise moderation.token_refusal(conn, agent.token_id)
        return {"task": task_view(task),
                "context": frozen_context(conn, keyring, agent, task, topic, allowed)}


def frozen_context(conn, keyring, agent, task, topic=None, allowed=None) -> dict[str, Any]:
    """The context a task was claimed with (``topic``: the topic row, and ``allowed``: the
    read right, when already read in this transaction)."""
    # a question taken down is as unknown to agents as a missing one, a replay's too
    topic = topic or readable_topic(conn, task["topic_id"], None)
    return context.build(conn, keyring, agent, topic, version=task["question_version"],
                         frozen_ids=loads(task["frozen_messages"]),
                         private_allowed=bool(task["private_included"]), allowed=allowed)


def _replay_claim(conn, keyring, agent, task, data) -> dict[str, Any]:
    same = (task["token_id"] == agent.token_id and task["topic_id"] == data.topic
            and task["reply_to"] == data.replyTo)
    if not same:
        raise ApiError("idempotency_conflict", "此 requestId 已用于另一次领取")
    return {"task": task_view(task), "context": frozen_context(conn, keyring, agent, task),
            "replayed": True}


def status(db: Database, agent: "Agent", task_id: str, *, now: int) -> dict[str, Any]:
    with db.transaction() as conn:
        hold_user(conn, agent.user_id)
        task, _ = with_expiry_settled(conn, owned_task(conn, agent, task_id), now)
        return {"task": task_view(task)}


def with_expiry_settled(conn: Connection, task: Row, now: int) -> tuple[Row, bool]:
    """The task with its expiry settled in the caller's write transaction, and whether the
    lease ran out just now (see ``preconditions``: the caller then commits and refuses).

    The row was read after ``hold_user``, so it is current: a lease it shows running needs
    no UPDATE to find that out."""
    if lease_running(task, now) or not settle_task(conn, task["id"], now):
        return task, False
    return _reload(conn, task["id"]), True


def heartbeat(db: Database, agent: "Agent", task_id: str, *, now: int) -> dict[str, Any]:
    """Extend the lease to now + 30 min, never past claim + 2 h."""
    with db.transaction() as conn:
        hold_user(conn, agent.user_id)  # the lease's state, against submit, fail and cancel
        task, expired_now = with_expiry_settled(
            conn, owned_task(conn, agent, task_id, locked=True), now)
        if not expired_now:
            require_leased(task)
            check_topic("heartbeat", get_topic_for_member(conn, task["topic_id"], agent.user_id))
            expires = max(task["expires"],
                          min(now + LEASE_SECONDS, task["created"] + MAX_LEASE_SECONDS))
            extended = conn.execute(Q.extend_lease, {"id": task_id, "expires": expires,
                                                     "now": now}).fetchone()
            return {"task": task_view(extended)}
    raise lease_ran_out("heartbeat")


def fail(db: Database, agent: "Agent", task_id: str, error: str, *, now: int) -> dict[str, Any]:
    """Report failure; the same text replays, a different one conflicts.

    :raise 400 sensitive_content: when the error text holds a secret.
    """
    refuse_secrets({"error": error})
    with db.transaction() as conn:
        hold_user(conn, agent.user_id)  # one outcome per task, against submit and cancel
        task, expired_now = with_expiry_settled(
            conn, owned_task(conn, agent, task_id, locked=True), now)
        if task["state"] == "failed":  # never one that expired just now
            if not task["agent_failed"]:  # its owner or the server ended it, whatever it says
                raise ApiError("task_terminal")
            if task["error"] == error:
                return {"ok": True, "task": task_view(task), "replayed": True}
            raise ApiError("idempotency_conflict", "任务已用不同的说明报告失败")
        if not expired_now:
            require_leased(task)
            conn.execute(Q.fail_task_by_agent, {"id": task_id, "error": error, "now": now})
            notify_tasks_ended(conn, [task], "task_failed", now=now)
            return {"ok": True, "task": task_view(_reload(conn, task_id))}
    raise lease_ran_out("fail_task")


# --- the owner's view (cookie) ---------------------------------------------------------

def managed_view(row: Row, taken_down_title: str = TAKEN_DOWN_TITLE) -> dict[str, Any]:
    return {
        "id": row["id"], "topic": row["topic_id"],
        "topicTitle": row["topic_title"] if row["topic_title"] is not None else taken_down_title,
        "communityId": row["community_id"], "profile": row["profile_id"],
        "agentName": row["agent_name"], "client": row["client"], "state": row["state"],
        "replyTo": row["reply_to"], "created": row["created"], "updated": row["updated"],
        "expires": row["expires"], "messageId": row["message_id"], "error": row["error"],
    }


def list_managed(db: Database, user_id: int, filters: Any, *, now: int,
                 view: Callable[[Row], dict[str, Any]] = managed_view) -> dict[str, Any]:
    """The user's tasks, newest first, 20 a page, after settling what can no longer finish
    (each row as ``view`` shows it: the API's ``managed_view``, or a page's)."""
    settle_for_view(db, user_id, now)
    params = {"user": user_id, "topic": filters.topic, "profile": filters.profile,
              "state": filters.state}
    with db.snapshot() as conn:  # the total counts the rows listed, whatever commits meanwhile
        total = conn.execute(Q.count_managed_tasks, params).fetchone()[0]
        rows = conn.execute(Q.list_managed_tasks, {
            **params, "limit": MANAGE_PAGE_SIZE + 1,
            "offset": (filters.page - 1) * MANAGE_PAGE_SIZE}).fetchall()
    return {"tasks": [view(r) for r in rows[:MANAGE_PAGE_SIZE]], "page": filters.page,
            "hasMore": len(rows) > MANAGE_PAGE_SIZE, "total": total}


def cancelled(task: Row) -> bool:
    """Whether the owner cancelled the task: the server's fixed reason, not an agent's
    ``fail_task`` that happens to say the same."""
    return task["state"] == "failed" and task["error"] == CANCELLED and not task["agent_failed"]


def cancel(db: Database, user_id: int, task_id: str, *, now: int) -> dict[str, Any]:
    """Cancel a leased task; replays; other terminal states 409; not yours 404."""
    with db.transaction() as conn:
        hold_user(conn, user_id)  # the first committed of cancel and submit wins
        task = conn.execute(Q.get_task, {"id": task_id}).fetchone()
        if task is None or task["user_id"] != user_id:
            raise ApiError("not_found", "任务不存在")
        settle_user(conn, user_id, now)
        task = hold_task(conn, task_id)  # held, as it is now
        replayed = cancelled(task)
        if not replayed:
            if task["state"] != "leased":
                raise ApiError("task_terminal")
            conn.execute(Q.fail_task, {"id": task_id, "error": CANCELLED, "now": now})
        row = conn.execute(Q.get_managed_task, {"id": task_id}).fetchone()
    result = {"ok": True, "task": managed_view(row)}
    if replayed:
        result["replayed"] = True
    return result
