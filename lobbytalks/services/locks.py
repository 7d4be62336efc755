"""Row locks that keep a rule whole when several processes write at once.

A rule that counts and then inserts (three live leases, eight agents, 200 answers) or
reads and then updates (cancel against submit) holds only if no other transaction changes
the rows it counted in between. SQLite gets that for free: every write transaction is
``BEGIN IMMEDIATE`` under one process-wide lock. On PostgreSQL the transaction locks the
row its rule is about, as its first statement, so a second transaction on the same user,
topic or task waits until the first commits and then sees what it wrote.

One order everywhere — user, then topic, then task — so two transactions never wait on
each other in a circle.
"""
from __future__ import annotations

from ..db import Connection, Q


def hold_user(conn: Connection, user_id: int) -> None:
    conn.execute(Q.lock_user, {"id": user_id})


def hold_topic(conn: Connection, topic_id: str) -> None:
    conn.execute(Q.lock_topic, {"id": topic_id})


def hold_task(conn: Connection, task_id: str) -> None:
    conn.execute(Q.lock_task, {"id": task_id})
