"""The base: settings, storage, migrations, health, the CLI and a real server process."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests

from conftest import LiveServer, free_port, web_session
from lobbytalks import db as dbmod
from lobbytalks.settings import Settings, SettingsError


def test_settings_precedence_flags_over_env_over_defaults():
    env = {"LOBBYTALKS_PORT": "9001", "LOBBYTALKS_HOST": "0.0.0.0", "LOBBYTALKS_RATE_CLAIM": "5/minute"}
    assert Settings.load({}).port == 8000
    from_env = Settings.load(env)
    assert (from_env.port, from_env.host, from_env.rate_claim) == (9001, "0.0.0.0", "5/minute")
    assert Settings.load(env, port=9100).port == 9100


def test_a_flag_naming_the_database_wins_over_every_way_the_environment_names_it(tmp_path):
    env = {"LOBBYTALKS_DB": "/srv/other.db", "LOBBYTALKS_DATA_DIR": "/srv/data"}
    assert Settings.load(env).db_path == Path("/srv/other.db")
    assert Settings.load(env, data_dir=str(tmp_path)).db_path == tmp_path / "lobbytalks.db"
    assert Settings.load(env, db="/b/backup.db").db_path == Path("/b/backup.db")
    sqlite_url = {**env, "LOBBYTALKS_DATABASE_URL": "sqlite:////srv/url.db"}
    assert Settings.load(sqlite_url).db_path == Path("/srv/url.db")
    assert Settings.load(sqlite_url, data_dir=str(tmp_path)).db_path == tmp_path / "lobbytalks.db"
    assert Settings.load(sqlite_url, db="/b/backup.db").db_path == Path("/b/backup.db")
    postgres = {"LOBBYTALKS_DATABASE_URL": "postgresql://lt@db/lt"}
    assert not Settings.load(postgres, db="/b/backup.db").uses_postgres
    # the data folder alone holds PostgreSQL's key: the URL stays
    assert Settings.load(postgres, data_dir=str(tmp_path)).uses_postgres


def test_settings_reject_bad_values():
    with pytest.raises(ValueError):
        Settings.load({"LOBBYTALKS_PORT": "eighty"})


def test_secret_settings_accept_files(tmp_path):
    secret = tmp_path / "admin-password"
    secret.write_text("from a file!!\n")
    loaded = Settings.load({"LOBBYTALKS_ADMIN_USERNAME": "boss",
                            "LOBBYTALKS_ADMIN_PASSWORD_FILE": str(secret)})
    assert loaded.admin_password == "from a file!!"
    shown = dict((name, value) for name, value, _ in loaded.describe())
    assert shown["LOBBYTALKS_ADMIN_PASSWORD"] == "****"


def test_an_empty_value_reads_its_file_and_an_empty_file_is_refused(tmp_path):
    """`LOBBYTALKS_DATABASE_URL=` beside its _FILE (a compose file's empty default) made
    the file unread: SQLite in the data folder and a new key, each container its own."""
    url, key, empty = tmp_path / "url", tmp_path / "key", tmp_path / "empty"
    url.write_text("postgresql://lt:pw@db.example/lt\n")
    key.write_text("k1:" + "A" * 43 + "=\n")
    empty.write_text("\n")
    loaded = Settings.load({"LOBBYTALKS_DATABASE_URL": "", "LOBBYTALKS_DATABASE_URL_FILE": str(url),
                            "LOBBYTALKS_SECRET_KEY": "", "LOBBYTALKS_SECRET_KEY_FILE": str(key)})
    assert loaded.uses_postgres and loaded.database_url == "postgresql://lt:pw@db.example/lt"
    assert loaded.secret_key == "k1:" + "A" * 43 + "="
    assert Settings.load({"LOBBYTALKS_DATABASE_URL": "postgresql://direct/x",
                          "LOBBYTALKS_DATABASE_URL_FILE": str(url)}).database_url == "postgresql://direct/x"
    with pytest.raises(SettingsError) as refused:
        Settings.load({"LOBBYTALKS_SECRET_KEY_FILE": str(empty)})
    assert str(refused.value) == f"LOBBYTALKS_SECRET_KEY_FILE: {empty} is empty"


def test_a_setting_file_that_is_no_utf8_text_is_one_line_naming_it(tmp_path):
    """Its refusal failed on itself: a traceback (AttributeError: no strerror)."""
    saved = tmp_path / "utf16-password"
    saved.write_bytes("longenough123".encode("utf-16"))
    with pytest.raises(SettingsError) as refused:
        Settings.load({"LOBBYTALKS_ADMIN_USERNAME": "boss",
                       "LOBBYTALKS_ADMIN_PASSWORD_FILE": str(saved)})
    assert str(refused.value) == (f"LOBBYTALKS_ADMIN_PASSWORD_FILE: cannot read {saved}: it "
                                  f"is not UTF-8 text")


def test_a_setting_file_that_is_a_pipe_or_huge_is_refused_at_once(tmp_path):
    """A FIFO with no writer hung every command; 200 MB of NULs was taken for a password."""
    pipe, huge = tmp_path / "pipe", tmp_path / "huge"
    os.mkfifo(pipe)
    huge.write_bytes(b"\0" * (64 * 1024 + 1))
    for path, said in ((pipe, "it is not a regular file"),
                       (huge, "is larger than a setting can be (64 KiB)")):
        with pytest.raises(SettingsError) as refused:
            Settings.load({"LOBBYTALKS_SMTP_PASSWORD_FILE": str(path)})
        assert str(refused.value).startswith("LOBBYTALKS_SMTP_PASSWORD_FILE: ")
        assert said in str(refused.value)


def test_every_setting_is_documented_in_the_readme():
    readme = open("README.md", encoding="utf-8").read()
    for name, _, _ in Settings().describe():
        assert f"`{name}" in readme, name


@pytest.mark.sqlite_only
def test_database_is_wal_with_foreign_keys_and_migrations_recorded(app):
    conn = app.config["LOBBYTALKS"].db.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [m[0] for m in dbmod.migrations()]


def test_migrations_are_idempotent(settings):
    from lobbytalks import create_app
    db = create_app(settings).config["LOBBYTALKS"].db
    assert dbmod.migrate(db.conn, 0) == []
    assert db.value("SELECT COUNT(*) FROM communities WHERE id = 'lobby'") == 1


@pytest.mark.sqlite_only
def test_newer_schema_is_refused(settings):
    from lobbytalks import create_app
    create_app(settings)
    conn = sqlite3.connect(settings.db_path)
    conn.execute("INSERT INTO schema_migrations (version, name, applied) VALUES (9999, 'future', 0)")
    conn.commit()
    with pytest.raises(dbmod.SchemaTooNew):
        create_app(settings)


def test_query_loader_rejects_duplicate_names():
    queries = dbmod.Queries.__new__(dbmod.Queries)
    queries._sql = {}
    queries._load("a.sql", "-- name: one\nSELECT 1;\n")
    with pytest.raises(ValueError):
        queries._load("b.sql", "-- name: one\nSELECT 2;\n")
    assert queries.one == "SELECT 1"


@pytest.mark.sqlite_only
def test_every_named_query_compiles(app):
    conn = app.config["LOBBYTALKS"].db.conn
    for name, sql in dbmod.Q._sql.items():
        if sql.lstrip().upper().startswith(("SELECT", "UPDATE", "INSERT", "DELETE")):
            try:
                dialect_sql = dbmod.Q.for_dialect(sql, getattr(conn, "dialect", "sqlite"))
                conn.execute("EXPLAIN " + dialect_sql, _null_params(dialect_sql))
            except sqlite3.Error as exc:  # pragma: no cover - the assertion names the query
                pytest.fail(f"query {name} does not compile: {exc}")


def _null_params(sql: str):
    import re
    named = re.findall(r":([a-z_][a-z0-9_]*)", sql)
    if named:
        return {n: None for n in named}
    return [None] * sql.count("?")


def test_health_is_ok(client):
    r = client.get("/healthz")
    assert r.status_code == 200 and r.get_json() == {"ok": True}


@pytest.mark.sqlite_only
@pytest.mark.parametrize("damage, error", [
    ("DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)",
     "schema not migrated"),
    ("DROP TABLE schema_migrations", "database unavailable"),
])
def test_health_is_503_when_the_schema_is_not_current(app, damage, error):
    conn = sqlite3.connect(app.config["LOBBYTALKS"].db.path)
    conn.execute(damage)
    conn.commit()
    r = app.test_client().get("/healthz")
    assert r.status_code == 503 and r.get_json() == {"ok": False, "error": error}


@pytest.mark.parametrize("method, path", [
    ("get", "/api/external/nothing-here"),
    # a doubled slash was an empty text/html 308 to the merged path, before authentication
    ("post", "/api//external/mcp"), ("get", "/api//external?action=list_communities"),
])
def test_unknown_api_path_uses_the_surface_envelope(client, method, path):
    r = getattr(client, method)(path)
    assert r.status_code == 404 and r.get_json()["code"] == "not_found"


def test_a_database_outage_is_a_503_and_one_log_line_a_request(client, monkeypatch, caplog):
    """PostgreSQL stopped under a running server: each request logged "unhandled error" and
    a traceback, as for a bug."""
    from lobbytalks.blueprints import communities
    from lobbytalks.db.errors import PgOperationalError

    def unavailable(*args, **kwargs):
        raise PgOperationalError("couldn't get a connection after 10.00 sec\nmore detail")
    monkeypatch.setattr(communities.communities, "list_page", unavailable)
    r = client.get("/api/communities")
    assert r.status_code == 503 and r.get_json()["code"] == "service_unavailable"
    assert r.headers["Retry-After"] == "5"
    [record] = [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    assert record.levelname == "WARNING" and record.exc_info is None
    assert record.getMessage() == ("GET /api/communities: the database is unavailable "
                                   "(couldn't get a connection after 10.00 sec); answered 503")


@pytest.mark.sqlite_only
def test_a_full_disk_is_a_503_and_one_log_line_a_request_until_space_is_freed(app, caplog):
    """Each write refused for want of space logged "unhandled error" and a 40-line
    traceback, 90 of them in 20 s, and no line saying what the operator had to do."""
    from conftest import Person
    person = Person(app).register()
    person.join()
    rt = app.config["LOBBYTALKS"]
    writer = rt.db._writer()
    pages = writer.execute("PRAGMA page_count").fetchone()[0]
    writer.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own "disk is full"
    caplog.clear()
    for n in range(200):  # until a question needs a page the file may not grow by
        r = person.web_post("topic", title=f"Question {n} " + "x" * 100, description="y" * 1400)
        if r.status_code != 200:
            break
    assert r.status_code == 503 and r.get_json()["code"] == "service_unavailable", r.get_json()
    assert r.headers["Retry-After"] == "5"
    [record] = [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    assert record.levelname == "WARNING" and record.exc_info is None
    assert record.getMessage() == (f"POST /api/community: the disk holding {rt.settings.db_path} "
                                   f"is full; answered 503")
    writer.execute(f"PRAGMA max_page_count = {2**30}")  # space freed: served again at once
    assert person.web_post("topic", title="After the disk was freed").status_code == 200


@pytest.mark.parametrize("page", ["/inbox", "/", "/tasks"])
def test_a_signed_in_page_in_an_outage_is_the_503_page(app, monkeypatch, page):
    """The error page asked the database who was signed in, failed again inside the error
    handler, and the request left the app: waitress' 500, which the server had turned into
    "400 the request could not be parsed" in JSON."""
    from conftest import Person
    from lobbytalks import auth
    from lobbytalks.db.errors import PgOperationalError

    person = Person(app).register()

    def unavailable(*args, **kwargs):
        raise PgOperationalError("terminating connection due to administrator command")
    monkeypatch.setattr(auth, "runtime", lambda: SimpleNamespace(
        db=SimpleNamespace(one=unavailable), settings=app.config["LOBBYTALKS"].settings))
    r = person.http.get(page)
    assert r.status_code == 503 and r.headers["Retry-After"] == "5"
    assert r.mimetype == "text/html" and "<html" in r.get_data(as_text=True)


def test_an_exception_escaping_the_app_is_the_server_s_503_not_the_request_s_400():
    from waitress.adjustments import Adjustments
    from waitress.utilities import InternalServerError
    from lobbytalks.http_framing import BoundedRequest, JsonErrorTask

    request = BoundedRequest(Adjustments())
    request.error, request.version = InternalServerError("unexpected"), "1.1"
    task = JsonErrorTask(SimpleNamespace(adj=Adjustments()), request)
    written: list[bytes] = []
    task.write = written.append
    task.execute()
    assert task.status == "503 Service Unavailable"
    assert ("Retry-After", "5") in task.response_headers
    assert json.loads(b"".join(written))["code"] == "service_unavailable"


@pytest.mark.sqlite_only
def test_cli_help_and_init(tmp_path):
    out = subprocess.run([sys.executable, "-m", "lobbytalks", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "serve" in out.stdout and "healthcheck" in out.stdout
    data = tmp_path / "d"
    done = subprocess.run([sys.executable, "-m", "lobbytalks", "init", "--data-dir", str(data)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    conn = sqlite3.connect(data / "lobbytalks.db")
    assert conn.execute("SELECT name FROM communities").fetchone()[0] == "虾扯淡广场"
    assert (data / "secret.key").stat().st_mode & 0o077 == 0


def test_real_server_flow_and_healthcheck_command(live_server):
    session = web_session(live_server)
    me = session.get(live_server.url + "/api/community?action=me").json()
    assert me["user"]["username"]
    check = subprocess.run([sys.executable, "-m", "lobbytalks", "healthcheck", live_server.url],
                           capture_output=True, text=True)
    assert check.returncode == 0
    # without a URL it asks the port LOBBYTALKS_PORT names
    check = subprocess.run([sys.executable, "-m", "lobbytalks", "healthcheck"],
                           capture_output=True, text=True,
                           env={**os.environ, "LOBBYTALKS_PORT": str(live_server.port)})
    assert check.returncode == 0, check.stderr
    # ... at the address LOBBYTALKS_HOST names: a server on IPv6 was asked on 127.0.0.1
    v6 = LiveServer(live_server.data_dir.parent / "v6", env={"LOBBYTALKS_HOST": "::1"})
    try:
        for host in ("::1", "::", "[::1]"):
            check = subprocess.run([sys.executable, "-m", "lobbytalks", "healthcheck"],
                                   capture_output=True, text=True, env={
                                       **os.environ, "LOBBYTALKS_HOST": host,
                                       "LOBBYTALKS_PORT": str(v6.port)})
            assert check.returncode == 0, (host, check.stderr)
    finally:
        v6.stop()
    # an address without its scheme, as a container's check is often written (spaces
    # around it, from YAML), or its port alone
    for address in (f" 127.0.0.1:{live_server.port} ", str(live_server.port)):
        check = subprocess.run([sys.executable, "-m", "lobbytalks", "healthcheck", address],
                               capture_output=True, text=True)
        assert check.returncode == 0 and check.stdout.strip() == "ok", check.stderr
    assert requests.get(live_server.url + "/healthz").json() == {"ok": True}
    # a proxy in the environment (a container inherits it) is not asked about this machine
    dead_proxy = f"http://127.0.0.1:{free_port()}"
    check = subprocess.run([sys.executable, "-m", "lobbytalks", "healthcheck", live_server.url],
                           capture_output=True, text=True,
                           env={**os.environ, "http_proxy": dead_proxy,
                                "HTTP_PROXY": dead_proxy, "no_proxy": "", "NO_PROXY": ""})
    assert check.returncode == 0 and check.stdout.strip() == "ok", check.stderr


@pytest.mark.parametrize("arguments", [
    *(["http://127.0.0.1:9", "--timeout", t] for t in ("-1", "0", "nan", "soon", "1e9")),
    ["http://[::1"], ["127.0.0.1:port"], ["ftp://127.0.0.1:21"], ["http://:8000"],
    # a traceback, or the home page fetched and called healthy
    ["http://127.0.0.1:9\\@x"], ["http://127.0.0.1:9?x=1"], ["http://127.0.0.1:9#top"],
    ["http://user:pw@127.0.0.1:9"], ["http://127.0.0.1:9/?"], ["127.0.0.1:9#"], ["0"],
    ["127.0.0.1:09"], ["http://127.0.0.1:0"],
])
def test_healthcheck_refuses_what_is_no_wait_or_no_address_as_a_usage_error(arguments):
    """It said "unhealthy: Timeout value out of range" (or "Invalid IPv6 URL"), exit 1: the
    server blamed for the command's own mistake."""
    from lobbytalks.cli import main
    with pytest.raises(SystemExit) as ended:
        main(["healthcheck", *arguments])
    assert ended.value.code == 2


def test_a_database_path_naming_a_folder_is_said_so(tmp_path, capsys):
    """"unable to open database file" named neither the path nor what was wrong with it."""
    from lobbytalks.cli import main
    folder = tmp_path / "lobbytalks.db"
    folder.mkdir()
    assert main(["init", "--db", str(folder)]) == 1
    said = capsys.readouterr().err.strip()
    assert said == (f"lobbytalks: cannot open the database {folder}: it is a folder, not a "
                    "file (LOBBYTALKS_DB and --db name the file)"), said


@pytest.mark.parametrize("answer", [
    b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html>a profile named healthz</html>",
    b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"ok\": false}",
    b"SSH-2.0-OpenSSH_9.6\r\n",  # not HTTP at all: it ended in a traceback
])
def test_healthcheck_is_ok_only_for_the_health_answer(answer, capsys):
    """Any 200 counted as healthy: /u/healthz (a person's profile) printed ok."""
    import socket
    import threading
    from lobbytalks.cli import main
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve_once():
        conn, _ = listener.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(answer)
    threading.Thread(target=serve_once, daemon=True).start()
    try:
        assert main(["healthcheck", f"http://127.0.0.1:{port}/u/healthz", "--timeout", "5"]) == 1
    finally:
        listener.close()
    out, err = capsys.readouterr()
    assert "ok" != out.strip() and "Traceback" not in err


def test_healthcheck_fails_when_nothing_listens():
    from conftest import free_port
    check = subprocess.run([sys.executable, "-m", "lobbytalks", "healthcheck",
                            f"http://127.0.0.1:{free_port()}", "--timeout", "1"],
                           capture_output=True, text=True)
    assert check.returncode == 1


@pytest.mark.sqlite_only
def test_second_server_on_the_same_database_refuses(live_server):
    from conftest import free_port
    second = subprocess.run(
        [sys.executable, "-m", "lobbytalks", "serve", "--port", str(free_port()),
         "--data-dir", str(live_server.data_dir)],
        capture_output=True, text=True, timeout=30)
    assert second.returncode == 1
    assert "already being served" in second.stderr
    assert requests.get(live_server.url + "/healthz").status_code == 200


def test_serve_prints_its_url(tmp_path):
    server = LiveServer(tmp_path / "printing")
    output = server.stop()
    assert f"http://127.0.0.1:{server.port}" in output


@pytest.mark.parametrize("env, named", [
    ({"LOBBYTALKS_RATE_TOKEN": "lots"}, "LOBBYTALKS_RATE_TOKEN"),
    ({"LOBBYTALKS_RATE_REGISTER": "30 a minute"}, "LOBBYTALKS_RATE_REGISTER"),
    ({"LOBBYTALKS_PORT": "99999"}, "LOBBYTALKS_PORT"),
    ({"LOBBYTALKS_THREADS": "0"}, "LOBBYTALKS_THREADS"),
    ({"LOBBYTALKS_TRUSTED_PROXIES": "-1"}, "LOBBYTALKS_TRUSTED_PROXIES"),
    ({"LOBBYTALKS_SESSION_DAYS": "0"}, "LOBBYTALKS_SESSION_DAYS"),
    ({"LOBBYTALKS_LOG_FORMAT": "xml"}, "LOBBYTALKS_LOG_FORMAT"),
    ({"LOBBYTALKS_SMTP_SECURITY": "tls"}, "LOBBYTALKS_SMTP_SECURITY"),
    ({"LOBBYTALKS_PUBLIC_URL": "talk.example.org"}, "LOBBYTALKS_PUBLIC_URL"),
    ({"LOBBYTALKS_ADMIN_USERNAME": "boss", "LOBBYTALKS_ADMIN_PASSWORD": "abc"},
     "LOBBYTALKS_ADMIN_PASSWORD"),
    ({"LOBBYTALKS_ADMIN_PASSWORD_FILE": "/no/such/file"}, "LOBBYTALKS_ADMIN_PASSWORD_FILE"),
    # a password without a name made no admin, without a word
    ({"LOBBYTALKS_ADMIN_PASSWORD": "longenough123"}, "set without LOBBYTALKS_ADMIN_USERNAME"),
    # every login and sign-up then failed 503: a cookie's date past the year 9999
    ({"LOBBYTALKS_SESSION_DAYS": "1000000000"}, "LOBBYTALKS_SESSION_DAYS must be at most"),
    # said it was serving, then a traceback: "can't start new thread"
    ({"LOBBYTALKS_THREADS": "100000"}, "LOBBYTALKS_THREADS must be at most"),
    # a header of its own in every mail; the mailer's thread died at the first
    ({"LOBBYTALKS_SMTP_FROM": "LobbyTalks <a@b.c>\r\nBcc: victim@example.org"},
     "LOBBYTALKS_SMTP_FROM must be one line"),
    ({"LOBBYTALKS_PUBLIC_URL": "https://talk.example.org/?x=1"}, "LOBBYTALKS_PUBLIC_URL"),
    ({"LOBBYTALKS_PUBLIC_URL": "https://talk.example.org#top"}, "LOBBYTALKS_PUBLIC_URL"),
    ({"LOBBYTALKS_PUBLIC_URL": "https://"}, "LOBBYTALKS_PUBLIC_URL"),
    ({"LOBBYTALKS_RATELIMIT_STORAGE": "http://127.0.0.1:6379"}, "LOBBYTALKS_RATELIMIT_STORAGE"),
    ({"LOBBYTALKS_RATELIMIT_STORAGE": "async+redis://127.0.0.1:6379"},
     "LOBBYTALKS_RATELIMIT_STORAGE"),
    # line breaks beyond C0: the email library refused every mail with them
    ({"LOBBYTALKS_SMTP_FROM": "LobbyTalks\u2028Reply-To: x@evil.example <a@b.c>"},
     "LOBBYTALKS_SMTP_FROM must be one line"),
    ({"LOBBYTALKS_SMTP_FROM": "LobbyTalks\x85<a@b.c>"}, "LOBBYTALKS_SMTP_FROM must be one line"),
    # refused the first login, then failed every next one 503
    ({"LOBBYTALKS_RATE_LOGIN_CLIENT": "0/minute"}, "allowing 1 to"),
    ({"LOBBYTALKS_RATE_REGISTER": "1/99999999999999999999 year"}, "in at most a year"),
    ({"LOBBYTALKS_RATE_REGISTER": "1/2 year"}, "in at most a year"),
    ({"LOBBYTALKS_RATE_REGISTER": "1/0minute"}, "in at most a year"),  # read as 1/minute
    ({"LOBBYTALKS_RATE_REGISTER": "1per0minute"}, "in at most a year"),
    ({"LOBBYTALKS_RATE_REGISTER": "1 per00minute"}, "in at most a year"),
    ({"LOBBYTALKS_RATE_REGISTER": "10/minute;100/hour"}, "one rate"),  # the second dropped
    ({"LOBBYTALKS_PUBLIC_URL": "https://[::1"}, "LOBBYTALKS_PUBLIC_URL"),  # was a traceback
    ({"LOBBYTALKS_PUBLIC_URL": "https://talk.example.org:99999"}, "LOBBYTALKS_PUBLIC_URL"),
    ({"LOBBYTALKS_PUBLIC_URL": "https://talk.example.org:abc"}, "LOBBYTALKS_PUBLIC_URL"),
    ({"LOBBYTALKS_PUBLIC_URL": "https://exa mple.org"}, "LOBBYTALKS_PUBLIC_URL"),
    # past the database's 64-bit integers: every login, or every question, failed 503
    ({"LOBBYTALKS_SESSIONS_PER_USER": "99999999999999999999"}, "SESSIONS_PER_USER must be at most"),
    ({"LOBBYTALKS_RATE_TOPIC": "99999999999999999999/day"}, "LOBBYTALKS_RATE_TOPIC must be a rate"),
    ({"LOBBYTALKS_TRUSTED_PROXIES": "99999999999999999999"}, "TRUSTED_PROXIES must be at most"),
    ({"LOBBYTALKS_CONNECTION_LIMIT": "99999999999999999999"}, "CONNECTION_LIMIT must be at most"),
    ({"LOBBYTALKS_IDLE_TIMEOUT": "99999999999999999999"}, "IDLE_TIMEOUT must be at most"),
    ({"LOBBYTALKS_WORKERS": "100000"}, "WORKERS must be at most"),
    # the Redis client took database 0 for a path that is no number
    ({"LOBBYTALKS_RATELIMIT_STORAGE": "redis://127.0.0.1:6379/abc"}, "by its number"),
    ({"LOBBYTALKS_RATELIMIT_STORAGE": "rediss://:pw@cache:6380/1/x"}, "by its number"),
])
def test_a_setting_that_would_fail_later_is_refused_at_start(env, named):
    """Each of these used to start: a bad rate then answered every request it covers 503,
    a short admin password made an admin nobody could log in as."""
    with pytest.raises(SettingsError, match=named):
        Settings.load(env)


def test_a_public_url_with_a_password_is_refused_without_showing_it():
    """It was accepted, and the start-up line printed it."""
    with pytest.raises(SettingsError) as refused:
        Settings.load({"LOBBYTALKS_PUBLIC_URL": "https://me:hunter2@talk.example.org"})
    assert "without a user" in str(refused.value) and "hunter2" not in str(refused.value)
    assert "https://me:****@talk.example.org" in str(refused.value)


@pytest.mark.parametrize("env", [
    {"LOBBYTALKS_PUBLIC_URL": "https://talk.example.org/forum/"},
    {"LOBBYTALKS_SESSION_DAYS": "3650", "LOBBYTALKS_THREADS": "256"},
    {"LOBBYTALKS_SESSIONS_PER_USER": "1000000000", "LOBBYTALKS_RATE_TOPIC": "1000000000/day",
     "LOBBYTALKS_IDLE_TIMEOUT": "31622400", "LOBBYTALKS_TRUSTED_PROXIES": "100"},
    {"LOBBYTALKS_RATELIMIT_STORAGE": "rediss://:pw@cache.example.org:6380/1"},
    {"LOBBYTALKS_RATELIMIT_STORAGE": "Memory://"},  # schemes are read in any case
    {"LOBBYTALKS_RATELIMIT_STORAGE": "redis://cache:6379"},
    {"LOBBYTALKS_RATELIMIT_STORAGE": "redis://cache:6379/?socket_keepalive=true"},
    {"LOBBYTALKS_RATELIMIT_STORAGE": "redis://:p%2Fw@cache/15"},
    {"LOBBYTALKS_PUBLIC_URL": "https://[::1]:8443", "LOBBYTALKS_RATE_TOKEN": "1/minute"},
    {"LOBBYTALKS_SMTP_FROM": "虾扯淡 <noreply@example.org>"},
])
def test_settings_at_their_bounds_are_taken(env):
    Settings.load(env)


def test_the_command_line_names_a_bad_setting_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "lobbytalks", "config"], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path,
                          env={**os.environ, "LOBBYTALKS_RATE_TOKEN": "lots"})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "lobbytalks: LOBBYTALKS_RATE_TOKEN must be a rate such as 20/minute or 5 per hour, "
        "one rate allowing 1 to 1,000,000,000 in at most a year, got 'lots'"], done.stderr


def test_a_range_of_a_static_file_is_served_ignored_or_refused_as_http_says(client):
    """`Range: items=0-1` was refused 416 with an error page (a unit the server does not
    know is to be ignored), and a 416 left out the file's size (`Content-Range: bytes */N`)."""
    whole = client.get("/static/app.js")
    assert whole.status_code == 200 and whole.headers.get("Accept-Ranges") == "bytes"
    size = len(whole.data)
    for ignored in ("items=0-1", "bytes=abc", "bytes=5-1"):
        r = client.get("/static/app.js", headers={"Range": ignored})
        assert (r.status_code, r.data) == (200, whole.data), ignored
    part = client.get("/static/app.js", headers={"Range": "bytes=0-9"})
    assert part.status_code == 206 and part.data == whole.data[:10]
    assert part.headers["Content-Range"] == f"bytes 0-9/{size}"
    beyond = client.get("/static/app.js", headers={"Range": f"bytes={size + 10}-"})
    assert beyond.status_code == 416 and beyond.headers["Content-Range"] == f"bytes */{size}"
