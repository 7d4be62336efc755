"""Notifications and the answer-card flow in a real browser (Debian's Chromium via Playwright)
against a real server, in both languages and at phone and desktop widths.

The asker sees the unread count in the header, reads and marks the inbox, learns why no card
can be built and asks the author to share, sees the private-context repeat highlighted in the
preview, publishes, is told when the author withdraws, and republishes once it is shared
again. The other people act over plain HTTP. Screenshots go to the test's temp folder.
"""
from __future__ import annotations

import uuid

import pytest
import requests

from conftest import LiveServer, good_result
from lobbytalks.i18n import translate
from test_browser import browser, watch  # noqa: F401  (the module-scoped browser fixture)
from test_mail import smtp  # noqa: F401  (an SMTP server that keeps what it receives)

pytestmark = [pytest.mark.slow, pytest.mark.once]

TITLE = "怎样备份运行中的 SQLite？"
PRIVATE = "私密：生产库有 40 GB，每天晚上三点跑批量写入任务。"
LEAKY = "备份要避开每天晚上三点跑批量写入任务的时段 [S1]，并用在线备份 API 做一致副本。"
REPEATED = "每天晚上三点跑批量写入任务"
WIDTHS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1366, "height": 900}}


class Author:
    """Another member whose agent answers; acts over plain HTTP."""

    def __init__(self, base: str):
        self.base = base
        self.web = requests.Session()
        self.name = f"author_{uuid.uuid4().hex[:8]}"
        assert self.post("register", username=self.name, password="correct horse 1").ok
        assert self.web.post(f"{base}/api/communities",
                             json={"action": "join", "community": "lobby"}).ok
        token = self.web.post(f"{base}/api/external/manage", json={
            "action": "register", "name": "备份虾", "perspective": "查证",
            "client": "codex"}).json()["token"]
        self.agent = requests.Session()
        self.agent.headers["Authorization"] = f"Bearer {token}"

    def post(self, action: str, **fields):
        return self.web.post(f"{self.base}/api/community", json={"action": action, **fields})

    def answer(self, topic: str, conclusion: str) -> str:
        external = f"{self.base}/api/external"
        task = self.agent.post(external, json={"action": "claim_task", "topic": topic,
                                               "requestId": str(uuid.uuid4())}).json()["task"]["id"]
        r = self.agent.post(external, json={"action": "submit_result", "taskId": task,
                                            **good_result(conclusion=conclusion)})
        assert r.status_code == 200, r.text
        return r.json()["messageId"]

    def share(self, message: str, allowed: bool) -> None:
        assert self.post("share", message=message, sharePublic=allowed).ok


def fits(page) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{page.url} is {overflow}px wider than the window"


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_inbox_and_card_flow(browser, server, tmp_path, lang, width):  # noqa: F811
    from playwright.sync_api import expect

    def tr(key, **values):
        return translate(lang, key, **values)

    def shot(name):
        page.screenshot(path=str(tmp_path / f"{name}-{lang}-{width}.png"), full_page=True)
        fits(page)

    base = server.url
    problems: list[str] = []
    context = browser.new_context(viewport=WIDTHS[width], locale="zh-CN" if lang == "zh" else "en-GB",
                                  is_mobile=width == "phone", has_touch=width == "phone")
    page = context.new_page()
    watch(page, problems)
    asker = f"asker_{uuid.uuid4().hex[:8]}"
    api = f"{base}/api/community"
    assert context.request.post(api, data={"action": "register", "username": asker,
                                           "password": "correct horse 1"}).ok
    assert context.request.post(f"{base}/api/communities",
                                data={"action": "join", "community": "lobby"}).ok
    topic = context.request.post(api, data={"action": "topic", "title": TITLE,
                                            "privateContext": PRIVATE}).json()["id"]
    author = Author(base)
    message = author.answer(topic, LEAKY)

    # The header counts the unread answer; the inbox says who answered what, and marks read.
    page.goto(f"{base}/?lang={lang}")
    expect(page.locator(".inbox-link .unread-count")).to_have_text("1")
    shot("home-unread")
    page.locator(".inbox-link").click()
    item = page.locator(".notification.unread")
    # someone else's agent, with the person it belongs to
    answerer = tr("notify.agent_of", agent="备份虾", owner=author.name)
    expect(item.locator(".item-title")).to_have_text(tr("notify.kind.answer", name=answerer, title=TITLE))
    shot("inbox")
    item.get_by_role("button", name=tr("inbox.mark_read_of", text=tr(
        "notify.kind.answer", name=answerer, title=TITLE))).click()
    expect(page.locator(".notification.read")).to_have_count(1)
    expect(page.locator(".inbox-link .unread-count")).to_have_count(0)
    expect(page.locator("#flash")).to_have_text(tr("inbox.done_read"))
    assert LEAKY not in page.content() and PRIVATE not in page.content()

    # No shareable answer: the page says why, and the asker asks the author.
    page.locator(".notification .item-title").click()
    expect(page.locator("#card-why")).to_have_text(tr("card.none_shared", n=1))
    expect(page.get_by_role("button", name=tr("card.build"))).to_be_disabled()
    page.get_by_role("button", name=tr("card.share_request")).click()
    expect(page.locator("#flash")).to_have_text(tr("card.done_share_request"))
    expect(page.locator(f"#m-{message} .share-ask")).to_contain_text(tr("card.share_requested"))
    shot("question-asked")
    inbox = author.web.get(api, params={"action": "notifications"}).json()["notifications"]
    assert [n["kind"] for n in inbox] == ["share_request"]

    # Shared: the preview highlights the repeated private context, and publishing warns.
    author.share(message, True)
    page.reload()
    page.get_by_role("button", name=tr("card.build")).click()
    expect(page.locator("#flash")).to_have_text(tr("card.done_preview"))
    expect(page.locator("#draft-guard")).to_have_text(tr("guard.preview"))
    expect(page.locator(".asker .answer-card mark.private-repeat")).to_have_text(REPEATED)
    shot("preview-guard")
    page.get_by_role("button", name=tr("card.publish")).click()
    expect(page.locator("#confirm-text")).to_have_text(tr("guard.publish_confirm"))
    page.click("#confirm-yes")
    expect(page.locator("#flash")).to_have_text(tr("card.done_publish"))

    # Withdrawn: the asker is told and the page says a new card is needed; shared again,
    # the same card can come back.
    author.share(message, False)
    page.reload()
    expect(page.locator(".inbox-link .unread-count")).to_have_text("1")
    expect(page.locator("#card-withdrawn")).to_have_text(tr("card.withdrawn"))
    shot("card-withdrawn")
    # Opening an unread notification marks it read.
    page.goto(f"{base}/inbox")
    page.locator(".notification.unread .item-title").click()
    page.wait_for_url(f"**/q/{topic}*")
    for _ in range(50):  # the request that marks it read outlives the inbox page
        if context.request.get(f"{api}?action=notifications").json()["unread"] == 0:
            break
        page.wait_for_timeout(100)
    page.goto(f"{base}/inbox")
    expect(page.locator(".notification.unread")).to_have_count(0)
    expect(page.locator(".inbox-link .unread-count")).to_have_count(0)
    page.goto(f"{base}/q/{topic}")
    author.share(message, True)
    page.reload()
    page.locator("#card-republish").get_by_role("button", name=tr("card.republish")).click()
    page.click("#confirm-yes")
    expect(page.locator("#flash")).to_have_text(tr("card.done_republish"))
    expect(page.locator("#card-withdrawn")).to_have_count(0)
    card = context.request.get(f"{api}?action=card&topic={topic}").json()["card"]
    assert card["state"] == "published" and card["messageIds"] == [message]
    shot("card-republished")

    # The e-mail switch saves, and an address the server refuses is explained at the field.
    page.goto(f"{base}/inbox")
    page.fill("#f-email", "me@localhost")  # the browser accepts it; the server wants a dot
    page.check("#f-emailNotify")
    page.click("#mail-settings button[type=submit]")
    expect(page.locator("#f-email-error")).to_have_text(tr("err.field.email"))
    page.fill("#f-email", "asker@example.org")
    page.click("#mail-settings button[type=submit]")
    expect(page.locator("#flash")).to_have_text(tr("inbox.done_mail"))
    expect(page.locator("#f-email")).to_have_value("asker@example.org")
    shot("inbox-mail")
    context.close()
    assert problems == []


def test_an_address_is_confirmed_with_the_code_mailed_to_it(browser, tmp_path, smtp):  # noqa: F811
    """A new address gets a code by mail; a wrong code is explained at its field; the
    right one confirms it. In both languages, at both widths."""
    import re

    from playwright.sync_api import expect

    server = LiveServer(tmp_path / "live", env={
        "LOBBYTALKS_SMTP_HOST": "127.0.0.1", "LOBBYTALKS_SMTP_PORT": str(smtp.port),
        "LOBBYTALKS_SMTP_SECURITY": "none"})
    try:
        for lang, width in (("en", "desktop"), ("zh", "phone")):
            def tr(key, **values):
                return translate(lang, key, **values)
            problems: list[str] = []
            context = browser.new_context(viewport=WIDTHS[width], is_mobile=width == "phone")
            page = context.new_page()
            watch(page, problems)
            assert context.request.post(f"{server.url}/api/community", data={
                "action": "register", "username": f"mail_{uuid.uuid4().hex[:8]}",
                "password": "correct horse 1"}).ok
            address = f"{lang}@example.org"
            page.goto(f"{server.url}/inbox?lang={lang}")
            page.fill("#f-email", address)
            page.check("#f-emailNotify")
            page.locator("#mail-settings [data-action=notify_settings] [type=submit]").click()
            expect(page.locator("#mail-state")).to_contain_text(
                tr("inbox.mail_unconfirmed", email=address))
            [mail] = smtp.wait(1)
            code = re.search(r"\b(\d{8})\b", mail.get_content()).group(1)
            smtp.envelopes.clear()
            page.fill("#f-code", "00000000" if code != "00000000" else "11111111")
            page.fill("#f-currentPassword", "correct horse 1")  # confirming takes it
            page.locator("#mail-state button[type=submit]").click()
            expect(page.locator("#f-code-error")).to_have_text(tr("err.field.code"))
            page.fill("#f-code", code)
            page.locator("#mail-state button[type=submit]").click()
            expect(page.locator("#flash")).to_have_text(tr("inbox.done_confirm"))
            expect(page.locator("#mail-state")).to_contain_text(tr("inbox.mail_confirmed"))
            page.screenshot(path=str(tmp_path / f"mail-{lang}-{width}.png"), full_page=True)
            fits(page)
            assert problems == []
            context.close()
    finally:
        server.stop()
