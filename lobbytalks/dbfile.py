"""A database file as the admin commands see it: opened as it is, checked, and what seals it.

``check`` reports integrity, foreign keys and the schema version; ``list_sealed_key_ids`` says
which keys the file's private context needs; ``own_files`` are the files an installation
keeps beside it, which no backup may overwrite. Used by ``ops`` (backup, restore) and
``backup_keys``; ``OpsError`` is the one failure all of them raise.
"""
from __future__ import annotations

import os
import sqlite3
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from .db import BUSY_TIMEOUT_MS, Q, latest_version, schema_version
from .db.schema import expected_schema, schema_differences, schema_objects


class OpsError(RuntimeError):
    """An operation refused or failed; the message tells the admin what to do."""


def stamp(now: int) -> str:
    """A UTC timestamp for file names, sortable: 20261101T120000Z."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))


def open_existing(path: str | Path, only_reading: bool = False) -> sqlite3.Connection:
    """Open a database that must already exist, without changing its journal mode.

    ``db.connect`` would create a missing file and switch a backup to WAL mode; opening with
    ``mode=rw`` does neither, and closing it leaves no ``-wal``/``-shm`` behind (a read-only
    handle on a WAL file would). A file we may not write falls back to read-only; for
    ``only_reading`` (a check), one we may not write with no ``-wal`` beside it, that is one
    no process has open, is read as unchanging: SQLite then needs no ``-shm``, which it
    could not create in a folder we may not write, and leaves none behind in one we may.
    """
    path = Path(path)
    if not path.is_file():
        raise OpsError(f"{path}: a folder, not a database file" if path.is_dir()
                       else f"{path}: no such database file")
    uri = path.resolve().as_uri()
    writable = os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    try:
        if only_reading and not writable and not Path(f"{path}-wal").exists():
            conn = sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, isolation_level=None)
        else:
            try:  # a file the system will not let us write is opened read-only
                conn = sqlite3.connect(uri + "?mode=rw", uri=True, isolation_level=None)
            except sqlite3.OperationalError:
                conn = sqlite3.connect(uri + "?mode=ro", uri=True, isolation_level=None)
    except sqlite3.OperationalError as exc:  # not even readable: one line, not a traceback
        raise OpsError(f"cannot read the database {path} ({exc}): the user running "
                       f"lobbytalks (uid {os.getuid()}) needs read access to it") from None
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn


# --- check -----------------------------------------------------------------------------------

@dataclass
class CheckReport:
    path: Path
    integrity: list[str]
    foreign_key_problems: list[str]
    version: int
    latest: int
    # Objects missing or defined otherwise than the migrations up to ``version`` define
    # them (a failure), and objects none of them defines (an admin's own index: reported).
    schema_problems: list[str] = field(default_factory=list)
    unknown_objects: list[str] = field(default_factory=list)

    @property
    def too_new(self) -> bool:
        return self.version > self.latest

    @property
    def ok(self) -> bool:
        return (self.integrity == ["ok"] and not self.foreign_key_problems and not self.too_new
                and self.version > 0 and not self.schema_problems)

    def lines(self) -> list[str]:
        state = ("up to date" if self.version == self.latest else
                 "NO LobbyTalks schema: is it the right file?" if self.version == 0 else
                 "NEWER than this LobbyTalks: run a newer release" if self.too_new else
                 "older: migrates forward at the next start")
        out = [f"database: {self.path}",
               f"schema version: {self.version} (this LobbyTalks knows up to {self.latest}; "
               f"{state})",
               "integrity_check: " + ("ok" if self.integrity == ["ok"] else "FAILED")]
        if self.integrity != ["ok"]:
            out += [f"  {line}" for line in self.integrity[:20]]
            out += [f"  ... {len(self.integrity) - 20} more"] if len(self.integrity) > 20 else []
        out.append("foreign_key_check: " + ("ok" if not self.foreign_key_problems else
                                            f"{len(self.foreign_key_problems)} problem(s)"))
        out += [f"  {line}" for line in self.foreign_key_problems[:20]]
        if 0 < self.version <= self.latest:
            out.append(f"schema: as version {self.version} defines it" if not self.schema_problems
                       else f"schema: DIFFERS from what version {self.version} defines")
            out += [f"  {line}" for line in self.schema_problems + self.unknown_objects]
        out.append("result: " + ("ok" if self.ok else "PROBLEMS FOUND"))
        return out


def inspect(conn: sqlite3.Connection, path: Path) -> CheckReport:
    """Integrity, foreign keys and schema version of an open database."""
    try:
        integrity = [line for row in conn.execute("PRAGMA integrity_check")
                     for line in row[0].splitlines()]
        problems = [f"{row[0]} rowid {row[1]} -> {row[2]} (constraint {row[3]})"
                    for row in conn.execute("PRAGMA foreign_key_check")]
        version = schema_version(conn)
        report = CheckReport(Path(path), integrity, problems, version, latest_version())
        if 0 < version <= report.latest:
            _compare_schema(report, schema_objects(conn), expected_schema(version))
    except sqlite3.DatabaseError as exc:
        raise OpsError(f"{path}: not a readable SQLite database ({exc})") from None
    return report


def _compare_schema(report: CheckReport, found: dict, expected: dict) -> None:
    """A database whose version says one thing and whose tables another (a development
    build's migration edited after it ran, a hand-made change) fails later, at some write."""
    report.schema_problems = schema_differences(found, expected)
    report.unknown_objects = [f"{kind} {name}: not part of LobbyTalks's schema (left alone)"
                              for kind, name in sorted(set(found) - set(expected))]


def check(path: str | Path) -> CheckReport:
    conn = open_existing(path, only_reading=True)
    try:
        return inspect(conn, Path(path))
    finally:
        conn.close()


def list_sealed_key_ids(conn: sqlite3.Connection) -> list[str]:
    """Key ids that seal private context in this database (empty: no key is needed)."""
    try:
        rows = conn.execute(Q.list_sealed_key_ids).fetchall()
    except sqlite3.OperationalError:  # no such table: an empty or foreign database
        return []
    return [row[0] for row in rows]


SIDECARS = ("-wal", "-shm", "-journal", ".lock")  # the files SQLite and the lock keep beside one


def sidecar(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def own_files(db_path: Path, key_path: Path | None) -> tuple[Path, ...]:
    """The files an installation keeps: the database, its sidecars, the serving lock and
    the secret key file."""
    sidecars = (sidecar(db_path, suffix) for suffix in SIDECARS)
    return (db_path, *sidecars, *((key_path,) if key_path else ()))


SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database


def _head(path: Path) -> bytes:
    """The first bytes of ``path``, as many as a SQLite header (fewer for a short file)."""
    with open(path, "rb") as existing:
        return existing.read(len(SQLITE_HEADER))


def holds_a_database(path: Path) -> bool:
    """Whether ``path`` is a SQLite database file (by its header; False if unreadable)."""
    try:
        return _head(path) == SQLITE_HEADER
    except OSError:
        return False


def refuse_what_is_no_file(dest: Path) -> None:
    """:raise OpsError: ``dest`` exists and is no regular file (a device, a pipe, a
    socket; through a link too), which --force never replaces: a device read as an empty
    file and was swapped for the backup, and a pipe's read waited for ever."""
    try:
        regular = stat.S_ISREG(os.stat(dest).st_mode)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OpsError(f"cannot read {dest}: {exc.strerror or exc}") from None
    if not regular:
        raise OpsError(f"refusing to overwrite {dest}: it is not a regular file (--force "
                       f"replaces an older backup, nothing else)")


def refuse_what_is_no_database(dest: Path) -> None:
    """:raise OpsError: ``dest`` holds something else than a SQLite database: --force
    replaces an older backup, never a key file (``LOBBYTALKS_SECRET_KEY_FILE`` names it
    anywhere), a setting's file or a document."""
    refuse_what_is_no_file(dest)
    try:
        head = _head(dest)
    except OSError as exc:
        raise OpsError(f"cannot read {dest}: {exc.strerror or exc}") from None
    if head and head != SQLITE_HEADER:
        raise OpsError(f"refusing to overwrite {dest}: it is not a SQLite database (--force "
                       f"replaces an older backup, nothing else)")


def refuse_own_file(dest: Path, db_path: Path, key_path: Path | None) -> None:
    """:raise OpsError: ``dest`` is one of ``own_files``, which no --force overwrites."""
    if dest.resolve() in {path.resolve() for path in own_files(Path(db_path), key_path)}:
        raise OpsError(f"{dest} is one of this installation's own files (the database, its "
                       f"-wal/-shm, its lock or the secret key); choose another name")
