"""Move a whole SQLite community into an empty PostgreSQL database, and prove the copy.

Every table is read inside one SQLite read transaction, so the copy is one consistent
snapshot even if a server is still writing (stop it first anyway: what it writes after the
snapshot would not be moved). The target is migrated to the same schema version, filled
with COPY inside one PostgreSQL transaction, then read back inside that same transaction:
each table's row count and content checksum must equal the source's before it commits. A
failed check rolls everything back, so the target is either a verified copy or still empty.

The checksum is independent of row order and of either engine's collation: the sum (mod
2**256) of a SHA-256 per row over a typed rendering of its values.

Nothing here knows Flask; the CLI prints the report, errors are ``MigrationError``.
"""
from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from . import db
from .db.postgres import connect_direct

CHECKSUM_MODULUS = 1 << 256
# Tables the engines keep for themselves, or the application rebuilds: never copied.
_NOT_COPIED = {"schema_migrations"}


class MigrationError(RuntimeError):
    """The migration refused or its verification failed; nothing was kept."""


@dataclass(frozen=True)
class TableReport:
    name: str
    rows: int
    checksum: str


def _typed(value: Any) -> bytes:
    if value is None:
        return b"n"
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        return b"i" + str(value).encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return b"b" + bytes(value).hex().encode()
    if isinstance(value, float):
        return b"f" + repr(value).encode()
    return b"s" + str(value).encode("utf-8", "surrogatepass")


def checksum(rows: Iterable[Iterable[Any]]) -> tuple[int, str]:
    """(row count, checksum) of rows whose values are in a fixed column order."""
    count, total = 0, 0
    for row in rows:
        digest = hashlib.sha256(b"\x1f".join(_typed(v) for v in row)).digest()
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


def _columns(src: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in src.execute(f'PRAGMA table_info("{table}")')]


def _target_columns(pg, table: str) -> list[str]:
    rows = pg.execute(
        "SELECT column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = %s"
        " AND is_generated = 'NEVER' ORDER BY ordinal_position", (table,)).fetchall()
    return [r[0] for r in rows]


def _copy_table(src, pg, table: str, columns: list[str]) -> None:
    names = ", ".join(f'"{c}"' for c in columns)
    with pg.cursor() as cur, cur.copy(f'COPY "{table}" ({names}) FROM STDIN') as copy:
        for row in src.execute(f'SELECT {names} FROM "{table}"'):
            copy.write_row(tuple(row))


def _reset_identities(pg) -> None:
    """COPY wrote explicit ids; move each identity sequence past the highest one."""
    for table, column in pg.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND is_identity = 'YES'").fetchall():
        pg.execute(f'SELECT setval(pg_get_serial_sequence(%s, %s),'
                   f' COALESCE((SELECT MAX("{column}") FROM "{table}"), 0) + 1, false)',
                   (f'"{table}"', column))


def _ensure_empty(pg, tables: list[str]) -> None:
    for table in tables:
        if pg.execute(f'SELECT EXISTS (SELECT 1 FROM "{table}")').fetchone()[0]:
            raise MigrationError(
                f"the target database is not empty (table {table} has rows); "
                "migrate-db only fills an empty database")


def migrate(source: Path, target_url: str, now: int,
            progress: Callable[[str, int], None] | None = None) -> list[TableReport]:
    """Copy ``source`` into the PostgreSQL database at ``target_url`` and verify it."""
    src = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        version = db.schema_version(src)
        if version != db.latest_version():
            raise MigrationError(
                f"{source} is at schema version {version}, this LobbyTalks at "
                f"{db.latest_version()}: start the server once on it (or run `lobbytalks check`) "
                "so it is migrated first")
        src.execute("BEGIN")  # one snapshot for every table read below
        return _copy_all(src, target_url, now, progress)
    finally:
        src.close()


def _copy_all(src, target_url: str, now: int, progress) -> list[TableReport]:
    from .db.postgres import migrate_postgres
    migrate_postgres(target_url, now)
    tables = source_tables(src)
    with connect_direct(target_url) as pg:
        with pg.transaction():
            _ensure_empty(pg, tables)
            for table in tables:
                columns = _columns(src, table)
                missing = set(columns) - set(_target_columns(pg, table))
                if missing:
                    raise MigrationError(f"table {table}: the target has no column(s) {sorted(missing)}")
                _copy_table(src, pg, table, columns)
                if progress:
                    progress(table, 0)
            _reset_identities(pg)
            reports = _verify(src, pg, tables)
    return reports


def _verify(src, pg, tables: list[str]) -> list[TableReport]:
    reports = []
    for table in tables:
        columns = ", ".join(f'"{c}"' for c in _columns(src, table))
        left = checksum(src.execute(f'SELECT {columns} FROM "{table}"'))
        right = checksum(pg.execute(f'SELECT {columns} FROM "{table}"'))
        if left != right:
            raise MigrationError(
                f"table {table}: the copy differs from the source "
                f"({left[0]} rows {left[1][:12]}… vs {right[0]} rows {right[1][:12]}…); nothing was kept")
        reports.append(TableReport(table, left[0], left[1]))
    return reports
