"""The audit trail: one row per admin action, written in the transaction of the change."""
from __future__ import annotations

from typing import Any

from ..db import Connection, Database, Q


def record(conn: Connection, actor_id: int | None, action: str, kind: str,
           target: str, reason: str, now: int) -> None:
    """One audit entry; ``actor_id`` None is the operator's command line."""
    conn.execute(Q.insert_audit, {"now": now, "actor": actor_id, "action": action,
                                  "kind": kind, "target": target, "reason": reason})


def recent(db: Database, limit: int = 50) -> list[dict[str, Any]]:
    """The newest entries, newest first, each with the acting admin's name (None: CLI).

    The one reader that still takes the Database: ``cli admin log`` (owned by the CLI split)
    passes one; it becomes a Connection when that caller passes ``db.conn``."""
    return [dict(r) for r in db.all(Q.list_recent_audit, {"limit": limit})]
