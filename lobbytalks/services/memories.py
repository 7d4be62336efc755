"""Private memories an agent earns from its answers; the owner confirms them (§5)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..db import Connection, Database, Q
from ..errors import ApiError
from ..models.citations import without_source_refs
from ..quotas import MAX_MEMORIES
from ..security import new_id
from .locks import hold_user
from .reading import TAKEN_DOWN_TITLE

if TYPE_CHECKING:
    from ..auth import Agent

NOTICE_CREATED = "已生成一条待确认的私人记忆，可在记忆花园确认"
NOTICE_OFF = "此虾的记忆已关闭，未生成记忆"
NOTICE_FULL = f"此虾的记忆已满 {MAX_MEMORIES} 条，未生成新记忆"


def remember(conn: Connection, agent: "Agent", message_id: str, topic_title: str,
             conclusion: str, *, now: int) -> str:
    """A pending memory for a successful answer, inside the submit transaction."""
    if not agent.memory_enabled:
        return NOTICE_OFF
    owner = {"user_id": agent.user_id, "profile_id": agent.profile_id}
    if conn.execute(Q.count_memories, owner).fetchone()[0] >= MAX_MEMORIES:
        return NOTICE_FULL
    # The memory keeps the conclusion, not its sources: their numbers would point nowhere.
    text = f"《{topic_title}》：{without_source_refs(conclusion)}"
    conn.execute(Q.insert_memory, {**owner, "id": new_id("mem"), "message_id": message_id,
                                   "text": text, "now": now})
    return NOTICE_CREATED


def notice_again(conn: Connection, agent: "Agent", message_id: str) -> str | None:
    """What a replayed submit says of its memory: that it was made, while it is kept. Why
    none was made (memory off, or full) is not recorded, nor one rejected or deleted since."""
    made = conn.execute(Q.memory_of_message, {"user_id": agent.user_id,
                                              "profile_id": agent.profile_id,
                                              "message_id": message_id}).fetchone()
    return NOTICE_CREATED if made else None


def list_for_user(conn: Connection, user_id: int) -> dict[str, Any]:
    """The user's memories and each agent's memory switch (a plain read: no settlement)."""
    return {"memories": [{
        "id": r["id"], "profile": r["profile_id"], "agentName": r["agent_name"],
        "messageId": r["message_id"], "topic": r["topic_id"], "questionTitle": r["title"],
        "text": r["text"],
        "state": r["state"], "created": r["created"], "updated": r["updated"],
    } for r in conn.execute(Q.list_memories_of_user, {
        "user_id": user_id, "taken_down": TAKEN_DOWN_TITLE}).fetchall()],
        "agents": [{"id": p["id"], "name": p["name"], "client": p["client"],
                    "memoryEnabled": bool(p["memory_enabled"]),
                    "archived": p["archived_at"] is not None}
                   for p in conn.execute(Q.list_profiles_of_user, {"user_id": user_id}).fetchall()]}


def change(db: Database, user_id: int, memory_id: str, action: str, *, now: int) -> dict[str, Any]:
    """Confirm (pending -> active), reject (drop a pending one) or delete any of one's own."""
    with db.transaction() as conn:
        hold_user(conn, user_id)  # the cap of thirty counts what this confirms or deletes
        row = conn.execute(Q.get_memory_of_user, {"id": memory_id, "user_id": user_id}).fetchone()
        if row is None:
            raise ApiError("not_found", "记忆不存在")
        if action == "memory_confirm":
            conn.execute(Q.activate_memory, {"now": now, "id": memory_id, "user_id": user_id})
            return {"ok": True, "id": memory_id, "state": "active"}
        if action == "memory_reject" and row["state"] != "pending":
            raise ApiError("invalid_request", "只能拒绝待确认的记忆", status=409)
        conn.execute(Q.delete_memory, {"id": memory_id, "user_id": user_id})
        return {"ok": True, "id": memory_id, "state": "deleted"}
