"""The event loop under load: it waits while a task writes, and says that requests queue
once a minute instead of once per request (lobbytalks/serving.py)."""
from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time

import pytest
import requests

from lobbytalks import serving
from lobbytalks.serving import _BoundedChannel, _Dispatcher
from waitress.adjustments import Adjustments

from conftest import LiveServer, free_port


def channel(*, running: bool, buffered: int, will_close: bool = False,
            close_when_flushed: bool = False) -> _BoundedChannel:
    """A channel in a given state; ``writable`` reads nothing else."""
    made = object.__new__(_BoundedChannel)
    made.adj = Adjustments()
    made.requests = [object()] if running else []
    made.total_outbufs_len = buffered
    made.will_close = will_close
    made.close_when_flushed = close_when_flushed
    return made


def test_a_channel_whose_task_is_running_is_not_polled_for_writing():
    # The task's thread sends what it writes; the loop would only find the buffer locked.
    assert channel(running=True, buffered=278).writable() is False
    assert channel(running=True, buffered=0).writable() is False


def test_the_loop_still_writes_when_it_has_to():
    high = Adjustments().outbuf_high_watermark
    assert channel(running=False, buffered=11).writable() is True  # the task has finished
    assert channel(running=True, buffered=high + 1).writable() is True  # the task waits on us
    assert channel(running=True, buffered=5, will_close=True).writable() is True
    assert channel(running=True, buffered=5, close_when_flushed=True).writable() is True
    assert channel(running=False, buffered=0).writable() is False  # nothing to do


def test_queued_requests_are_reported_once_a_minute_with_their_count(caplog, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(serving.time, "monotonic", lambda: clock[0])
    dispatcher = _Dispatcher()  # no threads: every task queues
    with caplog.at_level(logging.WARNING, logger="waitress.queue"):
        for _ in range(50):
            dispatcher.add_task(object())
        clock[0] += serving.QUEUE_WARNING_SECONDS - 1
        dispatcher.add_task(object())
        assert len(caplog.records) == 1
        assert "queue depth 1," in caplog.records[0].getMessage()
        clock[0] += 1
        dispatcher.add_task(object())
    assert len(caplog.records) == 2
    assert "queue depth 52, 51 requests waited" in caplog.records[1].getMessage()
    assert len(dispatcher.queue) == 52  # every task was queued, logged or not


@pytest.fixture
def server(tmp_path):
    live = LiveServer(tmp_path / "live")
    yield live
    live.stop()


BIG = 8 * 1024 * 1024  # far more than the socket buffers, less than waitress' watermark
BIG_APP = f"""
import sys
from lobbytalks import serving
from lobbytalks.settings import Settings

def app(environ, start_response):
    body = b"x" * {BIG}
    start_response("200 OK", [("Content-Length", str(len(body)))])
    return [body]

serving.serve(app, Settings(port=int(sys.argv[1]), threads=2))
"""


def test_what_a_task_could_not_send_is_sent_after_it(tmp_path):
    # The task's thread sends what the socket takes and finishes; the rest must be
    # written by the loop, which was told not to poll the channel while the task ran.
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", BIG_APP, str(port)])
    try:
        sock = connect_when_listening(port)
        with sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            time.sleep(0.5)  # unread: the task has long finished, most of the body is queued
            received = bytearray()
            while len(received) < BIG or b"\r\n\r\n" not in received[:200]:
                chunk = sock.recv(1 << 16)
                assert chunk, "the server closed the connection early"
                received += chunk
                if len(received) - received.find(b"\r\n\r\n") - 4 >= BIG:
                    break
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    head, body = bytes(received).split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200")
    assert len(body) == BIG and body == b"x" * BIG


def connect_when_listening(port: int) -> socket.socket:
    deadline = time.monotonic() + 20
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=10)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_keep_alive_requests_are_answered_one_after_another(server):
    with requests.Session() as session:
        bodies = [session.get(server.url + "/healthz", timeout=5).json() for _ in range(200)]
    assert bodies == [{"ok": True}] * 200
