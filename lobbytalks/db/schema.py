"""Migrations: one version history, a file per version in each dialect's folder.

``sql/migrations/NNNN_name.sql`` is SQLite; ``sql/postgresql/migrations/NNNN_name.sql`` is
its PostgreSQL equivalent with the same number and name (a test holds the two lists equal).
All pending migrations apply in one transaction together with their record rows.
"""
from __future__ import annotations

import contextlib
import functools
import re
import sqlite3
from typing import Any

from .queries import sql_dir

# Two processes starting at once on one PostgreSQL: the second waits here, then finds
# nothing left to do. Any fixed 64-bit number; this one spells "LobbyTlk".
PG_MIGRATE_LOCK = 0x4C6F626279546C6B
_RECORD_TABLE = ("CREATE TABLE IF NOT EXISTS schema_migrations ("
                 " version {int} PRIMARY KEY, name TEXT NOT NULL, applied {int} NOT NULL)")


class SchemaTooNew(RuntimeError):
    """The database was written by a newer LobbyTalks than this one."""


class MigrationFailed(sqlite3.DatabaseError):
    """A migration's statement failed; the transaction of them all was rolled back."""


@contextlib.contextmanager
def _named(what: str):
    """Say what of the upgrade failed (a migration, its checks, its commit), and that
    nothing of it was kept."""
    try:
        yield
    except (sqlite3.DatabaseError, RuntimeError) as exc:  # PostgreSQL's derive from the first
        if isinstance(exc, MigrationFailed):
            raise
        raise MigrationFailed(f"{what} failed: {exc}; the upgrade was rolled back and the "
                              f"database is as it was") from exc


def dialect_of(conn: Any) -> str:
    return getattr(conn, "dialect", "sqlite")


def write_begin(conn: Any) -> str:
    """The statement that opens a write transaction: SQLite takes its write lock at once."""
    return "BEGIN" if dialect_of(conn) == "postgresql" else "BEGIN IMMEDIATE"


def _bundled(dialect: str) -> list[tuple[int, str, str]]:
    found = []
    for entry in sql_dir(dialect, "migrations").iterdir():
        match = re.fullmatch(r"(\d{4})_([a-z0-9_]+)\.sql", entry.name)
        if match:
            found.append((int(match.group(1)), match.group(2), entry.read_text("utf-8")))
    return sorted(found)


@functools.lru_cache(maxsize=None)
def migrations(dialect: str = "sqlite") -> list[tuple[int, str, str]]:
    """All migrations of a dialect as (version, name, sql), in order.

    SQLite's list is the version history; every entry must have its PostgreSQL file of the
    same number and name. A PostgreSQL file written ahead of its SQLite twin (another branch
    adds that) is not applied until the twin exists.
    """
    history = _bundled("sqlite")
    if dialect == "sqlite":
        return history
    files = {(version, name): sql for version, name, sql in _bundled(dialect)}
    missing = [f"{v:04d}_{n}" for v, n, _ in history if (v, n) not in files]
    if missing:
        raise RuntimeError(f"no {dialect} migration for {', '.join(missing)}")
    return [(v, n, files[(v, n)]) for v, n, _ in history]


def latest_version() -> int:
    return migrations()[-1][0]


def schema_version(conn: Any) -> int:
    """The highest applied migration, 0 for an empty database."""
    if dialect_of(conn) == "postgresql":
        exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()[0]
    else:
        exists = conn.execute("SELECT 1 FROM sqlite_master "
                              "WHERE type = 'table' AND name = 'schema_migrations'").fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return row[0] or 0


def applied_version(conn: Any) -> int:
    """``schema_version`` in one statement, for a database known to have been migrated
    (the health check); raises ``DatabaseError`` where the version table is missing."""
    return conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] or 0


def pending_migrations(conn: Any) -> list[tuple[int, str, str]]:
    current = schema_version(conn)
    if current > latest_version():
        raise SchemaTooNew(
            f"the database is at schema version {current}, newer than this LobbyTalks "
            f"(knows up to {latest_version()}); run a newer release or restore a backup"
        )
    return [m for m in migrations(dialect_of(conn)) if m[0] > current]


def migrate(conn: Any, now: int) -> list[int]:
    """Apply every pending migration in one transaction, each with its record row."""
    if dialect_of(conn) == "postgresql":
        return _migrate_postgres(conn, now)
    todo = pending_migrations(conn)
    if not todo:
        return []
    _refuse_a_drifted_schema(conn)
    # A table rebuilt to change a CHECK (SQLite has no other way) is dropped first, and with
    # foreign keys on that would delete what references it; the check comes before COMMIT.
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute(write_begin(conn))
    try:
        conn.execute(_RECORD_TABLE.format(int="INTEGER"))
        for version, name, sql in todo:
            with _named(f"migration {version:04d}_{name}"):
                for statement in split_statements(sql):
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)",
                (version, name, now),
            )
        with _named(f"the upgrade to schema version {todo[-1][0]}"):
            _check_references_to_dropped(conn, "".join(sql for _, _, sql in todo))
            conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    finally:
        conn.execute("PRAGMA foreign_keys = ON")
    return [version for version, _, _ in todo]


@functools.lru_cache(maxsize=4)
def expected_schema(version: int) -> dict[tuple[str, str], str]:
    """The tables, indexes, views and triggers a SQLite database at ``version`` has, each with its
    statement as SQLite keeps it: the migrations up to there, applied to an empty database."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        for number, _, sql in migrations():
            if number > version:
                break
            for statement in split_statements(sql):
                conn.execute(statement)
        return schema_objects(conn)
    finally:
        conn.close()


def schema_objects(conn: Any) -> dict[tuple[str, str], str]:
    """(type, name) -> statement (``_canonical``), for what a SQLite database defines.
    SQLite's own objects (automatic indexes, statistics) follow from the rest, and the
    version table is where the version is read from, not part of a version: both are left
    out."""
    rows = conn.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"
                        " AND name NOT LIKE 'sqlite~_%' ESCAPE '~'"
                        " AND name <> 'schema_migrations'").fetchall()
    return {(row[0], row[1]): _canonical(row[2]) for row in rows}


# The pieces of a statement _canonical tells apart: string literals, quoted names, comments,
# and runs of anything else.
_SQL_PIECES = re.compile(r"""('(?:[^']|'')*')"""                      # a string literal
                         r"""|("(?:[^"]|"")*"|\[[^\]]*\]|`(?:[^`]|``)*`)"""  # a quoted name
                         r"""|(--[^\n]*|/\*.*?\*/)"""                     # a comment
                         r"""|([^'"`\[/-]+|[/-])""", re.DOTALL)
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPACE_BY_MARK = re.compile(r" ?([(),;=<>]) ?")


def _canonical(sql: str) -> str:
    """A statement as SQLite keeps it, read as SQLite reads it: the same table reached by
    two paths (a rebuild under another name, which SQLite quotes; an ALTER TABLE editing
    the text in place) reads alike. Comments go, runs of spaces are one (none beside a
    bracket or comma), names are read in any case and without needless quotes; string
    literals and names that need their quotes stay exactly as written."""
    out, code = [], []  # code: the pieces since the last literal, their spaces folded later
    for literal, quoted, comment, rest in _SQL_PIECES.findall(sql):
        name = _unquoted(quoted)
        if comment or rest or (quoted and _PLAIN_NAME.fullmatch(name)):
            # a name unquoted stands apart: ON[t] is ON t, not the one word "ont"
            code.append(" " if comment else rest.lower() if rest else f" {name.lower()} ")
        else:  # a literal, or a name that needs its quotes: as written, quoted one way
            out += [_folded(code), literal or '"' + name.replace('"', '""') + '"']
            code = []
    return "".join([*out, _folded(code)]).strip()


def _unquoted(quoted: str) -> str:
    """The name inside "x", [x] or `x` ("" for no name)."""
    if quoted[:1] in ("", "["):
        return quoted[1:-1]
    return quoted[1:-1].replace(quoted[0] * 2, quoted[0])


def _folded(code: list[str]) -> str:
    return _SPACE_BY_MARK.sub(r"\1", " ".join("".join(code).split()))


def schema_differences(found: dict, expected: dict) -> list[str]:
    """What a database (``schema_objects``) lacks or defines otherwise than a version does
    (``expected_schema``); objects of its own (an admin's index) are not differences."""
    return [f"{kind} {name}: missing" if (kind, name) not in found
            else f"{kind} {name}: defined differently"
            for (kind, name), sql in sorted(expected.items()) if found.get((kind, name)) != sql]


def _refuse_a_drifted_schema(conn: Any) -> None:
    """Migrations build on the tables their version defines. On a database whose tables say
    otherwise (a development build's migration edited after it ran, a change by hand) an
    upgrade stopped at a bare "no such column", or went through and left a write failing
    for good later (a take-down refused by an older CHECK)."""
    version = schema_version(conn)
    if not version:  # a new database: nothing to build on yet
        return
    differences = schema_differences(schema_objects(conn), expected_schema(version))
    if differences:
        shown = "; ".join(differences[:3]) + ("; …" if len(differences) > 3 else "")
        raise MigrationFailed(
            f"cannot upgrade: the database is not what schema version {version} defines "
            f"({shown}), as after a development build or a change by hand; `lobbytalks "
            f"check` lists every difference. The database is as it was")


def _check_references_to_dropped(conn: Any, sql: str) -> None:
    """Step 10 of SQLite's table rebuild: the tables pointing at a dropped (and rebuilt)
    one still find every row they name. Only those: checking every table of a large
    database would take a while on each start that migrates."""
    dropped = set(re.findall(r"^DROP TABLE (\w+)", sql, flags=re.MULTILINE))
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        targets = {row[2] for row in conn.execute(f'PRAGMA foreign_key_list("{table}")')}
        if targets & dropped and conn.execute(f'PRAGMA foreign_key_check("{table}")').fetchone():
            raise RuntimeError(f"a migration left rows of {table} pointing at nothing")


def _migrate_postgres(conn: Any, now: int) -> list[int]:
    if not pending_migrations(conn):
        return []
    conn.execute("BEGIN")
    try:
        applied = apply_postgres_migrations(conn, now)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return applied


def hold_migration_lock(conn: Any) -> None:
    """Until the caller's transaction ends, no other process migrates this PostgreSQL
    database (taken again by the same transaction, it is already held). The session's lock
    and statement limits are lifted for the transaction: another process may hold the lock
    for a whole migration, and a migration or a copy may run for minutes."""
    conn.execute("SET LOCAL lock_timeout = 0")
    conn.execute("SET LOCAL statement_timeout = 0")
    conn.execute("SELECT pg_advisory_xact_lock(:key)", {"key": PG_MIGRATE_LOCK})


def apply_postgres_migrations(conn: Any, now: int) -> list[int]:
    """The pending PostgreSQL migrations inside the caller's transaction (migrate-db fills
    the new tables in that same transaction, so a failed copy leaves no schema behind)."""
    hold_migration_lock(conn)
    todo = pending_migrations(conn)  # again: another process may have just migrated
    conn.execute(_RECORD_TABLE.format(int="BIGINT"))
    for version, name, sql in todo:
        with _named(f"migration {version:04d}_{name}"):
            conn.execute_script(sql)
        conn.execute("INSERT INTO schema_migrations (version, name, applied) "
                     "VALUES (:version, :name, :now)",
                     {"version": version, "name": name, "now": now})
    return [version for version, _, _ in todo]


def split_statements(sql: str) -> list[str]:
    """Split a SQLite migration into statements; executescript would commit our transaction."""
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
