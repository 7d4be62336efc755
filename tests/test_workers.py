"""``lobbytalks serve --workers N``: the refusals, and the supervisor in real processes."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
import requests

import pgtest
from lobbytalks.settings import Settings
from lobbytalks.workers import refusal, supports_several_processes
from tests.conftest import FAST_ARGON2_KIB, free_port
from tests.processes import children, gone
from tests.redisserver import redis_server, redis_url  # noqa: F401 (fixtures)

WORKERS_APP = Path(__file__).with_name("workers_app.py")


def serve(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    port = free_port()
    result = subprocess.run(
        [sys.executable, "-m", "lobbytalks", "serve", "--port", str(port),
         "--data-dir", str(tmp_path / "data"), *args],
        env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=60)
    return result, port


def assert_refused(result, port: int, tmp_path: Path, words: str) -> None:
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], result.stderr
    assert not (tmp_path / "data" / "lobbytalks.db").exists()  # refused before any database
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2)


def test_several_workers_on_sqlite_are_refused(tmp_path, redis_url):
    result, port = serve(tmp_path, "--workers", "2",
                         env={"LOBBYTALKS_RATELIMIT_STORAGE": redis_url})
    assert_refused(result, port, tmp_path, "one SQLite file allows one server")


def test_the_environment_asks_for_workers_too(tmp_path, redis_url):
    result, port = serve(tmp_path, env={"LOBBYTALKS_WORKERS": "3",
                                        "LOBBYTALKS_RATELIMIT_STORAGE": redis_url})
    assert_refused(result, port, tmp_path, "one SQLite file allows one server")


@pytest.mark.parametrize("storage", [None, "memory://?per-process-all-the-same", "Memory://"])
def test_several_workers_with_limits_in_memory_are_refused(tmp_path, storage):
    url = "postgresql://lt:hunter2@db.example/lt"
    env = {"LOBBYTALKS_DATABASE_URL": url, **({"LOBBYTALKS_RATELIMIT_STORAGE": storage}
                                               if storage else {})}
    result, port = serve(tmp_path, "--workers", "2", env=env)
    assert_refused(result, port, tmp_path,
                   "limits would be per process; set LOBBYTALKS_RATELIMIT_STORAGE=redis://")
    assert "hunter2" not in result.stderr + result.stdout


def test_zero_workers_are_refused(tmp_path):
    result, port = serve(tmp_path, "--workers", "0")
    assert_refused(result, port, tmp_path, "--workers must be at least 1")


def test_which_backends_take_several_processes():
    assert not supports_several_processes(Settings())
    assert not supports_several_processes(Settings(database_url="sqlite:////srv/lt.db"))
    assert supports_several_processes(Settings(database_url="postgresql://h/lt"))
    shared = Settings(database_url="postgresql://h/lt", ratelimit_storage="redis://h:6379/0")
    assert refusal(shared.with_overrides(workers=4)) is None
    assert refusal(Settings()) is None  # one process is always fine


# --- the supervisor, with children that answer with their pid ---------------------------

class Supervised:
    def __init__(self, tmp_path: Path, mode: str = "serve", env: dict[str, str] | None = None,
                 path: str = "/") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}{path}"
        tmp_path.mkdir(parents=True, exist_ok=True)
        self.err_path = tmp_path / "supervisor.err"  # a file: readable while it runs
        with self.err_path.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, str(WORKERS_APP), str(self.port), mode, str(tmp_path)],
                stdout=subprocess.PIPE, stderr=err, text=True,
                cwd=Path(__file__).parent.parent, env={**os.environ, **(env or {})})

    def err(self) -> str:
        return self.err_path.read_text()

    def children(self) -> set[int]:
        return children(self.proc.pid)

    def wait_for_children(self, count: int, not_in: set[int] = frozenset()) -> set[int]:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            pids = self.children()
            if len(pids) == count and not pids & not_in and self.serves():
                return pids
            time.sleep(0.1)
        raise AssertionError(f"children {self.children()}, wanted {count} new ones")

    def serves(self) -> bool:
        try:
            return requests.get(self.url, timeout=2, headers={"Connection": "close"}).ok
        except requests.RequestException:
            return False

    def answering_pids(self, times: int = 10) -> set[int]:
        return {int(requests.get(self.url, timeout=5, headers={"Connection": "close"}).text)
                for _ in range(times)}

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.out, _ = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.out, _ = self.proc.communicate()
        return self.proc.returncode, self.err()


@pytest.fixture
def supervised(tmp_path):
    running = Supervised(tmp_path)
    yield running
    running.stop(signal.SIGKILL)
    for pid in running.children():
        os.kill(pid, signal.SIGKILL)


def test_two_children_serve_one_socket(supervised):
    first, second = supervised.wait_for_children(2)
    # Pausing one child leaves the other to take every connection on the shared socket.
    for paused, serving in ((first, second), (second, first)):
        os.kill(paused, signal.SIGSTOP)
        try:
            assert supervised.answering_pids() == {serving}
        finally:
            os.kill(paused, signal.SIGCONT)


def test_a_killed_child_is_replaced(supervised):
    before = supervised.wait_for_children(2)
    victim = min(before)
    os.kill(victim, signal.SIGKILL)
    after = supervised.wait_for_children(2, not_in={victim})
    assert before - {victim} < after
    assert victim not in supervised.answering_pids()
    code, err = supervised.stop()
    assert code == 0
    assert f"worker {victim} exited (signal 9); starting another in 0.1 s" in err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_supervisor_and_every_child(supervised, sig):
    children = supervised.wait_for_children(2)
    code, _ = supervised.stop(sig)
    assert code == 0
    assert all(gone(pid) for pid in children)
    assert not supervised.serves()


def test_children_end_when_the_supervisor_is_killed(supervised):
    children = supervised.wait_for_children(2)
    supervised.stop(signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not all(gone(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(gone(pid) for pid in children)


def test_a_child_that_cannot_start_stops_the_whole_server(tmp_path):
    running = Supervised(tmp_path, "fail-start")
    running.proc.wait(timeout=20)  # exits by itself
    code, err = running.stop()
    assert code == 1
    assert "child cannot start" in err
    assert running.children() == set()
    assert not running.serves()


def test_a_first_child_slow_to_start_is_waited_for(tmp_path):
    """Readiness had a deadline of two minutes: a first worker migrating a large database
    (or re-indexing it) past it was stopped, its work rolled back, and the server exited 1
    without a word, at every restart again."""
    running = Supervised(tmp_path, "slow-start")
    try:
        assert len(running.wait_for_children(2)) == 2
        assert running.proc.poll() is None and running.serves()
    finally:
        code, _ = running.stop()
    assert code == 0


def test_a_crashing_child_is_restarted_ever_more_slowly(tmp_path):
    running = Supervised(tmp_path, "crash")
    deadline = time.monotonic() + 30
    while running.err().count("in 0.8 s") < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    code, err = running.stop()
    assert code == 0
    delays = [line.rsplit(" in ", 1)[1] for line in err.splitlines() if "exited (status 1)" in line]
    # Two slots, each doubling from 0.1 s up to the 0.8 s ceiling.
    assert delays.count("0.1 s") == 2 and delays.count("0.2 s") == 2, err
    assert delays.count("0.4 s") == 2 and delays.count("0.8 s") >= 4, err
    assert not any(d not in {"0.1 s", "0.2 s", "0.4 s", "0.8 s"} for d in delays)


@pytest.fixture
def shared_database(request, tmp_path) -> str:
    """A PostgreSQL database for several workers: the suite's own on a PostgreSQL run, else
    one on the session's throwaway server (SQLite allows one process)."""
    if pgtest.active():
        return pgtest.url_for(tmp_path / "data")
    server = request.getfixturevalue("pg_server")
    url = pgtest.with_database(server.url, "t_workers")
    with psycopg.connect(server.url, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS t_workers WITH (FORCE)")
        admin.execute("CREATE DATABASE t_workers")
    return url


def test_the_token_limit_is_counted_over_two_workers_of_the_real_server(tmp_path, redis_url,
                                                                         shared_database):
    running = Supervised(tmp_path / "data", "lobbytalks", path="/healthz", env={
        "LOBBYTALKS_DATABASE_URL": shared_database, "LOBBYTALKS_RATELIMIT_STORAGE": redis_url, "LOBBYTALKS_RATE_TOKEN": "6/minute",
        "LOBBYTALKS_ARGON2_MEMORY_KIB": str(FAST_ARGON2_KIB), "LOBBYTALKS_ACCESS_LOG": "false"})
    try:
        first, second = running.wait_for_children(2)
        base = f"http://127.0.0.1:{running.port}"
        web = requests.Session()
        assert web.post(base + "/api/community", timeout=10, json={
            "action": "register", "username": "wanda", "password": "correct horse 1"}).ok
        made = web.post(base + "/api/external/manage", timeout=10, json={
            "action": "register", "name": "查证虾", "perspective": "先给结论。", "client": "codex"})
        assert made.status_code == 200, made.text
        bearer = {"Authorization": f"Bearer {made.json()['token']}", "Connection": "close"}

        def list_topics() -> requests.Response:
            return requests.get(base + "/api/external", params={"action": "list_topics"},
                                headers=bearer, timeout=10)

        # Three requests served by each worker (the other one paused) spend the budget of 6.
        for paused in (first, second):
            os.kill(paused, signal.SIGSTOP)
            try:
                assert [list_topics().status_code for _ in range(3)] == [200] * 3
            finally:
                os.kill(paused, signal.SIGCONT)
        refused = list_topics()
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
        with psycopg.connect(shared_database) as db:
            assert db.execute("SELECT COUNT(*) FROM tokens").fetchone()[0] == 1
        code, err = running.stop()
        assert code == 0, err
        assert all(gone(pid) for pid in (first, second))
        assert running.out.splitlines() == [
            f"LobbyTalks serving at http://127.0.0.1:{running.port} with 2 worker processes",
            "LobbyTalks stopped"]
    finally:
        running.stop(signal.SIGKILL)


def test_a_replaced_worker_leaves_a_changed_admin_password_alone(tmp_path, redis_url,
                                                                  shared_database):
    """Each worker applied LOBBYTALKS_ADMIN_PASSWORD as it started, so a worker replaced
    after a crash put the configured password back (an admin who had changed a leaked one
    got it back) and logged the admin out everywhere, with nobody watching; so did the
    second worker when it came up after the first had begun serving."""
    running = Supervised(tmp_path / "data", "lobbytalks", path="/healthz", env={
        "LOBBYTALKS_DATABASE_URL": shared_database, "LOBBYTALKS_RATELIMIT_STORAGE": redis_url,
        "LOBBYTALKS_ADMIN_USERNAME": "root_admin", "LOBBYTALKS_ADMIN_PASSWORD": "admin password 1",
        "LOBBYTALKS_ARGON2_MEMORY_KIB": str(FAST_ARGON2_KIB), "LOBBYTALKS_ACCESS_LOG": "false"})
    try:
        workers = running.wait_for_children(2)
        base = f"http://127.0.0.1:{running.port}/api/community"
        admin = requests.Session()
        admin.headers["Connection"] = "close"  # each request to whichever worker takes it

        def log_in(password: str) -> int:
            return requests.post(base, timeout=10, json={
                "action": "login", "username": "root_admin", "password": password}).status_code

        assert admin.post(base, timeout=10, json={"action": "login", "username": "root_admin",
                                                  "password": "admin password 1"}).ok
        assert admin.post(base, timeout=10, json={
            "action": "change_password", "currentPassword": "admin password 1",
            "newPassword": "a new admin password 2"}).ok
        crashed = min(workers)
        os.kill(crashed, signal.SIGKILL)
        running.wait_for_children(2, not_in={crashed})
        seen = [admin.get(base, params={"action": "me"}, timeout=10).json()["user"]
                for _ in range(6)]
        assert all(seen), (seen, running.err())  # still signed in, whichever worker answers
        assert log_in("a new admin password 2") == 200 and log_in("admin password 1") == 401
    finally:
        running.stop(signal.SIGKILL)


def test_a_sqlite_url_names_the_database_file(tmp_path):
    target = tmp_path / "elsewhere" / "community.db"
    result = subprocess.run([sys.executable, "-m", "lobbytalks", "init"], capture_output=True,
                            text=True, timeout=60,
                            env={**os.environ, "LOBBYTALKS_DATABASE_URL": f"sqlite:///{target}"})
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(target) as db:
        assert db.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] > 0
