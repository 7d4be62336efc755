"""`lobbytalks serve` under hostile traffic: idle and slow sockets, oversized bodies, file
modes, log lines, memory after a burst of logins. Everything here drives a real server
process over loopback."""
from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import stat
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
import requests

from lobbytalks.guards import COMMUNITIES_BODY_LIMIT, EXTERNAL_BODY_LIMIT
from lobbytalks.passwords import Argon2Cost
from lobbytalks.client_connections import client_address_key, longest_waiting
from lobbytalks.serving import SPARE_FILES

from conftest import LiveServer, live_usernames, web_session


def open_socket(server: LiveServer, source: str = "127.0.0.1") -> socket.socket:
    """A connection to ``server`` from ``source``: any 127.x.y.z is this machine too, and
    the server counts each as a client address of its own."""
    return socket.create_connection(("127.0.0.1", server.port), timeout=5,
                                    source_address=(source, 0))


def read_response(sock: socket.socket, seconds: float = 5.0) -> bytes:
    """Everything the server sends until it closes the connection (or ``seconds`` pass)."""
    sock.settimeout(0.5)
    data, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    return data


def status_and_json(raw: bytes) -> tuple[int, dict]:
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 "), raw[:200]
    return int(head.split()[1]), json.loads(body)


def closed_by_server(sock: socket.socket, seconds: float, dribble: bytes = b"") -> float | None:
    """Seconds until the server closes ``sock`` (None if it stays open), sending ``dribble``
    every quarter second meanwhile."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        try:
            if dribble:
                sock.sendall(dribble)
            ready, _, _ = select.select([sock], [], [], 0.25)
            if ready and sock.recv(4096) == b"":
                return time.monotonic() - started
        except (BrokenPipeError, ConnectionResetError):
            return time.monotonic() - started
    return None


def open_when_a_slot_is_free(server, address: str, seconds: float = 3) -> socket.socket:
    """A socket from ``address`` that the server keeps. The server learns of a close on its
    next turn of the event loop, so a socket opened at once may still find the slot taken."""
    deadline = time.monotonic() + seconds
    while True:
        sock = open_socket(server, address)
        if closed_by_server(sock, 0.3) is None or time.monotonic() > deadline:
            return sock
        sock.close()


@pytest.fixture
def server(tmp_path):
    live = LiveServer(tmp_path / "live")
    yield live
    live.stop()


# --- item 2: connections ------------------------------------------------------------------

IDLE_SOCKETS = 300
SLOW_SOCKETS = 300
SOCKETS_PER_ADDRESS = 50  # under LOBBYTALKS_CONNECTIONS_PER_CLIENT's default of 100


def loopback_address(index: int) -> str:
    """A loopback address of its own for every ``SOCKETS_PER_ADDRESS`` sockets, none of them
    127.0.0.1, which the test's own requests come from."""
    return f"127.0.1.{index // SOCKETS_PER_ADDRESS + 1}"


def test_hundreds_of_idle_and_slowloris_sockets_leave_healthz_answering_within_a_second(
        server):
    sockets: list[socket.socket] = []
    try:
        for index in range(IDLE_SOCKETS):
            sockets.append(open_socket(server, loopback_address(index)))
        slow = []
        for index in range(IDLE_SOCKETS, IDLE_SOCKETS + SLOW_SOCKETS):
            sock = open_socket(server, loopback_address(index))
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            slow.append(sock)
        sockets += slow
        timings = []
        for round_ in range(6):
            for sock in slow:  # one more header line each: the request never ends
                sock.sendall(b"X-Slow-%d: 1\r\n" % round_)
            started = time.monotonic()
            r = requests.get(server.url + "/healthz", timeout=5)
            timings.append(time.monotonic() - started)
            assert r.status_code == 200 and r.json()["ok"] is True
            time.sleep(0.2)
        print(f"healthz with {IDLE_SOCKETS} idle + {SLOW_SOCKETS} slowloris sockets open: "
              f"worst {max(timings) * 1000:.0f} ms, median "
              f"{sorted(timings)[len(timings) // 2] * 1000:.0f} ms")
        assert max(timings) < 1.0, timings
        # the slow ones were accepted and are still being read, not refused
        assert closed_by_server(slow[0], 0.5, b"X-Still: 1\r\n") is None
    finally:
        for sock in sockets:
            sock.close()


def test_one_address_cannot_hold_more_than_its_share_of_connections(tmp_path):
    server = LiveServer(tmp_path / "live", env={"LOBBYTALKS_CONNECTIONS_PER_CLIENT": "20"})
    greedy = [open_socket(server, "127.0.2.1") for _ in range(25)]
    try:
        # the five past the limit are closed at once, before sending anything ...
        assert all(closed_by_server(sock, 2) is not None for sock in greedy[20:])
        # ... the twenty within it stay open and are served
        assert all(closed_by_server(sock, 0.05) is None for sock in greedy[:20])
        greedy[0].sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert greedy[0].recv(4096).startswith(b"HTTP/1.1 200 ")
        # other addresses are not held up by it
        assert requests.get(server.url + "/healthz", timeout=5).status_code == 200
        # a slot given back can be taken again
        greedy[1].close()
        again = open_when_a_slot_is_free(server, "127.0.2.1")
        greedy.append(again)
        assert closed_by_server(again, 0.5) is None
        one_more = open_socket(server, "127.0.2.1")
        greedy.append(one_more)
        assert closed_by_server(one_more, 2) is not None
    finally:
        for sock in greedy:
            sock.close()
        log = server.stop()
    assert "127.0.2.1 already holds 20 connections" in log, log


def test_when_every_slot_is_taken_the_longest_waiting_connection_makes_room(tmp_path):
    """Sockets that only wait, spread over many addresses, fill every slot: a new client is
    still served at once, and the one that waited longest without a request is closed for
    it (waitress stopped accepting until a timeout freed a slot, here a minute later)."""
    limit = 30
    server = LiveServer(tmp_path / "live", env={
        "LOBBYTALKS_CONNECTION_LIMIT": str(limit), "LOBBYTALKS_CONNECTIONS_PER_CLIENT": "10",
        "LOBBYTALKS_IDLE_TIMEOUT": "60", "LOBBYTALKS_REQUEST_TIMEOUT": "60"})
    stalled: list[socket.socket] = []
    try:
        for index in range(limit):  # a half-sent request each, from 127.0.3.1-3
            sock = open_socket(server, f"127.0.3.{index // 10 + 1}")
            sock.sendall(b"POST /api/community HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
            stalled.append(sock)
            if index == 0:
                time.sleep(0.5)  # the first is the oldest by a clear margin
        time.sleep(1.5)  # older than MAKE_ROOM_AFTER_SECONDS, all of them
        for _ in range(3):
            r = requests.get(server.url + "/healthz", timeout=5)
            assert r.status_code == 200 and r.json() == {"ok": True}
        assert closed_by_server(stalled[0], 1) is not None  # the oldest gave up its slot
        assert closed_by_server(stalled[-1], 0.2) is None  # not every one of them
    finally:
        for sock in stalled:
            sock.close()
        log = server.stop()
    assert f"all {limit} connections are open (LOBBYTALKS_CONNECTION_LIMIT)" in log, log
    # in a line a minute, not waitress' two lines for every newcomer
    assert "no longer accepting new connections" not in log, log


def test_at_the_limit_an_upload_keeping_pace_is_not_the_one_making_room(tmp_path):
    """A request arriving steadily (a long question from a slow phone link) was closed for a
    newcomer before sockets that had sent nothing, because it had begun earlier."""
    limit = 30
    server = LiveServer(tmp_path / "live", env={
        "LOBBYTALKS_CONNECTION_LIMIT": str(limit), "LOBBYTALKS_CONNECTIONS_PER_CLIENT": "10",
        "LOBBYTALKS_IDLE_TIMEOUT": "60", "LOBBYTALKS_REQUEST_TIMEOUT": "60"})
    body = json.dumps({"action": "login", "username": "slowphone",
                       "password": "x" * 40_000}).encode()
    upload = open_socket(server, "127.0.5.1")
    silent: list[socket.socket] = []
    try:
        upload.sendall(b"POST /api/community HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       b"Content-Type: application/json\r\n"
                       b"Content-Length: %d\r\n\r\n" % len(body))
        sent, chunk = 0, 2048  # 20 KiB a second
        deadline = time.monotonic() + 30
        while sent < len(body) and time.monotonic() < deadline:
            upload.sendall(body[sent:sent + chunk])
            sent += chunk
            if sent == 5 * chunk:  # half a second in, sockets that send nothing fill up
                silent += [open_socket(server, f"127.0.6.{index // 10 + 1}")
                           for index in range(limit)]
            if sent == 30 * chunk:  # 3 s in, the silent ones older than a second: a newcomer
                r = requests.get(server.url + "/healthz", timeout=5)
                assert r.status_code == 200
            time.sleep(0.1)
        answer = read_response(upload, 5)
        assert answer.startswith(b"HTTP/1.1 "), answer[:200]  # answered, not cut off
        assert sum(closed_by_server(sock, 0.05) is not None for sock in silent) >= 1
    finally:
        upload.close()
        for sock in silent:
            sock.close()
        server.stop()


def waiting_channel(last_activity: float, arriving_since: float | None = None,
                    arrived: int = 0, serving: bool = False, sending: int = 0,
                    closing: bool = False, client: str = "",
                    connected: float | None = None) -> SimpleNamespace:
    """What ``longest_waiting`` reads of a waitress channel (and its client's key)."""
    request = (None if arriving_since is None
               else SimpleNamespace(started=arriving_since, arrived=arrived))
    return SimpleNamespace(last_activity=last_activity, request=request,
                           requests=["task"] if serving else [], total_outbufs_len=sending,
                           will_close=closing, close_when_flushed=False, client_key=client,
                           creation_time=last_activity if connected is None else connected)


def making_room(channels: list[SimpleNamespace], now: float) -> SimpleNamespace | None:
    return longest_waiting(channels, now, 1.0, owner=lambda channel: channel.client_key)


def test_the_connection_making_room_is_the_one_waiting_longest_for_nothing():
    now = 1000.0
    dribbling = waiting_channel(last_activity=now - 0.1, arriving_since=now - 50, arrived=60)
    idle = waiting_channel(last_activity=now - 30)
    served = waiting_channel(last_activity=now - 90, serving=True, client="a")  # a long one
    closing = waiting_channel(last_activity=now - 80, closing=True, client="b")
    fresh = waiting_channel(last_activity=now - 0.5, client="c")
    # a byte now and then is activity, yet the request it belongs to began long ago
    assert making_room([idle, served, closing, dribbling, fresh], now) is dribbling
    assert making_room([idle, served, fresh], now) is idle
    # a client's only connection, not a second old, is still sending its first request
    assert making_room([served, closing, fresh], now) is None


def test_an_answer_still_being_sent_or_an_upload_keeping_pace_keeps_its_slot():
    """A large answer that a client reads slowly was cut off mid-body (its task done, the
    rest still in the buffer, the client quiet for a second); a request arriving at 20 KiB
    a second was closed before sockets that had sent nothing, because it began earlier."""
    now = 1000.0
    reading_slowly = waiting_channel(last_activity=now - 5, sending=4_000_000)
    uploading = waiting_channel(last_activity=now - 0.1, arriving_since=now - 3,
                                arrived=60_000)
    silent = waiting_channel(last_activity=now - 2)
    assert longest_waiting([reading_slowly, uploading, silent], now, 1.0) is silent
    assert longest_waiting([reading_slowly], now, 1.0) is None
    # slower than a KiB a second, it is waiting more than sending
    creeping = waiting_channel(last_activity=now - 0.1, arriving_since=now - 10, arrived=2048)
    assert longest_waiting([creeping, silent], now, 1.0) is creeping


def test_when_no_socket_waits_a_connection_of_the_client_holding_most_gives_way():
    """Sockets each trickling a little over a KiB a second, or a burst and then nothing,
    never counted as waiting, so they kept every newcomer out until they timed out. The
    next fix closed the request that had sent least for its age, older than a second: an
    attacker reconnecting kept its own sockets younger, and sending faster is always
    possible, so a phone's upload was the one closed."""
    now = 1000.0
    phone = waiting_channel(last_activity=now - 0.1, arriving_since=now - 3, arrived=15_000,
                            client="198.51.100.7")
    attacker = [waiting_channel(last_activity=now - 0.05, arriving_since=now - 0.5,
                                arrived=20_000, client="203.0.113.1") for _ in range(3)]
    fresh = waiting_channel(last_activity=now - 0.2, arriving_since=now - 0.2, arrived=10,
                            client="203.0.113.1")
    served = waiting_channel(last_activity=now - 90, serving=True, client="198.51.100.7")
    assert making_room([phone, *attacker, served], now) in attacker
    # within the heaviest client: its oldest first, then the one that sent least for its age
    older = waiting_channel(last_activity=now - 0.1, arriving_since=now - 4, arrived=900_000,
                            client="203.0.113.1")
    assert making_room([phone, fresh, *attacker, older], now) is older
    assert making_room([phone, fresh, *attacker], now) is fresh
    # keep-alive sockets kept young (idle, under a second) no longer hold the rule back
    keep_alive = [waiting_channel(last_activity=now - 0.3, client="203.0.113.2")
                  for _ in range(2)]
    assert making_room([phone, *keep_alive], now) in keep_alive
    # one connection a client (behind a proxy, or an attack from as many addresses as
    # slots): the longest dribbling of the old ones
    slow = waiting_channel(last_activity=now - 0.1, arriving_since=now - 10, arrived=11_000,
                           client="192.0.2.9")
    assert making_room([phone, slow], now) is slow
    assert making_room([served], now) is None


def test_at_the_limit_sockets_trickling_just_over_the_pace_do_not_keep_a_newcomer_out(tmp_path):
    """Every slot held by a request arriving a little faster than a KiB a second: a new
    client is served at once, not after the request timeout (a minute here)."""
    limit = 20
    server = LiveServer(tmp_path / "live", env={
        "LOBBYTALKS_CONNECTION_LIMIT": str(limit), "LOBBYTALKS_CONNECTIONS_PER_CLIENT": "10",
        "LOBBYTALKS_IDLE_TIMEOUT": "60", "LOBBYTALKS_REQUEST_TIMEOUT": "60"})
    trickling = [open_socket(server, f"127.0.7.{index // 10 + 1}") for index in range(limit)]
    stop = threading.Event()

    def trickle() -> None:  # 300 bytes every 0.2 s: 1.5 KiB a second each
        for sock in trickling:
            sock.sendall(b"POST /api/community HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n")
        while not stop.wait(0.2):
            for sock in trickling:
                try:
                    sock.sendall(b" " * 300)
                except OSError:
                    pass  # closed to make room

    sender = threading.Thread(target=trickle, daemon=True)
    sender.start()
    try:
        time.sleep(2)  # every one begun more than a second ago, each ahead of the pace
        r = requests.get(server.url + "/healthz", timeout=10)
        assert r.status_code == 200 and r.json() == {"ok": True}
        assert sum(closed_by_server(sock, 0.5) is not None for sock in trickling) >= 1
    finally:
        stop.set()
        sender.join(5)
        for sock in trickling:
            sock.close()
        log = server.stop()
    assert "or of the clients holding the most, closed for new clients" in log, log


def test_behind_a_trusted_proxy_one_address_may_hold_many_connections(tmp_path):
    """Every connection comes from the proxy there; limiting per client is its job."""
    server = LiveServer(tmp_path / "live", env={"LOBBYTALKS_CONNECTIONS_PER_CLIENT": "5",
                                                "LOBBYTALKS_TRUSTED_PROXIES": "1"})
    proxy = [open_socket(server, "127.0.2.2") for _ in range(10)]
    try:
        assert all(closed_by_server(sock, 0.1) is None for sock in proxy)
    finally:
        for sock in proxy:
            sock.close()
        server.stop()


@pytest.mark.parametrize(("addr", "key"), [
    (("203.0.113.7", 50000), "203.0.113.7"),
    (("::ffff:203.0.113.7", 50000, 0, 0), "203.0.113.7"),  # IPv4 on a dual-stack socket
    (("2001:db8:1:2:aaaa::1", 50000, 0, 0), "2001:db8:1:2::/64"),
    (("2001:db8:1:2:bbbb::9", 50001, 0, 0), "2001:db8:1:2::/64"),  # the same host's /64
    (("fe80::1%eth0", 50000, 0, 2), "fe80::/64"),
])
def test_a_client_is_counted_by_its_address_or_its_ipv6_64(addr, key):
    assert client_address_key(addr) == key


def test_idle_sockets_and_dribbled_requests_are_cut_off(tmp_path):
    server = LiveServer(tmp_path / "live", env={"LOBBYTALKS_IDLE_TIMEOUT": "2",
                                                "LOBBYTALKS_REQUEST_TIMEOUT": "2"})
    idle, slow = open_socket(server), open_socket(server)
    try:
        slow.sendall(b"POST /api/community HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        # a header line every quarter second is never idle, yet the request must end
        slow_closed = closed_by_server(slow, 8, b"X-Drip: 1\r\n")
        idle_closed = closed_by_server(idle, 8)
        assert slow_closed is not None and 1.5 < slow_closed < 5, slow_closed
        assert idle_closed is not None, "an idle socket stays open"
        r = requests.get(server.url + "/healthz", timeout=5)  # the server itself is fine
        assert r.status_code == 200
    finally:
        idle.close()
        slow.close()
        server.stop()


def started_with_open_files(soft: int, hard: int) -> list[str]:
    """A `python -m lobbytalks` command line that starts under the given RLIMIT_NOFILE."""
    return [sys.executable, "-c",
            "import resource, runpy, sys; "
            f"resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard})); "
            "sys.argv[0] = 'lobbytalks'; runpy.run_module('lobbytalks', run_name='__main__')"]


def open_files_limit(pid: int) -> int:
    (line,) = [line for line in open(f"/proc/{pid}/limits") if line.startswith("Max open files")]
    return int(line.split()[3])


def test_serve_raises_its_open_file_limit_towards_the_connection_limit(tmp_path):
    # the default LOBBYTALKS_CONNECTION_LIMIT needs 1000 + SPARE_FILES descriptors; the hard
    # limit allows a little less, so the soft limit goes up to it, with a warning
    hard = 1000 + SPARE_FILES - 28
    server = LiveServer(tmp_path / "live", command=started_with_open_files(256, hard))
    try:
        raised = open_files_limit(server.proc.pid)
    finally:
        out = server.stop()
    assert raised == hard and f"only {hard} open files allowed" in out


# --- item 3: bodies ---------------------------------------------------------------------

def agent_token(server: LiveServer) -> tuple[requests.Session, str]:
    session = web_session(server)
    r = session.post(server.url + "/api/external/manage", timeout=10, json={
        "action": "register", "name": "大体积虾", "perspective": "测试请求体上限。",
        "client": "codex"})
    assert r.status_code == 200, r.text
    return session, r.json()["token"]


def raw_post(server: LiveServer, path: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in
                                                           headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def test_an_oversized_content_length_is_refused_before_the_body_is_sent(server):
    session, token = agent_token(server)
    cookie = "; ".join(f"{c.name}={c.value}" for c in session.cookies)
    json_type = {"Content-Type": "application/json"}
    surfaces = [  # path, extra headers, how the envelope is checked
        ("/api/community", {}, lambda b: set(b) == {"error", "code"}),
        ("/api/communities", {"Cookie": cookie}, lambda b: set(b) == {"error", "code"}),
        ("/api/external", {"Authorization": f"Bearer {token}"},
         lambda b: b["code"] == "payload_too_large" and b["error"]),
        ("/api/external/manage", {"Cookie": cookie},
         lambda b: b["code"] == "payload_too_large"),
        ("/api/external/mcp", {"Authorization": f"Bearer {token}",
                               "Accept": "application/json, text/event-stream"},
         lambda b: b["error"]["code"] == -32000
         and b["error"]["data"] == {"code": "payload_too_large", "status": 413}),
    ]
    for path, headers, envelope_ok in surfaces:
        with open_socket(server) as sock:
            # one gigabyte announced, nothing sent: the answer must not wait for it, nor
            # invite the body with "100 Continue"
            sock.sendall(raw_post(server, path, {**json_type, **headers,
                                                 "Expect": "100-continue",
                                                 "Content-Length": str(2**30)}))
            started = time.monotonic()
            raw = read_response(sock, 5)
            took = time.monotonic() - started
        status, body = status_and_json(raw)
        assert status == 413 and envelope_ok(body), (path, body)
        assert b"Connection: close" in raw.partition(b"\r\n\r\n")[0], path
        assert took < 2, (path, took)  # and the server closed the connection after it


@pytest.mark.parametrize("request_bytes, status", [
    (b"POST /api/external HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
    # past the 4,300 digits Python converts: the connection had closed with no answer
    (b"POST /api/external HTTP/1.1\r\nHost: x\r\nContent-Length: " + b"9" * 5000
     + b"\r\n\r\n", 400),
    (b"GET /api/external HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400),
    # headers past their limit: waitress' 431 is the contract's 413
    (b"GET /api/external HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 300_000 + b"\r\n\r\n", 413),
    # a query string of 10,000 parameters (70 KB): past the 64 KiB the request line and
    # headers may take, where waitress' own limit is 256 KiB
    (b"GET /api/external?action=list_topics" + b"&p=v" * 17_500 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
     413),
    (b"POST /api/external HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
    (b"POST /api/external HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n", 400),
    # a coding that is empty or only commas: waitress dropped it and read the body by its
    # Content-Length (RFC 9112 6.3: refused, as any coding not ending in chunked)
    (b"POST /api/community HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \r\nContent-Length: 14\r\n"
     b"Content-Type: application/json\r\n\r\n{\"action\":\"x\"}", 400),
    (b"POST /api/community HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ,\r\nContent-Length: 14\r\n"
     b"Content-Type: application/json\r\n\r\n{\"action\":\"x\"}", 400),
    # two framings: refused, and the connection closed before what follows is read
    (b"POST /api/community HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    (b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    (b"GET /healthz HTTP/1.1\r\n\r\n", 400),  # HTTP/1.1 needs a Host (RFC 9112 3.2)
    # another major version, in cleartext without an upgrade, is not HTTP/1 at all
    (b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 400),
    (b"GET /healthz HTTP/3.0\r\nHost: x\r\n\r\n", 400),
    # bare line feeds: answered at once, not when the request times out
    (b"GET /healthz HTTP/1.1\nHost: x\n\n", 400),
    (b"GET /healthz HTTP/1.1\r\nHost: x\n\n", 400),
])
def test_what_waitress_refuses_is_answered_in_json(server, request_bytes, status):
    """A request waitress cannot parse never reaches the app; its answer is still the API's
    JSON envelope with the security headers, and the connection closes after it."""
    with open_socket(server) as sock:
        sock.sendall(request_bytes)
        raw = read_response(sock, 5)
    head, _, payload = raw.partition(b"\r\n\r\n")
    head = head.decode("latin-1").lower()
    # HTTP/1.0 where the request line never parsed: waitress does not know the version
    assert head.startswith(("http/1.1 ", "http/1.0 ")), raw[:200]
    got, body = int(head.split()[1]), json.loads(payload)
    assert got == status and set(body) == {"error", "code"}, (got, body)
    assert body["code"] == ("payload_too_large" if status == 413 else "invalid_request")
    assert body["error"]
    if b"X-Big" in request_bytes or b"&p=v" in request_bytes:  # in the API's language only
        assert body["error"] == "请求行和请求头合计超过 64 KiB"
    for header in ("content-type: application/json", "cache-control: no-store",
                   "x-content-type-options: nosniff", "connection: close"):
        assert header in head, (header, head)


def test_a_request_line_and_headers_within_64_kib_reach_the_app(server):
    """The limit is on the request line and headers together, and generous: a 40 KB query
    string and 20 KB of cookies still reach the app."""
    request = (b"GET /healthz?pad=" + b"a" * 40_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               b"Cookie: " + b"; ".join(b"c%d=v" % n for n in range(2_500)) + b"\r\n"
               b"Connection: close\r\n\r\n")
    assert 60_000 < len(request) < 64 * 1024
    with open_socket(server) as sock:
        sock.sendall(request)
        raw = read_response(sock, 5)
    assert raw.startswith(b"HTTP/1.1 200 "), raw[:200]


@pytest.mark.parametrize("framing, status, code", [
    (b"Transfer-Encoding: gzip\r\n", 400, "invalid_request"),
    (b"Content-Length: -1\r\n", 400, "invalid_request"),
    (b"Bad Header\r\n", 400, "invalid_request"),
    (b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", 400, "invalid_request"),
    (b"X-Big: " + b"a" * 300_000 + b"\r\n", 413, "payload_too_large"),
])
@pytest.mark.parametrize("target", [b"/api/external/mcp", b"/api/external/%6dcp",
                                    b"http://127.0.0.1/api/external/mcp"])
def test_on_the_mcp_path_what_waitress_refuses_is_a_json_rpc_error(server, framing, status, code,
                                                                     target):
    """The contract's answer on /api/external/mcp is a JSON-RPC response, refusals too,
    however the request line names that path (the app routes all three there)."""
    with open_socket(server) as sock:
        sock.sendall(b"POST " + target + b" HTTP/1.1\r\nHost: x\r\n"
                     b"Accept: application/json, text/event-stream\r\n" + framing + b"\r\n")
        raw = read_response(sock, 5)
    head, _, payload = raw.partition(b"\r\n\r\n")
    body = json.loads(payload)
    assert int(head.split()[1]) == status, head
    assert body["jsonrpc"] == "2.0" and body["id"] is None, body
    assert body["error"]["code"] == -32000 and body["error"]["message"]
    assert body["error"]["data"] == {"code": code, "status": status}


def test_http_1_0_may_leave_the_host_out(server):
    with open_socket(server) as sock:
        sock.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
        head, _, body = read_response(sock, 5).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200 ") and json.loads(body) == {"ok": True}, head


def test_a_chunk_announced_past_the_limit_is_refused_before_it_is_sent(server):
    _, token = agent_token(server)
    with open_socket(server) as sock:
        sock.sendall(raw_post(server, "/api/external", {
            "Content-Type": "application/json", "Authorization": f"Bearer {token}",
            "Transfer-Encoding": "chunked"}) + b"ffffffffffffffffffff\r\n")
        started = time.monotonic()
        raw = read_response(sock, 5)
    status, body = status_and_json(raw)
    assert status == 413 and body["code"] == "payload_too_large"
    assert time.monotonic() - started < 2


def test_the_limit_itself_is_exact_and_nothing_is_written(server):
    def register(name: str, size: int) -> requests.Response:
        return requests.post(server.url + "/api/community", data=register_body(name, size),
                             timeout=10, headers={"Content-Type": "application/json"})

    assert register("at_limit", EXTERNAL_BODY_LIMIT).status_code == 200
    r = register("over_limit", EXTERNAL_BODY_LIMIT + 1)
    assert r.status_code == 413 and set(r.json()) == {"error", "code"}
    session = web_session(server)
    r = session.post(server.url + "/api/communities", timeout=10, json={
        "action": "create", "name": "x" * COMMUNITIES_BODY_LIMIT})
    assert r.status_code == 413
    names = live_usernames(server)
    assert "at_limit" in names and "over_limit" not in names


def test_a_chunked_body_is_cut_off_at_the_limit_while_it_streams(server):
    _, token = agent_token(server)
    chunk = b"x" * 8192
    sent = 0
    with open_socket(server) as sock:
        sock.sendall(raw_post(server, "/api/external", {
            "Content-Type": "application/json", "Authorization": f"Bearer {token}",
            "Transfer-Encoding": "chunked"}))
        answered = False
        while sent < 4 * 2**20 and not answered:  # the old server read on up to 1 GiB
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
            answered = bool(select.select([sock], [], [], 0.02)[0])
        raw = read_response(sock, 5)
    status, body = status_and_json(raw)
    assert status == 413 and body["code"] == "payload_too_large"
    # cut off within a few chunks of the limit, not after the whole stream
    assert sent <= EXTERNAL_BODY_LIMIT + 6 * len(chunk), sent


def register_body(name: str, size: int) -> bytes:
    """A register action of exactly ``size`` bytes (padded with a field it ignores)."""
    body = json.dumps({"action": "register", "username": name,
                       "password": "correct horse 1", "pad": ""}).encode()
    body = body[:-2] + b"x" * (size - len(body)) + b'"}'
    assert len(body) == size
    return body


def chunked(body: bytes, size: int) -> bytes:
    pieces = (body[at:at + size] for at in range(0, len(body), size))
    return b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"


@pytest.mark.parametrize("chunk_size", [1, 10, 4096])
def test_a_chunked_body_is_held_to_the_limit_as_decoded(server, chunk_size):
    """The limit is on the body, not on its framing: one-byte chunks take six bytes each on
    the wire, and a body at the limit sent so was refused 413 (one of 20 KB too)."""
    answers = {}
    for name, size in ((f"chunks_at_{chunk_size}", EXTERNAL_BODY_LIMIT),
                       (f"chunks_over_{chunk_size}", EXTERNAL_BODY_LIMIT + 1)):
        with open_socket(server) as sock:
            sock.sendall(raw_post(server, "/api/community", {
                "Content-Type": "application/json", "Transfer-Encoding": "chunked",
                "Connection": "close"}) + chunked(register_body(name, size), chunk_size))
            answers[size] = status_and_json(read_response(sock, 10))
    assert answers[EXTERNAL_BODY_LIMIT][0] == 200, answers[EXTERNAL_BODY_LIMIT]
    status, body = answers[EXTERNAL_BODY_LIMIT + 1]
    assert status == 413 and body["code"] == "payload_too_large", (status, body)
    names = live_usernames(server)
    assert f"chunks_at_{chunk_size}" in names and f"chunks_over_{chunk_size}" not in names


def test_a_chunked_body_over_the_limit_that_arrives_whole_closes_the_connection(server):
    """Read in one go, it was passed on whole: the 413 came back on a connection left open
    until the idle timeout."""
    body = chunked(register_body("whole_over", EXTERNAL_BODY_LIMIT + 2048), 1024)
    with open_socket(server) as sock:
        sock.sendall(raw_post(server, "/api/community", {
            "Content-Type": "application/json", "Transfer-Encoding": "chunked"}) + body)
        started = time.monotonic()
        raw = read_response(sock, 10)
    status, answer = status_and_json(raw)
    assert status == 413 and answer["code"] == "payload_too_large", (status, answer)
    assert b"connection: close" in raw.partition(b"\r\n\r\n")[0].lower()
    assert time.monotonic() - started < 5  # closed by the server, not by the idle timeout
    assert "whole_over" not in live_usernames(server)


@pytest.mark.parametrize("coding", [b"chunked", b"CHUNKED", b"xchunked", b"identity, chunked"])
def test_http_1_0_with_a_transfer_encoding_is_refused_and_what_follows_never_runs(server, coding):
    """HTTP/1.0 knows no transfer codings, and waitress framed such a request by its
    Content-Length: the bytes after it ran as a second request, which a proxy framing by
    the coding would have passed on as part of the first (RFC 9112 6.1: faulty framing)."""
    smuggled = raw_post(server, "/api/community", {
        "Content-Type": "application/json", "Connection": "close", "Content-Length": "100"},
        register_body("smuggled", 100))
    with open_socket(server) as sock:
        sock.sendall(b"POST /api/community HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                     b"Connection: keep-alive\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: " + coding + b"\r\nContent-Length: 2\r\n\r\n{}"
                     + smuggled)
        raw = read_response(sock, 5)
    head, _, payload = raw.partition(b"\r\n\r\n")
    body = json.loads(payload)  # one answer: a second one would follow this JSON
    assert int(head.split()[1]) == 400 and body["code"] == "invalid_request", raw[:300]
    assert b"connection: close" in head.lower()
    assert "smuggled" not in live_usernames(server)


# --- item 20: file modes ----------------------------------------------------------------

def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.sqlite_only
def test_the_data_folder_and_every_file_in_it_are_owner_only(tmp_path):
    old_umask = os.umask(0o022)  # the usual default, which SQLite's own 0644 passes through
    try:
        server = LiveServer(tmp_path / "live")
    finally:
        os.umask(old_umask)
    data = server.data_dir
    try:
        web_session(server)  # a write: the -wal and -shm exist now
        backup = tmp_path / "backups" / "nightly.db"
        made = subprocess.run([sys.executable, "-m", "lobbytalks", "backup", "--data-dir",
                               str(data), "--with-key", str(backup)],
                              capture_output=True, text=True, timeout=60)
        assert made.returncode == 0, made.stderr
        files = {p.name: mode(p) for p in data.iterdir()}
    finally:
        server.stop()
    assert mode(data) == 0o700
    assert {"lobbytalks.db", "lobbytalks.db-wal", "lobbytalks.db-shm", "secret.key",
            "lobbytalks.db.lock"} <= set(files)
    assert files == {name: 0o600 for name in files}, files
    assert mode(backup) == 0o600 and mode(backup.with_name("nightly.db.key")) == 0o600
    assert live_usernames(server)  # the registration is in the database


# --- item 21: access log ----------------------------------------------------------------

TOKEN_SHAPED = "lbt_" + "a1B2c3D4e5" * 4 + "F6g7H8"  # an agent token's shape, 46 after lbt_


def test_a_path_cannot_forge_access_log_fields_nor_log_a_token(tmp_path):
    server = LiveServer(tmp_path / "live", env={"LOBBYTALKS_ACCESS_LOG": "true"})
    try:
        r = requests.get(server.url + "/healthz%20200%200.1ms%20user=1", timeout=5)
        assert r.status_code == 404
        assert requests.post(server.url + f"/api/external/mcp/{TOKEN_SHAPED}", timeout=5
                             ).status_code == 404
        with contextlib.closing(open_socket(server)) as sock:  # exactly these bytes, no client re-quoting
            sock.sendall(b"GET /x%09200%0Bok%C3%A4 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Connection: close\r\n\r\n")
            assert read_response(sock, 2).startswith(b"HTTP/1.1 404")
    finally:
        out = server.stop()
    (line,) = [line for line in out.splitlines() if "/healthz%20" in line]
    fields = line.split(" ")
    assert fields[3] == "/healthz%20200%200.1ms%20user%3D1" and fields[4] == "404", line
    assert fields[6:] == ["user=-", "agent=-"], line
    (line,) = [line for line in out.splitlines() if " /x" in line]
    assert line.split(" ")[3:5] == ["/x%09200%0Bok%C3%A4", "404"], line
    assert TOKEN_SHAPED[4:] not in out
    (line,) = [line for line in out.splitlines() if "/api/external/mcp/" in line]
    assert line.split(" ")[3:5] == ["/api/external/mcp/(redacted)", "404"], line


# --- memory -------------------------------------------------------------------------------

def resident_kib(pid: int) -> int:
    (line,) = [line for line in open(f"/proc/{pid}/status") if line.startswith("VmRSS:")]
    return int(line.split()[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_memory_of_password_hashes_is_given_back_after_a_burst_of_logins(tmp_path):
    # Each hash holds Argon2id's memory cost (the default 19 MiB) while it runs. Before
    # serving.MALLOC_TUNING, the allocator kept one such block per arena after the first
    # burst: 60 MB more, for good.
    memory_kib = Argon2Cost().memory_kib
    server = LiveServer(tmp_path / "live", env={"LOBBYTALKS_ARGON2_MEMORY_KIB": str(memory_kib),
                                                "LOBBYTALKS_RATE_LOGIN_SUCCESS": "1000/hour"})
    try:
        requests.get(server.url + "/", timeout=10)
        before = resident_kib(server.proc.pid)
        name = f"burst{os.getpid()}"
        web_session(server, name)

        def login(_: int) -> int:
            return requests.post(server.url + "/api/community", timeout=60, json={
                "action": "login", "username": name, "password": "correct horse 1"}).status_code
        with ThreadPoolExecutor(8) as pool:
            for _ in range(3):
                assert list(pool.map(login, range(8))) == [200] * 8
        assert [login(i) for i in range(4)] == [200] * 4
        grown = resident_kib(server.proc.pid) - before
    finally:
        server.stop()
    assert grown < memory_kib, f"{grown} KiB more after 28 logins"


def test_a_taken_port_is_one_line_and_exit_1(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "lobbytalks", "serve", "--port", str(port),
             "--data-dir", str(tmp_path / "data")],
            env={**os.environ, "LOBBYTALKS_ACCESS_LOG": "false"}, capture_output=True,
            text=True, timeout=60)
    assert done.returncode == 1
    assert f"lobbytalks: cannot listen on 127.0.0.1:{port}: " in done.stderr
    assert "Traceback" not in done.stderr and "serving" not in done.stdout


def test_the_start_line_names_the_address_listened_on_and_the_public_one(tmp_path):
    server = LiveServer(tmp_path / "live", env={"LOBBYTALKS_PUBLIC_URL": "https://talk.example.org"})
    out = server.stop()
    assert f" at http://127.0.0.1:{server.port} (public address https://talk.example.org)\n" in out


@pytest.mark.parametrize("host,shown", [("127.0.0.1", "http://127.0.0.1:8000"),
                                        ("::1", "http://[::1]:8000"),
                                        ("localhost", "http://localhost:8000")])
def test_the_address_listened_on_is_a_url(host, shown):
    from lobbytalks.settings import Settings
    from lobbytalks.workers import listening_at
    assert listening_at(Settings(host=host), []) == shown


def test_the_address_listened_on_names_the_port_the_system_picked_for_port_0():
    """It said ":0" while the server listened on another port."""
    from lobbytalks.settings import Settings
    from lobbytalks.workers import bind, listening_at
    sockets = bind(Settings(port=0))
    try:
        picked = sockets[0].getsockname()[1]
        assert picked != 0 and listening_at(Settings(port=0), sockets) == f"http://127.0.0.1:{picked}"
    finally:
        for sock in sockets:
            sock.close()


def _serve_refused(tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lobbytalks", "serve", "--port", "0", *args],
        env={**os.environ, "LOBBYTALKS_ACCESS_LOG": "false", **env}, capture_output=True,
        text=True, timeout=60, cwd=tmp_path)


def test_settings_serve_cannot_use_are_one_line_each(tmp_path):
    """What an operator may get wrong: no traceback, one line naming it."""
    done = _serve_refused(tmp_path, "--data-dir", str(tmp_path / "d1"), LOBBYTALKS_HOST="not a host")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.endswith("lobbytalks: cannot listen on not a host:0: 'not a host' is no "
                                "address or name of this machine\n")
    (tmp_path / "a-file").write_text("")
    done = _serve_refused(tmp_path, "--data-dir", str(tmp_path / "a-file" / "data"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"lobbytalks: cannot use the data folder {tmp_path}/a-file/data:")
    for name in ("x", "bad name!", "a" * 25):  # an admin nobody could log in as
        done = _serve_refused(tmp_path, "--data-dir", str(tmp_path / "d2"),
                              LOBBYTALKS_ADMIN_USERNAME=name, LOBBYTALKS_ADMIN_PASSWORD="long enough 1")
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert "LOBBYTALKS_ADMIN_USERNAME must be 3–24 letters, digits or underscores" in done.stderr


@pytest.mark.sqlite_only
def test_init_never_migrates_a_file_a_server_is_serving(live_server):
    """An upgrade's `init` run while the old server still serves the file is refused, as
    restore and a second serve are."""
    done = subprocess.run([sys.executable, "-m", "lobbytalks", "init", "--data-dir",
                           str(live_server.data_dir)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "database ready" not in done.stdout, done.stdout
    assert done.stderr.startswith("lobbytalks: ") and "Traceback" not in done.stderr
    live_server.stop()
    done = subprocess.run([sys.executable, "-m", "lobbytalks", "init", "--data-dir",
                           str(live_server.data_dir)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "database ready" in done.stdout, done.stderr
