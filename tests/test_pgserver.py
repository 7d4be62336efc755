"""tests/pgserver.py starts a real PostgreSQL (as root too), and pgtest gives each test data
folder an empty database of its own on it and drops it afterwards."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

import pgtest
from lobbytalks.settings import Settings
from pgserver import PgServer

PGSERVER = Path(__file__).with_name("pgserver.py")


def databases(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {row[0] for row in conn.execute("SELECT datname FROM pg_database")}


def test_the_session_server_is_postgresql_15_or_newer_without_durability(pg_server):
    with psycopg.connect(pg_server.url) as conn:
        version = conn.execute("SHOW server_version_num").fetchone()[0]
        settings = dict(conn.execute("SELECT name, setting FROM pg_settings WHERE name IN "
                                     "('fsync', 'synchronous_commit', 'full_page_writes')"))
    assert int(version) >= 150000
    assert settings == {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
    assert pg_server.url == f"postgresql://lobbytalks@127.0.0.1:{pg_server.port}/postgres"


def test_a_database_is_created_used_and_dropped(pg_server):
    url = pgtest.with_database(pg_server.url, "t_scratch")
    with psycopg.connect(pg_server.url, autocommit=True) as admin:
        admin.execute('CREATE DATABASE "t_scratch"')
    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
        conn.execute("INSERT INTO notes VALUES (%(id)s, %(text)s)", {"id": 1, "text": "备份"})
        assert conn.execute("SELECT text FROM notes").fetchone() == ("备份",)
    assert "t_scratch" in databases(pg_server.url)
    with psycopg.connect(pg_server.url, autocommit=True) as admin:
        admin.execute('DROP DATABASE "t_scratch"')
    assert "t_scratch" not in databases(pg_server.url)


def test_each_data_folder_gets_its_own_database_until_dropped(pg_server, tmp_path, monkeypatch):
    monkeypatch.setattr(pgtest, "ADMIN_URL", pg_server.url)
    monkeypatch.setattr(pgtest, "_made", {})
    first, second = tmp_path / "a", tmp_path / "b"
    url = pgtest.url_for(first)
    assert pgtest.url_for(first) == url  # a restarted server finds its data
    assert pgtest.url_for(second) != url
    assert pgtest.env_for(second) == {"LOBBYTALKS_DATABASE_URL": pgtest.url_for(second)}
    names = {u.rsplit("/", 1)[1] for u in (url, pgtest.url_for(second))}
    assert names <= databases(pg_server.url)
    held = psycopg.connect(url)  # an app left open must not block the drop
    pgtest.drop(pgtest.made())
    held.close()
    assert not names & databases(pg_server.url) and pgtest.made() == set()


def test_without_the_variable_everything_stays_on_sqlite(tmp_path, monkeypatch):
    monkeypatch.setattr(pgtest, "ADMIN_URL", None)
    assert pgtest.url_for(tmp_path) is None and pgtest.env_for(tmp_path) == {}


def test_sqlite_bound_tests_are_skipped_with_a_reason_on_postgresql(monkeypatch, request):
    monkeypatch.setattr(pgtest, "ADMIN_URL", "postgresql://nobody@127.0.0.1:1/postgres")
    items = [request.node]
    if "database_url" not in Settings.__dataclass_fields__:
        # this build has no PostgreSQL backend: asking for one must stop the run, loudly
        with pytest.raises(pytest.UsageError, match="no PostgreSQL backend"):
            pgtest.skip_sqlite_bound(items)
        return
    request.node.add_marker(pytest.mark.once)
    pgtest.skip_sqlite_bound(items)
    skip = request.node.get_closest_marker("skip")
    assert skip is not None and "default backend" in skip.kwargs["reason"]


def test_the_script_starts_and_stops_a_server():
    folder = Path(tempfile.mkdtemp(prefix="lobbytalks-pg-script-"))
    folder.chmod(0o755)
    run = [sys.executable, str(PGSERVER)]
    started = subprocess.run([*run, "start", str(folder / "pg")], capture_output=True, text=True,
                             timeout=120)
    assert started.returncode == 0, started.stderr
    url = started.stdout.strip()
    try:
        assert url.startswith("postgresql://lobbytalks@127.0.0.1:")
        assert "postgres" in databases(url)
    finally:
        stopped = subprocess.run([*run, "stop", str(folder / "pg")], capture_output=True,
                                 text=True, timeout=60)
    assert stopped.returncode == 0, stopped.stderr
    assert not (folder / "pg" / "data" / "postmaster.pid").exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=2)
    PgServer(folder / "pg").stop()  # stopping a stopped server is harmless
    shutil.rmtree(folder)


def test_the_script_explains_its_usage():
    done = subprocess.run([sys.executable, str(PGSERVER)], capture_output=True, text=True)
    assert done.returncode == 2 and "usage: pgserver.py start|stop DIR" in done.stderr
