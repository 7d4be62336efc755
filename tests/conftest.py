"""Shared fixtures: a fresh app and database per test, people, agents and questions."""
from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

import pgtest
from pgserver import PgServer
from lobbytalks import create_app
from lobbytalks.db import Database
from lobbytalks.db import open_database as open_configured_database
from lobbytalks.passwords import Argon2Cost
from lobbytalks.settings import Settings
from lobbytalks.db import Q, connect

_names = itertools.count(1)
# Argon2id's smallest memory cost: tests hash in microseconds, the real cost is ~60 ms.
FAST_ARGON2_KIB = 8
FAST_COST = Argon2Cost(memory_kib=FAST_ARGON2_KIB)


@pytest.fixture
def clock_file(tmp_path) -> Path:
    """The app's clock offset file: write seconds into it to move the server's time."""
    path = tmp_path / "clock-offset"
    path.write_text("0")
    return path


def advance(clock_file: Path, seconds: int) -> None:
    clock_file.write_text(str(int(clock_file.read_text()) + seconds))


# --- the database a test app gets: SQLite in its data folder, or its own PostgreSQL one ---

def settings_for(data_dir: str | Path, **overrides: Any) -> Settings:
    """The one place a test's Settings are made: fast password hashing, no access log, and
    the database chosen for the backend under test (``pgtest.url_for``)."""
    values: dict[str, Any] = {"argon2_memory_kib": FAST_ARGON2_KIB, "access_log": False}
    url = pgtest.url_for(data_dir)
    if url:
        values["database_url"] = url
    return Settings(data_dir=str(data_dir), **{**values, **overrides})


def run_cli(argv: list[str], data_dir: str | Path) -> int:
    """``lobbytalks`` in this process on the app's data folder, with the database the test
    apps on that folder use (the command reads it from the environment, as in production)."""
    from unittest import mock
    from lobbytalks.cli import main
    with mock.patch.dict(os.environ, pgtest.env_for(data_dir)):
        return main([*argv, "--data-dir", str(data_dir)])


@contextmanager
def open_database(data_dir: str | Path) -> Iterator[Database]:
    """The database of the app on ``data_dir`` (a running server's too), for asserting what
    it holds; let go of afterwards."""
    database = open_configured_database(settings_for(data_dir))
    try:
        yield database
    finally:
        database.close()


def write_from_outside(settings: Settings, sql: str, params: dict[str, Any]) -> None:
    """One write on connections of its own, as another process would make it (``lobbytalks
    admin``, or a second ``serve`` on PostgreSQL)."""
    with open_database(settings.data_dir) as other, other.transaction() as conn:
        conn.execute(sql, params)


@pytest.fixture
def settings(tmp_path, clock_file) -> Settings:
    return settings_for(tmp_path / "data", clock_offset_file=str(clock_file))


@pytest.fixture
def app(settings):
    return create_app(settings)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def open_client(tmp_path, clock_file):
    """A client of the app as served on every address without a public URL (Docker's
    way): it answers any Host, and its docs name the one each request used."""
    settings = settings_for(tmp_path / "open", clock_offset_file=str(clock_file), host="0.0.0.0")
    return create_app(settings).test_client()


@pytest.fixture
def db(app) -> Database:
    """The app's own Database, for asserting what it holds (``one``/``all``/``value``)."""
    return app.config["LOBBYTALKS"].db


def count(db: Database, table: str, where: str = "TRUE", params: dict | None = None) -> int:
    return db.value(f"SELECT COUNT(*) FROM {table} WHERE {where}", params or {})


@pytest.fixture(autouse=True)
def _fresh_postgres_databases():
    """On PostgreSQL, the databases a test made are dropped after it (a module's server keeps
    its own until the session ends)."""
    before = pgtest.made()
    yield
    pgtest.drop(pgtest.made() - before)


@pytest.fixture(scope="session")
def pg_server():
    """A throwaway PostgreSQL for the session (tests/pgserver.py), stopped at the end. Its
    folder is outside pytest's root-only temp tree: the server user must reach it."""
    folder = Path(tempfile.mkdtemp(prefix="lobbytalks-pg-"))
    folder.chmod(0o755)
    server = PgServer(folder / "pg")
    server.start()
    yield server
    server.stop()
    shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    pgtest.skip_sqlite_bound(items)


def pytest_sessionfinish(session, exitstatus):
    pgtest.drop(pgtest.made())
    pgtest.drop_templates()


class Person:
    """A browser-like web user: its own cookie jar on the Flask test client."""

    def __init__(self, app, username: str | None = None, password: str = "correct horse 1"):
        self.app = app
        self.http = app.test_client()
        self.username = username or f"user{next(_names)}"
        self.password = password

    def register(self) -> "Person":
        r = self.web_post("register", username=self.username, password=self.password)
        assert r.status_code == 200, r.get_json()
        return self

    def web_post(self, action: str, **fields: Any):
        return self.http.post("/api/community", json={"action": action, **fields})

    def web_get(self, **params: Any):
        return self.http.get("/api/community", query_string=params)

    def communities_post(self, action: str, **fields: Any):
        return self.http.post("/api/communities", json={"action": action, **fields})

    def join(self, community: str = "lobby") -> None:
        r = self.communities_post("join", community=community)
        assert r.status_code == 200, r.get_json()

    def ask(self, title: str = "如何在 SQLite 中安全地做在线备份？", **fields: Any) -> str:
        r = self.web_post("topic", title=title, **fields)
        assert r.status_code == 200, r.get_json()
        return r.get_json()["id"]

    def mail_to(self, email: str, enabled: bool = True) -> None:
        """Save ``email`` and confirm it with the code the mailer would send (the code
        mail itself is tested in test_mail)."""
        from lobbytalks import clock
        from lobbytalks.services import mail_address
        r = self.web_post("notify_settings", email=email, emailNotify=enabled)
        assert r.status_code == 200, r.get_json()
        rt = self.app.config["LOBBYTALKS"]
        user_id = self.web_get(action="me").get_json()["user"]["id"]
        code = mail_address.code(rt.keyring, user_id, email, now=clock.now())
        r = self.web_post("confirm_email", code=code, currentPassword=self.password)
        assert r.status_code == 200 and r.get_json()["emailConfirmed"] is True, r.get_json()

    def manage_post(self, action: str, **fields: Any):
        return self.http.post("/api/external/manage", json={"action": action, **fields})

    def manage_get(self, **params: Any):
        return self.http.get("/api/external/manage", query_string=params)

    def new_agent(self, name: str = "查证虾", client: str = "codex") -> "AgentClient":
        r = self.manage_post("register", name=name, perspective="先给结论，再给可复核来源。",
                             client=client)
        assert r.status_code == 200, r.get_json()
        body = r.get_json()
        return AgentClient(self.app, body["token"], body["profileId"], body["tokenId"])


class AgentClient:
    """An external agent calling /api/external with its Bearer token."""

    def __init__(self, app, token: str, profile_id: str, token_id: str):
        self.http = app.test_client()
        self.token, self.profile_id, self.token_id = token, profile_id, token_id

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def get(self, action: str, **params: Any):
        return self.http.get("/api/external", query_string={"action": action, **params},
                             headers=self.headers)

    def post(self, action: str, **fields: Any):
        return self.http.post("/api/external", json={"action": action, **fields},
                              headers=self.headers)

    def claim(self, topic: str, request_id: str | None = None, **fields: Any):
        return self.post("claim_task", topic=topic, requestId=request_id or str(uuid.uuid4()),
                         **fields)


def good_result(**overrides: Any) -> dict[str, Any]:
    result = {
        "conclusion": "用 SQLite 在线备份 API 可以在服务运行时得到一致副本 [S1]，不要直接复制文件。",
        "reasoningSummary": "官方文档说明备份 API 逐页复制并处理并发写入，因此副本一致。",
        "uncertainties": ["超大数据库的备份耗时未实测"],
        "evidence": [{
            "title": "SQLite Online Backup API",
            "url": "https://www.sqlite.org/backup.html",
            "excerpt": "The online backup API allows the contents of one database to be copied.",
            "retrievedAt": "2026-10-01T00:00:00Z",
            "kind": "page",
        }],
        "toolRuns": [{"name": "sqlite3", "inputSummary": "运行 .backup 命令",
                      "summary": "备份完成，integrity_check 返回 ok。", "status": "success"}],
    }
    result.update(overrides)
    return result


# --- the people, agents and questions most tests start from ------------------------------

def joined_person(app, **kwargs: Any) -> Person:
    """A registered person who has joined the default community."""
    person = Person(app, **kwargs).register()
    person.join()
    return person


def ask_question(app, **fields: Any) -> tuple[Person, str]:
    """A member and the question they asked."""
    person = joined_person(app)
    return person, person.ask(**fields)


def contributor(app, name: str = "查证虾") -> tuple[Person, AgentClient]:
    """A member with one external agent."""
    person = joined_person(app)
    return person, person.new_agent(name)


def asked_with_private(app, title: str, private: str, agent_name: str):
    """An asker's question with private context, and another member with an agent:
    (asker, topic, author, agent)."""
    asker = joined_person(app)
    topic = asker.ask(title=title, privateContext=private)
    return (asker, topic, *contributor(app, agent_name))


@pytest.fixture
def person(app):
    return Person(app).register()


@pytest.fixture
def asker(app) -> Person:
    """A registered user who has joined the lobby (typically asks the questions)."""
    return joined_person(app)


@pytest.fixture
def member(app) -> Person:
    """A second registered lobby member (typically owns the answering agent)."""
    return joined_person(app)


@pytest.fixture
def agent(member) -> AgentClient:
    """The member's external agent, with its token: the REST caller (``McpClient`` wraps its
    token for MCP)."""
    return member.new_agent()


@pytest.fixture
def topic(asker) -> str:
    """A question the asker put in the lobby."""
    return asker.ask()


@pytest.fixture
def make_person(app):
    def make(**kwargs: Any) -> Person:
        return Person(app, **kwargs).register()
    return make


# --- a real server process -------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    def __init__(self, data_dir: Path, env: dict[str, str] | None = None,
                 command: list[str] | None = None, port: int | None = None):
        self.port = port or free_port()  # a restart passes the old port
        host = (env or {}).get("LOBBYTALKS_HOST", "127.0.0.1")
        self.url = f"http://{f'[{host}]' if ':' in host else host}:{self.port}"
        self.data_dir = data_dir
        # Access log off unless asked: nobody reads the pipe until stop(), and a full pipe
        # would block the server.
        full_env = {**os.environ, "LOBBYTALKS_ARGON2_MEMORY_KIB": str(FAST_ARGON2_KIB),
                    "LOBBYTALKS_ACCESS_LOG": "false", **pgtest.env_for(data_dir), **(env or {})}
        base = command or [sys.executable, "-m", "lobbytalks"]
        self.proc = subprocess.Popen(
            [*base, "serve", "--port", str(self.port), "--data-dir", str(data_dir)],
            env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self._wait()

    def _wait(self) -> None:
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.proc.stdout.read()}")
            try:
                if requests.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                time.sleep(0.1)
        raise RuntimeError("server did not become healthy")

    def stop(self) -> str:
        self.proc.terminate()
        try:
            out, _ = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        return out or ""


@pytest.fixture
def live_server(tmp_path):
    server = LiveServer(tmp_path / "live")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory, request):
    """One live server for the whole test module (a module may define its own instead)."""
    live = LiveServer(tmp_path_factory.mktemp(request.module.__name__) / "live")
    yield live
    live.stop()


def race(calls: list) -> list:
    """Start every call at the same moment (a barrier, one thread each); their results in
    order."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def web_session(server: LiveServer, username: str | None = None) -> requests.Session:
    """A registered requests.Session against a live server."""
    session = requests.Session()
    name = username or f"live{next(_names)}"
    r = session.post(server.url + "/api/community",
                     json={"action": "register", "username": name, "password": "correct horse 1"})
    assert r.status_code == 200, r.text
    return session


def live_usernames(server: LiveServer) -> set[str]:
    """The usernames a live server's database holds, read beside the running server."""
    with open_database(server.data_dir) as database:
        return {row["username"] for row in database.all("SELECT username FROM users")}


def dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode()


# --- query plans (SQLite) ----------------------------------------------------------------

@pytest.fixture
def conn(app):
    """A plain SQLite connection to the app's database, for EXPLAIN QUERY PLAN."""
    connection = connect(app.config["LOBBYTALKS"].db.path)
    yield connection
    connection.close()


def query_plan(conn, name: str, params: dict) -> str:
    """The plan SQLite picks for a named query, its lines joined by " | "."""
    return " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + getattr(Q, name), params))
