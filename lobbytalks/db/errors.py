"""The database errors services catch, whichever driver raised them.

SQLite's own classes are the seam's classes, so SQLite behaves exactly as before. The
PostgreSQL wrapper translates each psycopg error into a subclass of the matching one
(``PgIntegrityError`` is an ``IntegrityError``), keeping the original as ``__cause__`` and
its SQLSTATE; psycopg is only imported when PostgreSQL is used.
"""
from __future__ import annotations

import sqlite3

IntegrityError = sqlite3.IntegrityError
DatabaseError = sqlite3.Error
OperationalError = sqlite3.OperationalError


def disk_full(exc: BaseException) -> bool:
    """Whether SQLite refused a write for want of space ("database or disk is full")."""
    return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL


class PgDatabaseError(sqlite3.DatabaseError):
    sqlstate: str | None = None


class PgIntegrityError(PgDatabaseError, sqlite3.IntegrityError):
    """A unique, foreign-key, check or not-null constraint refused the statement."""


class PgOperationalError(PgDatabaseError, sqlite3.OperationalError):
    """The server could not finish: deadlock, serialization failure, lost connection.
    Nothing retries on its own; the caller's transaction was rolled back."""


class ContentionError(PgOperationalError):
    """PostgreSQL gave up on the transaction because another one held what it needed: a
    deadlock (40P01), a serialization failure (40001) or a lock wait past its timeout
    (55P03). Nothing was written; the same request later succeeds (services/locks.py)."""


CONTENTION_SQLSTATES = ("40001", "40P01", "55P03")


def translate_pg_error(exc: Exception, url: str = "") -> PgDatabaseError:
    """Ours for psycopg's ``exc``; with the database ``url``, its secrets are masked in the
    message (psycopg quotes what it could not parse of it)."""
    import psycopg
    from ..uri_secrets import hide_uri_secrets

    if getattr(exc, "sqlstate", None) in CONTENTION_SQLSTATES:
        kind: type[PgDatabaseError] = ContentionError
    elif isinstance(exc, psycopg.IntegrityError):
        kind = PgIntegrityError
    elif isinstance(exc, (psycopg.OperationalError, psycopg.errors.TransactionRollback)):
        kind = PgOperationalError
    else:
        kind = PgDatabaseError
    said = str(exc).strip()
    if url:  # reaching the server (a start, check, migrate-db): one line, as every refusal
        said = "; ".join(line.strip() for line in hide_uri_secrets(said, url).splitlines()
                         if line.strip())
    error = kind(said)
    error.sqlstate = getattr(exc, "sqlstate", None)
    return error
