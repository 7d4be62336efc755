"""The database file: backup, restore, check."""
from __future__ import annotations

import argparse
import os
import sys

from .registry import command, fail, open_postgres, settings_from


class ProgressBar:
    """Progress of a page copy on stderr, shown only when the copy takes several steps.

    On a terminal it redraws one bar; otherwise (logs, cron mail) it writes a plain line
    at every tenth, so nothing fills a log with carriage returns.
    """

    def __init__(self, label: str, stream=None, min_pages: int = 0) -> None:
        from ..ops import STEP_PAGES
        self.label = label
        self.stream = stream or sys.stderr
        self.min_pages = min_pages or STEP_PAGES + 1
        self.tty = self.stream.isatty()
        self.shown = -1

    def __call__(self, done: int, total: int) -> None:
        if total < self.min_pages or total <= 0:
            return
        percent = done * 100 // total
        if self.tty:
            filled = percent * 30 // 100
            self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] "
                              f"{percent:3d}%" + ("\n" if done >= total else ""))
        elif percent // 10 > self.shown // 10 or (done >= total and self.shown < 100):
            self.stream.write(f"{self.label}: {percent}% ({done}/{total} pages)\n")
        else:
            return
        self.shown = percent
        self.stream.flush()


def _backup_setup(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="where to write the backup (must not exist)")
    p.add_argument("--force", action="store_true", help="overwrite FILE (and FILE.key)")
    p.add_argument("--with-key", action="store_true",
                   help="also write the secret key to FILE.key (mode 0600)")


@command("backup", "consistent copy of the database while it may be serving, verified",
         setup=_backup_setup)
def backup(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .. import crypto, ops

    settings = settings_from(args)
    if settings.uses_postgres:
        from ..pgops import backup_instead, url_in_shell
        return fail(backup_instead(settings.database_shown, args.file, settings.secret_key_source,
                                   url_in_shell(os.environ)))
    try:
        ops.refuse_a_folder(args.file)  # before its key file's name is made from it
    except ops.OpsError as exc:
        return fail(str(exc))
    dest = Path(args.file)
    key_dest = ops.key_file_for(dest)
    if args.with_key and key_dest.exists() and not args.force:
        return fail(f"{key_dest} already exists; choose another name or pass --force")
    try:
        if args.with_key:
            ops.refuse_own_file(key_dest, settings.db_path, settings.secret_key_path)
            ops.refuse_a_key_of_no_backup(key_dest, dest)
        result = ops.backup(settings.db_path, dest, force=args.force,
                            key_path=settings.secret_key_path, progress=ProgressBar("backup"))
    except ops.OpsError as exc:
        return fail(str(exc))
    print(f"backup written: {result.path} ({result.size / 2**20:.1f} MiB, schema version "
          f"{result.version}); integrity_check ok")
    sealed = ", ".join(result.list_sealed_key_ids)
    print("The secret key is NOT in the backup. Private question context stays encrypted in "
          "it" + (f" (sealed with key id(s) {sealed})" if sealed else
                  " (none stored yet, but later backups will need the key)") +
          f"; only the key from {settings.secret_key_source} opens it.")
    if not args.with_key:
        print(f"Keep that key with the backup, stored as carefully: run with --with-key to "
              f"write it to {key_dest}, or copy it yourself.")
        if key_dest.is_file() and ops.check_key(result.path, "", key_dest).matches is False:
            print(f"WARNING: {key_dest}, left from an older backup, does not open this one; "
                  f"run with --with-key --force to write the key that does.")
        return 0
    try:
        fingerprint = ops.export_key(settings.secret_key, settings.secret_key_path, key_dest,
                                     force=args.force, env_name=settings.secret_key_source)
    except (ops.OpsError, crypto.SecretKeyProblem) as exc:
        return fail(f"the backup is written but the key is not: {exc}")
    print(f"key written: {key_dest} (mode 0600, fingerprint {fingerprint}). Anyone holding "
          f"both files can read private context: store them accordingly.")
    return 0


def _restore_setup(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a backup made by `lobbytalks backup`")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--with-key", action="store_true",
                   help="also install FILE.key as the data folder's secret.key "
                        "(the previous key file is kept)")


@command("restore", "replace the database with a backup (server must be stopped)",
         setup=_restore_setup)
def restore(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .. import clock, ops

    settings = settings_from(args)
    if settings.uses_postgres:
        from ..pgops import restore_instead
        return fail(restore_instead(settings.database_shown, args.file, settings.secret_key_source))
    source, db_path = Path(args.file), Path(settings.db_path)
    key_file = ops.key_file_for(source)
    if args.with_key:
        if settings.secret_key.strip():
            return fail("--with-key installs a key file, but LOBBYTALKS_SECRET_KEY is set and "
                        "would override it; put the backup's key in that variable instead")
        if not key_file.is_file():
            return fail(f"--with-key: no key file {key_file} beside the backup")
    if not args.yes and not _confirm(f"Replace {db_path} with {source}? Everyone will have to "
                                     f"log in again. [y/N] "):
        return fail("not restoring (pass --yes to skip this question)")
    now = clock.now()
    try:
        result = ops.restore(db_path, source, now=now, progress=ProgressBar("restore"))
        kept_key = ops.install_key(key_file, settings.secret_key_path, now) \
            if args.with_key else None
    except ops.OpsError as exc:
        return fail(str(exc))
    print(f"restored {source} into {result.db_path} (schema version {result.version}"
          + ("" if result.version == result.latest else
             f"; it migrates to {result.latest} at the next start") + ")")
    if result.previous:
        print(f"the replaced database is kept as {result.previous}")
    print(f"ended {result.sessions_ended} web session(s): everyone logs in again")
    if args.with_key:
        print(f"installed the key from {key_file} as {settings.secret_key_path}"
              + (f" (previous key kept as {kept_key})" if kept_key else ""))
    return _key_after_restore(settings, db_path, key_file, installed=args.with_key)


def _key_after_restore(settings, db_path, key_file, *, installed: bool) -> int:
    """Say whether the key in place opens the restored private context; 1 when it does not
    (the data is in place, but a script's next step, starting the server, would fail)."""
    from .. import ops

    status = ops.check_key(db_path, settings.secret_key, settings.secret_key_path,
                           settings.secret_key_source)
    if status.matches is not False:
        print(f"key: {status.message}")
        return 0
    if installed:
        hint = (f" The key installed from {key_file} does not open it either: find the "
                f"key this backup was made with.")
    elif key_file.is_file():
        hint = (f" The backup's own key is at {key_file}: rerun with --with-key or copy "
                f"it to {settings.secret_key_path}.")
    else:
        hint = ""
    where = (settings.secret_key_source if settings.secret_key.strip() else
             f"{settings.secret_key_path} or LOBBYTALKS_SECRET_KEY")
    print(f"WARNING: {status.message}. The database is restored, but the server refuses "
          f"to start until the key used with this backup is back: in {where}.{hint}",
          file=sys.stderr)
    return 1


def _confirm(question: str) -> bool:
    if not sys.stdin or not sys.stdin.isatty():
        return False
    return input(question).strip().lower() in {"y", "yes"}


@command("check", "integrity and foreign-key checks; the schema version, and whether the "
                  "tables are what it defines (SQLite)")
def check(args: argparse.Namespace) -> int:
    from .. import ops

    settings = settings_from(args)
    try:
        report = _check_postgres(settings) if settings.uses_postgres else ops.check(settings.db_path)
    except ops.OpsError as exc:
        return fail(str(exc))
    for line in report.lines():
        print(line)
    return 0 if report.ok else 1


def _check_postgres(settings):
    from .. import ops, pgops
    from ..db import DatabaseError

    try:
        database = open_postgres(settings)
    except DatabaseError as exc:
        raise ops.OpsError(f"{settings.database_shown}: {exc}") from None
    try:
        return pgops.check(database.conn, settings.database_shown)
    finally:
        database.close()
