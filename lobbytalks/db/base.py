"""What both backends' ``Database`` share: the transaction, savepoints and read helpers.

A subclass provides ``conn`` (this thread's connection), ``_local`` (a threading.local),
``_abort(conn)``, ``checkpointer``, ``after_commit``, its ``begin`` statement and, where
writers must queue, a ``_write_guard``; one with a connection of its own for writes
provides ``_writer`` and ``_opened`` too.
"""
from __future__ import annotations

import logging
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, Iterator

log = logging.getLogger("lobbytalks.db")


class TransactionalDatabase:
    begin = "BEGIN"
    # A read-only transaction whose statements all see one snapshot. SQLite's deferred BEGIN
    # does (WAL: the snapshot is taken at the first read); PostgreSQL's default isolation
    # takes a new snapshot at every statement.
    begin_snapshot = "BEGIN"

    def _write_guard(self) -> AbstractContextManager[Any]:
        return nullcontext()

    def _writer(self) -> Any:
        """The connection a write transaction runs on (under ``_write_guard``)."""
        return self.conn

    def _opened(self) -> tuple[Any, ...]:
        """The connections this thread may have left a transaction open on."""
        return (self._writer(),)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """One write transaction (``begin``); nested use is a savepoint inside it.

        The nesting depth is counted per thread rather than read from ``in_transaction``:
        a transaction that failed to end (a COMMIT refused by a deferred constraint, a full
        disk) must never be joined by the thread's next request. A failed COMMIT is rolled
        back before its error goes on.
        """
        with self._write_guard():
            depth = getattr(self._local, "depth", 0)
            if depth:
                yield from self._savepoint(depth)
                return
            # Only a bug leaves a transaction open; never build on it, nor wait behind
            # its locks.
            for leftover in self._opened():
                if leftover.in_transaction:
                    log.warning("a transaction was left open; rolling it back")
                    self._abort(leftover)
            conn = self._writer()
            conn.execute(self.begin)
            self._local.depth = 1
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                self._abort(conn)
                raise
            finally:
                self._local.depth = 0
            self.checkpointer.catch_up(conn)  # still under the write guard
        self.checkpointer.notify()
        for hook in self.after_commit:
            hook()

    @contextmanager
    def snapshot(self) -> Iterator[Any]:
        """This thread's connection, reading one snapshot for the block: for reads that must
        agree with each other (a count beside the rows it counts) while others commit.
        Read-only; inside a write transaction it is that transaction."""
        if getattr(self._local, "depth", 0):
            yield self.conn
            return
        conn = self.conn
        conn.execute(self.begin_snapshot)
        try:
            yield conn
        finally:
            if conn.in_transaction:  # a failed statement may have ended it already
                conn.execute("ROLLBACK")

    def _savepoint(self, depth: int) -> Iterator[Any]:
        conn, name = self.conn, f"nested_{depth}"
        conn.execute(f"SAVEPOINT {name}")
        self._local.depth = depth + 1
        try:
            yield conn
        except BaseException:
            conn.execute(f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")
            raise
        else:
            conn.execute(f"RELEASE {name}")
        finally:
            self._local.depth = depth

    def one(self, sql: str, params: Any = ()) -> Any:
        return self.conn.execute(sql, params).fetchone()

    def all(self, sql: str, params: Any = ()) -> list[Any]:
        return self.conn.execute(sql, params).fetchall()

    def value(self, sql: str, params: Any = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]
