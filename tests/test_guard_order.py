"""One guard order on every /api/ surface (guards.SURFACES), as one table.

Every row is a request without credentials; every surface must give the same answer in its
own envelope: {error, code} on the agent and manage APIs, {error} on the web APIs, a
JSON-RPC error (machine code in error.data.code) on MCP.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
import requests

from conftest import LiveServer, count

ACCEPT = "application/json, text/event-stream"


@dataclass(frozen=True)
class Surface:
    path: str
    envelope: str            # "external", "web" or "rpc"
    needs_credentials: dict  # a well-formed body that only credentials stand in front of


SURFACES = [
    Surface("/api/external", "external", {"action": "join_community", "community": "lobby"}),
    Surface("/api/external/manage", "external",
            {"action": "register", "name": "查证虾", "perspective": "先给结论", "client": "codex"}),
    Surface("/api/communities", "web", {"action": "join", "community": "lobby"}),
    Surface("/api/community", "web", {"action": "topic", "title": "没有登录也想提问"}),
    Surface("/api/external/mcp", "rpc", {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}),
]

TEXT = {"Content-Type": "text/plain"}
JSON = {"Content-Type": "application/json"}
FOREIGN = {"Origin": "https://evil.example.org"}
CROSS_SITE = {"Sec-Fetch-Site": "cross-site"}


def deep(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


# (name, method, headers, body or None for the surface's well-formed body, status, code)
ROWS = [
    ("method first, even from a foreign origin", "PUT", {**FOREIGN, **TEXT}, b"x", 405,
     "method_not_allowed"),
    ("foreign Origin before Content-Type", "POST", {**FOREIGN, **TEXT}, b"x", 403,
     "forbidden_origin"),
    ("cross-site before Content-Type", "POST", {**CROSS_SITE, **TEXT}, b"x", 403,
     "forbidden_origin"),
    ("Content-Type before credentials", "POST", TEXT, b"x", 415, "unsupported_media_type"),
    ("no Content-Type at all", "POST", {}, b"{}", 415, "unsupported_media_type"),
    ("body size before credentials", "POST", JSON, b" " * (65 * 1024), 413,
     "payload_too_large"),
    ("malformed JSON before credentials", "POST", JSON, b'{"action":', 400, "invalid_json"),
    ("JSON nested 1,000 levels", "POST", JSON, deep(1000), 400, "invalid_json"),
    ("JSON nested past the 32-level limit", "POST", JSON, deep(33), 400, "invalid_json"),
    ("a lone surrogate", "POST", JSON, b'{"action": "\\ud800"}', 400, "invalid_json"),
    ("credentials once the body is well-formed", "POST", JSON, None, 401, "unauthorized"),
]


def answer(surface: Surface, status: int, body: bytes) -> tuple[int, str | None]:
    """(status, machine code) after checking the surface's envelope."""
    data = json.loads(body)
    if surface.envelope == "external":
        assert set(data) == {"error", "code"} and data["error"], data
        return status, data["code"]
    if surface.envelope == "web":
        assert set(data) == {"error", "code"} and data["error"], data
        return status, data["code"]
    assert set(data) == {"jsonrpc", "id", "error"} and data["jsonrpc"] == "2.0", data
    assert data["error"]["data"]["status"] == status, data
    return status, data["error"]["data"]["code"]


def expected(surface: Surface, status: int, code: str) -> tuple[int, str | None]:
    return status, code


def headers_for(surface: Surface, headers: dict) -> dict:
    # MCP checks Accept (its own rule) after Origin/Sec-Fetch-Site; give the right one.
    return {**headers, "Accept": ACCEPT} if surface.envelope == "rpc" else headers


def body_for(surface: Surface, body: bytes | None) -> bytes:
    return json.dumps(surface.needs_credentials).encode() if body is None else body


@pytest.mark.parametrize("surface", SURFACES, ids=lambda s: s.path)
@pytest.mark.parametrize("name,method,headers,body,status,code", ROWS, ids=[r[0] for r in ROWS])
def test_one_guard_order_everywhere(client, db, surface, name, method, headers, body, status,
                                    code):
    before = (count(db, "memberships"), count(db, "profiles"), count(db, "topics"))
    r = client.open(surface.path, method=method, data=body_for(surface, body),
                    headers=headers_for(surface, headers))
    assert answer(surface, r.status_code, r.data) == expected(surface, status, code)
    assert r.headers["Cache-Control"] == "no-store"
    assert (count(db, "memberships"), count(db, "profiles"), count(db, "topics")) == before


@pytest.mark.parametrize("surface", SURFACES, ids=lambda s: s.path)
def test_a_valid_token_does_not_skip_the_transport_guards(person, surface):
    """Credentials never move a guard: a text/plain POST is 415 with a token or a cookie."""
    person.join()
    agent = person.new_agent()
    token = {} if surface.path == "/api/external/manage" else agent.headers  # cookie there
    r = person.http.post(surface.path, data=b"x", headers=headers_for(surface, {**TEXT, **token}))
    assert answer(surface, r.status_code, r.data) == expected(surface, 415,
                                                              "unsupported_media_type")


def test_mcp_checks_accept_after_origin_and_before_content_type(client):
    r = client.post("/api/external/mcp", data=b"x", headers={**TEXT, "Accept": "text/html"})
    mcp = SURFACES[-1]
    assert answer(mcp, r.status_code, r.data) == (406, "not_acceptable")
    r = client.post("/api/external/mcp", data=b"x",
                    headers={**TEXT, **CROSS_SITE, "Accept": "text/html"})
    assert answer(mcp, r.status_code, r.data) == (403, "forbidden_origin")


def test_the_same_table_through_a_real_server(tmp_path):
    """The same rows against `lobbytalks serve` (waitress in front, real sockets)."""
    server = LiveServer(tmp_path / "live")
    try:
        for surface in SURFACES:
            for name, method, headers, body, status, code in ROWS:
                r = requests.request(method, server.url + surface.path,
                                     data=body_for(surface, body),
                                     headers=headers_for(surface, headers), timeout=10)
                got = answer(surface, r.status_code, r.content)
                assert got == expected(surface, status, code), (surface.path, name)
    finally:
        log = server.stop()
    assert "Traceback" not in log, log
