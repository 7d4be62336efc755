"""PostgreSQL sessions' limits and losses: a row left locked (a process frozen mid-write, an
admin's psql session) costs the requests that need it a prompt 503, not every worker thread
for as long as it stays locked; migrations wait as long as they must; a connection lost in
the middle of a transaction is one line in the log.

SQLite has no such limits to test, so this runs once (the default pass) against the
session's throwaway PostgreSQL.
"""
from __future__ import annotations

import time

import psycopg
import pytest

from conftest import Person, joined_person
from helpers import assert_external_error
from lobbytalks import create_app
from lobbytalks.db import postgres
from lobbytalks.db.postgres import PostgresDatabase, connection_kwargs
from lobbytalks.db.schema import hold_migration_lock
from lobbytalks.settings import Settings
from test_admin_postgres import new_database

pytestmark = pytest.mark.once


@pytest.fixture
def pg_url(pg_server, request) -> str:
    return new_database(pg_server, request)


def test_pooled_connections_have_the_limits_and_a_migration_lifts_them(pg_url):
    database = PostgresDatabase(pg_url, max_size=2)
    try:
        assert database.value("SHOW lock_timeout") == "5s"
        assert database.value("SHOW statement_timeout") == "1min"
        with database.transaction() as conn:
            hold_migration_lock(conn)
            assert conn.execute("SHOW lock_timeout").fetchone()[0] == "0"
            assert conn.execute("SHOW statement_timeout").fetchone()[0] == "0"
        assert database.value("SHOW lock_timeout") == "5s"  # for that transaction only
    finally:
        database.close()


def test_tcp_limits_are_added_where_the_url_does_not_set_its_own():
    given = connection_kwargs("postgresql://u@db.internal/x?keepalives_idle=60")
    assert "keepalives_idle" not in given  # the URL's own 60 stands, not ours
    assert given["tcp_user_timeout"] == "10000" and given["keepalives"] == "1"
    assert given["autocommit"] is True
    assert connection_kwargs("postgresql://u@db.internal/x")["keepalives_idle"] == "10"


def test_a_row_left_locked_costs_its_requests_a_503_and_no_one_elses(pg_url, tmp_path,
                                                                     monkeypatch):
    """Before, each of this person's requests waited for as long as the row stayed locked
    (minutes, with a frozen process holding it), and with them every worker thread."""
    monkeypatch.setattr(postgres, "SESSION_LIMITS",
                        "SET lock_timeout = '300ms'; SET statement_timeout = '60s'")
    app = create_app(Settings(data_dir=str(tmp_path / "data"), argon2_memory_kib=8,
                              access_log=False, database_url=pg_url))
    asker = joined_person(app)
    topic = asker.ask()
    member = joined_person(app)
    agent = member.new_agent()
    user_id = app.config["LOBBYTALKS"].db.value(
        "SELECT id FROM users WHERE username = :name", {"name": member.username})
    with psycopg.connect(pg_url) as holder:  # a transaction left open, holding the row
        holder.execute("SELECT 1 FROM users WHERE id = %s FOR UPDATE", (user_id,))
        started = time.monotonic()
        refused = agent.claim(topic)
        waited = time.monotonic() - started
        assert_external_error(refused, 503, "service_unavailable")
        assert refused.headers["Retry-After"] == "1"
        assert waited < 5
        other = Person(app).register()  # someone else's write goes through meanwhile
        other.join()
        assert other.ask(title="Another question, asked while the row is locked")
        holder.rollback()
    claimed = agent.claim(topic)
    assert claimed.status_code == 200, claimed.get_json()
    app.config["LOBBYTALKS"].db.close()


def test_a_connection_lost_inside_a_transaction_is_logged_in_one_line(pg_url, caplog):
    """Each request of a restart logged a 30-line traceback beside its warning."""
    database = PostgresDatabase(pg_url, max_size=2)
    try:
        with pytest.raises(Exception):
            with database.transaction() as conn:
                pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
                with psycopg.connect(pg_url, autocommit=True) as admin:
                    admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
                conn.execute("SELECT 1")  # the server has ended this connection
        said = [r for r in caplog.records if "ROLLBACK failed" in r.getMessage()]
        assert len(said) == 1 and said[0].levelname == "WARNING"
        assert said[0].exc_info is None and "\n" not in said[0].getMessage()
        assert database.value("SELECT 1") == 1  # the pool gave a working one next
    finally:
        database.close()
