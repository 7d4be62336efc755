"""The question page in a real browser: "Ask my agents", and the live research count and
answers arriving without a reload (Playwright's clock runs the page's 10-second poll)."""
from __future__ import annotations

import re
import uuid

import pytest
import requests

from conftest import good_result
from test_browser import browser, server, watch  # noqa: F401  (fixtures)
from test_browser_narrow import registered

pytestmark = [pytest.mark.slow, pytest.mark.once]


def test_question_page_updates_itself_while_an_agent_researches(browser, server):  # noqa: F811
    from playwright.sync_api import expect

    base = server.url
    problems: list[str] = []
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    watch(page, problems)
    page.clock.install()
    page.goto(f"{base}/register")
    page.fill("#f-username", "live_owner")
    page.fill("#f-password", "correct horse 1")
    page.fill("#f-passwordAgain", "correct horse 1")
    page.click("form.api-form button[type=submit]")
    page.wait_for_url(f"{base}/")
    assert page.request.post(f"{base}/api/communities",
                             data={"action": "join", "community": "lobby"}).ok
    issued = page.request.post(f"{base}/api/external/manage", data={
        "action": "register", "name": "自动虾", "perspective": "先给结论。", "client": "codex"}).json()
    headers = {"Authorization": f"Bearer {issued['token']}"}
    # the page's reader asks, so the asker's card tools are on the page too
    topic = page.request.post(f"{base}/api/community", data={
        "action": "topic", "title": "SQLite 在线备份会阻塞写入吗？"}).json()["id"]

    page.goto(f"{base}/q/{topic}")
    expect(page.locator(".live-count")).to_have_text("现在没有智能体在研究这个问题。")
    expect(page.locator("#answer-count")).to_have_text("0 条回答")
    expect(page.locator("#card-why")).to_contain_text("当前版本还没有回答")
    page.get_by_role("button", name="请我的智能体来回答").click()
    expect(page.get_by_role("button", name="撤回请求")).to_be_visible()
    listing = page.request.get(f"{base}/api/external?action=list_topics", headers=headers).json()
    assert [t["id"] for t in listing["requested"]] == [topic]

    claim = page.request.post(f"{base}/api/external", headers=headers, data={
        "action": "claim_task", "topic": topic, "requestId": str(uuid.uuid4())}).json()
    page.clock.run_for(11_000)
    expect(page.locator(".live-count")).to_have_text("现在有 1 个智能体在研究这个问题。")

    stored = page.request.post(f"{base}/api/external", headers=headers, data={
        "action": "submit_result", "taskId": claim["task"]["id"], **good_result()})
    assert stored.ok, stored.text()
    page.clock.run_for(11_000)
    expect(page.locator(".live-count")).to_have_text("现在没有智能体在研究这个问题。")
    expect(page.locator(".live-new")).to_be_visible()
    expect(page.locator("section.discussion .conclusion")).to_contain_text("在线备份 API")
    # the rest of the page that counts answers follows, without a reload
    expect(page.locator("#answer-count")).to_have_text("1 条回答")
    expect(page.locator("#card-why")).to_contain_text("当前版本的回答还没有一条允许公开使用。它们是你自己的回答")
    expect(page.locator(".inbox-link .unread-count")).to_have_count(0)  # one's own agent
    # the request the answer fulfilled is no longer offered to withdraw
    expect(page.locator("#agents-request .badge")).to_have_text("你的智能体已回答当前版本")
    expect(page.get_by_role("button", name="撤回请求")).to_have_count(0)

    # Someone else's agent answers: the asker is notified, and the header says so at once.
    answer_as_new_member(base, topic, "live_helper")
    page.clock.run_for(11_000)
    expect(page.locator("#answer-count")).to_have_text("2 条回答")
    expect(page.locator(".inbox-link .unread-count")).to_have_text("1")
    assert problems == []


def test_a_report_being_typed_is_not_wiped_by_an_answer_arriving(browser, server):  # noqa: F811
    """The discussion was re-rendered when an answer arrived, report forms and all: the
    reason typed into one was gone, its box closed, without a word."""
    from playwright.sync_api import expect

    base = server.url
    _, topic, context, page, problems = asker_page(browser, base, "live_reporter")
    report = page.locator("section.discussion details.report").first
    report.locator("summary").click()
    report.locator("textarea").fill("It only links to a paid course.")
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if f"/q/{topic}" in r.url else None)
    answer_as_new_member(base, topic, "second_helper")
    for _ in range(3):
        page.clock.run_for(11_000)
    expect(report.locator("textarea")).to_have_value("It only links to a paid course.")
    assert report.evaluate("el => el.open")
    # The whole page waits meanwhile: a count of two answers beside a discussion of one
    # disagreed, and the page was fetched anew every ten seconds for nothing.
    expect(page.locator("section.discussion .conclusion")).to_have_count(1)
    expect(page.locator("#answer-count")).to_contain_text("1")
    assert fetched == []
    report.locator("textarea").fill("")  # given up: the discussion catches up at the next tick
    page.clock.run_for(11_000)
    expect(page.locator("section.discussion .conclusion")).to_have_count(2)
    expect(page.locator("#answer-count")).to_contain_text("2")
    # the report box the reader opened stays open, now empty, and so with the focus in it
    report = page.locator("section.discussion details.report").first
    assert report.evaluate("el => el.open")
    report.locator("textarea").focus()
    answer_as_new_member(base, topic, "third_helper")
    page.clock.run_for(11_000)
    expect(page.locator("section.discussion .conclusion")).to_have_count(3)
    assert page.locator("section.discussion details.report").first.evaluate("el => el.open")
    assert page.evaluate("() => document.activeElement.tagName") == "TEXTAREA"
    # and its counter came with it, as every report box's
    expect(page.locator("section.discussion details.report .counter")).to_have_count(3)
    context.close()
    assert problems == []


def asker_page(browser, base: str, username: str):
    """A new asker's question, answered once by another member's agent, open in a page
    in English (chosen once, then remembered) with its clock installed: (the asker's
    session, the topic, the context, the page, the problems the page met)."""
    asker = registered(base, username)
    topic = asker.post(f"{base}/api/community", json={
        "action": "topic", "title": f"What does {username} need to know about WAL?"}).json()["id"]
    answer_as_new_member(base, topic, f"{username}_first")
    context = browser.new_context(locale="en-GB")
    context.add_cookies([{"name": "xia_session", "value": asker.cookies.get("xia_session"),
                          "url": base}])
    page = context.new_page()
    problems: list[str] = []
    watch(page, problems)
    page.clock.install()
    page.goto(f"{base}/?lang=en")
    page.goto(f"{base}/q/{topic}")
    return asker, topic, context, page, problems


def test_an_answer_whose_page_came_back_as_an_error_is_shown_at_the_next_tick(
        browser, server):  # noqa: F811
    """The refresh read an error page as the page, found none of its parts, and still
    counted the answer as shown: "the discussion is updated", and it never was."""
    from playwright.sync_api import expect

    base = server.url
    _, topic, context, page, problems = asker_page(browser, base, "error_asker")
    failing = {"left": 1}

    def once_unavailable(route):
        if failing["left"]:
            failing["left"] -= 1
            route.fulfill(status=503, body="<!doctype html><title>busy</title>")
        else:
            route.continue_()
    page.route(f"{base}/q/{topic}", once_unavailable)
    answer_as_new_member(base, topic, "error_second")
    page.clock.run_for(11_000)
    expect(page.locator(".live-new")).to_be_hidden()
    expect(page.locator("section.discussion .conclusion")).to_have_count(1)
    page.clock.run_for(11_000)
    expect(page.locator("section.discussion .conclusion")).to_have_count(2)
    expect(page.locator(".live-new")).to_be_visible()
    assert failing["left"] == 0 and problems == []
    context.close()


@pytest.mark.parametrize("change", ["another account", "logged out", "another language"])
def test_a_page_another_tab_changed_the_reader_of_is_not_patched_with_theirs(
        browser, server, change):  # noqa: F811
    """Logged in as someone else (or out) in another tab, the refresh spliced that
    account's view into the page drawn for the first: their locked notice, their buttons,
    their unread count, under the first one's name; another language mixed the two."""
    from playwright.sync_api import expect

    base = server.url
    name = {"another account": "tab_one", "logged out": "tab_two", "another language": "tab_three"}[change]
    _, topic, context, page, problems = asker_page(browser, base, name)
    if change == "another account":
        other = registered(base, name + "_b")
        context.add_cookies([{"name": "xia_session", "value": other.cookies.get("xia_session"),
                              "url": base}])
    elif change == "logged out":
        context.clear_cookies()
    else:
        assert page.request.get(f"{base}/?lang=zh").ok  # remembered for every tab
    answer_as_new_member(base, topic, name + "_second")
    page.clock.run_for(11_000)
    expect(page.locator("#outdated-meanwhile")).to_contain_text("Reload the page to see it")
    expect(page.locator("section.discussion .conclusion")).to_have_count(1)
    expect(page.locator(".whoami")).to_have_text(re.compile(rf"\b{name}\s*$"))
    assert page.locator("html").get_attribute("lang") == "en"
    assert "讨论" not in page.locator("main").inner_text()
    page.clock.run_for(30_000)  # and it stops asking
    assert problems == []
    context.close()


def test_the_header_count_still_follows_after_a_live_refresh(browser, server):  # noqa: F811
    """The refresh drew the header's inbox link anew, and the minute's count then went to
    the link it had replaced, off the page."""
    from playwright.sync_api import expect

    base = server.url
    asker, topic, context, page, problems = asker_page(browser, base, "count_asker")
    answer_as_new_member(base, topic, "count_second")
    page.clock.run_for(11_000)
    count = page.locator(".inbox-link .unread-count")
    expect(count).to_have_text("2")
    assert asker.post(f"{base}/api/community", json={"action": "notifications_read"}).ok
    page.clock.run_for(61_000)
    expect(count).to_have_count(0)
    assert problems == []
    context.close()


def test_a_button_on_its_way_keeps_its_part_until_its_answer_comes(browser, server):  # noqa: F811
    """The discussion was drawn anew under a request on its way: its failure was shown on
    the control no longer on the page, and the new control could send it again."""
    from playwright.sync_api import expect

    base = server.url
    _, topic, context, page, problems = asker_page(browser, base, "busy_asker")
    held = []
    page.route(f"{base}/api/community", lambda route: held.append(route)
               if route.request.method == "POST" else route.continue_())
    ask = page.locator("section.discussion button[data-post]").filter(has_text="Ask the author").first
    ask.click()
    expect(ask).to_be_disabled()
    answer_as_new_member(base, topic, "busy_second")
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if f"/q/{topic}" in r.url else None)
    with page.expect_response(lambda r: "action=activity" in r.url):
        page.clock.run_for(11_000)
    page.wait_for_timeout(500)  # (what the poll would do next, a fetch of the page)
    assert fetched == []  # the discussion waits for it
    expect(page.locator("section.discussion .conclusion")).to_have_count(1)
    assert len(held) == 1
    held[0].fulfill(status=409, content_type="application/json",
                    body='{"error": "x", "code": "invalid_request"}')
    expect(page.locator("section.discussion .inline-error")).to_be_visible()
    page.clock.run_for(11_000)
    expect(page.locator("section.discussion .conclusion")).to_have_count(2)
    assert len(held) == 1 and problems == []
    context.close()


def test_a_question_closed_while_its_page_is_open_stops_saying_open(browser, server):  # noqa: F811
    """The page polled the question's status and went on showing "Open" and "Ask my agents"
    after its asker closed it elsewhere."""
    from playwright.sync_api import expect

    base = server.url
    asker = registered(base, "live_closer")
    topic = asker.post(f"{base}/api/community", json={
        "action": "topic", "title": "Is a closed question still open on a page?"}).json()["id"]
    problems: list[str] = []
    context = browser.new_context(locale="en-GB")
    page = context.new_page()
    watch(page, problems)
    page.clock.install()
    page.goto(f"{base}/q/{topic}?lang=en")
    expect(page.locator("#topic-status")).to_have_text("Open")
    assert asker.post(f"{base}/api/community", json={"action": "close", "topic": topic}).ok
    page.clock.run_for(11_000)
    expect(page.locator("#topic-status")).to_have_text("Closed")
    expect(page.locator("#closed-meanwhile")).to_contain_text("This question was closed just now")
    expect(page.locator("#live-research")).to_have_count(0)
    page.clock.run_for(30_000)  # and it stops asking
    assert problems == []
    context.close()


def test_a_question_taken_down_while_its_page_is_open_says_so_and_stops_asking(browser, tmp_path):
    """Its poll met a 404 every ten seconds, swallowed it, and the page went on saying "Open"
    and offering "Ask my agents"."""
    from playwright.sync_api import expect

    from conftest import LiveServer

    live = LiveServer(tmp_path / "taken-down", env={
        "LOBBYTALKS_ADMIN_USERNAME": "chief", "LOBBYTALKS_ADMIN_PASSWORD": "chief password 1"})
    try:
        base = live.url
        people = {"poster": registered(base, "poster"), "chief": requests.Session()}
        people["chief"].post(f"{base}/api/community", json={  # the admin's account exists
            "action": "login", "username": "chief", "password": "chief password 1"}
        ).raise_for_status()
        topic = people["poster"].post(f"{base}/api/community", json={
            "action": "topic", "title": "Cheap watches, visit this site"}).json()["id"]
        context = browser.new_context(locale="en-GB")
        page = context.new_page()
        page.clock.install()
        polls: list[int] = []
        page.on("response", lambda r: polls.append(r.status) if "action=activity" in r.url else None)
        page.goto(f"{base}/q/{topic}?lang=en")
        expect(page.locator("#topic-status")).to_have_text("Open")
        assert people["chief"].post(f"{base}/api/community", json={
            "action": "hide_question", "topic": topic, "reason": "spam"}).ok
        page.clock.run_for(11_000)
        expect(page.locator("#closed-meanwhile")).to_have_text(
            "An admin took this question down just now: it takes no more answers and is no longer shown.")
        expect(page.locator("#topic-status")).to_have_text("Closed")
        asked = len(polls)
        page.clock.run_for(40_000)
        page.wait_for_timeout(200)
        assert len(polls) == asked == 1 and polls == [404]
        context.close()
    finally:
        live.stop()


def answer_as_new_member(base: str, topic: str, username: str) -> None:
    """One more member's agent answers ``topic`` over REST."""
    member = registered(base, username)
    token = member.post(f"{base}/api/external/manage", json={
        "action": "register", "name": f"{username}的虾", "perspective": "先给结论。",
        "client": "codex"}).json()["token"]
    agent = {"Authorization": f"Bearer {token}"}
    task = requests.post(f"{base}/api/external", headers=agent, json={
        "action": "claim_task", "topic": topic, "requestId": str(uuid.uuid4())}).json()["task"]["id"]
    stored = requests.post(f"{base}/api/external", headers=agent, json={
        "action": "submit_result", "taskId": task, **good_result()})
    assert stored.ok, stored.text


def test_a_reader_keeps_their_place_and_hears_each_new_answer(browser, server):  # noqa: F811
    """A new answer re-rendered the discussion under the reader's focus, which fell back to
    the page (the next Tab started over at the top); and from the second new answer on, the
    live region's words did not change, so nothing was said."""
    from playwright.sync_api import expect

    base = server.url
    asker = registered(base, "place_asker")
    topic = asker.post(f"{base}/api/community", json={
        "action": "topic", "title": "SQLite 的在线备份要注意什么？"}).json()["id"]
    answer_as_new_member(base, topic, "place_first")
    problems: list[str] = []
    context = browser.new_context(locale="zh-CN")
    context.add_cookies([{"name": "xia_session", "value": asker.cookies.get("xia_session"),
                          "url": base}])
    page = context.new_page()
    watch(page, problems)
    page.clock.install()
    page.goto(f"{base}/q/{topic}")
    source = page.locator("section.discussion .sources a").first
    source.focus()
    where = source.evaluate("a => [a.closest('[id]').id, a.getAttribute('href')]")

    answer_as_new_member(base, topic, "place_second")
    page.clock.run_for(11_000)
    expect(page.locator("#answer-count")).to_have_text("2 条回答")
    assert page.evaluate("() => document.activeElement.tagName") == "A"
    assert page.evaluate("() => [document.activeElement.closest('[id]').id, "
                         "document.activeElement.getAttribute('href')]") == where
    expect(page.locator(".live-new")).to_be_visible()

    page.evaluate("() => { document.getElementById('announce').textContent = ''; }")
    answer_as_new_member(base, topic, "place_third")
    page.clock.run_for(11_000)
    expect(page.locator("#answer-count")).to_have_text("3 条回答")
    page.clock.run_for(100)  # the announcement's pause, so that the same words are news
    expect(page.locator("#announce")).to_have_text("有新回答入库，讨论已更新。")
    assert problems == []
    context.close()


def test_the_header_count_follows_on_a_page_left_open(browser, server):  # noqa: F811
    """A page left open showed the unread count it was drawn with for as long as it stayed
    open: an answer to one's question arriving meanwhile went unseen until a reload."""
    from playwright.sync_api import expect

    base = server.url
    problems: list[str] = []
    context = browser.new_context(locale="en-GB")
    page = context.new_page()
    watch(page, problems)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "action=unread" in r.url else None)
    page.clock.install()
    assert page.request.post(f"{base}/api/community", data={
        "action": "register", "username": "header_owner", "password": "correct horse 1"}).ok
    assert page.request.post(f"{base}/api/communities",
                             data={"action": "join", "community": "lobby"}).ok
    topic = page.request.post(f"{base}/api/community", data={
        "action": "topic", "title": "Does an online SQLite backup block writers?"}).json()["id"]
    page.goto(f"{base}/communities")
    count = page.locator(".inbox-link .unread-count")
    expect(count).to_have_count(0)

    answer_as_new_member(base, topic, "header_helper")
    page.clock.run_for(61_000)
    expect(count).to_have_text("1")
    expect(count).to_have_attribute("aria-label", "Unread notifications: 1")
    answer_as_new_member(base, topic, "header_helper2")
    page.clock.run_for(61_000)
    expect(count).to_have_text("2")

    assert page.request.post(f"{base}/api/community", data={"action": "notifications_read"}).ok
    page.clock.run_for(61_000)
    expect(count).to_have_count(0)
    # A page not seen does not ask; looked at again, it asks at once.
    page.evaluate("""() => Object.defineProperty(document, 'hidden',
                                                 {value: true, configurable: true})""")
    answer_as_new_member(base, topic, "header_helper3")
    page.clock.run_for(200_000)
    page.wait_for_timeout(300)
    assert len(asked) == 3  # the ticks that found the page hidden asked nothing
    expect(count).to_have_count(0)
    page.evaluate("""() => { Object.defineProperty(document, 'hidden', {value: false,
                                                                         configurable: true});
                             document.dispatchEvent(new Event('visibilitychange')); }""")
    expect(count).to_have_text("1")
    # logged out elsewhere: the page stops asking
    assert page.request.post(f"{base}/api/community", data={"action": "logout"}).ok
    page.clock.run_for(61_000)
    page.wait_for_timeout(300)  # the answer to the fourth question comes back
    page.clock.run_for(300_000)
    page.wait_for_timeout(300)
    assert len(asked) == 5, asked  # the last one told the page it was logged out
    expect(count).to_have_text("1")  # as it was
    assert problems == []
