"""SQLite access: connections, pragmas, transactions, migrations and named queries.

Reads use one connection per thread (reused across requests). Writes go through one
process-wide lock and a ``BEGIN IMMEDIATE`` transaction, so concurrent writers queue in
Python instead of spinning on SQLite's busy timeout, and "the first committed transaction
wins" holds for every race the protocol cares about.
"""
from __future__ import annotations

import functools
import re
import sqlite3
import threading
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterator

from .checkpoint import Checkpointer

BUSY_TIMEOUT_MS = 5000
_QUERY_HEADER = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)


class SchemaTooNew(RuntimeError):
    """The database was written by a newer LobbyTalks than this one."""


def connect(path: str | Path, *, autocheckpoint: bool = True) -> sqlite3.Connection:
    """Open a connection with the pragmas every connection needs (busy timeout first).

    ``autocheckpoint=False`` is for request connections, whose WAL is checkpointed by
    ``checkpoint.Checkpointer`` outside the write lock.
    """
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
        """One ``BEGIN IMMEDIATE`` write transaction; nested use joins the outer one."""
        conn = self.conn
        with self._write_lock:
            if conn.in_transaction:
                yield conn
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        self.checkpointer.notify()
        for hook in self.after_commit:
            hook()

    def one(self, sql: str, params: Any = ()) -> sqlite3.Row | None:
        return self.conn.execute(sql, params).fetchone()

    def all(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def value(self, sql: str, params: Any = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]
