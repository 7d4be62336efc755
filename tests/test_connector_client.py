"""The connector's HTTP client against a server that misbehaves: a redirect elsewhere, an
answer too large, one that is no JSON, one that trickles, words with terminal controls.
Each is a small real HTTP server of its own (the connector's own tests use the real one)."""
from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

import pytest

from lobbytalks.connector.client import (MAX_RESPONSE_BYTES, Client, ProtocolError,
                                         Unreachable)
from lobbytalks.connector.events import Reporter
from lobbytalks.security import new_agent_token

TOKEN = new_agent_token()
TASK = {"id": "task_1", "topic": "t_1", "profile": "agt_1", "state": "leased", "replyTo": None,
        "created": 1796525426, "expires": 1796527226, "messageId": None, "error": None}


class Fake:
    """A server answering every request with ``answer(handler)``; it records what came."""

    def __init__(self, answer: Callable[[BaseHTTPRequestHandler], None]) -> None:
        self.seen: list[dict[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                fake.seen.append({"path": self.path, **self.headers})
                answer(self)

            do_POST = do_GET

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def fakes():
    made: list[Fake] = []

    def make(answer):
        made.append(Fake(answer))
        return made[-1]
    yield make
    for fake in made:
        fake.close()


def reply(status: int, body: bytes, **headers: str) -> Callable[[BaseHTTPRequestHandler], None]:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        for name, value in {"Content-Length": str(len(body)), **headers}.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)
    return answer


def client(url: str, **kwargs) -> Client:
    return Client(url, TOKEN, retries=0, sleep=lambda s: None, **kwargs)


def test_a_redirect_elsewhere_is_refused_and_the_token_stays(fakes):
    elsewhere = fakes(reply(200, b'{"communities": []}'))
    redirecting = fakes(reply(302, b"", Location=elsewhere.url + "/api/external?action=x"))
    with pytest.raises(ProtocolError) as refused:
        client(redirecting.url).list_communities()
    # the address to give, not the request's path and query it ended in
    assert refused.value.code == "redirected"
    assert f"redirects to {elsewhere.url}: give that address" in refused.value.message
    assert not client(redirecting.url).healthz()
    assert elsewhere.seen == []  # urllib would have resent the Authorization header there


def test_a_page_that_answers_200_anywhere_is_no_healthy_server(fakes):
    """A proxy's HTML page answering /healthz passed doctor's server check."""
    page = fakes(reply(200, b"<html>Welcome to nginx!</html>", **{"Content-Type": "text/html"}))
    assert not client(page.url).healthz()
    assert client(fakes(reply(200, b'{"ok":true}')).url).healthz()


def test_a_relative_redirect_is_told_as_the_address_to_give(fakes):
    """"/lobbytalks" was no address --server takes."""
    redirecting = fakes(reply(301, b"", Location="/lobbytalks/api/external?action=x"))
    with pytest.raises(ProtocolError) as refused:
        client(redirecting.url).list_communities()
    assert f"redirects to {redirecting.url}/lobbytalks: give that" in refused.value.message


def test_doctor_does_not_take_a_redirects_answer_for_the_token_check(fakes, tmp_path):
    elsewhere = fakes(reply(200, b'{"communities": []}'))
    redirecting = fakes(reply(302, b"", Location=elsewhere.url + "/api/external"))
    done = subprocess.run(
        [sys.executable, "-m", "lobbytalks", "agent", "doctor", "--json", "--server",
         redirecting.url, "--harness", "command", "--harness-command", "/bin/true",
         "--state-dir", str(tmp_path / "state")],
        env={**os.environ, "XIA_CHEDAN_AGENT_TOKEN": TOKEN}, capture_output=True, text=True)
    checks = {c["name"]: c for c in map(json.loads, done.stdout.splitlines())}
    assert checks["token"]["ok"] is False and "redirects to" in checks["token"]["message"]
    assert checks["token"]["fix"] == "give the address it names with --server"  # not "later"
    assert all(TOKEN not in str(seen) for seen in elsewhere.seen)


def test_plain_http_never_goes_through_the_environments_proxy(fakes, tmp_path):
    """With http_proxy set (no_proxy not naming the server), every request, its Bearer
    token in clear, went to the proxy, a server on this machine included; doctor said the
    token went only to this machine."""
    proxy = fakes(reply(502, b""))
    server = fakes(reply(200, b'{"ok":true}'))
    done = subprocess.run(
        [sys.executable, "-m", "lobbytalks", "agent", "doctor", "--json", "--server", server.url,
         "--harness", "command", "--harness-command", "/bin/true",
         "--state-dir", str(tmp_path / "state")],
        env={**os.environ, "XIA_CHEDAN_AGENT_TOKEN": TOKEN, "http_proxy": proxy.url,
             "HTTP_PROXY": proxy.url, "no_proxy": "", "NO_PROXY": ""},
        capture_output=True, text=True)
    assert any(seen.get("Authorization") == f"Bearer {TOKEN}" for seen in server.seen)
    assert proxy.seen == [], done.stdout


def test_https_still_goes_through_the_environments_proxy():
    """An https proxy only tunnels (CONNECT): the token stays encrypted end to end, and on
    networks whose only way out it is, the connector needs it."""
    done = subprocess.run(
        [sys.executable, "-c", "import urllib.request as u; "
         "from lobbytalks.connector.transport import OPENER; "
         "print([h.proxies for h in OPENER.handlers if isinstance(h, u.ProxyHandler)])"],
        env={**os.environ, "http_proxy": "http://proxy.example:3128",
             "https_proxy": "http://proxy.example:3129"}, capture_output=True, text=True)
    assert done.stdout.strip() == "[{'https': 'http://proxy.example:3129'}]", done.stderr


def test_an_answer_past_the_cap_is_not_read_into_memory(fakes):
    size = MAX_RESPONSE_BYTES + 1

    def huge(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(size))
        handler.end_headers()
        chunk = b" " * (1024 * 1024)
        try:
            for _ in range(size // len(chunk) + 1):
                handler.wfile.write(chunk)
        except OSError:  # the client stopped reading: what it should do
            pass
    with pytest.raises(ProtocolError) as refused:
        client(fakes(huge).url).list_topics()
    assert refused.value.code == "response_too_large"


@pytest.mark.parametrize("retry_after", ["\u00b2", "1.5", "-3", ""])
def test_a_retry_after_that_is_no_number_of_seconds_means_backing_off(fakes, retry_after):
    """"²" is a digit to str.isdigit and no number to int: the connector crashed on it."""
    slow_down = reply(429, b'{"code": "rate_limited", "error": "slow down"}',
                      **{"Retry-After": retry_after})
    waited: list[float] = []
    with pytest.raises(Unreachable):
        Client(fakes(slow_down).url, TOKEN, retries=1, sleep=waited.append).list_topics()
    assert len([s for s in waited if s > 0]) == 1 and 0 < max(waited) <= 60


@pytest.mark.parametrize("body", [b"<html>maintenance</html>", b"[1, 2, 3]", b'"text"'])
def test_an_answer_that_is_no_json_object_is_a_refusal_not_a_crash(fakes, body):
    with pytest.raises(ProtocolError) as refused:
        client(fakes(reply(200, body, **{"Content-Type": "text/html"})).url).list_topics()
    assert refused.value.code == "invalid_response"


@pytest.mark.parametrize("call, body", [
    (lambda c: c.list_communities(), {"communities": "nope"}),
    (lambda c: c.list_communities(), {"communities": [{"name": "no id"}]}),
    (lambda c: c.list_topics(), {}),
    (lambda c: c.list_topics(), {"topics": [], "requested": "x"}),
    (lambda c: c.list_topics(), {"topics": [{"id": "t_1", "title": 5}]}),
    (lambda c: c.list_topics(), {"topics": [{"id": "t_1", "title": "t", "created": "x"}]}),
    (lambda c: c.list_topics(), {"topics": [], "requested": [{"id": "t_1", "requestedAt": "x"}]}),
    (lambda c: c.claim("t_1", "r", None), {"task": {"id": "task_1"}}),
    (lambda c: c.claim("t_1", "r", None), {"task": TASK, "context": []}),
    (lambda c: c.status("task_1"), {"task": {**TASK, "state": "done", "messageId": None}}),
    (lambda c: c.heartbeat("task_1"), {"task": {**TASK, "expires": "soon"}}),
    (lambda c: c.heartbeat("task_1"), {"task": {**TASK, "expires": True}}),
    (lambda c: c.submit(b"{}"), {"replayed": False}),
])
def test_an_answer_of_another_shape_is_a_refusal_not_a_crash(fakes, call, body):
    """``{"communities": "nope"}`` ended `agent run` with a TypeError traceback, a harness
    running on with its lease held."""
    with pytest.raises(ProtocolError) as refused:
        call(client(fakes(reply(200, json.dumps(body).encode())).url))
    assert refused.value.code == "invalid_response"
    assert "not as the protocol has it" in refused.value.message


def test_answers_of_the_protocol_s_shape_pass_with_fields_it_may_add(fakes):
    answers = {"list_communities": {"communities": [{"id": "lobby", "name": "大厅"}],
                                    "hasMore": False, "new": 1},
               "list_topics": {"topics": [{"id": "t_1"}], "requested": None},
               "get_task_status": {"task": {**TASK, "state": "done", "messageId": "m_1"}},
               "claim_task": {"task": TASK, "context": {"question": None}},
               "heartbeat": {"task": TASK}}

    def by_action(handler):
        length = int(handler.headers.get("Content-Length") or 0)
        sent = json.loads(handler.rfile.read(length)) if length else {}
        action = sent.get("action") or handler.path.split("action=")[1].split("&")[0]
        reply(200, json.dumps(answers.get(action, {"messageId": "m_1"})).encode())(handler)
    c = client(fakes(by_action).url)
    assert c.list_communities()["new"] == 1 and c.list_topics()["topics"] == [{"id": "t_1"}]
    assert c.status("task_1")["task"]["messageId"] == "m_1"
    assert c.claim("t_1", "r", None)["task"] == TASK == c.heartbeat("task_1")["task"]
    assert c.submit(b'{"action": "submit_result"}') == {"messageId": "m_1"}


def trickling(status: int, stop: threading.Event) -> Callable[[BaseHTTPRequestHandler], None]:
    """An answer of ``status`` whose 600 bytes come one every 0.2 s (until ``stop``)."""
    def trickle(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        handler.send_header("Content-Length", "600")
        handler.end_headers()
        try:
            for _ in range(600):
                if stop.wait(0.2):
                    return
                handler.wfile.write(b" ")
                handler.wfile.flush()
        except OSError:
            pass
    return trickle


def test_an_answer_trickling_in_is_given_up_on_as_a_whole(fakes):
    """A byte every 0.2 s never trips the socket's timeout; the answer's deadline (two
    timeouts) ends it. Without one this call would take the whole 120 s the server trickles."""
    stop = threading.Event()
    started = time.monotonic()
    try:
        with pytest.raises(Unreachable):
            client(fakes(trickling(200, stop)).url, timeout=0.5).list_topics()
    finally:
        stop.set()
    assert time.monotonic() - started < 60


def test_headers_trickling_in_are_given_up_on_with_the_answer_s_deadline(fakes):
    """The deadline covered the body only: a server (or a proxy) sending its status line
    and then a header every 0.2 s never tripped the socket's timeout, and http.client reads
    up to 100 headers, each a further wait; every try took as long as the server liked."""
    stop = threading.Event()

    def trickle(handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
        try:
            for n in range(600):
                if stop.wait(0.2):
                    return
                handler.wfile.write(f"X-Slow-{n}: 1\r\n".encode())
                handler.wfile.flush()
        except OSError:
            pass
    said: list[str] = []
    started = time.monotonic()
    try:
        with pytest.raises(Unreachable, match="the answer took more than 1 s"):
            Client(fakes(trickle).url, TOKEN, timeout=0.5, retries=1, backoff=0.01,
                   on_retry=lambda why, delay: said.append(why)).list_topics()
    finally:
        stop.set()
    assert time.monotonic() - started < 10
    assert said == ["the answer took more than 1 s"]


def test_an_error_page_trickling_in_is_given_up_on_with_the_answer_s_deadline(fakes):
    """A refusal's page was read after the deadline had ended: a server or proxy sending
    503 and then a byte every few seconds held the request, and a stop, for ever."""
    stop = threading.Event()
    started = time.monotonic()
    try:
        with pytest.raises(Unreachable, match="HTTP 503 after 1 tries"):
            client(fakes(trickling(503, stop)).url, timeout=0.5).list_topics()
    finally:
        stop.set()
    assert time.monotonic() - started < 30


def test_an_answer_cut_short_is_tried_again_not_refused(fakes):
    """The connection closing before Content-Length's bytes came gave half an answer, read
    as no JSON: a refusal, final (a claim left its lease held, a heartbeat failed its task)."""
    whole = json.dumps({"topics": [{"id": "t_1", "title": "备份"}]}).encode()
    sent: list[int] = []

    def cut(times: int) -> Callable[[BaseHTTPRequestHandler], None]:
        def answer(handler: BaseHTTPRequestHandler) -> None:
            sent.append(1)
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(whole)))
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.write(whole if len(sent) > times else whole[:len(whole) // 2])
            handler.close_connection = True
        return answer
    c = Client(fakes(cut(1)).url, TOKEN, retries=1, backoff=0.01, sleep=lambda s: None)
    assert c.list_topics()["topics"] == [{"id": "t_1", "title": "备份"}]
    assert len(sent) == 2
    sent.clear()
    with pytest.raises(Unreachable):  # cut every time: the server is not answering, no refusal
        client(fakes(cut(99)).url).list_topics()


def test_terminal_controls_in_a_servers_words_never_reach_the_terminal():
    words = "\x1b]0;PWNED\x07\x1b[2J\x1b[31mfake: all good\x1b[0m \x9b31m"
    for json_lines in (False, True):
        out = io.StringIO()
        Reporter(json_lines, (), out).emit("poll_refused", f"403 forbidden: {words}")
        written = out.getvalue()
        assert not any(c in written for c in "\x1b\x07\x9b"), repr(written)
        if json_lines:  # the words themselves stay, escaped
            assert json.loads(written)["message"].endswith(words)


def test_readable_lines_show_times_as_local_times_and_json_lines_keep_seconds(monkeypatch):
    """``expires=1796525426`` meant nothing to a person reading the log."""
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    try:
        lines = {}
        for json_lines in (False, True):
            out = io.StringIO()
            Reporter(json_lines, (), out).emit("heartbeat", taskId="task_1", expires=1796525426)
            lines[json_lines] = out.getvalue()
    finally:
        monkeypatch.undo()
        time.tzset()
    assert lines[False] == "[heartbeat] taskId=task_1 expires=2026-12-06T10:50:26+0800\n"
    assert json.loads(lines[True])["expires"] == 1796525426



def test_a_failure_reason_keeps_no_terminal_controls():
    """A harness's coloured stderr reached the server as it was ("err \x1b[31mRED") and the
    /tasks page showed the escape's letters."""
    from lobbytalks.connector.events import short_reason
    told = short_reason("harness failed: err \x1b[31mRED\x1b[0m and \x1b]0;a title\x07 \x9b2Jend\x07")
    assert told == "harness failed: err RED and end"


def test_a_reason_the_server_refuses_is_replaced_so_the_lease_still_ends():
    """A 400 on fail_task (the server's scan found what the connector's did not) left
    the lease held for its 30 minutes; the reason is now sent again saying nothing."""
    from lobbytalks.connector.client import ProtocolError
    from lobbytalks.connector.endings import Endings
    from lobbytalks.connector.events import WITHHELD

    sent, said, saved = [], [], []

    class Client:
        def fail(self, task_id, reason):
            sent.append(reason)
            if reason != WITHHELD:
                raise ProtocolError(400, "sensitive_content", "内容中检测到疑似敏感信息")
            return {"task": {"id": task_id, "state": "failed"}}

    class Store:
        def note_error(self, attempt, error):
            saved.append(error)

    ending = Endings()
    ending.client, ending.store, ending.secrets = Client(), Store(), ()
    ending.say = lambda *args, **fields: said.append((args, fields))
    attempt = {"task": {"id": "task_1"}, "topic": "t_1"}
    ending._fail(attempt, "harness failed: something the server calls a secret")
    assert sent == ["harness failed: something the server calls a secret", WITHHELD]
    assert attempt["state"] == "failed" and attempt["failReason"] == WITHHELD
    assert saved == [WITHHELD] and said[-1][1]["confirmed"] is True


def test_a_colour_code_inside_a_key_does_not_hide_it_from_the_redaction():
    from lobbytalks.connector.events import WITHHELD, short_reason
    assert short_reason("failed: AKIA\x1b[0mIOSFODNN7EXAMPLE") == WITHHELD
    assert short_reason("failed: ghp_\x1b[1m" + "a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ01") == WITHHELD


def test_a_state_folder_too_full_to_keep_the_output_is_the_reason_given(tmp_path, monkeypatch):
    """The harness was stopped as it should be, but the reason sent was its own last line
    of stderr, as if the harness had failed by itself."""
    import os
    import sys
    from lobbytalks.connector import running
    from lobbytalks.connector.harness import HarnessConfig, HarnessFailed, RunFiles

    opened = running.owner_only

    def full_for_stderr(path, flags):  # /dev/full: every write fails with ENOSPC
        return os.open("/dev/full", os.O_WRONLY) if path.endswith("stderr-1.txt") else \
            opened(path, flags)
    monkeypatch.setattr(running, "owner_only", full_for_stderr)
    config = HarnessConfig("command", command=f"{sys.executable} -c \"import sys,time; "
                           "sys.stderr.write('harness words\\n' * 20000); sys.stderr.flush(); "
                           "time.sleep(30)\"", start=str(tmp_path))
    files = RunFiles.in_folder(tmp_path, 1)
    harness = running.Running(config, {"resultSchema": {}}, files, dict(os.environ))
    deadline = time.monotonic() + 20
    while not harness.finished() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert harness.finished()  # stopped as soon as its output could not be kept
    with pytest.raises(HarnessFailed) as failed:
        harness.result()
    assert str(failed.value).startswith("the state folder could not keep what the harness "
                                        "printed: No space left on device (writing stderr-1")
    harness.stop()


def test_a_write_the_disk_takes_in_parts_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """os.write's count went unread: a nearly full disk took part of a kept result, and the
    part replaced the whole (every retry then sent its broken bytes)."""
    from lobbytalks.connector import state
    path = tmp_path / "kept.json"
    path.write_bytes(b"old")
    real, calls = os.write, []

    def in_parts(fd, data):
        calls.append(len(data))
        if len(calls) > 3 and path.read_bytes() == b"x" * 100:  # the second file: full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, bytes(data[:30]))
    with monkeypatch.context() as patched:
        patched.setattr(state.os, "write", in_parts)
        state.write_atomic(path, b"x" * 100)
        assert path.read_bytes() == b"x" * 100 and calls == [100, 70, 40, 10]
        with pytest.raises(OSError):
            state.write_atomic(path, b"y" * 100)
    assert path.read_bytes() == b"x" * 100  # the old file, whole
    assert [p.name for p in tmp_path.iterdir()] == ["kept.json"]  # no part left beside it
