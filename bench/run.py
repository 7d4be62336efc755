"""Benchmark the external agent API over real HTTP against `lobbytalks serve` (waitress).

Seeds a database (or reuses one), starts the real server and a floor app (the cheapest
Flask + waitress JSON endpoint, same thread count) on free 127.0.0.1 ports, and measures
each endpoint at each concurrency for a fixed duration with keep-alive `http.client`
connections, one per worker thread, each worker with its own user, agent and token:

* floor (GET / on the floor app), measured before and after each concurrency level, and
  in turn with every other endpoint (PAIR_SLICES windows each): each ratio is to the floor
  measured alongside it, since this machine's speed wanders by a third within minutes;
* two references on the floor app: one primary-key read, one write transaction;
* GET /healthz of the real app;
* list_topics; get_context on a 150-message topic with the full-text right (40 messages
  returned) and without it;
* claim_task -> heartbeat -> submit_result cycles on open topics the agent has not answered
  (each bench user claims a topic at most once), each request timed;
* the same reads and the same cycle as MCP tools/call on /api/external/mcp (each measured
  alternately with its REST counterpart, in PAIR_SLICES windows each);
* the pages: home, communities, a community, all questions, a search, a question as a
  visitor and as a reader of its 150 answers, and a bench user's /tasks, /agents
  and /inbox.

Usage: python -m bench.run [--duration 5] [--concurrency 1,8] [--data-dir DIR] ...
       python -m bench.run --scale DIR   (both sizes side by side; seeds each once)
"""
from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import platform
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as `python bench/run.py`
    sys.path.insert(0, str(ROOT))

from bench.seed import BENCH_PASSWORD, MANIFEST, BenchAgent, Manifest, seed  # noqa: E402
from lobbytalks.services.notifications import INBOX_PAGE_SIZE  # noqa: E402

# Generous limits so rate limiting never refuses a benchmark request. A one-second window
# keeps the limiter's per-token bookkeeping about as small as the default 120/minute does.
RATE_ENV = {"LOBBYTALKS_RATE_TOKEN": "1000000/second", "LOBBYTALKS_RATE_CLAIM": "1000000/second"}
CYCLE = ("claim_task", "heartbeat", "submit_result")
EXTERNAL = "/api/external"
WRITE_AIM = 0.5
NOISY = 0.2  # cores used by other processes during a window beyond which figures are suspect
SETTLE_AFTER_SEEDING = 10.0  # seconds after the written-out seed before the first floor


# --- processes --------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _cpu_of(pid: int) -> float | None:
    fields = _stat(pid)
    return None if fields is None else (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and fields[1] == str(pid):
                found.append(int(entry.name))
    return found


class Server:
    """A server subprocess on a free port; its output goes to a log file."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log: Path,
                 ready_path: str) -> None:
        self.name, self.port = name, free_port()
        self.log = log
        with open(log, "ab") as out:
            self.proc = subprocess.Popen([*argv, "--host", "127.0.0.1", "--port", str(self.port)],
                                         cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        self._wait(ready_path)

    def _wait(self, path: str) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited; see {self.log}")
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            try:
                conn.request("GET", path)
                if conn.getresponse().status == 200:
                    return
            except OSError:
                pass
            finally:
                conn.close()
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not answer {path} within 60 s; see {self.log}")

    def cpu_seconds(self) -> float | None:
        """User + system CPU time so far of the process and of its worker processes
        (``serve --workers``), Linux only, else None."""
        total = _cpu_of(self.proc.pid)
        if total is None:
            return None
        for child in _children_of(self.proc.pid):
            total += _cpu_of(child) or 0.0
        return total

    peak_rss = 0  # bytes, the most the process and its workers held at any sample

    def note_rss(self) -> None:
        """Sample the resident memory of the process and its workers (Linux only)."""
        total = 0
        for pid in (self.proc.pid, *_children_of(self.proc.pid)):
            try:
                total += int(Path(f"/proc/{pid}/statm").read_text().split()[1])
            except (OSError, IndexError, ValueError):
                return
        self.peak_rss = max(self.peak_rss, total * os.sysconf("SC_PAGE_SIZE"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# --- client -----------------------------------------------------------------------------------

class Client:
    """One keep-alive connection; ``call`` returns (status, body, seconds), status 0 when the
    connection failed (it is then reopened)."""

    def __init__(self, port: int, token: str | None = None, cookie: str | None = None,
                 extra: dict[str, str] | None = None) -> None:
        self.port = port
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        if cookie:
            self.headers["Cookie"] = cookie
        self.headers.update(extra or {})
        self.post_headers = {**self.headers, "Content-Type": "application/json"}
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes, float]:
        headers = self.post_headers if body is not None else self.headers
        started = time.perf_counter()
        try:
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            return 0, str(exc).encode(), time.perf_counter() - started
        return response.status, data, time.perf_counter() - started

    def close(self) -> None:
        self.conn.close()


# --- measurement ------------------------------------------------------------------------------

@dataclass
class Samples:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str = ""


@dataclass
class Row:
    endpoint: str
    concurrency: int
    requests: int
    rate: float            # requests per second
    p50_ms: float
    p99_ms: float
    errors: int
    derived: bool = False  # rate from Little's law (cycle steps), not counted throughput
    ratio: float = 0.0
    floor_rate: float = 0.0  # the floor measured in turn with this row (what ratio divides by)
    cpu: "Cpu | None" = None
    first_error: str = ""

    def as_dict(self) -> dict:
        return {**self.__dict__, "cpu": self.cpu and self.cpu.__dict__}


@dataclass
class Cpu:
    """CPU used during a measurement window, in cores (1.0 = one core fully busy)."""
    server: float | None
    client: float
    other: float | None  # everything else on the machine: noise in the figures


def system_busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (Linux), else None."""
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
        return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def cpu_counters(server: "Server") -> tuple[float, float | None, float, float | None]:
    return time.perf_counter(), server.cpu_seconds(), time.process_time(), system_busy_seconds()


class Window:
    """A warm-up, then a measured window; a request counts if it starts and ends inside."""

    def __init__(self, warmup: float, duration: float) -> None:
        self.start = time.perf_counter() + warmup
        self.end = self.start + duration

    def running(self) -> bool:
        return time.perf_counter() < self.end


Worker = Callable[[int, Window, dict[str, Samples]], None]


def record(samples: dict[str, Samples], window: Window, step: str, status: int, body: bytes,
           seconds: float, ok: int = 200) -> bool:
    finished = time.perf_counter()
    if finished - seconds >= window.start and finished <= window.end:
        s = samples.setdefault(step, Samples())
        if status == ok:
            s.latencies.append(seconds)
        else:
            s.errors += 1
            s.first_error = s.first_error or f"{status} {body[:300].decode('utf-8', 'replace')}"
    return status == ok


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000 if ordered else 0.0


def measure(concurrency: int, warmup: float, duration: float, worker: Worker,
            server: Server) -> tuple[dict[str, Samples], Cpu]:
    """Run ``worker`` in ``concurrency`` threads; the samples of each step and the CPU used."""
    per_thread: list[dict[str, Samples]] = [{} for _ in range(concurrency)]
    window = Window(warmup, duration)
    threads = [threading.Thread(target=worker, args=(i, window, per_thread[i]))
               for i in range(concurrency)]
    for t in threads:
        t.start()
    time.sleep(max(0.0, window.start - time.perf_counter()))
    before = cpu_counters(server)
    while any(t.is_alive() for t in threads):
        server.note_rss()
        threads[0].join(RSS_EVERY)
    for t in threads:
        t.join()
    after = cpu_counters(server)
    merged: dict[str, Samples] = {}
    for samples in per_thread:
        add_samples(merged, samples)
    return merged, cpu_share(before, after)


def add_samples(into: dict[str, Samples], samples: dict[str, Samples]) -> None:
    """Each step's samples added to those already in ``into``."""
    for step, s in samples.items():
        m = into.setdefault(step, Samples())
        m.latencies += s.latencies
        m.errors += s.errors
        m.first_error = m.first_error or s.first_error


def measure_alternating(concurrency: int, warmup: float, duration: float,
                        workers: tuple[Worker, ...], servers: tuple[Server, ...],
                        slices: int) -> list[tuple[dict[str, Samples], Cpu]]:
    """Workers measured in turn, ``slices`` windows each, adding up to ``duration`` apiece:
    a machine whose speed wanders during the run then slows all of them alike, which
    windows one after the other do not ensure. ``servers``: the one each worker talks to
    (whose CPU its windows count).

    The first worker opens every slice and the others take turns at following it (A B C,
    A C B, ...): a window right after another server's (the floor's) ran 8-9% slower than
    one after the same server's, whichever of the REST and the MCP cycle it was."""
    merged: list[dict[str, Samples]] = [{} for _ in workers]
    cpus: list[list[Cpu]] = [[] for _ in workers]
    rest = len(workers) - 1
    for turn in range(slices):
        for side in (0, *(1 + (i + turn) % rest for i in range(rest))):
            samples, cpu = measure(concurrency, warmup, duration / slices, workers[side],
                                   servers[side])
            add_samples(merged[side], samples)
            cpus[side].append(cpu)
    return [(merged[side], mean_cpu(cpus[side])) for side in range(len(workers))]


def mean_cpu(cpus: list[Cpu]) -> Cpu:
    """The mean of equally long windows' CPU shares (None when any is unknown)."""
    def mean(values: list[float | None]) -> float | None:
        return None if None in values else sum(values) / len(values)  # type: ignore[arg-type]
    return Cpu(mean([c.server for c in cpus]), mean([c.client for c in cpus]) or 0.0,
               mean([c.other for c in cpus]))


def cpu_share(before, after) -> Cpu:
    elapsed = after[0] - before[0]
    server = None if None in (before[1], after[1]) else (after[1] - before[1]) / elapsed
    client = (after[2] - before[2]) / elapsed
    other = None if server is None or None in (before[3], after[3]) \
        else max(0.0, (after[3] - before[3]) / elapsed - server - client)
    return Cpu(server, client, other)


def to_rows(name: str, concurrency: int, duration: float, samples: dict[str, Samples],
            cpu: Cpu, *, derived: bool = False, prefix: str = "") -> list[Row]:
    rows = []
    for step, s in samples.items():
        n = len(s.latencies)
        if step == "cycles":
            rows.append(Row(prefix + "claim->heartbeat->submit", concurrency, 3 * n,
                            3 * n / duration, 0.0, 0.0, 0, cpu=cpu))
            continue
        if derived and n:
            # Each step shares the cycle with two others, so its own capacity is Little's
            # law: concurrency / mean latency, what the step alone would sustain here.
            rate = concurrency * n / sum(s.latencies)
        else:
            rate = n / duration
        rows.append(Row(prefix + step if derived else name, concurrency, n, rate,
                        percentile(s.latencies, 0.50), percentile(s.latencies, 0.99), s.errors,
                        derived, cpu=cpu, first_error=s.first_error))
    order = [prefix + step for step in (*CYCLE, "claim->heartbeat->submit")]
    return sorted(rows, key=lambda r: order.index(r.endpoint)) if derived else rows


def http_worker(port: int, path: str, tokens: list[str | None],
                body: bytes | None = None, *, cookies: list[str] | None = None,
                extra: dict[str, str] | None = None) -> Worker:
    """The same request over and over: GET, or POST when there is a body; as an agent (a
    token), a signed-in person (a session cookie) or anonymously."""
    method = "GET" if body is None else "POST"

    def work(index: int, window: Window, samples: dict[str, Samples]) -> None:
        client = Client(port, tokens[index % len(tokens)],
                        cookies[index % len(cookies)] if cookies else None, extra)
        while window.running():
            status, data, seconds = client.call(method, path, body)
            record(samples, window, "request", status, data, seconds)
        client.close()
    return work


class TopicSupply:
    """Open topics for claims, each claimed at most once by each bench user, none by a user
    who has answered it (the claim then reads as it did, without the full-text right).

    Topics go round: one just handed out goes to the back of the queue for the other users,
    so all are claimed once before any is claimed twice; a small seed on a fast machine
    feeds the REST and the MCP cycle without running out."""

    def __init__(self, topics: list[str], users: int) -> None:
        self.queue = collections.deque(topics)
        self.claimed_by: dict[str, set[int]] = {topic: set() for topic in topics}
        self.users = users
        self.lock = threading.Lock()

    def take(self, user: int) -> str | None:
        with self.lock:
            for _ in range(len(self.queue)):
                topic = self.queue.popleft()
                claimed = self.claimed_by[topic]
                if user in claimed:
                    self.queue.append(topic)
                    continue
                claimed.add(user)
                if len(claimed) < self.users:
                    self.queue.append(topic)
                return topic
            return None


SUBMIT_TEXT = {
    "conclusion": "在两核机器上，WAL 模式的 SQLite 配合单一写入者足以支撑这种读多写少的社区负载 [S1]。",
    "reasoningSummary": "读请求走各自线程的连接且有索引覆盖，写请求排队进入一个短事务；"
                        "按本次测得的延迟，这样的规模远未达到瓶颈。",
    "conditions": ["写入保持短事务"],
    "uncertainties": ["磁盘很慢时提交延迟会升高"],
}


def submit_fields(task_id: str) -> dict:
    retrieved = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
    return {
        "taskId": task_id, **SUBMIT_TEXT,
        "evidence": [{
            "title": "SQLite Write-Ahead Logging", "url": "https://www.sqlite.org/wal.html",
            "excerpt": "WAL provides more concurrency as readers do not block writers.",
            "retrievedAt": retrieved, "kind": "snippet"}],
    }


class Rest:
    """The claim cycle's calls as REST: POST /api/external with the action in the body."""
    path = EXTERNAL
    extra: dict[str, str] = {}

    @staticmethod
    def body(action: str, fields: dict) -> bytes:
        return json.dumps({"action": action, **fields}, ensure_ascii=False).encode()

    @staticmethod
    def result(body: bytes) -> dict:
        return json.loads(body)


class Mcp:
    """The same calls as MCP tools/call on POST /api/external/mcp (stateless, JSON answers)."""
    path = EXTERNAL + "/mcp"
    extra = {"Accept": "application/json, text/event-stream",
             "MCP-Protocol-Version": "2025-06-18"}

    @staticmethod
    def body(action: str, fields: dict) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": action, "arguments": fields}},
                          ensure_ascii=False).encode()

    @staticmethod
    def result(body: bytes) -> dict:
        return json.loads(body)["result"]["structuredContent"]


def ok_call(transport, status: int, body: bytes) -> int:
    """REST answers its status; MCP answers 200 either way, with isError for a failed call."""
    if transport is Mcp and status == 200 and b'"isError":true' in body:
        return 599
    return status


def cycle_worker(port: int, agents: list[BenchAgent], supply: TopicSupply,
                 exhausted: threading.Event, transport=Rest) -> Worker:
    """claim -> heartbeat -> submit on an open topic each time (one this agent has not
    answered), as worker ``index``'s agent."""
    def work(index: int, window: Window, samples: dict[str, Samples]) -> None:
        client = Client(port, agents[index].token, extra=transport.extra)

        def call(step: str, fields: dict) -> tuple[bool, bytes]:
            status, body, seconds = client.call("POST", transport.path, transport.body(step, fields))
            return record(samples, window, step, ok_call(transport, status, body), body, seconds), body

        while window.running():
            topic = supply.take(index)
            if topic is None:
                exhausted.set()
                break
            cycle_started = time.perf_counter()
            ok, body = call("claim_task", {"topic": topic, "requestId": str(uuid.uuid4())})
            if not ok:
                continue
            task_id = transport.result(body)["task"]["id"]
            call("heartbeat", {"taskId": task_id})
            ok, _ = call("submit_result", submit_fields(task_id))
            if ok and window.start <= cycle_started and time.perf_counter() <= window.end:
                samples.setdefault("cycles", Samples()).latencies.append(0.0)
        client.close()
    return work


def heartbeat_worker(port: int, agents: list[BenchAgent], supply: TopicSupply,
                     exhausted: threading.Event) -> Worker:
    """Heartbeats on one held lease, over and over: the cheapest write on its own. In the
    claim cycle a step's Little's-law rate is the cycle's, since it queues behind the other
    workers' claims and submits; this row shows what the step alone sustains. The lease
    is claimed before and given up (fail_task) after the window, neither timed."""
    def work(index: int, window: Window, samples: dict[str, Samples]) -> None:
        client = Client(port, agents[index].token)

        def post(action: str, fields: dict) -> tuple[int, bytes]:
            status, body, _ = client.call("POST", EXTERNAL, Rest.body(action, fields))
            return status, body

        task_id = None
        while task_id is None:
            topic = supply.take(index)
            if topic is None:
                exhausted.set()
                client.close()
                return
            status, body = post("claim_task", {"topic": topic, "requestId": str(uuid.uuid4())})
            if status == 200:
                task_id = Rest.result(body)["task"]["id"]
        heartbeat = Rest.body("heartbeat", {"taskId": task_id})
        while window.running():
            status, data, seconds = client.call("POST", EXTERNAL, heartbeat)
            record(samples, window, "request", status, data, seconds)
        post("fail_task", {"taskId": task_id, "error": "bench: heartbeat window over"})
        client.close()
    return work


# --- setup ------------------------------------------------------------------------------------

def claimable_topics(db_path: Path, manifest: Manifest) -> list[str]:
    """Open questions in the default community where no bench user has any reading right
    (not the asker, no message), far from the 200-message cap; shuffled deterministically."""
    bench = [a.user_id for a in manifest.agents]
    marks = ",".join("?" * len(bench))
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT id FROM topics t WHERE status = 'open' AND kind = 'discussion'"
            " AND community_id = 'lobby' AND message_count < 190 AND id NOT IN (?, ?)"
            f" AND author_id NOT IN ({marks}) AND NOT EXISTS (SELECT 1 FROM messages m"
            f" WHERE m.topic_id = t.id AND m.user_id IN ({marks}))"
            " ORDER BY substr(id, -5)",
            [manifest.hot_read, manifest.hot_noread, *bench, *bench]).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


def sanity_check(port: int, manifest: Manifest) -> None:
    """The reads return what they are meant to measure, or the figures would mislead."""
    client = Client(port, manifest.agents[0].token)

    def get(query: str) -> dict:
        status, body, _ = client.call("GET", f"{EXTERNAL}?{query}")
        if status != 200:
            raise RuntimeError(f"GET {query}: {status} {body[:300]!r}")
        return json.loads(body)

    topics = get("action=list_topics")["topics"]
    allowed = get(f"action=get_context&topic={manifest.hot_read}")
    denied = get(f"action=get_context&topic={manifest.hot_noread}")
    client.close()
    problems = []
    if len(topics) != 20:
        problems.append(f"list_topics returned {len(topics)} topics, not 20")
    if not allowed["allowed"] or len(allowed["messages"]) != 40:
        problems.append(f"allowed get_context: allowed={allowed['allowed']}, "
                        f"{len(allowed['messages'])} messages (want 40)")
    if not allowed["question"].get("privateContextIncluded"):
        problems.append("allowed get_context did not include the private context")
    if denied["allowed"] or denied["messages"]:
        problems.append("get_context without the right returned messages")
    if len(allowed["memories"]) != 20:
        problems.append(f"get_context returned {len(allowed['memories'])} memories, not 20")
    if problems:
        raise RuntimeError("sanity check failed: " + "; ".join(problems))


def sessions(port: int, manifest: Manifest) -> list[str]:
    """A session cookie for each bench user (they share the seeder's password)."""
    cookies = []
    for agent in manifest.agents:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/api/community", json.dumps({
            "action": "login", "username": agent.username, "password": BENCH_PASSWORD}),
            {"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        cookie = response.getheader("Set-Cookie", "")
        conn.close()
        if response.status != 200 or not cookie:
            raise RuntimeError(f"cannot log in as {agent.username}: {response.status}")
        cookies.append(cookie.split(";", 1)[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/inbox", headers={"Cookie": cookies[0]})
    shown = conn.getresponse().read().count(b'class="item notification')
    conn.close()
    if shown != INBOX_PAGE_SIZE:  # a folder seeded before bench users asked questions
        raise RuntimeError(f"/inbox shows {shown} notifications, not {INBOX_PAGE_SIZE}: "
                           "seed a new folder")
    return cookies


def prepare(args: argparse.Namespace, data_dir: Path) -> Manifest:
    """The manifest of the data folder, seeding it first if it is new."""
    if not (data_dir / MANIFEST).exists():
        print(f"seeding {args.questions} questions and {args.messages} messages into "
              f"{data_dir} ...", flush=True)
        started = time.perf_counter()
        seed(data_dir, questions=args.questions, messages=args.messages,
             bench_users=max(args.concurrency))
        print(f"seeded in {time.perf_counter() - started:.1f} s", flush=True)
        # The kernel writes the new ~300 MB out over the next seconds; measured meanwhile,
        # the first floor came out 30% below the last one (2,140 against 3,005 req/s).
        os.sync()
        time.sleep(SETTLE_AFTER_SEEDING)
    manifest = Manifest.load(data_dir)
    if len(manifest.agents) < max(args.concurrency):
        raise SystemExit(f"{data_dir} has {len(manifest.agents)} bench users; concurrency "
                         f"{max(args.concurrency)} needs one each: seed a new folder")
    return manifest


# --- report -----------------------------------------------------------------------------------

def print_table(rows: list[Row]) -> None:
    head = (f"{'endpoint':32} {'conc':>4} {'requests':>8} {'req/s':>8} {'p50 ms':>7} "
            f"{'p99 ms':>7} {'x floor':>7} {'floor/s':>7} {'server':>6} {'client':>6} "
            f"{'other':>6}  errors")
    print(head)
    print("-" * len(head))
    for r in rows:
        rate = f"{r.rate:7.0f}{'*' if r.derived else ' '}"
        ratio = f"{r.ratio:.2f}" if r.ratio else "-"
        floor = f"{r.floor_rate:7.0f}" if r.floor_rate else "      -"
        cpu = [getattr(r.cpu, name, None) for name in ("server", "client", "other")]
        shown = " ".join(f"{v:6.2f}" if v is not None else "     -" for v in cpu)
        print(f"{r.endpoint:32} {r.concurrency:>4} {r.requests:>8} {rate:>8} {r.p50_ms:7.1f} "
              f"{r.p99_ms:7.1f} {ratio:>7} {floor} {shown}  {r.errors or ''}")
    print("* cycle steps: req/s is concurrency / mean latency (Little's law), the rate that "
          "request alone sustains\n  at this concurrency; 'claim->heartbeat->submit' is counted "
          "cycles/s x 3.\n  x floor: req/s over floor/s, the floor measured in turn with that "
          f"row ({PAIR_SLICES} windows each);\n  the floor rows before and after show how far "
          "the machine's speed moved over the level.\n  server, client, other: CPU cores busy "
          "during the window in the server, this client and everything\n  else on the "
          "machine (other > 0.2 means the figures are disturbed).")


# A reference row, not judged: the aims are for the steps as the claim cycle measures them.
HEARTBEAT_ALONE = "ref: heartbeat alone"
# The aims, as ratios to the floor at the top concurrency (issue "faster per request").
AIMS = {"healthz": 0.8, "list_topics": 0.6, "get_context (no right)": 0.6,
        "get_context (allowed, 40 msgs)": 0.3, **{step: WRITE_AIM for step in CYCLE}}
PAGE_AIM = 0.3
MCP_WITHIN = 0.10  # an MCP call within 10 % of the same REST call
# An MCP read and its REST read are measured in turn, this many windows each: the machine's
# speed wanders by more than 10 % within a minute, more than the difference being judged.
PAIR_SLICES = 4
MCP_PAIRS = {"mcp list_topics": "list_topics",
             "mcp get_context (allowed)": "get_context (allowed, 40 msgs)",
             "mcp get_context (no right)": "get_context (no right)",
             **{f"mcp {step}": step for step in CYCLE}}


def verdict(rows: list[Row], top: int) -> list[str]:
    """Lines saying which aims are met at the highest concurrency."""
    at_top = {r.endpoint: r for r in rows if r.concurrency == top}
    lines = []
    for name, r in at_top.items():
        if name in MCP_PAIRS and MCP_PAIRS[name] in at_top:
            rest = at_top[MCP_PAIRS[name]]
            ok = r.rate >= (1 - MCP_WITHIN) * rest.rate
            lines.append(f"{'ok  ' if ok else 'MISS'} {name}: {r.rate / rest.rate:.2f}x the REST "
                         f"call (aim >= {1 - MCP_WITHIN:.2f}x)")
            continue
        aim = PAGE_AIM if name.startswith("page ") else AIMS.get(name)
        if aim is not None:
            lines.append(f"{'ok  ' if r.ratio >= aim else 'MISS'} {name}: {r.ratio:.2f}x floor "
                         f"(aim >= {aim}x at concurrency {top})")
    return lines


def parse_levels(text: str) -> list[int]:
    levels = [int(x) for x in text.split(",") if x.strip()]
    if not levels or min(levels) < 1:
        raise argparse.ArgumentTypeError("a comma-separated list of positive integers")
    return levels


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0],
                                epilog="Aim: reads >= 0.6x and each write >= 0.5x of the floor "
                                       "at concurrency 8. Only 127.0.0.1 is used.")
    p.add_argument("--duration", type=float, default=5.0,
                   help="measured seconds per endpoint and concurrency (default 5)")
    p.add_argument("--warmup", type=float, default=1.0,
                   help="unmeasured seconds before each (default 1)")
    p.add_argument("--concurrency", type=parse_levels, default=[1, 8],
                   help="comma-separated worker counts (default 1,8)")
    p.add_argument("--data-dir", type=Path, help="reuse (or seed once into) this folder instead of "
                   "a temporary one; later runs claim topics not used before")
    p.add_argument("--keep", action="store_true", help="keep the temporary data folder")
    p.add_argument("--questions", type=int, default=10_000)
    p.add_argument("--messages", type=int, default=100_000)
    p.add_argument("--only", help="comma-separated subset of reference,healthz,list_topics,"
                   "get_context,get_context_denied,cycle,mcp,pages (the floor is always measured)")
    p.add_argument("--threads", type=int, help="waitress threads for both servers (default: "
                   "LobbyTalks' default)")
    p.add_argument("--no-access-log", action="store_true",
                   help="turn the server's access log off (default: on, as in production, "
                        "written to the data folder's server.log)")
    p.add_argument("--server-command", metavar="CMD",
                   help="how to start LobbyTalks instead of 'python -m lobbytalks', e.g. the "
                        "single binary; 'serve --data-dir DIR --host --port' is appended")
    p.add_argument("--database-url", metavar="URL",
                   help="serve from this EMPTY PostgreSQL database: the seeded SQLite data is "
                        "copied into it with `lobbytalks migrate-db` first (use a new database "
                        "for every run: the claim cycle uses up questions)")
    p.add_argument("--workers", type=int, help="server processes (`serve --workers N`; needs "
                   "--database-url and --ratelimit-storage)")
    p.add_argument("--ratelimit-storage", metavar="URI", help="e.g. redis://127.0.0.1:6379/0")
    p.add_argument("--json", type=Path, help="also write the results here (default "
                   "bench/results/<time>.json)")
    p.add_argument("--scale", type=Path, metavar="DIR",
                   help="measure two sizes side by side: DIR/small (--questions/--messages) and "
                        "DIR/large (100,000 questions / 1,000,000 messages), each seeded once and "
                        "reused by later runs")
    return p


@dataclass
class Setup:
    args: argparse.Namespace
    data_dir: Path
    manifest: Manifest
    env: dict[str, str]
    threads: int
    peak_rss: int = 0  # bytes, LobbyTalks' resident memory at its highest sample


def selected(args: argparse.Namespace) -> set[str] | None:
    """The ``--only`` keys, or None for everything."""
    return set(args.only.split(",")) if args.only else None


def serve_command(args: argparse.Namespace, data_dir: Path) -> list[str]:
    command = shlex.split(args.server_command) if args.server_command \
        else [sys.executable, "-m", "lobbytalks"]
    serve = [*command, "serve", "--data-dir", str(data_dir)]
    return serve + ["--workers", str(args.workers)] if args.workers else serve


@dataclass
class Endpoint:
    """One request measured over and over (see ``http_worker``)."""
    path: str
    tokens: list[str | None]
    cookies: list[str] | None = None
    body: bytes | None = None
    extra: dict[str, str] | None = None

    def worker(self, port: int) -> Worker:
        return http_worker(port, self.path, self.tokens, self.body, cookies=self.cookies,
                           extra=self.extra)


def read_endpoints(manifest: Manifest, cookies: list[str]) -> list[tuple[str, str, Endpoint]]:
    """(--only key, label, endpoint) of every read: healthz, the agent reads, their MCP
    twins and the pages (``cookies``: the bench users' sessions)."""
    tokens: list[str | None] = [a.token for a in manifest.agents]
    context = f"{EXTERNAL}?action=get_context&topic="
    mcp = Mcp.extra
    pages = (("/", "/", None), ("/communities", "/communities", None),
             ("/c/lobby", "/c/lobby", None), ("/questions", "/questions", None),
             ("/questions?q= (search)", "/questions?q=%E5%A4%87%E4%BB%BD", None),
             ("/q/<id> (visitor)", f"/q/{manifest.hot_read}", None),
             ("/q/<id> (reader, 150 answers)", f"/q/{manifest.hot_read}", cookies),
             ("/tasks", "/tasks", cookies), ("/agents", "/agents", cookies),
             ("/inbox", "/inbox", cookies))
    return [
        ("healthz", "healthz", Endpoint("/healthz", [None])),
        # An MCP read and the same REST read are measured alternately (PAIR_SLICES).
        ("list_topics", "list_topics", Endpoint(f"{EXTERNAL}?action=list_topics", tokens)),
        ("mcp", "mcp list_topics", Endpoint(Mcp.path, tokens, None,
                                            Mcp.body("list_topics", {}), mcp)),
        ("get_context", "get_context (allowed, 40 msgs)",
         Endpoint(context + manifest.hot_read, tokens)),
        ("mcp", "mcp get_context (allowed)", Endpoint(
            Mcp.path, tokens, None, Mcp.body("get_context", {"topic": manifest.hot_read}), mcp)),
        ("get_context_denied", "get_context (no right)",
         Endpoint(context + manifest.hot_noread, tokens)),
        ("mcp", "mcp get_context (no right)", Endpoint(
            Mcp.path, tokens, None, Mcp.body("get_context", {"topic": manifest.hot_noread}), mcp)),
        *[("pages", f"page {label}", Endpoint(path, [None], who)) for label, path, who in pages],
    ]


# --only key, row prefix and transport of each claim cycle
CYCLES = (("cycle", "", Rest), ("mcp", "mcp ", Mcp))


def measure_all(setup: Setup, exhausted: threading.Event) -> list[Row]:
    """Start both servers, check the reads, measure every endpoint at every level."""
    args, manifest, data_dir = setup.args, setup.manifest, setup.data_dir
    only = selected(args)
    topics = claimable_topics(data_dir / "lobbytalks.db", manifest)
    print(f"{len(topics)} claimable topics", flush=True)
    if not topics and (only is None or {key for key, _, _ in CYCLES} & only):
        raise SystemExit(f"no claimable topics left in {data_dir}: earlier runs have answered "
                         "them all; seed a new folder")
    servers: list[Server] = []
    rows: list[Row] = []
    try:
        real = Server("lobbytalks", serve_command(args, data_dir), setup.env,
                      data_dir / "server.log", "/healthz")
        servers.append(real)
        floor = Server("floor", [sys.executable, "-m", "bench.floor_app", "--threads",
                                 str(setup.threads), "--db", str(data_dir / "lobbytalks.db")],
                       setup.env, data_dir / "floor.log", "/")
        servers.append(floor)
        sanity_check(real.port, manifest)
        reads = read_endpoints(manifest, sessions(real.port, manifest))
        supply = TopicSupply(topics, len(manifest.agents))
        for level in args.concurrency:
            floor_worker = http_worker(floor.port, "/", [None])

            def run_floor(name: str) -> list[Row]:
                print(f"  c={level:<2} {name} ...", end="", flush=True)
                samples, cpu = measure(level, args.warmup, args.duration, floor_worker, floor)
                print(" done", flush=True)
                return to_rows(name, level, args.duration, samples, cpu)

            def run(names: tuple[str, ...], workers: tuple[Worker, ...], on: Server = real,
                    derived: bool = False, prefixes: tuple[str, ...] = ()) -> list[Row]:
                """Rows measured in turn with the floor (PAIR_SLICES windows each), each with
                its ratio to that floor."""
                print(f"  c={level:<2} {' / '.join(names)} (in turn with the floor) ...", end="",
                      flush=True)
                (floor_samples, _), *measured = measure_alternating(
                    level, args.warmup, args.duration, (floor_worker, *workers),
                    (floor, *(on for _ in workers)), PAIR_SLICES)
                print(" done", flush=True)
                floor_rate = len(floor_samples.get("request", Samples()).latencies) \
                    / args.duration
                prefixes = prefixes or ("",) * len(names)
                rows = [row for name, prefix, (samples, cpu) in zip(names, prefixes, measured)
                        for row in to_rows(name, level, args.duration, samples, cpu,
                                           derived=derived, prefix=prefix)]
                for row in rows:
                    row.floor_rate = floor_rate
                    row.ratio = row.rate / floor_rate if floor_rate else 0.0
                return rows

            floor_rows = run_floor("floor (before)")
            level_rows: list[Row] = []
            if only is None or "reference" in only:
                level_rows += run(("ref: bare indexed read",), (http_worker(
                    floor.port, f"/read?id={manifest.hot_read}", [None]),), on=floor)
                level_rows += run(("ref: bare write transaction",), (http_worker(
                    floor.port, "/write", [None], json.dumps({"id": manifest.hot_read}).encode()),),
                    on=floor)
            chosen = [(label, endpoint.worker(real.port)) for key, label, endpoint in reads
                      if only is None or key in only]
            labels = [label for label, _ in chosen]
            for label, worker in chosen:
                if MCP_PAIRS.get(label) in labels:
                    continue  # measured with its REST call
                pair = next((mcp for mcp, rest in MCP_PAIRS.items()
                             if rest == label and mcp in labels), None)
                if pair is None:
                    level_rows += run((label,), (worker,))
                else:  # an MCP read in turn with its REST read (and the floor)
                    level_rows += run((label, pair), (worker, chosen[labels.index(pair)][1]))
            cycles = [(prefix, cycle_worker(real.port, manifest.agents, supply, exhausted,
                                            transport))
                      for key, prefix, transport in CYCLES
                      if only is None or key in only]
            if cycles:  # the REST and the MCP cycle in turn, as the reads are
                level_rows += run(tuple(prefix + "cycle" for prefix, _ in cycles),
                                  tuple(worker for _, worker in cycles), derived=True,
                                  prefixes=tuple(prefix for prefix, _ in cycles))
            if only is None or "cycle" in only:
                level_rows += run((HEARTBEAT_ALONE,), (heartbeat_worker(
                    real.port, manifest.agents, supply, exhausted),))
            floor_rows += run_floor("floor (after)")
            drift = sum(r.rate for r in floor_rows) / len(floor_rows)
            for r in floor_rows:
                r.ratio = r.rate / drift if drift else 0.0
            rows += floor_rows[:1] + level_rows + floor_rows[1:]
    finally:
        setup.peak_rss = max((s.peak_rss for s in servers if s.name == "lobbytalks"), default=0)
        for server in servers:
            server.stop()
    return rows


def report(setup: Setup, rows: list[Row], load_before, exhausted: bool) -> None:
    args = setup.args
    load_after = os.getloadavg()
    print()
    print_table(rows)
    print(f"each ratio is to the floor measured in turn with it (the floor rows: to the mean "
          f"of the two). load average at start {load_before[0]:.2f}, at end "
          f"{load_after[0]:.2f} (1 min)")
    for line in verdict(rows, max(args.concurrency)):
        print(line)
    peak_mb = setup.peak_rss / 2**20
    print(f"{'ok  ' if peak_mb <= RSS_AIM_MB else 'MISS'} server RSS peaked at {peak_mb:.0f} MB "
          f"(aim <= {RSS_AIM_MB} MB through the run)")
    busy = [r for r in rows if r.cpu and r.cpu.other is not None and r.cpu.other > NOISY]
    if busy:
        print(f"WARNING: other processes used more than {NOISY} of a core during "
              f"{len(busy)} of {len(rows)} rows (up to {max(r.cpu.other for r in busy):.2f}): "
              f"those figures are disturbed; rerun on a quiet machine")
    if exhausted:
        print("WARNING: ran out of claimable topics; cycle figures cover less than the duration")
    for r in rows:
        if r.errors:
            print(f"errors in {r.endpoint} c={r.concurrency}: {r.errors}, first: {r.first_error}")
    out = args.json or ROOT / "bench" / "results" / time.strftime("%Y%m%d-%H%M%S.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpus": os.cpu_count(),
        "python": platform.python_version(), "threads": setup.threads,
        "load_before": load_before, "load_after": load_after,
        "duration": args.duration, "warmup": args.warmup, "rates": RATE_ENV,
        "access_log": not args.no_access_log, "questions": setup.manifest.questions,
        "messages": setup.manifest.messages, "peak_rss_mb": round(setup.peak_rss / 2**20),
        "rows": [r.as_dict() for r in rows],
    }, indent=1), "utf-8")
    print(f"results written to {out}")


RSS_EVERY = 0.25  # seconds between samples of the server's resident memory
RSS_AIM_MB = 150
LARGE = {"questions": 100_000, "messages": 1_000_000}
P99_GROWTH_AIM = 1.3  # p99 at the large size within 1.3x of the small one


def environment(args: argparse.Namespace) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LOBBYTALKS_THREADS"}
    if args.threads:
        env["LOBBYTALKS_THREADS"] = str(args.threads)
    env.update(RATE_ENV, PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""))
    if args.no_access_log:
        env["LOBBYTALKS_ACCESS_LOG"] = "false"
    if args.database_url:
        env["LOBBYTALKS_DATABASE_URL"] = args.database_url
    if args.ratelimit_storage:
        env["LOBBYTALKS_RATELIMIT_STORAGE"] = args.ratelimit_storage
    return env


def copy_to_postgresql(data_dir: Path, url: str) -> None:
    """The seeded community, moved into the (empty) PostgreSQL database the run serves from."""
    print("copying the seeded data into PostgreSQL (lobbytalks migrate-db) ...", flush=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "lobbytalks", "migrate-db", "--data-dir", str(data_dir),
                    "--to", url], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    print(f"copied in {time.perf_counter() - started:.1f} s", flush=True)


def run_once(args: argparse.Namespace, data_dir: Path) -> tuple[Setup, list[Row]]:
    """Seed (when new), start, measure and report one data folder."""
    manifest = prepare(args, data_dir)
    if args.database_url:
        copy_to_postgresql(data_dir, args.database_url)
    env = environment(args)
    from lobbytalks.settings import Settings
    setup = Setup(args, data_dir, manifest, env, Settings.load(env=env).threads)
    load_before = os.getloadavg()
    print(f"LobbyTalks bench: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"waitress threads {setup.threads}, load average {load_before[0]:.2f} "
          f"{load_before[1]:.2f} {load_before[2]:.2f}; {manifest.questions} questions, "
          f"{manifest.messages} messages")
    print("rate limits raised for the run: "
          + ", ".join(f"{k}={v}" for k, v in RATE_ENV.items())
          + f"; access log {'off' if args.no_access_log else 'on (to server.log)'}", flush=True)
    exhausted = threading.Event()
    rows = measure_all(setup, exhausted)
    report(setup, rows, load_before, exhausted.is_set())
    return setup, rows


def measure_growth(args: argparse.Namespace, dirs: tuple[Path, Path]
                   ) -> dict[str, tuple[float, float]]:
    """The p99 in ms of every read and page at both sizes, with both servers up and each
    endpoint measured on them in turn (PAIR_SLICES windows each). Two runs minutes apart
    see the machine at different speeds (a 1.3x swing between them is common here); taken
    in turn, both sizes meet the same drift, and the growth aim compares these p99s."""
    env = environment(args)
    only = selected(args)
    level = max(args.concurrency)
    servers: list[Server] = []
    p99s: dict[str, tuple[float, float]] = {}
    print("\nreads and pages at both sizes, measured alternately", flush=True)
    try:
        for data_dir in dirs:
            servers.append(Server(f"lobbytalks ({data_dir.name})", serve_command(args, data_dir),
                                  env, data_dir / "server.log", "/healthz"))
        manifests = [Manifest.load(data_dir) for data_dir in dirs]
        reads = [read_endpoints(m, sessions(server.port, m))
                 for m, server in zip(manifests, servers)]
        for (key, label, small), (_, _, large) in zip(*reads):
            if only is not None and key not in only:
                continue
            print(f"  c={level:<2} {label} ...", end="", flush=True)
            measured = measure_alternating(
                level, args.warmup, args.duration,
                (small.worker(servers[0].port), large.worker(servers[1].port)),
                (servers[0], servers[1]), PAIR_SLICES)
            print(" done", flush=True)
            both = [samples.get("request", Samples()) for samples, _ in measured]
            for size, s in zip(("small", "large"), both):
                if s.errors:
                    print(f"errors in {label} ({size}): {s.errors}, first: {s.first_error}")
            p99s[label] = (percentile(both[0].latencies, 0.99),
                           percentile(both[1].latencies, 0.99))
    finally:
        for server in servers:
            server.stop()
    return p99s


def print_sizes(small: list[Row], large: list[Row], top: int,
                alternated: dict[str, tuple[float, float]]) -> None:
    """Each endpoint at both sizes: ratio to the floor and p99, and whether p99 stayed flat
    (from ``alternated`` where measured so, else from the two runs)."""
    big = {r.endpoint: r for r in large if r.concurrency == top}
    print(f"\nboth sizes at concurrency {top}")
    width = max(len(r.endpoint) for r in small)
    head = (f"{'endpoint':{width}} {'x floor':>8} {'x floor':>8} {'p99 ms':>8} {'p99 ms':>8}  "
            f"p99 growth")
    print(head + "\n" + f"{'':{width}} {'small':>8} {'large':>8} {'small':>8} {'large':>8}")
    print("-" * len(head))
    for r in small:
        other = big.get(r.endpoint)
        if r.concurrency != top or other is None or r.endpoint.startswith(("floor", "ref:")):
            continue
        p99_small, p99_large = alternated.get(r.endpoint, (r.p99_ms, other.p99_ms))
        growth = p99_large / p99_small if p99_small else 0.0
        flag = "" if not p99_small else ("ok" if growth <= P99_GROWTH_AIM else "MISS")
        how = "" if not p99_small or r.endpoint in alternated else " (two runs)"
        print(f"{r.endpoint:{width}} {r.ratio:8.2f} {other.ratio:8.2f} {p99_small:8.1f} "
              f"{p99_large:8.1f}  {growth:.2f} {flag}{how}")
    if alternated:
        print("p99: reads and pages measured at both sizes in turn (see above); '(two runs)': "
              "from the two runs, minutes apart")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.database_url and args.scale:
        parser.error("--database-url measures one size: use it with --data-dir, not --scale")
    if args.workers and args.workers > 1 and not (args.database_url and args.ratelimit_storage):
        parser.error("--workers needs --database-url and --ratelimit-storage (as serve does)")
    if args.scale:
        _, small = run_once(args, args.scale / "small")
        large_args = argparse.Namespace(**{**vars(args), **LARGE, "json": None})
        _, large = run_once(large_args, args.scale / "large")
        alternated = measure_growth(args, (args.scale / "small", args.scale / "large"))
        print_sizes(small, large, max(args.concurrency), alternated)
        return 0
    temporary = args.data_dir is None
    data_dir = Path(tempfile.mkdtemp(prefix="lobbytalks-bench-")) if temporary else args.data_dir
    try:
        run_once(args, data_dir)
    finally:
        if temporary and not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
        else:
            print(f"data folder kept: {data_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
