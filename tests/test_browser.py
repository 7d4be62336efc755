"""One whole journey in a real browser (Debian's Chromium via Playwright) against a real server.

A person registers, joins the lobby, asks with private context, creates an agent and reads
its token off the page; the agent (plain HTTP here) claims and answers; the person reads the
answer with its sources, cancels another task, confirms a memory, allows public use of the
answer, builds and publishes an answer card, logs out and sees the card as a visitor.
Screenshots of the main pages go to test-artifacts/screenshots/.
"""
from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path

import pytest
import requests

from conftest import LiveServer, good_result

pytestmark = [pytest.mark.slow, pytest.mark.once]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
SHOTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "screenshots"
PRIVATE = "私密：线上库 40 GB，每晚 3 点有批量写入。"


@pytest.fixture(scope="module")
def browser():
    if shutil.which("chromium") is None and not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: run `apt-get install chromium` (scripts/test.sh does)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright is missing: install the test extra (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def server(tmp_path):
    live = LiveServer(tmp_path / "browser")
    yield live
    live.stop()


class Agent:
    """The person's own agent, speaking REST with the token read off the page."""

    def __init__(self, base: str, token: str):
        self.base = base
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def post(self, action: str, **fields):
        return self.session.post(f"{self.base}/api/external", json={"action": action, **fields})

    def get(self, action: str, **params):
        return self.session.get(f"{self.base}/api/external", params={"action": action, **params})

    def claim(self, topic: str) -> str:
        r = self.post("claim_task", topic=topic, requestId=str(uuid.uuid4()))
        assert r.status_code == 200, r.text
        return r.json()["task"]["id"]


def shot(page, name: str, **options) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True, **options)


def watch(page, problems: list[str]) -> None:
    """Collect script errors and CSP violations; failed API calls we cause are expected."""
    page.on("pageerror", lambda exc: problems.append(f"pageerror: {exc}"))
    page.on("console", lambda msg: problems.append(f"console: {msg.text}")
            if msg.type == "error" and "Failed to load resource" not in msg.text else None)


def test_whole_journey(browser, server):
    from playwright.sync_api import expect

    base = server.url
    problems: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
    page = context.new_page()
    watch(page, problems)

    # Register: the page lands home, signed in.
    page.goto(f"{base}/register")
    page.fill("#f-username", "journey_user")
    page.fill("#f-password", "correct horse 1")
    page.fill("#f-passwordAgain", "correct horse 2")  # a typo in the second typing
    page.click("form.api-form button[type=submit]")
    expect(page.locator("#f-passwordAgain-error")).to_have_text("两次输入的密码不一样，请再输入一次。")
    assert page.url == f"{base}/register"
    page.fill("#f-passwordAgain", "correct horse 1")
    page.click("form.api-form button[type=submit]")
    page.wait_for_url(f"{base}/")
    expect(page.locator(".whoami")).to_contain_text("journey_user")

    # Join the lobby.
    page.goto(f"{base}/c/lobby")
    page.get_by_role("button", name="加入社区").click()
    expect(page.locator(".head-actions .btn.secondary")).to_have_text("退出社区")
    expect(page.locator("#flash")).to_have_text("已加入社区。")
    assert page.request.get(f"{base}/api/communities?id=lobby").json()["community"]["joined"]

    # Ask. A title of spaces is refused next to the title, and nothing typed is lost.
    page.goto(f"{base}/ask")
    page.get_by_label("查事实").check()
    page.fill("#f-title", "   ")
    page.fill("#f-description", "公开：服务运行时需要备份。")
    page.fill("#f-privateContext", PRIVATE)
    page.select_option("#f-island", "tech")
    page.click("form.api-form button[type=submit]")
    expect(page.locator("#f-title-error")).to_be_visible()
    expect(page.locator("#f-title")).to_have_attribute("aria-invalid", "true")
    assert page.input_value("#f-privateContext") == PRIVATE
    assert page.input_value("#f-description") == "公开：服务运行时需要备份。"
    # So is one that hides a text-direction override, and the hint names that rule too.
    page.fill("#f-title", "如何备份\u202e数据库")
    expect(page.locator("#f-title-error")).to_be_hidden()  # the old error went with the edit
    expect(page.locator("#f-title")).not_to_have_attribute("aria-invalid", "true")
    page.click("form.api-form button[type=submit]")
    expect(page.locator("#f-title-error")).to_contain_text("改变文字方向的控制字符")
    page.fill("#f-title", "如何在 SQLite 服务运行时安全地做在线备份？")
    # A secret is refused at the field that holds it, with what is wrong, and kept there.
    page.fill("#f-privateContext", PRIVATE + " ghp_" + "A" * 36)
    page.click("form.api-form button[type=submit]")
    expect(page.locator("#f-privateContext-error")).to_have_text(
        "内容里像是有密钥、Token 或私钥。请删除后再提交。")
    expect(page.locator("#f-title-error")).to_be_hidden()
    assert page.input_value("#f-title") == "如何在 SQLite 服务运行时安全地做在线备份？"
    page.fill("#f-privateContext", PRIVATE)
    shot(page, "ask")
    page.click("form.api-form button[type=submit]")
    page.wait_for_url(re.compile(r"/q/[A-Za-z0-9_:-]+$"))
    topic = page.url.rsplit("/", 1)[1]
    expect(page.locator("#private-context")).to_have_text(PRIVATE)
    expect(page.locator(".badge.intent")).to_have_text("查事实")
    expect(page.locator("#flash")).to_have_text("问题已发布。成员的智能体可以来领取了。")

    # Create an agent: the token is on the page exactly once, with ready-made client settings.
    page.goto(f"{base}/agents")
    page.fill("#f-name", "我的查证虾")
    page.fill("#f-perspective", "先给结论，再给可复核的来源。")
    page.select_option("#f-client", "claude-code")
    page.click("form.api-form button[type=submit]")
    expect(page.locator("#token-panel")).to_be_visible()
    token = page.input_value("#token-value")
    assert len(token) >= 32
    expect(page.locator("#agent-list")).to_contain_text("我的查证虾")
    expect(page.locator("#config-claude-code")).to_have_attribute("open", "")
    expect(page.locator("#cfg-claude-code")).to_contain_text(f"{base}/api/external/mcp")
    expect(page.locator("#cfg-codex")).to_contain_text("--bearer-token-env-var XIA_CHEDAN_AGENT_TOKEN")
    shot(page, "agents-token", mask=[page.locator("#token-value")])

    # The agent claims and answers over REST; a second claim stays leased.
    agent = Agent(base, token)
    answered = agent.claim(topic)
    r = agent.post("submit_result", taskId=answered, **good_result())
    assert r.status_code == 200, r.text
    message_id = r.json()["messageId"]
    other = agent.claim(topic)

    page.reload()
    expect(page.locator("#token-panel")).to_be_hidden()
    assert token not in page.content()
    expect(page.locator("td.last-used").first).not_to_have_text("从未")

    # The asker reads the answer with its sources, labelled as self-reported.
    page.goto(f"{base}/q/{topic}")
    answer = page.locator(f"#m-{message_id}")
    expect(answer.locator(".conclusion")).to_contain_text("在线备份 API")
    cite = answer.locator("a.cite", has_text="[S1]")
    expect(cite).to_have_attribute("href", f"#m-{message_id}-s1")
    source = page.locator(f"#m-{message_id}-s1 a")
    # its title, and (for screen readers) that it opens in a new tab
    expect(source).to_have_accessible_name("SQLite Online Backup API （在新标签页打开）")
    expect(source).to_have_attribute("href", "https://www.sqlite.org/backup.html")
    expect(answer.locator(".badge.self-reported")).to_be_visible()
    expect(answer.locator(".tools")).to_contain_text("sqlite3")
    expect(answer).to_contain_text("超大数据库的备份耗时未实测")
    cite.click()
    assert page.url.endswith(f"#m-{message_id}-s1")
    shot(page, "question-asker")

    # Cancel the other task; Escape first backs out without doing anything.
    page.goto(f"{base}/tasks")
    expect(page.locator(".task")).to_have_count(2)
    cancel = page.locator(f"#task-{other} button", has_text="取消任务")
    cancel.click()
    expect(page.locator("#confirm-dialog")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#confirm-dialog")).to_be_hidden()
    assert agent.get("get_task_status", taskId=other).json()["task"]["state"] == "leased"
    shot(page, "tasks")
    cancel.click()
    page.click("#confirm-yes")
    expect(page.locator(f"#task-{other} .badge")).to_have_text("已取消")
    expect(page.locator(f"#task-{other}")).to_contain_text("你取消了这个任务。")
    assert agent.get("get_task_status", taskId=other).json()["task"]["state"] == "failed"

    # Confirm the memory the answer produced.
    page.goto(f"{base}/memories")
    page.get_by_role("button", name="确认").click()
    expect(page.locator("#flash")).to_have_text("记忆已确认。")
    memories = page.request.get(f"{base}/api/community?action=memories").json()["memories"]
    assert [m["state"] for m in memories] == ["active"]
    shot(page, "memories")

    # Allow public use of the answer, then build and publish a card.
    page.goto(f"{base}/q/{topic}")
    page.get_by_role("button", name="允许用于公开答案卡").click()
    expect(answer.locator(".badge.shared")).to_be_visible()
    page.get_by_role("button", name="生成答案卡预览").click()
    expect(page.locator(".asker .answer-card")).to_contain_text("我的查证虾")
    page.get_by_role("button", name="发布答案卡").click()
    page.click("#confirm-yes")
    expect(page.locator("#flash")).to_have_text("答案卡已发布。")
    card = page.request.get(f"{base}/api/community?action=card&topic={topic}").json()["card"]
    assert card is not None and card["state"] == "published"
    # its link, whole, to copy (the page itself holds only the path: it is kept per reader)
    page.reload()
    expect(page.locator("#card-link")).to_have_value(f"{base}/q/{topic}#answer-card")
    shot(page, "question-card")

    # A community made on its page opens with a word that it was made, and an invitation.
    page.goto(f"{base}/communities")
    page.fill("#f-name", "备份读书会")
    page.locator("#create form.api-form button[type=submit]").click()
    page.wait_for_url(re.compile(r"/c/[A-Za-z0-9_:-]+$"))
    expect(page.locator("#flash")).to_have_text("社区已创建，你已加入。")
    expect(page.locator("p.empty")).to_have_text("这里还没有问题。来问第一个吧。")
    expect(page.locator("p.empty a")).to_have_attribute("href", re.compile(r"^/ask\?community="))

    # Log out; a visitor sees the question and the card, never the discussion or the
    # private context.
    page.get_by_role("button", name="退出").click()
    page.wait_for_url(f"{base}/")
    expect(page.get_by_role("link", name="登录")).to_be_visible()
    shot(page, "home")
    page.goto(f"{base}/q/{topic}")
    expect(page.locator(".answer-card")).to_contain_text("我的查证虾")
    expect(page.locator(".locked")).to_be_visible()
    assert PRIVATE not in page.content()
    assert page.locator(".answer").count() == 0
    shot(page, "question-public")

    # English is one click away and remembered.
    page.get_by_role("link", name="English").click()
    expect(page.locator("h2#discussion-title")).to_contain_text("Discussion")
    page.goto(f"{base}/c/lobby")
    expect(page.get_by_role("link", name="Log in to join")).to_be_visible()
    shot(page, "community-en")
    context.close()

    # On a phone the pages fit the screen.
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                has_touch=True, locale="zh-CN")
    mobile = phone.new_page()
    watch(mobile, problems)
    for path, name in (("/", "phone-home"), (f"/q/{topic}", "phone-question"),
                       ("/register", "phone-register")):
        mobile.goto(base + path)
        overflow = mobile.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{path} is {overflow}px wider than a phone screen"
        shot(mobile, name)
    phone.close()

    assert problems == []
