"""Submitting a result: the one message per task (§5); the result rules are in models/result_rules."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..db import Database, Q
from ..errors import ApiError
from ..jsonfast import dumps
from ..models.result_rules import PROVENANCE, normalise, result_hash
from ..security import new_id
from .agent_requests import answer_requested
from .locks import hold_task, hold_topic, hold_user
from .memories import notice_again, remember
from .notifications import notify
from .preconditions import check_topic, lease_ran_out, require_leased
from .tasks import check_reply_target, owned_task, task_view, with_expiry_settled
from .reading import get_topic_for_member

if TYPE_CHECKING:
    from ..auth import Agent


def submit(db: Database, agent: "Agent", data: Any, *, now: int) -> dict[str, Any]:
    result = normalise(data, now=now)
    digest = result_hash(result)
    with db.transaction() as conn:
        hold_user(conn, agent.user_id)  # cancel and submit are decided one after the other
        task = owned_task(conn, agent, data.taskId)  # its topic never changes
        hold_topic(conn, task["topic_id"])  # the answer count and its cap
        task, expired_now = with_expiry_settled(conn, hold_task(conn, task["id"]), now)
        if not expired_now and task["state"] != "expired":
            return _store(conn, agent, data, task, result, digest, now)
    # Its lease ran out, just now or before (whoever recorded that first): nothing was
    # stored and there is nothing to replay, so every such submit gets the same answer.
    raise lease_ran_out("submit_result")


def _store(conn, agent: "Agent", data: Any, task: Any, result: dict[str, Any], digest: str,
           now: int) -> dict[str, Any]:
    """The message, the task done, the answer count, the asker told, the memory kept."""
    if task["state"] == "done":
        return _replay(conn, agent, task, digest)
    require_leased(task)
    topic = get_topic_for_member(conn, task["topic_id"], agent.user_id)
    check_topic("submit_result", topic)
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
    done = conn.execute(Q.complete_task, {"id": task["id"], "message": message_id,
                                          "hash": digest, "now": now}).fetchone()
    conn.execute(Q.bump_message_count, {"id": topic["id"], "now": now})
    answer_requested(conn, agent.user_id, topic["id"])
    if topic["author_id"] != agent.user_id:  # one's own agent answering is no news
        notify(conn, topic["author_id"], "answer", topic["id"], message_id=message_id,
               now=now)
    notice = remember(conn, agent, message_id, topic["title"], data.conclusion, now=now)
    return {"ok": True, "messageId": message_id, "task": task_view(done),
            "memoryNotice": notice, "provenance": PROVENANCE}


def _replay(conn, agent: "Agent", task: Any, digest: str) -> dict[str, Any]:
    if task["result_hash"] != digest:
        raise ApiError("idempotency_conflict", "此任务已提交了不同的成果")
    replay = {"ok": True, "messageId": task["message_id"], "task": task_view(task),
              "replayed": True, "provenance": PROVENANCE}
    notice = notice_again(conn, agent, task["message_id"])
    return replay if notice is None else {**replay, "memoryNotice": notice}
