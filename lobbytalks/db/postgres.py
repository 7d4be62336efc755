"""PostgreSQL behind the same interface as the SQLite ``Database``.

Each thread checks a connection out of a ``psycopg_pool.ConnectionPool`` when it first needs
one and gives it back at the end of the request (``release_connection``, wired as a
teardown hook) or of a background job. There is no process-wide write lock: transactions are
READ COMMITTED, and the protocol's invariants take row locks (``Q.lock_user`` and friends,
``FOR NO KEY UPDATE`` here) so that processes on several hosts agree. Deadlocks and serialization
failures are not retried here; they reach the caller as ``db.ContentionError``, which the
app answers with 503 and Retry-After (services/locks.py says why).
"""
from __future__ import annotations

import logging
import select
import threading
from typing import Any, Callable

from .base import TransactionalDatabase
from .pgsql import Connection, row_factory

log = logging.getLogger("lobbytalks.db")


# How long one statement may wait for a lock, and run at all, on a pooled connection. Rows
# are locked for milliseconds; a transaction left holding one (a process frozen mid-write,
# an admin's psql session) would otherwise hold every request that needs it, and with them
# every worker thread. Past the lock wait the request is a 503 with Retry-After (55P03 is
# contention), past the statement limit a 503 too. Migrations lift both (db.schema).
SESSION_LIMITS = "SET lock_timeout = '5s'; SET statement_timeout = '60s'"
# A host that stops answering (powered off, cut off) leaves no error on an open connection:
# a request sent on it would wait for TCP's own retries, some 15 minutes. Unacknowledged
# data or keepalives for this long end the connection instead (Linux); a URL's own
# settings for these win.
TCP_LIMITS = {"keepalives": "1", "keepalives_idle": "10", "keepalives_interval": "3",
              "keepalives_count": "3", "tcp_user_timeout": "10000"}


def connection_kwargs(url: str) -> dict[str, Any]:
    """What every connection is opened with: autocommit (transactions are begun
    explicitly) and the TCP limits the URL does not set itself."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict
    try:
        given = conninfo_to_dict(url)
    except psycopg.Error:  # connecting with it says so, masked (errors.translate_pg_error)
        given = {}
    return {"autocommit": True, **{k: v for k, v in TCP_LIMITS.items() if k not in given}}


def configure_connection(raw: Any) -> None:
    """Every pooled connection: the session's time limits, rows like sqlite3.Row, Python
    bools sent as the 0/1 integers the INTEGER columns hold, and parameters bound
    client-side.

    Client-side binding sends ``NULL`` and ``'text'`` as literals whose type PostgreSQL
    infers from where they stand, as SQLite's loose typing lets the shared queries assume:
    ``(:community IS NULL OR community_id = :community)`` would otherwise fail with "could
    not determine data type of parameter". psycopg still quotes every value itself.
    """
    import psycopg
    from psycopg.adapt import Dumper
    from psycopg.postgres import types

    class BoolAsInt(Dumper):
        oid = types["int8"].oid

        def dump(self, obj: bool) -> bytes:
            return b"1" if obj else b"0"

    raw.execute(SESSION_LIMITS)
    raw.cursor_factory = psycopg.ClientCursor
    raw.row_factory = row_factory
    raw.adapters.register_dumper(bool, BoolAsInt)


class NoCheckpointer:
    """PostgreSQL has no WAL file of ours to checkpoint; the interface stays."""

    running = False
    completed = 0

    def notify(self) -> None:
        pass

    def catch_up(self, conn: Any) -> None:
        pass

    def stop(self) -> None:
        pass


def ended_while_idle(raw: Any) -> bool:
    """Whether the server has ended a connection that sits idle: with no query out, its
    socket is readable only for the server's goodbye (57P01 on a restart) or the end of
    the stream. One poll, no round trip: this runs at every checkout."""
    if raw.closed or raw.broken:
        return True
    try:
        readable, _, _ = select.select([raw.fileno()], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


# While PostgreSQL cannot be reached. The pool's reconnection back-off doubles from 1 s
# until it gives up; given up after a few seconds, the next checkout starts a fresh attempt,
# so service comes back within seconds of the database and not after a minute's back-off.
RECONNECT_WINDOW = 5.0
# A checkout after one that timed out waits this long: each request of an outage is a
# prompt 503 instead of holding a worker thread for the pool's full timeout.
UNREACHABLE_WAIT = 1.0


class PostgresDatabase(TransactionalDatabase):
    """Pooled connections, one per thread while in use; READ COMMITTED transactions."""

    dialect = "postgresql"
    begin_snapshot = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8,
                 timeout: float = 10.0) -> None:
        from psycopg_pool import ConnectionPool

        self.url = url
        self.path = ""  # no file: what reads .path to find one has nothing to do here
        self.checkpointer = NoCheckpointer()
        self.after_commit: list[Callable[[], None]] = []
        self._local = threading.local()
        self.unreachable = False  # the last checkout timed out; cleared by the next success
        kwargs = connection_kwargs(url)
        self.pool = ConnectionPool(url, min_size=min_size, max_size=max_size, timeout=timeout,
                                   reconnect_timeout=RECONNECT_WINDOW,
                                   kwargs=kwargs, configure=configure_connection,
                                   open=False, name="lobbytalks")
        try:
            # One plain connection first: unreachable or refused, it says why in one error,
            # where the pool would log a warning for each retry and then only time out.
            import psycopg
            psycopg.connect(url, connect_timeout=max(1, round(timeout)), **kwargs).close()
            self.pool.open(wait=True, timeout=timeout)
        except Exception as exc:
            self.pool.close()
            from .errors import translate_pg_error
            raise translate_pg_error(exc, url) from None

    @property
    def conn(self) -> Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = Connection(self._checkout())
            self._local.conn = conn
        return conn

    def _checkout(self) -> Any:
        for _ in range(self.pool.max_size + 1):
            try:
                raw = self.pool.getconn(timeout=UNREACHABLE_WAIT if self.unreachable else None)
            except Exception as exc:  # PoolTimeout: the server is down (the pool has a
                # connection for every thread, so a healthy one never makes a thread wait long)
                self.unreachable = True
                from .errors import translate_pg_error
                raise translate_pg_error(exc) from None
            self.unreachable = False
            if not ended_while_idle(raw):
                return raw
            # The server ended it while it sat in the pool (a restart, an admin's
            # pg_terminate_backend): closed, the pool replaces it, and the next is taken.
            # Left in, each such connection failed one request, however much later.
            raw.close()
            self.pool.putconn(raw)
        import psycopg
        from .errors import translate_pg_error
        raise translate_pg_error(psycopg.OperationalError(
            "every pooled connection had been ended by the server"))

    def release_connection(self) -> None:
        """Give this thread's connection back to the pool (end of a request or a job). An
        open transaction is rolled back first; the pool discards a broken connection."""
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "depth", 0):
            return
        self._local.conn = None
        self.pool.putconn(conn.raw)

    close_thread_connection = release_connection

    def close(self) -> None:
        self.release_connection()
        self.pool.close()

    @property
    def closed(self) -> bool:
        """Closed for good: the pool takes no more checkouts."""
        return self.pool.closed

    def _abort(self, conn: Connection) -> None:
        """Roll back whatever is open; a connection that cannot roll back is dropped (the
        pool replaces it)."""
        try:
            if conn.in_transaction:
                conn.raw.rollback()
        except Exception as exc:  # the connection is gone (a restart, an outage): one line
            log.warning("ROLLBACK failed, the connection is given up: %s: %s",
                        type(exc).__name__, (str(exc).strip().splitlines() or [""])[0])
            self._local.conn = None
            self.pool.putconn(conn.raw)
