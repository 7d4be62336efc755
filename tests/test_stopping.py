"""A stopping server answers what it has received (``lobbytalks.draining``), through a real
``lobbytalks serve`` process: requests queued behind a busy worker, keep-alive connections."""
from __future__ import annotations

import json
import signal
import socket
import time

import pytest

from lobbytalks import draining

from conftest import LiveServer
from test_workers import Supervised

# One worker thread and a slow password check (a login of nobody still checks one, to
# take as long as a real one): every login after the first waits in waitress' queue.
SLOW_ONE_AT_A_TIME = {"LOBBYTALKS_THREADS": "1", "LOBBYTALKS_ARGON2_MEMORY_KIB": "65536"}
QUEUED = 10


def _login_request(port: int) -> bytes:
    body = json.dumps({"action": "login", "username": "nobody_here",
                       "password": "not the password"}).encode()
    return (f"POST /api/community HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode() + body


def _read_until_closed(sock: socket.socket) -> bytes:
    sock.settimeout(30)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


def _head(response: bytes) -> tuple[str, dict[str, str]]:
    head = response.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    return head[0], {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in head[1:])}


# SIGHUP: the terminal `serve` ran in was closed. It ended the server on the spot, a
# request in flight cut off unanswered, no "LobbyTalks stopped" and the -wal left behind.
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_requests_queued_when_the_server_is_stopped_are_answered(tmp_path, stop):
    server = LiveServer(tmp_path / "data", env=SLOW_ONE_AT_A_TIME)
    connections = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(QUEUED)]
    idle = socket.create_connection(("127.0.0.1", server.port))
    idle.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
    assert idle.recv(65536).startswith(b"HTTP/1.1 200")  # and it stays open (keep-alive)
    for conn in connections:
        conn.sendall(_login_request(server.port))
    time.sleep(0.2)  # read by the event loop; one login running, the others queued
    server.proc.send_signal(stop)
    responses = [_read_until_closed(conn) for conn in connections]
    out, _ = server.proc.communicate(timeout=30)
    assert server.proc.returncode == 0, out
    assert "LobbyTalks stopped" in out and "Traceback" not in out
    assert "Canceling" not in out, out  # waitress' words for requests dropped unanswered
    for response in responses:
        status, _ = _head(response)
        assert status.split()[:2] == ["HTTP/1.1", "401"], response[:300]
        assert json.loads(response.split(b"\r\n\r\n", 1)[1])["code"] == "unauthorized"
    # Each connection was closed after its answer (or reading it would have timed out); the
    # last in the queue was answered after the stop, and told the client so.
    assert _head(responses[-1])[1]["connection"] == "close"
    assert _read_until_closed(idle) == b""  # the idle keep-alive connection was closed
    for conn in [*connections, idle]:
        conn.close()


def _slow_requests_to(supervised: Supervised) -> list[socket.socket]:
    """``QUEUED`` slow requests sent to two one-thread workers, one connection each."""
    supervised.wait_for_children(2)
    connections = [socket.create_connection(("127.0.0.1", supervised.port))
                   for _ in range(QUEUED)]
    for conn in connections:
        conn.sendall(b"GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    return connections


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_the_workers_of_a_stopped_supervisor_answer_what_they_had_queued(tmp_path, stop):
    supervised = Supervised(tmp_path, mode="one-thread")
    try:
        connections = _slow_requests_to(supervised)
        time.sleep(0.2)  # each child runs one, the rest wait in its queue
        code, err = supervised.stop(stop)
        responses = [_read_until_closed(conn) for conn in connections]
        assert code == 0, err
        assert "Canceling" not in err, err
        assert all(r.startswith(b"HTTP/1.1 200 ") for r in responses), responses
        # what a child answered after the stop says so (whichever child that was)
        assert any(_head(r)[1].get("connection") == "close" for r in responses)
    finally:
        supervised.stop(signal.SIGKILL)


def test_a_stopped_supervisor_refuses_new_connections_while_its_workers_drain(tmp_path):
    """Its own copy of the listening socket closed with the workers': a connection opened
    during the drain is refused at once, never accepted into a queue no one reads (and
    reset, unanswered, when the supervisor exits)."""
    supervised = Supervised(tmp_path, mode="one-thread")
    try:
        connections = _slow_requests_to(supervised)  # keep both workers draining ~1.5 s
        time.sleep(0.2)
        supervised.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", supervised.port), timeout=5).close()
        assert supervised.proc.poll() is None  # still draining: the refusal was not its exit
        code, err = supervised.stop(signal.SIGTERM)
        assert code == 0, err
        for conn in connections:
            conn.close()
    finally:
        supervised.stop(signal.SIGKILL)


def test_a_second_signal_to_the_supervisor_stops_its_workers_at_once(tmp_path):
    """The supervisor took a second SIGTERM as the first: every worker drained on."""
    supervised = Supervised(tmp_path, mode="one-thread")
    try:
        connections = _slow_requests_to(supervised)
        time.sleep(0.2)
        supervised.proc.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        code, err = supervised.stop(signal.SIGTERM)
        assert code == 0, err
        assert "Canceling" in err, err  # queued requests dropped: the stop was "now"
        for conn in connections:
            conn.close()
    finally:
        supervised.stop(signal.SIGKILL)


def test_a_second_signal_or_one_before_serving_stops_at_once():
    """Before the loop runs there is nothing to drain; a second signal means "now"."""
    with pytest.raises(SystemExit):
        draining.ask_to_stop(signal.SIGTERM, None)

    class Serving:
        stopping, woken = False, 0

        def wake(self) -> None:
            self.woken += 1

    server = Serving()
    draining._running = server
    try:
        draining.ask_to_stop(signal.SIGTERM, None)
        assert server.stopping and server.woken == 1
        with pytest.raises(SystemExit):
            draining.ask_to_stop(signal.SIGINT, None)
        assert server.woken == 1
    finally:
        draining._running = None
