"""The question page in a real browser: "Ask my agents", and the live research count and
answers arriving without a reload (Playwright's clock runs the page's 10-second poll)."""
from __future__ import annotations

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
    asker = registered(base, "live_reporter")
    topic = asker.post(f"{base}/api/community", json={
        "action": "topic", "title": "Does VACUUM block readers?"}).json()["id"]
    answer_as_new_member(base, topic, "first_helper")
    context = browser.new_context(locale="en")
    context.add_cookies([{"name": "xia_session", "value": asker.cookies.get("xia_session"),
                          "url": base}])
    page = context.new_page()
    problems: list[str] = []
    watch(page, problems)
    page.clock.install()
    page.goto(f"{base}/q/{topic}?lang=en")
    report = page.locator("section.discussion details.report").first
    report.locator("summary").click()
    report.locator("textarea").fill("It only links to a paid course.")
    answer_as_new_member(base, topic, "second_helper")
    page.clock.run_for(11_000)
    expect(page.locator("#answer-count")).to_contain_text("2")  # the rest of the page follows
    expect(report.locator("textarea")).to_have_value("It only links to a paid course.")
    assert report.evaluate("el => el.open")
    expect(page.locator("section.discussion .conclusion")).to_have_count(1)  # waits meanwhile
    report.locator("textarea").fill("")  # given up: the discussion catches up at the next tick
    page.clock.run_for(11_000)
    expect(page.locator("section.discussion .conclusion")).to_have_count(2)
    context.close()
    assert problems == []


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
