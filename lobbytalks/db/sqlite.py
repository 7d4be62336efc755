"""SQLite access: connections, pragmas and transactions.

Reads use one connection per thread (reused across requests). Writes go through one
process-wide lock and a ``BEGIN IMMEDIATE`` transaction, so concurrent writers queue in
Python instead of spinning on SQLite's busy timeout, and "the first committed transaction
wins" holds for every race the protocol cares about. Every write transaction runs on one
connection of its own, whichever thread holds the lock: a connection that finds the
database changed by another connection since it last looked drops its whole page cache, so
per-thread writers would read each page of every index they touch again on each write.
"""
from __future__ import annotations

import logging
import os
import sqlite3
import threading
from pathlib import Path
from typing import Callable

from .. import turns
from ..checkpoint import Checkpointer
from .base import TransactionalDatabase

BUSY_TIMEOUT_MS = 5000
log = logging.getLogger("lobbytalks.db")


# The names services annotate with. The PostgreSQL connection and rows behave like these
# (db/postgres.py); the error classes services catch are in db/errors.py.
Connection = sqlite3.Connection
Row = sqlite3.Row


def make_private_dir(path: Path) -> None:
    """Create the data folder owner-only (0700); an existing folder keeps its mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass


def _create_private_file(path: Path) -> None:
    """Create a missing database file as 0600 before SQLite opens it: SQLite would create
    it 0644 (under umask 022), and it gives its -wal and -shm the database file's mode."""
    if path.is_dir():  # SQLite says only "unable to open database file"
        raise sqlite3.OperationalError(f"cannot open the database {path}: it is a folder, "
                                       "not a file (LOBBYTALKS_DB and --db name the file)")
    if path.exists() or str(path) == ":memory:":
        return
    make_private_dir(path.parent)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:  # another process created it meanwhile; its mode stands
        pass


def connect(path: str | Path, *, autocheckpoint: bool = True) -> sqlite3.Connection:
    """Open a connection with the pragmas every connection needs (busy timeout first).

    ``autocheckpoint=False`` is for request connections, whose WAL is checkpointed by
    ``checkpoint.Checkpointer`` outside the write lock.
    """
    _create_private_file(Path(path))
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    if not autocheckpoint:
        conn.execute("PRAGMA wal_autocheckpoint = 0")
    return conn


def open_writable(path: str | Path) -> sqlite3.Connection:
    """A connection to a database this user may write; one it may only read (a file copied
    in by root, a read-only folder or mount) is refused naming the file: SQLite opens it
    read-only without a word, and the server would start, pass its health check and fail
    every write.

    :raise sqlite3.OperationalError: with the line to show."""
    try:
        conn = connect(path)
    except sqlite3.OperationalError as exc:  # the -wal or -shm cannot be made beside it
        raise _cannot_write(path, exc) or exc from None
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.execute("BEGIN IMMEDIATE")  # granted to a read-only connection all the same
    try:
        conn.execute(f"PRAGMA user_version = {int(version)}")  # a write, rolled back
    except sqlite3.OperationalError as exc:
        conn.execute("ROLLBACK")
        conn.close()
        raise _cannot_write(path, exc) or exc from None
    conn.execute("ROLLBACK")
    return conn


def _cannot_write(path: str | Path, exc: sqlite3.OperationalError) -> Exception | None:
    if not getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_READONLY",
                                                            "SQLITE_CANTOPEN")):
        return None
    user = os.getuid() if hasattr(os, "getuid") else "this user"
    return sqlite3.OperationalError(
        f"cannot write the database {path} ({exc}): the user running lobbytalks (uid {user}) "
        f"needs write access to the file, its -wal and -shm files and its folder")


class Database(TransactionalDatabase):
    """Per-thread read connections plus one serialised writer."""

    dialect = "sqlite"
    begin = "BEGIN IMMEDIATE"

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._write_conn: sqlite3.Connection | None = None  # opened by the first write
        self.checkpointer = Checkpointer(self.path)
        # Called after every commit, outside the write lock (the mailer's wake-up); each
        # must be cheap and must not raise.
        self.after_commit: list[Callable[[], None]] = []

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection; the writer's while the thread holds a transaction."""
        if getattr(self._local, "depth", 0):
            return self._writer()
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path, autocheckpoint=False)
            self._local.conn = conn
        return conn

    def _write_guard(self):
        # Waited for with the request's turn set aside (lobbytalks.turns); only a thread
        # that is not taking turns (the mailer, a command) ever holds it when a request
        # comes for it, the turn holder's own transaction being over by then.
        return turns.waiting(self._write_lock)

    def _writer(self) -> sqlite3.Connection:
        if self._write_conn is None:
            self._write_conn = connect(self.path, autocheckpoint=False)
        return self._write_conn

    def _opened(self) -> tuple[sqlite3.Connection, ...]:
        own = getattr(self._local, "conn", None)  # not opened just to be looked at
        return (self._writer(),) if own is None else (own, self._writer())

    def release_connection(self) -> None:
        """End of a request: the thread keeps its connection (the PostgreSQL pool's
        counterpart returns it)."""

    def close(self) -> None:
        self.close_thread_connection()

    # Never closed for good: the next use opens the file again.
    closed = False

    def close_thread_connection(self) -> None:
        """Let go of the file from this thread, and end the checkpoint thread too, so the
        database can be copied over or removed (restore, tests)."""
        self.checkpointer.stop()
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
        with self._write_lock:
            if self._write_conn is not None:
                self._write_conn.close()
                self._write_conn = None

    def _abort(self, conn: sqlite3.Connection) -> None:
        """Roll back whatever is open; a connection that cannot roll back is replaced."""
        if not conn.in_transaction:
            return  # SQLite already rolled back (e.g. after SQLITE_FULL)
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            log.exception("ROLLBACK failed; opening a new connection in its place")
            conn.close()
            if conn is self._write_conn:
                self._write_conn = None
            else:
                self._local.conn = None
