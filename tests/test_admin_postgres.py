"""The admin commands through the real CLI against a real PostgreSQL: init, check, admin,
rotate-key, healthcheck work there; backup and restore name the pg_dump/pg_restore commands
that do the job, and those commands, run as printed, give a database that checks ok."""
from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
import uuid

import psycopg
import pytest
import requests

import pgtest
from conftest import FAST_ARGON2_KIB, LiveServer

pytestmark = pytest.mark.once  # the target is always the session's PostgreSQL

PASSWORD = "pg-pass-never-shown"


def new_database(pg_server, request) -> str:
    name = f"adm_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_server.url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(pg_server.url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    request.addfinalizer(drop)
    return pgtest.with_database(pg_server.url, name).replace("lobbytalks@",
                                                             f"lobbytalks:{PASSWORD}@")


@pytest.fixture
def pg_url(pg_server, request) -> str:
    return new_database(pg_server, request)


@pytest.fixture
def cli(pg_url, tmp_path):
    """Run `lobbytalks ARGS` on the PostgreSQL database, the key in tmp_path/data."""
    def run(*args: str, url: str | None = None) -> subprocess.CompletedProcess:
        env = {**os.environ, "LOBBYTALKS_DATABASE_URL": url or pg_url,
               "LOBBYTALKS_ARGON2_MEMORY_KIB": str(FAST_ARGON2_KIB)}
        done = subprocess.run([sys.executable, "-m", "lobbytalks", *args, *(
            () if args[0] == "healthcheck" else ("--data-dir", str(tmp_path / "data")))],
            capture_output=True, text=True, env=env, timeout=120)
        assert PASSWORD not in done.stdout + done.stderr
        return done
    return run


def rows(url: str, sql: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


def seeded(tmp_path, pg_url) -> LiveServer:
    """A server on the database with one user who asked a question with private context."""
    server = LiveServer(tmp_path / "data", env={"LOBBYTALKS_DATABASE_URL": pg_url})
    s = requests.Session()
    assert s.post(server.url + "/api/community", json={
        "action": "register", "username": "ada", "password": "correct horse 1"}).ok
    assert s.post(server.url + "/api/communities", json={"action": "join", "community": "lobby"}).ok
    r = s.post(server.url + "/api/community", json={
        "action": "topic", "title": "如何在 PostgreSQL 上做热备份？", "privateContext": "私密：库在 10.0.0.5"})
    assert r.ok, r.text
    return server


def test_init_then_check_reports_the_schema_and_every_table(cli, pg_url):
    done = cli("init")
    assert done.returncode == 0, done.stderr
    assert "database ready: postgresql://lobbytalks:****@" in done.stdout
    version = rows(pg_url, "SELECT MAX(version) FROM schema_migrations")[0][0]
    done = cli("check")
    assert done.returncode == 0, done.stderr
    assert f"schema version: {version} (this LobbyTalks knows up to {version}; up to date)" \
        in done.stdout
    assert "foreign keys: ok" in done.stdout and "result: ok" in done.stdout
    assert "pg_amcheck" in done.stdout


def test_check_finds_an_orphan_written_with_triggers_off(cli, pg_url):
    assert cli("init").returncode == 0
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")  # foreign keys not enforced
        conn.execute("INSERT INTO memberships (community_id, user_id, created) "
                     "VALUES ('lobby', 987654, 0)")
    done = cli("check")
    assert done.returncode == 1
    assert re.search(r"memberships: 1 row\(s\) point to no users", done.stdout)
    assert "result: PROBLEMS FOUND" in done.stdout


def test_admin_grant_log_revoke_on_postgresql(cli, pg_url, tmp_path):
    seeded(tmp_path, pg_url).stop()
    assert cli("admin", "grant", "ada").stdout.strip() == "ada: admin granted"
    assert rows(pg_url, "SELECT is_admin FROM users WHERE username = 'ada'") == [(1,)]
    assert cli("admin", "grant", "nobody").returncode == 1
    assert cli("admin", "revoke", "ada").returncode == 0
    log = cli("admin", "log")
    assert log.returncode == 0
    assert [line.split("\t")[1:4] for line in log.stdout.splitlines()] == [
        ["(command line)", "grant_admin", "user:ada"], ["(command line)", "revoke_admin", "user:ada"]]
    assert rows(pg_url, "SELECT is_admin FROM users WHERE username = 'ada'") == [(0,)]


def test_rotate_key_refuses_while_a_server_is_connected_then_reseals(cli, pg_url, tmp_path):
    server = seeded(tmp_path, pg_url)
    try:
        done = cli("rotate-key")
        assert done.returncode == 1 and "stop the server before rotating the key" in done.stderr
        assert rows(pg_url, "SELECT DISTINCT private_key_id FROM question_versions "
                            "WHERE private_context IS NOT NULL") == [("k1",)]
        assert cli("healthcheck", server.url).stdout.strip() == "ok"
    finally:
        server.stop()
    assert cli("healthcheck", server.url).returncode == 1
    done = cli("rotate-key")
    assert done.returncode == 0, done.stderr
    assert "re-encrypted 1 private context value(s) under key k2" in done.stdout
    assert rows(pg_url, "SELECT DISTINCT private_key_id FROM question_versions "
                        "WHERE private_context IS NOT NULL") == [("k2",)]
    again = seeded_login(tmp_path, pg_url)  # the new key opens what it re-sealed
    assert "私密：库在 10.0.0.5" in again


def seeded_login(tmp_path, pg_url) -> str:
    server = LiveServer(tmp_path / "data", env={"LOBBYTALKS_DATABASE_URL": pg_url})
    try:
        s = requests.Session()
        assert s.post(server.url + "/api/community", json={
            "action": "login", "username": "ada", "password": "correct horse 1"}).ok
        topic = rows(pg_url, "SELECT id FROM topics")[0][0]
        return s.get(server.url + "/api/community", params={"topic": topic}).text
    finally:
        server.stop()


def dump_line(said: str) -> str:
    return next(line.strip() for line in said.splitlines()
                if line.strip().startswith("(umask 077 && pg_dump "))


def test_rotate_key_waits_for_a_session_that_is_ending(cli, pg_url, tmp_path):
    """Right after a server stopped, PostgreSQL still listed its connections for a moment,
    and rotate-key said to stop the server that was stopped (a CI run caught it)."""
    import threading
    seeded(tmp_path, pg_url).stop()
    ending = psycopg.connect(pg_url)  # a session that goes a second after the command starts
    threading.Timer(1.0, ending.close).start()
    done = cli("rotate-key")
    assert done.returncode == 0, done.stderr
    assert rows(pg_url, "SELECT DISTINCT private_key_id FROM question_versions "
                        "WHERE private_context IS NOT NULL") == [("k2",)]


def test_the_dump_command_reads_the_url_where_it_is_kept(cli, pg_url, tmp_path):
    """With only LOBBYTALKS_DATABASE_URL_FILE set (the compose file's way), the printed
    pg_dump line reads the file: "$LOBBYTALKS_DATABASE_URL" would be empty there."""
    url_file = tmp_path / "database-url"
    url_file.write_text(pg_url)
    env = {k: v for k, v in os.environ.items() if k != "LOBBYTALKS_DATABASE_URL"}
    dump = tmp_path / "by-file.dump"
    done = subprocess.run(
        [sys.executable, "-m", "lobbytalks", "backup", str(dump), "--data-dir",
         str(tmp_path / "data")], capture_output=True, text=True, timeout=120,
        env={**env, "LOBBYTALKS_DATABASE_URL_FILE": str(url_file)})
    assert done.returncode == 1 and PASSWORD not in done.stdout + done.stderr
    command = dump_line(done.stderr)
    assert command.endswith('"$(cat "$LOBBYTALKS_DATABASE_URL_FILE")")')
    ran = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                         env={**env, "LOBBYTALKS_DATABASE_URL_FILE": str(url_file)})
    assert ran.returncode == 0 and dump.stat().st_size > 0, ran.stderr


def test_backup_and_restore_name_the_pg_commands_that_work(cli, pg_url, pg_server, request,
                                                           tmp_path):
    seeded(tmp_path, pg_url).stop()
    dump = tmp_path / "community.dump"
    done = cli("backup", str(dump))
    assert done.returncode == 1 and not dump.exists()
    assert "The secret key is not in the dump" in done.stderr
    command = dump_line(done.stderr)
    ran = subprocess.run(["bash", "-c", "umask 022; " + command],  # a usual umask
                         capture_output=True, text=True,
                         env={**os.environ, "LOBBYTALKS_DATABASE_URL": pg_url})
    assert ran.returncode == 0, ran.stderr
    assert stat.S_IMODE(dump.stat().st_mode) == 0o600  # password hashes, session digests

    done = cli("restore", str(dump), "--yes")
    assert done.returncode == 1
    restore = next(l.strip() for l in done.stderr.splitlines() if l.strip().startswith("pg_restore"))
    target = new_database(pg_server, request)  # the "createdb NEWNAME" step
    ran = subprocess.run(shlex.split(restore.replace("postgresql://USER@HOST/NEWNAME", target)),
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert rows(target, "SELECT username FROM users") == [("ada",)]
    checked = cli("check", url=target)
    assert checked.returncode == 0 and "result: ok" in checked.stdout
    assert "私密：库在 10.0.0.5" in seeded_login(tmp_path, target)  # the same key opens it
