"""The admin page and the agent controls in a real browser (Debian's Chromium via Playwright)
against a real `lobbytalks serve`: both languages, desktop and phone widths.

Screenshots go to a temporary folder (printed by the test) for review.
"""
from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

import pytest
import requests

from conftest import LiveServer, good_result
from test_browser import browser, watch  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.slow, pytest.mark.once]

SHOTS = Path(tempfile.gettempdir()) / "lobbytalks-screenshots" / "moderation"
PRIVATE = "私密：客户名单在 /srv/crm，不要外传。"
ADMIN = {"LOBBYTALKS_ADMIN_USERNAME": "chief", "LOBBYTALKS_ADMIN_PASSWORD": "chief password 1"}
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


@pytest.fixture
def server(tmp_path):
    live = LiveServer(tmp_path / "browser", env=ADMIN)
    yield live
    live.stop()


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def fits(page) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{page.url} is {overflow}px wider than the screen"


def log_in(page, base: str, username: str, password: str = "correct horse 1") -> None:
    page.goto(f"{base}/login")
    page.fill("#f-username", username)
    page.fill("#f-password", password)
    page.click("form.api-form button[type=submit]")
    page.wait_for_url(f"{base}/")


def signed_in(browser, base: str, problems: list[str], username: str,
              password: str = "correct horse 1", *, locale: str, screen: dict):
    """A fresh browser context logged in as ``username``, its errors collected."""
    context, page = fresh_page(browser, problems, locale=locale, screen=screen)
    log_in(page, base, username, password)
    return context, page


def fresh_page(browser, problems: list[str], *, locale: str, screen: dict):
    """A fresh browser context and its page, its errors collected."""
    context = browser.new_context(locale=locale, **screen)
    page = context.new_page()
    watch(page, problems)
    return context, page


def answered_question(base: str) -> dict:
    """An asker's question with private context, answered by the member's agent."""
    asker = requests.Session()
    asker.post(f"{base}/api/community", json={"action": "register", "username": "asker_b",
                                              "password": "correct horse 1"}).raise_for_status()
    asker.post(f"{base}/api/communities", json={"action": "join", "community": "lobby"}).raise_for_status()
    topic = asker.post(f"{base}/api/community", json={
        "action": "topic", "title": "怎样给 SQLite 做在线备份？", "privateContext": PRIVATE}).json()["id"]
    return {"asker": asker, "topic": topic, **answered_by_member(base, topic)}


def answered_by_member(base: str, topic: str) -> dict:
    """member_b registers, connects an agent and it answers the topic."""
    member = requests.Session()
    member.post(f"{base}/api/community", json={"action": "register", "username": "member_b",
                                               "password": "correct horse 1"}).raise_for_status()
    issued = member.post(f"{base}/api/external/manage", json={
        "action": "register", "name": "备份虾", "perspective": "先给结论。", "client": "codex"}).json()
    agent = requests.Session()
    agent.headers["Authorization"] = f"Bearer {issued['token']}"
    agent.post(f"{base}/api/external", json={"action": "join_community", "community": "lobby"})
    task = agent.post(f"{base}/api/external", json={
        "action": "claim_task", "topic": topic, "requestId": str(uuid.uuid4())}).json()["task"]["id"]
    message = agent.post(f"{base}/api/external", json={
        "action": "submit_result", "taskId": task, **good_result()}).json()["messageId"]
    return {"member": member, "agent": agent, "message": message, "profile": issued["profileId"]}


def test_agent_controls_in_both_languages_and_widths(browser, server):  # noqa: F811
    from playwright.sync_api import expect

    base = server.url
    data = answered_question(base)
    problems: list[str] = []

    context, page = signed_in(browser, base, problems, "member_b", locale="zh-CN", screen=DESKTOP)
    page.goto(f"{base}/agents")
    card = page.locator(f"#agent-{data['profile']}")
    card.locator("summary", has_text="修改名称或讨论原则").click()
    card.locator("input[name=name]").fill("改名后的虾")
    card.locator("textarea[name=perspective]").fill("只引用一手来源。")
    shot(page, "agents-edit-zh-desktop")
    card.get_by_role("button", name="保存修改").click()
    expect(page.locator("#flash")).to_have_text("智能体已更新。")
    expect(page.locator(f"#agent-{data['profile']}-name")).to_contain_text("改名后的虾")
    listed = data["member"].get(f"{base}/api/external/manage").json()["agents"][0]
    assert listed["name"] == "改名后的虾" and listed["perspective"] == "只引用一手来源。"
    # The answer keeps the name it was given under.
    answers = data["asker"].get(f"{base}/api/community", params={"topic": data["topic"]}).json()["messages"]
    assert [m["name"] for m in answers] == ["备份虾"]
    context.close()

    phone, mobile = signed_in(browser, base, problems, "member_b", locale="en", screen=PHONE)
    mobile.goto(f"{base}/agents?lang=en")
    card = mobile.locator(f"#agent-{data['profile']}")
    card.locator("summary", has_text="Rename or change how it answers").click()
    fits(mobile)
    shot(mobile, "agents-edit-en-phone")
    card.get_by_role("button", name="Archive 改名后的虾").click()
    expect(mobile.locator("#confirm-dialog")).to_be_visible()
    expect(mobile.locator("#confirm-text")).to_contain_text("cannot be undone")
    mobile.click("#confirm-yes")
    expect(mobile.locator("#flash")).to_have_text("Agent archived.")
    expect(mobile.locator("#archived-agents")).to_contain_text("改名后的虾")
    expect(mobile.locator("#agent-list")).to_contain_text("You have no agents yet.")
    fits(mobile)
    shot(mobile, "agents-archived-en-phone")
    listing = data["member"].get(f"{base}/api/external/manage").json()
    assert listing["agents"] == [] and listing["archivedAgents"][0]["id"] == data["profile"]
    refused = data["agent"].get(f"{base}/api/external", params={"action": "list_topics"})
    assert refused.status_code == 401
    phone.close()
    assert problems == []


def test_admin_page_in_both_languages_and_widths(browser, server):  # noqa: F811
    from playwright.sync_api import expect

    base = server.url
    data = answered_question(base)
    data["asker"].post(f"{base}/api/community", json={"action": "close", "topic": data["topic"]})
    problems: list[str] = []

    # Someone who is not an admin finds no admin page and no link to it.
    context, page = signed_in(browser, base, problems, "asker_b", locale="zh-CN", screen=DESKTOP)
    expect(page.locator('a[href="/admin"]')).to_have_count(0)
    assert page.goto(f"{base}/admin").status == 404
    context.close()

    context, page = signed_in(browser, base, problems, "chief", "chief password 1",
                              locale="zh-CN", screen=DESKTOP)
    page.get_by_role("link", name="管理").click()
    page.wait_for_url(f"{base}/admin")
    expect(page.locator("h1")).to_have_text("管理")
    answer = page.locator(f"#admin-m-{data['message']}")
    expect(answer.locator(".withheld")).to_be_visible()
    assert PRIVATE not in page.content() and "在线备份 API" not in page.content()
    shot(page, "admin-zh-desktop")
    # The forms by id and by name keep their fields and button on one line (the id's hint
    # under its field pushed the reason down, level with the hint, and the button with it).
    for form in ("#hide-by-id", "#suspend-by-name"):
        boxes = [page.locator(f"{form} {part}").bounding_box()
                 for part in (".field:first-child input", ".field:nth-child(2) input", "button")]
        inputs_top, other_top = boxes[0]["y"], boxes[1]["y"]
        middle = boxes[2]["y"] + boxes[2]["height"] / 2
        assert abs(inputs_top - other_top) < 1 and \
            inputs_top < middle < inputs_top + boxes[0]["height"], (form, boxes)

    # Hide the answer: a reason is required, then it is gone for its readers.
    answer.get_by_role("button", name="隐藏回答").click()
    assert answer.locator("input[name=reason]").evaluate("el => !el.validity.valid")
    answer.locator("input[name=reason]").fill("含有人身攻击")
    answer.get_by_role("button", name="隐藏回答").click()
    expect(page.locator("#flash")).to_have_text("回答已隐藏。")
    expect(page.locator(f"#admin-m-{data['message']} .badge.hidden-answer")).to_be_visible()
    expect(page.locator(f"#admin-m-{data['message']}")).to_contain_text("含有人身攻击")
    read = data["asker"].get(f"{base}/api/community", params={"topic": data["topic"]}).json()
    assert read["messages"] == [] and read["messageCount"] == 0  # no longer counted

    # Suspend the member: their session and login stop working at once.
    person = page.locator("#admin-u-member_b")
    person.locator("input[name=reason]").fill("批量发广告")
    person.get_by_role("button", name="停用账号").click()
    # so drastic a step asks first (it acted on the first click); "not now" changes nothing
    dialog = page.get_by_role("dialog", name="请确认")
    expect(dialog).to_contain_text("停用 member_b？其所有登录都会结束")
    dialog.get_by_role("button", name="先不").click()
    assert data["member"].get(f"{base}/api/external/manage").status_code == 200
    person.get_by_role("button", name="停用账号").click()
    dialog.get_by_role("button", name="停用账号").click()
    expect(page.locator("#flash")).to_have_text("账号已停用。")
    expect(page.locator("#admin-u-member_b")).to_contain_text("批量发广告")
    assert data["member"].get(f"{base}/api/external/manage").status_code == 401
    login = requests.post(f"{base}/api/community", json={
        "action": "login", "username": "member_b", "password": "correct horse 1"})
    assert login.status_code == 403 and "批量发广告" in login.json()["error"]

    # Reopen the closed question.
    question = page.locator(f"#admin-q-{data['topic']}")
    question.get_by_role("button", name="重新开放").click()
    expect(page.locator("#flash")).to_have_text("问题已重新开放。")
    expect(page.locator(f"#admin-q-{data['topic']} .badge.status-open")).to_be_visible()
    assert data["asker"].get(f"{base}/api/community",
                             params={"topic": data["topic"]}).json()["topic"]["status"] == "open"
    log = page.locator("#admin-log")
    expect(log).to_contain_text("隐藏回答")
    expect(log).to_contain_text("停用账号")
    expect(log).to_contain_text("重新开放问题")
    shot(page, "admin-after-zh-desktop")
    context.close()

    # English on a phone: the page fits, and the suspension can be lifted.
    phone, mobile = signed_in(browser, base, problems, "chief", "chief password 1",
                              locale="en", screen=PHONE)
    mobile.goto(f"{base}/admin?lang=en")
    expect(mobile.locator("h2#admin-answers-title")).to_have_text("Recent answers")
    fits(mobile)
    # The audit log reads on a phone without scrolling sideways inside its box either.
    assert mobile.locator("#admin-log .table-wrap").evaluate("el => el.scrollWidth <= el.clientWidth")
    shot(mobile, "admin-en-phone")
    mobile.locator("#admin-u-member_b").get_by_role("button", name="Reinstate").click()
    expect(mobile.locator("#flash")).to_have_text("Account reinstated.")
    expect(mobile.locator(f"#admin-m-{data['message']}").get_by_role("button", name="Show again")).to_be_visible()
    fits(mobile)
    phone.close()
    assert requests.post(f"{base}/api/community", json={
        "action": "login", "username": "member_b", "password": "correct horse 1"}).status_code == 200
    print(f"screenshots in {SHOTS}")
    assert problems == []


HEADER_TOPS = """() => ['.brand', '.main-nav', '.site-search', '.account'].map(
    (s) => Math.round(document.querySelector(s).getBoundingClientRect().top))"""


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_admins_header_keeps_one_row_at_1366(browser, server, lang):  # noqa: F811
    """The admin link is one more navigation item; with the unread count beside the inbox
    the English header must still fit."""
    chief = requests.Session()
    chief.post(f"{server.url}/api/community", json={"action": "login", **{
        "username": "chief", "password": "chief password 1"}}).raise_for_status()
    chief.post(f"{server.url}/api/communities", json={"action": "join", "community": "lobby"})
    topic = chief.post(f"{server.url}/api/community", json={
        "action": "topic", "title": "怎样给 SQLite 做在线备份？"}).json()["id"]
    answered_by_member(server.url, topic)
    problems: list[str] = []
    screen = {"viewport": {"width": 1366, "height": 900}}
    context, page = signed_in(browser, server.url, problems, "chief", "chief password 1",
                              locale="en" if lang == "en" else "zh-CN", screen=screen)
    for path in ("/", "/admin", "/questions", "/inbox"):
        page.goto(f"{server.url}{path}?lang={lang}")
        assert page.locator('.main-nav a[href="/admin"]').is_visible(), path
        assert page.locator(".inbox-link .unread-count").inner_text() == "1", path
        tops = page.evaluate(HEADER_TOPS)
        assert max(tops) - min(tops) < 12, (path, tops)
        fits(page)
    shot(page, f"admin-header-{lang}-1366")
    context.close()
    assert problems == []


@pytest.mark.parametrize("lang, reason, said", [
    ("en", "repeated advertising", "The reason they gave: repeated advertising."),
    ("zh", "批量发广告", "管理员给出的原因：批量发广告。"),
])
def test_a_suspended_person_is_told_the_reason_at_login(browser, server, lang, reason,
                                                       said):  # noqa: F811
    from playwright.sync_api import expect

    base = server.url
    requests.post(f"{base}/api/community", json={
        "action": "register", "username": "spammer_b", "password": "correct horse 1"}
    ).raise_for_status()
    chief = requests.Session()
    chief.post(f"{base}/api/community", json={
        "action": "login", "username": "chief", "password": "chief password 1"}).raise_for_status()
    chief.post(f"{base}/api/community", json={
        "action": "suspend_user", "username": "spammer_b", "reason": reason}).raise_for_status()
    problems: list[str] = []
    context, page = fresh_page(browser, problems, locale="en-GB" if lang == "en" else "zh-CN",
                               screen=DESKTOP)
    page.goto(f"{base}/login?lang={lang}")
    page.fill("#f-username", "spammer_b")
    page.fill("#f-password", "correct horse 1")
    page.click("form.api-form button[type=submit]")
    expect(page.locator(".form-error")).to_contain_text(said)
    shot(page, f"suspended-login-{lang}")
    context.close()
    assert problems == []


# How much of an element shows through its own and its ancestors' opacity.
SHOWN = """(selector) => { let e = document.querySelector(selector), shown = 1;
    for (; e; e = e.parentElement) shown *= Number(getComputedStyle(e).opacity);
    return shown; }"""


def test_a_hidden_answers_badges_stay_readable_and_fit_a_phone(browser, server):  # noqa: F811
    """Its author's English badge ran off 375-405 px phones (it did not wrap above 360 px);
    on /admin the row was faded, its badges 3.6-4.3:1 against 4.5:1 (WCAG 1.4.3)."""
    from playwright.sync_api import expect
    from test_browser_pages import CONTRAST

    base = server.url
    data = answered_question(base)
    admin = requests.Session()
    admin.post(f"{base}/api/community", json={"action": "login", "username": "chief",
                                              "password": "chief password 1"}).raise_for_status()
    admin.post(f"{base}/api/community", json={"action": "hide_answer", "message": data["message"],
                                              "reason": "spam"}).raise_for_status()
    problems: list[str] = []
    for width in (375, 390, 405):
        # not is_mobile: a phone's browser zooms out to the widest content, hiding it
        context, page = signed_in(browser, base, problems, "member_b", locale="en-GB",
                                  screen={"viewport": {"width": width, "height": 800}})
        page.goto(f"{base}/q/{data['topic']}?lang=en")
        expect(page.get_by_text("An admin hid your agent's answer")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        context.close()
    context, page = signed_in(browser, base, problems, "chief", "chief password 1",
                              locale="en", screen=DESKTOP)
    page.goto(f"{base}/admin?lang=en")
    badge = f"#admin-m-{data['message']} .badge.hidden-answer"
    expect(page.locator(badge)).to_be_visible()
    assert page.evaluate(SHOWN, badge) == 1
    assert page.evaluate(CONTRAST, badge) >= 4.5
    context.close()
    assert problems == []


def test_suspending_with_every_answer_hidden_says_how_many(browser, server):  # noqa: F811
    """The admin ticking "Also hide all their answers" was told only "Account suspended.":
    whether and how much it hid was in the answer (answersHidden) and nowhere on the page."""
    from playwright.sync_api import expect

    base = server.url
    data = answered_question(base)
    problems: list[str] = []
    context, page = signed_in(browser, base, problems, "chief", "chief password 1",
                              locale="en", screen=DESKTOP)
    page.goto(f"{base}/u/member_b?lang=en")
    page.get_by_label("Reason (required): member_b").fill("flooding")
    page.get_by_label("Also hide all their answers: member_b").check()
    page.get_by_role("button", name="Suspend: member_b").click()
    page.get_by_role("dialog").get_by_role("button", name="Suspend").click()
    expect(page.locator("#flash")).to_have_text("Account suspended and 1 of their answers hidden.")
    read = data["asker"].get(f"{base}/api/community", params={"topic": data["topic"]}).json()
    assert read["messageCount"] == 0  # and it did
    context.close()
    assert problems == []


def test_an_answer_link_pasted_into_hide_by_id_becomes_its_id(browser, server):  # noqa: F811
    """The field's hint says to copy what follows #m-; an admin pastes the whole link (it
    was cut at 80 characters, then refused as "please check what you entered")."""
    from playwright.sync_api import expect

    base = server.url
    data = answered_question(base)
    problems: list[str] = []
    context, page = signed_in(browser, base, problems, "chief", "chief password 1",
                              locale="en", screen=DESKTOP)
    page.goto(f"{base}/admin?lang=en")
    link = f"{base}/q/{data['topic']}?answer={data['message']}#m-{data['message']}"
    assert len(link) > 80
    page.locator("#hide-id").fill(link)
    expect(page.locator("#hide-id")).to_have_value(data["message"])
    page.locator("#hide-id-reason").fill("spam")
    page.locator("#hide-by-id button[type=submit]").click()
    expect(page.locator("#flash")).to_have_text("Answer hidden.")
    read = data["asker"].get(f"{base}/api/community", params={"topic": data["topic"]}).json()
    assert read["messages"] == []
    context.close()
    assert problems == []


def test_a_report_sent_from_a_question_page_reaches_the_admins_and_is_settled(
        browser, server):  # noqa: F811
    from playwright.sync_api import expect

    base = server.url
    data = answered_question(base)
    problems: list[str] = []

    context, page = signed_in(browser, base, problems, "asker_b", locale="en", screen=DESKTOP)
    page.goto(f"{base}/q/{data['topic']}")
    answer = page.locator(f"#m-{data['message']}")
    answer.locator("details.report summary").click()
    send = answer.get_by_role("button", name="Send report: 备份虾's answer to “怎样给 SQLite 做在线备份？”")
    send.click()  # a reason is required first
    assert answer.locator("textarea[name=reason]").evaluate("el => !el.validity.valid")
    # spaces pass the browser's check; the server's refusal is told in the report's own words
    answer.locator("textarea[name=reason]").fill("   ")
    send.click()
    expect(answer.locator(".field-error, .form-error").filter(has_text="1–500")).to_have_count(1)
    expect(answer).to_contain_text("Say what is wrong in 1–500 characters (lines are fine)")
    answer.locator("textarea[name=reason]").fill("It advertises a paid course.\nNot an answer.")
    shot(page, "report-en-desktop")
    send.click()
    expect(page.locator("#flash")).to_have_text("Reported to the admins.")
    # sent again while the first waits: said so, not "Reported" over a reason dropped
    answer.locator("details.report summary").click()
    answer.locator("textarea[name=reason]").fill("And it links to a shop.")
    send.click()
    expect(page.locator("#flash")).to_have_text(
        "Your earlier report of this is still waiting for an admin; this new reason was not "
        "added to it.")
    context.close()

    phone, mobile = signed_in(browser, base, problems, "chief", "chief password 1",
                              locale="zh-CN", screen=PHONE)
    mobile.goto(f"{base}/admin")
    reports = mobile.locator("#admin-reports")
    expect(reports.locator("h2")).to_have_text("待处理的举报（1）")
    item = reports.locator(".admin-report")
    expect(item).to_contain_text("asker_b 举报")
    expect(item.locator(".report-reason")).to_have_text("It advertises a paid course.\nNot an answer.")
    expect(item.locator("a.item-title")).to_have_attribute("href", f"/q/{data['topic']}")
    assert PRIVATE not in mobile.content() and "在线备份 API" not in mobile.content()
    fits(mobile)
    shot(mobile, "admin-reports-zh-phone")
    item.locator("input[name=reason]").last.fill("只是语气问题，不处理")
    item.get_by_role("button", name="标记为已处理：备份虾 对“怎样给 SQLite 做在线备份？”的回答").click()
    expect(mobile.locator("#flash")).to_have_text("举报已标记为已处理。")
    expect(mobile.locator("#admin-reports h2")).to_have_text("待处理的举报（0）")
    expect(mobile.locator("#admin-log")).to_contain_text("只是语气问题，不处理")
    phone.close()
    assert problems == []
