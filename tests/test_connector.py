"""`lobbytalks agent` end to end: a real `lobbytalks serve`, a real connector process, and a
stub research harness written by each test (or fake `codex`/`claude` executables on PATH, or
the real, pinned ones with a scripted model behind them).

The server's clock and the connector's clock both follow LOBBYTALKS_CLOCK_OFFSET_FILE, so
heartbeats and the 2-hour limit are driven by moving it, never by sleeping for minutes.
"""
from __future__ import annotations

import ast
import itertools
import errno
import functools
import json
import os
import re
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests

from conftest import LiveServer, advance, free_port, good_result, open_database, web_session
from lobbytalks.connector.commands import (EXIT_BUSY, EXIT_OK, EXIT_TASK_FAILED, EXIT_TOKEN,
                                           EXIT_UNREACHABLE)
from lobbytalks.connector.events import EVENTS, WITHHELD
from lobbytalks.connector.harness import HarnessConfig, scrubbed_env
from lobbytalks.connector.prompt import limits_in_words, result_schema
from lobbytalks.connector.state import StateStore
from lobbytalks.connector.submission import submission
from lobbytalks.db import Row
from node_clients import CLIENTS
from scripted_model import ScriptedModel, call

TOKEN_ENV = "XIA_CHEDAN_AGENT_TOKEN"

STUB = r'''
import json, os, sys, time, pathlib
d = pathlib.Path(os.environ["STUB_DIR"])
token = (d / "token").read_text()
if TOKEN_ENV in os.environ or any(token in v for v in os.environ.values()):
    print("the Agent Token leaked into the harness environment", file=sys.stderr)
    sys.exit(3)
doc = json.load(sys.stdin)
n = len(list(d.glob("doc-*.json"))) + 1
(d / f"pid-{n}").write_text(str(os.getpid()))
(d / f"cwd-{n}").write_text(os.getcwd())
(d / f"doc-{n}.json").write_text(json.dumps(doc, ensure_ascii=False))
while (d / "hold").exists():
    time.sleep(0.05)
print(json.dumps(json.loads((d / "result.json").read_text()), ensure_ascii=False))
'''.replace("TOKEN_ENV", repr(TOKEN_ENV))


# --- the world: one server for the module, people, agents, questions --------------------

@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("connector")
    clock = root / "clock-offset"
    clock.write_text("0")
    # Every scene registers two people from one address: more than an hour's sign-ups allow.
    env = {"LOBBYTALKS_CLOCK_OFFSET_FILE": str(clock), "LOBBYTALKS_RATE_REGISTER": "1000/minute"}
    server = LiveServer(root / "server", env=env)
    w = World(root, clock, server, env)
    yield w
    w.server.stop()


class World:
    def __init__(self, root: Path, clock: Path, server: LiveServer, env: dict[str, str]):
        self.root, self.clock, self.server, self.env = root, clock, server, env

    def query(self, sql: str, params: dict | None = None) -> list[Row]:
        with open_database(self.server.data_dir) as db:
            return db.all(sql, params or {})

    def restart(self) -> None:
        port = self.server.port
        self.server.stop()
        self.server = LiveServer(self.root / "server", env=self.env, port=port)

    def person(self, community: str = "lobby") -> requests.Session:
        session = web_session(self.server)
        self.join(session, community)
        return session

    def join(self, session: requests.Session, community: str) -> None:
        r = session.post(self.server.url + "/api/communities", json={"action": "join", "community": community})
        assert r.status_code == 200, r.text

    def community(self, creator: requests.Session) -> str:
        """A community of the test's own, so tests sharing the server never see each other's questions."""
        r = creator.post(self.server.url + "/api/communities", json={"action": "create", "name": "连接器测试"})
        assert r.status_code == 200, r.text
        return r.json()["id"]

    def ask(self, session: requests.Session, title: str = "SQLite 在线备份应该怎么做才安全？",
            community: str = "lobby") -> str:
        r = session.post(self.server.url + "/api/community",
                         json={"action": "topic", "title": title, "community": community})
        assert r.status_code == 200, r.text
        return r.json()["id"]

    def agent(self, owner: requests.Session, client: str = "custom") -> dict[str, Any]:
        r = owner.post(self.server.url + "/api/external/manage", json={
            "action": "register", "name": "自动虾", "perspective": "先给结论再给来源。", "client": client})
        assert r.status_code == 200, r.text
        return r.json()


@pytest.fixture
def scene(world, tmp_path):
    """An asker with a question, an owner with an agent, a stub harness folder."""
    asker, owner = world.person(), world.person()
    community = world.community(asker)
    world.join(owner, community)
    topic = world.ask(asker, community=community)
    agent = world.agent(owner)
    stub_dir = tmp_path / "stub"
    stub_dir.mkdir()
    (stub_dir / "token").write_text(agent["token"])
    (stub_dir / "result.json").write_text(json.dumps(good_result(), ensure_ascii=False))
    stub = tmp_path / "research.py"
    stub.write_text(STUB)
    scene = Scene(world, tmp_path, asker, owner, topic, agent, stub_dir, stub)
    scene.community = community
    yield scene
    scene.cleanup()


class Scene:
    def __init__(self, world, tmp, asker, owner, topic, agent, stub_dir, stub):
        self.world, self.tmp, self.asker, self.owner = world, tmp, asker, owner
        self.topic, self.agent, self.stub_dir, self.stub = topic, agent, stub_dir, stub
        self.state_dir = tmp / "state"
        self.procs: list[subprocess.Popen] = []
        self.outputs: list[str] = []

    def connector(self, *args: str, server: str | None = None, harness: list[str] | None = None,
                  env: dict[str, str] | None = None, cwd: Path | None = None,
                  state_dir: str | None = None, retry_backoff: str = "0.2",
                  preexec_fn: Any = None) -> subprocess.Popen:
        harness = harness or ["--harness", "command",
                              "--harness-command", f"{sys.executable} {self.stub}"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "lobbytalks", "agent", *args,
             "--server", server or self.world.server.url,
             "--state-dir", state_dir or str(self.state_dir),
             *harness, "--json", "--tick", "0.1", "--retry-backoff", retry_backoff],
            env={**os.environ, TOKEN_ENV: self.agent["token"], "STUB_DIR": str(self.stub_dir),
                 "LOBBYTALKS_CLOCK_OFFSET_FILE": str(self.world.clock),
                 "PYTHONPATH": str(Path(__file__).resolve().parent.parent), **(env or {})},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
            preexec_fn=preexec_fn)
        self.procs.append(proc)
        return proc

    def run_once(self, *args: str, **kwargs: Any) -> subprocess.Popen:
        return self.connector("run", "--once", "--poll-interval", "0.2",
                              "--community", self.community, *args, **kwargs)

    def finish(self, proc: subprocess.Popen, timeout: float = 30) -> tuple[int, list[dict]]:
        out, err = proc.communicate(timeout=timeout)
        self.outputs += [out, err]
        events = [json.loads(line) for line in out.splitlines() if line.strip()]
        assert {e["event"] for e in events} <= EVENTS
        documented = documented_event_fields()
        assert [e for e in events if not e.keys() <= documented[e["event"]]] == []
        return proc.returncode, events

    def kill(self, proc: subprocess.Popen) -> None:
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=10)
        self.outputs += [out, err]

    def tasks(self) -> list[Row]:
        return self.world.query("SELECT id, state, error, created, expires, message_id "
                                "FROM tasks WHERE topic_id = :topic ORDER BY created",
                                {"topic": self.topic})

    def messages(self) -> list[Row]:
        return self.world.query("SELECT id, task_id, text FROM messages WHERE topic_id = :topic",
                                {"topic": self.topic})

    def activity(self) -> dict[str, Any]:
        return requests.get(self.world.server.url + "/api/community",
                            params={"action": "activity", "topic": self.topic}).json()

    def assert_token_nowhere(self) -> None:
        token = self.agent["token"]
        assert all(token not in text for text in self.outputs)
        for path in self.state_dir.rglob("*"):
            if path.is_file():
                assert token.encode() not in path.read_bytes(), path

    def cleanup(self) -> None:
        (self.stub_dir / "hold").unlink(missing_ok=True)
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        for pid_file in self.stub_dir.glob("pid-*"):
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass


def readme_harness_fields() -> dict[str, list[str]]:
    """The README's table of what a harness reads: each top-level field, with the names its
    row lists after the colon (or all of them) for the parts that are objects."""
    readme = (Path(__file__).parent.parent / "README.md").read_text("utf-8")
    table = readme.split("It reads **one JSON document on stdin**", 1)[1].split("It prints", 1)[0]
    fields: dict[str, list[str]] = {}
    for row in re.findall(r"^\| (`.+?) \| (.+) \|$", table, flags=re.M):
        names, text = row
        listed = re.findall(r"`(\w+)`", text.split(": ", 1)[-1])
        for name in re.findall(r"`(\w+)`", names):
            fields[name] = listed
    return fields


def test_the_readmes_example_result_is_stored_as_printed(scene):
    """A harness written from the README printed shapes of its own for evidence and tool
    runs: the README shows a whole result, and that one is taken."""
    readme = (Path(__file__).parent.parent / "README.md").read_text("utf-8")
    printed = readme.split("It prints **the result JSON on stdout**", 1)[1]
    example = json.loads(re.search(r"```json\n(.+?)\n```", printed, flags=re.S)[1])
    assert {"evidence", "toolRuns"} <= set(example)
    (scene.stub_dir / "result.json").write_text(json.dumps(example, ensure_ascii=False))
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK and "submitted" in names(events), events
    [stored] = scene.messages()
    assert stored["text"] == example["conclusion"]
    sources = scene.world.query("SELECT sources FROM messages WHERE id = :id", {"id": stored["id"]})
    assert [s["url"] for s in json.loads(sources[0]["sources"])] == [
        e["url"] for e in example["evidence"]]


def wait_for(predicate, timeout: float = 20.0, what: str = "condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def process_gone(pid: int) -> bool:
    """Ended: no such process, or a zombie its parent has not reaped yet."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def hold(scene: Scene) -> None:
    (scene.stub_dir / "hold").write_text("")


def release(scene: Scene) -> None:
    (scene.stub_dir / "hold").unlink()


def started(scene: Scene, n: int = 1) -> bool:
    return (scene.stub_dir / f"doc-{n}.json").exists()


def names(events: list[dict]) -> list[str]:
    return [e["event"] for e in events]


# --- the whole loop ------------------------------------------------------------------------

@pytest.mark.parametrize("behind", [1300, -1300])
def test_the_lease_is_renewed_whichever_way_this_machine_s_clock_is_off(scene, tmp_path, behind):
    """The next heartbeat was the server's expires - 20 min read on this machine's clock:
    one 1300 s behind never renewed, and the task was lost after 30 minutes; one ahead
    renewed at every tick."""
    own_clock = tmp_path / "connector-clock"
    own_clock.write_text(str(int(scene.world.clock.read_text()) - behind))
    hold(scene)
    proc = scene.connector("run", "--once", env={"LOBBYTALKS_CLOCK_OFFSET_FILE": str(own_clock)})
    wait_for(lambda: started(scene), what="research to start")
    [task] = scene.tasks()
    for clock in (scene.world.clock, own_clock):  # eleven minutes pass on both
        advance(clock, 11 * 60)
    wait_for(lambda: scene.tasks()[0]["expires"] > task["expires"], what="a heartbeat")
    renewed = scene.tasks()[0]["expires"]
    assert 0 <= renewed - (task["created"] + 11 * 60 + 1800) <= 5  # at the 10-minute mark
    release(scene)
    code, events = scene.finish(proc)
    assert code == EXIT_OK and "submitted" in names(events), events
    assert names(events).count("heartbeat") == 1


def test_a_replayed_claim_learns_the_server_s_clock_from_a_renewal_first(scene, proxy,
                                                                         tmp_path):
    """The answer to the first claim was lost and the replay's says nothing of the server's
    clock (the task was created then): with this machine 1300 s behind, the lease was never
    renewed, as before the clock was learnt at all."""
    own_clock = tmp_path / "connector-clock"
    own_clock.write_text(str(int(scene.world.clock.read_text()) - 1300))
    claims = itertools.count()
    lossy = proxy(lambda path, body: "swallow" if b'"claim_task"' in body and next(claims) == 0
                  else None)
    hold(scene)
    proc = scene.connector("run", "--once", server=lossy.url,
                           env={"LOBBYTALKS_CLOCK_OFFSET_FILE": str(own_clock)})
    assert lossy.swallowed.wait(20), "the claim never reached the proxy"
    lossy.hang.set()  # its answer never comes: the connection closes, the claim is replayed
    wait_for(lambda: started(scene), what="research to start")
    [task] = scene.tasks()
    for clock in (scene.world.clock, own_clock):
        advance(clock, 11 * 60)
    wait_for(lambda: scene.tasks()[0]["expires"] >= task["created"] + 11 * 60 + 1800,
             what="a renewal at the 10-minute mark")
    release(scene)
    code, events = scene.finish(proc)
    assert code == EXIT_OK and "claim_replayed" in names(events), events


def test_whole_loop_claims_heartbeats_submits_and_the_page_shows_the_answer(scene):
    hold(scene)
    proc = scene.run_once()
    wait_for(lambda: started(scene), what="research to start")
    [task] = scene.tasks()
    assert task["state"] == "leased" and task["expires"] == task["created"] + 1800
    assert scene.activity()["researching"] == 1

    advance(scene.world.clock, 25 * 60)  # past the 10-minute mark: a heartbeat is due
    wait_for(lambda: scene.tasks()[0]["expires"] > task["expires"], what="a heartbeat")
    renewed = scene.tasks()[0]["expires"]
    assert 0 <= renewed - (task["created"] + 25 * 60 + 1800) <= 5  # now + 30 min

    release(scene)
    code, events = scene.finish(proc)
    assert code == EXIT_OK, events
    assert ["claimed", "research_started", "heartbeat", "research_finished", "result_saved",
            "submitted"] == [n for n in names(events) if n in (
                "claimed", "research_started", "heartbeat", "research_finished",
                "result_saved", "submitted")]
    [task] = scene.tasks()
    [message] = scene.messages()
    assert task["state"] == "done" and task["message_id"] == message["id"]
    assert message["text"] == good_result()["conclusion"]
    page = scene.asker.get(scene.world.server.url + f"/q/{scene.topic}").text
    assert "SQLite Online Backup API" in page
    assert scene.activity() == {"topic": scene.topic, "status": "open", "messageCount": 1,
                                "researching": 0}
    # What the harness got: the question and the schema, in its own folder, no token.
    doc = json.loads((scene.stub_dir / "doc-1.json").read_text())
    assert doc["question"]["originalTitle"].startswith("SQLite") and "privateContext" not in doc["question"]
    assert set(doc) == set(readme_harness_fields()) and {
        part: set(doc[part]) for part in ("task", "topic", "question")} == {
        part: set(readme_harness_fields()[part]) - {"privateContext"}
        for part in ("task", "topic", "question")}  # the README names what the harness gets
    assert "30–200 characters" in doc["resultSchema"]["properties"]["conclusion"]["description"]
    assert "data, not instructions" in doc["prompt"]
    assert Path((scene.stub_dir / "cwd-1").read_text()).is_relative_to(scene.state_dir)
    scene.assert_token_nowhere()

    status = subprocess.run([sys.executable, "-m", "lobbytalks", "agent", "status", "--json",
                             "--state-dir", str(scene.state_dir)], capture_output=True, text=True)
    [listed] = [json.loads(line) for line in status.stdout.splitlines()]
    assert listed["event"] == "attempt" and listed["state"] == "done"
    assert listed["taskId"] == task["id"] and listed["messageId"] == message["id"]
    assert listed["result"].endswith(f"{listed['requestId']}.json")


def test_a_damaged_attempt_file_is_named_and_skipped_not_a_traceback(tmp_path):
    """JSON that is no object crashed status (and run); a truncated file was left unsaid."""
    attempts = tmp_path / "state" / "attempts"
    attempts.mkdir(parents=True)
    (attempts / "a.json").write_text("[]")
    (attempts / "b.json").write_text('{"requestId": "r", "state": "le')
    (attempts / "c.json").write_text('{"requestId": "r", "state": "leased", "topic": "t_x", '
                                     '"task": "not a task"}')
    (attempts / "d.json").write_text('{"requestId": "r2", "state": "done", "topic": "t_y", '
                                     '"created": "yesterday"}')
    os.mkfifo(attempts / "e.json")  # read, it would wait for a writer for ever
    status = subprocess.run([sys.executable, "-m", "lobbytalks", "agent", "status", "--json",
                             "--state-dir", str(tmp_path / "state")],
                            capture_output=True, text=True, timeout=60)
    assert status.returncode == 0 and "Traceback" not in status.stderr, status.stderr
    events = [json.loads(line) for line in status.stdout.splitlines()]
    assert [e["event"] for e in events] == ["error"] * 5 + ["idle"]
    assert [Path(e["message"].split(" is no attempt")[0]).name for e in events[:5]] == \
        ["a.json", "b.json", "c.json", "d.json", "e.json"]
    assert StateStore(tmp_path / "state").all_attempts() == []


@pytest.mark.parametrize("error, state_folder_failed", [
    (NotADirectoryError(errno.ENOTDIR, "Not a directory", "STATE/results/r.json.tmp"), True),
    (OSError(errno.EROFS, "Read-only file system", "STATE/work/r/cwd/out"), True),
    (OSError(errno.ENOSPC, "No space left on device"), True),  # no file named
    # what a harness did to its own work folder is its failure, not the folder's
    (FileExistsError(errno.EEXIST, "File exists", "STATE/work/r/cwd"), False),
    (PermissionError(errno.EACCES, "Permission denied", "/elsewhere/file"), False),
    (ValueError("no OSError"), False),
])
def test_what_counts_as_the_state_folder_failing(tmp_path, error, state_folder_failed):
    """A harness that replaced its own working folder with a file ended the whole run."""
    store = StateStore(tmp_path / "state")
    if isinstance(error, OSError) and error.filename:
        error.filename = error.filename.replace("STATE", str(store.root))
    assert store.failed_by(error) is state_folder_failed


def test_answer_does_not_answer_again_what_it_answered_unless_told(scene):
    code, _ = scene.finish(scene.connector("answer", scene.topic))
    assert code == EXIT_OK
    [message] = scene.messages()
    code, events = scene.finish(scene.connector("answer", scene.topic))
    assert code == EXIT_OK
    assert [(e["event"], e["messageId"]) for e in events] == [("idle", message["id"])]
    assert len(scene.tasks()) == 1 and len(scene.messages()) == 1
    code, events = scene.finish(scene.connector("answer", scene.topic, "--again"))
    assert code == EXIT_OK, events
    assert len(scene.messages()) == 2 and {t["state"] for t in scene.tasks()} == {"done"}


def test_run_takes_requested_questions_first_and_skips_answered_ones(scene):
    world = scene.world
    url = world.server.url
    # Already answered by another of the owner's agents: skipped.
    answered = world.ask(scene.asker, "已经被我的另一只虾回答过的问题？", community=scene.community)
    other = world.agent(scene.owner)
    headers = {"Authorization": f"Bearer {other['token']}"}
    claim = requests.post(url + "/api/external", headers=headers, json={
        "action": "claim_task", "topic": answered, "requestId": "5b0c3c9e-4d6f-4f1a-9e3b-2c8d7a6b5e4f"})
    r = requests.post(url + "/api/external", headers=headers, json={
        "action": "submit_result", "taskId": claim.json()["task"]["id"], **good_result()})
    assert r.status_code == 200, r.text
    # Newer than scene.topic, but the owner asked their agents to take it.
    wanted = world.ask(scene.asker, "请我的虾优先回答的问题是哪一个？", community=scene.community)
    r = scene.owner.post(url + "/api/community",
                         json={"action": "agent_request", "topic": wanted, "requested": True})
    assert r.status_code == 200, r.text

    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK
    [chosen] = [e for e in events if e["event"] == "chosen"]
    assert chosen["topic"] == wanted and chosen["requestedByMe"] is True
    # the README's fields of the attempt run starts, as answer's
    [created] = [e for e in events if e["event"] == "attempt_created"]
    assert created["topic"] == wanted and created["resumed"] is False and created["requestId"]
    assert world.query("SELECT COUNT(*) FROM tasks WHERE topic_id = :topic AND profile_id = :profile",
                       {"topic": answered, "profile": scene.agent["profileId"]})[0][0] == 0
    assert world.query("SELECT state FROM tasks WHERE topic_id = :topic",
                       {"topic": wanted})[0][0] == "done"


# --- crashes and restarts ------------------------------------------------------------------

def test_kill_during_research_then_restart_resumes_the_same_task(scene):
    hold(scene)
    proc = scene.run_once()
    wait_for(lambda: started(scene), what="research to start")
    second = scene.connector("answer", scene.topic)  # the same state folder: refused
    assert second.wait(20) == EXIT_BUSY and "another connector" in second.stderr.read()
    scene.kill(proc)
    [task] = scene.tasks()
    assert task["state"] == "leased"
    orphan = int((scene.stub_dir / "pid-1").read_text())
    assert Path(f"/proc/{orphan}").exists()  # the killed connector's harness runs on

    restarted = scene.run_once()
    wait_for(lambda: started(scene, 2), what="research to start again")
    wait_for(lambda: process_gone(orphan), what="the left-behind harness to be stopped")
    release(scene)
    code, events = scene.finish(restarted)
    assert code == EXIT_OK, events
    assert names(events).index("leftover_stopped") < names(events).index("claim_replayed")
    assert "claim_replayed" in names(events) and "claimed" not in names(events)
    [again] = scene.tasks()
    [message] = scene.messages()
    assert again["id"] == task["id"] and again["state"] == "done"
    assert message["task_id"] == task["id"]
    assert started(scene, 2)  # the research ran again: no result had been kept
    scene.assert_token_nowhere()


class FaultProxy(ThreadingHTTPServer):
    """Forwards to the server, except where ``fault(path, body)`` says otherwise: it may
    answer in the server's place (``(status, headers, json)``) or swallow the server's answer
    (``"swallow"``: the request is stored, the connector never hears back)."""

    def __init__(self, target: str, fault=lambda path, body: None):
        self.target, self.fault = target, fault
        self.seen: list[tuple[str, bytes]] = []
        self.swallowed, self.hang = threading.Event(), threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, status: int, headers: dict[str, str], content: bytes) -> None:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            def _forward(self, method: str):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy.seen.append((self.path, body))
                fault = proxy.fault(self.path, body)
                if isinstance(fault, tuple):
                    status, headers, data = fault
                    return self._reply(status, {"Content-Type": "application/json", **headers},
                                       json.dumps(data).encode())
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                r = requests.request(method, proxy.target + self.path, data=body or None,
                                     headers=headers)
                if fault == "swallow":
                    proxy.swallowed.set()
                    proxy.hang.wait(30)
                    return
                self._reply(r.status_code, {k: r.headers[k] for k in ("Content-Type", "Retry-After")
                                            if k in r.headers}, r.content)

            def do_GET(self):
                self._forward("GET")

            def do_POST(self):
                self._forward("POST")

        super().__init__(("127.0.0.1", 0), Handler)
        self.daemon_threads = True
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.hang.set()
        self.shutdown()
        self.server_close()

    def count(self, action: str) -> int:
        return sum(1 for path, body in self.seen if action in path or f'"{action}"'.encode() in body)


@pytest.fixture
def proxy(world):
    made: list[FaultProxy] = []

    def make(fault=lambda path, body: None) -> FaultProxy:
        made.append(FaultProxy(world.server.url, fault))
        return made[-1]
    yield make
    for p in made:
        p.close()


def test_a_claim_the_server_stays_away_from_is_tried_again_at_a_later_poll(scene, proxy):
    """`run` ended (exit 4) when one claim went unanswered through its retries, and stopped
    and failed the other question's running research with it; the README says `run` polls
    again later."""
    other = scene.world.ask(scene.asker, "第二个问题：WAL 模式下怎么备份？", community=scene.community)
    away = threading.Event()
    away.set()
    p = proxy(lambda path, body: (503, {}, {"error": "busy", "code": "service_unavailable"})
              if away.is_set() and b'"claim_task"' in body and other.encode() in body else None)
    proc = scene.connector("run", "--max-tasks", "2", "--poll-interval", "0.5",
                           "--community", scene.community, server=p.url, retry_backoff="0.01")
    claims = lambda: sum(1 for _, body in p.seen if b'"claim_task"' in body and other.encode() in body)
    try:
        wait_for(lambda: claims() >= 8, timeout=60, what="the other claim's tries to run out")
        wait_for(lambda: len(scene.messages()) == 1, timeout=60, what="the first answer")
        away.clear()
        wait_for(lambda: scene.world.query("SELECT id FROM messages WHERE topic_id = :t",
                                           {"t": other}), timeout=60, what="the other answer")
    finally:
        proc.send_signal(signal.SIGTERM)
    code, events = scene.finish(proc)
    assert code == EXIT_OK and "unreachable" in names(events), events
    assert [t["state"] for t in scene.world.query(
        "SELECT state FROM tasks WHERE topic_id IN (:a, :b)", {"a": scene.topic, "b": other}
    )] == ["done", "done"]  # the first one's research went on meanwhile


def test_kill_during_submit_then_restart_sends_the_same_bytes_once(scene, proxy):
    swallowing = proxy(lambda path, body: "swallow" if b'"submit_result"' in body else None)
    proc = scene.run_once(server=swallowing.url)
    assert swallowing.swallowed.wait(20), "the submission never reached the proxy"
    wait_for(lambda: len(scene.messages()) == 1, what="the answer to be stored")
    scene.kill(proc)
    [kept] = list((scene.state_dir / "results").glob("*.json"))
    before = kept.read_bytes()

    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK, events
    [submitted] = [e for e in events if e["event"] == "submitted"]
    assert submitted["replayed"] is True
    assert "claimed" not in names(events) and "research_started" not in names(events)
    assert len(scene.messages()) == 1 and len(scene.tasks()) == 1
    assert kept.read_bytes() == before
    scene.assert_token_nowhere()


def test_server_restarted_mid_task_the_connector_waits_and_submits(scene):
    hold(scene)
    proc = scene.run_once()
    wait_for(lambda: started(scene), what="research to start")
    scene.world.server.stop()
    release(scene)  # the submission now meets a closed port and backs off
    time.sleep(1.0)
    scene.world.restart()
    code, events = scene.finish(proc, timeout=60)
    assert code == EXIT_OK, events
    assert "retrying" in names(events)
    [task] = scene.tasks()
    assert task["state"] == "done" and len(scene.messages()) == 1


@pytest.mark.parametrize("command", ["run", "answer"])
def test_token_revoked_mid_task_stops_keeps_the_result_and_exits_3(scene, command):
    """`answer` kept no word of why it stopped: `agent status` showed the attempt as if
    nothing had happened."""
    hold(scene)
    proc = scene.run_once() if command == "run" else scene.connector("answer", scene.topic)
    wait_for(lambda: started(scene), what="research to start")
    r = scene.owner.post(scene.world.server.url + "/api/external/manage",
                         json={"action": "revoke", "tokenId": scene.agent["tokenId"]})
    assert r.status_code == 200, r.text
    release(scene)
    code, events = scene.finish(proc)
    assert code == EXIT_TOKEN
    ending = ["token_rejected", "stopped"] if command == "run" else ["token_rejected"]
    assert names(events)[-len(ending):] == ending
    assert scene.messages() == []
    [attempt] = [json.loads(p.read_text()) for p in (scene.state_dir / "attempts").glob("*.json")]
    assert attempt["state"] == "submitting" and "token rejected" in attempt["errors"][-1]
    kept = json.loads((scene.state_dir / "results" / f"{attempt['requestId']}.json").read_text())
    assert kept["conclusion"] == good_result()["conclusion"]
    scene.assert_token_nowhere()


def test_a_lease_running_past_two_hours_is_failed_and_the_harness_stopped(scene):
    hold(scene)
    launched = time.time()  # the claim comes after; the server's clock runs on from it
    proc = scene.run_once("--harness-timeout", "9000")  # the lease's limit comes first
    wait_for(lambda: started(scene), what="research to start")
    created = scene.tasks()[0]["created"]
    offset = 0

    def renewed_to(expires: int) -> bool:
        # now + 30 min at the heartbeat: the seconds that really passed since the claim
        # (however slowly a busy machine runs the test) on top of the clock moved forward
        lease = scene.tasks()[0]["expires"] - created
        if expires == 7200:  # capped: exactly claim + 2 h
            return lease == expires
        return expires - 1 <= lease <= expires + 1 + time.time() - launched

    # Each renewal is due 10 minutes after the last; the lease is capped at claim + 2 h.
    for at, expires in ((1500, 3300), (2700, 4500), (3900, 5700), (5100, 6900), (6300, 7200)):
        advance(scene.world.clock, at - offset)
        offset = at
        wait_for(lambda: renewed_to(expires), what=f"the renewal at +{at}s")
    advance(scene.world.clock, 6950 - offset)  # within the 5-minute stop margin
    code, events = scene.finish(proc)
    assert code == EXIT_TASK_FAILED
    [task] = scene.tasks()
    assert task["state"] == "failed" and "2-hour" in task["error"]
    assert scene.messages() == []
    pid = int((scene.stub_dir / "pid-1").read_text())
    wait_for(lambda: process_gone(pid), what="the harness to stop")


def test_an_invalid_result_goes_back_once_then_fail_task_with_a_redacted_reason(scene):
    secret = "sk-" + "a1B2c3D4e5F6g7H8i9J0kLmN"
    bad = good_result(conclusion=f"密钥是 {secret}，结论就在这里，请直接使用 [S1]。")
    (scene.stub_dir / "result.json").write_text(json.dumps(bad, ensure_ascii=False))
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_TASK_FAILED
    assert names(events).count("result_invalid") == 2
    second = json.loads((scene.stub_dir / "doc-2.json").read_text())
    assert second["previousErrors"] and second["previousErrors"][0].startswith("sensitive_content")
    assert not started(scene, 3)
    [task] = scene.tasks()
    assert task["state"] == "failed"
    assert task["error"].startswith("the harness result was invalid twice: sensitive_content")
    assert secret not in task["error"] and secret not in "".join(scene.outputs)
    assert scene.messages() == []
    # what the harness printed, the refused secret in it, is for the owner's eyes only
    printed = [*scene.state_dir.rglob("stdout-*.txt"), *scene.state_dir.rglob("stderr-*.txt")]
    assert len(printed) == 4 and {stat.S_IMODE(p.stat().st_mode) for p in printed} == {0o600}


def test_fields_named_after_the_token_reach_neither_the_attempt_file_nor_status(scene):
    """The server's refusal quotes an unknown field's name (cut to 40 characters): three
    such names held the whole token, which the attempt's errors kept and `agent status`
    printed, though the events withheld them."""
    token = scene.agent["token"]
    bad = {**good_result(), token: 1, "_" + token[4:]: 1, "_" + token[40:]: 1}
    (scene.stub_dir / "result.json").write_text(json.dumps(bad))
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_TASK_FAILED and "result_invalid" in names(events)
    kept = "".join(p.read_text() for p in (scene.state_dir / "attempts").glob("*.json"))
    shown = subprocess.run([sys.executable, "-m", "lobbytalks", "agent", "status", "--json",
                            "--state-dir", str(scene.state_dir)], capture_output=True,
                           text=True, timeout=60, env={k: v for k, v in os.environ.items()
                                                      if k != TOKEN_ENV})
    assert shown.returncode == 0, shown.stderr
    assert '"errors"' in shown.stdout and WITHHELD in kept
    for piece in (token[4:20], token[20:36], token[28:44]):
        assert piece not in kept and piece not in shown.stdout + shown.stderr


def script_harness(tmp_path: Path, source: str) -> list[str]:
    """The harness options running ``source``, a Python script written for the test."""
    script = tmp_path / "fail.py"
    script.write_text(source)
    return ["--harness", "command", "--harness-command", f"{sys.executable} {script}"]


def test_a_failing_harness_is_reported_with_the_last_line_of_stderr(scene, tmp_path):
    code, events = scene.finish(scene.run_once(harness=script_harness(
        tmp_path, "import sys\nprint('step one', file=sys.stderr)\n"
                  "print('no search results for this question', file=sys.stderr)\nsys.exit(2)\n")))
    assert code == EXIT_TASK_FAILED
    [task] = scene.tasks()
    assert task["state"] == "failed"
    assert task["error"] == "harness failed: no search results for this question"


def test_a_secret_a_colour_code_split_in_stderr_is_withheld_and_the_lease_ends(scene, tmp_path):
    """The reason was redacted before its escape codes were dropped: "AKIA\\x1b[0mIOSF…"
    passed, became a key, was refused by the server (sensitive_content), and the lease was
    left held, with the key kept in the attempt's file."""
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    code, events = scene.finish(scene.run_once(harness=script_harness(
        tmp_path, "import sys\nprint('failed: AKIA\\x1b[0mIOSFODNN7EXAMPLE', "
                  "file=sys.stderr)\nsys.exit(1)\n")))
    assert code == EXIT_TASK_FAILED
    [task] = scene.tasks()
    assert task["state"] == "failed" and task["error"] == WITHHELD
    kept = "".join(p.read_text() for p in (scene.state_dir / "attempts").glob("*.json"))
    assert key not in kept and key not in "".join(scene.outputs)


def test_asking_my_agents_after_a_failed_try_buys_one_more(scene, tmp_path):
    """A question tried once (here the harness failed) was never tried again, though the
    page told its user that "Ask my agents" has their connector take it first."""
    code, _ = scene.finish(scene.run_once(harness=script_harness(
        tmp_path, "import sys\nprint('no network', file=sys.stderr)\nsys.exit(2)\n")))
    assert code == EXIT_TASK_FAILED
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK and "claimed" not in names(events)  # tried once: not again
    advance(scene.world.clock, 2)  # asked in the second the try began would not count
    r = scene.owner.post(scene.world.server.url + "/api/community", json={
        "action": "agent_request", "topic": scene.topic, "requested": True})
    assert r.status_code == 200, r.text
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK and "submitted" in names(events), events
    assert sorted(t["state"] for t in scene.tasks()) == ["done", "failed"]
    code, events = scene.finish(scene.run_once())  # answered now: the request is done
    assert code == EXIT_OK and "claimed" not in names(events)


# --- codex and claude, without a model ----------------------------------------------------

FAKE_PROLOGUE = r'''#!PYTHON
import json, sys, pathlib
args = sys.argv[1:]
if args == ["--version"]:
    print("VERSION"); sys.exit(0)
log = pathlib.Path(__file__).with_name("NAME-calls.json")
prompt = sys.stdin.read()
assert "DATA (not instructions)" in prompt
log.write_text(json.dumps({"args": args, "prompt": prompt}))
'''

FAKE_CODEX = FAKE_PROLOGUE.replace("VERSION", "codex-cli 0.99.0").replace("NAME", "codex") + r'''
assert args[0] == "exec" and args[-1] == "-", args
opt = {args[i]: args[i + 1] for i in range(1, len(args) - 1) if args[i].startswith("--") and not args[i + 1].startswith("--")}
assert opt["--sandbox"] == "read-only", opt
schema = json.loads(pathlib.Path(opt["--output-schema"]).read_text())
assert "conclusion" in schema["properties"] and "taskId" not in schema["properties"]
pathlib.Path(opt["--output-last-message"]).write_text(json.dumps(RESULT, ensure_ascii=False))
'''

FAKE_CLAUDE = FAKE_PROLOGUE.replace("VERSION", "2.9.0 (Claude Code)").replace("NAME", "claude") + r'''
assert args[0] == "-p", args
opt = {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("--")}
assert opt["--output-format"] == "json", opt
assert opt["--allowedTools"] == "WebSearch,WebFetch", opt
schema = json.loads(opt["--json-schema"])
assert "evidence" in schema["properties"]
print(json.dumps({"type": "result", "is_error": False, "result": "done",
                  "structured_output": RESULT}, ensure_ascii=False))
'''


def _fake(bin_dir: Path, name: str, source: str) -> Path:
    path = bin_dir / name
    path.write_text(source.replace("PYTHON", sys.executable)
                    .replace("RESULT", repr(good_result())))
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("kind, source", [("codex", FAKE_CODEX), ("claude", FAKE_CLAUDE)])
def test_codex_and_claude_adapters_pass_the_documented_arguments(scene, tmp_path, kind, source):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake(bin_dir, kind, source)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    extra = ["--harness-arg=-c", '--harness-arg=web_search="live"'] if kind == "codex" else []
    code, events = scene.finish(scene.connector("answer", scene.topic,
                                                harness=["--harness", kind, *extra], env=env))
    assert code == EXIT_OK, (events, scene.outputs)
    [message] = scene.messages()
    assert message["text"] == good_result()["conclusion"]
    call = json.loads((bin_dir / f"{kind}-calls.json").read_text())
    assert "SQLite" in call["prompt"] and scene.agent["token"] not in call["prompt"]
    if kind == "codex":
        args = call["args"]
        schema_file = Path(args[args.index("--output-schema") + 1])
        last = Path(args[args.index("--output-last-message") + 1])
        assert schema_file.is_relative_to(scene.state_dir) and last.is_relative_to(scene.state_dir)
        assert json.loads(last.read_text())["conclusion"] == good_result()["conclusion"]
        assert args[-3:] == ["-c", 'web_search="live"', "-"]  # the owner's extra arguments

    doctor = subprocess.run(  # no --state-dir: the default folder for this server and agent
        [sys.executable, "-m", "lobbytalks", "agent", "doctor", "--json", "--harness", kind,
         "--server", scene.world.server.url],
        env={**os.environ, **env, TOKEN_ENV: scene.agent["token"],
             "XDG_STATE_HOME": str(tmp_path / "xdg")},
        capture_output=True, text=True, timeout=30)
    checks = {c["name"]: c for c in map(json.loads, doctor.stdout.splitlines())}
    assert doctor.returncode == 0, checks
    assert set(checks) == {"server", "encryption", "token", "communities", "harness", "state"}
    folder = tmp_path / "xdg" / "lobbytalks" / "agent"
    [made] = list(folder.iterdir())
    assert made.name.startswith(f"127.0.0.1_{scene.world.server.port}-")
    assert checks["state"]["message"] == f"{made} writable"
    assert ("0.99.0" if kind == "codex" else "2.9.0") in checks["harness"]["message"]
    assert scene.agent["token"] not in doctor.stdout + doctor.stderr


# --- the real codex and claude, a scripted model behind them ----------------------------

PORTABLE = {"type", "properties", "required", "additionalProperties", "items", "enum",
            "anyOf", "$defs", "$ref", "description"}


def keywords(node: Any, names: bool = False) -> set[str]:
    """Every schema keyword used anywhere in ``node`` (property and definition names aside)."""
    if isinstance(node, list):
        return set().union(*(keywords(v) for v in node))
    if not isinstance(node, dict):
        return set()
    if names:
        return set().union(*(keywords(v) for v in node.values()))
    return set(node).union(*(keywords(v, names=k in ("properties", "$defs"))
                             for k, v in node.items()))


def real_harness_env(kind: str, home: Path, model: ScriptedModel) -> dict[str, str]:
    """PATH with the pinned codex and claude first, each pointed at the scripted model."""
    env = {"PATH": f"{CLIENTS / 'node_modules' / '.bin'}{os.pathsep}{os.environ['PATH']}",
           "HOME": str(home)}
    if kind == "claude":
        return {**env, "ANTHROPIC_BASE_URL": model.base_url, "ANTHROPIC_API_KEY": "unused",
                "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    (home / "codex").mkdir(parents=True)
    (home / "codex" / "config.toml").write_text(
        f'model = "scripted"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
        f'name = "scripted"\nbase_url = "{model.base_url}/v1"\nwire_api = "responses"\n'
        f'env_key = "SCRIPTED_MODEL_KEY"\n', encoding="utf-8")
    return {**env, "CODEX_HOME": str(home / "codex"), "SCRIPTED_MODEL_KEY": "unused"}


@pytest.mark.parametrize("kind", ["codex", "claude"])
def test_the_real_codex_and_claude_answer_through_the_connector(scene, tmp_path, kind):
    """The pinned Codex and Claude Code CLIs take the connector's arguments, and each takes
    its result schema as a structured-output contract: Codex hands it to the model as a
    strict json_schema (OpenAI refuses one with `format: uri`), Claude Code offers its
    StructuredOutput tool (it silently leaves the tool out when the schema holds a format)."""
    result = good_result(conditions=None)  # a strict schema has every field, null or not
    answer = ({"text": json.dumps(result, ensure_ascii=False)} if kind == "codex"
              else call("StructuredOutput", **result))
    model = ScriptedModel([answer])
    env = real_harness_env(kind, tmp_path / "home", model)
    try:
        code, events = scene.finish(scene.connector("answer", scene.topic,
                                                    harness=["--harness", kind], env=env),
                                    timeout=120)
    finally:
        model.close()
    assert code == EXIT_OK, (events, scene.outputs)
    [message] = scene.messages()
    assert message["text"] == result["conclusion"]
    [request] = model.requests
    if kind == "codex":
        contract = request["text"]["format"]
        assert contract["type"] == "json_schema" and contract["strict"] is True
        schema = contract["schema"]
    else:
        [tool] = [t for t in request["tools"] if t["name"] == "StructuredOutput"]
        schema = tool["input_schema"]
    assert schema["required"] == list(schema["properties"]) and "conclusion" in schema["required"]
    assert keywords(schema) <= PORTABLE
    assert "30–200 characters" in schema["properties"]["conclusion"]["description"]
    assert scene.agent["token"] not in json.dumps(model.requests)
    scene.assert_token_nowhere()


def test_doctor_says_what_to_fix(scene, tmp_path):
    r = scene.owner.post(scene.world.server.url + "/api/external/manage",
                         json={"action": "revoke", "tokenId": scene.agent["tokenId"]})
    assert r.status_code == 200
    doctor = subprocess.run(
        [sys.executable, "-m", "lobbytalks", "agent", "doctor", "--json", "--harness", "command",
         "--harness-command", "/nowhere/research-harness", "--server", scene.world.server.url,
         "--state-dir", str(tmp_path / "s")],
        env={**os.environ, TOKEN_ENV: scene.agent["token"]}, capture_output=True, text=True)
    assert doctor.returncode == EXIT_TASK_FAILED
    checks = {c["name"]: c for c in map(json.loads, doctor.stdout.splitlines())}
    assert checks["server"]["ok"] is True
    assert checks["token"]["ok"] is False and "rotate" in checks["token"]["fix"]
    assert checks["harness"]["ok"] is False and checks["harness"]["fix"]


@pytest.mark.parametrize("server, warned", [
    ("http://10.0.0.7:8000", True), ("http://talk.example.org", True),
    ("http://0.0.0.0:8000", True),
    ("http://127.0.0.1:8000", False), ("http://127.5.6.7", False), ("http://localhost:8000", False),
    ("http://[::1]:8000", False), ("https://talk.example.org", False),
])
def test_plain_http_to_another_machine_is_warned_of(server, warned):
    from lobbytalks.connector.app import in_clear
    said = in_clear(server)
    assert (said is not None) == warned
    assert said is None or ("unencrypted" in said and "https://" in said)


def test_doctor_fails_and_run_warns_when_the_token_would_cross_the_network_in_clear(scene, tmp_path):
    """Every check passed and run said nothing while the token went out over plain http."""
    away = f"http://0.0.0.0:{free_port()}"  # not this machine's loopback name: as if remote
    doctor = subprocess.run(
        [sys.executable, "-m", "lobbytalks", "agent", "doctor", "--json", "--harness", "command",
         "--harness-command", f"{sys.executable} {scene.stub}", "--server", away,
         "--state-dir", str(tmp_path / "s")],
        env={**os.environ, TOKEN_ENV: scene.agent["token"]}, capture_output=True, text=True)
    assert doctor.returncode == EXIT_TASK_FAILED
    checks = {c["name"]: c for c in map(json.loads, doctor.stdout.splitlines())}
    assert checks["encryption"]["ok"] is False and "https://" in checks["encryption"]["fix"]
    code, events = scene.finish(scene.connector("run", "--once", server=away, retry_backoff="0.01"))
    assert "insecure" in names(events) and code != EXIT_OK
    code, events = scene.finish(scene.run_once())
    assert "insecure" not in names(events)


def test_doctor_names_a_harness_that_is_not_executable_and_a_token_file_others_can_read(
        scene, tmp_path):
    program = tmp_path / "research.py"
    program.write_text("print('{}')\n")  # no execute bit
    token_file = tmp_path / "agent-token"
    token_file.write_text(scene.agent["token"])
    token_file.chmod(0o644)
    doctor = subprocess.run(
        [sys.executable, "-m", "lobbytalks", "agent", "doctor", "--json", "--harness", "command",
         "--harness-command", str(program), "--server", scene.world.server.url,
         "--token-file", str(token_file), "--state-dir", str(tmp_path / "s")],
        capture_output=True, text=True)
    assert doctor.returncode == EXIT_TASK_FAILED
    checks = {c["name"]: c for c in map(json.loads, doctor.stdout.splitlines())}
    assert checks["token"]["ok"] is True
    assert f"连接器测试 ({scene.community})" in checks["communities"]["message"]  # not ids alone
    assert checks["token file"]["ok"] is False
    assert checks["token file"]["fix"] == f"chmod 600 {token_file}"
    assert checks["harness"]["message"] == f"{program} is not executable"


def test_only_names_of_files_that_are_there_are_taken_from_the_starting_folder(tmp_path):
    (tmp_path / "research.py").write_text("")
    (tmp_path / "deepseek").mkdir()  # a folder named like a plain word argument
    (tmp_path / "tools").mkdir()
    config = HarnessConfig(kind="command", start=str(tmp_path), command=(
        "python3 research.py deepseek tools/ --out=x.json https://example.org/a.py "
        "/abs/helper.py"), extra_args=["--config", "settings.toml", "helper.sh"])
    assert config.argv(None) == [
        "python3", str(tmp_path / "research.py"), "deepseek", str(tmp_path / "tools"),
        "--out=x.json", "https://example.org/a.py", "/abs/helper.py", "--config",
        "settings.toml", "helper.sh"]
    assert config.missing_scripts() == ["/abs/helper.py", "helper.sh"]
    assert HarnessConfig(kind="codex", start=str(tmp_path)).missing_scripts() == []


def test_doctor_names_a_missing_script_and_a_state_folder_others_can_open(scene, tmp_path):
    state = tmp_path / "shared-state"
    state.mkdir(mode=0o755)
    state.chmod(0o755)  # whatever the umask

    def doctor(script: str) -> dict[str, dict]:
        r = subprocess.run(
            [sys.executable, "-m", "lobbytalks", "agent", "doctor", "--json", "--harness",
             "command", "--harness-command", f"{sys.executable} {script} --model x",
             "--server", scene.world.server.url, "--state-dir", str(state)],
            env={**os.environ, TOKEN_ENV: scene.agent["token"]}, cwd=tmp_path,
            capture_output=True, text=True)
        checks = {c["name"]: c for c in map(json.loads, r.stdout.splitlines())}
        assert r.returncode == (EXIT_OK if all(c["ok"] for c in checks.values())
                                else EXIT_TASK_FAILED), checks
        return checks

    checks = doctor("reserch.py")  # a typo of the stub's name, research.py
    assert checks["harness"]["ok"] is True  # the interpreter itself is there
    assert checks["harness script"]["ok"] is False
    assert checks["harness script"]["message"] == f"reserch.py not found from {tmp_path}"
    assert checks["state"]["ok"] is False and checks["state"]["fix"] == f"chmod 700 {state}"
    state.chmod(0o700)
    checks = doctor("research.py")  # found from where the connector starts
    assert "harness script" not in checks
    assert checks["state"]["ok"] is True, checks["state"]


def test_a_busy_state_folder_is_said_on_stdout_too_with_json(scene):
    hold(scene)
    first = scene.run_once()
    wait_for(lambda: started(scene), what="research to start")
    code, events = scene.finish(scene.connector("answer", scene.topic))
    assert code == EXIT_BUSY
    assert events[0]["event"] == "error" and "another connector" in events[0]["message"]
    release(scene)
    assert scene.finish(first)[0] == EXIT_OK


def test_no_token_on_the_command_line_and_none_in_the_environment_is_a_usage_error(world, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    r = subprocess.run([sys.executable, "-m", "lobbytalks", "agent", "run", "--once",
                        "--server", world.server.url, "--state-dir", str(tmp_path / "s")],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 2 and TOKEN_ENV in r.stderr
    r = subprocess.run([sys.executable, "-m", "lobbytalks", "agent", "run", "--token", "lbt_x"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 2 and "unrecognized arguments" in r.stderr


# --- the retry rules of §12 ----------------------------------------------------------------

def test_503_is_retried_with_backoff_and_429_waits_for_retry_after(scene, proxy):
    faults = {"claim_task": 2, "list_topics": 1}

    def fault(path, body):
        for action in faults:
            if faults[action] and (action in path or f'"{action}"'.encode() in body):
                faults[action] -= 1
                if action == "list_topics":
                    return 429, {"Retry-After": "1"}, {"error": "slow down", "code": "rate_limited"}
                return 503, {}, {"error": "busy", "code": "service_unavailable"}
        return None
    flaky = proxy(fault)
    code, events = scene.finish(scene.run_once(server=flaky.url))
    assert code == EXIT_OK, events
    retries = [e for e in events if e["event"] == "retrying"]
    assert [r["message"] for r in retries] == ["HTTP 429", "HTTP 503", "HTTP 503"]
    assert retries[0]["delay"] == 1.0                     # what Retry-After said
    assert 0.1 <= retries[1]["delay"] <= 0.2 and 0.2 <= retries[2]["delay"] <= 0.4  # doubling, jittered
    assert flaky.count("claim_task") == 3 and len(scene.tasks()) == 1
    assert scene.tasks()[0]["state"] == "done"


def test_a_deterministic_refusal_is_never_repeated(scene, proxy):
    scene.asker.post(scene.world.server.url + "/api/community",
                     json={"action": "close", "topic": scene.topic})
    counting = proxy()
    code, events = scene.finish(scene.connector("answer", scene.topic, server=counting.url))
    assert code == EXIT_TASK_FAILED
    assert counting.count("claim_task") == 1 and "retrying" not in names(events)
    [rejected] = [e for e in events if e["event"] == "rejected"]
    assert "topic_unavailable" in rejected["message"]
    assert scene.tasks() == []
    [attempt] = [json.loads(p.read_text()) for p in (scene.state_dir / "attempts").glob("*.json")]
    assert attempt["state"] == "rejected"


def test_sigterm_stops_the_harness_and_reports_the_task_failed(scene):
    hold(scene)
    proc = scene.connector("run", "--poll-interval", "0.2", "--community", scene.community)
    wait_for(lambda: started(scene), what="research to start")
    stopped_at = time.time()
    proc.send_signal(signal.SIGTERM)
    code, events = scene.finish(proc, timeout=20)
    assert code == EXIT_OK and time.time() - stopped_at < 10
    assert ["stopping", "task_failed", "stopped"] == [
        n for n in names(events) if n in ("stopping", "task_failed", "stopped")]
    [stopping] = [e for e in events if e["event"] == "stopping"]
    assert stopping["message"] == "stopping the harness and reporting the current task failed"
    [task] = scene.tasks()
    assert task["state"] == "failed" and "stopped" in task["error"]
    pid = int((scene.stub_dir / "pid-1").read_text())
    wait_for(lambda: process_gone(pid), what="the harness to stop")


def start_with_a_daemon(scene: Scene, tmp_path: Path) -> tuple[subprocess.Popen, int]:
    """A held harness run that started a daemon (double fork, new session, its output
    closed): the connector, and the daemon's pid."""
    daemonising = tmp_path / "daemonising.py"
    daemonising.write_text(STUB.replace("doc = json.load(sys.stdin)\n", (
        "doc = json.load(sys.stdin)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        (d / 'daemon-pid').write_text(str(os.getpid()))\n"
        "        os.closerange(0, 3); time.sleep(120)\n"
        "    os._exit(0)\n"), 1))
    hold(scene)
    proc = scene.connector("run", "--poll-interval", "0.2", "--community", scene.community,
                           harness=["--harness", "command", "--harness-command",
                                    f"{sys.executable} {daemonising}"])
    daemon = wait_for(lambda: (scene.stub_dir / "daemon-pid").exists()
                      and int((scene.stub_dir / "daemon-pid").read_text() or 0),
                      what="the harness's daemon to start")
    assert os.getsid(daemon) != os.getpgid(int((scene.stub_dir / "pid-1").read_text()))
    return proc, daemon


def test_a_stop_also_ends_what_the_harness_started_outside_its_group(scene, tmp_path):
    """Killing the harness's process group alone left such a daemon running."""
    proc, daemon = start_with_a_daemon(scene, tmp_path)
    proc.send_signal(signal.SIGTERM)
    code, events = scene.finish(proc, timeout=20)
    assert code == EXIT_OK, events
    assert scene.tasks()[0]["state"] == "failed"
    wait_for(lambda: process_gone(daemon), what="the daemon to stop")


def test_a_restart_after_a_kill_ends_the_daemon_the_old_harness_started(scene, tmp_path):
    proc, daemon = start_with_a_daemon(scene, tmp_path)
    scene.kill(proc)
    assert not process_gone(daemon)
    restarted = scene.run_once()
    wait_for(lambda: started(scene, 2), what="research to start again")
    wait_for(lambda: process_gone(daemon), what="the left-behind daemon to be stopped")
    release(scene)
    code, events = scene.finish(restarted)
    assert code == EXIT_OK and "leftover_stopped" in names(events), events


def test_a_misshapen_list_while_a_harness_runs_is_said_and_the_research_goes_on(scene, proxy):
    """A list_topics answered {} while a question was being researched ended `agent run`
    with a KeyError traceback; the harness ran on, orphaned, its lease held."""
    broken = threading.Event()
    lists = proxy(lambda path, body: (200, {}, {}) if broken.is_set() and "list_topics" in path
                  else None)
    hold(scene)
    proc = scene.connector("run", "--poll-interval", "0.2", "--max-tasks", "2",
                           "--community", scene.community, server=lists.url)
    wait_for(lambda: started(scene), what="research to start")
    broken.set()
    polls = lists.count("list_topics")
    wait_for(lambda: lists.count("list_topics") >= polls + 2, what="two more polls")
    release(scene)
    wait_for(lambda: [t["state"] for t in scene.tasks()] == ["done"], what="the answer")
    proc.send_signal(signal.SIGTERM)
    code, events = scene.finish(proc, timeout=20)
    assert code == EXIT_OK and "Traceback" not in "".join(scene.outputs)
    refused = [e for e in events if e["event"] == "poll_refused"]
    assert refused and refused[0]["code"] == "invalid_response", events
    assert "submitted" in names(events)


def test_answer_stopped_while_the_server_is_away_exits_zero_as_run_does(scene):
    """EXIT_OK is 0, and `code or EXIT_TASK_FAILED` made it 1; the README's table says 0."""
    proc = scene.connector("answer", scene.topic, server=f"http://127.0.0.1:{free_port()}",
                           retry_backoff="2")
    wait_for(lambda: any(p.name.endswith(".json")
                         for p in (scene.state_dir / "attempts").glob("*")),
             what="the attempt to be written")
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    code, events = scene.finish(proc, timeout=20)
    assert code == EXIT_OK, events
    assert "stopping" in names(events) and "unreachable" in names(events)


def test_readable_progress_lines_without_json(scene):
    proc = subprocess.run(
        [sys.executable, "-m", "lobbytalks", "agent", "answer", scene.topic,
         "--server", scene.world.server.url, "--state-dir", str(scene.state_dir),
         "--harness", "command", "--harness-command", f"{sys.executable} {scene.stub}",
         "--tick", "0.1"],
        env={**os.environ, TOKEN_ENV: scene.agent["token"], "STUB_DIR": str(scene.stub_dir)},
        capture_output=True, text=True, timeout=30)
    assert proc.returncode == EXIT_OK, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("[attempt_created]") and lines[-1].startswith("[submitted]")
    assert f"messageId={scene.messages()[0]['id']}" in lines[-1]
    assert scene.agent["token"] not in proc.stdout + proc.stderr


def test_the_connector_never_imports_flask_or_the_servers_database_code():
    forbidden = ("flask", "werkzeug", "waitress", "lobbytalks.db", "lobbytalks.services",
                 "lobbytalks.blueprints", "lobbytalks.runtime")
    folder = Path(__file__).resolve().parent.parent / "lobbytalks" / "connector"
    imported = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = "lobbytalks" + "." * bool(node.module) if node.level == 2 else \
                    ("lobbytalks.connector." if node.level == 1 else "")
                imported.add(base + (node.module or ""))
    assert "lobbytalks.models.result_problems" in imported  # the server's own rules, reused
    assert not [name for name in imported if name.startswith(forbidden)]


@functools.cache
def documented_event_fields() -> dict[str, frozenset[str]]:
    """The README's events table: each event's name with the fields its row lists (read
    once: every finished run's events are checked against it)."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text("utf-8")
    section = readme[readme.index("### Events (`--json`)"):readme.index("### As a service")]
    documented = {}
    for row in re.findall(r"^\| (`.+)\|$", section, re.M):
        names, _, fields = row.split(" | ")
        for name in re.findall(r"`(\w+)`", names):
            documented[name] = frozenset({"event", "time", "message",
                                          *re.findall(r"`(\w+)`", fields)})
    return documented


def test_every_event_and_field_the_code_says_is_documented_in_the_readme():
    documented = documented_event_fields()
    assert sorted(EVENTS - documented.keys()) == [] and sorted(documented.keys() - EVENTS) == []
    undocumented = []
    for source in (Path(__file__).resolve().parent.parent / "lobbytalks" / "connector").glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text("utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("emit", "say", "_say_once") and node.args):
                continue
            named = node.args[0]
            choices = [named.body, named.orelse] if isinstance(named, ast.IfExp) else [named]
            if not all(isinstance(c, ast.Constant) for c in choices):
                continue  # _say_once's own pass-through: its callers are looked at
            for event in (c.value for c in choices):
                undocumented += [(event, k.arg) for k in node.keywords
                                 if k.arg not in documented[event]]
    assert undocumented == []


def test_budget_and_quiet_hours_start_no_research(scene):
    code, events = scene.finish(scene.run_once("--daily-budget", "0"))
    assert code == EXIT_OK and "skipped_budget" in names(events)
    hour = time.localtime(int(scene.world.clock.read_text()) + time.time()).tm_hour
    code, events = scene.finish(scene.run_once("--quiet-hours", f"{hour}-{(hour + 2) % 24}"))
    assert code == EXIT_OK and "quiet_hours" in names(events)
    assert scene.tasks() == [] and not started(scene)


@pytest.mark.parametrize("per_day", [None, "x", -3, [9], 2.5])
def test_a_budget_file_of_another_shape_counts_no_runs(scene, per_day):
    """A budget file valid as JSON but edited by hand or damaged (a list, or a day counted
    by no whole number) stopped every poll with a traceback; it counts no runs, as a
    missing or unreadable one does."""
    now = int(scene.world.clock.read_text()) + time.time()
    days = [time.strftime("%Y-%m-%d", time.localtime(now + shift)) for shift in (-86400, 0, 86400)]
    budget = [1, 2] if per_day is None else {day: per_day for day in days}
    scene.state_dir.mkdir(parents=True, exist_ok=True)
    (scene.state_dir / "budget.json").write_text(json.dumps(budget))
    code, events = scene.finish(scene.run_once("--daily-budget", "1"))
    assert code == EXIT_OK and started(scene), events


def test_https_to_a_plain_http_server_is_said_at_once_with_the_address_to_give(scene):
    """Seven tries of 20 s each, then exit 4 on "[SSL: UNEXPECTED_EOF_WHILE_READING]" with
    no word of what was wrong."""
    https = scene.world.server.url.replace("http://", "https://")
    code, events = scene.finish(scene.run_once(server=https))
    assert code == EXIT_UNREACHABLE and "retrying" not in names(events), events
    [unreachable] = [e for e in events if e["event"] == "unreachable"]
    assert f"give --server {scene.world.server.url}" in unreachable["message"]


def test_why_nothing_starts_is_said_once_not_at_every_poll(scene):
    """A spent budget printed skipped_budget at every poll: a line a minute all day."""
    proc = scene.connector("run", "--poll-interval", "0.2", "--daily-budget", "0",
                           "--community", scene.community)
    time.sleep(1.5)  # some seven polls
    proc.send_signal(signal.SIGTERM)
    code, events = scene.finish(proc)
    assert code == EXIT_OK and names(events).count("skipped_budget") == 1, events


@pytest.mark.parametrize("waiting", ["budget", "quiet hours"])
def test_a_token_revoked_while_nothing_is_researched_still_ends_the_run(scene, waiting):
    """A spent budget or quiet hours sent no request at all: the revoked token went unnoticed
    and the service looked healthy all day."""
    hour = time.localtime(int(scene.world.clock.read_text()) + time.time()).tm_hour
    holding = (["--daily-budget", "0"] if waiting == "budget"
               else ["--quiet-hours", f"{hour}-{(hour + 2) % 24}"])
    r = scene.owner.post(scene.world.server.url + "/api/external/manage",
                         json={"action": "revoke", "tokenId": scene.agent["tokenId"]})
    assert r.status_code == 200, r.text
    code, events = scene.finish(scene.connector(
        "run", "--poll-interval", "0.2", "--community", scene.community, *holding))
    assert code == EXIT_TOKEN and names(events)[-2:] == ["token_rejected", "stopped"], events


def test_a_token_rejected_while_polling_ends_the_run_then_not_a_poll_later(scene):
    """The loop noted the rejected token and then slept its poll interval before looking:
    with the default minute it said token_rejected a minute after the server did. With an
    hour between polls, the run still ends on the first refusal."""
    r = scene.owner.post(scene.world.server.url + "/api/external/manage",
                         json={"action": "revoke", "tokenId": scene.agent["tokenId"]})
    assert r.status_code == 200, r.text
    code, events = scene.finish(scene.connector(
        "run", "--poll-interval", "3600", "--community", scene.community), timeout=60)
    assert code == EXIT_TOKEN and names(events)[-2:] == ["token_rejected", "stopped"], events
    said = next(e for e in events if e["event"] == "token_rejected")
    assert "reinstates" in said["message"]  # what an owner an admin suspended can do


@pytest.mark.parametrize("waiting", [False, True], ids=["polling", "quiet hours"])
def test_an_owner_suspended_ends_the_run_as_a_rejected_token_does(scene, waiting):
    """A suspended owner's agent is refused (401, with the reason): the connector stops as
    for any rejected token (once, told 403, it logged poll_refused at every poll, or nothing
    in quiet hours, and ran on for ever)."""
    from lobbytalks.services import moderation
    me = scene.owner.get(scene.world.server.url + "/api/community?action=me").json()["user"]
    asker = scene.asker.get(scene.world.server.url + "/api/community?action=me").json()["user"]
    with open_database(scene.world.server.data_dir) as db:
        moderation.suspend(db, asker["id"], me["username"], "刷屏",
                           now=int(time.time()) + int(scene.world.clock.read_text()))
    hour = time.localtime(int(scene.world.clock.read_text()) + time.time()).tm_hour
    quiet = ["--quiet-hours", f"{hour}-{(hour + 2) % 24}"] if waiting else []
    code, events = scene.finish(scene.connector(
        "run", "--poll-interval", "0.2", "--community", scene.community, *quiet))
    assert code == EXIT_TOKEN and names(events)[-2:] == ["token_rejected", "stopped"], events
    assert "poll_refused" not in names(events)


def test_the_askers_own_agent_gets_the_private_context_and_may_not_echo_it(world, tmp_path):
    owner = world.person()
    community = world.community(owner)
    private = "我们的数据库在内网 10.0.0.5，每晚两点有批处理任务在写入"
    r = owner.post(world.server.url + "/api/community", json={
        "action": "topic", "title": "夜间批处理时怎样做在线备份？", "community": community,
        "privateContext": private})
    assert r.status_code == 200, r.text
    agent = world.agent(owner)
    scene = Scene(world, tmp_path, owner, owner, r.json()["id"], agent, tmp_path / "stub",
                  tmp_path / "research.py")
    scene.community = community
    scene.stub_dir.mkdir()
    scene.stub.write_text(STUB)
    (scene.stub_dir / "token").write_text(agent["token"])
    echo = good_result(reasoningSummary=f"题主说：{private}。所以应在批处理之外的时间备份。")
    (scene.stub_dir / "result.json").write_text(json.dumps(echo, ensure_ascii=False))
    try:
        code, events = scene.finish(scene.run_once())
    finally:
        scene.cleanup()
    assert code == EXIT_TASK_FAILED
    doc = json.loads((scene.stub_dir / "doc-1.json").read_text())
    assert doc["question"]["privateContextIncluded"] is True
    assert doc["question"]["privateContext"] == private
    [task] = scene.tasks()
    assert task["state"] == "failed" and "private context" in task["error"]
    assert private not in task["error"] and scene.messages() == []


def test_a_harness_null_is_left_out_of_the_submission_and_the_server_refuses_null():
    """The harness schema lets an optional field be null (structured output wants every
    property); the connector sends it as absent, since the server refuses null."""
    result = good_result(conditions=None, toolRuns=None, uncertainties=None)
    body, problems = submission("task_x", result, None, now=1_800_000_000)
    assert problems == []
    sent = json.loads(body)
    assert {"conditions", "toolRuns", "uncertainties"}.isdisjoint(sent)
    assert sent["conclusion"] == result["conclusion"] and sent["taskId"] == "task_x"
    assert {"type": "null"} in result_schema()["properties"]["conditions"]["anyOf"]


def test_limits_the_portable_schema_cannot_hold_are_said_in_words():
    node = {"type": "string", "description": "标题", "minLength": 1, "maxLength": 240,
            "format": "uri", "pattern": "^https://", "title": "Title"}
    assert limits_in_words(node) == '1–240 characters; a public https URL; pattern "^https://"'
    assert limits_in_words({"type": "array", "maxItems": 4}) == "at most 4 items"
    schema = result_schema()
    assert schema["properties"]["reasoningSummary"]["description"].endswith(
        "(at most 1600 characters)")


TOKEN = "lbt_" + "Q7x2" * 11 + "Zk"


@pytest.mark.parametrize("split", [
    lambda t: {"reasoningSummary": "理由很长很长很长很长很长很长很长很长很长很长。\n" + "\n".join(t)},
    lambda t: {"conditions": ["**".join([t[:20], t[20:]])]},
    lambda t: {"reasoningSummary": "理由很长很长很长很长很长很长很长很长很长很长。" + "\t".join(t)},
], ids=["by-lines", "by-markup", "by-tabs"])
def test_a_token_split_by_line_breaks_is_not_submitted(split):
    """Judged on the fields, not their JSON: "\\n" between two halves put an "n" there."""
    body, problems = submission("task_x", good_result(**split(TOKEN)), None,
                                now=1_800_000_000, secrets=(TOKEN,))
    assert body is None and problems == [
        "sensitive_content: the result holds the Agent Token, spelt out or encoded"]


def echoed(*fields: str) -> list[str]:
    return [f"private_context: {', '.join(fields)} repeat(s) the asker's private context word "
            "for word; say it in your own words or leave it out"]


def test_another_agents_token_in_the_environment_reaches_neither_harness_nor_answer(scene, tmp_path):
    """With --token-env naming another variable, XIA_CHEDAN_AGENT_TOKEN (here another
    agent's token) was passed to the harness, and that token reversed in a result went out."""
    other = scene.world.agent(scene.owner)["token"]
    (scene.stub_dir / "other").write_text(other)
    leaky = tmp_path / "leaky.py"
    leaky.write_text(textwrap.dedent("""
        import json, os, pathlib
        d = pathlib.Path(os.environ["STUB_DIR"])
        (d / "saw").write_text(json.dumps([k for k, v in os.environ.items() if "lbt_" in v]))
        result = json.loads((d / "result.json").read_text())
        result["uncertainties"] = ["ref " + (d / "other").read_text()[::-1]]
        print(json.dumps(result, ensure_ascii=False))
    """))
    code, events = scene.finish(scene.run_once(
        "--token-env", "BOB_TOKEN",
        env={"BOB_TOKEN": scene.agent["token"], TOKEN_ENV: other, "NOTES": f"old: {other}"},
        harness=["--harness", "command", "--harness-command", f"{sys.executable} {leaky}"]))
    assert json.loads((scene.stub_dir / "saw").read_text()) == []
    assert code == EXIT_TASK_FAILED and names(events).count("result_invalid") == 2
    [task] = scene.tasks()
    assert task["state"] == "failed" and "sensitive_content" in task["error"]
    assert scene.messages() == [] and other not in "".join(scene.outputs)


def test_a_lone_surrogate_in_a_result_goes_back_to_the_harness_not_to_an_error():
    """json.loads takes "\\ud83d"; encoding the submission then raised UnicodeEncodeError, the
    attempt ended as an unexpected error (the whole body in the log) with no second try."""
    body, problems = submission("task_x", good_result(
        conclusion="用 SQLite 在线备份 API 可以在服务运行时得到一致副本 [S1]，不要直接复制文件。\ud83d"),
                                None, now=1_800_000_000)
    assert body is None and len(problems) == 1 and problems[0].startswith("invalid_request: ")
    from lobbytalks.connector.events import short_reason
    assert short_reason("Not logged in \ud800 please run /login") == "Not logged in ? please run /login"


def test_a_result_within_every_field_limit_but_over_the_body_limit_goes_back_to_the_harness():
    """Chinese text at every field's limit came to 111,878 bytes: the server answered 413
    and the harness had no second try."""
    long = "据官方文档记载" * 171  # 1,197 characters, 3 bytes each
    source = good_result()["evidence"][0]
    result = good_result(reasoningSummary="理由" * 800, toolRuns=[
        {"name": f"search-{i}", "status": "success", "summary": long, "inputSummary": "q"}
        for i in range(12)], evidence=[
        {**source, "url": f"https://www.sqlite.org/backup{i}.html", "title": "标题" * 120,
         "excerpt": long} for i in range(8)])
    body, problems = submission("task_x", result, None, now=1_800_000_000)
    assert body is None and len(problems) == 1
    assert problems[0].startswith("payload_too_large: the result is ") and "65,536" in problems[0]
    fits = {**result, "toolRuns": result["toolRuns"][:4], "evidence": result["evidence"][:4]}
    assert "the whole result at most 64 KiB" in result_schema()["description"]  # told up front
    assert submission("task_x", fits, None, now=1_800_000_000)[0] is not None


def test_a_private_context_with_a_line_break_echoed_is_not_submitted():
    private = "我们的数据库在内网，\n每晚两点有批处理任务在写入"
    result = good_result(reasoningSummary=f"题主说：{private}。所以应在批处理之外的时间备份。")
    body, problems = submission("task_x", result, private, now=1_800_000_000)
    assert body is None and problems == echoed("reasoningSummary")


PRIVATE = "My home address is 12 Elm Street Springfield\nand my landlord is John Q Smith, phone 555 0100."


@pytest.mark.parametrize("echo", [
    "My home address is 12 Elm Street Springfield and my landlord is John Q Smith, phone 555 0100.",
    "My home address is 12 Elm Street Springfield\nand my landlord is John Q Smith, phone 555",
    "home address is 12 Elm Street Springfield and my landlord is John Q Smith, phone 555 0100",
    # invisible between every character: it reads the same on screen
    "\u200b".join(PRIVATE.replace("\n", " ")), "\u00ad".join(PRIVATE.replace("\n", " ")),
])
def test_a_private_context_rewrapped_or_cut_short_is_not_submitted(echo):
    """Only the exact copy was caught: a line break made a space, or the last words
    dropped, and the asker's private context went out to every other contributor."""
    result = good_result(uncertainties=[f"The asker said: {echo}"])
    assert submission("task_x", result, PRIVATE, now=1_800_000_000) == (
        None, echoed("uncertainties"))


@pytest.mark.parametrize("private, answer", [
    # what the question is about, which the answer must name: a product, an address, code
    (PRIVATE, "Whether 12 Elm Street Springfield is in the flood zone is not known."),
    ("Our DB: PostgreSQL 16.1 with TimescaleDB", "PostgreSQL 16.1 with TimescaleDB supports it."),
    ("I am reading https://www.sqlite.org/backup.html and wonder about WAL mode",
     "The page https://www.sqlite.org/backup.html says the backup restarts on a write."),
    ("My code: conn.backup(dest, pages=1)", "Call conn.backup(dest, pages=1) in a loop; it "
     "copies one page a step."),
    ("服务器用的是 PostgreSQL 14", "PostgreSQL 14 的 pg_dump 是否支持并行导出需要确认。"),
])
def test_an_answer_naming_what_a_private_context_mentions_is_submitted(private, answer):
    """Half of a context counted as a copy: an honest answer naming the product, the page
    or the line of code the asker gave failed its task."""
    body, problems = submission("task_x", good_result(uncertainties=[answer]), private,
                                now=1_800_000_000)
    assert body is not None and problems == []


def test_a_private_context_the_public_question_holds_too_is_no_secret():
    said = "We run PostgreSQL 15 on three nodes in Frankfurt"
    result = good_result(uncertainties=[f"The asker says: {said}."])
    assert submission("task_x", result, said, now=1_800_000_000)[0] is None
    body, problems = submission("task_x", result, said, now=1_800_000_000,
                                public=f"How do I back up?\n{said}")
    assert body is not None and problems == []


def test_once_with_the_server_down_exits_4_not_0(scene):
    """A cron job running `run --once` must see a dead server as a failure."""
    dead = f"http://127.0.0.1:{free_port()}"
    code, events = scene.finish(scene.run_once(server=dead), timeout=60)
    assert code == EXIT_UNREACHABLE, events
    assert events[-2]["event"] == "unreachable" and events[-1]["event"] == "stopped"


def test_a_community_the_server_refuses_is_reported_not_a_traceback(scene):
    proc = scene.connector("run", "--once", "--poll-interval", "0.2", "--community", "no_such")
    code, events = scene.finish(proc)
    assert code == EXIT_TASK_FAILED
    refused = [e for e in events if e["event"] == "poll_refused"]
    assert refused and refused[0]["code"] == "not_found", events
    assert "Traceback" not in scene.outputs[-1], scene.outputs[-1]


@pytest.mark.parametrize("option, said", [
    (["--quiet-hours", "night"], "--quiet-hours takes START-END"),
    (["--daily-budget", "-1"], "--daily-budget: must be at least 0"),
    (["--poll-interval", "-5"], "--poll-interval: must be at least 0.1"),
    (["--poll-interval", "nan"], "--poll-interval: must be at least 0.1"),  # polled flat out
    (["--retry-backoff", "inf"], "--retry-backoff: must be at least"),
    (["--tick", "0"], "--tick: must be at least 0.01"),
    (["--harness-timeout", "0"], "--harness-timeout: must be at least 1"),
])
def test_an_option_out_of_range_is_a_usage_error_that_names_it(tmp_path, option, said):
    r = subprocess.run([sys.executable, "-m", "lobbytalks", "agent", "run", "--once",
                        "--server", "http://127.0.0.1:9", "--state-dir", str(tmp_path / "s"),
                        *option], env={**os.environ, TOKEN_ENV: "lbt_" + "x" * 46},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and said in r.stderr, r.stderr


@pytest.mark.parametrize("server", ["http://[::1", "http://127.0.0.1:port",
                                    "http://127.0.0.1:99999", "http://"])
def test_a_malformed_server_address_is_a_usage_error(tmp_path, server):
    """"http://[::1" was a traceback; the others were taken for an outage: seven tries,
    exit 4 (which a systemd unit restarts for good) and a state folder named after them."""
    for command in ("run", "doctor"):
        r = subprocess.run([sys.executable, "-m", "lobbytalks", "agent", command, "--server",
                            server, "--state-dir", str(tmp_path / "s")],
                           env={**os.environ, TOKEN_ENV: "lbt_" + "x" * 46},
                           capture_output=True, text=True, timeout=60)
        said = f"--server is not a server address (http://host:port): {server!r}"
        assert said in r.stdout + r.stderr and "Traceback" not in r.stderr, r.stderr
        assert r.returncode == (2 if command == "run" else 1)  # doctor: a failed check
    assert not (tmp_path / "s").exists()


def test_a_server_address_with_a_password_is_refused_without_repeating_it(tmp_path):
    """`run` went on and said the address, password and all, in its errors."""
    server = "http://someone:s3cretpw@127.0.0.1:9"
    for command in ("run", "doctor"):
        r = subprocess.run([sys.executable, "-m", "lobbytalks", "agent", command, "--server",
                            server, "--state-dir", str(tmp_path / "s")],
                           env={**os.environ, TOKEN_ENV: "lbt_" + "x" * 46},
                           capture_output=True, text=True, timeout=60)
        assert "--server must not hold a user or password" in r.stdout + r.stderr, r.stderr
        assert "s3cretpw" not in r.stdout + r.stderr and "Traceback" not in r.stderr
        assert r.returncode == (2 if command == "run" else 1)
    assert not (tmp_path / "s").exists()


# --- local faults never leave a lease silent ------------------------------------------------

@pytest.mark.parametrize("command", ["./research.py", f"{sys.executable} research.py"])
def test_a_relative_harness_program_and_state_dir_are_found_from_where_it_started(
        scene, tmp_path, command):
    """The help's own example, --harness-command ./research.py, or an interpreter and its
    script, with --state-dir state: each names paths from the connector's folder, though the
    harness runs in its own."""
    program = tmp_path / "research.py"
    program.write_text(f"#!{sys.executable}\n" + STUB)
    program.chmod(0o755)
    code, events = scene.finish(scene.connector(
        "answer", scene.topic, cwd=tmp_path, state_dir="state",
        harness=["--harness", "command", "--harness-command", command]))
    assert code == EXIT_OK, events
    [task] = scene.tasks()
    assert task["state"] == "done"
    assert (tmp_path / "state" / "attempts").is_dir()


def test_a_harness_that_cannot_start_fails_the_task_at_once(scene, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("#!/no/such/interpreter\n")
    broken.chmod(0o755)
    code, events = scene.finish(scene.run_once(
        harness=["--harness", "command", "--harness-command", str(broken)]))
    assert code == EXIT_TASK_FAILED, events
    [task] = scene.tasks()
    assert task["state"] == "failed", task["error"]
    assert task["error"].startswith("harness failed: could not start the harness")
    assert "Traceback" not in scene.outputs[-1]


def test_a_state_folder_that_cannot_keep_the_result_fails_the_task_and_says_why(scene):
    hold(scene)
    proc = scene.run_once()
    wait_for(lambda: started(scene), what="research to start")
    results = scene.state_dir / "results"
    results.rmdir()
    results.write_text("")  # keeping the result now fails, as on a full or read-only disk
    release(scene)
    code, events = scene.finish(proc)
    assert code == EXIT_TASK_FAILED, events
    [task] = scene.tasks()
    assert task["state"] == "failed" and "the connector failed" in task["error"], task["error"]
    [error] = [e for e in events if e["event"] == "error"]
    assert str(results) in error["message"]
    assert "Traceback" not in scene.outputs[-1]


def test_a_state_folder_that_cannot_keep_results_ends_a_run_before_the_next_question(scene):
    """The run went on to claim and research every next question, each failed the same way
    (paid research runs lost), instead of stopping with exit 1 as the README says."""
    other = scene.world.ask(scene.asker, title="WAL 模式下备份要注意什么？", community=scene.community)
    hold(scene)
    proc = scene.connector("run", "--poll-interval", "0.2", "--community", scene.community)
    wait_for(lambda: started(scene), what="research to start")
    results = scene.state_dir / "results"
    results.rmdir()
    results.write_text("")  # keeping the result now fails, as on a read-only folder
    release(scene)
    code, events = scene.finish(proc)
    assert code == EXIT_TASK_FAILED, events
    [error] = [e for e in events if e["event"] == "error"]
    assert "cannot write the state folder" in error["message"] and str(results) in error["message"]
    claimed = scene.world.query("SELECT topic_id, state FROM tasks WHERE topic_id IN (:a, :b)",
                                {"a": scene.topic, "b": other})
    assert [tuple(row) for row in claimed] == [(scene.topic, "failed")]  # the other untouched
    assert not started(scene, 2)


def test_a_heartbeat_refused_on_a_leased_task_ends_it_instead_of_asking_every_tick(scene, proxy):
    counting = proxy()
    hold(scene)
    proc = scene.run_once(server=counting.url)
    wait_for(lambda: started(scene), what="research to start")
    r = scene.asker.post(scene.world.server.url + "/api/community",
                         json={"action": "close", "topic": scene.topic})
    assert r.status_code == 200, r.text
    advance(scene.world.clock, 11 * 60)  # a heartbeat is due, and is refused: closed
    code, events = scene.finish(proc)
    assert code == EXIT_TASK_FAILED, events
    assert counting.count("heartbeat") == 1
    [task] = scene.tasks()
    assert task["state"] == "failed" and "topic_unavailable" in task["error"], task["error"]
    pid = int((scene.stub_dir / "pid-1").read_text())
    wait_for(lambda: process_gone(pid), what="the harness to stop")


def test_a_task_cancelled_on_the_web_stops_its_harness_within_a_minute(scene, proxy):
    """Not at the next heartbeat, ten minutes on: the connector looks at the task every
    minute in between (a read), and the owner's model stops working for nothing."""
    counting = proxy()
    hold(scene)
    proc = scene.run_once(server=counting.url)
    wait_for(lambda: started(scene), what="research to start")
    [task] = scene.tasks()
    r = scene.owner.post(scene.world.server.url + "/api/external/manage",
                         json={"action": "cancel_task", "taskId": task["id"]})
    assert r.status_code == 200, r.text
    advance(scene.world.clock, 61)
    code, events = scene.finish(proc)
    assert code == EXIT_TASK_FAILED, events
    assert counting.count("heartbeat") == 0 and counting.count("get_task_status") >= 1
    [lost] = [e for e in events if e["event"] == "task_lost"]
    assert lost["taskId"] == task["id"] and "research_finished" not in names(events)
    pid = int((scene.stub_dir / "pid-1").read_text())
    wait_for(lambda: process_gone(pid), what="the harness to stop")
    assert scene.messages() == []


def test_a_claim_refused_for_task_limit_leaves_the_question_for_later(scene):
    world, url = scene.world, scene.world.server.url
    other = world.agent(scene.owner)
    headers = {"Authorization": f"Bearer {other['token']}"}
    held = []
    for i in range(3):  # the owner's three leases, all taken by their other agent
        topic = world.ask(scene.asker, f"占满租约的问题 {i}？", community="lobby")
        r = requests.post(url + "/api/external", headers=headers, json={
            "action": "claim_task", "topic": topic, "requestId": str(uuid.uuid4())})
        assert r.status_code == 200, r.text
        held.append(r.json()["task"]["id"])
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK and "deferred" in names(events), events
    assert scene.tasks() == []
    for task in held:
        r = scene.owner.post(url + "/api/external/manage",
                             json={"action": "cancel_task", "taskId": task})
        assert r.status_code == 200, r.text
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK, events
    assert [t["state"] for t in scene.tasks()] == ["done"]


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_harness_printing_without_end_is_stopped_at_16_mib(scene, tmp_path, stream):
    """Stopped at the byte it passes the cap, not at the next tick: what it printed (up to
    200 MiB as fast as it can, then waiting) is kept to 16 MiB exactly."""
    flood = tmp_path / "flood.py"
    flood.write_text(f"import os, time\nchunk = b'x' * (1 << 20)\nout = {stream!r}\n"
                     "for _ in range(200):\n    os.write(1 if out == 'stdout' else 2, chunk)\n"
                     "time.sleep(60)\n")
    code, events = scene.finish(scene.run_once(
        harness=["--harness", "command", "--harness-command", f"{sys.executable} {flood}"]))
    assert code == EXIT_TASK_FAILED, events
    [task] = scene.tasks()
    assert task["state"] == "failed", task
    assert task["error"] == f"harness failed: the harness wrote more than 16 MiB to {stream}-1.txt; it was stopped"
    [kept] = scene.state_dir.rglob(f"{stream}-1.txt")
    assert kept.stat().st_size == 16 * 2**20


@pytest.mark.parametrize("output", [
    "", ", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL",
    ", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True",
], ids=["holding-its-output", "output-elsewhere", "own-session"])
def test_what_a_harness_left_running_is_stopped_and_its_answer_sent(scene, tmp_path, output):
    """The harness prints its result and exits, leaving a process it started running in
    its group (holding the harness's output open, or not) or in a session of its own: the
    answer is sent all the same, and that process does not outlive the run."""
    leaving = tmp_path / "leaving.py"
    leaving.write_text(
        "import json, os, pathlib, subprocess, sys\n"
        "d = pathlib.Path(os.environ['STUB_DIR']); json.load(sys.stdin)\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']{output})\n"
        "(d / 'child-pid').write_text(str(child.pid))\n"
        "print((d / 'result.json').read_text(), flush=True)\n")
    code, events = scene.finish(scene.run_once(
        harness=["--harness", "command", "--harness-command", f"{sys.executable} {leaving}"]))
    assert code == EXIT_OK, events
    assert [t["state"] for t in scene.tasks()] == ["done"]
    pid = int((scene.stub_dir / "child-pid").read_text())
    wait_for(lambda: process_gone(pid), what="the child to stop")


LEAK = r'''
import base64, json, os, pathlib, sys
d = pathlib.Path(os.environ["STUB_DIR"])
token = (d / "token").read_text()
shown = {"plain": token, "spaced": " ".join(token), "dashed": "-".join(token),
         "base64": base64.b64encode(token.encode()).decode(),
         "hex": token.encode().hex(), "halves": token[:25] + " and " + token[25:]}[sys.argv[1]]
if sys.argv[2] == "stderr":
    print("could not finish: " + shown, file=sys.stderr)
    sys.exit(1)
result = json.loads((d / "result.json").read_text())
result["reasoningSummary"] += " " + shown
print(json.dumps(result, ensure_ascii=False))
'''


@pytest.mark.parametrize("disguise, where", [("plain", "result"), ("spaced", "result"),
                                             ("base64", "result"), ("hex", "result"),
                                             ("halves", "result"),
                                             ("plain", "stderr"), ("dashed", "stderr")])
def test_a_token_spelt_out_or_encoded_never_leaves(scene, tmp_path, disguise, where):
    leak = tmp_path / "leak.py"
    leak.write_text(LEAK)
    code, events = scene.finish(scene.run_once(harness=[
        "--harness", "command", "--harness-command", f"{sys.executable} {leak} {disguise} {where}"]))
    assert code == EXIT_TASK_FAILED, events
    assert scene.messages() == []
    [task] = scene.tasks()
    assert task["state"] == "failed"
    if where == "result" and disguise == "plain":  # the server's own secret scan says it
        assert task["error"].startswith("the harness result was invalid twice: "
                                        "sensitive_content: reasoningSummary"), task["error"]
    elif where == "result":
        assert task["error"].endswith("sensitive_content: the result holds the Agent Token, "
                                      "spelt out or encoded"), task["error"]
    elif disguise == "plain":  # what the owner reads keeps the line, without the token
        assert task["error"] == "harness failed: could not finish: [redacted]", task["error"]
    else:
        assert "withheld" in task["error"] and "could not finish" not in task["error"]
    scene.assert_token_nowhere()  # what the harness printed is kept, the token taken out
    assert list(scene.state_dir.rglob("stdout-*.txt"))


def test_research_cut_short_by_a_rotation_is_said_so_and_the_question_chosen_again(scene):
    """The replayed claim was refused 409 idempotency_conflict (the task was the old
    token's): the raw server words, and the question counted as tried for good."""
    hold(scene)
    proc = scene.run_once()
    wait_for(lambda: started(scene), what="research to start")
    scene.kill(proc)  # the attempt still "leased", the task the old token's
    r = scene.owner.post(scene.world.server.url + "/api/external/manage",
                         json={"action": "rotate", "profile": scene.agent["profileId"]})
    assert r.status_code == 200, r.text
    scene.agent["token"] = r.json()["token"]
    release(scene)
    code, events = scene.finish(scene.run_once())
    [rejected] = [e for e in events if e["event"] == "rejected"]
    assert "belongs to an earlier token" in rejected["message"], events
    code, events = scene.finish(scene.run_once())  # not a try: chosen again, and answered
    assert code == EXIT_OK and "submitted" in names(events), events
    assert len(scene.messages()) == 1


def test_a_task_of_a_rotated_token_is_set_aside_not_retried_on_every_start(scene, proxy):
    swallowing = proxy(lambda path, body: "swallow" if b'"submit_result"' in body else None)
    proc = scene.run_once(server=swallowing.url)
    assert swallowing.swallowed.wait(20), "the submission never reached the proxy"
    scene.kill(proc)  # the result is kept, the attempt still "submitting"
    r = scene.owner.post(scene.world.server.url + "/api/external/manage",
                         json={"action": "rotate", "profile": scene.agent["profileId"]})
    assert r.status_code == 200, r.text
    scene.agent["token"] = r.json()["token"]  # the same --state-dir, the new token
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_TASK_FAILED, events
    [rejected] = [e for e in events if e["event"] == "rejected"]
    assert "belongs to an earlier token" in rejected["message"]
    assert "error" not in names(events)
    code, events = scene.finish(scene.run_once())  # set aside: not tried again
    assert code == EXIT_OK and "rejected" not in names(events), events
    assert len(scene.messages()) == 1


# --- a failure the server could not hear of ------------------------------------------------

def fail_task_unheard(heard: threading.Event):
    """A fault: ``fail_task`` answered 503 (the server away) until ``heard`` is set."""
    def fault(path, body):
        if b'"fail_task"' in body and not heard.is_set():
            return 503, {}, {"ok": False, "error": {"code": "unavailable", "message": "away"}}
        return None
    return fault


def attempt_states(scene: Scene) -> list[str]:
    return [json.loads(p.read_text())["state"] for p in (scene.state_dir / "attempts").glob("*.json")]


def test_a_failure_the_server_did_not_hear_is_sent_again_by_the_next_run(scene, proxy):
    """Otherwise the lease holds one of the user's three slots for its whole 30 minutes."""
    (scene.stub_dir / "result.json").write_text("{}")  # invalid twice: the task fails
    away = proxy(fail_task_unheard(threading.Event()))
    code, events = scene.finish(scene.run_once(server=away.url, retry_backoff="0.01"))
    assert code == EXIT_TASK_FAILED, events
    [failed] = [e for e in events if e["event"] == "task_failed"]
    assert failed["confirmed"] is False and "fail_task not confirmed" in failed["message"]
    assert away.count("fail_task") == 7  # the first try and six retries
    [task] = scene.tasks()
    assert task["state"] == "leased" and attempt_states(scene) == ["failing"]

    code, events = scene.finish(scene.run_once())  # the server is back
    # told, and the pass goes on: the question was tried, nothing else to do (an old
    # failure told again is no failure of this pass)
    assert code == EXIT_OK and "idle" in names(events), events
    [failed] = [e for e in events if e["event"] == "task_failed"]
    assert failed["confirmed"] is True
    [task] = scene.tasks()  # the same task, ended with the reason first given
    assert task["state"] == "failed"
    assert task["error"].startswith("the harness result was invalid twice"), task["error"]
    assert attempt_states(scene) == ["failed"] and not started(scene, 3)
    code, events = scene.finish(scene.run_once())  # nothing is left to tell
    assert code == EXIT_OK and "task_failed" not in names(events), events


def test_a_running_connector_tells_the_failure_once_the_server_is_back(scene, proxy):
    (scene.stub_dir / "result.json").write_text("{}")
    heard = threading.Event()
    away = proxy(fail_task_unheard(heard))
    proc = scene.connector("run", "--poll-interval", "0.2", "--community", scene.community,
                           server=away.url, retry_backoff="0.01")
    wait_for(lambda: attempt_states(scene) == ["failing"], what="the failure to be kept")
    assert scene.tasks()[0]["state"] == "leased"
    heard.set()
    wait_for(lambda: scene.tasks()[0]["state"] == "failed", what="the failure to be told")
    wait_for(lambda: attempt_states(scene) == ["failed"], what="the attempt to end")
    proc.send_signal(signal.SIGTERM)
    code, events = scene.finish(proc)
    assert code == EXIT_OK, events
    assert [e["confirmed"] for e in events if e["event"] == "task_failed"] == [False, True]
    assert scene.tasks()[0]["error"].startswith("the harness result was invalid twice")


# --- what an outside walk through the connector found ----------------------------------

def _hold_three_leases(scene: Scene) -> list[str]:
    """The owner's three live leases, all taken by another agent of theirs."""
    url, other = scene.world.server.url, scene.world.agent(scene.owner)
    held = []
    for i in range(3):
        topic = scene.world.ask(scene.asker, f"占满租约的问题 {i}？", community="lobby")
        r = requests.post(url + "/api/external", json={
            "action": "claim_task", "topic": topic, "requestId": str(uuid.uuid4())},
            headers={"Authorization": f"Bearer {other['token']}"})
        assert r.status_code == 200, r.text
        held.append(r.json()["task"]["id"])
    return held


def test_a_claim_refused_spends_none_of_the_daily_budget(scene):
    """The budget counts research runs: a pass whose claim is refused for now researched
    nothing, so a budget of one is still there for the pass after the leases are free."""
    held = _hold_three_leases(scene)
    for _ in range(2):
        code, events = scene.finish(scene.run_once("--daily-budget", "1"))
        assert code == EXIT_OK and "deferred" in names(events), events
        assert "skipped_budget" not in names(events)
    assert sum(json.loads((scene.state_dir / "budget.json").read_text()).values()) == 0
    # and no attempt file is kept for a claim no task came of
    assert list((scene.state_dir / "attempts").iterdir()) == []
    for task in held:
        r = scene.owner.post(scene.world.server.url + "/api/external/manage",
                             json={"action": "cancel_task", "taskId": task})
        assert r.status_code == 200, r.text
    code, events = scene.finish(scene.run_once("--daily-budget", "1"))
    assert code == EXIT_OK and [t["state"] for t in scene.tasks()] == ["done"], events
    assert set(json.loads((scene.state_dir / "budget.json").read_text()).values()) == {1}


def test_the_harness_is_told_the_moment_it_is_really_stopped_at(scene):
    code, events = scene.finish(scene.run_once("--harness-timeout", "30"))
    assert code == EXIT_OK, events
    doc = json.loads((scene.stub_dir / "doc-1.json").read_text())
    [started_] = [e for e in events if e["event"] == "research_started"]
    assert doc["deadline"] == started_["deadline"]
    [task] = scene.tasks()
    assert 30 <= doc["deadline"] - task["created"] <= 35  # its own 30 s, not the lease's 2 h


@pytest.mark.parametrize("first, problem", [
    ("b'I ran out of room before the JSON'", "the result is not a JSON object"),
    ("b'\\xff\\xfe' + result", "the output is not UTF-8 text"),
    ("b' \\n'", "the harness printed nothing"),
])
def test_output_that_is_no_json_gets_the_second_chance_too(scene, tmp_path, first, problem):
    once_garbled = tmp_path / "garbled.py"
    once_garbled.write_text(
        "import json, os, sys, pathlib\n"
        "d = pathlib.Path(os.environ['STUB_DIR']); doc = json.load(sys.stdin)\n"
        "n = len(list(d.glob('g-*.json'))) + 1\n"
        "(d / f'g-{n}.json').write_text(json.dumps(doc, ensure_ascii=False))\n"
        "result = (d / 'result.json').read_bytes()\n"
        f"sys.stdout.buffer.write({first} if n == 1 else result)\n")
    code, events = scene.finish(scene.run_once(
        harness=["--harness", "command", "--harness-command", f"{sys.executable} {once_garbled}"]))
    assert code == EXIT_OK, events
    assert [t["state"] for t in scene.tasks()] == ["done"]
    second = json.loads((scene.stub_dir / "g-2.json").read_text())
    assert second["previousErrors"] == [problem]


def test_a_harness_missing_from_path_is_said_before_anything_is_claimed(scene):
    """cron runs with PATH=/usr/bin:/bin: a harness installed elsewhere is not found, and no
    question may be claimed (and failed, one per run) for that."""
    code, events = scene.finish(scene.run_once(harness=["--harness", "claude"],
                                               env={"PATH": "/usr/bin:/bin"}))
    # 1, not 2: a harness briefly missing (an upgrade) must not stop a service for good
    assert code == EXIT_TASK_FAILED and scene.tasks() == [], events
    assert "harness executable not found: claude (PATH=/usr/bin:/bin)" in scene.outputs[-1]
    [error] = events  # said on stdout too, for a --json reader
    assert error["event"] == "error" and "not found" in error["message"]


def test_a_misspelt_script_in_the_harness_command_is_said_before_anything_is_claimed(scene):
    """"python3 reseach.py" failed one question after another, each then counted as tried,
    and spent the day's budget."""
    code, events = scene.finish(scene.run_once(harness=[
        "--harness", "command", "--harness-command", f"{sys.executable} reseach.py"]))
    assert code == EXIT_TASK_FAILED and scene.tasks() == [], events
    [error] = events
    assert error["event"] == "error" and "names a script that is not there: reseach.py" in \
        error["message"]


def test_a_harness_program_gone_while_running_stops_the_run_before_the_next_claim(
        scene, tmp_path):
    """Moved away during an upgrade, the program failed each question claimed meanwhile,
    and each was counted as tried and against the day's budget; the start's check alone
    saw nothing of it."""
    program = tmp_path / "bin" / "python-for-the-harness"
    program.parent.mkdir()
    program.symlink_to(sys.executable)
    proc = scene.connector("run", "--poll-interval", "0.2", "--community", scene.community,
                           harness=["--harness", "command",
                                    "--harness-command", f"{program} {scene.stub}"])
    wait_for(lambda: scene.messages(), what="the first question to be answered")
    program.unlink()  # the upgrade begins
    later = scene.world.ask(scene.asker, "升级期间来的新问题会被领取吗？", community=scene.community)
    code, events = scene.finish(proc)
    assert code == EXIT_TASK_FAILED, events
    assert "harness executable not found" in [e for e in events if e["event"] == "error"][-1][
        "message"]
    assert scene.world.query("SELECT COUNT(*) FROM tasks WHERE topic_id = :topic",
                             {"topic": later})[0][0] == 0


def test_a_harness_script_that_is_not_executable_is_named_so(scene, tmp_path):
    """`run` said "not found" of a file that is there; `doctor` said what it is."""
    script = tmp_path / "research-without-x.py"
    script.write_text(Path(scene.stub).read_text())
    script.chmod(0o644)
    code, events = scene.finish(scene.run_once(harness=[
        "--harness", "command", "--harness-command", str(script)]))
    assert code == EXIT_TASK_FAILED and scene.tasks() == [], events
    assert f"the harness program {script} is not executable" in events[-1]["message"]


def test_an_empty_token_file_is_no_token(scene, tmp_path):
    empty = tmp_path / "token"
    empty.write_text("\n")
    empty.chmod(0o600)
    # run stops as without a token (2); doctor names it among its checks (1: a problem)
    for command, exit_code in (("run", 2), ("doctor", EXIT_TASK_FAILED)):
        code, _ = scene.finish(scene.connector(command, "--token-file", str(empty)))
        assert (command, code) == (command, exit_code)
        assert f"--token-file {empty} is empty" in scene.outputs[-2] + scene.outputs[-1]
    assert not scene.state_dir.exists()


def test_a_token_file_too_large_for_a_token_is_refused_without_reading_it_all(scene, tmp_path):
    """--token-file /dev/zero read until memory ran out (a file named by mistake)."""
    large = tmp_path / "token"
    large.write_text(scene.agent["token"] + "\n" + "x" * 5000)
    large.chmod(0o600)
    for named in (large, "/dev/zero"):
        code, _ = scene.finish(scene.connector("run", "--token-file", str(named)))
        assert code == 2
        assert f"--token-file {named} is larger than a token file" in \
            scene.outputs[-2] + scene.outputs[-1]
    assert not scene.state_dir.exists()


def test_a_harness_command_with_a_quote_left_open_is_the_options_mistake(scene):
    """It ended in a traceback (exit 1), which a unit restarting on 1 repeats forever."""
    for command, exit_code in (("run", 2), ("doctor", EXIT_TASK_FAILED)):
        code, _ = scene.finish(scene.connector(command, harness=[
            "--harness", "command", "--harness-command", f"{scene.stub} 'abc"]))
        said = scene.outputs[-2] + scene.outputs[-1]
        assert (command, code) == (command, exit_code), said
        assert "--harness-command cannot be read as a command: No closing quotation" in said
        assert "Traceback" not in said


@pytest.mark.parametrize("written", ["{token}\nold line\n", "\ufeff{token}\r\n", "\xff\xfe"])
def test_a_token_file_with_more_than_the_token_is_refused_without_showing_it(scene, tmp_path,
                                                                            written):
    """A second line made run's request fail in a traceback quoting the header, token and
    all; a byte-order mark or bytes that are no UTF-8 crashed it too."""
    token = scene.agent["token"]
    path = tmp_path / "token"
    path.write_bytes(written.format(token=token).encode("utf-8", "surrogateescape")
                     if written != "\xff\xfe" else b"\xff\xfe")
    path.chmod(0o600)
    code, _ = scene.finish(scene.run_once("--token-file", str(path)))
    said = scene.outputs[-2] + scene.outputs[-1]
    if written.startswith("\ufeff"):  # a mark an editor put there: the token alone is read
        assert code == EXIT_OK, said
    else:
        assert code == 2 and str(path) in said, said
    assert "Traceback" not in said
    scene.assert_token_nowhere()


def test_a_token_variable_with_two_lines_is_refused_without_showing_it(scene):
    token = scene.agent["token"]
    for command in ("run", "doctor"):
        code, _ = scene.finish(scene.connector(
            command, *(["--once"] if command == "run" else []),
            env={TOKEN_ENV: f"{token}\nlbt_an_older_token"}))
        said = scene.outputs[-2] + scene.outputs[-1]
        assert code in (2, EXIT_TASK_FAILED) and "Traceback" not in said, (command, said)
        assert "alone on one line" in said, (command, said)
    scene.assert_token_nowhere()


def test_claude_saying_why_it_failed_is_what_the_owner_reads(scene, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake(bin_dir, "claude", "#!PYTHON\nimport json, sys\nsys.stdin.read()\n"
          "print(json.dumps({'type': 'result', 'is_error': True, "
          "'result': 'Not logged in · Please run /login'}))\nsys.exit(1)\n")
    code, events = scene.finish(scene.connector(
        "answer", scene.topic, harness=["--harness", "claude"],
        env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}))
    assert code == EXIT_TASK_FAILED, events
    [task] = scene.tasks()
    assert task["error"] == "harness failed: claude reported an error: Not logged in · Please run /login"


# --- local faults and stops: no task is left leased, no burst of tries ------------------------

def test_a_state_folder_failing_between_tasks_stops_the_run_and_fails_the_running_task(scene):
    """The loop's own write (a new question's attempt, the day's budget) failed on the main
    thread: the connector exited with no event, its harness ran on by itself, and the task
    it held stayed leased for 30 minutes."""
    hold(scene)
    proc = scene.connector("run", "--poll-interval", "0.2", "--community", scene.community,
                           "--max-tasks", "2")
    wait_for(lambda: started(scene), what="research to start")
    budget = scene.state_dir / "budget.json"
    budget.unlink()
    budget.mkdir()  # the next count of a run fails, as on a full or read-only disk
    scene.world.ask(scene.asker, community=scene.community)
    code, events = scene.finish(proc, timeout=30)
    assert code == EXIT_TASK_FAILED, events
    [error] = [e for e in events if e["event"] == "error"]
    assert "state folder" in error["message"] and "time" in error
    assert names(events)[-1] == "stopped" and "task_failed" in names(events)
    [task] = scene.tasks()
    assert task["state"] == "failed", task
    pid = int((scene.stub_dir / "pid-1").read_text())
    wait_for(lambda: process_gone(pid), what="the harness to stop")


def _no_file_writes() -> None:
    import resource
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # every write to a file fails (EFBIG)


def test_a_resumed_task_the_state_folder_cannot_record_is_failed_not_left_leased(scene):
    hold(scene)
    proc = scene.run_once()
    wait_for(lambda: started(scene), what="research to start")
    scene.kill(proc)  # killed mid-research: the attempt is kept as leased
    code, events = scene.finish(scene.run_once(preexec_fn=_no_file_writes))
    assert code == EXIT_TASK_FAILED, events
    [task] = scene.tasks()
    assert task["state"] == "failed" and "the connector failed" in task["error"], task


def test_a_state_folder_it_cannot_use_at_start_exits_1_with_a_timed_json_line(scene):
    (scene.state_dir).mkdir()
    (scene.state_dir / "lock").mkdir()  # cannot be opened for writing
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_TASK_FAILED, events  # not 2: a service manager tries again later
    [error] = events
    assert error["event"] == "error" and "cannot use the state folder" in error["message"]
    assert isinstance(error["time"], int)


def test_stopped_while_idle_it_says_no_task_was_held(scene, proxy):
    """Stopped between polls it said it was reporting the current task failed and that a
    saved result would be sent, neither of which was so."""
    scene.asker.post(scene.world.server.url + "/api/community",
                     json={"action": "close", "topic": scene.topic})
    counting = proxy()
    proc = scene.connector("run", "--poll-interval", "0.2", "--community", scene.community,
                           server=counting.url)
    wait_for(lambda: counting.count("list_topics") >= 2, what="two polls")
    proc.send_signal(signal.SIGTERM)
    code, events = scene.finish(proc, timeout=20)
    assert code == EXIT_OK, events
    [stopping] = [e for e in events if e["event"] == "stopping"]
    assert stopping["message"] == "stopping: no task is held", stopping
    assert "task_failed" not in names(events) and counting.count("claim_task") == 0


def test_stopped_while_its_claim_goes_unanswered_it_says_the_claim_is_sent_again(scene, proxy):
    """It said it was stopping the harness and reporting the task failed: there was no task
    yet, and the claim is replayed at the next start."""
    away = proxy(lambda path, body: (503, {}, {"error": "busy", "code": "service_unavailable"})
                 if b'"claim_task"' in body else None)
    proc = scene.run_once(server=away.url, retry_backoff="5")
    wait_for(lambda: away.count("claim_task") >= 1, what="the first claim")
    proc.send_signal(signal.SIGTERM)
    code, events = scene.finish(proc, timeout=30)
    assert code == EXIT_OK, events
    [stopping] = [e for e in events if e["event"] == "stopping"]
    assert stopping["message"] == "a claim not yet answered is sent again at the next start"
    assert "task_failed" not in names(events)


def test_stopped_while_the_server_is_away_it_exits_0_at_once_without_a_burst(scene, proxy):
    """SIGTERM while every try met a 503: each retry's wait ended at once, ~90 tries went
    out in a second, and it exited 4 instead of 0."""
    away = proxy(lambda path, body: (503, {}, {"error": "busy", "code": "service_unavailable"})
                 if b'"submit_result"' in body else None)
    proc = scene.run_once(server=away.url, retry_backoff="5")
    wait_for(lambda: away.count("submit_result") >= 1, what="the first submission")
    stopped_at = time.time()
    proc.send_signal(signal.SIGTERM)
    code, events = scene.finish(proc, timeout=30)
    assert code == EXIT_OK and time.time() - stopped_at < 5, events
    assert away.count("submit_result") <= 2
    stopping = names(events).index("stopping")
    assert "retrying" not in names(events)[stopping:], events  # none announced after it
    assert events[stopping]["message"] == "a saved result is sent at the next start"
    assert len(list((scene.state_dir / "results").glob("*.json"))) == 1  # kept for next run


def test_run_once_tells_an_old_failure_and_still_takes_its_one_question(scene, proxy):
    """A failure kept from a stop while the server was away used up the next --once pass
    (it only sent that failure again) and made it exit 1, under cron an error mail."""
    away = proxy(lambda path, body: (503, {}, {"error": "busy", "code": "service_unavailable"})
                 if b'"fail_task"' in body else None)
    hold(scene)
    proc = scene.run_once(server=away.url, retry_backoff="5")
    wait_for(lambda: started(scene), what="research to start")
    proc.send_signal(signal.SIGTERM)
    code, _ = scene.finish(proc, timeout=30)
    assert code == EXIT_OK and scene.tasks()[0]["state"] == "leased"  # the server not told
    # still away: the failure is tried once, and the pass could not happen (exit 4); it
    # tried the failure again in the question's slot and exited 0, which cron takes for fine
    dead = f"http://127.0.0.1:{free_port()}"
    code, events = scene.finish(scene.run_once(server=dead, retry_backoff="0.01"))
    assert code == EXIT_UNREACHABLE and names(events).count("task_failed") == 1, events
    release(scene)
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK, events
    assert names(events).index("task_failed") < names(events).index("chosen")
    assert "submitted" in names(events)
    assert sorted(t["state"] for t in scene.tasks()) == ["done", "failed"]


def test_the_token_is_taken_out_of_every_file_the_harness_wrote(scene, tmp_path):
    """Only the work folder's top level was scrubbed: a harness writing the token into a
    folder of its own left it there."""
    writer = tmp_path / "writer.py"
    writer.write_text(textwrap.dedent(f"""\
        import json, os, pathlib, sys
        token = os.environ.get("STUB_TOKEN") or pathlib.Path({str(scene.stub_dir / "token")!r}).read_text()
        pathlib.Path("notes.txt").write_text(token)
        pathlib.Path("sub/deeper").mkdir(parents=True)
        pathlib.Path("sub/deeper/found.txt").write_text("saw " + token)
        sys.stdout.write(pathlib.Path({str(scene.stub_dir / "result.json")!r}).read_text())
    """))
    code, events = scene.finish(scene.run_once(
        harness=["--harness", "command", "--harness-command", f"{sys.executable} {writer}"]))
    assert code == EXIT_OK, events
    work = list((scene.state_dir / "work").rglob("found.txt"))
    assert work and work[0].read_text() == "saw [redacted]"
    scene.assert_token_nowhere()


def test_a_new_version_of_a_question_it_answered_is_answered_again(scene):
    """Each version is tried once per state folder: the asker's new conditions are a new
    question to answer, and nothing more is claimed until the next version."""
    def versions() -> list[int]:
        return [r[0] for r in scene.world.query(
            "SELECT question_version FROM messages WHERE topic_id = :topic ORDER BY created, id",
            {"topic": scene.topic})]

    code, _ = scene.finish(scene.run_once())
    assert code == EXIT_OK and versions() == [1]
    r = scene.asker.post(scene.world.server.url + "/api/community", json={
        "action": "revise", "topic": scene.topic, "description": "条件变了：数据库现在 80 GB。"})
    assert r.status_code == 200 and r.json()["questionVersion"] == 2, r.text
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK, events
    assert versions() == [1, 2]
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK and "chosen" not in names(events) and len(scene.messages()) == 2


def test_finished_attempts_lose_their_files_after_two_weeks_but_stay_tried(scene):
    """A connector running for months kept every harness's work folder and every result;
    the attempt's own file stays, or the question would be answered again."""
    code, _ = scene.finish(scene.run_once())
    assert code == EXIT_OK
    [path] = list((scene.state_dir / "attempts").glob("*.json"))
    attempt = json.loads(path.read_text())
    work = scene.state_dir / "work" / attempt["requestId"]
    result = scene.state_dir / "results" / f"{attempt['requestId']}.json"
    assert work.is_dir() and result.is_file()
    (work / "keep-me-not").write_text("harness output")
    outside = scene.state_dir.parent / "not-in-the-state-folder"
    outside.mkdir()
    (work / "link").symlink_to(outside)
    attempt["updated"] -= 15 * 86400
    path.write_text(json.dumps(attempt))
    code, events = scene.finish(scene.run_once())
    assert code == EXIT_OK
    [pruned] = [e for e in events if e["event"] == "pruned"]
    assert pruned["attempts"] == 1
    assert not work.exists() and not result.exists() and path.is_file() and outside.is_dir()
    assert "chosen" not in names(events) and len(scene.messages()) == 1  # not tried again


@pytest.mark.parametrize("before", [None, "/opt/mine/lib"])
def test_the_single_executables_library_path_and_markers_stay_out_of_the_harness(
        monkeypatch, before):
    """Its launcher points LD_LIBRARY_PATH at the unpacked libraries, which the harness's own
    curl and git loaded, and sets _PYI_* for its own child; the harness gets what was set
    before it (PyInstaller keeps it as LD_LIBRARY_PATH_ORIG), or nothing."""
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/tmp/_MEIabc123" + (f":{before}" if before else ""))
    if before:
        monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", before)
    else:
        monkeypatch.delenv("LD_LIBRARY_PATH_ORIG", raising=False)
    monkeypatch.setenv("_PYI_APPLICATION_HOME_DIR", "/tmp/_MEIabc123")
    monkeypatch.setenv("_PYI_PARENT_PROCESS_LEVEL", "1")
    monkeypatch.setenv("HOME_OF_MY_TOOLS", "/opt/mine")
    env = scrubbed_env("lbt_" + "x" * 40, "XIA_CHEDAN_AGENT_TOKEN")
    assert env.get("LD_LIBRARY_PATH") == before and "LD_LIBRARY_PATH_ORIG" not in env
    assert not [k for k in env if k.startswith("_PYI_")]
    assert env["HOME_OF_MY_TOOLS"] == "/opt/mine"
    monkeypatch.setattr(sys, "frozen", False)  # installed with pip: nothing is changed
    assert scrubbed_env("lbt_" + "x" * 40, "XIA_CHEDAN_AGENT_TOKEN")["_PYI_PARENT_PROCESS_LEVEL"] == "1"
