"""The audit trail: one row per admin action, written in the transaction of the change."""
from __future__ import annotations

from typing import Any

from ..db import Connection, Q


def record(conn: Connection, actor_id: int | None, action: str, kind: str,
           target: str, reason: str, now: int) -> None:
    """One audit entry; ``actor_id`` None is the operator's command line."""
    conn.execute(Q.insert_audit, {"now": now, "actor": actor_id, "action": action,
                                  "kind": kind, "target": target, "reason": reason})


def recent(conn: Connection, limit: int = 50) -> list[dict[str, Any]]:
    """The newest entries, newest first, each with the acting admin's name (None: CLI)."""
    return [dict(r) for r in conn.execute(Q.list_recent_audit, {"limit": limit}).fetchall()]
