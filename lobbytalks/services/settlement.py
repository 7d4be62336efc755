"""Request-driven settlement of leases that can no longer finish.

There is no background daemon: expired leases and leases of dead connections are settled
when the owner looks (manage views), on rotation and revocation, on claims and on status
queries. Each function runs inside the caller's write transaction, and tells the owner of
each task it ends in that same transaction (a lease the owner ended themselves -- cancel,
rotation, revocation -- is not settled here and tells nobody).
"""
from __future__ import annotations


from ..db import Connection, Database, Q
from .locks import hold_user
from .notifications import notify_tasks_ended

DEAD_CONNECTION = "连接已撤销或 Token 已过期"
TOKEN_ROTATED = "Token 已轮换，旧连接的任务已终止"
TOKEN_REVOKED = "Token 已撤销，此连接的任务已终止"
CANCELLED = "用户已取消外部任务"
AGENT_ARCHIVED = "外部虾已归档，此连接的任务已终止"
LEASE_EXPIRED = "租约已过期"


def settle_user(conn: Connection, user_id: int, now: int) -> None:
    # Asked first: nearly always nothing is due, and one read costs less than two UPDATEs
    # finding nothing (on PostgreSQL, one round trip instead of two).
    if not settlement_due(conn, user_id, now):
        return
    params = {"user": user_id, "now": now, "reason": DEAD_CONNECTION, "expired": LEASE_EXPIRED}
    expired = conn.execute(Q.settle_expired_leases, params).fetchall()
    notify_tasks_ended(conn, expired, "task_expired", now=now)
    dead = conn.execute(Q.settle_dead_connections, params).fetchall()
    notify_tasks_ended(conn, dead, "task_failed", now=now)


def settle_for_view(db: Database, user_id: int, now: int) -> None:
    """What the owner's views (/tasks, /agents and their API) settle before they list:
    nothing, without a write, unless something is due; then, as every change of a lease,
    under the user's row lock, so that a heartbeat, fail or submit that read the task as
    leased is not overtaken between its read and its write."""
    if settlement_due(db.conn, user_id, now):
        with db.transaction() as conn:
            hold_user(conn, user_id)
            settle_user(conn, user_id, now)


def settlement_due(conn: Connection, user_id: int, now: int) -> bool:
    """Whether ``settle_user`` would end a lease now. A view that settles only when it is
    due writes nothing, and takes no lock, the rest of the time: on PostgreSQL a row lock is
    a commit like any other, and would move every process's kept pages (``kept.py``)."""
    return conn.execute(Q.settlement_due, {"user": user_id, "now": now}).fetchone() is not None


def settle_task(conn: Connection, task_id: str, now: int) -> bool:
    """Expire the task if its lease has run out; True when this call expired it."""
    expired = conn.execute(Q.expire_task_if_due,
                           {"id": task_id, "now": now, "expired": LEASE_EXPIRED}).fetchall()
    notify_tasks_ended(conn, expired, "task_expired", now=now)
    return bool(expired)
