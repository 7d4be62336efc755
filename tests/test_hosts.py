"""A server only this machine reaches answers to this machine's names alone (DNS rebinding)."""
from __future__ import annotations

import socket

import pytest

from conftest import count, settings_for
from lobbytalks import create_app
from lobbytalks.hosts import is_loopback

LOOPBACK_HOSTS = ["localhost", "localhost:8000", "LOCALHOST:8000", "app.localhost:8000",
                  "127.0.0.1", "127.0.0.1:8000", "127.8.9.10:80", "[::1]", "[::1]:8000",
                  "localhost.:8000"]
OTHER_HOSTS = ["evil.example", "evil.example:8000", "127.0.0.1.evil.example",
               "localhost.evil.example:8000", "0.0.0.0:8000", "10.0.0.5:8000", "[::1]x",
               "[::1]:80x", "localhost:80x", "[::1", "[2001:db8::1]:8000", "::1", "",
               # digits to str.isdigit, no port (the documents then named "http:" as this
               # server), and ports past 65535
               "127.0.0.1:\u00b2", "[::1]:\u00b9\u00b3", "localhost:99999999999999999999",
               "localhost:65536"]


@pytest.mark.parametrize("host, expected", [
    ("localhost", True), ("a.b.localhost", True), ("127.0.0.1", True), ("127.255.0.9", True),
    ("::1", True), ("[::1]", True), ("0.0.0.0", False), ("::", False), ("10.1.2.3", False),
    ("localhost.example", False), ("example.org", False), ("", False)])
def test_which_names_only_mean_this_machine(host, expected):
    assert is_loopback(host) is expected


def _get(client, path, host, **kwargs):
    return client.get(path, environ_overrides={"HTTP_HOST": host}, **kwargs)


@pytest.mark.parametrize("host", LOOPBACK_HOSTS)
def test_the_default_server_answers_its_own_names(client, host):
    assert _get(client, "/healthz", host).status_code == 200
    assert _get(client, "/", host).status_code == 200


@pytest.mark.parametrize("host", OTHER_HOSTS)
def test_the_default_server_refuses_other_names(client, host):
    r = _get(client, "/api/communities", host)
    assert r.status_code == 400 and r.get_json()["code"] == "invalid_request"
    assert "LOBBYTALKS_PUBLIC_URL" in r.get_json()["error"]
    page = _get(client, "/?lang=en", host)
    assert page.status_code == 400 and page.mimetype == "text/html"
    assert "open it as localhost or 127.0.0.1" in page.get_data(as_text=True)


def test_a_rebound_page_can_neither_register_nor_talk_mcp(client, db, person):
    """The attack: a page on rebind.example, its name now resolving to 127.0.0.1, posts to
    the server with its own name as Host and Origin, which agree with each other."""
    rebound = {"HTTP_HOST": "rebind.example:8000", "HTTP_ORIGIN": "http://rebind.example:8000"}
    r = client.post("/api/community", json={"action": "register", "username": "rebinder",
                                            "password": "correct horse 1"},
                    environ_overrides=rebound)
    assert r.status_code == 400 and r.get_json()["code"] == "invalid_request"
    assert count(db, "users", "username = :u", {"u": "rebinder"}) == 0
    token = person.new_agent().token
    r = client.post("/api/external/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                    headers={"Authorization": f"Bearer {token}",
                             "Accept": "application/json, text/event-stream"},
                    environ_overrides=rebound)
    assert r.status_code == 400
    # the same requests addressed to this machine pass
    r = client.post("/api/external/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                    headers={"Authorization": f"Bearer {token}",
                             "Accept": "application/json, text/event-stream",
                             "Origin": "http://localhost"})
    assert r.status_code == 200 and r.get_json()["result"] == {}


@pytest.mark.parametrize("overrides", [
    {"host": "0.0.0.0"},                                       # reached from elsewhere
    {"public_url": "https://talk.example.org"},                # Origin checked against it
    {"trusted_proxies": 1},                                    # a proxy in front names it
])
def test_other_setups_answer_any_name(tmp_path, overrides):
    client = create_app(settings_for(tmp_path / "data", **overrides)).test_client()
    assert _get(client, "/healthz", "talk.example.org").status_code == 200


def _raw_get(port: int, host_line: bytes, target: bytes = b"/healthz") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(b"GET " + target + b" HTTP/1.1\r\n" + host_line
                     + b"Connection: close\r\n\r\n")
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    return reply


def test_a_served_process_refuses_other_names(server):
    assert _raw_get(server.port, f"Host: localhost:{server.port}\r\n".encode()).startswith(
        b"HTTP/1.1 200")
    assert _raw_get(server.port, b"Host: rebind.example\r\n").startswith(b"HTTP/1.1 400")
    # HTTP/1.0 without a Host header: no browser's request
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
        conn.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
        assert conn.recv(65536).startswith(b"HTTP/1.0 200")


def test_a_request_line_naming_a_host_is_judged_by_that_host(server):
    """A target in absolute form replaces the Host header (RFC 9112 3.2.2): the name the
    check judges is the one the links of the page are built from."""
    own = f"127.0.0.1:{server.port}".encode()
    refused = _raw_get(server.port, b"Host: " + own + b"\r\n",
                       target=b"http://rebind.example/developers")
    assert refused.startswith(b"HTTP/1.1 400"), refused[:200]
    page = _raw_get(server.port, b"Host: rebind.example\r\n",
                    target=b"http://" + own + b"/developers")
    assert page.startswith(b"HTTP/1.1 200"), page[:200]
    assert b"http://" + own + b"/api/external" in page and b"rebind.example" not in page


def test_a_forwarded_host_that_does_not_read_back_is_a_bad_request(tmp_path):
    """Behind a proxy, X-Forwarded-Host xn--strae-oqa.example (straße by UTS 46, which
    Python's IDNA 2003 codec will not decode) failed every page and API call with 503 and
    a traceback, where the request's own URL was built."""
    app = create_app(settings_for(tmp_path / "data", trusted_proxies=1))
    client = app.test_client()
    for path in ("/", "/communities", "/api/community?action=me"):
        r = client.get(path, headers={"X-Forwarded-Host": "xn--strae-oqa.example"})
        assert r.status_code == 400, (path, r.status_code)
    assert client.get("/", headers={"X-Forwarded-Host": "xn--bcher-kva.example"}).status_code == 200

