"""What is kept between requests until the database changes: rendered pages, the results
of the agents' read actions and the rows behind their tokens.

Each is kept with the database's *generation* it was made in, a value that moves as soon as
anything is committed, and every lookup takes only what was made in the current generation,
so nothing kept before a commit is handed out after it: a withdrawn share, a hidden answer,
a closed question or a lost membership takes effect with the write that did it. A short
lifetime covers what changes with the clock alone.

* SQLite (``Generation``): a number that moves as soon as any thread of this process notices
  a change: SQLite's ``data_version`` of the thread's connection moves when another
  connection has committed (the one every write transaction of this process runs on, see
  ``db.sqlite``, or another process such as ``lobbytalks admin``), ``total_changes`` when
  the thread's own connection wrote.
* PostgreSQL (``SnapshotGeneration``): the snapshot a new statement would take. Several
  processes write there, and no process hears of the others' commits; but two equal
  snapshots see exactly the same committed rows, whoever took them, and every commit that
  wrote anything changes the snapshot taken after it. It costs one round trip a lookup, so
  only what saves more than that is kept there (results and pages, not token rows).

Each entry is also filed under who asked (a visitor, a person, an agent): a kept thing is
only ever what a fresh computation for the same reader would have returned.
"""
from __future__ import annotations

import itertools
import threading
import time
from typing import Any, Callable, Hashable

KEPT_SECONDS = 5.0


class Generation:
    statement = "PRAGMA data_version"
    round_trip = False  # looked at without leaving the process

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._value = 0
        self._local = threading.local()

    def current(self, conn: Any) -> Hashable:
        """The generation, after noticing any change this thread's connection can see
        since it last looked. Inside a transaction ``data_version`` stands still while
        others commit, so what is made there is filed under a key no lookup can match."""
        if conn.in_transaction:
            return object()
        seen = (conn.execute(self.statement).fetchone()[0], conn.total_changes)
        if getattr(self._local, "seen", None) != seen:
            with self._lock:  # numbers are handed out and stored in one step, in order
                self._value = next(self._numbers)
            self._local.seen = seen
        return self._value


class SnapshotGeneration:
    """PostgreSQL's generation: ``pg_current_snapshot()`` as text (``xmin:xmax:xip,...``).

    A commit either completes a transaction listed as in progress (it leaves the list) or
    one at or past ``xmax`` (``xmax`` moves past it), so no commit leaves the text as it
    was. Transaction ids are the whole cluster's: a commit in another database of the same
    server (another application, autovacuum's ANALYZE) moves it too, which costs only what
    was kept. A value is made after the snapshot is read, so it is never older than its key.
    Inside a transaction the connection sees its own writes, which may yet be rolled back:
    what is made there is filed under a key no later lookup can match."""

    statement = "SELECT pg_current_snapshot()::text"
    round_trip = True

    def current(self, conn: Any) -> Hashable:
        if conn.in_transaction:
            return object()
        return conn.execute(self.statement).fetchone()[0]


class Kept:
    """A bounded store of ``key -> value``, each entry for ``seconds`` at most and only for
    the generation it was kept in (``Generation.current``; None for what the database does
    not decide). One entry per key: keeping it again, in a newer generation, replaces it.
    Full, it starts afresh."""

    def __init__(self, capacity: int, cost: Callable[[Any], int] = lambda _value: 1,
                 seconds: float = KEPT_SECONDS) -> None:
        self.capacity, self.cost, self.seconds = capacity, cost, seconds
        self._entries: dict[Hashable, tuple[Any, int | None, float]] = {}
        self._used = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, generation: int | None = None) -> Any | None:
        entry = self._entries.get(key)
        if entry is None or entry[1] != generation or entry[2] < time.monotonic():
            return None
        return entry[0]

    def keep(self, key: Hashable, value: Any, generation: int | None = None) -> None:
        cost = self.cost(value)
        with self._lock:
            replaced = self._entries.pop(key, None)
            if replaced is not None:
                self._used -= self.cost(replaced[0])
            if self._used + cost > self.capacity:
                self._entries.clear()
                self._used = 0
            self._entries[key] = (value, generation, time.monotonic() + self.seconds)
            self._used += cost

    def __len__(self) -> int:
        return len(self._entries)


AnyGeneration = Generation | SnapshotGeneration


def for_database(dialect: str) -> AnyGeneration:
    return Generation() if dialect == "sqlite" else SnapshotGeneration()
