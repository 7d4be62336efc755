"""The start-up steps, named once: ``create_app`` runs them all, ``lobbytalks admin`` the
database ones. None of them knows Flask.
"""
from __future__ import annotations

import logging
from pathlib import Path

from . import clock, crypto, key_rotation, keystore, ops, serverlock
from .db import (Connection, Database, MigrationFailed, Q, latest_version, make_private_dir,
                 migrate, schema_version)
from .db.sqlite import open_writable
from .db import open_database as open_configured
from .settings import Settings

log = logging.getLogger("lobbytalks")


def configure_clock(settings: Settings) -> None:
    clock.configure(settings.clock_offset_file or None)
    if settings.clock_offset_file:
        log.warning("clock offset file %s is set: time may be shifted (testing only)",
                    settings.clock_offset_file)


def migrate_database(conn: Connection, db_path: Path) -> None:
    """Back the file up when migrations are pending, then migrate.

    :raise SchemaTooNew, ops.OpsError: for a schema newer than this code, a failed backup.
    """
    copy = ops.backup_before_migrate(conn, db_path, clock.now())  # refuses a too-new schema
    try:
        migrate(conn, clock.now())
    except MigrationFailed:
        # Rolled back: the database is that copy, and a service manager restarting the
        # server would otherwise leave one more full copy at every try.
        if copy is not None:
            copy.unlink(missing_ok=True)
            log.warning("removed %s: the database was not changed", copy)
        raise


def open_database(settings: Settings) -> tuple[Database, "crypto.Keyring"]:
    """The database the settings name, created or migrated (``open_migrated``), and the
    keyring that opens it."""
    make_private_dir(Path(settings.db_path).parent)  # the secret key's folder on PostgreSQL too
    db = open_migrated(settings)
    try:
        return db, open_keyring(db.conn, settings)
    except BaseException:
        db.close()
        raise
    finally:
        db.release_connection()


def open_migrated(settings: Settings, *, existing: bool = False) -> Database:
    """The database the settings name, migrated, without the keyring (admin commands use it
    as is). On SQLite the file is copied before migrating; PostgreSQL holds no file of ours
    (its operator backs it up with pg_dump), and several processes may start at once, which
    ``migrate`` serialises with an advisory lock.

    ``existing`` (an admin command, which works while a server runs): a SQLite file holding
    no LobbyTalks database is refused rather than made one, and so is one that would need
    migrating while another process serves it (an older server, its schema changed under it;
    ``init`` and ``serve`` refuse that by its lock).

    :raise ops.OpsError: saying why, in one line."""
    if not settings.uses_postgres:
        db_path = Path(settings.db_path)
        conn = open_writable(db_path)
        try:
            if existing:
                _refuse_to_change_under_a_server(conn, db_path)
            migrate_database(conn, db_path)
        finally:
            conn.close()
        return Database(db_path)
    db = open_configured(settings)
    try:
        migrate(db.conn, clock.now())
    except BaseException:
        db.close()
        raise
    return db


def _refuse_to_change_under_a_server(conn: Connection, db_path: Path) -> None:
    version = schema_version(conn)
    if version == 0:
        raise ops.OpsError(f"no LobbyTalks database in {db_path} (lobbytalks init creates one)")
    if version < latest_version() and serverlock.in_use(db_path):
        raise ops.OpsError(f"{db_path} is served by an older LobbyTalks (schema version "
                           f"{version}), whose schema this one would change under it: "
                           f"upgrade and restart that server first (its start migrates)")


def open_keyring(conn: Connection, settings: Settings) -> "crypto.Keyring":
    """The keyring, checked against the rows it must open.

    A new key is generated only while nothing is encrypted yet: a lost key file must stop
    the server, not be silently replaced by a key that opens nothing.
    """
    nothing_sealed = conn.execute(Q.list_sealed_key_ids).fetchone() is None
    keyring = keystore.load_keyring(env_value=settings.secret_key, key_path=settings.secret_key_path,
                                  create=nothing_sealed, env_name=settings.secret_key_source)
    key_rotation.verify_keyring(conn, keyring)
    return keyring


def index_for_search(db: Database) -> None:
    """Questions written before the search index existed (or restored from such a backup)."""
    from .services import search

    with db.transaction() as conn:
        added = search.index_missing(conn)
    if added:
        log.info("indexed %d questions for search", added)


def ensure_admin(settings: Settings, db: Database) -> None:
    """The administrator the settings name, created or updated."""
    from .services import accounts

    if settings.admin_username and settings.admin_password:
        from .password_rules import too_easy
        if too_easy(settings.admin_password, settings.admin_username):
            # (not refused: the operator chose it, and a start must not fail on it)
            log.warning("LOBBYTALKS_ADMIN_PASSWORD is easy to guess (a common word with "
                        "digits, a run such as 1234567890, or mostly the username): the "
                        "admin account deserves a better one")
        accounts.ensure_admin(db, settings.admin_username, settings.admin_password,
                              now=clock.now(), cost=settings.password_cost)


def start_mailer(settings: Settings, db: Database, keyring: "crypto.Keyring"):
    """The notification mailer's thread, when an SMTP server is configured (else None)."""
    if not settings.sends_mail:
        return None
    from .mailer import Mailer
    return Mailer(settings, db, keyring).start()
