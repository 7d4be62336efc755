"""Clients that pipeline requests for large answers and do not read them, against a real
`lobbytalks serve`: no worker waits for it, so the server goes on answering everyone else."""
from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time

import pytest
import requests

from conftest import LiveServer

# waitress' outbuf_high_watermark is 16 MiB; lowered so that a few megabytes make the test.
WATERMARK = 256 * 1024
PIPELINED = 100  # requests for the 60 KB OpenAPI document, sent in one packet: ~6 MB answered


def served_with_a_low_watermark() -> list[str]:
    return [sys.executable, "-c",
            "import runpy, sys, waitress.adjustments as a; "
            f"a.Adjustments.outbuf_high_watermark = {WATERMARK}; "
            "sys.argv[0] = 'lobbytalks'; runpy.run_module('lobbytalks', run_name='__main__')"]


@pytest.fixture
def server(tmp_path):
    live = LiveServer(tmp_path / "live", command=served_with_a_low_watermark(),
                      env={"LOBBYTALKS_REQUEST_TIMEOUT": "3", "LOBBYTALKS_IDLE_TIMEOUT": "60"})
    yield live
    live.stop()


def stalled_pipeline(server: LiveServer, then: bytes = b"") -> socket.socket:
    """A socket that asks for ``PIPELINED`` documents at once (and sends ``then``) and
    reads nothing."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    one = f"GET /docs/external-agents-openapi.json HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    sock.sendall(one * PIPELINED + then)
    return sock


def healthz_seconds(server: LiveServer) -> float | None:
    started = time.monotonic()
    try:
        ok = requests.get(server.url + "/healthz", timeout=5).status_code == 200
    except requests.RequestException:
        return None
    return time.monotonic() - started if ok else None


def test_a_client_that_does_not_read_holds_no_worker_and_loses_its_other_requests(server):
    document = requests.get(server.url + "/docs/external-agents-openapi.json", timeout=5)
    assert len(document.content) * PIPELINED > 8 * WATERMARK
    sock = stalled_pipeline(server)
    try:
        time.sleep(1)  # the answers pile up past the watermark
        answered = [healthz_seconds(server) for _ in range(3)]
        assert None not in answered, answered  # the server is not stuck behind the socket
        sock.settimeout(5)
        received, deadline = b"", time.monotonic() + 20
        while time.monotonic() < deadline:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            received += chunk
        else:
            pytest.fail("the connection stayed open")
    finally:
        sock.close()
    answers = received.count(b"HTTP/1.1 200 OK")
    # what was answered arrives whole; the rest is dropped and the connection closed
    assert 1 <= answers < PIPELINED
    assert received.endswith(document.content)


def server_holds(server: LiveServer, sock: socket.socket) -> bool:
    """Whether the server process still has its end of ``sock`` open (a socket it closed
    may still be sending what its kernel buffer holds, but belongs to no process)."""
    client_port = sock.getsockname()[1]
    inodes = set()
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if (int(local.rsplit(":", 1)[1], 16) == server.port
                    and int(remote.rsplit(":", 1)[1], 16) == client_port):
                inodes.add(f"socket:[{inode}]")
    fds = f"/proc/{server.proc.pid}/fd"
    return any(os.readlink(f"{fds}/{fd}") in inodes for fd in os.listdir(fds))


def test_a_client_reading_a_byte_now_and_then_is_let_go_after_the_request_timeout(server):
    assert_let_go_while_trickling(server)  # LOBBYTALKS_REQUEST_TIMEOUT is 3 s here
    assert healthz_seconds(server) is not None


def assert_let_go_while_trickling(server: LiveServer) -> None:
    """A client that asks for ``PIPELINED`` documents and then reads a byte now and then
    (enough to keep the connection from ever looking idle) is let go within 20 s."""
    sock = stalled_pipeline(server)
    try:
        time.sleep(1)
        assert server_holds(server, sock)
        sock.settimeout(0.2)
        deadline = time.monotonic() + 20
        while server_holds(server, sock) and time.monotonic() < deadline:
            with contextlib.suppress(socket.timeout):
                sock.recv(1)
            time.sleep(0.3)
        assert not server_holds(server, sock)
    finally:
        sock.close()


def test_a_client_that_reads_nothing_is_let_go_after_the_idle_timeout(tmp_path):
    """Under the watermark nothing is dropped, but waitress' idle rule only marked such a
    connection to close when its socket next polled writable, which it never did."""
    live = LiveServer(tmp_path / "live", env={"LOBBYTALKS_IDLE_TIMEOUT": "2"})
    try:
        assert_let_go(live, stalled_pipeline(live))
    finally:
        live.stop()


def test_a_client_reading_its_answers_steadily_gets_each_one_whole(server):
    """Past the watermark its other requests are dropped, but what it was answered arrives
    whole at 160 KB/s: the first fix cut the answer being read once the request timeout (3 s
    here) had passed since the drop."""
    document = requests.get(server.url + "/docs/external-agents-openapi.json", timeout=5)
    sock = stalled_pipeline(server)
    received = b""
    try:
        sock.settimeout(5)
        while True:
            chunk = sock.recv(16 * 1024)
            if not chunk:
                break
            received += chunk
            time.sleep(0.1)  # about 160 KB a second
    finally:
        sock.close()
    answers = received.count(b"HTTP/1.1 200 OK")
    assert 1 <= answers < PIPELINED
    assert received.endswith(document.content)  # the last one too
    assert len(received) > 8 * WATERMARK


def test_unread_answers_and_a_half_sent_request_are_let_go(server):
    """The request still arriving only marked the connection to close, which waitress does
    when its socket polls writable: never, while the client reads nothing."""
    # LOBBYTALKS_REQUEST_TIMEOUT is 3 s here
    assert_let_go(server, stalled_pipeline(server, then=b"GET /healthz HTTP/1.1\r\nHost: x\r\n"))


def assert_let_go(server: LiveServer, sock: socket.socket, seconds: float = 15) -> None:
    """The server holds ``sock`` a second after it was opened, and no longer ``seconds``
    later (the client reading nothing meanwhile)."""
    try:
        time.sleep(1)
        assert server_holds(server, sock)
        deadline = time.monotonic() + seconds
        while server_holds(server, sock) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert not server_holds(server, sock)
    finally:
        sock.close()


def test_closing_lagging_clients_resets_no_newcomer(tmp_path):
    """Closed in the middle of the event loop, a lagging connection's descriptor went to a
    connection accepted in the same turn, which the closed one's pending event then reset."""
    live = LiveServer(tmp_path / "live", env={"LOBBYTALKS_IDLE_TIMEOUT": "2"})
    failures, done = [], time.monotonic() + 8

    def newcomers() -> None:
        while time.monotonic() < done:
            try:
                with socket.create_connection(("127.0.0.1", live.port), timeout=5) as sock:
                    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                 b"Connection: close\r\n\r\n")
                    if not read_all(sock).startswith(b"HTTP/1.1 200"):
                        failures.append("no answer")
            except OSError as exc:
                failures.append(repr(exc))

    try:
        stalled = [stalled_pipeline(live) for _ in range(24)]  # closed together, idle at 2 s
        threads = [threading.Thread(target=newcomers) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not any(server_holds(live, sock) for sock in stalled)
        assert failures == []
        for sock in stalled:
            sock.close()
    finally:
        live.stop()


def read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_a_client_trickling_through_answers_under_the_watermark_is_let_go(tmp_path):
    """Nothing dropped (6 MB is under the 16 MiB watermark), but megabytes waited in a temp
    file for a client reading a byte now and then, which kept the connection from looking
    idle, for as long as it liked."""
    live = LiveServer(tmp_path / "live", env={"LOBBYTALKS_REQUEST_TIMEOUT": "3",
                                               "LOBBYTALKS_IDLE_TIMEOUT": "60"})
    try:
        assert_let_go_while_trickling(live)
    finally:
        live.stop()


def test_a_client_that_read_its_big_answers_keeps_its_connection(tmp_path):
    """Once all is read, the pace asked of it no longer applies: its next requests on the
    same connection are served, past the request timeout (2 s here)."""
    live = LiveServer(tmp_path / "live", env={"LOBBYTALKS_REQUEST_TIMEOUT": "2",
                                               "LOBBYTALKS_IDLE_TIMEOUT": "60"})
    try:
        sock = stalled_pipeline(live)
        time.sleep(1.5)  # a megabyte and more waits unread through a maintenance pass
        sock.settimeout(10)
        received = b""
        while received.count(b"HTTP/1.1 200 OK") < PIPELINED or not received.endswith(b"}"):
            received += sock.recv(1 << 20)
        for _ in range(3):  # then asks again, a request now and then
            time.sleep(1.5)
            sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{live.port}\r\n\r\n".encode())
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK")
        sock.close()
    finally:
        live.stop()
