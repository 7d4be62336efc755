"""Every page as a person sees it, in Chromium at phone and desktop width, in both languages.

One browser and one real `lobbytalks serve` process for the module; the data is made over
HTTP first. Each check asserts what is on screen (text, visibility, layout) and what the
database then holds; screenshots go to a temporary folder (printed at the end of the run).
"""
from __future__ import annotations

import os
import re
import sqlite3
import uuid
from pathlib import Path

import pytest
import requests

from conftest import LiveServer, good_result
from test_browser import CHROMIUM, CHROMIUM_ARGS, watch

pytestmark = [pytest.mark.slow, pytest.mark.once]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 900}
VIEWS = [("phone", "zh"), ("phone", "en"), ("desktop", "zh"), ("desktop", "en")]
PASSWORD = "correct horse 1"
LONG_NAME = "a_rather_long_username24"   # 24 characters: the longest a username may be


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    """A temporary folder, or LOBBYTALKS_SCREENSHOTS to keep them somewhere to look at."""
    chosen = os.environ.get("LOBBYTALKS_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("screens")
    folder.mkdir(parents=True, exist_ok=True)
    yield folder
    print(f"\nscreenshots: {folder}")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                              args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A live server with a person, same-named communities and agents, a question, an
    answer, a cancelled task and a failed one."""
    data = tmp_path_factory.mktemp("site")
    server = LiveServer(data, env={"LOBBYTALKS_RATE_TOPIC": "3/day"})
    base = server.url

    def person(name: str) -> requests.Session:
        session = requests.Session()
        r = session.post(f"{base}/api/community",
                         json={"action": "register", "username": name, "password": PASSWORD})
        assert r.status_code == 200, r.text
        return session

    owner, other = person(LONG_NAME), person("bob_owner")
    assert owner.post(f"{base}/api/communities", json={"action": "join", "community": "lobby"}).ok
    mine = owner.post(f"{base}/api/communities", json={"action": "create", "name": "读书会"}).json()["id"]
    theirs = other.post(f"{base}/api/communities", json={"action": "create", "name": "读书会"}).json()["id"]
    assert owner.post(f"{base}/api/communities", json={"action": "join", "community": theirs}).ok
    topic = owner.post(f"{base}/api/community", json={
        "action": "topic", "title": "如何在 SQLite 服务运行时安全地做在线备份？", "island": "tech",
        "description": "公开背景。", "privateContext": "私密背景。"}).json()["id"]
    agents = {}
    for name, client in (("查证虾", "codex"), ("查证虾", "claude-code"), ("查证虾 ", "codex")):
        r = owner.post(f"{base}/api/external/manage", json={
            "action": "register", "name": name, "perspective": "先给结论。", "client": client})
        assert r.status_code == 200, r.text
        agents.setdefault("first", r.json())
    token = agents["first"]["token"]
    agent = requests.Session()
    agent.headers["Authorization"] = f"Bearer {token}"

    def claim() -> str:
        r = agent.post(f"{base}/api/external", json={"action": "claim_task", "topic": topic,
                                                     "requestId": str(uuid.uuid4())})
        assert r.status_code == 200, r.text
        return r.json()["task"]["id"]

    answered, cancelled, failed = claim(), claim(), claim()
    # names as agents write them: an MCP tool's, a source titled by its path (no breaks)
    unbroken = good_result()
    unbroken["toolRuns"][0]["name"] = "mcp__claude_ai_Google_Drive__google_drive_search" + "_x" * 15
    unbroken["evidence"][0]["title"] = "github.com/sqlite/sqlite/blob/master/src/wal.c#L1-L200_" * 3
    r = agent.post(f"{base}/api/external", json={"action": "submit_result", "taskId": answered,
                                                 **unbroken})
    assert r.status_code == 200, r.text
    assert owner.post(f"{base}/api/external/manage",
                      json={"action": "cancel_task", "taskId": cancelled}).ok
    assert agent.post(f"{base}/api/external", json={"action": "fail_task", "taskId": failed,
                                                    "error": "找不到可靠来源"}).ok
    yield {"server": server, "base": base, "topic": topic, "mine": mine, "theirs": theirs,
           "cancelled": cancelled, "failed": failed, "db": data / "lobbytalks.db"}
    server.stop()


def query(site, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(site["db"])
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def log_in(page, base: str, username: str = LONG_NAME) -> None:
    r = page.request.post(f"{base}/api/community", data={
        "action": "login", "username": username, "password": PASSWORD})
    assert r.ok, r.text()


def new_page(browser, width: str, lang: str, base: str):
    viewport = PHONE if width == "phone" else DESKTOP
    context = browser.new_context(viewport=viewport, is_mobile=width == "phone",
                                  has_touch=width == "phone",
                                  locale="en-GB" if lang == "en" else "zh-CN")
    page = context.new_page()
    page.goto(f"{base}/?lang={lang}")  # the language cookie is set from here on
    return context, page


@pytest.fixture(scope="module")
def views(browser, site):
    """One signed-in page per (width, language), reused by the tests below."""
    problems: list[str] = []
    opened = {}
    for width, lang in VIEWS:
        context, page = new_page(browser, width, lang, site["base"])
        log_in(page, site["base"])
        watch(page, problems)
        opened[(width, lang)] = page
    yield opened
    for page in opened.values():
        page.context.close()
    assert problems == []


def fits(page) -> None:
    sizes = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert sizes[0] <= sizes[1], f"{page.url} is {sizes[0] - sizes[1]}px wider than the screen"


def paths(site) -> list[tuple[str, str]]:
    return [("home", "/"), ("communities", "/communities"), ("community", "/c/lobby"),
            ("ask", "/ask"), ("question", f"/q/{site['topic']}"), ("agents", "/agents"),
            ("tasks", "/tasks"), ("memories", "/memories"), ("developers", "/developers"),
            ("not-found", "/no/such/page"), ("static-missing", "/static/none.css"),
            ("past-end", "/communities?page=999")]


# --- items 1, 2, 5, 8: every page fits, one heading, the site's frame and icon ---------------

# What one page shows, measured in one round trip (the machine is shared; keep it quick).
LAYOUT = """() => {
    const box = (s) => document.querySelector(s).getBoundingClientRect();
    const nav = document.querySelector('.main-nav a[href="/"]');
    const who = document.querySelector('.whoami');
    return {
        lang: document.documentElement.lang,
        headings: Array.from(document.querySelectorAll('h1'), (h) => h.innerText),
        navHome: nav ? nav.innerText : null,
        navShown: nav ? nav.getBoundingClientRect().width > 0 : false,
        icons: document.querySelectorAll('link[rel=icon]').length,
        whoWidth: who ? who.getBoundingClientRect().width : 0,
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
        tops: ['.brand', '.main-nav', '.account'].map((s) => Math.round(box(s).top)),
        navRows: new Set(Array.from(document.querySelectorAll('.main-nav a'),
                                    (a) => Math.round(a.getBoundingClientRect().top))).size,
        currentInView: (() => {  // the current page's item, whole, inside the navigation row
            const current = document.querySelector('.main-nav [aria-current="page"]');
            if (!current) return true;
            const item = current.getBoundingClientRect(), row = box('.main-nav ul');
            return item.left >= row.left - 1 && item.right <= row.right + 1;
        })(),
        placeholderFits: (() => {  // the header search box shows its whole placeholder
            const input = document.querySelector('#site-q');
            const style = getComputedStyle(input);
            const pen = document.createElement('canvas').getContext('2d');
            pen.font = style.font;
            return pen.measureText(input.placeholder).width <= input.clientWidth
                - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        })(),
    };
}"""


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_pages_of_someone_without_agents_fit_a_phone(browser, site, lang):
    """Their /tasks and question pages offer a link to connect one: a sentence, which must
    wrap like one (it once made /tasks 654 px wide on a 390 px phone)."""
    context, page = new_page(browser, "phone", lang, site["base"])
    log_in(page, site["base"], "bob_owner")
    for path in ("/tasks", f"/q/{site['topic']}", "/agents"):
        page.goto(site["base"] + path)
        fits(page)
    context.close()


@pytest.mark.parametrize("width, lang", VIEWS)
def test_every_page_fits_with_one_heading_and_the_site_frame(views, site, shots, width, lang):
    page = views[(width, lang)]
    for name, path in paths(site):
        page.goto(site["base"] + path)
        shown = page.evaluate(LAYOUT)
        assert shown["lang"] == ("en" if lang == "en" else "zh-CN"), path
        assert len(shown["headings"]) == 1, (path, shown["headings"])
        assert shown["navShown"] and shown["navHome"] == ("Home" if lang == "en" else "首页"), path
        assert shown["icons"] == 1, path
        assert shown["whoWidth"] > 20, path   # the signed-in username stays on screen
        assert shown["scrollWidth"] <= shown["clientWidth"], (path, shown)
        assert shown["placeholderFits"], path
        if width == "desktop":
            # One header row: the brand, the navigation and the account share a line.
            assert max(shown["tops"]) - min(shown["tops"]) < 12, (path, shown["tops"])
        else:
            # The logo and the account share the first row; the navigation is one more row
            # (scrolling sideways), with the current page's item in view.
            brand, _, account = shown["tops"]
            assert abs(brand - account) < 12 and shown["navRows"] == 1, (path, shown)
        assert shown["currentInView"], path
        page.screenshot(path=str(shots / f"{width}-{lang}-{name}.png"))  # the first screen


# Every filter's chosen option and label shown whole: a clipped "All communitie" reads wrong.
FILTERS_SHOWN = """() => Array.from(document.querySelectorAll('form.filters .field'), (field) => {
    const pen = document.createElement('canvas').getContext('2d');
    const label = field.querySelector('label');
    const select = field.querySelector('select');
    const out = {label: label ? label.innerText : null,
                 labelLines: label ? Math.round(label.getBoundingClientRect().height
                                                / parseFloat(getComputedStyle(label).lineHeight)) : 1};
    if (select) {
        const style = getComputedStyle(select);
        pen.font = style.font;
        const text = select.options[select.selectedIndex].text;
        // the room left of the drop-down arrow (about 1.25em in Chromium)
        const room = select.clientWidth - parseFloat(style.paddingLeft)
            - parseFloat(style.paddingRight) - 1.25 * parseFloat(style.fontSize);
        out.choice = text;
        out.fits = pen.measureText(text).width <= room;
    }
    return out;
})"""


@pytest.mark.parametrize("width, lang", VIEWS)
def test_filter_forms_show_every_label_and_choice_whole(views, site, width, lang):
    page = views[(width, lang)]
    for path in ("/questions", "/c/lobby", "/tasks"):
        page.goto(site["base"] + path)
        fields = page.evaluate(FILTERS_SHOWN)
        assert len(fields) >= 3, path
        for field in fields:
            assert field["labelLines"] == 1, (path, field)
            assert field.get("fits", True), (path, field)


@pytest.mark.parametrize("width, lang", [("desktop", "en"), ("phone", "zh")])
def test_error_pages_speak_the_readers_language(views, site, width, lang):
    page = views[(width, lang)]
    for path in ("/no/such/page", "/static/none.css", "/c/nothing_here"):
        response = page.goto(site["base"] + path)
        assert response.status == 404
        heading = page.locator("h1").inner_text()
        assert heading == ("This page or item does not exist." if lang == "en" else "找不到这个页面或对象。")
        assert "Not Found" not in page.content()
    if lang == "en":
        assert page.get_by_text("This community does not exist.").is_visible()


def test_favicon_ico_is_an_icon(browser, site):
    context = browser.new_context()
    response = context.new_page().goto(site["base"] + "/favicon.ico")
    assert response.status == 200 and response.headers["content-type"].startswith("image/svg+xml")
    context.close()


# The contrast ratio (WCAG) of an element's text colour on its background colour.
CONTRAST = """(selector) => {
    const a = document.querySelector(selector);
    const rgb = (s) => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
    const lum = (c) => { const v = c.map((x) => { x /= 255;
        return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
        return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
    const fg = lum(rgb(getComputedStyle(a).color));
    const bg = lum(rgb(getComputedStyle(a).backgroundColor));
    return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
}"""


@pytest.mark.parametrize("width, lang", VIEWS)
def test_active_navigation_item_has_enough_contrast(views, site, width, lang):
    page = views[(width, lang)]
    page.goto(site["base"] + "/developers")
    current = ".main-nav a[aria-current=page]"
    light = page.evaluate(CONTRAST, current)
    page.emulate_media(color_scheme="dark")
    dark = page.evaluate(CONTRAST, current)
    page.emulate_media(color_scheme="light")
    assert light >= 4.5 and dark >= 4.5, (light, dark)


# --- item 2: /developers is an ordinary page with copy buttons -------------------------------------

@pytest.mark.parametrize("width, lang", [("phone", "en"), ("desktop", "zh")])
def test_developers_page_has_the_agents_snippets_and_copy_buttons(views, site, width, lang):
    page = views[(width, lang)]
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site["base"])
    page.goto(site["base"] + "/developers")
    assert page.locator("[data-copy]").count() == 10  # 5 client snippets, 5 of the connector
    page.locator('[data-copy="#cfg-codex"]').click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith(f'codex mcp add xia-chedan --url "{site["base"]}/api/external/mcp"')
    body = page.locator("main").inner_text()
    if lang == "en":
        assert not re.search(r"[\u4e00-\u9fff]", body), "Chinese text on the English page"
    else:
        assert "外部虾" not in body and "我的虾" not in body
    table = page.locator("main table")
    assert table.bounding_box()["width"] <= page.viewport_size["width"]


# --- item 5: phone layout of /agents ------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["zh", "en"])
def test_agents_on_a_phone_show_every_token_column_on_screen(views, site, lang):
    page = views[("phone", lang)]
    page.goto(site["base"] + "/agents")
    fits(page)
    revoke = page.locator("#agent-list td.row-action button").first
    box = revoke.bounding_box()
    assert revoke.is_visible() and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    state = page.locator("#agent-list td .badge").first
    assert state.bounding_box()["x"] + state.bounding_box()["width"] <= PHONE["width"]
    # A date takes one line, not five.
    line = page.evaluate("parseFloat(getComputedStyle(document.querySelector('#agent-list td time')).lineHeight)")
    assert page.locator("#agent-list td time").first.bounding_box()["height"] <= 2 * line


@pytest.mark.parametrize("width, lang", [("phone", "en"), ("desktop", "zh")])
def test_small_links_are_24_pixels_tall_and_the_rotate_button_clears_the_description(
        views, site, width, lang):
    """WCAG 2.2's target size for links standing alone: the header's, an agent's facts."""
    page = views[(width, lang)]
    page.goto(site["base"] + "/agents")
    targets = page.locator(".account a, .agent-head .meta a").all()
    assert len(targets) >= 3
    for target in targets:
        box = target.bounding_box()
        assert box["height"] >= 24, (target.inner_text(), box)
    rotate = page.locator(".agent-head > button").first.bounding_box()
    description = page.locator(".agent .perspective").first.bounding_box()
    assert rotate["y"] + rotate["height"] <= description["y"], (rotate, description)


@pytest.mark.parametrize("width, lang", VIEWS)
def test_copy_buttons_never_cover_their_code(views, site, width, lang):
    page = views[(width, lang)]
    page.goto(site["base"] + "/agents")
    for block in page.locator(".codeblock").all():
        if not block.is_visible():
            continue
        button, code = block.locator(".copy").bounding_box(), block.locator("pre").bounding_box()
        assert button["y"] + button["height"] <= code["y"] + 0.5, (button, code)


# --- item 6: the token field shows its underscore ------------------------------------------------------

@pytest.mark.parametrize("width", ["phone", "desktop"])
def test_token_field_shows_underscores(views, site, width):
    page = views[(width, "en")]
    page.goto(site["base"] + "/agents")
    page.evaluate("document.getElementById('token-panel').hidden = false")
    field = page.locator("#token-value")
    pictures = []
    for value in ("lbt_", "lbt "):
        field.evaluate("(el, v) => { el.value = v; }", value)
        pictures.append(field.screenshot())
    assert pictures[0] != pictures[1], "the underscore is not visible"
    family = field.evaluate("getComputedStyle(document.getElementById('token-value')).fontFamily")
    assert "DejaVu Sans Mono" in family or "Noto Sans Mono" in family


# --- item 7: tasks -------------------------------------------------------------------------------------

@pytest.mark.parametrize("width, lang", VIEWS)
def test_tasks_show_cancelled_apart_and_the_question_title(views, site, shots, width, lang):
    page = views[(width, lang)]
    page.goto(f"{site['base']}/tasks?topic={site['topic']}")
    cancelled = page.locator(f"#task-{site['cancelled']}")
    failed = page.locator(f"#task-{site['failed']}")
    assert cancelled.locator(".badge").inner_text() == ("Cancelled" if lang == "en" else "已取消")
    assert failed.locator(".badge").inner_text() == ("Failed" if lang == "en" else "失败")
    assert "用户已取消外部任务" not in page.locator("main").inner_text()
    chip = page.locator(".filter-chip").inner_text()
    assert "如何在 SQLite 服务运行时安全地做在线备份？" in chip and site["topic"] not in chip
    options = page.locator("#profile option").all_inner_texts()[1:]
    assert len(options) == 3 and len(set(options)) == 3, options
    fits(page)
    page.screenshot(path=str(shots / f"{width}-{lang}-tasks-filtered.png"), full_page=True)
    assert query(site, "SELECT state FROM tasks WHERE id = ?", (site["cancelled"],)) == [("failed",)]


# --- item 10: same-named communities on /ask -------------------------------------------------------------

@pytest.mark.parametrize("lang", ["zh", "en"])
def test_same_named_communities_are_told_apart_on_ask(views, site, lang):
    page = views[("desktop", lang)]
    page.goto(site["base"] + "/ask")
    mine = page.locator(f'#f-community option[value="{site["mine"]}"]').inner_text()
    theirs = page.locator(f'#f-community option[value="{site["theirs"]}"]').inner_text()
    assert mine == f"读书会 · {LONG_NAME}" and theirs == "读书会 · bob_owner"
    island = page.locator('#f-island option[value="tech"]').inner_text()
    assert island == ("Technology" if lang == "en" else "技术")


# --- items 3 and 9: messages people can read, confirmations, nothing stale -----------------------

TEXT = {
    "taken": {"en": "This username is taken; choose another.", "zh": "这个用户名已被使用，请换一个。"},
    "registered": {"en": "You are registered and logged in. Welcome!", "zh": "注册成功，你已登录。欢迎！"},
    "logged_out": {"en": "You are logged out.", "zh": "你已退出登录。"},
    "blank": {"en": "The question cannot be blank", "zh": "问题不能为空"},
    "daily": {"en": "You have reached the question limit", "zh": "你已达到提问上限"},
    "no_card": {"en": "No answer to the current version yet, so there is nothing to build",
                "zh": "当前版本还没有回答，暂时无法生成答案卡"},
    "unchanged": {"en": "Nothing changed", "zh": "没有改动"},
    "no_answer_yet": {"en": "No answer to the current version yet", "zh": "当前版本还没有回答"},
}
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("width, lang", VIEWS)
def test_register_and_logout_confirm_and_explain(browser, site, shots, width, lang):
    from playwright.sync_api import expect
    context, page = new_page(browser, width, lang, site["base"])
    name = f"fresh_{width}_{lang}"
    page.goto(site["base"] + "/register")
    page.fill("#f-username", "bob_owner")
    page.fill("#f-password", PASSWORD)
    page.fill("#f-passwordAgain", PASSWORD)
    page.click("form.api-form button[type=submit]")
    error = page.locator("#f-username-error")  # at the name, which is what to change
    expect(error).to_have_text(TEXT["taken"][lang])
    expect(page.locator("#f-username")).to_have_attribute("aria-invalid", "true")
    assert "冲突" not in error.inner_text() and "reload" not in error.inner_text()
    assert query(site, "SELECT COUNT(*) FROM users WHERE username = 'bob_owner'") == [(1,)]
    page.fill("#f-username", name)
    page.click("form.api-form button[type=submit]")
    page.wait_for_url(site["base"] + "/")
    flash = page.locator("#flash-box")
    expect(page.locator("#flash")).to_have_text(TEXT["registered"][lang])
    fits(page)
    page.screenshot(path=str(shots / f"{width}-{lang}-registered.png"))
    page.click("#flash-close")
    expect(flash).to_be_hidden()
    assert query(site, "SELECT COUNT(*) FROM sessions s JOIN users u ON u.id = s.user_id "
                       "WHERE u.username = ?", (name,)) == [(1,)]
    page.locator(".account button", has_text="Log out" if lang == "en" else "退出").click()
    expect(page.locator("#flash")).to_have_text(TEXT["logged_out"][lang])
    expect(page.locator(".whoami")).to_have_count(0)
    assert query(site, "SELECT COUNT(*) FROM sessions s JOIN users u ON u.id = s.user_id "
                       "WHERE u.username = ?", (name,)) == [(0,)]
    context.close()


@pytest.mark.parametrize("width, lang", [("desktop", "en"), ("phone", "zh")])
def test_failures_are_explained_by_code_and_never_linger(browser, site, shots, width, lang):
    from playwright.sync_api import expect
    context, page = new_page(browser, width, lang, site["base"])
    name = f"asker_{width}_{lang}"
    r = page.request.post(f"{site['base']}/api/community",
                          data={"action": "register", "username": name, "password": PASSWORD})
    assert r.ok
    page.request.post(f"{site['base']}/api/communities", data={"action": "join", "community": "lobby"})
    topics = [page.request.post(f"{site['base']}/api/community", data={
        "action": "topic", "title": f"第 {n} 个问题"}).json()["id"] for n in range(3)]

    # A title of spaces says it cannot be blank, at the field.
    page.goto(site["base"] + "/ask")
    assert page.locator("#topic-limit").inner_text().startswith(
        "Questions each person may ask: up to 3" if lang == "en" else "每人最多提 3 个问题")
    # said before anything is typed, at a time in the reader's own way of writing it
    expect(page.locator("#topic-limit-reached time")).not_to_contain_text("UTC")
    page.fill("#f-title", "     ")
    page.click("form.api-form button[type=submit]")
    field_error = page.locator("#f-title-error")
    expect(field_error).to_contain_text(TEXT["blank"][lang])
    # The fourth question of the day: the daily limit and when it resets; the blank-title
    # message is gone.
    page.fill("#f-title", "第四个问题")
    page.click("form.api-form button[type=submit]")
    form_error = page.locator(".form-error")
    expect(form_error).to_contain_text(TEXT["daily"][lang])
    assert re.search(r"\d{1,2}:\d{2}", form_error.inner_text()), form_error.inner_text()
    expect(field_error).to_be_hidden()
    if lang == "en":
        assert not HAN.search(form_error.inner_text())
    page.screenshot(path=str(shots / f"{width}-{lang}-daily-limit.png"))
    assert query(site, "SELECT COUNT(*) FROM topics t JOIN users u ON u.id = t.author_id "
                       "WHERE u.username = ?", (name,)) == [(3,)]

    # With nothing shareable the card button is off and says why, instead of failing.
    page.goto(f"{site['base']}/q/{topics[0]}")
    button = page.get_by_role("button", name="Build a card preview" if lang == "en" else "生成答案卡预览")
    expect(button).to_be_disabled()
    expect(page.locator("#card-why")).to_contain_text(TEXT["no_answer_yet"][lang])
    assert button.get_attribute("aria-describedby") == "card-why"
    page.locator("details.revise summary").click()
    page.locator("details.revise button[type=submit]").click()
    expect(page.locator("details.revise .form-error")).to_contain_text(TEXT["unchanged"][lang])
    assert query(site, "SELECT COUNT(*) FROM answer_cards WHERE topic_id = ?", (topics[0],)) == [(0,)]
    assert query(site, "SELECT version FROM topics WHERE id = ?", (topics[0],)) == [(1,)]
    context.close()


def dismissed_dialogs(page) -> list[str]:
    """The types of the dialogs the page opens from now on, each dismissed ("stay")."""
    asked: list[str] = []

    def on_dialog(dialog):
        asked.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return asked


def new_agent_token_shown(page, site, username: str, agent: str) -> None:
    """``username`` registers and creates ``agent`` on /agents: its token is on show."""
    from playwright.sync_api import expect
    page.request.post(f"{site['base']}/api/community", data={
        "action": "register", "username": username, "password": PASSWORD})
    page.goto(site["base"] + "/agents")
    page.fill("#f-name", agent)
    page.fill("#f-perspective", "先给结论。")
    page.click("form.api-form button[type=submit]")
    expect(page.locator("#token-panel")).to_be_visible()


def test_leaving_agents_before_copying_a_new_token_asks_first(browser, site):
    from playwright.sync_api import expect
    context, page = new_page(browser, "desktop", "en", site["base"])
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site["base"])
    new_agent_token_shown(page, site, "token_keeper", "新虾")
    asked = dismissed_dialogs(page)
    page.locator(".main-nav a", has_text="My tasks").click()
    page.wait_for_timeout(500)
    assert asked == ["beforeunload"] and page.url.endswith("/agents")
    expect(page.locator("#token-panel")).to_be_visible()
    page.locator('#token-panel [data-copy="#token-value"]').click()
    assert page.evaluate("navigator.clipboard.readText()") == page.input_value("#token-value")
    page.locator(".main-nav a", has_text="My tasks").click()
    page.wait_for_url(site["base"] + "/tasks")
    assert asked == ["beforeunload"]
    assert query(site, "SELECT COUNT(*) FROM profiles WHERE name = '新虾'") == [(1,)]
    context.close()


def test_a_token_copied_by_hand_lets_the_page_go_unasked(browser, site):
    """Only the Copy button counted: selecting the token and pressing Ctrl+C still asked
    before leaving, as if it had not been copied."""
    context, page = new_page(browser, "desktop", "en", site["base"])
    new_agent_token_shown(page, site, "hand_copier", "手抄虾")
    asked = dismissed_dialogs(page)
    page.locator("#token-value").focus()
    # a part of it, or the caret alone, copied: not the token, still asked about
    for selection in ("el => el.setSelectionRange(0, 5)", "el => el.setSelectionRange(3, 3)"):
        page.locator("#token-value").evaluate(selection)
        page.keyboard.press("Control+c")
        page.locator(".main-nav a", has_text="My tasks").click()
        page.wait_for_timeout(500)
        assert page.url.endswith("/agents") and asked[-1:] == ["beforeunload"]
    page.locator("#token-value").focus()
    page.keyboard.press("Control+a")
    page.keyboard.press("Control+c")
    page.locator(".main-nav a", has_text="My tasks").click()
    page.wait_for_url(site["base"] + "/tasks")
    assert asked == ["beforeunload"] * 2
    context.close()


def test_an_agents_or_communitys_words_typed_are_not_lost_without_asking(browser, site):
    """The agent's "How it should answer" (400 characters) and a new community's
    description went with any link followed, where /ask asked first."""
    context, page = new_page(browser, "desktop", "en", site["base"])
    page.request.post(f"{site['base']}/api/community", data={
        "action": "register", "username": "word_keeper", "password": PASSWORD})
    asked = dismissed_dialogs(page)
    for path, field in (("/agents", "#f-perspective"), ("/communities", "#f-description")):
        page.goto(site["base"] + path)
        page.fill(field, "Cite the manual first, then say what you measured yourself.")
        page.locator(".main-nav a", has_text="My tasks").click()
        page.wait_for_timeout(500)
        assert page.url.endswith(path) and asked[-1:] == ["beforeunload"], (path, asked)
        page.fill(field, "")  # as it was drawn: nothing to ask about
    assert asked == ["beforeunload"] * 2
    context.close()


def test_a_question_half_written_is_not_lost_to_a_reload_without_asking(browser, site):
    """Reloading /ask with a question typed emptied every field without a word; the
    question's update form was the same."""
    from playwright.sync_api import expect
    context, page = new_page(browser, "desktop", "en", site["base"])
    page.request.post(f"{site['base']}/api/community", data={
        "action": "register", "username": "draft_keeper", "password": PASSWORD})
    page.request.post(f"{site['base']}/api/communities",
                      data={"action": "join", "community": "lobby"})
    asked = dismissed_dialogs(page)
    page.goto(site["base"] + "/ask")
    page.reload()  # nothing typed: nothing to ask about
    assert asked == []
    page.fill("#f-title", "Does VACUUM INTO block writers on a busy database?")
    page.fill("#f-privateContext", "Our database is 40 GB.")
    page.locator(".main-nav a", has_text="My tasks").click()
    page.wait_for_timeout(500)
    assert asked == ["beforeunload"] and page.url.endswith("/ask")
    expect(page.locator("#f-privateContext")).to_have_value("Our database is 40 GB.")
    page.get_by_role("button", name="Ask").click()  # sent: the next page comes unasked
    page.wait_for_url(re.compile(r".*/q/t_"))
    assert asked == ["beforeunload"]

    page.locator("details.revise summary").click()
    page.fill("#r-note", "Added the size.")
    page.evaluate("location.reload()")  # (a reload refused never ends for page.reload)
    page.wait_for_timeout(500)
    assert asked == ["beforeunload"] * 2
    page.fill("#r-title", "Does VACUUM INTO block writers on a 40 GB database?")
    page.get_by_role("button", name="Publish new version").click()
    expect(page.locator("h1")).to_contain_text("40 GB database")
    assert asked == ["beforeunload"] * 2
    # Another button that leads away asks all the same (its send was not the question's),
    # and before it acts: asked by the browser once logged out, "Stay" left a page showing
    # the account with a dead Log out, and "You are logged out." for the next page.
    page.goto(site["base"] + "/ask")
    page.fill("#f-title", "Is WAL mode safe on a network drive?")
    logout = page.locator(".account").get_by_role("button", name="Log out")
    logout.click()
    expect(page.locator("#confirm-dialog")).to_be_visible()
    expect(page.locator("#confirm-text")).to_contain_text("words typed here and not sent")
    page.locator("#confirm-no").click()
    assert page.request.get(site["base"] + "/api/community?action=me").json()["user"]
    expect(logout).to_be_enabled()
    expect(page.locator("#f-title")).to_have_value("Is WAL mode safe on a network drive?")
    logout.click()
    page.locator("#confirm-yes").click()  # said once: the browser does not ask again
    page.wait_for_url(site["base"] + "/")
    assert asked == ["beforeunload"] * 2
    assert page.request.get(site["base"] + "/api/community?action=me").json()["user"] is None
    context.close()


# --- /ask before joining anything ------------------------------------------------------------

@pytest.mark.parametrize("width, lang", [("phone", "zh"), ("desktop", "en")])
def test_a_newcomer_on_ask_is_offered_the_lobby_and_can_join_from_there(browser, site, width, lang):
    """The join button and the link to every community sit apart (they used to touch, one
    space between them), and joining from here opens the question form."""
    context, page = new_page(browser, width, lang, site["base"])
    try:
        name = f"new_{width}_{lang}"
        r = page.request.post(f"{site['base']}/api/community", data={
            "action": "register", "username": name, "password": PASSWORD})
        assert r.ok, r.text()
        page.goto(site["base"] + "/ask")
        join = page.locator('main button[data-post="/api/communities"]')
        others = page.locator('main .notice a[href="/communities"]')
        gap = others.bounding_box()["x"] - (join.bounding_box()["x"] + join.bounding_box()["width"])
        assert gap >= 8, f"{gap}px between the join button and the link"
        fits(page)
        join.click()
        page.locator("#f-title").wait_for()
        assert query(site, "SELECT c.community_id FROM memberships c JOIN users u ON u.id = c.user_id"
                           " WHERE u.username = ?", (name,)) == [("lobby",)]
    finally:
        context.close()


# --- a second click while the next page loads ---------------------------------------------

def test_a_second_submit_while_the_next_page_loads_saves_nothing_twice(browser, site):
    """After a save the page goes on to the next one; until it has, the form stays busy. A
    double click on a slow connection made two questions, two communities."""
    context, page = new_page(browser, "desktop", "zh", site["base"])
    page.set_default_timeout(15000)
    name = "double_clicker"
    assert page.request.post(f"{site['base']}/api/community", data={
        "action": "register", "username": name, "password": PASSWORD}).ok
    assert page.request.post(f"{site['base']}/api/communities",
                             data={"action": "join", "community": "lobby"}).ok
    page.goto(site["base"] + "/ask")
    held = []
    page.route("**/q/*", lambda route: held.append(route))  # the next page, held back
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.fill("#f-title", "点两下会不会变成两个问题？")
    # Submit, wait in the page until the save has come back, and submit again: what a
    # second click does before the next page has loaded.
    second_allowed = page.evaluate("""async () => {
        const form = document.querySelector('form.api-form');
        const button = form.querySelector('[type=submit]');
        form.requestSubmit();
        await new Promise((done) => {
          const poll = setInterval(() => {
            if (!form.hasAttribute('aria-busy') || button.hasAttribute('data-leaving')) {
              clearInterval(poll);
              done();
            }
          }, 5);
        });
        const enabled = !button.disabled;
        form.requestSubmit();
        return enabled;
    }""")
    page.wait_for_timeout(500)
    assert not second_allowed and len(posts) == 1, posts
    assert held, "the question page was never asked for"
    held[0].continue_()
    page.wait_for_url("**/q/*")
    assert query(site, "SELECT COUNT(*) FROM topics WHERE title = ?",
                 ("点两下会不会变成两个问题？",)) == [(1,)]
    context.close()


# --- accessibility: contrast in both themes, focus after an action, what a screen reader hears ---

def test_highlights_and_current_tabs_are_readable_in_both_themes(views, site):
    """The dark theme's light text on the private-context highlight was 1.07:1, and white
    on its lighter accent (the current Communities tab) 2.74:1."""
    page = views[("desktop", "en")]
    page.goto(site["base"] + "/communities")
    page.evaluate("document.querySelector('main').insertAdjacentHTML('beforeend', "
                  "'<p><mark class=\"private-repeat\" id=\"probe\">repeated words</mark></p>')")
    try:
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            for selector in ('.tabs a[aria-current="page"]', "#probe"):
                assert page.evaluate(CONTRAST, selector) >= 4.5, (scheme, selector)
    finally:
        page.emulate_media(color_scheme="light")


# The contrast ratio of an element's colour ``prop`` (its text's, its outline's) on the
# background of what holds it.
ON_HOLDER = """([selector, prop, holder]) => {
    const rgb = (s) => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
    const lum = (c) => { const v = c.map((x) => { x /= 255;
        return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
        return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
    const fg = lum(rgb(getComputedStyle(document.querySelector(selector))[prop]));
    const bg = lum(rgb(getComputedStyle(document.querySelector(holder)).backgroundColor));
    return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
}"""


def test_a_copy_buttons_focus_ring_and_a_notices_link_are_seen_in_both_themes(views, site):
    """The accent ring on the dark code bar was 2.89:1 (WCAG 1.4.11 asks 3:1), and an accent
    link on a notice's blue 4.48:1 (1.4.3 asks 4.5:1)."""
    page = views[("desktop", "en")]
    page.goto(site["base"] + "/developers")
    page.evaluate("document.querySelector('main').insertAdjacentHTML('beforeend', "
                  "'<div class=\"notice\"><p><a href=\"/communities\" id=\"probe\">All communities</a>"
                  "</p></div>')")
    button = "[data-copy]"
    page.focus(button)
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")  # focused from the keyboard: the ring shows
    assert page.evaluate("document.activeElement.matches(':focus-visible')")
    try:
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            assert page.evaluate(ON_HOLDER, [button, "outlineColor", ".codebar"]) >= 3, scheme
            assert page.evaluate(ON_HOLDER, ["#probe", "color", "main .notice"]) >= 4.5, scheme
    finally:
        page.emulate_media(color_scheme="light")


def test_after_an_action_focus_starts_at_what_it_did(browser, site):
    """The page reloads after Join: focus was back on the page's top (16 Tabs back to where
    one was); it starts on the outcome, which a screen reader then reads."""
    context, page = new_page(browser, "desktop", "en", site["base"])
    session = requests.Session()
    session.post(site["base"] + "/api/community", json={
        "action": "register", "username": "focus_joiner", "password": PASSWORD}).raise_for_status()
    context.add_cookies([{"name": "xia_session", "value": session.cookies.get("xia_session"),
                          "url": site["base"]}])
    page.goto(site["base"] + f"/c/{site['theirs']}?lang=en")
    page.get_by_role("button", name="Join").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement && document.activeElement.id === 'flash'")
    assert page.evaluate("document.activeElement.textContent") == "You joined the community."
    # ringed in the outcome's own colour: the accent's red around a success read as an error
    assert page.evaluate("document.activeElement.matches(':focus-visible')")
    ring, words = page.evaluate("(() => { const s = getComputedStyle(document.activeElement);"
                                " return [s.outlineColor, s.color]; })()")
    assert ring == words
    assert page.evaluate(ON_HOLDER, ["#flash", "outlineColor", "#flash-box"]) >= 3
    # dismissed, the focus goes on to the page's content, not back to the body (where a
    # screen reader lost its place)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "flash-close"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.tagName") == "MAIN"
    context.close()


def test_copy_pressed_twice_says_copy_again_afterwards(browser, site):
    """The second press within the pause took "Copied" for the button's own words, and
    the button said "Copied" for good."""
    from playwright.sync_api import expect
    context, page = new_page(browser, "desktop", "en", site["base"])
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site["base"])
    page.clock.install()
    page.goto(site["base"] + "/developers?lang=en")
    button = page.locator('[data-copy="#cfg-codex"]')
    before = button.inner_text()
    button.click()
    page.clock.run_for(1_000)
    button.click()
    expect(button).to_have_text("Copied")
    page.clock.run_for(3_000)
    expect(button).to_have_text(before)
    context.close()


@pytest.mark.parametrize("width, lang", [("phone", "en"), ("desktop", "zh")])
def test_copy_is_told_to_screen_readers_and_long_code_scrolls_by_keyboard(views, site, width, lang):
    from playwright.sync_api import expect
    page = views[(width, lang)]
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site["base"])
    page.goto(site["base"] + "/developers")
    blocks = page.locator(".codeblock pre")
    assert blocks.count() == 10
    for i in range(blocks.count()):  # each can take focus, and says what it holds
        assert blocks.nth(i).get_attribute("tabindex") == "0"
        assert blocks.nth(i).get_attribute("aria-label")
    page.locator('[data-copy="#cfg-codex"]').click()
    expect(page.locator("#announce")).to_have_text("Copied" if lang == "en" else "已复制")


def test_the_developers_page_reflows_at_320_pixels(browser, site):
    """WCAG reflow: the MCP address in a sentence widened the page to 350 px at 320."""
    context = browser.new_context(viewport={"width": 320, "height": 640}, locale="en-GB")
    page = context.new_page()
    page.goto(site["base"] + "/developers?lang=en")
    fits(page)
    context.close()


def test_the_two_search_landmarks_have_their_own_names(views, site):
    page = views[("desktop", "en")]
    page.goto(site["base"] + "/questions")
    names = page.eval_on_selector_all('[role="search"]', "els => els.map((e) => e.getAttribute('aria-label'))")
    assert len(names) == 2 and all(names) and len(set(names)) == 2, names


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_escape_folds_the_open_section_the_focus_is_in(views, site, width):
    """As Escape closes the confirm dialog, it folds an opened panel (an agent's client
    setup, the question's update form) and leaves the focus on what opens it again."""
    page = views[(width, "en")]
    page.goto(site["base"] + "/agents")
    opened = page.locator("details.config[open]").first.get_attribute("id")
    section = page.locator(f"#{opened}")
    section.locator("summary").focus()
    # Escape ending a word being composed (an input method) is that word's, not the panel's
    section.locator("summary").dispatch_event("keydown", {"key": "Escape", "isComposing": True})
    assert section.evaluate("d => d.open")
    page.keyboard.press("Escape")
    assert section.evaluate("d => !d.open")
    assert section.locator("summary").evaluate("s => s === document.activeElement")


def test_a_phone_shows_that_the_menu_scrolls_sideways(views, site):
    """Half the menu sat past the screen's edge with nothing to say so: an edge with more
    items behind it now casts a shadow."""
    page = views[("phone", "en")]
    page.goto(site["base"] + "/")
    shown = page.evaluate("""() => {
        const ul = document.querySelector('.main-nav ul');
        return [ul.scrollWidth > ul.clientWidth, getComputedStyle(ul).backgroundImage];
    }""")
    assert shown[0], "the menu fits: nothing to show"
    assert shown[1].count("radial-gradient") == 2 and shown[1].count("linear-gradient") == 2
    # and a long name in the header ends in an ellipsis, not mid-letter (a flex box cut it)
    name = page.evaluate("""() => { const a = document.querySelector('.whoami');
        return [a.scrollWidth > a.clientWidth, getComputedStyle(a).display,
                getComputedStyle(a).textOverflow]; }""")
    assert name[0] and name[1] not in ("flex", "inline-flex") and name[2] == "ellipsis"


def test_an_actions_outcome_is_in_view_wherever_the_page_was_scrolled(browser, site):
    """The page reloads where it was scrolled (the item acted on); the outcome drawn at its
    top was off screen, and after "Revoke every agent token" the page looked unchanged."""
    from playwright.sync_api import expect
    context, page = new_page(browser, "phone", "en", site["base"])
    page.request.post(f"{site['base']}/api/community", data={
        "action": "register", "username": "scrolled_far", "password": PASSWORD})
    page.goto(site["base"] + "/settings")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.get_by_role("button", name="Revoke every agent token").click()
    page.locator("#confirm-yes").click()
    expect(page.locator("#flash")).to_have_text("Every agent token is revoked.")
    box = page.evaluate("""() => [window.scrollY, document.getElementById('flash-box')
                                   .getBoundingClientRect().top, window.innerHeight]""")
    assert box[0] > 100 and 0 <= box[1] < box[2] / 2, box
    context.close()


def test_a_communitys_creator_edits_its_description_from_its_page(browser, site):
    """Created with a description, a community had no way to change it; its lines ran
    together."""
    from playwright.sync_api import expect
    context, page = new_page(browser, "desktop", "en", site["base"])
    log_in(page, site["base"])
    page.goto(f"{site['base']}/c/{site['mine']}")
    page.locator("#edit-community summary").click()
    page.fill("#edit-community textarea", "We read together.\n- be kind\n- cite sources")
    page.get_by_role("button", name="Save the description").click()
    expect(page.locator("#flash")).to_have_text("The description was saved.")
    lead = page.locator(".page-head .lead.about")
    expect(lead).to_have_text("We read together.\n- be kind\n- cite sources")
    assert lead.evaluate("e => e.getBoundingClientRect().height / "
                         "parseFloat(getComputedStyle(e).lineHeight)") > 2.5  # three lines
    assert query(site, "SELECT description FROM communities WHERE id = ?", (site["mine"],)) == [
        ("We read together.\n- be kind\n- cite sources",)]
    # saved unchanged, a description starting with a line break keeps it (HTML drops the
    # first line break inside a textarea: the form lost one at every save)
    r = page.request.post(f"{site['base']}/api/communities", data={
        "action": "update", "community": site["mine"], "description": "\n\nsecond paragraph"})
    assert r.ok, r.text()
    page.goto(f"{site['base']}/c/{site['mine']}")
    page.locator("#edit-community summary").click()
    assert page.input_value("#edit-community textarea") == "\n\nsecond paragraph"
    page.get_by_role("button", name="Save the description").click()
    expect(page.locator("#flash")).to_have_text("The description was saved.")
    assert query(site, "SELECT description FROM communities WHERE id = ?", (site["mine"],)) == [
        ("\n\nsecond paragraph",)]
    page.goto(f"{site['base']}/c/{site['theirs']}")  # another's: nothing to edit
    expect(page.locator("#edit-community")).to_have_count(0)
    context.close()


@pytest.mark.parametrize("width, lang", [("desktop", "zh"), ("phone", "en")])
def test_a_paste_cut_at_a_fields_limit_is_told(views, site, width, lang):
    """Pasting 10,000 characters into a 1,500-character field kept the first 1,500 without a
    word (only the counter read 1500 / 1500). Now the field says so, and so does the page's
    live region (a screen reader heard nothing); a paste that fits, or the next edit, says
    nothing, and a field holding all of a paste that fills it exactly is not told it lost."""
    from playwright.sync_api import expect
    page = views[(width, lang)]
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site["base"])
    page.goto(site["base"] + "/ask")
    error, told = page.locator("#f-description-error"), ("only its beginning was kept"
                                                          if lang == "en" else "只保留了开头的部分")

    def paste(text: str) -> None:
        page.evaluate("(text) => navigator.clipboard.writeText(text)", text)
        page.focus("#f-description")
        page.keyboard.press("Control+V")

    paste("短句。")
    assert page.input_value("#f-description") == "短句。"
    expect(error).to_be_hidden()
    paste("备份" * 5000)
    assert len(page.input_value("#f-description")) == 1500
    expect(error).to_contain_text(told)
    expect(error).to_contain_text("1500")
    expect(page.locator("#announce")).to_contain_text(told)
    page.keyboard.press("Control+A")
    paste("再来一句。")  # replaces it all, and fits
    expect(error).to_be_hidden()
    page.keyboard.press("Control+A")
    paste("满" * 1500)  # fills the field exactly: nothing was lost
    page.wait_for_timeout(100)
    expect(error).to_be_hidden()
    paste("多")  # the full field takes nothing more
    expect(error).to_contain_text(told)
    page.keyboard.press("Backspace")  # an edit: the words go
    expect(error).to_be_hidden()


def test_a_cut_paste_is_told_even_over_a_servers_error_for_the_field(browser, site):
    """A field showing the server's refusal (aria-invalid) had its box emptied by the
    paste's own input event, right after the cut was told."""
    from playwright.sync_api import expect
    context, page = new_page(browser, "desktop", "en", site["base"])
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site["base"])
    page.goto(site["base"] + "/register")
    page.fill("#f-username", LONG_NAME)  # taken
    page.fill("#f-password", PASSWORD)
    page.fill("#f-passwordAgain", PASSWORD)
    page.click("form.api-form button[type=submit]")
    expect(page.locator("#f-username")).to_have_attribute("aria-invalid", "true")
    page.evaluate("navigator.clipboard.writeText('x'.repeat(40))")
    page.focus("#f-username")
    page.keyboard.press("Control+A")
    page.keyboard.press("Control+V")
    assert page.input_value("#f-username") == "x" * 24
    expect(page.locator("#f-username-error")).to_contain_text("only its beginning was kept")
    context.close()


def test_a_question_prints_without_the_sites_navigation_and_controls(browser, site):
    """Printed, the asker's question page was 17 pages of header, search box, agents
    researching, forms and buttons around the answers."""
    context, page = new_page(browser, "desktop", "en", site["base"])
    log_in(page, site["base"])  # the asker: their forms are on the page
    page.goto(f"{site['base']}/q/{site['topic']}")
    assert page.locator(".panel.asker").is_visible() and page.locator(".site-header").is_visible()
    page.emulate_media(media="print")
    for hidden in (".site-header", ".panel.asker", "form.api-form"):
        assert not page.locator(hidden).first.is_visible(), hidden
    assert page.locator("h1").is_visible() and page.locator(".discussion").is_visible()
    # the footer says the answers' tools and sources are the agents' own account: kept
    assert page.locator(".site-footer").is_visible()
    context.close()


def test_printing_opens_the_version_history_and_closes_it_after(browser, site):
    context, page = new_page(browser, "desktop", "en", site["base"])
    log_in(page, site["base"])
    topic = page.request.post(f"{site['base']}/api/community", data={
        "action": "topic", "title": "打印时版本历史要展开吗？"}).json()["id"]
    assert page.request.post(f"{site['base']}/api/community", data={
        "action": "revise", "topic": topic, "title": "打印时版本历史会展开吗？",
        "note": "改了问法"}).ok
    page.goto(f"{site['base']}/q/{topic}")
    versions = page.locator("details.versions")
    assert versions.get_attribute("open") is None
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert versions.get_attribute("open") is not None
    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    assert versions.get_attribute("open") is None
    context.close()


def test_a_flash_carried_to_a_page_in_another_language_is_marked_with_its_own(browser, site):
    """A tab left in English posted a question after another tab switched to Chinese: the
    English confirmation sat on a Chinese page with no lang of its own, read out in a
    Chinese voice."""
    from playwright.sync_api import expect
    context, page = new_page(browser, "desktop", "en", site["base"])
    try:
        r = page.request.post(f"{site['base']}/api/community", data={
            "action": "register", "username": "flash_lang", "password": PASSWORD})
        assert r.ok, r.text()
        page.request.post(f"{site['base']}/api/communities", data={"action": "join",
                                                                  "community": "lobby"})
        page.goto(site["base"] + "/ask")
        other = context.new_page()
        other.goto(site["base"] + "/?lang=zh")  # the language cookie is Chinese from now on
        page.fill("#f-title", "换了语言之后提交的问题会怎样显示？")
        page.click("form.api-form button[type=submit]")
        page.wait_for_url("**/q/*")
        assert page.locator("html").get_attribute("lang").startswith("zh")
        expect(page.locator("#flash")).to_have_attribute("lang", "en")
        # the next one, from a page in the language it leads to, has none
        page.locator(".account button", has_text="退出").click()
        expect(page.locator("#flash")).to_have_text("你已退出登录。")
        assert page.locator("#flash").get_attribute("lang") is None
    finally:
        context.close()
