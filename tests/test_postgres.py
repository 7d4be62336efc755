"""The PostgreSQL backend: the connection wrapper, transactions, the pool, migrations and
search, against a real PostgreSQL (LOBBYTALKS_TEST_DATABASE_URL, or one started here)."""
from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import uuid
import threading
from pathlib import Path

import pytest
import requests

import pgtest
from conftest import LiveServer, Person, free_port
from lobbytalks import create_app, db as dbmod
from lobbytalks.db import Q
from lobbytalks.db.pgsql import to_psycopg
from lobbytalks.db.postgres import PostgresDatabase
from lobbytalks.kept import SnapshotGeneration
from lobbytalks.settings import Settings


TEST_DATABASE_URL = pgtest.ADMIN_URL or ""


def fresh_pg_database(request, admin_url: str) -> str:
    """A new, empty database on the server of ``admin_url``, dropped when the test ends
    (FORCE: a pool the test left open still holds connections)."""
    import psycopg

    name = f"lt_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")

    def drop() -> None:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    request.addfinalizer(drop)
    return pgtest.with_database(admin_url, name)


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
def sqlite_settings(settings) -> Settings:
    """The SQLite side of a comparison, even when the suite runs on PostgreSQL."""
    return settings.with_overrides(database_url="")


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


# --- migrations -------------------------------------------------------------------------

def test_the_snapshot_generation_moves_with_every_commit_and_only_then(pg, pg_url):
    """What lets several processes keep pages and results (kept.SnapshotGeneration): two
    looks agree while nothing is committed anywhere, and any commit, by this connection or
    another process's, makes the next look differ."""
    generation = SnapshotGeneration()
    first = generation.current(pg.conn)
    assert pg.conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0  # a read writes nothing
    assert generation.current(pg.conn) == first
    with pg.transaction() as conn:
        conn.execute("INSERT INTO t (id, name) VALUES (1, 'a')")
    second = generation.current(pg.conn)
    assert second != first
    other = PostgresDatabase(pg_url, max_size=1)  # another process's connection
    with other.transaction() as conn:
        conn.execute("UPDATE t SET n = 2 WHERE id = 1")
    third = generation.current(pg.conn)
    assert third not in (first, second)
    with other.transaction() as conn:  # committed while this one is in a transaction
        conn.execute("UPDATE t SET n = 3 WHERE id = 1")
        assert generation.current(pg.conn) == third
    assert generation.current(pg.conn) != third
    other.close()


def test_inside_a_transaction_the_generation_matches_nothing(pg):
    """The transaction sees its own writes, which may be rolled back: nothing made there
    may be handed out later."""
    generation = SnapshotGeneration()
    outside = generation.current(pg.conn)
    with pytest.raises(RuntimeError), pg.transaction() as conn:
        conn.execute("INSERT INTO t (id, name) VALUES (7, 'rolled back')")
        inside = generation.current(conn)
        assert inside != outside and inside != generation.current(conn)
        raise RuntimeError("roll back")
    assert generation.current(pg.conn) != inside


def test_every_sqlite_migration_has_its_postgresql_twin():
    sqlite_names = [(v, n) for v, n, _ in dbmod.migrations("sqlite")]
    assert [(v, n) for v, n, _ in dbmod.migrations("postgresql")] == sqlite_names
    assert sqlite_names[0] == (1, "initial")


# SQLite's implicit rowid is a real column on PostgreSQL where queries read it.
PG_ONLY_COLUMNS = {("topics", "rowid"), ("sessions", "rowid"), ("topic_search", "rowid")}


def _sqlite_columns(path: Path) -> set[tuple[str, str]]:
    conn = sqlite3.connect(path)
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
        "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'topic_search_%'")]
    columns = {(table, r[1]) for table in names
               for r in conn.execute(f"SELECT * FROM pragma_table_info('{table}')")}
    conn.close()
    return columns


def test_sqlite_and_postgresql_schemas_have_the_same_tables_and_columns(sqlite_settings,
                                                                         pg_settings):
    settings = sqlite_settings
    create_app(settings)
    app = create_app(pg_settings)
    rows = app.config["LOBBYTALKS"].db.all(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = 'public'")
    pg_columns = {(r[0], r[1]) for r in rows}
    sqlite_columns = _sqlite_columns(Path(settings.db_path))
    assert ("topic_listing", "has_card") in sqlite_columns and len(sqlite_columns) > 150
    assert pg_columns - PG_ONLY_COLUMNS == sqlite_columns
    assert PG_ONLY_COLUMNS <= pg_columns


def _start_when_all_are_ready(settings: Settings, ready, outcomes) -> None:
    """One process's start-up (``serve --workers`` starts each worker as a process)."""
    ready.wait(120)
    try:
        create_app(settings)
        outcomes.put("ok")
    except Exception as exc:  # reported to the test, which shows it
        outcomes.put(repr(exc))


def test_two_processes_starting_at_once_migrate_once(pg_settings):
    # Processes, not threads: within one interpreter CPython 3.11's compiler, which werkzeug's
    # routing calls for every rule, is not safe from several threads at once (a SystemError
    # "AST constructor recursion depth mismatch"), and that is not what this test is about.
    spawn = multiprocessing.get_context("spawn")
    ready, outcomes = spawn.Barrier(3), spawn.Queue()
    starts = [spawn.Process(target=_start_when_all_are_ready, args=(pg_settings, ready, outcomes))
              for _ in range(3)]
    for process in starts:
        process.start()
    results = [outcomes.get(timeout=180) for _ in starts]
    for process in starts:
        process.join(30)
    assert results == ["ok"] * 3
    db = create_app(pg_settings).config["LOBBYTALKS"].db
    versions = [r[0] for r in db.all("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [v for v, _, _ in dbmod.migrations()]
    assert db.value("SELECT COUNT(*) FROM communities WHERE id = 'lobby'") == 1
    assert dbmod.schema_version(db.conn) == dbmod.latest_version()


# --- the app on PostgreSQL --------------------------------------------------------------

def test_the_app_serves_from_postgresql_and_returns_connections_after_each_request(pg_settings):
    app = create_app(pg_settings)
    database = app.config["LOBBYTALKS"].db
    assert isinstance(database, PostgresDatabase)
    asker = Person(app).register()
    asker.join()
    topic = asker.ask("How do I back up PostgreSQL online?", description="pg_dump or base backups")
    client = app.test_client()
    assert client.get("/healthz").get_json() == {"ok": True}
    assert client.get(f"/q/{topic}").status_code == 200
    assert database.value("SELECT title FROM topics WHERE id = :id", {"id": topic}) == \
        "How do I back up PostgreSQL online?"
    assert database.value("SELECT COUNT(*) FROM topic_search") == 1
    database.release_connection()  # the test's own reads above
    stats = database.pool.get_stats()
    assert stats["pool_size"] == stats["pool_available"]  # every request gave its back
    # No SQLite file or lock was made; the secret key still lives in the data folder.
    data = Path(pg_settings.data_dir)
    assert (data / "secret.key").exists() and not list(data.glob("*.db*"))


SEARCH_QUESTIONS = [
    ("如何在线备份 SQLite 数据库？", "服务一直在写入。"),
    ("Which index makes this query fast?", "A slow JOIN on orders."),
    ("Backups of e-mail archives", "It's about 3 GB, don't ask"),
    ("数据库索引的选择", "B-tree 还是 hash"),
]
SEARCH_QUERIES = ["备份", "库", "数据库", "在线备份", "写入", "ind", "indexes", "JOIN orders",
                  "backup", "BACKUPS", "e-mail", "don't", "索引 tree", "!!!", "x' OR 'y",
                  "ＳＱＬｉｔｅ", "a\\b"]


def _search_results(settings: Settings) -> dict[str, list[int]]:
    app = create_app(settings.with_overrides(rate_topic="1000/day"))
    asker = Person(app).register()
    asker.join()
    ids = [asker.ask(title, description=text) for title, text in SEARCH_QUESTIONS]
    client = app.test_client()
    results = {}
    for q in SEARCH_QUERIES:
        r = client.get("/questions", query_string={"q": q})
        assert r.status_code == 200, q
        found = re.findall(r'class="item-title" href="/q/([^"]+)"', r.get_data(as_text=True))
        results[q] = sorted(ids.index(f) for f in found)
    return results


def test_search_finds_the_same_questions_on_both_backends(sqlite_settings, pg_settings):
    on_sqlite = _search_results(sqlite_settings)
    assert on_sqlite["备份"] == [0] and on_sqlite["backup"] == [2] and on_sqlite["!!!"] == []
    assert on_sqlite["数据库"] == [0, 3] and on_sqlite["ind"] == [1]
    assert _search_results(pg_settings) == on_sqlite


def _subplan_relations(node: dict) -> set[str]:
    """Tables read inside the SubPlans of a PostgreSQL plan (EXPLAIN FORMAT JSON)."""
    def tables(n: dict) -> set[str]:
        return {n.get("Relation Name", "")} | {t for c in n.get("Plans", []) for t in tables(c)}
    found = tables(node) if node.get("Parent Relationship") == "SubPlan" else set()
    return found.union(*(_subplan_relations(c) for c in node.get("Plans", [])))


@pytest.mark.parametrize("listing, params", [
    ("list_browse_newest", {"before_created": 2**62, "before_id": "", "community": None,
                            "status": None, "intent": None, "answered": None, "card": None}),
    ("list_browse_most_answers", {"before_count": 2**62, "before_created": 2**62,
                                  "before_id": "", "community": None, "status": None,
                                  "intent": None, "answered": None, "card": None}),
    ("list_browse_recently_answered", {"before_answer": 2**62, "before_id": "",
                                       "community": None, "status": None, "intent": None,
                                       "answered": None, "card": None}),
    ("list_community_topics_new", {"viewer": 1, "community": "lobby", "status": None,
                                   "offset": 0}),
])
def test_a_searched_listing_joins_the_matches_instead_of_reading_them_all_first(
        pg_settings, listing, params):
    # Written as "(:match IS NULL OR rowid IN (matches))", the filter could only be a
    # SubPlan: every match was read before the first row of the page (a scan of the whole
    # search table for a common word). As a join the planner walks the sort's index.
    database = create_app(pg_settings).config["LOBBYTALKS"].db
    for name in (listing, listing + "_searching"):
        sql = Q.for_dialect(getattr(Q, name), "postgresql")
        plan = database.value("EXPLAIN (FORMAT JSON) " + sql,
                              {**params, "match": "'备份'", "limit": 21})
        assert "topic_search" not in _subplan_relations(plan[0]["Plan"]), (name, plan)
        assert ("topic_search" in json.dumps(plan)) == name.endswith("_searching"), name
    database.release_connection()


# --- settings and a real server ---------------------------------------------------------

def test_database_url_comes_from_a_file_and_is_shown_masked(tmp_path):
    secret = tmp_path / "database-url"
    secret.write_text("postgresql://app:pa55word@db.internal/lobby\n")
    loaded = Settings.load({"LOBBYTALKS_DATABASE_URL_FILE": str(secret)})
    assert loaded.database_url == "postgresql://app:pa55word@db.internal/lobby"
    assert loaded.uses_postgres
    shown = dict((name, value) for name, value, _ in loaded.describe())
    assert shown["LOBBYTALKS_DATABASE_URL"] == "postgresql://app:****@db.internal/lobby"
    other = Settings.load({"LOBBYTALKS_DATABASE_URL": f"sqlite:///{tmp_path}/other.db"})
    assert other.db_path == tmp_path / "other.db" and not other.uses_postgres
    with pytest.raises(ValueError, match="DATABASE_URL") as caught:
        Settings(database_url="mysql://root:hunter2@db/x")
    assert "hunter2" not in str(caught.value)


def test_a_served_process_runs_on_postgresql_without_showing_the_password(tmp_path, pg_url):
    with_password = pg_url.replace("lobbytalks@", "lobbytalks:pa55-word@")  # trust ignores it
    server = LiveServer(tmp_path / "live", env={"LOBBYTALKS_DATABASE_URL": with_password})
    try:
        session = requests.Session()
        r = session.post(server.url + "/api/community",
                         json={"action": "register", "username": "livepg",
                               "password": "correct horse 1"})
        assert r.status_code == 200 and r.json()["ok"] is True
        assert requests.get(server.url + "/healthz").json() == {"ok": True}
        # A second process on the same database: no SQLite server lock stands in its way.
        second = LiveServer(tmp_path / "live2", env={"LOBBYTALKS_DATABASE_URL": with_password})
        assert requests.get(second.url + "/healthz").json() == {"ok": True}
        second.stop()
    finally:
        out = server.stop()
    assert "pa55-word" not in out and "lobbytalks:****@" in out
    check = PostgresDatabase(pg_url, max_size=1)
    assert check.value("SELECT COUNT(*) FROM users WHERE username = 'livepg'") == 1
    check.close()
    assert not (tmp_path / "live" / "lobbytalks.db").exists()


def test_an_unreachable_database_stops_serve_at_once_with_one_reason(tmp_path):
    """No pool warnings retried for ten seconds: the refusal itself, once, without the
    password."""
    port = free_port()  # nothing listens there
    done = subprocess.run(
        [sys.executable, "-m", "lobbytalks", "serve", "--port", str(free_port()),
         "--data-dir", str(tmp_path / "data")],
        env={**os.environ, "LOBBYTALKS_DATABASE_URL": f"postgresql://app:pa55word@127.0.0.1:{port}/x"},
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f'lobbytalks: postgresql://app:****@127.0.0.1:{port}/x: '
                                  f'connection failed: connection to server at '
                                  f'"127.0.0.1", port {port} failed: Connection refused'), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr  # one line, the driver's hint in it
    assert "WARNING" not in done.stderr and "pa55word" not in done.stderr


@pytest.mark.once  # a cluster of its own, stopped and started again
def test_an_outage_is_answered_promptly_and_service_returns_within_seconds():
    """Once a checkout has timed out, the next ones wait about a second, not the pool's
    whole timeout; and the pool's reconnection back-off (1, 2, 4, 8, 16 s...) is cut
    short, so connections come back within seconds of the database, where they had
    waited for the back-off's next try (15 s here, a minute after a longer outage)."""
    import time
    from lobbytalks.db.errors import PgOperationalError
    from pgserver import PgServer

    folder = Path(tempfile.mkdtemp(prefix="lt-pg-outage-"))
    folder.chmod(0o755)
    server = PgServer(folder / "pg")
    database = PostgresDatabase(server.start(), max_size=1, timeout=4)
    try:
        assert database.conn.execute("SELECT 1").fetchone()[0] == 1
        database.release_connection()
        server.stop()
        down = time.monotonic()
        with pytest.raises(PgOperationalError):  # the pooled connection died with the server
            database.conn.execute("SELECT 1")
        database.release_connection()
        with pytest.raises(PgOperationalError):  # the pool's own timeout
            database.conn
        started = time.monotonic()
        with pytest.raises(PgOperationalError):
            database.conn
        assert time.monotonic() - started < 2.5
        time.sleep(max(0.0, down + 16.5 - time.monotonic()))  # past the back-off's 15 s try
        server.resume()
        back = time.monotonic()
        while True:
            try:
                assert database.conn.execute("SELECT 1").fetchone()[0] == 1
                break
            except PgOperationalError:
                assert time.monotonic() - back < 8, "still no connection 8 s after the database"
        database.release_connection()
    finally:
        database.close()
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.once  # a cluster of its own, restarted
def test_connections_a_restart_ended_are_replaced_at_checkout_not_failed_on_a_request():
    """Each pooled connection the restart had ended failed one request, whenever it came
    (503s and failed health checks a minute after the database was back)."""
    import time
    from pgserver import PgServer

    folder = Path(tempfile.mkdtemp(prefix="lt-pg-restart-"))
    folder.chmod(0o755)
    server = PgServer(folder / "pg")
    database = PostgresDatabase(server.start(), min_size=2, max_size=2, timeout=4)
    try:
        held = [database.pool.getconn() for _ in range(2)]  # both made and idle in the pool
        for raw in held:
            database.pool.putconn(raw)
        server.stop()
        server.resume()
        time.sleep(0.5)
        for _ in range(4):  # each checkout, in turn, after the restart
            assert database.conn.execute("SELECT 1").fetchone()[0] == 1
            database.release_connection()
    finally:
        database.close()
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
