"""The file commands' PostgreSQL side: what ``check`` can verify over a connection, and the
``pg_dump``/``pg_restore`` commands an operator runs instead of ``backup``/``restore``.

SQLite's online backup and file swap have no PostgreSQL equivalent we should re-implement:
its own tools take a consistent dump while the servers run, and restore into a database the
operator controls. The secret key is never in the database, on either backend.
"""
from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from .db import latest_version, schema_version

# Each foreign key with its columns, so that rows written while triggers were off
# (session_replication_role = replica, a hand-made restore) are found.
_FOREIGN_KEYS = """
SELECT c.conname AS name, c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent,
       ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k (num, pos)
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.num
             ORDER BY k.pos) AS child_columns,
       ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k (num, pos)
             JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.num
             ORDER BY k.pos) AS parent_columns
FROM pg_constraint c
WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
ORDER BY c.conname
"""


@dataclass
class PgCheckReport:
    shown: str
    version: int
    latest: int
    tables: dict[str, int] = field(default_factory=dict)
    foreign_key_problems: list[str] = field(default_factory=list)
    unvalidated: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (self.version == self.latest and not self.foreign_key_problems
                and not self.unvalidated)

    def lines(self) -> list[str]:
        state = ("up to date" if self.version == self.latest else
                 "NEWER than this LobbyTalks: run a newer release" if self.version > self.latest
                 else "older: migrates forward at the next start")
        out = [f"database: {self.shown}",
               f"schema version: {self.version} (this LobbyTalks knows up to {self.latest}; "
               f"{state})",
               f"tables read: {len(self.tables)}, {sum(self.tables.values())} rows"]
        out.append("foreign keys: " + ("ok" if not self.foreign_key_problems else
                                       f"{len(self.foreign_key_problems)} problem(s)"))
        out += [f"  {line}" for line in self.foreign_key_problems[:20]]
        out.append("constraints: " + ("all validated" if not self.unvalidated else
                                      "NOT VALIDATED: " + ", ".join(self.unvalidated)))
        out.append("pages and indexes are PostgreSQL's to check: pg_amcheck --heapallindexed "
                   "--dbname=URL")
        out.append("result: " + ("ok" if self.ok else "PROBLEMS FOUND"))
        return out


def check(conn: Any, shown: str) -> PgCheckReport:
    """Schema version, every table read whole, every foreign key's orphans, and constraints
    left NOT VALID."""
    report = PgCheckReport(shown, schema_version(conn), latest_version())
    for (table,) in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name").fetchall():
        report.tables[table] = conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
    for fk in conn.execute(_FOREIGN_KEYS).fetchall():
        joined = " AND ".join(f'p."{p}" = c."{c}"'
                              for c, p in zip(fk["child_columns"], fk["parent_columns"]))
        present = " AND ".join(f'c."{c}" IS NOT NULL' for c in fk["child_columns"])
        orphans = conn.execute(
            f'SELECT COUNT(*) FROM {fk["child"]} c WHERE {present} AND NOT EXISTS '
            f'(SELECT 1 FROM {fk["parent"]} p WHERE {joined})').fetchone()[0]
        if orphans:
            report.foreign_key_problems.append(
                f"{fk['child']}: {orphans} row(s) point to no {fk['parent']} "
                f"(constraint {fk['name']})")
    report.unvalidated = [r[0] for r in conn.execute(
        "SELECT conname FROM pg_constraint WHERE NOT convalidated"
        " AND connamespace = current_schema()::regnamespace ORDER BY conname").fetchall()]
    return report


# A server stopped a moment ago has closed its connections, but PostgreSQL ends their
# backends a little later: they are waited for this long before counting as in use.
SESSIONS_ENDING_SECONDS = 5.0


def other_sessions(conn: Any, *, wait: float = SESSIONS_ENDING_SECONDS) -> int:
    """Sessions on this database besides ours (a server holds its pool open while it runs),
    once those still ending have had ``wait`` seconds to go."""
    deadline = time.monotonic() + wait
    while True:
        conn.execute("SELECT pg_stat_clear_snapshot()")  # (read afresh inside a transaction)
        others = conn.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = "
                              "current_database() AND pid <> pg_backend_pid()").fetchone()[0]
        if not others or time.monotonic() >= deadline:
            return others
        time.sleep(0.2)


def url_in_shell(env: Mapping[str, str]) -> str:
    """How a shell line names the configured database URL: its variable, or the contents of
    its file where only ``LOBBYTALKS_DATABASE_URL_FILE`` is set (as the compose file does)."""
    if not env.get("LOBBYTALKS_DATABASE_URL") and env.get("LOBBYTALKS_DATABASE_URL_FILE"):
        return '"$(cat "$LOBBYTALKS_DATABASE_URL_FILE")"'
    return '"$LOBBYTALKS_DATABASE_URL"'


# The dump holds password hashes, session digests and e-mail addresses: owner-only, as
# `backup` writes its files, whatever the shell's umask (in a subshell, which keeps it).
DUMP_PREFIX = "(umask 077 && "


def backup_instead(shown: str, dest: str, key_source: str, url: str) -> str:
    """Why ``backup`` does nothing on PostgreSQL, and the exact command that does it
    (``url``: ``url_in_shell``)."""
    return (f"the data is in PostgreSQL ({shown}), not in a file this command can copy. "
            f"Take a consistent dump while the servers run with:\n"
            f"  {DUMP_PREFIX}pg_dump --format=custom --file={shlex.quote(dest)} {url})\n"
            f"The secret key is not in the dump: keep a copy of {key_source} with it "
            f"(private question context opens only with that key).")


def restore_instead(shown: str, source: str, key_source: str) -> str:
    """Why ``restore`` does nothing on PostgreSQL, and the exact commands that do it."""
    return (f"the data is in PostgreSQL ({shown}). Stop every LobbyTalks server on it, then "
            f"restore the dump into a new, empty database and point LOBBYTALKS_DATABASE_URL "
            f"at it:\n"
            f"  createdb NEWNAME\n"
            f"  pg_restore --no-owner --exit-on-error --single-transaction "
            f"--dbname=postgresql://USER@HOST/NEWNAME {source}\n"
            f"Put the key that was used with the dump back in {key_source}; web sessions "
            f"in the dump stay valid.")
