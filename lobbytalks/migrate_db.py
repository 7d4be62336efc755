"""Move a whole SQLite community into an empty PostgreSQL database, and prove the copy.

Every table is read inside one SQLite read transaction, so the copy is one consistent
snapshot even if a server is still writing (stop it first anyway: what it writes after the
snapshot would not be moved). Inside one PostgreSQL transaction the target gets the schema,
every table by COPY, and is then read back: each table's row count and content checksum
must equal the source's before it commits. A failed check rolls everything back, schema
included, so the target is either a verified copy or still empty.

The checksum is independent of row order and of either engine's collation: the sum (mod
2**256) of a SHA-256 per row over a typed rendering of its values. Both sides give the
same Python types (the PostgreSQL rows come through the seam, which returns ints, not
bools or Decimals).

SQLite keeps ``topics.rowid`` and ``sessions.rowid`` implicit; on PostgreSQL they are
identity columns. They are copied as they are (the search index and the oldest-session rule
key on them) and every identity sequence is then moved past the highest copied value. The
search index itself is not copied (FTS5 and tsvector share nothing): it is rebuilt from the
copied topics in the same transaction.

Nothing here knows Flask; the CLI prints the report, errors are ``MigrationError``.
"""
from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from . import db
from .db.postgres import PostgresDatabase
from .db.schema import apply_postgres_migrations, hold_migration_lock
from .services import search

CHECKSUM_MODULUS = 1 << 256
# Kept by each engine for itself (migrations record their own version) or rebuilt on the
# target (the search index): never copied.
_NOT_COPIED = {"schema_migrations"}
# SQLite's implicit rowid, a real column on PostgreSQL for the tables whose rowid is read.
_IMPLICIT_ROWID = "rowid"


class MigrationError(RuntimeError):
    """The migration refused or its verification failed; nothing was kept."""


@dataclass(frozen=True)
class TableReport:
    name: str
    rows: int
    checksum: str


def checksum(rows: Iterable[Iterable[Any]]) -> tuple[int, str]:
    """(row count, checksum) of rows whose values are in a fixed column order.

    A row's ``repr`` is a typed rendering (``1``, ``'1'``, ``b'1'``, ``1.0`` and ``None``
    all differ) made in C: the per-value Python rendering this replaced took half the run.
    """
    count, total = 0, 0
    for row in rows:
        digest = hashlib.sha256(repr(tuple(row)).encode("utf-8", "surrogatepass")).digest()
        total = (total + int.from_bytes(digest, "big")) % CHECKSUM_MODULUS
        count += 1
    return count, f"{total:064x}"


def source_tables(src: sqlite3.Connection) -> list[str]:
    """The SQLite file's tables in an order where every table follows those it references."""
    names = [r[0] for r in src.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        " AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'topic_search_%' ORDER BY name")]
    names = [n for n in names if n not in _NOT_COPIED]
    refs = {n: {r[2] for r in src.execute(f'PRAGMA foreign_key_list("{n}")')} - {n} for n in names}
    ordered: list[str] = []
    while len(ordered) < len(names):
        ready = [n for n in names if n not in ordered and refs[n] <= set(ordered)]
        if not ready:
            raise MigrationError("the tables reference each other in a cycle; cannot order them")
        ordered.extend(ready)
    return ordered


def _target_columns(pg: Any, table: str) -> list[str]:
    rows = pg.execute(
        "SELECT column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = :table"
        " AND is_generated = 'NEVER' ORDER BY ordinal_position", {"table": table}).fetchall()
    return [r[0] for r in rows]


def copied_columns(src: sqlite3.Connection, pg: Any, table: str) -> list[str]:
    """The source's columns, plus its implicit rowid where the target has it as a column."""
    columns = [r[1] for r in src.execute(f'PRAGMA table_info("{table}")')]
    target = _target_columns(pg, table)
    missing = set(columns) - set(target)
    if missing:
        raise MigrationError(f"table {table}: the target has no column(s) {sorted(missing)}")
    if _IMPLICIT_ROWID in target and _IMPLICIT_ROWID not in columns:
        columns.append(_IMPLICIT_ROWID)
    return columns


def _quoted(columns: list[str]) -> str:
    return ", ".join(f'"{c}"' for c in columns)


def _copy_table(src: sqlite3.Connection, pg: Any, table: str, columns: list[str]) -> None:
    import psycopg

    names = _quoted(columns)
    # COPY writes the given values into identity columns too (GENERATED ALWAYS included).
    try:
        with pg.raw.cursor() as cur, cur.copy(f'COPY "{table}" ({names}) FROM STDIN') as copy:
            for row in src.execute(f'SELECT {names} FROM "{table}"'):
                copy.write_row(tuple(row))
    except psycopg.Error as exc:
        raise MigrationError(f"table {table}: PostgreSQL refused a row: "
                             f"{str(exc).splitlines()[0]}; nothing was kept") from None


def _reset_identities(pg: Any) -> None:
    """COPY wrote explicit ids; move each identity sequence past the highest one."""
    for table, column in pg.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND is_identity = 'YES'").fetchall():
        pg.execute(f'SELECT setval(pg_get_serial_sequence(:table, :column),'
                   f' COALESCE((SELECT MAX("{column}") FROM "{table}"), 0) + 1, false)',
                   {"table": f'"{table}"', "column": column})


def _ensure_empty(pg: Any) -> None:
    """Nothing of ours or anyone else's may be in the target schema: a half-used database
    is never merged into."""
    tables = [r[0] for r in pg.execute(
        "SELECT table_name FROM information_schema.tables"
        " WHERE table_schema = current_schema() ORDER BY table_name").fetchall()]
    if tables:
        shown = ", ".join(tables[:5]) + (", …" if len(tables) > 5 else "")
        raise MigrationError(
            f"the target database is not empty (it has tables: {shown}); migrate-db only "
            "fills a new, empty database (createdb NAME)")


def _clear_seeded_rows(pg: Any, tables: list[str]) -> None:
    """The migrations seed a few rows (the lobby); the source holds them too, as copied."""
    pg.execute(f"TRUNCATE {_quoted(tables)} CASCADE")


def open_source(source: Path) -> sqlite3.Connection:
    """The SQLite file, read-only, at this LobbyTalks's schema version."""
    if not source.is_file():
        raise MigrationError(f"no database at {source} (nothing to migrate)")
    src = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        version = db.schema_version(src)
    except sqlite3.DatabaseError as exc:
        src.close()
        raise MigrationError(f"{source} is not a readable LobbyTalks database: {exc}") from None
    if version != db.latest_version():
        src.close()
        raise MigrationError(
            f"{source} is at schema version {version}, this LobbyTalks at "
            f"{db.latest_version()}: run `lobbytalks init` (or start the server once) on it "
            "so that it is migrated first")
    return src


def migrate(source: Path, target_url: str, now: int,
            progress: Callable[[str], None] | None = None) -> list[TableReport]:
    """Copy ``source`` into the PostgreSQL database at ``target_url`` and verify it."""
    src = open_source(source)
    try:
        src.execute("BEGIN")  # one snapshot for every table read below
        target = PostgresDatabase(target_url, max_size=1)
        try:
            with target.transaction() as pg:  # schema, rows and search index: all or nothing
                # Empty once no one else may migrate: a server starting, or a second
                # migrate-db, would otherwise fill it between the look and the copy.
                hold_migration_lock(pg)
                _ensure_empty(pg)
                apply_postgres_migrations(pg, now)
                return _copy_all(src, pg, progress)
        finally:
            target.close()
    finally:
        src.close()


def _copy_all(src: sqlite3.Connection, pg: Any, progress) -> list[TableReport]:
    tables = source_tables(src)
    columns = {table: copied_columns(src, pg, table) for table in tables}
    _clear_seeded_rows(pg, tables)
    for table in tables:
        _copy_table(src, pg, table, columns[table])
        if progress:
            progress(table)
    _reset_identities(pg)
    search.index_missing(pg)
    return _verify(src, pg, columns)


def _verify(src: sqlite3.Connection, pg: Any, columns: dict[str, list[str]]) -> list[TableReport]:
    reports = []
    for table, names in columns.items():
        select = f'SELECT {_quoted(names)} FROM "{table}"'
        left = checksum(src.execute(select))
        right = checksum(pg.execute(select))
        if left != right:
            raise MigrationError(
                f"table {table}: the copy differs from the source "
                f"({left[0]} rows {left[1][:12]}… vs {right[0]} rows {right[1][:12]}…); "
                "nothing was kept")
        reports.append(TableReport(table, left[0], left[1]))
    return reports
