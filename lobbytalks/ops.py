"""Operations on the database file for admins: backup, restore, pre-migration backup.

Checking a file is in ``dbfile``, the secret key beside a backup in ``backup_keys``; their
names are re-exported here, so ``ops.check`` and ``ops.export_key`` keep working.

Every copy goes through SQLite's online backup API, never a file copy: a plain copy of a
live WAL database can miss committed pages that still sit in the ``-wal`` file, or catch a
page half written. The source is read inside one read transaction held for the whole copy,
so the copy is the snapshot taken when it started (every transaction committed before
that is in it) and concurrent writers never make the copy restart. WAL readers do not block
writers, so the server keeps serving meanwhile.

Nothing here knows Flask; the CLI prints, this module raises ``OpsError`` with a message
meant for the admin.
"""
from __future__ import annotations

import logging
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import dbswap, serverlock
from .backup_keys import (KeyCheck, check_key, export_key, install_key, key_file_for,
                          refuse_a_key_of_no_backup)
from .db import Q, make_private_dir, pending_migrations, schema_version
from .db.errors import disk_full
from .dbfile import (SIDECARS, CheckReport, OpsError, check, inspect, list_sealed_key_ids,
                     open_existing, own_files, refuse_own_file, refuse_what_is_no_database,
                     sidecar, stamp)

__all__ = ["backup", "backup_before_migrate", "restore", "BackupResult", "RestoreResult",
           "check_backup_file", "STEP_PAGES", "Progress",
           # re-exported
           "CheckReport", "OpsError", "check", "inspect", "open_existing", "list_sealed_key_ids",
           "stamp", "KeyCheck", "check_key", "export_key", "install_key", "key_file_for",
           "own_files", "refuse_own_file", "refuse_a_key_of_no_backup"]

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]  # (pages copied, total pages)
STEP_PAGES = 1024  # 4 MiB per step with SQLite's default 4 KiB pages


# --- backup ----------------------------------------------------------------------------------

@dataclass
class BackupResult:
    path: Path
    pages: int
    size: int
    version: int
    list_sealed_key_ids: list[str] = field(default_factory=list)


def _copy(src: sqlite3.Connection, dest: Path, step_pages: int,
          progress: Progress | None) -> tuple[sqlite3.Connection, int]:
    """Copy ``src`` into the new file ``dest``; return the open copy and its page count.

    The copy ends in rollback-journal mode so it is one self-contained file.
    """
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # it holds password hashes
    os.close(fd)
    target = sqlite3.connect(str(dest), isolation_level=None)
    try:
        # The read transaction pins one snapshot for every step: sqlite3_backup_step reuses a
        # read transaction that is already open instead of starting (and restarting) its own.
        src.execute("BEGIN")
        try:
            src.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            src.backup(target, pages=step_pages,
                       progress=(lambda _s, left, total: progress(total - left, total))
                       if progress else None)
        finally:
            src.execute("COMMIT")
        target.execute("PRAGMA journal_mode = DELETE")
        pages = target.execute("PRAGMA page_count").fetchone()[0]
    except BaseException:
        target.close()
        raise
    return target, pages


def _verify(conn: sqlite3.Connection, path: Path) -> CheckReport:
    report = inspect(conn, path)
    if report.integrity != ["ok"]:
        raise OpsError(f"{path}: the copy fails integrity_check: {'; '.join(report.integrity)}")
    return report


def backup(db_path: str | Path, dest: str | Path, *, force: bool = False,
           key_path: Path | None = None, step_pages: int = STEP_PAGES,
           progress: Progress | None = None) -> BackupResult:
    """Consistent copy of ``db_path`` (served or not) into ``dest``, verified before it lands.

    Raises OpsError if ``dest`` exists and ``force`` is false, if it is one of the
    installation's own files (``key_path``: its secret key file), the source is missing or
    unreadable, or the copy fails its integrity check. ``dest`` appears only complete.
    """
    refuse_a_folder(dest)
    db_path, dest = Path(db_path), Path(dest)
    if dest.exists() and not force:
        raise OpsError(f"{dest} already exists; choose another name or pass --force")
    if dest.resolve() == db_path.resolve():
        raise OpsError("the backup file cannot be the database itself")
    refuse_own_file(dest, db_path, key_path)
    if force and dest.exists():
        _refuse_a_live_database(dest)
    make_private_dir(dest.parent)
    dbswap.sweep(dest, dbswap.PARTIAL)  # what killed runs left
    tmp = dbswap.temporary(dest, dbswap.PARTIAL)
    dbswap.discard(tmp)
    src = open_existing(db_path)
    try:
        copy, pages = _copy(src, tmp, step_pages, progress)
        try:
            report = _verify(copy, dest)
            key_ids = list_sealed_key_ids(copy)
        finally:
            copy.close()
        os.replace(tmp, dest)
    except sqlite3.DatabaseError as exc:
        if disk_full(exc):  # the copy's disk, not the database's
            raise OpsError(f"cannot write the backup {dest}: {exc}") from None
        raise OpsError(f"backup of {db_path} failed: {exc}") from None
    except OSError as exc:  # named by the file being written, a hidden name of ours
        raise OpsError(f"cannot write the backup {dest}: {exc.strerror or exc}") from None
    finally:
        src.close()
        dbswap.discard(tmp)
    return BackupResult(dest, pages, dest.stat().st_size, report.version, key_ids)


def refuse_a_folder(dest: str | Path) -> None:
    """:raise OpsError: ``dest`` names a folder, one there or one meant ("new/"), whatever
    --force says (found only once the copy was made, or a file named like the folder)."""
    if Path(dest).is_dir() or str(dest).endswith(("/", os.sep)) or not Path(dest).name:
        folder = Path(dest)
        raise OpsError(f"{dest} is a folder; name the backup file (such as "
                       f"{folder / 'lobbytalks-backup.db'})")


def _refuse_a_live_database(dest: Path) -> None:
    """:raise OpsError: ``dest`` is a database another process serves, one whose ``-wal``
    still holds writes, or a sidecar (``-wal``, lock...) of another database: replaced under
    them, it would be corrupted (SQLite would replay the old log into the new file),
    whatever --force says."""
    for suffix in SIDECARS:
        if dest.name.endswith(suffix) and dest.with_name(dest.name[:-len(suffix)]).exists():
            raise OpsError(f"refusing to overwrite {dest}: it is the {suffix} of the database "
                           f"beside it")
    refuse_what_is_no_database(dest)
    if serverlock.in_use(dest):
        raise OpsError(f"refusing to overwrite {dest}: a LobbyTalks process is serving it; "
                       f"stop it first, or restore into it with `lobbytalks restore`")
    if sidecar(dest, "-wal").exists():
        raise OpsError(f"refusing to overwrite {dest}: its -wal holds writes not yet in the "
                       f"file (a program has it open, or was stopped without closing it)")


def backup_before_migrate(conn: sqlite3.Connection, db_path: str | Path,
                          now: int) -> Path | None:
    """Before an upgrade migrates a non-empty database, copy it aside; return the copy's path.

    Raises db.SchemaTooNew for a database from a newer LobbyTalks, so that case is refused
    before anything is written.
    """
    pending = pending_migrations(conn)
    current = schema_version(conn)
    if not pending or current == 0:
        return None  # nothing to migrate, or a brand-new database with nothing to lose
    db_path = Path(db_path)
    dest = dbswap.unused_name(db_path, f"pre-migrate-v{current}-{stamp(now)}", ".bak")
    copy, _ = _copy(conn, dest, STEP_PAGES, None)
    try:
        _verify(copy, dest)
    finally:
        copy.close()
    log.warning("upgrading %s from schema version %d to %d; a copy of the old database is "
                "at %s", db_path, current, pending[-1][0], dest)
    return dest


# --- restore ---------------------------------------------------------------------------------

@dataclass
class RestoreResult:
    db_path: Path
    previous: Path | None  # where the replaced database was kept
    version: int
    latest: int
    sessions_ended: int
    list_sealed_key_ids: list[str]


def check_backup_file(path: str | Path) -> CheckReport:
    """Refuse a file that fails integrity or is from a newer LobbyTalks; older is fine."""
    report = check(path)
    if report.integrity != ["ok"]:
        raise OpsError(f"{path} fails integrity_check ({'; '.join(report.integrity[:5])}); "
                       f"not restoring it")
    if report.too_new:
        raise OpsError(f"{path} is at schema version {report.version}, newer than this "
                       f"LobbyTalks (knows up to {report.latest}); restore it with a newer "
                       f"release")
    if report.version == 0:
        raise OpsError(f"{path} holds no LobbyTalks schema; is it the right file?")
    if report.schema_problems and report.version < report.latest:
        raise OpsError(f"{path} is not what schema version {report.version} defines "
                       f"({'; '.join(report.schema_problems[:3])}), so the next start could "
                       f"not upgrade it; `lobbytalks check` on the file lists every difference")
    return report


def restore(db_path: str | Path, source: str | Path, *, now: int,
            step_pages: int = STEP_PAGES, progress: Progress | None = None) -> RestoreResult:
    """Replace ``db_path`` with the backup ``source``; the old file is kept beside it.

    Holds the serving lock throughout, so it refuses a database that is being served and no
    server can start halfway. The replaced database (its ``-wal``, which may hold committed
    data, folded in first) stays as ``<db>.before-restore-<time>``, and the copy takes its
    place in one rename (``dbswap.replace_keeping``): killed at any moment, the folder holds
    one database or the other. Its ``-shm`` is removed, so the restored file starts without
    stale sidecars. Web sessions of the restored database are ended before it is put in
    place.
    """
    # Through a symbolic link, the file it leads to (the link itself was set aside and a
    # new file put in its place, which the server, naming the real file, never read).
    db_path, source = Path(os.path.realpath(db_path)), Path(source)
    if source.resolve() == db_path.resolve():
        raise OpsError("the backup file is the database itself")
    if db_path.is_dir():  # it would be set aside and a file put in its place
        raise OpsError(f"{db_path} is a folder, not a database file: name the file "
                       f"(LOBBYTALKS_DB, --db) or the data folder (--data-dir)")
    report = check_backup_file(source)
    make_private_dir(db_path.parent)
    try:
        lock = serverlock.acquire(db_path)
    except serverlock.DatabaseInUse as exc:
        raise OpsError(f"refusing to restore: {exc}") from None
    dbswap.sweep(db_path, dbswap.RESTORING)  # what killed runs left
    tmp = dbswap.temporary(db_path, dbswap.RESTORING)
    dbswap.discard(tmp)
    try:
        src = open_existing(source)
        try:
            copy, _ = _copy(src, tmp, step_pages, progress)
        finally:
            src.close()
        try:
            _verify(copy, tmp)
            ended = copy.execute(Q.delete_all_sessions).rowcount
            key_ids = list_sealed_key_ids(copy)
        finally:
            copy.close()
        previous = dbswap.replace_keeping(db_path, tmp, f"before-restore-{stamp(now)}")
    except sqlite3.DatabaseError as exc:
        raise OpsError(f"restore from {source} failed: {exc}; {db_path} was not changed") \
            from None
    finally:
        dbswap.discard(tmp)
        serverlock.release(lock)
    return RestoreResult(db_path, previous, report.version, report.latest, ended, key_ids)

