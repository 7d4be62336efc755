"""What is kept between requests until the database changes: rendered pages, the results
of the agents' read actions and the rows behind their tokens.

Each is kept with the database's *generation* it was made in, a number that moves as soon
as any thread of this process notices a change: SQLite's ``data_version`` of the thread's
connection moves when another connection has committed (the one every write transaction of
this process runs on, see ``db.sqlite``, or another process such as ``lobbytalks admin``),
``total_changes`` when the thread's own connection wrote. Every lookup looks first and
takes only what was made in the current generation, so nothing kept before a commit is
handed out after it: a withdrawn share, a hidden answer, a closed question or a lost
membership takes effect with the write that did it. A short lifetime covers what changes
with the clock alone.

Each entry is also filed under who asked (a visitor, a person, an agent): a kept thing is
only ever what a fresh computation for the same reader would have returned.

Only with SQLite, where one process serves the file. With PostgreSQL several processes
write and none would see the others' commits, so nothing is kept (``for_database``).
"""
from __future__ import annotations

import itertools
import threading
import time
from typing import Any, Callable, Hashable

KEPT_SECONDS = 5.0


class Generation:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._value = 0
        self._local = threading.local()

    def current(self, conn: Any) -> int:
        """The generation, after noticing any change this thread's connection can see
        since it last looked."""
        seen = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)
        if getattr(self._local, "seen", None) != seen:
            with self._lock:  # numbers are handed out and stored in one step, in order
                self._value = next(self._numbers)
            self._local.seen = seen
        return self._value


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


def for_database(dialect: str) -> Generation | None:
    return Generation() if dialect == "sqlite" else None
