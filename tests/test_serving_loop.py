"""The event loop under load: it waits while a task writes, and says that requests queue
once a minute instead of once per request, sends each response's header with its body and
keeps few malloc arenas (lobbytalks/serving.py, lobbytalks/dispatchers.py)."""
from __future__ import annotations

import logging
import platform
import socket
import subprocess
import sys
import time

import pytest
import requests

from lobbytalks import dispatchers, serving
from lobbytalks.dispatchers import Dispatcher
from lobbytalks.serving import _BoundedChannel, _BoundedTask
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
    monkeypatch.setattr(dispatchers.time, "monotonic", lambda: clock[0])
    dispatcher = Dispatcher()  # no threads: every task queues
    with caplog.at_level(logging.WARNING, logger="waitress.queue"):
        for _ in range(50):
            dispatcher.add_task(object())
        clock[0] += dispatchers.QUEUE_WARNING_SECONDS - 1
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
            while True:  # until the whole body is in (the head alone counts for nothing)
                chunk = sock.recv(1 << 16)
                assert chunk, "the server closed the connection early"
                received += chunk
                head_end = received.find(b"\r\n\r\n")
                if head_end >= 0 and len(received) - head_end - 4 >= BIG:
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


class RecordingChannel:
    """What a task writes, one entry per ``write_soon``."""

    def __init__(self) -> None:
        self.adj = Adjustments()
        self.server = type("Server", (), {"adj": self.adj})()
        self.writes: list[bytes] = []

    def write_soon(self, data: bytes) -> int:
        self.writes.append(bytes(data))
        return len(data)

    def last_before_stop(self) -> bool:  # the server is not stopping (test_stopping)
        return False


def started_task(headers: list[tuple[str, str]], status: str = "200 OK",
                 content_length: int | None = None) -> tuple[_BoundedTask, RecordingChannel]:
    """A task whose app has called start_response, as WSGITask.execute leaves it."""
    request = type("Request", (), {"version": "1.1", "headers": {}, "command": "GET"})()
    channel = RecordingChannel()
    task = _BoundedTask(channel, request)
    task.complete, task.status = True, status
    task.response_headers = list(headers)
    task.content_length = content_length
    return task, channel


def test_the_header_is_sent_with_the_body_in_one_write():
    task, channel = started_task([("Content-Length", "11")], content_length=11)
    task.write(b'{"ok":true}')
    task.finish()
    assert len(channel.writes) == 1
    head, body = channel.writes[0].split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"Content-Length: 11" in head
    assert body == b'{"ok":true}' and task.content_bytes_written == 11


def test_a_later_piece_of_the_body_follows_on_its_own():
    task, channel = started_task([("Content-Length", "6")], content_length=6)
    task.write(b"abc")
    task.write(b"def")
    assert [w.split(b"\r\n\r\n", 1)[-1] for w in channel.writes] == [b"abc", b"def"]


def test_what_passes_content_length_is_dropped_as_waitress_does():
    task, channel = started_task([("Content-Length", "3")], content_length=3)
    task.write(b"abcdef")
    assert len(channel.writes) == 1 and channel.writes[0].endswith(b"\r\n\r\nabc")
    assert task.logged_write_excess  # waitress' warning about the extra bytes


def test_a_body_of_unknown_length_a_bodiless_status_and_a_huge_body_keep_waitress_path():
    chunked, channel = started_task([])  # no Content-Length: chunked by waitress
    chunked.write(b"abc")
    assert len(channel.writes) == 2 and channel.writes[1] == b"3\r\nabc\r\n"
    assert b"Transfer-Encoding: chunked" in channel.writes[0]

    not_modified, channel = started_task([], status="304 Not Modified", content_length=0)
    not_modified.finish()
    assert len(channel.writes) == 1 and channel.writes[0].startswith(b"HTTP/1.1 304")

    huge = Adjustments().outbuf_overflow + 1  # joining would copy it once more
    task, channel = started_task([("Content-Length", str(huge))], content_length=huge)
    task.write(b"x" * huge)
    assert [len(w) for w in channel.writes][1:] == [huge]
    assert channel.writes[0].endswith(b"\r\n\r\n")


def test_a_live_server_answers_get_and_head_on_one_connection(server):
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    with sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                     b"HEAD /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                     b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    responses = received.split(b"HTTP/1.1 ")[1:]
    assert len(responses) == 3, received
    for response, has_body in zip(responses, (True, False, True)):
        head, body = response.split(b"\r\n\r\n", 1)
        assert head.startswith(b"200 OK") and b"Content-Length: 11" in head
        assert body == (b'{"ok":true}' if has_body else b"")


class FakeLibc:
    def __init__(self, *, has_mallopt: bool = True) -> None:
        self.calls: list[tuple[int, int]] = []
        if has_mallopt:
            self.mallopt = lambda param, value: self.calls.append((param, value)) or 1


MALLOC_VARIABLES = ("MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES")


@pytest.fixture
def no_malloc_settings(monkeypatch):
    for variable in MALLOC_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


def test_serve_tunes_malloc_unless_the_administrator_chose(monkeypatch, no_malloc_settings):
    libc = FakeLibc()
    monkeypatch.setattr(serving.ctypes, "CDLL", lambda name: libc)
    arenas, threshold = (serving.M_ARENA_MAX, 2), (serving.M_MMAP_THRESHOLD, 4 * 2**20)
    assert serving._tune_malloc() == [-8, -3]
    assert libc.calls == [arenas, threshold] == [(-8, 2), (-3, 4194304)]

    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")  # the administrator's own choice stands
    libc.calls.clear()
    assert serving._tune_malloc() == [-3] and libc.calls == [threshold]

    monkeypatch.delenv("MALLOC_ARENA_MAX")
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=65536")
    libc.calls.clear()
    assert serving._tune_malloc() == [-8] and libc.calls == [arenas]

    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    monkeypatch.setenv("MALLOC_ARENA_MAX", "1")
    libc.calls.clear()
    assert serving._tune_malloc() == [] and libc.calls == []


def test_without_glibc_malloc_is_left_alone(monkeypatch, no_malloc_settings):
    monkeypatch.setattr(serving.ctypes, "CDLL", lambda name: FakeLibc(has_mallopt=False))
    assert serving._tune_malloc() == []

    def no_c_library(name):
        raise OSError("no C library")
    monkeypatch.setattr(serving.ctypes, "CDLL", no_c_library)
    assert serving._tune_malloc() == []


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_glibc_accepts_the_malloc_tuning(no_malloc_settings):
    assert serving._tune_malloc() == [-8, -3]  # mallopt returned 1 for each: both are set
