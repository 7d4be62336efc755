"""The PostgreSQL backend: the connection wrapper, transactions, the pool, migrations and
search, against a real PostgreSQL (LOBBYTALKS_TEST_DATABASE_URL, or one started here)."""
from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
import requests

from conftest import TEST_DATABASE_URL, LiveServer, Person, free_port, fresh_pg_database
from lobbytalks import create_app, db as dbmod
from lobbytalks.db.pgsql import to_psycopg
from lobbytalks.db.postgres import PostgresDatabase
from lobbytalks.settings import Settings


@pytest.fixture(scope="session")
def pg_admin_url():
    """The server the tests create their databases on; a throwaway one unless given."""
    if TEST_DATABASE_URL:
        yield TEST_DATABASE_URL
        return
    folder = Path(tempfile.mkdtemp(prefix="lt-pg-"))
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_postgres:
        shutil.chown(folder, "postgres")
    port = free_port()
    subprocess.run([*as_postgres, "initdb", "-D", str(folder / "data"), "-A", "trust",
                    "-U", "lobbytalks"], check=True, stdout=subprocess.DEVNULL)
    options = (f"-p {port} -k {folder} -c fsync=off -c synchronous_commit=off "
               "-c listen_addresses=127.0.0.1")
    subprocess.run([*as_postgres, "pg_ctl", "-s", "-D", str(folder / "data"), "-o", options,
                    "-l", str(folder / "log"), "-w", "start"], check=True)
    yield f"postgresql://lobbytalks@127.0.0.1:{port}/postgres"
    subprocess.run([*as_postgres, "pg_ctl", "-s", "-D", str(folder / "data"), "-m", "fast",
                    "stop"], check=False)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_url(request, pg_admin_url) -> str:
    return fresh_pg_database(request, pg_admin_url)


@pytest.fixture
def pg(pg_url) -> PostgresDatabase:
    database = PostgresDatabase(pg_url, max_size=3)
    database.conn.execute_script(
        "CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT UNIQUE, n BIGINT, blob BYTEA)")
    return database


@pytest.fixture
def pg_settings(tmp_path, pg_url) -> Settings:
    return Settings(data_dir=str(tmp_path / "data"), argon2_memory_kib=8, access_log=False,
                    database_url=pg_url)


# --- the wrapper ------------------------------------------------------------------------

@pytest.mark.parametrize("sql, expected", [
    ("SELECT * FROM t WHERE id = :id AND name = :name", "SELECT * FROM t WHERE id = %(id)s AND name = %(name)s"),
    ("SELECT * FROM t WHERE id = ? AND n = ?", "SELECT * FROM t WHERE id = %s AND n = %s"),
    ("SELECT CAST(:x AS json), '{}'::json", "SELECT CAST(%(x)s AS json), '{}'::json"),
    ("SELECT 5 % 3, 'a%b', ':not ?this'", "SELECT 5 %% 3, 'a%%b', ':not ?this'"),
    ("SELECT 1 -- :no ? here %\n, :yes", "SELECT 1 -- :no ? here %%\n, %(yes)s"),
    ('SELECT "odd:col?" FROM t', 'SELECT "odd:col?" FROM t'),
])
def test_parameters_are_translated_to_psycopg_style(sql, expected):
    assert to_psycopg(sql) == expected


def test_both_parameter_styles_and_literal_percent_run(pg):
    conn = pg.conn
    conn.execute("INSERT INTO t (id, name, n) VALUES (:id, :name, :n)", {"id": 1, "name": "a%", "n": 7})
    conn.execute("INSERT INTO t (id, name, n) VALUES (?, ?, ?)", (2, "b", None))
    rows = conn.execute("SELECT id FROM t WHERE name LIKE 'a%' OR n IS NULL ORDER BY id").fetchall()
    assert [r[0] for r in rows] == [1, 2]
    # An untyped NULL parameter compared in two places, as the shared queries do.
    assert pg.value("SELECT COUNT(*) FROM t WHERE (:n IS NULL OR n = :n)", {"n": None}) == 2
    assert pg.value("SELECT COUNT(*) FROM t WHERE (:n IS NULL OR n = :n)", {"n": 7}) == 1


def test_rows_and_values_read_like_sqlite(pg):
    pg.conn.execute("INSERT INTO t (id, name, n, blob) VALUES (1, 'x', 5, :b), (2, 'y', 6, NULL)",
                    {"b": b"\x00\xff"})
    row = pg.one("SELECT id, name, blob, COUNT(*) OVER () AS total, SUM(n) OVER () AS s, "
                 "EXISTS (SELECT 1 FROM t) AS e, n > 5 AS big FROM t ORDER BY id LIMIT 1")
    assert row["name"] == "x" and row[1] == "x" and row["blob"] == b"\x00\xff"
    assert row.keys() == ["id", "name", "blob", "total", "s", "e", "big"]
    assert dict(row) == {"id": 1, "name": "x", "blob": b"\x00\xff", "total": 2, "s": 11,
                         "e": 1, "big": 0}
    for key in ("total", "s", "e", "big"):  # no Decimal, no bool
        assert type(row[key]) is int, key
    assert list(row) == [1, "x", b"\x00\xff", 2, 11, 1, 0] and len(row) == 7
    assert pg.one("SELECT 1 FROM t WHERE id = 99") is None
    assert pg.conn.execute("UPDATE t SET n = n + 1").rowcount == 2
    assert [r["id"] for r in pg.conn.execute("SELECT id FROM t ORDER BY id")] == [1, 2]
    # A Python bool goes into an integer column as 0/1, as on SQLite.
    pg.conn.execute("UPDATE t SET n = :flag WHERE id = 1", {"flag": True})
    assert pg.value("SELECT n FROM t WHERE id = 1") == 1


def test_driver_errors_arrive_as_the_seams_classes(pg):
    pg.conn.execute("INSERT INTO t (id, name) VALUES (1, 'a')")
    with pytest.raises(dbmod.IntegrityError) as caught:
        with pg.transaction() as conn:
            conn.execute("INSERT INTO t (id, name) VALUES (2, 'a')")
    assert caught.value.sqlstate == "23505"  # unique_violation, kept for the curious
    with pytest.raises(dbmod.DatabaseError):
        pg.conn.execute("SELEKT 1")
    assert pg.value("SELECT COUNT(*) FROM t") == 1  # nothing half-written


def test_a_nested_transaction_is_a_savepoint_and_hooks_run_after_commit(pg):
    commits = []
    pg.after_commit.append(lambda: commits.append(pg.value("SELECT COUNT(*) FROM t")))
    with pg.transaction() as conn:
        conn.execute("INSERT INTO t (id, name) VALUES (1, 'kept')")
        with pytest.raises(dbmod.IntegrityError):
            with pg.transaction() as inner:
                inner.execute("INSERT INTO t (id, name) VALUES (2, 'undone')")
                inner.execute("INSERT INTO t (id, name) VALUES (3, 'kept')")  # duplicate name
        conn.execute("INSERT INTO t (id, name) VALUES (4, 'also kept')")
        assert commits == []  # not before the commit
    assert [r[0] for r in pg.all("SELECT id FROM t ORDER BY id")] == [1, 4]
    assert commits == [2]
    with pytest.raises(RuntimeError):
        with pg.transaction() as conn:
            conn.execute("INSERT INTO t (id, name) VALUES (5, 'rolled back')")
            raise RuntimeError("boom")
    assert pg.value("SELECT COUNT(*) FROM t WHERE id = 5") == 0 and commits == [2]


def test_a_released_connection_goes_back_to_the_pool_and_threads_get_their_own(pg):
    pg.conn  # noqa: B018 - checks one out
    assert pg.pool.get_stats()["pool_available"] == 0
    pg.release_connection()
    assert pg.pool.get_stats()["pool_available"] >= 1
    seen = []

    def job():
        seen.append(pg.value("SELECT pg_backend_pid()"))
        pg.release_connection()
    threads = [threading.Thread(target=job) for _ in range(6)]  # more jobs than max_size
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(seen) == 6 and pg.pool.get_stats().get("requests_errors", 0) == 0
