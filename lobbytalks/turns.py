"""Worker threads take turns at running Python: on SQLite, one serves at a time.

CPython runs one thread's Python at a time, and the ``sqlite3`` module lets go of the
interpreter around every call into SQLite. With several busy worker threads each such call
hands the interpreter to another thread and then waits to get it back, and every request
wakes a thread of its own: the more threads, the more of the machine goes into switching.
(Measured with the bench at concurrency 8 on 2 cores, before this: one waitress thread
served 26-46% more requests a second than four, for reads and writes alike, with lower
p50 and p99; the server switched context 4 times per healthz instead of 15.)

So the thread holding the turn serves request after request while there are any
(``lobbytalks.serving`` keeps the queue), and the other workers sleep. A thread lets its
turn go only while it waits for something other than the interpreter, so that a slow wait
never holds up everyone: another worker then serves the queue, and hands the turn back as
soon as the first is ready to go on.

* ``waiting(lock)``: the process's write lock, taken at once unless a thread that does
  not take turns (the mailer, a command) holds it;
* ``set_aside()``: a password hash (tens of milliseconds outside the interpreter lock), a
  round trip to a shared rate-limit storage.

Deadlock-free by one rule: a thread never waits for anything while holding the turn, except
the short locks around in-memory structures, whose holders never wait for the turn. A
thread without the turn (a background thread, a command, a test's client) passes through
``waiting`` and ``set_aside`` unchanged. SQLite's own write lock is waited for holding the
turn: only another process holds it, for the milliseconds a ``lobbytalks admin`` command
writes. So is everything SQLite does inside one call: a page read from a disk the operating
system has not cached, a long query. Competing threads would overlap those on the other
core; taking turns, they queue one behind another. Nothing here is that slow on a database
that fits in memory; for one that does not, ``LOBBYTALKS_TAKE_TURNS=false`` lets the
threads overlap them again.

With PostgreSQL every query waits on the network, and the workers overlap those waits, so
nothing takes turns (``wanted``).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator, Protocol

_held = threading.local()  # .turn: the Turn this thread holds, if any


class Keeper(Protocol):
    """Who hands out the turn (the server's task queue): told when its holder lets it go
    for a while and when it wants it back, so that another thread serves meanwhile."""

    def turn_set_aside(self) -> None: ...
    def turn_wanted_back(self) -> None: ...
    def turn_taken_back(self) -> None: ...


class Turn:
    def __init__(self, keeper: Keeper) -> None:
        self._lock = threading.Lock()
        self._keeper = keeper

    def take(self) -> None:
        self._lock.acquire()
        _held.turn = self

    def give_up(self) -> None:
        _held.turn = None
        self._lock.release()

    @contextmanager
    def taken(self) -> Iterator[None]:
        self.take()
        try:
            yield
        finally:
            self.give_up()

    @contextmanager
    def set_aside(self) -> Iterator[None]:
        self._keeper.turn_set_aside()
        self.give_up()
        try:
            yield
        finally:
            self._keeper.turn_wanted_back()
            self.take()
            self._keeper.turn_taken_back()


def held() -> bool:
    """Whether this thread holds a turn."""
    return getattr(_held, "turn", None) is not None


@contextmanager
def set_aside() -> Iterator[None]:
    """Let this thread's turn go for the block (a wait outside the interpreter), then wait
    for it again."""
    turn = getattr(_held, "turn", None)
    if turn is None:
        yield
        return
    with turn.set_aside():
        yield


@contextmanager
def waiting(lock: Any) -> Iterator[None]:
    """Hold ``lock`` for the block; if it is taken, wait for it with the turn set aside."""
    if not lock.acquire(blocking=False):
        with set_aside():
            lock.acquire()
    try:
        yield
    finally:
        lock.release()


def wanted(settings: Any) -> bool:
    """Whether the server's worker threads take turns: on SQLite, unless turned off."""
    return settings.take_turns and not settings.uses_postgres
