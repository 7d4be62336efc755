"""Search, formatting and profiles in a real browser, at phone and desktop width, both languages.

A visitor types into the header's search box and lands on the all-questions page; filters and
the sort keep what was found; a question's Markdown reads as formatting; the asker's name
leads to a profile. No page scrolls sideways.
"""
from __future__ import annotations

import uuid

import pytest
import requests

from conftest import LiveServer, good_result
from test_browser import browser, watch  # noqa: F401  (the module-wide Chromium fixture)

pytestmark = [pytest.mark.slow, pytest.mark.once]

WIDTHS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1366, "height": 900}}
BACKGROUND = "服务**一直**在写入：\n\n- 40 GB\n- WAL 模式\n\n详见 https://www.sqlite.org/wal.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A server with a few questions, one with a Markdown background and a Markdown answer."""
    live = LiveServer(tmp_path_factory.mktemp("browse") / "data")
    asker = requests.Session()
    base = live.url
    asker.post(base + "/api/community", json={
        "action": "register", "username": "searcher", "password": "correct horse 1"}).raise_for_status()
    asker.post(base + "/api/communities", json={"action": "join", "community": "lobby"}).raise_for_status()
    ask = lambda title, **more: asker.post(base + "/api/community", json={
        "action": "topic", "community": "lobby", "title": title, **more}).json()["id"]
    topic = ask("如何在线备份正在写入的 SQLite 数据库？", description=BACKGROUND)
    ask("Which index makes a JOIN on orders fast?")
    ask("周末去哪里爬山？")
    token = asker.post(base + "/api/external/manage", json={
        "action": "register", "name": "查证虾", "perspective": "先给结论。", "client": "codex"}).json()["token"]
    agent = requests.Session()
    agent.headers["Authorization"] = f"Bearer {token}"
    task = agent.post(base + "/api/external", json={
        "action": "claim_task", "topic": topic, "requestId": str(uuid.uuid4())}).json()["task"]["id"]
    agent.post(base + "/api/external", json={
        "action": "submit_result", "taskId": task,
        **good_result(conclusion="用 **在线备份 API** [S1]，不要直接复制正在写入的文件。")}).raise_for_status()
    yield live, topic
    live.stop()


def no_sideways_scroll(page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("width", list(WIDTHS))
def test_search_browse_formatting_and_profile(browser, site, tmp_path, lang, width):  # noqa: F811
    from playwright.sync_api import expect

    live, topic = site
    base = live.url
    problems: list[str] = []
    context = browser.new_context(viewport=WIDTHS[width], locale="zh-CN")
    page = context.new_page()
    watch(page, problems)

    page.goto(f"{base}/?lang={lang}")
    page.fill("#site-q", "备份")
    page.press("#site-q", "Enter")
    page.wait_for_url(f"{base}/questions?q=%E5%A4%87%E4%BB%BD")
    results = page.locator("ul.list .item-title")
    expect(results).to_have_count(1)
    expect(results.first).to_have_text("如何在线备份正在写入的 SQLite 数据库？")
    expect(page.locator("#site-q")).to_have_value("备份")
    no_sideways_scroll(page)
    page.screenshot(path=str(tmp_path / f"questions-{lang}-{width}.png"), full_page=True)

    # Filters keep the search: unanswered questions matching 备份 are none.
    page.select_option("#answered", "no")
    page.click("form.filters button[type=submit]")
    expect(page.locator("p.empty")).to_be_visible()
    page.select_option("#answered", "any")
    page.select_option("#sort", "answers")
    page.fill("#q", "")
    page.click("form.filters button[type=submit]")
    expect(results).to_have_count(3)
    expect(results.first).to_have_text("如何在线备份正在写入的 SQLite 数据库？")  # the one with an answer

    # The question's Markdown is formatting, its links are marked as user content.
    results.first.click()
    page.wait_for_url(f"{base}/q/{topic}")
    expect(page.locator(".question .md strong").first).to_have_text("一直")
    expect(page.locator(".question .md li")).to_have_count(2)
    link = page.locator('.question .md a[href="https://www.sqlite.org/wal.html"]')
    expect(link).to_have_attribute("rel", "nofollow ugc noopener")
    no_sideways_scroll(page)
    page.screenshot(path=str(tmp_path / f"question-{lang}-{width}.png"), full_page=True)

    # The asker's name leads to a profile with the question on it.
    page.locator("a.person").first.click()
    page.wait_for_url(f"{base}/u/searcher")
    expect(page.locator("h1")).to_have_text("searcher")
    expect(page.locator(f'a[href="/q/{topic}"]')).to_be_visible()
    no_sideways_scroll(page)
    page.screenshot(path=str(tmp_path / f"profile-{lang}-{width}.png"), full_page=True)
    context.close()
    assert problems == []
