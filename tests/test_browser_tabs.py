"""Two tabs of one browser: a page keeps acting for the account it was drawn for, or not at all.

Tina fills in /ask; in another tab she logs out and Umar logs in; her page's submit had posted
her question, private context and all, in Umar's name.
"""
from __future__ import annotations

import pytest
import requests

from conftest import LiveServer
from test_browser import browser, watch  # noqa: F401  (the module-wide Chromium fixture)
from test_browser_narrow import registered

pytestmark = [pytest.mark.slow, pytest.mark.once]

PASSWORD = "correct horse 1"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    live = LiveServer(tmp_path_factory.mktemp("tabs") / "data")
    for name in ("tina_tabs", "umar_tabs"):
        session = requests.Session()
        session.post(live.url + "/api/community", json={
            "action": "register", "username": name, "password": PASSWORD}).raise_for_status()
        session.post(live.url + "/api/communities", json={"action": "join", "community": "lobby"}
                     ).raise_for_status()
    yield live
    live.stop()


def log_in(page, base: str, username: str) -> None:
    page.goto(f"{base}/login?lang=en")
    page.fill("#f-username", username)
    page.fill("#f-password", PASSWORD)
    page.click("form.api-form button[type=submit]")
    page.wait_for_url(f"{base}/")


def lose_the_first_post(page) -> list[dict]:
    """The page's first POST to /api/community reaches the server, and its answer never
    arrives (a dropped connection); the bodies of its POSTs, in order."""
    sent: list[dict] = []

    def route_it(route):
        if route.request.method != "POST":
            route.continue_()
            return
        sent.append(route.request.post_data_json)
        if len(sent) == 1:
            route.fetch()  # the server takes it ...
            route.abort("connectionreset")  # ... and its answer never arrives
        else:
            route.continue_()
    page.route("**/api/community", route_it)
    return sent


def test_a_page_does_not_act_for_whoever_logged_in_since(browser, site):  # noqa: F811
    from playwright.sync_api import expect

    base = site.url
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-GB")
    mine, other = context.new_page(), context.new_page()
    problems: list[str] = []
    watch(mine, problems)
    log_in(mine, base, "tina_tabs")
    mine.goto(f"{base}/ask?lang=en")
    mine.fill("#f-title", "Where does the clinic keep its NAS?")
    mine.fill("#f-privateContext", "Behind the reception desk, in the locked cupboard.")
    other.goto(f"{base}/?lang=en")  # another tab of the same browser: log out, Umar logs in
    other.get_by_role("button", name="Log out").click()
    other.wait_for_url(f"{base}/")
    expect(other.locator(".whoami")).to_have_count(0)
    log_in(other, base, "umar_tabs")
    mine.click("form.api-form button[type=submit]")
    expect(mine.locator("form.api-form .form-error")).to_contain_text(
        "This page was opened for another account")
    assert "/ask" in mine.url
    assert mine.input_value("#f-privateContext") == "Behind the reception desk, in the locked cupboard."
    listed = requests.get(base + "/api/community", params={"community": "lobby"})
    assert listed.status_code == 200 and listed.json()["topics"] == []  # nothing posted as Umar
    # Log out from Tina's page logs the browser out: Umar, who is in now, is out (asked
    # first: the question typed there is lost with the page)
    mine.get_by_role("button", name="Log out").click()
    mine.locator("#confirm-yes").click()
    mine.wait_for_url(f"{base}/")
    other.goto(f"{base}/?lang=en")
    expect(other.locator(".whoami")).to_have_count(0)
    context.close()


def test_a_button_pressed_for_whoever_logged_in_since_says_so_without_typed_text(
        browser, site):  # noqa: F811
    """A button has nothing typed to lose: its message said "what you typed here is not
    kept" all the same."""
    from playwright.sync_api import expect

    base = site.url
    context = browser.new_context(locale="en-GB")
    mine, other = context.new_page(), context.new_page()
    log_in(mine, base, "tina_tabs")
    mine.goto(f"{base}/settings?lang=en")
    other.goto(f"{base}/?lang=en")  # the same browser: out, and another account in
    other.get_by_role("button", name="Log out").click()
    other.wait_for_url(f"{base}/")
    log_in(other, base, "umar_tabs")
    mine.get_by_role("button", name="Revoke every agent token").click()
    mine.locator("#confirm-yes").click()
    said = mine.locator(".inline-error")
    expect(said).to_contain_text("This page was opened for another account")
    expect(said).not_to_contain_text("typed")
    context.close()


def test_a_question_whose_response_was_lost_is_asked_once(browser, tmp_path):  # noqa: F811
    """The network dropped the answer to "Ask" after the server had the question; the second
    click posted it again. The page sends one requestId until it succeeds."""
    from playwright.sync_api import expect

    live = LiveServer(tmp_path / "lost")
    try:
        base = live.url
        registered(base, "lena_lost")
        context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-GB")
        page = context.new_page()
        problems: list[str] = []
        watch(page, problems)
        log_in(page, base, "lena_lost")
        sent = lose_the_first_post(page)
        page.goto(f"{base}/ask?lang=en")
        page.fill("#f-title", "Which UPS keeps the NAS up for ten minutes?")
        page.click("form.api-form button[type=submit]")
        expect(page.locator("form.api-form .form-error")).to_be_visible()
        page.click("form.api-form button[type=submit]")
        page.wait_for_url(f"{base}/q/**")
        topics = requests.get(base + "/api/community", params={"community": "lobby"}).json()["topics"]
        assert [t["title"] for t in topics] == ["Which UPS keeps the NAS up for ten minutes?"]
        assert page.url.split("?")[0].endswith(f"/q/{topics[0]['id']}")
        assert len(sent) == 2 and sent[0]["requestId"] == sent[1]["requestId"]
        assert problems == []
        context.close()
    finally:
        live.stop()


def test_back_after_asking_does_not_carry_the_private_context_into_the_next(browser, site):  # noqa: F811
    """After asking, Back restored the form with the private context still in it (the title,
    autocomplete off, was empty): the next question went out with the first one's secrets."""
    from playwright.sync_api import expect

    base = site.url
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-GB")
    page = context.new_page()
    problems: list[str] = []
    watch(page, problems)
    log_in(page, base, "tina_tabs")
    page.goto(f"{base}/ask?lang=en")
    page.fill("#f-title", "Which NAS for a small clinic?")
    page.fill("#f-description", "Two rooms, eight users.")
    page.fill("#f-privateContext", "The admin password is on a note under the keyboard.")
    page.click("form.api-form button[type=submit]")
    page.wait_for_url(f"{base}/q/**")
    page.go_back()
    expect(page.locator("#f-title")).to_be_visible()
    assert page.input_value("#f-privateContext") == ""
    assert page.input_value("#f-description") == ""
    assert problems == []
    context.close()


def test_a_failure_that_names_no_field_leaves_the_focus_where_it_was(browser, site):  # noqa: F811
    """After a refusal or a lost connection the focus fell to the page's body (the button
    was disabled while it waited), and a button's network error said "What you typed is
    kept" where nothing had been typed."""
    from playwright.sync_api import expect

    base = site.url
    umar = requests.Session()
    umar.post(base + "/api/community", json={"action": "login", "username": "umar_tabs",
                                             "password": PASSWORD}).raise_for_status()
    topic = umar.post(base + "/api/community", json={
        "action": "topic", "title": "Where do the clinic's backups go?"}).json()["id"]
    tina = requests.Session()
    tina.post(base + "/api/community", json={"action": "login", "username": "tina_tabs",
                                             "password": PASSWORD}).raise_for_status()
    tina.post(base + "/api/external/manage", json={
        "action": "register", "name": "Tina's agent", "perspective": "Be brief.",
        "client": "codex"}).raise_for_status()
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-GB")
    page = context.new_page()
    log_in(page, base, "tina_tabs")
    page.goto(f"{base}/q/{topic}?lang=en")
    page.route("**/api/community", lambda route: route.abort()
               if route.request.method == "POST" else route.continue_())
    ask = page.get_by_role("button", name="Ask my agents", exact=True)
    ask.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".inline-error")).to_have_text(
        "Could not reach the server. Check your connection and try again.")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Ask my agents"
    page.goto(f"{base}/ask?lang=en")
    page.fill("#f-title", "Is the focus kept?")
    page.locator("form.api-form button[type=submit]").focus()
    page.keyboard.press("Enter")
    expect(page.locator("form.api-form .form-error")).to_contain_text("What you typed is kept")
    assert page.evaluate("document.activeElement.type") == "submit"
    context.close()


def test_a_form_mended_after_a_lost_response_is_sent_as_a_new_request(browser, site):  # noqa: F811
    """The page kept its requestId until a send succeeded: mended after a lost response, the
    question met 409 after 409 ("conflicts with an earlier submission"), and a mended private
    context was dropped without a word (the replay answered with the first question)."""
    base = site.url
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-GB")
    page = context.new_page()
    problems: list[str] = []
    watch(page, problems)
    log_in(page, base, "umar_tabs")
    sent = lose_the_first_post(page)
    page.goto(f"{base}/ask?lang=en")
    page.fill("#f-title", "Which router for the surgery?")
    page.fill("#f-privateContext", "Call me on 555-0100.")
    page.click("form.api-form button[type=submit]")
    page.locator("form.api-form .form-error").wait_for()
    page.fill("#f-privateContext", "")  # thought better of it
    page.click("form.api-form button[type=submit]")
    page.wait_for_url(f"{base}/q/**")
    assert sent[0]["requestId"] != sent[1]["requestId"]
    topic = page.url.split("/q/")[1].split("?")[0].split("#")[0]
    umar = requests.Session()
    umar.post(base + "/api/community", json={"action": "login", "username": "umar_tabs",
                                             "password": PASSWORD}).raise_for_status()
    read = umar.get(base + "/api/community", params={"topic": topic}).json()["topic"]
    assert read["title"] == "Which router for the surgery?" and not read.get("privateContext")
    assert problems == []
    context.close()
