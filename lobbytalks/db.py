"""SQLite access: connections, pragmas, transactions, migrations and named queries.

Reads use one connection per thread (reused across requests). Writes go through one
process-wide lock and a ``BEGIN IMMEDIATE`` transaction, so concurrent writers queue in
Python instead of spinning on SQLite's busy timeout, and "the first committed transaction
wins" holds for every race the protocol cares about.
"""
from __future__ import annotations

import functools
import logging
import os
import re
import sqlite3
import threading
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterator

from .checkpoint import Checkpointer

BUSY_TIMEOUT_MS = 5000
log = logging.getLogger("lobbytalks.db")
_QUERY_HEADER = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)


# The names services use for the database seam. Services annotate with these and catch
# these, never the driver's own classes, so the backend behind them can change in one place.
Connection = sqlite3.Connection
Row = sqlite3.Row
IntegrityError = sqlite3.IntegrityError
DatabaseError = sqlite3.Error


class SchemaTooNew(RuntimeError):
    """The database was written by a newer LobbyTalks than this one."""


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


def _sql_dir(kind: str):
    return resources.files("lobbytalks").joinpath("sql", kind)


@functools.lru_cache(maxsize=1)
def migrations() -> list[tuple[int, str, str]]:
    """All bundled migrations as (version, name, sql), in order."""
    found = []
    for entry in _sql_dir("migrations").iterdir():
        match = re.fullmatch(r"(\d{4})_([a-z0-9_]+)\.sql", entry.name)
        if match:
            found.append((int(match.group(1)), match.group(2), entry.read_text("utf-8")))
    found.sort()
    return found


def latest_version() -> int:
    return migrations()[-1][0]


def schema_version(conn: sqlite3.Connection) -> int:
    """The highest applied migration, 0 for an empty database."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return row[0] or 0


def pending_migrations(conn: sqlite3.Connection) -> list[tuple[int, str, str]]:
    current = schema_version(conn)
    if current > latest_version():
        raise SchemaTooNew(
            f"the database is at schema version {current}, newer than this LobbyTalks "
            f"(knows up to {latest_version()}); run a newer release or restore a backup"
        )
    return [m for m in migrations() if m[0] > current]


def migrate(conn: sqlite3.Connection, now: int) -> list[int]:
    """Apply every pending migration in one transaction, each with its record row."""
    todo = pending_migrations(conn)
    if not todo:
        return []
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL)"
        )
        for version, name, sql in todo:
            for statement in _split_statements(sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)",
                (version, name, now),
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return [version for version, _, _ in todo]


def _split_statements(sql: str) -> list[str]:
    """Split a migration into statements; executescript would commit our transaction."""
    statements, buffer = [], ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer)
            buffer = ""
    if buffer.strip() and not buffer.strip().startswith("--"):
        statements.append(buffer)
    return statements


class Queries:
    """Named SQL loaded from ``sql/queries/*.sql`` (``-- name: get_user`` headers)."""

    def __init__(self) -> None:
        self._sql: dict[str, str] = {}
        for entry in sorted(_sql_dir("queries").iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".sql"):
                self._load(entry.name, entry.read_text("utf-8"))

    def _load(self, filename: str, text: str) -> None:
        parts = _QUERY_HEADER.split(text)
        for name, body in zip(parts[1::2], parts[2::2]):
            if name in self._sql:
                raise ValueError(f"duplicate query name {name!r} in {filename}")
            self._sql[name] = body.strip().rstrip(";")

    def __getattr__(self, name: str) -> str:
        try:
            return self._sql[name]
        except KeyError:
            raise AttributeError(f"no named query {name!r}") from None

    def __contains__(self, name: str) -> bool:
        return name in self._sql


Q = Queries()


class Database:
    """Per-thread read connections plus one serialised writer."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self.checkpointer = Checkpointer(self.path)
        # Called after every commit, outside the write lock (the mailer's wake-up); each
        # must be cheap and must not raise.
        self.after_commit: list[Callable[[], None]] = []

    @property
    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path, autocheckpoint=False)
            self._local.conn = conn
        return conn

    def close_thread_connection(self) -> None:
        """Let go of the file from this thread, and end the checkpoint thread too, so the
        database can be copied over or removed (restore, tests)."""
        self.checkpointer.stop()
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` write transaction; nested use is a savepoint inside it.

        The nesting depth is counted per thread rather than read from ``in_transaction``:
        a transaction that failed to end (a COMMIT refused by a deferred constraint, a full
        disk) must never be joined by the thread's next request. A failed COMMIT is rolled
        back before its error goes on.
        """
        with self._write_lock:
            depth = getattr(self._local, "depth", 0)
            if depth:
                yield from self._savepoint(depth)
                return
            conn = self.conn
            if conn.in_transaction:  # only a bug leaves one open; never build on it
                log.warning("a transaction was left open on this thread; rolling it back")
                self._abort(conn)
                conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            self._local.depth = 1
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                self._abort(conn)
                raise
            finally:
                self._local.depth = 0
        self.checkpointer.notify()
        for hook in self.after_commit:
            hook()

    def _savepoint(self, depth: int) -> Iterator[sqlite3.Connection]:
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

    def _abort(self, conn: sqlite3.Connection) -> None:
        """Roll back whatever is open; a connection that cannot roll back is replaced."""
        if not conn.in_transaction:
            return  # SQLite already rolled back (e.g. after SQLITE_FULL)
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            log.exception("ROLLBACK failed; opening a new connection for this thread")
            conn.close()
            self._local.conn = None

    def one(self, sql: str, params: Any = ()) -> sqlite3.Row | None:
        return self.conn.execute(sql, params).fetchone()

    def all(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def value(self, sql: str, params: Any = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]
