"""`lobbytalks migrate-db`: a community seeded through the real API on SQLite is copied into
an empty PostgreSQL database and served from there unchanged; a non-empty target and a
copy that does not verify leave the target as it was.

SQLite is the source by nature and PostgreSQL the target, so this runs once (the default
pass) against the session's throwaway PostgreSQL.
"""
from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg
import pytest
import requests

import pgtest
from conftest import LiveServer, Person, asked_with_private, good_result, joined_person, settings_for
from lobbytalks import create_app, migrate_db
from lobbytalks.db import schema as db_schema
from lobbytalks.services import accounts

pytestmark = pytest.mark.once

PRIVATE = "题主的私密背景：生产库 12 GB，夜间写入不停"
PASSWORD = "s3cret-pg-pass"


@pytest.fixture
def empty_target(pg_server):
    """A new, empty database on the session's PostgreSQL, with a password in its URL (trust
    auth ignores it) so that the tests can see it is never echoed."""
    name = f"mig_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_server.url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = pgtest.with_database(pg_server.url, name).replace("lobbytalks@", f"lobbytalks:{PASSWORD}@")
    yield url
    with psycopg.connect(pg_server.url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def pg_tables(url: str) -> dict[str, int]:
    """Every table of the target and its row count."""
    with psycopg.connect(url) as conn:
        names = [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            " AND table_type = 'BASE TABLE'")]
        return {n: conn.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0] for n in names}


def sqlite_counts(path: Path, tables: list[str]) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        return {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    import os
    return subprocess.run([sys.executable, "-m", "lobbytalks", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=120)


def answer(agent, topic: str, **overrides) -> str:
    task = agent.claim(topic).get_json()["task"]["id"]
    r = agent.post("submit_result", taskId=task, **good_result(**overrides))
    assert r.status_code == 200, r.get_json()
    return r.get_json()["messageId"]


@pytest.fixture
def community(tmp_path):
    """A SQLite community seeded through the HTTP API: people, agents, a question with
    private context, answers, a published card, notifications, memories, moderation, a
    report."""
    data = tmp_path / "src"
    app = create_app(settings_for(data))
    asker, topic, author, agent = asked_with_private(
        app, "如何在 SQLite 中安全地做在线备份？", PRIVATE, "查证虾")
    first = answer(agent, topic)
    second = answer(agent, topic, conclusion="也可以用 VACUUM INTO 在运行时生成一致快照，但会占用额外磁盘空间 [S1]。")
    assert author.web_post("share", message=first, sharePublic=True).status_code == 200
    assert asker.web_post("card_preview", topic=topic).status_code == 200
    assert asker.web_post("card_publish", topic=topic).status_code == 200
    admin = Person(app).register()
    assert accounts.set_admin(app.config["LOBBYTALKS"].db, admin.username, True)
    assert admin.web_post("hide_answer", message=second, reason="重复").status_code == 200
    other = joined_person(app)
    plain = other.ask(title="PostgreSQL 的 COPY 比 INSERT 快多少？", description="批量导入")
    assert asker.web_post("report", topic=plain, reason="标题像广告").status_code == 200
    app.config["LOBBYTALKS"].db.close()
    return {"data": data, "db": data / "lobbytalks.db", "topic": topic, "plain": plain,
            "asker": asker, "agent": agent}


def served_views(server: LiveServer, seeded: dict) -> dict:
    """What a server answers for the seeded community: the agent API, the pages, search."""
    bearer = {"Authorization": f"Bearer {seeded['agent'].token}"}
    cookies = {c.key: c.value for c in seeded["asker"].http._cookies.values()}

    def api(action: str, **params) -> dict:
        r = requests.get(server.url + "/api/external", params={"action": action, **params},
                         headers=bearer, timeout=10)
        assert r.status_code == 200, r.text
        return r.json()

    def page(path: str, **params) -> str:
        r = requests.get(server.url + path, params=params, cookies=cookies, timeout=10)
        assert r.status_code == 200, r.text
        return re.sub(r'(nonce|csrf[-_a-z]*|value)="[^"]*"', r'\1=""', r.text)

    return {
        "topics": api("list_topics"),
        "context": api("get_context", topic=seeded["topic"]),
        "question_json": requests.get(server.url + "/api/community", cookies=cookies, timeout=10,
                                      params={"topic": seeded["topic"]}).json(),
        "question_page": page(f"/q/{seeded['topic']}", lang="en"),
        "search": re.findall(r'href="/q/([^"]+)"', page("/questions", q="备份")),
        "search_copy": re.findall(r'href="/q/([^"]+)"', page("/questions", q="COPY")),
    }


def test_a_seeded_community_moves_to_postgresql_and_is_served_unchanged(community, empty_target):
    done = run_cli("migrate-db", "--data-dir", str(community["data"]), "--to", empty_target)
    assert done.returncode == 0, done.stderr
    out = done.stdout + done.stderr
    assert PASSWORD not in out
    assert "The secret key is not in the database and stays where it is" in out

    copied = pg_tables(empty_target)
    source = sqlite_counts(community["db"], [t for t in copied if t not in
                                             ("schema_migrations", "topic_search")])
    printed = dict(re.findall(r"^(\w+)\s+(\d+) rows  sha256-sum [0-9a-f]{64}$", done.stdout, re.M))
    assert {t: int(n) for t, n in printed.items()} == source
    assert {t: copied[t] for t in source} == source
    for table in ("users", "profiles", "tokens", "sessions", "topics", "messages", "tasks",
                  "answer_cards", "notifications", "memories", "audit_log", "reports"):
        assert source[table] > 0, table
    assert copied["topic_search"] == source["topics"]  # rebuilt for every copied question

    on_sqlite = LiveServer(community["data"])
    try:
        expected = served_views(on_sqlite, community)
    finally:
        on_sqlite.stop()
    on_pg = LiveServer(community["data"], env={"LOBBYTALKS_DATABASE_URL": empty_target})
    try:
        got = served_views(on_pg, community)
        # New rows get ids after the copied ones: a new question is asked and found.
        fresh = requests.Session()
        assert fresh.post(on_pg.url + "/api/community", json={
            "action": "register", "username": "newcomer", "password": "correct horse 1"}).ok
    finally:
        on_pg.stop()
    assert PRIVATE in str(expected["question_json"])  # the asker reads their private context
    assert got == expected
    assert expected["search"] == [community["topic"]]
    assert expected["search_copy"] == [community["plain"]]
    with psycopg.connect(empty_target) as conn:
        assert conn.execute("SELECT COUNT(*) FROM users WHERE username = 'newcomer'").fetchone()[0] == 1


def test_a_target_that_is_not_empty_is_refused_and_left_as_it_was(community, empty_target):
    with psycopg.connect(empty_target, autocommit=True) as conn:
        conn.execute("CREATE TABLE notes (id BIGINT PRIMARY KEY)")
        conn.execute("INSERT INTO notes VALUES (7)")
    done = run_cli("migrate-db", "--data-dir", str(community["data"]), "--to", empty_target)
    assert done.returncode == 1
    assert "the target database is not empty (it has tables: notes)" in done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    assert pg_tables(empty_target) == {"notes": 1}


def test_a_target_already_migrated_by_a_server_is_refused(community, empty_target, tmp_path):
    served = run_cli("init", "--data-dir", str(tmp_path / "other"),
                     env={"LOBBYTALKS_DATABASE_URL": empty_target})
    assert served.returncode == 0, served.stderr
    before = pg_tables(empty_target)
    done = run_cli("migrate-db", "--data-dir", str(community["data"]),
                   env={"LOBBYTALKS_DATABASE_URL": empty_target})  # the configured target
    assert done.returncode == 1 and "is not empty" in done.stderr
    assert pg_tables(empty_target) == before


def test_a_copy_that_does_not_verify_rolls_back_to_an_empty_target(community, empty_target,
                                                                   monkeypatch):
    real_copy = migrate_db._copy_table

    def lossy_copy(src, pg, table, columns):
        real_copy(src, pg, table, columns)
        if table == "messages":  # one answer arrives altered
            pg.execute("UPDATE messages SET text = text || ' ' WHERE id = "
                       "(SELECT MIN(id) FROM messages)")
    monkeypatch.setattr(migrate_db, "_copy_table", lossy_copy)
    with pytest.raises(migrate_db.MigrationError, match="table messages: the copy differs"):
        migrate_db.migrate(community["db"], empty_target, now=0)
    assert pg_tables(empty_target) == {}


def test_a_source_behind_the_latest_schema_is_refused(tmp_path, empty_target):
    old = tmp_path / "old.db"
    with sqlite3.connect(old) as conn:
        conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
                     "name TEXT NOT NULL, applied INTEGER NOT NULL)")
        conn.execute("INSERT INTO schema_migrations VALUES (1, 'initial', 0)")
    done = run_cli("migrate-db", "--db", str(old), "--to", empty_target)
    assert done.returncode == 1
    assert "is at schema version 1" in done.stderr and "lobbytalks init" in done.stderr
    assert pg_tables(empty_target) == {}


def test_without_a_postgresql_target_it_says_how_to_name_one(community, tmp_path):
    done = run_cli("migrate-db", "--data-dir", str(community["data"]),
                   env={"LOBBYTALKS_DATABASE_URL": ""})
    assert done.returncode == 2
    assert "--to URL, --to-file PATH or LOBBYTALKS_DATABASE_URL" in done.stderr


def test_the_url_can_come_from_a_file(community, empty_target, tmp_path):
    url_file = tmp_path / "db-url"
    url_file.write_text(empty_target + "\n")
    done = run_cli("migrate-db", "--data-dir", str(community["data"]), "--to-file", str(url_file))
    assert done.returncode == 0, done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    assert pg_tables(empty_target)["topics"] == 2


def test_a_backup_without_its_key_beside_it_is_told_where_the_key_is(community, empty_target,
                                                                      tmp_path):
    """The docs' own route (a final backup, migrated from its folder): no secret.key sits
    beside it, so the message must not name one there as if it existed."""
    backups = tmp_path / "backups"
    done = run_cli("backup", str(backups / "final.db"), "--data-dir", str(community["data"]))
    assert done.returncode == 0, done.stderr
    done = run_cli("migrate-db", "--db", str(backups / "final.db"), "--to", empty_target)
    assert done.returncode == 0, done.stderr
    assert not (backups / "secret.key").exists()
    assert sorted(p.name for p in backups.iterdir()) == ["final.db"]  # no lock file left
    assert f"there is none beside {backups / 'final.db'}" in done.stdout
    assert "FILE.key beside a backup made with --with-key" in done.stdout
    assert str(backups / "secret.key") not in done.stdout


def test_a_backup_named_by_db_goes_to_the_configured_database(community, empty_target, tmp_path):
    """--db took the database's place in the settings, the configured URL with it: the
    docs' route (a final backup by --db, the target from the environment) said to name one."""
    backups = tmp_path / "backups"
    done = run_cli("backup", str(backups / "final.db"), "--data-dir", str(community["data"]))
    assert done.returncode == 0, done.stderr
    url_file = tmp_path / "db-url"
    url_file.write_text(empty_target + "\n")
    done = run_cli("migrate-db", "--db", str(backups / "final.db"),
                   env={"LOBBYTALKS_DATABASE_URL": "", "LOBBYTALKS_DATABASE_URL_FILE": str(url_file)})
    assert done.returncode == 0, done.stderr
    assert pg_tables(empty_target)["topics"] == 2


def test_a_url_file_that_is_no_text_is_one_line(community, tmp_path):
    url_file = tmp_path / "db-url"
    url_file.write_bytes(b"\xff\xfe\x00bad")
    done = run_cli("migrate-db", "--data-dir", str(community["data"]), "--to-file", str(url_file))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"lobbytalks: --to-file: {url_file} is not UTF-8 text"


def test_a_backup_with_its_key_beside_it_is_told_that_key(community, empty_target, tmp_path):
    """The final backup taken with --with-key, as docs/admin.md says: its FILE.key is named."""
    backups = tmp_path / "backups"
    done = run_cli("backup", "--with-key", str(backups / "final.db"),
                   "--data-dir", str(community["data"]))
    assert done.returncode == 0, done.stderr
    done = run_cli("migrate-db", "--db", str(backups / "final.db"), "--to", empty_target)
    assert done.returncode == 0, done.stderr
    assert f"it is in {backups / 'final.db.key'}, written with the backup" in done.stdout
    assert "there is none beside" not in done.stdout


def test_a_running_server_is_warned_about_and_its_snapshot_copied(community, empty_target):
    server = LiveServer(community["data"])
    try:
        done = run_cli("migrate-db", "--data-dir", str(community["data"]), "--to", empty_target)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    assert "a LobbyTalks server is using" in done.stderr and "NOT moved" in done.stderr
    assert pg_tables(empty_target)["topics"] == 2


def test_the_checksum_ignores_row_order_but_not_types_or_values():
    rows = [(1, "备份", b"\x00", None, 1.5), (2, "b", b"", 0, 0.0)]
    assert migrate_db.checksum(rows) == migrate_db.checksum(list(reversed(rows)))
    assert migrate_db.checksum(rows)[0] == 2
    for changed in ([("1", "备份", b"\x00", None, 1.5)], [(1, "备份", "\x00", None, 1.5)],
                    [(1, "备份", b"\x00", 0, 1.5)], [(1, "备份", b"\x00", None, 1)]):
        assert migrate_db.checksum(changed + rows[1:]) != migrate_db.checksum(rows)


def test_two_copies_at_once_into_one_new_database_keep_the_first_and_refuse_the_second(
        community, empty_target, tmp_path):
    """Both looked at an empty target before either took the migration lock, so the second
    went on to empty the first's committed copy and put its own in, and both said
    "verified". Held here first, the lock makes both wait; then one copies, the other
    finds its tables."""
    other = tmp_path / "other"
    other_app = create_app(settings_for(other))
    joined_person(other_app, username="only_in_the_other")
    other_app.config["LOBBYTALKS"].db.close()
    import os
    with psycopg.connect(empty_target, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (db_schema.PG_MIGRATE_LOCK,))
        runs = [subprocess.Popen([sys.executable, "-m", "lobbytalks", "migrate-db", "--data-dir",
                                  str(source), "--to", empty_target], text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ)
                for source in (community["data"], other)]
        waiting = "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        for _ in range(300):
            if holder.execute(waiting).fetchone()[0] == 2:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the two copies never waited for the migration lock")
        holder.execute("SELECT pg_advisory_unlock(%s)", (db_schema.PG_MIGRATE_LOCK,))
    outcomes = [run.communicate(timeout=120) + (run.returncode,) for run in runs]
    assert sorted(code for _, _, code in outcomes) == [0, 1], outcomes
    refused = next(err for _, err, code in outcomes if code == 1)
    assert "the target database is not empty" in refused
    winner = 0 if outcomes[0][2] == 0 else 1
    with psycopg.connect(empty_target) as conn:
        names = {r[0] for r in conn.execute("SELECT username FROM users")}
    assert ("only_in_the_other" in names) == (winner == 1)
    assert (community["asker"].username in names) == (winner == 0)


@pytest.mark.parametrize("given", ["--to", "--to-file"])
def test_a_target_with_an_unescaped_password_is_refused_without_showing_it(tmp_path, given):
    """The driver read the part of the password after "@" as the host and said so: "failed
    to resolve host 'SecretPart42'". LOBBYTALKS_DATABASE_URL had the rule; the flags not."""
    url = "postgresql://lt:Hunter@SecretPart42/tail#x@127.0.0.1:1/lt"
    value = url
    if given == "--to-file":
        value = str(tmp_path / "target-url")
        Path(value).write_text(url + "\n", "utf-8")
    done = run_cli("migrate-db", "--data-dir", str(tmp_path / "data"), given, value)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"lobbytalks: {given}: what comes before the last")
    assert "SecretPart42" not in done.stdout + done.stderr and "Traceback" not in done.stderr
