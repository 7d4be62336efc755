"""The database seam: one connection/transaction interface over SQLite or PostgreSQL.

Services import everything from here (``from ..db import Database, Q``) and never the
driver: the names below are the same whichever backend ``open_database`` picked.
"""
from __future__ import annotations

from typing import Any

from .errors import ContentionError, DatabaseError, IntegrityError
from .queries import Q, Queries
from .schema import (MigrationFailed, SchemaTooNew, applied_version, dialect_of, latest_version,
                     migrate, migrations, pending_migrations, schema_version)
from .sqlite import BUSY_TIMEOUT_MS, Connection, Database, Row, connect, make_private_dir

__all__ = [
    "BUSY_TIMEOUT_MS", "Connection", "ContentionError", "Database", "DatabaseError", "IntegrityError",
    "MigrationFailed", "Q", "Queries", "Row", "SchemaTooNew", "applied_version", "connect",
    "dialect_of", "latest_version",
    "make_private_dir", "migrate", "migrations", "open_database", "pending_migrations",
    "schema_version",
]

def open_database(settings: Any) -> Any:
    """The ``Database`` the settings name: PostgreSQL for a postgresql:// URL, else SQLite."""
    if settings.uses_postgres:
        from .postgres import PostgresDatabase
        # A connection per waitress thread, plus the mailer's and a spare.
        return PostgresDatabase(settings.database_url, max_size=settings.threads + 2)
    return Database(settings.db_path)
