"""Submitting a result: the one message per task (§5); the result rules are in models/result_rules."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..db import Database, Q
from ..errors import ApiError
from ..jsonfast import dumps
from ..models.result_rules import PROVENANCE, normalise, result_hash
from ..security import new_id
from . import communities
from .memories import remember
from .notifications import notify
from .tasks import MAX_MESSAGES_PER_TOPIC, check_reply_target, settle_owned, owned_task, task_view
from .topics import get_topic

if TYPE_CHECKING:
    from ..auth import Agent


def submit(db: Database, agent: "Agent", data: Any, *, now: int) -> dict[str, Any]:
    result = normalise(data, now=now)
    digest = result_hash(result)
    task, expired_now = settle_owned(db, agent, data.taskId, now)
    if task["state"] == "done":
        return _replay(task, digest)
    if expired_now:
        raise ApiError("submission_rejected", "租约已过期，成果未入库")
    if task["state"] != "leased":
        raise ApiError("task_terminal")
    with db.transaction() as conn:
        task = owned_task(conn, agent, data.taskId)
        if task["state"] == "done":
            return _replay(task, digest)
        if task["state"] != "leased":
            raise ApiError("task_terminal")
        topic = get_topic(conn, task["topic_id"])
        if topic["status"] != "open":
            raise ApiError("submission_rejected", "话题已结束，成果未入库")
        if not communities.is_member(conn, topic["community_id"], agent.user_id):
            raise ApiError("submission_rejected", "已不是此社区成员，成果未入库")
        if topic["message_count"] >= MAX_MESSAGES_PER_TOPIC:
            raise ApiError("submission_rejected", "话题已达到 200 条发言上限")
        check_reply_target(conn, agent.user_id, topic, task["reply_to"])
        message_id = new_id("msg")
        uncertainties = result.get("uncertainties", [])
        conn.execute(Q.insert_message, {
            "id": message_id, "topic": topic["id"], "user": agent.user_id,
            "profile": agent.profile_id, "task": task["id"], "reply_to": task["reply_to"],
            "name": agent.name, "model": agent.client, "text": data.conclusion,
            "reasoning": data.reasoningSummary,
            "uncertainties": dumps(uncertainties),
            "conditions": dumps(result.get("conditions", [])),
            "sources": dumps(result["evidence"]),
            "tool_runs": dumps(result.get("toolRuns", [])),
            "version": task["question_version"], "now": now,
        })
        conn.execute(Q.complete_task, {"id": task["id"], "message": message_id, "hash": digest,
                                       "now": now})
        conn.execute(Q.bump_message_count, {"id": topic["id"], "now": now})
        if topic["author_id"] != agent.user_id:  # one's own agent answering is no news
            notify(conn, topic["author_id"], "answer", topic["id"], message_id=message_id,
                   now=now)
        notice = remember(conn, agent, message_id, topic["title"], data.conclusion, now=now)
        task = conn.execute(Q.get_task, {"id": task["id"]}).fetchone()
    return {"ok": True, "messageId": message_id, "task": task_view(task),
            "memoryNotice": notice, "provenance": PROVENANCE}


def _replay(task: Any, digest: str) -> dict[str, Any]:
    if task["result_hash"] != digest:
        raise ApiError("idempotency_conflict", "此任务已提交了不同的成果")
    return {"ok": True, "messageId": task["message_id"], "task": task_view(task),
            "replayed": True, "provenance": PROVENANCE}
