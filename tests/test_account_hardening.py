"""Accounts under attack (issue 10, items 4-8): the login redirect, targeted lockout, admin
squatting, bounded sessions, password changes and logging out everywhere, Argon2id."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

import pgtest

from conftest import FAST_ARGON2_KIB, LiveServer, Person, count, open_database, run_cli
from helpers import assert_web_error
from lobbytalks.db import Row
from test_passwords import legacy_scrypt_hash
from lobbytalks import create_app
from lobbytalks.services.accounts import AdminNameTaken

PASSWORD = "correct horse 1"
WRONG = "not the password"


def login(app, username: str, password: str, address: str | None = None, http=None):
    """A login, from ``address`` when the app trusts one proxy (X-Forwarded-For)."""
    headers = {"X-Forwarded-For": address} if address else {}
    return (http or app.test_client()).post(
        "/api/community", headers=headers,
        json={"action": "login", "username": username, "password": password})


def user_row(db, username: str) -> Row:
    return db.one("SELECT id, password_hash, is_admin FROM users WHERE username = :username",
                  {"username": username})


def sessions_of(db, username: str) -> int:
    return count(db, "sessions", "user_id = (SELECT id FROM users WHERE username = :username)",
                 {"username": username})


# --- 4. the redirect after logging in ------------------------------------------------

# Each of these is a path to the naive eye but leaves the site once a browser has read it
# (tabs and newlines dropped, ends trimmed, "\" read as "/"), or is no path at all.
OFF_SITE = [
    "/%09/evil.example.com", "/%0A/evil.example.com", "/%0D/evil.example.com",
    "/%0D%0A/evil.example.com", "%09//evil.example.com", "%20//evil.example.com",
    "%01//evil.example.com", "%1F/%09/evil.example.com", "/%5Cevil.example.com",
    "%5C%5Cevil.example.com", "/%09%5Cevil.example.com", "//evil.example.com",
    "///evil.example.com", "https://evil.example.com/", "https:evil.example.com",
    "javascript:alert(1)", "java%09script:alert(1)", "evil.example.com", "",
    "/%C2%85/evil.example.com",
    # dot segments a browser removes before it reads the path: "/.//x" is "//x"
    "/.//evil.example.com", "/..//evil.example.com", "/x/..//evil.example.com",
    "/%252e//evil.example.com", "/x/%252E%252e//evil.example.com",
]
# (the value of ``next``, where the login goes)
SAME_SITE = [("/q/t_abc?x=1", "/q/t_abc?x=1"), ("/c/lobby", "/c/lobby"),
             ("/tasks?topic=t_1&page=2", "/tasks?topic=t_1&page=2"),
             ("/%2F%2Fstill-a-path", "/%2F%2Fstill-a-path"), ("/a\tb", "/ab"),
             ("/c/lobby?q=中文", "/c/lobby?q=%E4%B8%AD%E6%96%87")]


@pytest.mark.parametrize("raw_next", OFF_SITE)
def test_login_redirect_never_leaves_the_site(person, raw_next):
    r = person.http.get(f"/login?next={raw_next}")
    assert r.status_code == 302 and r.headers["Location"] == "/"


@pytest.mark.parametrize("raw_next", OFF_SITE)
def test_login_page_sends_the_script_home_for_an_off_site_next(client, raw_next):
    page = client.get(f"/login?next={raw_next}").get_data(as_text=True)
    assert 'data-then="go:/"' in page
    assert 'href="/register?next=/"' in page


@pytest.mark.parametrize("next_value,kept", SAME_SITE)
def test_login_redirect_keeps_local_paths(person, client, next_value, kept):
    r = person.http.get("/login", query_string={"next": next_value})
    assert r.status_code == 302 and r.headers["Location"] == kept
    page = client.get("/login", query_string={"next": next_value}).get_data(as_text=True)
    assert f'data-then="go:{next_value.replace("&", "&amp;").replace(chr(9), "")}"' in page


# --- 5. a targeted lockout -------------------------------------------------------------

@pytest.fixture
def proxied(settings):
    """Behind one trusted proxy, so X-Forwarded-For is the client's address."""
    return create_app(settings.with_overrides(trusted_proxies=1))


def test_a_guesser_elsewhere_does_not_lock_the_owner_out(proxied):
    owner = Person(proxied, username="owner1").register()
    for _ in range(10):
        assert login(proxied, "owner1", WRONG, "203.0.113.1").status_code == 401
    blocked = login(proxied, "owner1", PASSWORD, "203.0.113.1")
    assert_web_error(blocked, 429)  # the guesser's own address is done, even when right
    assert int(blocked.headers["Retry-After"]) > 0
    assert login(proxied, "owner1", PASSWORD, "198.51.100.2", http=owner.http).status_code == 200
    assert owner.web_get(action="me").get_json()["user"]["username"] == "owner1"
    db = proxied.config["LOBBYTALKS"].db
    # the owner's login, which replaced the one registering made in this browser
    assert db.one("SELECT COUNT(*) FROM sessions")[0] == 1


def test_the_per_username_ceiling_bounds_a_distributed_guesser(settings):
    app = create_app(settings.with_overrides(trusted_proxies=1, rate_login_pair="10/hour",
                                             rate_login_user="25/hour"))
    Person(app, username="owner2").register()
    statuses = [login(app, "owner2", WRONG, f"203.0.113.{i // 10}").status_code
                for i in range(40)]
    assert statuses.count(401) == 25  # guesses actually checked: the ceiling, no more
    assert set(statuses[25:]) == {429}
    assert_web_error(login(app, "owner2", PASSWORD, "198.51.100.7"), 429)
    assert login(app, "someone_else", WRONG, "198.51.100.7").status_code == 401


def test_a_browser_the_owner_logged_in_from_keeps_its_way_in(settings):
    """Strangers filling the per-username window do not lock out a browser that has
    logged in to the account before; it is held to a window of its own."""
    app = create_app(settings.with_overrides(trusted_proxies=1, rate_login_pair="10/hour",
                                             rate_login_user="25/hour"))
    owner = Person(app, username="owner4").register()  # registering made this browser known
    mallory = Person(app, username="mallory4").register()
    statuses = [login(app, "owner4", WRONG, f"203.0.113.{i // 10}").status_code
                for i in range(30)]
    assert statuses.count(401) == 25 and set(statuses[25:]) == {429}
    assert_web_error(login(app, "owner4", PASSWORD, "198.51.100.7"), 429)  # a new browser
    # a device cookie earned for another name, or altered, is no way in either
    assert_web_error(login(app, "owner4", PASSWORD, "198.51.100.7", http=mallory.http), 429)
    forged = app.test_client()
    nonce, mac = owner.http.get_cookie("xia_device", path="/api/community").value.split(".")
    for mac_sent in (mac[::-1], "é" * 32, "€"):  # not ASCII: refused, never a 5xx
        forged.set_cookie("xia_device", f"{nonce}.{mac_sent}", path="/api/community")
        assert_web_error(login(app, "owner4", PASSWORD, "198.51.100.7", http=forged), 429)
    assert login(app, "owner4", PASSWORD, "198.51.100.7", http=owner.http).status_code == 200
    # the known browser's own window: its wrong guesses end at the per-address figure
    statuses = [login(app, "owner4", WRONG, f"198.51.100.{i}", http=owner.http).status_code
                for i in range(12)]
    assert statuses == [401] * 10 + [429] * 2


def test_a_guesser_at_the_owners_own_address_does_not_lock_the_known_browser_out(settings):
    """Behind one NAT, strangers guessing any names filled the address's window and kept
    out the owner's own browser, known or not."""
    app = create_app(settings.with_overrides(trusted_proxies=1,
                                             rate_login_client="30/15minute"))
    owner = Person(app, username="owner7").register()
    shared = "203.0.113.77"
    statuses = [login(app, f"nobody{i}", WRONG, shared).status_code for i in range(33)]
    assert statuses.count(401) == 30 and set(statuses[30:]) == {429}
    assert_web_error(login(app, "owner7", PASSWORD, shared), 429)  # a new browser there
    assert login(app, "owner7", PASSWORD, shared, http=owner.http).status_code == 200


def test_a_new_password_forgets_the_browsers_that_knew_the_old_one(settings):
    """Someone who once knew the password keeps no window of their own after it changes:
    the device cookies they collected then are no way past the per-username ceiling."""
    app = create_app(settings.with_overrides(trusted_proxies=1, rate_login_pair="10/hour",
                                             rate_login_user="25/hour"))
    owner = Person(app, username="owner6").register()
    thief = app.test_client()
    assert login(app, "owner6", PASSWORD, "203.0.113.9", http=thief).status_code == 200
    new = "a much better one 2"
    changed = owner.web_post("change_password", currentPassword=PASSWORD, newPassword=new)
    assert changed.status_code == 200
    statuses = [login(app, "owner6", WRONG, f"203.0.113.{i // 10}").status_code
                for i in range(30)]
    assert statuses.count(401) == 25 and set(statuses[25:]) == {429}
    assert_web_error(login(app, "owner6", new, "198.51.100.8", http=thief), 429)
    # the browser that changed it was given a cookie for the new password
    assert login(app, "owner6", new, "198.51.100.8", http=owner.http).status_code == 200


def test_the_device_cookie_goes_only_to_the_login_api_and_never_to_scripts(app):
    person = Person(app, username="owner5")
    r = person.http.post("/api/community", json={"action": "register", "username": "owner5",
                                                 "password": PASSWORD})
    assert r.status_code == 200
    [device] = [h for h in r.headers.getlist("Set-Cookie") if h.startswith("xia_device=")]
    assert "Path=/api/community" in device and "HttpOnly" in device
    assert "SameSite=Lax" in device and f"Max-Age={365 * 86400}" in device


def test_an_ipv6_client_is_counted_by_its_64(settings):
    """A host is handed a whole /64: each of its addresses is not a fresh budget."""
    app = create_app(settings.with_overrides(trusted_proxies=1, rate_login_pair="10/hour"))
    Person(app, username="owner6").register()
    statuses = [login(app, "owner6", WRONG, f"2001:db8:1:2::{i:x}").status_code
                for i in range(1, 13)]
    assert statuses == [401] * 10 + [429] * 2
    assert_web_error(login(app, "owner6", PASSWORD, "2001:db8:1:2:ffff::1"), 429)
    assert login(app, "owner6", PASSWORD, "2001:db8:1:3::1").status_code == 200


def test_one_address_trying_many_usernames_is_bounded(settings):
    app = create_app(settings.with_overrides(trusted_proxies=1, rate_login_client="5/hour"))
    statuses = [login(app, f"victim{i}", WRONG, "203.0.113.9").status_code for i in range(8)]
    assert statuses == [401] * 5 + [429] * 3
    assert login(app, "victim0", WRONG, "198.51.100.9").status_code == 401


def test_failed_logins_count_per_pair_without_a_proxy_too(app, db):
    Person(app, username="owner3").register()
    Person(app, username="bystander").register()
    for _ in range(10):
        assert login(app, "owner3", WRONG).status_code == 401
    assert_web_error(login(app, "owner3", PASSWORD), 429)
    assert login(app, "bystander", PASSWORD).status_code == 200  # same address, other name
    assert sessions_of(db, "owner3") == 1 and sessions_of(db, "bystander") == 2


def test_guesses_at_once_cannot_share_the_last_free_slot(app, db, monkeypatch):
    """With one failure left in the window, seven guesses sent together: one is checked,
    six are refused before any hashing, and the right password among them is not let in."""
    from lobbytalks.services import accounts

    Person(app, username="owner4").register()
    for _ in range(9):
        assert login(app, "owner4", WRONG).status_code == 401
    checked = []
    verify = accounts.verify_password_timing_safe

    def slow_verify(password, stored, cost):  # a real hash takes tens of milliseconds
        checked.append(password)
        time.sleep(0.2)
        return verify(password, stored, cost)

    monkeypatch.setattr(accounts, "verify_password_timing_safe", slow_verify)
    guesses = [WRONG + str(n) for n in range(6)] + [PASSWORD]
    with ThreadPoolExecutor(len(guesses)) as pool:
        statuses = list(pool.map(lambda guess: login(app, "owner4", guess).status_code,
                                 guesses))
    assert len(checked) == 1 and sorted(statuses) == [401] + [429] * 6, (checked, statuses)
    assert sessions_of(db, "owner4") == 1  # registration's own


def test_a_login_checked_before_a_password_change_gets_no_session(app, db, monkeypatch):
    """The login's password was right when checked; the owner changed it before the
    session was written. A session then would outlive the change that was meant to end
    every session under the old password (a thief logging in in a loop kept one)."""
    owner = Person(app, username="owner5").register()
    rt = app.config["LOBBYTALKS"]
    checked, go_on = threading.Event(), threading.Event()
    hit = rt.gate.hit

    def pause_after_the_check(limit, scope, key):  # between the check and the session
        if scope == "login-ok" and not checked.is_set():
            checked.set()
            go_on.wait(10)
        return hit(limit, scope, key)

    monkeypatch.setattr(rt.gate, "hit", pause_after_the_check)
    with ThreadPoolExecutor(1) as pool:
        thief = pool.submit(login, app, "owner5", PASSWORD)
        assert checked.wait(10)
        changed = owner.web_post("change_password", currentPassword=PASSWORD,
                                 newPassword="a brand new one 2")
        assert changed.status_code == 200, changed.get_json()
        go_on.set()
        assert_web_error(thief.result(10), 401)
    assert sessions_of(db, "owner5") == 1  # the owner's own, after the change


# --- 6. the configured admin ----------------------------------------------------------

def test_a_squatted_admin_name_refuses_to_start_and_changes_nothing(settings, db):
    squatter = Person(create_app(settings), username="root_admin").register()
    before = user_row(db, "root_admin")
    with pytest.raises(AdminNameTaken, match="lobbytalks admin grant root_admin"):
        create_app(settings, admin_username="ROOT_ADMIN", admin_password="admin password 1")
    after = user_row(db, "root_admin")
    assert after["is_admin"] == 0 and after["password_hash"] == before["password_hash"]
    assert squatter.web_get(action="me").get_json()["user"]["isAdmin"] is False


def test_a_granted_admin_gets_the_configured_password_and_loses_its_sessions(settings, db):
    early = Person(create_app(settings), username="root_admin").register()
    assert run_cli(["admin", "grant", "root_admin"], settings.data_dir) == 0
    app = create_app(settings, admin_username="root_admin", admin_password="admin password 1")
    assert sessions_of(db, "root_admin") == 0  # the password was reset: every session ended
    assert early.web_get(action="me").get_json()["user"] is None
    assert login(app, "root_admin", PASSWORD).status_code == 401
    admin = Person(app, username="root_admin", password="admin password 1")
    assert login(app, "root_admin", "admin password 1", http=admin.http).status_code == 200
    # Starting again with the same password keeps the admin's sessions.
    create_app(settings, admin_username="root_admin", admin_password="admin password 1")
    assert sessions_of(db, "root_admin") == 1
    assert admin.web_get(action="me").get_json()["user"]["isAdmin"] is True


def test_two_servers_making_the_configured_admin_at_once_make_one(settings):
    """Two servers starting together on a new database: the second one's insert waited for
    the first's, then failed on the unique name, and that server exited."""
    from lobbytalks.db import Q
    from lobbytalks.passwords import hash_password
    from lobbytalks.services import accounts

    app = create_app(settings)  # migrated, no admin yet
    ours = app.config["LOBBYTALKS"].db
    with open_database(settings.data_dir) as theirs, ThreadPoolExecutor(1) as pool:
        cost = app.config["LOBBYTALKS"].settings.password_cost
        with theirs.transaction() as conn:  # the other server, between its insert and commit
            conn.execute(Q.insert_user, {
                "username": "root_admin", "is_admin": 1, "now": 1,
                "password_hash": hash_password("admin password 1", cost)})
            making = pool.submit(accounts.ensure_admin, ours, "root_admin", "admin password 1",
                                 now=2, cost=cost)
            time.sleep(0.5)  # ours reads no admin, and waits at its own insert (or begin)
        making.result(timeout=30)  # no error once theirs commits
        assert theirs.value("SELECT COUNT(*) FROM users WHERE username = 'root_admin'") == 1
    assert login(app, "root_admin", "admin password 1").status_code == 200


def test_serve_refuses_a_squatted_admin_name(tmp_path):
    data_dir = tmp_path / "live"
    server = LiveServer(data_dir)
    try:
        requests.post(server.url + "/api/community", json={
            "action": "register", "username": "boss", "password": PASSWORD}).raise_for_status()
    finally:
        server.stop()
    env = {**pgtest.env_for(data_dir), "LOBBYTALKS_ADMIN_USERNAME": "boss", "LOBBYTALKS_ADMIN_PASSWORD": "admin password 1",
           "LOBBYTALKS_ARGON2_MEMORY_KIB": str(FAST_ARGON2_KIB)}
    done = subprocess.run([sys.executable, "-m", "lobbytalks", "serve", "--data-dir",
                           str(data_dir), "--port", "0"], env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert "'boss', which exists and is not an administrator" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    with open_database(data_dir) as db:
        assert db.value("SELECT is_admin FROM users WHERE username = 'boss'") == 0


# --- 7. bounded sessions, successful logins, password changes, everywhere ----------------

def test_sessions_per_user_are_bounded_and_the_oldest_go_first(settings, db):
    app = create_app(settings, sessions_per_user=3)
    browsers = [Person(app, username="many").register()]
    browsers += [Person(app, username="many") for _ in range(4)]
    for browser in browsers[1:]:
        assert login(app, "many", PASSWORD, http=browser.http).status_code == 200
    assert sessions_of(db, "many") == 3
    signed_in = [b.web_get(action="me").get_json()["user"] is not None for b in browsers]
    assert signed_in == [False, False, True, True, True]


def test_successful_logins_are_throttled_per_user(settings, db):
    app = create_app(settings, rate_login_success="2/hour")
    Person(app, username="often").register()
    assert [login(app, "often", PASSWORD).status_code for _ in range(2)] == [200, 200]
    assert_web_error(login(app, "often", PASSWORD), 429)
    assert sessions_of(db, "often") == 3  # the refused login made no session
    assert login(app, "other_one", WRONG).status_code == 401  # others are unaffected


def test_change_password_ends_every_session_and_renews_this_one(app, db):
    me = Person(app, username="changer").register()
    elsewhere = Person(app, username="changer")
    assert login(app, "changer", PASSWORD, http=elsewhere.http).status_code == 200
    old_cookie = me.http.get_cookie("xia_session").value
    old_hash = user_row(db, "changer")["password_hash"]

    r = me.web_post("change_password", currentPassword=PASSWORD, newPassword="a new password 2")
    assert r.status_code == 200 and r.get_json() == {"ok": True}
    assert "HttpOnly" in r.headers["Set-Cookie"]
    assert me.web_get(action="me").get_json()["user"]["username"] == "changer"
    assert me.http.get_cookie("xia_session").value != old_cookie
    assert elsewhere.web_get(action="me").get_json()["user"] is None
    assert sessions_of(db, "changer") == 1
    new_hash = user_row(db, "changer")["password_hash"]
    assert new_hash != old_hash and new_hash.startswith("$argon2id$")
    assert login(app, "changer", PASSWORD).status_code == 401
    assert login(app, "changer", "a new password 2").status_code == 200


@pytest.mark.parametrize("fields,status", [
    ({"currentPassword": WRONG, "newPassword": "a new password 2"}, 403),
    ({"currentPassword": PASSWORD, "newPassword": "short"}, 400),
    ({"currentPassword": PASSWORD, "newPassword": "x" * 129}, 400),
    ({"currentPassword": PASSWORD}, 400),
    ({"currentPassword": PASSWORD, "newPassword": 1234567890}, 400),
    ({"currentPassword": PASSWORD, "newPassword": "a new password 2", "extra": 1}, 400),
    ({"currentPassword": PASSWORD, "newPassword": PASSWORD}, 409),  # the same: no change
])
def test_a_refused_password_change_changes_nothing(app, db, fields, status):
    me = Person(app, username="keeper").register()
    before = user_row(db, "keeper")["password_hash"]
    r = me.web_post("change_password", **fields)
    body = assert_web_error(r, status)
    if status == 403:
        assert body["error"].startswith("currentPassword: ")  # the page shows it at the field
    if status == 409:
        assert body["error"].startswith("newPassword: ")
    assert user_row(db, "keeper")["password_hash"] == before
    assert sessions_of(db, "keeper") == 1
    assert me.web_get(action="me").get_json()["user"] is not None


def test_change_password_needs_a_login(client, db):
    r = client.post("/api/community", json={"action": "change_password",
                                            "currentPassword": PASSWORD, "newPassword": PASSWORD})
    assert_web_error(r, 401)


def test_wrong_current_passwords_spend_the_login_budget(app, db):
    thief = Person(app, username="stolen").register()  # e.g. someone with a stolen cookie
    for _ in range(10):
        assert thief.web_post("change_password", currentPassword=WRONG,
                              newPassword="taken over 123").status_code == 403
    r = thief.web_post("change_password", currentPassword=PASSWORD, newPassword="taken over 123")
    assert_web_error(r, 429)
    assert login(app, "stolen", PASSWORD).status_code == 429  # the same (name, address) window
    assert login(app, "stolen", "taken over 123").status_code == 429


def test_logout_everywhere(app, db):
    me = Person(app, username="leaver").register()
    other = Person(app, username="leaver")
    assert login(app, "leaver", PASSWORD, http=other.http).status_code == 200
    bystander = Person(app).register()
    r = me.web_post("logout_all")
    assert r.status_code == 200 and r.get_json() == {"ok": True, "ended": 2}
    assert "xia_session=;" in r.headers["Set-Cookie"]
    assert sessions_of(db, "leaver") == 0 and sessions_of(db, bystander.username) == 1
    assert me.web_get(action="me").get_json()["user"] is None
    assert other.web_get(action="me").get_json()["user"] is None
    assert_web_error(me.web_post("logout_all"), 401)
    assert_web_error(bystander.web_post("logout_all", extra=True), 400)


def test_settings_page(app, client):
    r = client.get("/settings")
    assert r.status_code == 302 and r.headers["Location"].startswith("/login?next=/settings")
    assert 'href="/settings"' not in client.get("/").get_data(as_text=True)
    me = Person(app, username="tidy").register()
    assert login(app, "tidy", PASSWORD).status_code == 200
    page = me.http.get("/settings?lang=en").get_data(as_text=True)
    assert "Account settings" in page and "Active logins on your account: 2" in page
    assert 'data-action="change_password"' in page and 'name="currentPassword"' in page
    assert 'name="newPassword"' in page and '"logout_all"' in page
    assert 'data-done="You are logged out on every device and browser."' in page  # said after
    # what logging out everywhere does not end is said before it is confirmed
    assert "Your agents&#39; tokens are not logins and keep working" in page
    # the e-mail settings live with the inbox; the settings page says where
    assert '<a href="/inbox#mail-settings" id="settings-mail-link">' in page
    assert 'id="mail-settings"' in me.http.get("/inbox").get_data(as_text=True)
    assert 'href="/settings"' in me.http.get("/").get_data(as_text=True)
    assert "账号设置" in me.http.get("/settings?lang=zh").get_data(as_text=True)


# --- 8. Argon2id, and the hashes from before -----------------------------------------------

def test_new_passwords_are_argon2id_at_the_configured_cost(settings, db):
    app = create_app(settings, argon2_memory_kib=16, argon2_iterations=3)
    Person(app, username="fresh").register()
    assert user_row(db, "fresh")["password_hash"].startswith("$argon2id$v=19$m=16,t=3,p=1$")


def test_a_scrypt_hash_logs_in_and_is_replaced_by_argon2id(app, db):
    Person(app, username="oldtimer").register()
    old = legacy_scrypt_hash(PASSWORD)
    with db.transaction() as conn:
        conn.execute("UPDATE users SET password_hash = :password_hash WHERE username = 'oldtimer'",
                     {"password_hash": old})
    assert login(app, "oldtimer", WRONG).status_code == 401
    assert user_row(db, "oldtimer")["password_hash"] == old  # a wrong password changes nothing
    assert login(app, "oldtimer", PASSWORD).status_code == 200
    upgraded = user_row(db, "oldtimer")["password_hash"]
    assert upgraded.startswith(f"$argon2id$v=19$m={FAST_ARGON2_KIB},t=2,p=1$")
    assert sessions_of(db, "oldtimer") == 2  # re-hashing the same password ends no session
    assert login(app, "oldtimer", PASSWORD).status_code == 200
    assert user_row(db, "oldtimer")["password_hash"] == upgraded  # once only


def test_a_raised_cost_re_hashes_at_the_next_login(settings, db):
    Person(create_app(settings), username="raised").register()
    stronger = create_app(settings, argon2_memory_kib=32)
    assert login(stronger, "raised", PASSWORD).status_code == 200
    assert user_row(db, "raised")["password_hash"].startswith("$argon2id$v=19$m=32,t=2,p=1$")


@pytest.mark.parametrize("overrides", [{"argon2_memory_kib": 4}, {"argon2_iterations": 0},
                                       {"argon2_memory_kib": 2**30}])
def test_an_out_of_range_cost_is_refused_at_start(settings, overrides):
    with pytest.raises(ValueError, match="LOBBYTALKS_ARGON2"):
        create_app(settings, **overrides)


# --- through a real server ---------------------------------------------------------------

def test_lockout_success_budget_and_session_bound_under_serve(tmp_path):
    server = LiveServer(tmp_path / "live", env={
        "LOBBYTALKS_RATE_LOGIN_PAIR": "3/hour", "LOBBYTALKS_RATE_LOGIN_SUCCESS": "4/hour",
        "LOBBYTALKS_SESSIONS_PER_USER": "2"})
    api = server.url + "/api/community"

    def attempt(username: str, password: str) -> requests.Response:
        return requests.post(api, json={"action": "login", "username": username,
                                        "password": password}, timeout=10)

    try:
        for name in ("target", "neighbour"):
            requests.post(api, json={"action": "register", "username": name,
                                     "password": PASSWORD}, timeout=10).raise_for_status()
        assert [attempt("target", WRONG).status_code for _ in range(3)] == [401] * 3
        locked = attempt("target", PASSWORD)
        assert locked.status_code == 429 and int(locked.headers["Retry-After"]) > 0
        # Only that (username, address) pair is locked: the address may log in as another.
        logins = [attempt("neighbour", PASSWORD) for _ in range(5)]
        assert [r.status_code for r in logins] == [200] * 4 + [429]
        assert "xia_session" not in logins[-1].headers.get("Set-Cookie", "")
        with open_database(server.data_dir) as db:
            kept = db.value("SELECT COUNT(*) FROM sessions s JOIN users u ON u.id = s.user_id "
                            "WHERE u.username = 'neighbour'")
        assert kept == 2
        newest = logins[3].cookies["xia_session"]
        me = requests.get(api, params={"action": "me"}, cookies={"xia_session": newest}, timeout=10)
        assert me.json()["user"]["username"] == "neighbour"
        oldest = logins[0].cookies["xia_session"]
        me = requests.get(api, params={"action": "me"}, cookies={"xia_session": oldest}, timeout=10)
        assert me.json()["user"] is None
    finally:
        log = server.stop()
    assert PASSWORD not in log and newest not in log


def test_an_unknown_username_costs_one_argon2id_like_a_known_one(app, monkeypatch):
    from lobbytalks import passwords
    Person(app, username="known").register()
    login(app, "warm_up_name", WRONG)  # the first miss makes the (cached) dummy hash
    runs: list[int] = []
    real = passwords._argon2

    def counted(password, salt, cost, key_bytes):
        runs.append(cost.memory_kib)
        return real(password, salt, cost, key_bytes)

    monkeypatch.setattr(passwords, "_argon2", counted)
    assert login(app, "known", WRONG).status_code == 401
    assert login(app, "nobody_at_all", WRONG).status_code == 401
    assert runs == [FAST_ARGON2_KIB, FAST_ARGON2_KIB]
