"""The suite on PostgreSQL: ``LOBBYTALKS_TEST_DATABASE_URL=postgresql://user@host:port/db``
names a server, and every test data folder gets its own empty database on it.

Unset (the default), everything here is a no-op and the apps use SQLite in their data folder.
Databases are keyed by data folder so that a restarted server, or a second app on the same
folder, finds the data the first one wrote.
"""
from __future__ import annotations

import itertools
import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ENV = "LOBBYTALKS_TEST_DATABASE_URL"
ADMIN_URL = os.environ.get(ENV) or None
APP_ENV = "LOBBYTALKS_DATABASE_URL"  # what the app (and `lobbytalks serve`) reads

SKIP_REASONS = {
    "sqlite_only": "about SQLite files by nature; runs on the default backend",
    "once": "does not depend on the database; runs once, on the default backend",
}

_numbers = itertools.count(1)
_made: dict[str, str] = {}  # resolved data folder -> its database URL


def active() -> bool:
    return ADMIN_URL is not None


def with_database(url: str, name: str) -> str:
    """The same server URL with another database name."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


def _admin_execute(statement: str, admin_url: str | None = None) -> None:
    import psycopg  # only needed when the suite runs on PostgreSQL
    with psycopg.connect(admin_url or ADMIN_URL, autocommit=True) as conn:
        conn.execute(statement)


# server URL -> the migrated database every test database on that server is copied from
_templates: dict[str, str] = {}


def _migrated_template() -> str:
    """A database migrated to the latest schema once per session: copying it is much
    cheaper than running every migration for every test (the app's start then finds
    nothing to migrate, as on any up-to-date database)."""
    if ADMIN_URL not in _templates:
        from lobbytalks import clock
        from lobbytalks.db import migrate
        from lobbytalks.db.postgres import PostgresDatabase

        name = f"t_{os.getpid()}_template"
        _admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        _admin_execute(f'CREATE DATABASE "{name}"')
        database = PostgresDatabase(with_database(ADMIN_URL, name), max_size=1)
        try:
            migrate(database.conn, clock.now())
        finally:
            database.close()
        _templates[ADMIN_URL] = name
    return _templates[ADMIN_URL]


def url_for(data_dir: str | Path) -> str | None:
    """The database URL for an app on this data folder: None on SQLite, else a database of
    its own, created (migrated, holding no community data yet) on first use."""
    if not active():
        return None
    key = str(Path(data_dir).resolve())
    if key not in _made:
        name = f"t_{os.getpid()}_{next(_numbers)}"
        _admin_execute(f'CREATE DATABASE "{name}" TEMPLATE "{_migrated_template()}"')
        _made[key] = with_database(ADMIN_URL, name)
    return _made[key]


def env_for(data_dir: str | Path) -> dict[str, str]:
    """Environment for a `lobbytalks serve` process on this data folder."""
    url = url_for(data_dir)
    return {APP_ENV: url} if url else {}


_pools: list = []  # every PostgresDatabase an app opened, to close before its database goes


def track_pools() -> None:
    """Remember each PostgresDatabase the apps open: a pool left open on a dropped database
    keeps a thread reconnecting in the background for the rest of the session."""
    from lobbytalks.db import postgres
    real_init = postgres.PostgresDatabase.__init__

    def recording_init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        _pools.append(self)
    postgres.PostgresDatabase.__init__ = recording_init


def _close_pools_of(urls: set[str]) -> None:
    for database in [d for d in _pools if d.url in urls]:
        _pools.remove(database)
        try:
            database.pool.close(timeout=2)
        except Exception:  # already closed by the test, or broken: the drop ends it anyway
            pass


def made() -> set[str]:
    return set(_made)


def drop(keys: set[str]) -> None:
    _close_pools_of({_made[key] for key in keys if key in _made})
    for key in keys:
        name = urlsplit(_made.pop(key)).path.lstrip("/")
        # FORCE: an app left open by the test still holds connections
        _admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def drop_templates() -> None:
    """The template databases, from every server that is still up (a test's own throwaway
    server takes its template with it)."""
    import psycopg
    while _templates:
        admin_url, name = _templates.popitem()
        try:
            _admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', admin_url)
        except psycopg.OperationalError:
            pass


def skip_sqlite_bound(items: list[pytest.Item]) -> None:
    """On PostgreSQL, skip (with the reason) what only makes sense on SQLite or once."""
    if not active():
        return
    from lobbytalks.settings import Settings
    if "database_url" not in Settings.__dataclass_fields__:
        raise pytest.UsageError(f"{ENV} is set but this build has no PostgreSQL backend "
                                "(Settings has no database_url)")
    track_pools()
    for item in items:
        for marker, reason in SKIP_REASONS.items():
            if item.get_closest_marker(marker):
                item.add_marker(pytest.mark.skip(reason=reason))
                break
