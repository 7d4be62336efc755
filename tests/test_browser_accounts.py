"""The page script's side of logging in and of the settings page, in a real browser.

app.js follows ``data-then="go:..."`` after the in-page login; it must stay on the site
whatever that target says, even if the server let a bad one through. Then the settings
page: a password change keeps this browser signed in and ends the other login.
"""
from __future__ import annotations

import re

import pytest
import requests

from conftest import LiveServer, free_port
from test_browser import browser, watch  # noqa: F401  (the module-wide Chromium fixture)
from test_mail import smtp  # noqa: F401  (an SMTP server that keeps what it receives)

pytestmark = [pytest.mark.slow, pytest.mark.once]

PASSWORD = "correct horse 1"
# Targets that read as local to a naive check but are another site to a browser's parser.
OFF_SITE = ["/\t/evil.example.com/", "/\n/evil.example.com/", "\\\\evil.example.com/",
            "/\\evil.example.com/", " //evil.example.com/", "https://evil.example.com/",
            # dot segments the parser removes: "/.//evil.example.com/" has the path
            # "//evil.example.com/", which read again is that host
            "/.//evil.example.com/", "/..//evil.example.com/", "/x/..//evil.example.com/"]


@pytest.fixture
def server(tmp_path):
    live = LiveServer(tmp_path / "browser-accounts")
    yield live
    live.stop()


def test_in_page_login_stays_on_the_site_and_settings_work(browser, server):  # noqa: F811
    from playwright.sync_api import expect

    base = server.url
    requests.post(base + "/api/community", json={
        "action": "register", "username": "roamer", "password": PASSWORD}).raise_for_status()
    problems: list[str] = []
    context = browser.new_context(locale="en-GB")
    # Anything off the site would be fetched from here: answer it, and note it.
    context.route("**://evil.example.com/**",
                  lambda route: (problems.append(f"left for {route.request.url}"),
                                 route.fulfill(status=200, body="evil")))
    page = context.new_page()
    watch(page, problems)
    for target in OFF_SITE:
        context.clear_cookies()
        page.goto(f"{base}/login?lang=en")
        page.eval_on_selector("form.api-form", "(form, target) => { form.dataset.then = "
                              "'go:' + target; }", target)
        page.fill("#f-username", "roamer")
        page.fill("#f-password", PASSWORD)
        page.click("form.api-form button[type=submit]")
        page.wait_for_url(f"{base}/")
        expect(page.locator(".whoami")).to_contain_text("roamer")

    other = requests.Session()
    other.post(base + "/api/community", json={
        "action": "login", "username": "roamer", "password": PASSWORD}).raise_for_status()
    page.goto(f"{base}/settings?lang=en")
    page.fill("#f-currentPassword", "a wrong password")
    page.fill("#f-newPassword", "a new password 2")
    page.fill("#f-newPasswordAgain", "a new password 2")
    page.click("form.api-form button[type=submit]")
    expect(page.locator("#f-currentPassword-error")).to_be_visible()
    assert page.input_value("#f-newPassword") == "a new password 2"
    page.fill("#f-currentPassword", PASSWORD)
    page.click("form.api-form button[type=submit]")
    expect(page.locator("#flash")).to_have_text(
        "Password changed; you are logged out everywhere else.")
    expect(page.locator(".whoami")).to_contain_text("roamer")
    assert other.get(base + "/api/community", params={"action": "me"}).json()["user"] is None

    # Tokens are no logins: one button ends them all (an intruder's too).
    made = page.request.post(base + "/api/external/manage", data={
        "action": "register", "name": "留下的虾", "perspective": "先给结论。", "client": "codex"})
    bearer = {"Authorization": f"Bearer {made.json()['token']}"}
    assert requests.get(base + "/api/external?action=list_topics", headers=bearer).ok
    page.get_by_role("button", name="Revoke every agent token").click()
    page.locator("#confirm-yes").click()
    expect(page.locator("#flash")).to_have_text("Every agent token is revoked.")
    assert requests.get(base + "/api/external?action=list_topics",
                        headers=bearer).status_code == 401

    page.get_by_role("button", name="Log out everywhere").click()
    page.locator("#confirm-yes").click()
    page.wait_for_url(f"{base}/")
    expect(page.get_by_role("link", name="Log in")).to_be_visible()
    context.close()
    assert problems == []


@pytest.mark.parametrize("path, fields", [
    ("/login", {"#f-username": "roamer", "#f-password": PASSWORD}),
    ("/register", {"#f-username": "newcomer", "#f-password": PASSWORD,
                   "#f-passwordAgain": PASSWORD}),
])
def test_a_form_sent_before_the_script_runs_keeps_the_password_out_of_the_url(
        browser, server, path, fields):  # noqa: F811
    """Without JavaScript (or before app.js has loaded) the browser sends the form itself:
    by POST, so the password is never in the address, the history or a proxy's log."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(server.url + path)
    for selector, value in fields.items():
        page.fill(selector, value)
    with page.expect_request(lambda r: r.url.startswith(server.url + path)) as sent:
        page.click("form.api-form button[type=submit]")
    assert sent.value.method == "POST", sent.value.url
    assert PASSWORD.replace(" ", "+") not in sent.value.url and "password" not in sent.value.url
    page.wait_for_load_state()
    assert "password" not in page.url
    context.close()


@pytest.mark.parametrize("where", ["header", "logout page"])
def test_logging_out_works_without_javascript(browser, server, where):  # noqa: F811
    """Where no script runs, the logout buttons are forms the browser sends itself: the
    session ends (on a shared computer that matters), and the browser is taken home."""
    context = browser.new_context(java_script_enabled=False, locale="en-GB")
    page = context.new_page()
    page.goto(server.url + "/login?lang=en")
    session = requests.Session()
    session.post(server.url + "/api/community", json={
        "action": "register", "username": "nojs_leaver", "password": PASSWORD}).raise_for_status()
    cookie = session.cookies.get("xia_session")
    context.add_cookies([{"name": "xia_session", "value": cookie, "url": server.url}])
    page.goto(server.url + ("/" if where == "header" else "/logout"))
    button = page.locator(".account button" if where == "header" else "main button")
    button.click()
    page.wait_for_url(server.url + "/")
    assert page.locator(".account").get_by_role("link", name="Log in").is_visible()
    # The session itself is gone, not only this browser's cookie.
    assert session.get(server.url + "/api/community?action=me").json()["user"] is None
    context.close()


def test_logging_out_of_a_login_that_already_ended_just_logs_out(browser, server):  # noqa: F811
    """Logged out in another tab (or suspended): the header's Log out still goes home as a
    visitor, instead of saying the login expired and leaving the stale header in place."""
    context = browser.new_context(locale="en-GB")
    page = context.new_page()
    session = requests.Session()
    session.post(server.url + "/api/community", json={
        "action": "register", "username": "two_tabs", "password": PASSWORD}).raise_for_status()
    context.add_cookies([{"name": "xia_session", "value": session.cookies.get("xia_session"),
                          "url": server.url}])
    page.goto(server.url + "/settings?lang=en")
    session.post(server.url + "/api/community", json={"action": "logout"},
                 headers={"Origin": server.url}).raise_for_status()  # the other tab
    page.locator(".account button").click()
    page.wait_for_url(server.url + "/")
    assert page.locator(".account").get_by_role("link", name="Log in").is_visible()
    assert "expired" not in page.locator("body").inner_text()
    context.close()


def test_a_right_password_past_the_logins_an_hour_is_not_told_it_failed(browser, tmp_path):  # noqa: F811
    """RATE_LOGIN_SUCCESS refuses a login whose password is right: the page said "Too many
    failed logins" to a person who had typed nothing wrong."""
    from playwright.sync_api import expect

    live = LiveServer(tmp_path / "often", env={"LOBBYTALKS_RATE_LOGIN_SUCCESS": "1/hour"})
    try:
        requests.post(live.url + "/api/community", json={
            "action": "register", "username": "often", "password": PASSWORD}).raise_for_status()
        context = browser.new_context(locale="en-GB")
        page = context.new_page()
        for attempt in range(2):
            context.clear_cookies()
            page.goto(f"{live.url}/login?lang=en")
            page.fill("#f-username", "often")
            page.fill("#f-password", PASSWORD)
            page.click("form.api-form button[type=submit]")
            if attempt == 0:
                page.wait_for_url(f"{live.url}/")
        error = page.locator(".form-error:visible, [role=alert]:visible").first
        expect(error).to_contain_text("Too many logins")
        assert "failed" not in error.inner_text().lower()
        assert "try again at" in error.inner_text()
        context.close()
    finally:
        live.stop()


def test_an_error_on_the_field_being_typed_in_is_said_aloud(browser, server):  # noqa: F811
    """Enter pressed in a field whose own error then appears: focus was already there, so
    moving it did nothing and the field's new description went unread; nothing was said."""
    from playwright.sync_api import expect

    base = server.url
    requests.post(base + "/api/community", json={
        "action": "register", "username": "taken_name", "password": PASSWORD}).raise_for_status()
    context = browser.new_context(locale="en-GB")
    page = context.new_page()
    page.goto(f"{base}/register?lang=en")
    page.fill("#f-username", "fresh_name")
    page.fill("#f-password", PASSWORD)
    page.fill("#f-passwordAgain", PASSWORD + "x")
    page.press("#f-passwordAgain", "Enter")  # refused in the page: typed twice, not alike
    again_error = page.locator(".field", has=page.locator("#f-passwordAgain")).locator(".field-error")
    expect(again_error).not_to_be_empty()
    expect(page.locator("#f-passwordAgain")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#announce")).to_have_text(again_error.inner_text())

    page.fill("#f-username", "taken_name")
    page.fill("#f-passwordAgain", PASSWORD)
    page.press("#f-username", "Enter")  # refused by the server: the name is taken
    name_error = page.locator(".field", has=page.locator("#f-username")).locator(".field-error")
    expect(name_error).to_contain_text("taken")
    expect(page.locator("#announce")).to_have_text(name_error.inner_text())

    # the page's own advice is its rule: an easy password is refused at its field, in words;
    # a name only deleted accounts get is refused as reserved, not as taken
    page.fill("#f-username", "fresh_name")
    for field in ("#f-password", "#f-passwordAgain"):
        page.fill(field, "password123")
    page.press("#f-password", "Enter")
    password_error = page.locator(".field", has=page.locator("#f-password")).locator(".field-error")
    expect(password_error).to_contain_text("must not be easy to guess")
    page.fill("#f-username", "deleted_me")
    for field in ("#f-password", "#f-passwordAgain"):
        page.fill(field, PASSWORD)
    page.press("#f-username", "Enter")
    expect(name_error).to_contain_text("does not start with deleted_")
    assert page.url.endswith("/register?lang=en")
    context.close()


def test_a_username_with_spaces_around_logs_in_and_enter_in_a_title_moves_on(browser, server):  # noqa: F811
    """A phone keyboard or a paste adds a space after the name: the login said the name
    was malformed while the field showed it right. Enter in a question's title posted the
    question half written (no background yet, claimable at once); it moves on to the
    background instead, and the button still posts."""
    from playwright.sync_api import expect

    base = server.url
    requests.post(base + "/api/community", json={
        "action": "register", "username": "spacey", "password": PASSWORD}).raise_for_status()
    context = browser.new_context(locale="en-GB")
    page = context.new_page()
    page.goto(f"{base}/login?lang=en")
    page.fill("#f-username", " spacey ")
    page.fill("#f-password", PASSWORD)
    page.press("#f-password", "Enter")
    expect(page.locator(".whoami")).to_contain_text("spacey")
    assert page.request.post(base + "/api/communities", data={
        "action": "join", "community": "lobby"}).ok

    page.goto(f"{base}/ask?lang=en")
    page.fill("#f-title", "How do I back up SQLite while it is written to?")
    page.press("#f-title", "Enter")
    expect(page.locator("#f-description")).to_be_focused()
    page.keyboard.type("The service never stops writing.")
    page.click("form.api-form button[type=submit]")
    page.wait_for_url(f"{base}/q/**")
    asked = requests.get(base + "/api/community", params={"community": "lobby"}).json()["topics"]
    assert [t["title"] for t in asked] == ["How do I back up SQLite while it is written to?"]
    expect(page.locator("body")).to_contain_text("The service never stops writing.")
    context.close()


def test_a_forgotten_password_is_reset_from_the_mailed_link(browser, tmp_path, smtp):  # noqa: F811
    """From the login page's link to a new password: the mailed link's code, after "#",
    lands in the form and leaves the address bar; the new password logs this browser in."""
    from playwright.sync_api import expect

    port = free_port()
    live = LiveServer(tmp_path / "browser-reset", port=port, env={
        "LOBBYTALKS_SMTP_HOST": "127.0.0.1", "LOBBYTALKS_SMTP_PORT": str(smtp.port),
        "LOBBYTALKS_SMTP_SECURITY": "none", "LOBBYTALKS_PUBLIC_URL": f"http://127.0.0.1:{port}"})
    try:
        base = live.url
        owner = requests.Session()
        owner.post(base + "/api/community", json={
            "action": "register", "username": "forgetful", "password": PASSWORD}).raise_for_status()
        owner.post(base + "/api/community", json={
            "action": "notify_settings", "email": "me@example.org",
            "emailNotify": False}).raise_for_status()
        code = re.search(r"\b(\d{8})\b", smtp.wait(1)[0].get_content()).group(1)
        smtp.envelopes.clear()
        owner.post(base + "/api/community",
                   json={"action": "confirm_email", "code": code,
                         "currentPassword": PASSWORD}).raise_for_status()

        problems: list[str] = []
        context = browser.new_context(locale="en-GB")
        page = context.new_page()
        watch(page, problems)
        page.goto(f"{base}/login?lang=en")
        page.get_by_role("link", name="Forgot your password?").click()
        page.get_by_label("Username or e-mail address").fill("me@example.org")
        page.get_by_role("button", name="Send the reset mail").click()
        page.wait_for_url(f"{base}/reset-password")
        expect(page.locator("#flash")).to_contain_text("a reset mail is on its way")
        link = re.search(rf"{re.escape(base)}/reset-password#\S+",
                         smtp.wait(1)[0].get_content()).group(0)
        token = re.search(r"#code=([^&]+)&user=forgetful$", link).group(1)
        page.goto(link)  # on the page already: only the "#" changes
        expect(page.get_by_label("Reset code")).to_have_value(token)
        assert page.url == f"{base}/reset-password"  # it leaves the address bar
        # the password manager saving the new password is told whose it is
        expect(page.locator('#reset-form [autocomplete="username"]')).to_have_value("forgetful")
        expect(page.locator("#reset-account")).to_have_text("For the account forgetful.")
        page.get_by_label("New password").fill("a fresh password 3")
        page.get_by_label("Password again").fill("a fresh password 3")
        page.get_by_role("button", name="Set the password and log in").click()
        page.wait_for_url(f"{base}/")
        expect(page.locator("#flash")).to_have_text(
            "Your password is reset and you are logged in; every other login has ended.")
        expect(page.locator(".whoami")).to_contain_text("forgetful")
        assert owner.get(base + "/api/community", params={"action": "me"}).json()["user"] is None

        # the same link again: the page says why it fails, at the field
        context.clear_cookies()
        with page.expect_request(lambda r: "/reset-password" in r.url) as opened:
            page.goto(f"{base}/reset-password#{token}")  # as links mailed before the name
        assert token not in opened.value.url  # the fragment never leaves the browser
        expect(page.get_by_label("Reset code")).to_have_value(token)
        expect(page.locator('#reset-form [autocomplete="username"]')).to_have_value("")
        expect(page.locator("#reset-account")).to_be_hidden()  # no name to say
        assert page.url == f"{base}/reset-password"
        page.get_by_label("New password").fill("yet another one 4")
        page.get_by_label("Password again").fill("yet another one 4")
        page.get_by_role("button", name="Set the password and log in").click()
        expect(page.locator("#f-code-error")).to_contain_text("used already")
        context.close()
        assert problems == []
    finally:
        live.stop()


def test_deleting_the_account_asks_first_and_ends_at_home_logged_out(browser, server):  # noqa: F811
    from playwright.sync_api import expect

    base = server.url
    context = browser.new_context(locale="en-GB")
    assert context.request.post(base + "/api/community", data={  # this browser's cookie
        "action": "register", "username": "leaver", "password": PASSWORD}).ok
    problems: list[str] = []
    page = context.new_page()
    watch(page, problems)
    page.goto(f"{base}/settings?lang=en")
    form = page.locator('form[data-action="delete_account"]')
    form.get_by_label("Current password").fill("a wrong password")
    form.get_by_role("button", name="Delete my account").click()
    page.locator("#confirm-yes").click()
    expect(page.locator("#f-delete-currentPassword-error")).to_contain_text(
        "nothing was deleted")
    # asked again, and "no" sends nothing
    form.get_by_label("Current password").fill(PASSWORD)
    form.get_by_role("button", name="Delete my account").click()
    expect(page.locator("#confirm-text")).to_contain_text("cannot be undone")
    page.locator("#confirm-no").click()
    expect(page.locator(".whoami")).to_contain_text("leaver")
    form.get_by_role("button", name="Delete my account").click()
    page.locator("#confirm-yes").click()
    page.wait_for_url(f"{base}/")
    expect(page.locator("#flash")).to_have_text("Your account is deleted.")
    expect(page.get_by_role("link", name="Log in")).to_be_visible()
    assert requests.post(base + "/api/community", json={
        "action": "login", "username": "leaver", "password": PASSWORD}).status_code == 401
    context.close()
    assert problems == []
