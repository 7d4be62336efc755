"""The files a backup or a restore writes beside a database: copies in the making, and the
database a restore replaces.

A copy is written under a hidden name holding the writer's process id
(``.<name>.<pid>.partial`` beside a backup, ``.<db>.<pid>.restoring`` beside the database)
and renamed into place only once complete. A run killed outright (``kill -9``, the OOM
killer) cannot remove its copy; the next run in that folder removes those whose process is
gone (``sweep``), so that killed runs do not fill the disk with database-sized hidden files.

A restore replaces the database with one rename: the old file is given a second name first
(a hard link, after folding its ``-wal`` into it), so that a restore killed at any moment
leaves the old database or the new one in place, never none (a server started then would
create an empty database beside the old one and serve that).
"""
from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from .dbfile import OpsError, open_existing, sidecar

PARTIAL = "partial"      # a backup being written
RESTORING = "restoring"  # a restore's copy, before it replaces the database


def temporary(path: Path, kind: str) -> Path:
    """The hidden name this process writes ``path`` under before renaming it into place."""
    return path.with_name(f".{path.name}.{os.getpid()}.{kind}")


def discard(path: Path) -> None:
    """Remove ``path`` and whatever SQLite left beside it."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    _drop_sidecars(path)


def sweep(path: Path, kind: str) -> list[Path]:
    """Remove the copies of ``path`` that runs no longer alive left (``temporary``'s names
    with another process id); return them. A copy of a process still running is its own."""
    removed = []
    prefix, suffix = f".{path.name}.", f".{kind}"
    with contextlib.suppress(OSError):
        for entry in path.parent.iterdir():
            middle = entry.name[len(prefix):-len(suffix)]
            if not (entry.name.startswith(prefix) and entry.name.endswith(suffix)
                    and middle.isdigit()) or _alive(int(middle)):
                continue
            discard(entry)
            removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's process: alive
        return True
    return True


def unused_name(db_path: Path, label: str, suffix: str = "") -> Path:
    """``<db>.<label><suffix>``, or with ``-2``, ``-3``... if a second run in the same second
    already took that name."""
    candidate, n = db_path.with_name(f"{db_path.name}.{label}{suffix}"), 1
    while candidate.exists():
        n += 1
        candidate = db_path.with_name(f"{db_path.name}.{label}-{n}{suffix}")
    return candidate


def replace_keeping(db_path: Path, new: Path, label: str) -> Path | None:
    """Put ``new`` in the place of ``db_path``; the replaced database stays as
    ``<db>.<label>`` (returned; None if there was none). Whatever SQLite kept beside the old
    file goes (a ``-wal`` left there would be replayed into the new one), with any orphan
    sidecars when there was no database."""
    kept = None
    if db_path.exists():
        kept = unused_name(db_path, label)
        if not (_fold_journal(db_path) and _linked(db_path, kept)):
            # Not foldable (a damaged file) or no hard links here: moved aside with its -wal.
            os.replace(db_path, kept)
            with contextlib.suppress(FileNotFoundError):
                os.replace(sidecar(db_path, "-wal"), sidecar(kept, "-wal"))
    _drop_sidecars(db_path)  # once folded, they hold nothing
    os.replace(new, db_path)
    return kept


def _fold_journal(db_path: Path) -> bool:
    """Copy what the ``-wal`` holds into the database file and empty it (a hot rollback
    journal is rolled back on opening); True once the file alone holds everything."""
    try:
        conn = open_existing(db_path)
    except OpsError:
        return False
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return busy == 0
    except sqlite3.Error:  # damaged, or opened read-only
        return False
    finally:
        conn.close()


def _linked(db_path: Path, kept: Path) -> bool:
    try:
        os.link(db_path, kept)
    except OSError:
        return False
    return True


def _drop_sidecars(db_path: Path) -> None:
    for stale in (sidecar(db_path, "-wal"), sidecar(db_path, "-shm"),
                  sidecar(db_path, "-journal")):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
