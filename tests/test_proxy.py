"""Behind a reverse proxy: X-Forwarded-* trusted only when configured; headers everywhere."""
from __future__ import annotations

import pytest

from lobbytalks import create_app
from lobbytalks.guards import SECURITY_HEADERS

from conftest import Person


def register(app, name: str, forwarded_for: str | None = None, proto: str | None = None):
    headers = {}
    if forwarded_for:
        headers["X-Forwarded-For"] = forwarded_for
    if proto:
        headers["X-Forwarded-Proto"] = proto
    return app.test_client().post(
        "/api/community", headers=headers,
        json={"action": "register", "username": name, "password": "correct horse 1"})


@pytest.fixture
def behind_proxy(settings):
    return create_app(settings.with_overrides(trusted_proxies=1, rate_register="2/hour"))


def test_forwarded_for_is_the_client_address_for_rate_limits(behind_proxy):
    assert register(behind_proxy, "user_a1", "203.0.113.7").status_code == 200
    assert register(behind_proxy, "user_a2", "203.0.113.7").status_code == 200
    assert register(behind_proxy, "user_a3", "203.0.113.7").status_code == 429
    # another client behind the same proxy has its own budget
    assert register(behind_proxy, "user_b1", "198.51.100.9").status_code == 200
    # the proxy appends the address it saw; only the last (nearest) hop is trusted
    assert register(behind_proxy, "user_b2", "203.0.113.7, 198.51.100.9").status_code == 200
    assert register(behind_proxy, "user_b3", "1.1.1.1, 198.51.100.9").status_code == 429
    names = {r[0] for r in behind_proxy.config["LOBBYTALKS"].db.all("SELECT username FROM users")}
    assert names == {"user_a1", "user_a2", "user_b1", "user_b2"}


def test_without_trusted_proxies_the_headers_are_ignored(settings):
    app = create_app(settings.with_overrides(rate_register="2/hour"))
    assert register(app, "user_a1", "203.0.113.1").status_code == 200
    assert register(app, "user_a2", "203.0.113.2").status_code == 200
    assert register(app, "user_a3", "203.0.113.3").status_code == 429  # all one client: 127.0.0.1
    r = register(app, "user_a4", proto="https")
    assert r.status_code == 429


def test_forwarded_proto_https_makes_the_session_cookie_secure(behind_proxy, settings):
    r = register(behind_proxy, "tls_user", "203.0.113.7", proto="https")
    assert r.status_code == 200
    cookie = r.headers["Set-Cookie"]
    assert "; Secure" in cookie and "HttpOnly" in cookie

    plain = create_app(settings)
    r = register(plain, "plain_user", proto="https")
    assert r.status_code == 200 and "Secure" not in r.headers["Set-Cookie"]


def test_forwarded_host_and_proto_decide_the_origin_rule(behind_proxy, settings):
    person = Person(behind_proxy).register()
    proxied = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https",
               "X-Forwarded-Host": "talk.example.org"}
    ok = person.http.post("/api/community", json={"action": "logout"},
                          headers={**proxied, "Origin": "https://talk.example.org"})
    assert ok.status_code == 200
    bad = person.http.post("/api/community", json={"action": "logout"},
                           headers={**proxied, "Origin": "http://talk.example.org"})
    assert bad.status_code == 403


@pytest.mark.parametrize("method,path", [
    ("GET", "/healthz"),
    ("GET", "/api/community?action=me"),
    ("GET", "/api/external?action=list_communities"),  # 401 without a token
    ("POST", "/api/community"),  # 415 without JSON
    ("GET", "/no/such/page"),
])
def test_security_headers_on_every_response(client, method, path):
    r = client.open(path, method=method)
    for name, value in SECURITY_HEADERS.items():
        assert r.headers.get(name) == value, (path, r.status_code, name)
    if r.mimetype == "application/json":
        assert r.headers["Cache-Control"] == "no-store"
