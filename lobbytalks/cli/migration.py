"""``lobbytalks migrate-db``: the SQLite community copied into an empty PostgreSQL one."""
from __future__ import annotations

import argparse
import sys

from .registry import command, fail, settings_from


def _migrate_db_setup(p: argparse.ArgumentParser) -> None:
    target = p.add_mutually_exclusive_group()
    target.add_argument("--to", metavar="URL",
                        help="the empty PostgreSQL database, postgresql://user:pass@host/name "
                             "(default: LOBBYTALKS_DATABASE_URL)")
    target.add_argument("--to-file", metavar="PATH",
                        help="read that URL from a file (keeps the password out of the "
                             "command line and the shell history)")


def _migration_target(args: argparse.Namespace, settings) -> str:
    """The target URL from --to, --to-file or the configured database, or '' when none is
    a PostgreSQL URL."""
    from pathlib import Path

    from ..setting_rules import refuse_unescaped_userinfo
    from ..settings import POSTGRESQL_URL_PREFIXES, Settings

    if args.to_file:
        url = Path(args.to_file).read_text("utf-8").strip()
    else:
        # --db takes the database's place in the settings: the PostgreSQL database the
        # environment names (LOBBYTALKS_DATABASE_URL or its _FILE) is the target all the same
        url = args.to or settings.database_url or Settings.load().database_url
    if not url.startswith(POSTGRESQL_URL_PREFIXES):
        return ""
    # As for LOBBYTALKS_DATABASE_URL: the driver would take part of such a password for
    # the host, and say it in its error.
    refuse_unescaped_userinfo("--to-file" if args.to_file else "--to", url)
    return url


@command("migrate-db", "copy the SQLite database into an empty PostgreSQL one and verify "
                       "the copy (row counts and a checksum per table)", setup=_migrate_db_setup)
def migrate_db(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from .. import clock, migrate_db, serverlock
    from ..db import DatabaseError
    from ..uri_secrets import hide_uri_secrets, mask_uri_credentials

    settings = settings_from(args)
    try:
        target = _migration_target(args, settings)
    except OSError as exc:
        return fail(f"--to-file: {exc.strerror or exc}: {args.to_file}")
    except UnicodeDecodeError:
        return fail(f"--to-file: {args.to_file} is not UTF-8 text")
    if not target:
        print("lobbytalks: migrate-db needs a postgresql:// target: --to URL, --to-file PATH "
              "or LOBBYTALKS_DATABASE_URL", file=sys.stderr)
        return 2
    source, shown = Path(settings.db_path), mask_uri_credentials(target)
    if source.is_file() and serverlock.in_use(source):
        # The copy is one consistent snapshot anyway; what the server writes later is not.
        print(f"WARNING: a LobbyTalks server is using {source}; the copy is a consistent "
              "snapshot, but anything written after it is NOT moved. Stop the server first.",
              file=sys.stderr)
    print(f"copying {source} into {shown}")
    started = time.monotonic()
    try:
        reports = migrate_db.migrate(source, target, clock.now())
    except migrate_db.MigrationError as exc:
        return fail(str(exc))
    except DatabaseError as exc:
        return fail(f"{shown}: {hide_uri_secrets(str(exc), target)}; nothing was kept")
    width = max(len(r.name) for r in reports)
    for r in reports:
        print(f"{r.name:<{width}}  {r.rows:>9} rows  sha256-sum {r.checksum}")
    print(f"verified {len(reports)} tables, {sum(r.rows for r in reports)} rows: the copy in "
          f"{shown} matches {source} ({time.monotonic() - started:.1f} s)")
    print(_key_after_migration(settings, source, shown))
    print(f"Next: set LOBBYTALKS_DATABASE_URL={shown} (or _FILE) and start the server.")
    return 0


def _key_after_migration(settings, source, shown: str) -> str:
    """Where the key the copied database needs is: it never travels in the database."""
    from pathlib import Path

    if settings.secret_key.strip() or settings.secret_key_path.exists():
        return (f"The secret key is not in the database and stays where it is "
                f"({settings.secret_key_source}): every server on {shown} needs that same key to "
                "open private context.")
    exported = Path(f"{source}.key")  # written beside a backup by backup --with-key
    if exported.is_file():
        return (f"The secret key is not in the database: it is in {exported}, written with "
                f"the backup. Every server on {shown} needs it to open private context (as "
                "its data folder's secret.key, or in LOBBYTALKS_SECRET_KEY).")
    # a copy on its own (a backup): its key is wherever the server kept it
    return (f"The secret key is not in the database, and there is none beside {source}: "
            f"every server on {shown} needs the key this database was sealed with (the "
            "secret.key of the data folder it was served from, or FILE.key beside a backup "
            "made with --with-key) to open private context.")
