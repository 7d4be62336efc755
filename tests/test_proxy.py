"""Behind a reverse proxy: X-Forwarded-* trusted only when configured; headers everywhere."""
from __future__ import annotations

import pytest
import requests

from lobbytalks import create_app
from lobbytalks.guards import SECURITY_HEADERS
from lobbytalks.settings import Settings, SettingsError

from conftest import LiveServer, Person, live_usernames


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


def register_from(app, peer: str, name: str, **headers: str):
    """A registration arriving over a connection from ``peer``."""
    return app.test_client().post(
        "/api/community", environ_base={"REMOTE_ADDR": peer},
        headers={key.replace("_", "-"): value for key, value in headers.items()},
        json={"action": "register", "username": name, "password": "correct horse 1"})


def test_forwarded_headers_count_only_from_the_proxy_networks(behind_proxy):
    """A client reaching the port directly from a public address cannot borrow addresses
    (a fresh rate-limit budget each time) or claim https: its own address counts."""
    stranger = "203.0.113.50"
    r = register_from(behind_proxy, stranger, "direct_1", X_Forwarded_For="198.51.100.1",
                      X_Forwarded_Proto="https")
    assert r.status_code == 200 and "Secure" not in r.headers["Set-Cookie"]
    assert register_from(behind_proxy, stranger, "direct_2",
                         X_Forwarded_For="198.51.100.2").status_code == 200
    assert register_from(behind_proxy, stranger, "direct_3",
                         X_Forwarded_For="198.51.100.3").status_code == 429
    # the proxy on this machine (an IPv4-mapped IPv6 loopback too) or in a container
    # network still speaks for its clients
    for peer, client in (("::ffff:127.0.0.1", "192.0.2.1"), ("172.18.0.5", "192.0.2.2"),
                         ("fd00::7", "192.0.2.3")):
        r = register_from(behind_proxy, peer, f"proxied_{client.rsplit('.', 1)[1]}",
                          X_Forwarded_For=client, X_Forwarded_Proto="https")
        assert r.status_code == 200 and "; Secure" in r.headers["Set-Cookie"], peer


def test_the_proxy_networks_can_name_a_public_proxy(settings):
    app = create_app(settings.with_overrides(trusted_proxies=1, rate_register="1/hour",
                                             trusted_proxy_networks="203.0.113.0/24, 2001:db8::1"))
    for n, peer in enumerate(("203.0.113.50", "2001:db8::1", "203.0.113.9")):
        r = register_from(app, peer, f"via_cdn_{n}", X_Forwarded_For=f"198.51.100.{n}")
        assert r.status_code == 200, peer  # each its own client: a budget of one each
    # the proxy on this machine is no longer among them: all its requests are its own
    assert register_from(app, "127.0.0.1", "local_1",
                         X_Forwarded_For="192.0.2.1").status_code == 200
    assert register_from(app, "127.0.0.1", "local_2",
                         X_Forwarded_For="192.0.2.2").status_code == 429


@pytest.mark.parametrize("value", ["", " , ", "10.0.0.0/33", "localhost", "10.0.0.0/8;"])
def test_proxy_networks_that_are_no_networks_are_refused(value):
    with pytest.raises(SettingsError, match="LOBBYTALKS_TRUSTED_PROXY_NETWORKS"):
        Settings.load(env={"LOBBYTALKS_TRUSTED_PROXY_NETWORKS": value or ","})


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


# --- through a real `lobbytalks serve` process ------------------------------------------

def live_register(server: LiveServer, name: str, headers: dict[str, str]) -> requests.Response:
    return requests.post(server.url + "/api/community", headers=headers, timeout=10, json={
        "action": "register", "username": name, "password": "correct horse 1"})


def test_serve_hands_the_trusted_proxy_headers_to_the_app(tmp_path):
    server = LiveServer(tmp_path / "live", env={
        "LOBBYTALKS_TRUSTED_PROXIES": "1", "LOBBYTALKS_RATE_REGISTER": "2/hour",
        "LOBBYTALKS_ACCESS_LOG": "true"})
    try:
        first = {"X-Forwarded-For": "203.0.113.7"}
        assert live_register(server, "live_a1", first).status_code == 200
        assert live_register(server, "live_a2", first).status_code == 200
        assert live_register(server, "live_a3", first).status_code == 429
        # another client of the same proxy keeps its own budget: the limit is per address
        second = {"X-Forwarded-For": "198.51.100.9"}
        assert live_register(server, "live_b1", second).status_code == 200

        tls = {"X-Forwarded-For": "192.0.2.44", "X-Forwarded-Proto": "https",
               "X-Forwarded-Host": "talk.example.org"}
        r = live_register(server, "live_tls", {**tls, "Origin": "https://talk.example.org"})
        assert r.status_code == 200, r.text
        assert "; Secure" in r.headers["Set-Cookie"]
        # the Origin is compared with the forwarded scheme and host, not http://127.0.0.1
        r = live_register(server, "live_plain", {**tls, "Origin": "http://talk.example.org"})
        assert r.status_code == 403 and r.json()["error"]
    finally:
        out = server.stop()
    assert live_usernames(server) == {"live_a1", "live_a2", "live_b1", "live_tls"}
    assert " 203.0.113.7 POST /api/community 200 " in out
    assert " 198.51.100.9 POST /api/community 200 " in out


def test_serve_without_trusted_proxies_ignores_forged_headers(tmp_path):
    server = LiveServer(tmp_path / "live", env={
        "LOBBYTALKS_RATE_REGISTER": "2/hour", "LOBBYTALKS_ACCESS_LOG": "true"})
    try:
        assert live_register(server, "live_c1", {"X-Forwarded-For": "203.0.113.1"}).ok
        r = live_register(server, "live_c2", {
            "X-Forwarded-For": "203.0.113.2", "X-Forwarded-Proto": "https",
            "Forwarded": "for=203.0.113.2;proto=https"})
        assert r.status_code == 200 and "Secure" not in r.headers["Set-Cookie"]
        # every request is the one client 127.0.0.1, whatever the headers claim
        r = live_register(server, "live_c3", {"X-Forwarded-For": "203.0.113.3"})
        assert r.status_code == 429
        forged_origin = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "talk.example.org",
                         "Origin": "https://talk.example.org"}
        assert live_register(server, "live_c4", forged_origin).status_code == 403
    finally:
        out = server.stop()
    assert live_usernames(server) == {"live_c1", "live_c2"}
    assert "203.0.113" not in out and " 127.0.0.1 POST /api/community 429 " in out
