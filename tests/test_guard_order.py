"""One guard order on every /api/ surface (guards.SURFACES), as one table; then the one
declared order of every request step (lobbytalks.wiring) and the headers it gives each surface.

Every row is a request without credentials; every surface must give the same answer in its
own envelope: {error, code} on the agent and manage APIs, {error} on the web APIs, a
JSON-RPC error (machine code in error.data.code) on MCP.
"""
from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass

import pytest
import requests

from lobbytalks import create_app

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
    # a compressed body is not read as JSON that fails to parse (RFC 9110 §15.5.16)
    ("a Content-Encoding", "POST", {**JSON, "Content-Encoding": "gzip"},
     gzip.compress(b'{"action": "x"}'), 415, "unsupported_media_type"),
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


# --- one declared order for every request step (lobbytalks.wiring) ----------------------

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "frame-ancestors 'none'; form-action 'self'")
EVERYWHERE = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
              "Referrer-Policy": "same-origin", "Cross-Origin-Opener-Policy": "same-origin",
              "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()"}
API_JSON = {**EVERYWHERE, "Content-Type": "application/json", "Cache-Control": "no-store"}
PAGE = {**EVERYWHERE, "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store",
        "Content-Security-Policy": CSP, "Vary": "Cookie, Accept-Language"}
# Headers that vary per response or per file: left out of the comparison.
VARYING = {"Content-Length", "Date", "Last-Modified", "ETag", "Expires"}
LANG_COOKIE = "lang=en; Max-Age=31536000; Path=/; SameSite=Lax"
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}

# (method, path, request options, status, every header the response carries)
HEADER_ROWS = [
    ("GET", "/healthz", {}, 200, API_JSON),
    ("GET", "/api/external?action=list_topics", {}, 401,
     {**API_JSON, "WWW-Authenticate": 'Bearer realm="lobbytalks"'}),
    ("GET", "/api/external/manage", {}, 401, API_JSON),  # the cookie's surface: no challenge
    ("POST", "/api/external/mcp", {"json": PING, "headers": {"Accept": ACCEPT}}, 401,
     {**API_JSON, "WWW-Authenticate": 'Bearer realm="lobbytalks"'}),
    # a token sent and refused is named as such (RFC 6750 3.1)
    ("GET", "/api/external?action=list_topics", {"headers": {"Authorization": "Bearer lbt_x"}},
     401, {**API_JSON, "WWW-Authenticate": 'Bearer realm="lobbytalks", error="invalid_token"'}),
    ("PUT", "/api/communities", {}, 405, {**API_JSON, "Allow": "GET, POST"}),
    ("GET", "/api/community?action=me&lang=en", {}, 200, API_JSON),  # no cookie on /api/
    ("GET", "/", {}, 200, PAGE),
    ("GET", "/?lang=en", {}, 200, {**PAGE, "Set-Cookie": LANG_COOKIE}),
    ("GET", "/q/nope?lang=en", {}, 404, {**PAGE, "Set-Cookie": LANG_COOKIE}),
    ("GET", "/no-such-page", {}, 404, PAGE),
    ("GET", "/favicon.ico", {}, 301, {**EVERYWHERE, "Content-Type": "text/html; charset=utf-8",
                                      "Content-Security-Policy": CSP,
                                      "Location": "/static/favicon.svg"}),
    ("GET", "/static/app.js", {}, 200, {**EVERYWHERE, "Accept-Ranges": "bytes",
                                        "Cache-Control": "no-cache",
                                        "Content-Disposition": "inline; filename=app.js",
                                        "Content-Type": "text/javascript; charset=utf-8"}),
    ("GET", "/docs/external-agents-v1.md", {}, 200,
     {**EVERYWHERE, "Cache-Control": "no-store", "Vary": "Host",
      "Content-Type": "text/markdown; charset=utf-8"}),
]


def comparable(headers) -> dict[str, str]:
    shown = {k: v for k, v in headers.items() if k not in VARYING}
    if "Set-Cookie" in shown:  # its Expires is a date
        shown["Set-Cookie"] = "; ".join(part for part in shown["Set-Cookie"].split("; ")
                                        if not part.startswith("Expires="))
    return shown


@pytest.mark.parametrize("method,path,options,status,headers", HEADER_ROWS,
                         ids=[f"{r[0]} {r[1]}" for r in HEADER_ROWS])
def test_every_surface_answers_with_exactly_its_headers(client, method, path, options, status,
                                                         headers):
    r = client.open(path, method=method, **options)
    assert r.status_code == status
    assert comparable(r.headers) == headers


def test_the_request_steps_run_in_one_declared_order(settings):
    from lobbytalks import wiring

    app = create_app(settings.with_overrides(access_log=True))
    names = lambda steps: [f"{s.__module__}.{s.__name__}" for s in steps]  # noqa: E731
    assert names(wiring.before_steps(app.config["LOBBYTALKS"].settings)) == [
        "lobbytalks.accesslog.start_clock", "lobbytalks.hosts.check_readable_host",
        "lobbytalks.hosts.check_loopback_host", "lobbytalks.guards.guard_api_request",
        "lobbytalks.wiring._ignore_unusable_range"]
    assert names(wiring.after_steps(app.config["LOBBYTALKS"].settings)) == [
        "lobbytalks.blueprints.web_base.remember_language", "lobbytalks.guards.finish_response",
        "lobbytalks.accesslog.log_request"]
    # One hook per phase and nothing else registers one behind the list's back.
    assert {k: len(v) for k, v in app.before_request_funcs.items()} == {None: 1}
    assert {k: len(v) for k, v in app.after_request_funcs.items()} == {None: 1}
    assert not app.teardown_request_funcs and not app.url_value_preprocessors
    off = settings.with_overrides(access_log=False)
    assert names(wiring.before_steps(off)) == ["lobbytalks.hosts.check_readable_host",
                                               "lobbytalks.hosts.check_loopback_host",
                                               "lobbytalks.guards.guard_api_request",
                                               "lobbytalks.wiring._ignore_unusable_range"]
    reachable = off.with_overrides(host="0.0.0.0")  # no names to check: see test_hosts
    assert names(wiring.before_steps(reachable)) == ["lobbytalks.hosts.check_readable_host",
                                                     "lobbytalks.guards.guard_api_request",
                                                     "lobbytalks.wiring._ignore_unusable_range"]
    assert names(wiring.after_steps(off))[-1] == "lobbytalks.guards.finish_response"


def test_a_refused_request_is_timed_logged_and_gets_its_headers(settings, capsys, db):
    """The clock starts before the guards and the line is written after the headers: a
    request the guards refuse has a line with its real status, and the full headers."""
    app = create_app(settings.with_overrides(access_log=True))
    capsys.readouterr()
    before = count(db, "users")
    r = app.test_client().post("/api/community?lang=en", data=b"x", headers=TEXT)
    assert r.status_code == 415 and comparable(r.headers) == API_JSON
    line, = [l for l in capsys.readouterr().err.splitlines() if l.strip()]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ 127\.0\.0\.1 POST "
                        r"/api/community\?lang=\* 415 \d+\.\dms user=- agent=-", line), line
    assert count(db, "users") == before


def test_every_surface_module_is_mounted():
    """A new module under blueprints/ that declares a surface, pages or actions must be
    listed in wiring: nothing is picked up by being imported."""
    import importlib
    import pkgutil

    from lobbytalks import blueprints, wiring

    listed = {m.__name__ for m in (*wiring.BLUEPRINTS, *wiring.COMMUNITY_ACTIONS,
                                   *wiring.WEB_PAGES)}
    for info in pkgutil.iter_modules(blueprints.__path__):
        module = importlib.import_module(f"lobbytalks.blueprints.{info.name}")
        declares = [a for a in ("bp", "actions", "pages") if hasattr(module, a)]
        if declares:
            assert module.__name__ in listed, (module.__name__, declares)
    assert wiring.web_base.__name__ not in listed  # helpers only


def test_an_action_two_modules_answer_stops_start_up():
    from lobbytalks.blueprints.common import ActionTable, merged_actions

    first, second = ActionTable(), ActionTable()
    first.post("share")(lambda body: None)
    second.post("share")(lambda body: None)
    second.get("share")(lambda: None)  # the same name on another method is another action
    assert set(merged_actions([first], "POST")) == {"share"}
    assert set(merged_actions([first, second], "GET")) == {"share"}
    with pytest.raises(RuntimeError, match="share"):
        merged_actions([first, second], "POST")


def test_access_log_lines_and_headers_through_a_real_server(tmp_path):
    """`lobbytalks serve` with the log on: exact lines (time and ms aside), exact headers."""
    server = LiveServer(tmp_path / "live", env={"LOBBYTALKS_ACCESS_LOG": "true"})
    try:
        health = requests.get(server.url + "/healthz", timeout=10)
        page = requests.get(server.url + "/?lang=en", timeout=10)
        refused = requests.post(server.url + "/api/external/mcp?token=s3cret", data=b"x",
                                headers={**TEXT, "Accept": ACCEPT}, timeout=10)
    finally:
        log = server.stop()
    assert comparable(health.headers) == {**API_JSON, "Server": "lobbytalks"}
    assert comparable(page.headers) == {**PAGE, "Server": "lobbytalks", "Set-Cookie": LANG_COOKIE}
    assert refused.status_code == 415 and comparable(refused.headers) == {**API_JSON,
                                                                           "Server": "lobbytalks"}
    stamp, ms = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r"\d+\.\dms"
    expected = [rf"{stamp} 127\.0\.0\.1 GET /healthz 200 {ms} user=- agent=-",
                rf"{stamp} 127\.0\.0\.1 GET /\?lang=\* 200 {ms} user=- agent=-",
                rf"{stamp} 127\.0\.0\.1 POST /api/external/mcp\?token=\* 415 {ms} user=- agent=-"]
    lines = [l for l in log.splitlines() if " 127.0.0.1 " in l]
    assert len(lines) >= 4, log  # the start-up health probe, then ours
    for pattern, line in zip(expected, lines[-3:]):
        assert re.fullmatch(pattern, line), (pattern, line)
    assert "s3cret" not in log and "Traceback" not in log
