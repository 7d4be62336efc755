"""Row locks that keep a rule whole when several processes write at once.

A rule that counts and then inserts (three live leases, eight agents, 200 answers) or
reads and then updates (cancel against submit) holds only if no other transaction changes
the rows it counted in between. SQLite gets that for free: every write transaction is
``BEGIN IMMEDIATE`` under one process-wide lock. On PostgreSQL the transaction locks the
row its rule is about, as its first statement, so a second transaction on the same user,
topic or task waits until the first commits and then sees what it wrote.

The rule, for every write path that checks a count or a state before it writes:

- the lock is the transaction's first statement (a plain read of an id it needs may come
  first, never a read of what the rule counts);
- one order everywhere -- user, then topic, then task -- so two transactions never wait on
  each other in a circle. Whose row: the user whose cap or lease it is (claim, submit,
  fail, heartbeat, cancel, agents, communities, memories, a suspension), the topic whose
  answers, versions or cards change (submit, revise, close, reopen, cards, hiding), the
  task last (submit).

On SQLite these are cheap reads inside a transaction that already holds the writer lock.

A deadlock or serialization failure should then not happen; if one does (a path that
broke the order, a lock wait past ``lock_timeout``), PostgreSQL has rolled the whole
transaction back. It is not retried here: a service's body may have read clocks or built
ids and the web layer may have decided things around it, so replaying it is the client's
call. The seam raises ``db.ContentionError`` and the app answers the protocol's 503
``service_unavailable`` with ``Retry-After``; claims and submits are idempotent, so
trying again is always safe.
"""
from __future__ import annotations

from ..db import Connection, Q, Row

CONTENTION_RETRY_AFTER_SECONDS = 1  # a lock race clears in milliseconds


def hold_user(conn: Connection, user_id: int) -> None:
    conn.execute(Q.lock_user, {"id": user_id})


def hold_topic(conn: Connection, topic_id: str) -> None:
    conn.execute(Q.lock_topic, {"id": topic_id})


def hold_task(conn: Connection, task_id: str) -> Row:
    """The task, locked and as it is now: another transaction may have ended its lease (a
    reopened question, a member back in a community) while this one waited for the topic."""
    return conn.execute(Q.lock_task, {"id": task_id}).fetchone()
