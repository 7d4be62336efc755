"""The longest names the forms allow, on the narrowest phone, and the one-time token below the
message that announces it.

A 24-letter username made its profile scroll sideways, a 24-letter agent name the memory
garden and /tasks, a 24-letter community name every listing and the question's crumbs, the
asker's "ask the author to allow it in the card" button (English, one line that would not
wrap) every question page with an answer not yet shared, and /developers' code blocks their
page.
"""
from __future__ import annotations

import uuid

import pytest
import requests

from conftest import LiveServer, good_result
from test_browser import browser, watch  # noqa: F401  (the module-wide Chromium fixture)
from test_browser_browse import no_sideways_scroll

pytestmark = [pytest.mark.slow, pytest.mark.once]

PASSWORD = "correct horse 1"
ASKER = "WWWWWWWWWWWWWWWWWWWWWWWW"      # 24 characters, the longest a username may be, widest letter
AGENT = "BobResearcherLongName24x"      # 24, the longest an agent's name may be
COMMUNITY = "W" * 24                    # 24, the longest a community's name may be, widest letter
PHONE = {"width": 320, "height": 568}


def registered(base: str, username: str) -> requests.Session:
    session = requests.Session()
    session.post(base + "/api/community", json={
        "action": "register", "username": username, "password": PASSWORD}).raise_for_status()
    session.post(base + "/api/communities", json={"action": "join", "community": "lobby"}
                 ).raise_for_status()
    return session


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The long-named asker's question in a long-named community, answered by a long-named
    agent of another member; "admin" is an admin."""
    live = LiveServer(tmp_path_factory.mktemp("narrow") / "data",
                      env={"LOBBYTALKS_ADMIN_USERNAME": "admin",
                           "LOBBYTALKS_ADMIN_PASSWORD": PASSWORD})
    base = live.url
    asker, member = registered(base, ASKER), registered(base, "member_bob")
    admin = requests.Session()
    admin.post(base + "/api/community", json={
        "action": "login", "username": "admin", "password": PASSWORD}).raise_for_status()
    community = asker.post(base + "/api/communities", json={
        "action": "create", "name": COMMUNITY}).json()["id"]
    member.post(base + "/api/communities", json={"action": "join", "community": community}
                ).raise_for_status()
    topic = asker.post(base + "/api/community", json={
        "action": "topic", "community": community, "title": "Which index makes this JOIN fast?"}
    ).json()["id"]
    token = member.post(base + "/api/external/manage", json={
        "action": "register", "name": AGENT, "perspective": "Sources first.", "client": "codex"}
    ).json()["token"]
    agent = requests.Session()
    agent.headers["Authorization"] = f"Bearer {token}"
    task = agent.post(base + "/api/external", json={
        "action": "claim_task", "topic": topic, "requestId": str(uuid.uuid4())}).json()["task"]["id"]
    agent.post(base + "/api/external", json={"action": "submit_result", "taskId": task,
                                             **good_result()}).raise_for_status()
    yield live, topic, asker, member, admin
    live.stop()


def phone_page(browser, base: str, session: requests.Session, **options):  # noqa: F811
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, locale="en-GB",
                                  **options)
    context.add_cookies([{"name": "xia_session", "value": session.cookies.get("xia_session"),
                          "url": base}])
    return context, context.new_page()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_longest_names_fit_the_narrowest_phone(browser, site, lang):  # noqa: F811
    from playwright.sync_api import expect

    live, topic, asker, member, admin = site
    problems: list[str] = []
    for who, paths in ((asker, [f"/q/{topic}", f"/u/{ASKER}", "/", "/questions", "/settings",
                                "/developers"]),
                       (member, ["/memories", "/tasks", "/agents", f"/q/{topic}", "/developers"]),
                       (admin, ["/admin"])):
        context, page = phone_page(browser, live.url, who)
        watch(page, problems)
        for path in paths:
            page.goto(f"{live.url}{path}?lang={lang}")
            expect(page.locator("main")).to_be_visible()
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= page.evaluate("document.documentElement.clientWidth"), (path, wide)
        context.close()
    assert problems == []


def test_the_new_token_is_below_the_message_that_announces_it(browser, site):  # noqa: F811
    from playwright.sync_api import expect

    live, _, asker, _, _ = site
    context, page = phone_page(browser, live.url, asker)
    page.goto(f"{live.url}/agents?lang=en")
    page.fill("#f-name", "Second agent")
    page.fill("#f-perspective", "Check the sources.")
    page.click("form.api-form button[type=submit]")
    expect(page.locator("#token-panel")).to_be_visible()
    expect(page.locator("#flash")).to_be_visible()
    flash = page.locator("#flash").bounding_box()
    heading = page.locator("#token-title").bounding_box()
    assert heading["y"] >= flash["y"] + flash["height"]  # the heading is not under the message
    context.close()


@pytest.mark.parametrize("lang, retrieved", [("en", "retrieved 1 Oct 2026"),
                                             ("zh", "获取于 2026年10月1日")])
def test_a_sources_retrieval_date_reads_as_the_pages_other_dates(browser, site, lang,  # noqa: F811
                                                                  retrieved):
    """It read "retrieved 2026-10-01" beside "5 Dec 2026, 17:28" on the same page."""
    from playwright.sync_api import expect

    live, topic, asker, _, _ = site
    context, page = phone_page(browser, live.url, asker)
    page.goto(f"{live.url}/q/{topic}?lang={lang}")
    expect(page.locator(".sources li .meta").first).to_contain_text(retrieved)
    context.close()


def test_the_account_fits_beside_the_logo_on_the_narrowest_phone(browser, site):  # noqa: F811
    """In English, with a name and an unread count, the language link, the inbox, the name
    and "Log out" fell onto two or three rows above every page."""
    live, topic, asker, _, _ = site
    context, page = phone_page(browser, live.url, asker)
    page.goto(f"{live.url}/q/{topic}?lang=en")
    assert page.locator(".unread-count").count() == 1  # the answer's notice
    tops = page.locator(".site-header .account :is(a, button)").evaluate_all(
        "items => items.filter(item => item.getBoundingClientRect().height > 0)"
        "             .map(item => Math.round(item.getBoundingClientRect().top))")
    logo = page.locator(".site-header .brand").bounding_box()
    assert len(tops) >= 4 and max(tops) < logo["y"] + logo["height"]  # one row, beside the logo
    context.close()


def test_a_menu_item_tabbed_to_on_a_phone_is_shown_whole(browser, site):  # noqa: F811
    """The menu strip scrolls sideways: an item half past its edge took the focus and stayed
    cut off ("My ta"), the strip scrolling only for the next one wholly out of sight."""
    live, _, asker, _, _ = site
    context, page = phone_page(browser, live.url, asker)
    page.goto(f"{live.url}/?lang=en")
    strip = page.locator(".main-nav ul")
    seen = 0
    for _ in range(30):  # every menu item, in the order Tab reaches them
        page.keyboard.press("Tab")
        if not page.evaluate("document.activeElement.closest('.main-nav') !== null"):
            continue
        seen += 1
        page.wait_for_timeout(100)  # (a smooth scroll would take this long at most)
        item = page.evaluate("(() => { const r = document.activeElement.getBoundingClientRect();"
                             " return [r.left, r.right, document.activeElement.textContent]; })()")
        edges = strip.evaluate("el => [el.getBoundingClientRect().left,"
                               " el.getBoundingClientRect().right]")
        assert edges[0] - 1 <= item[0] and item[1] <= edges[1] + 1, (item, edges)
    assert seen >= 5
    context.close()


def test_deeply_nested_lists_and_quotes_fit_the_narrowest_phone(browser, site):  # noqa: F811
    """Each level of a list took the browser's 40 px, and each quote 16: a question nesting
    them many levels deep scrolled the page sideways at 320 px (427 px wide)."""
    live, _, asker, _, _ = site
    nested_list = "\n".join("  " * depth + f"- level {depth}" for depth in range(16))
    nested_quote = " ".join(">" for _ in range(20)) + " deepest quote"
    topic = asker.post(live.url + "/api/community", json={
        "action": "topic", "title": "Nested all the way down",
        "description": nested_list + "\n\n" + nested_quote}).json()["id"]
    context, page = phone_page(browser, live.url, asker)
    page.goto(f"{live.url}/q/{topic}?lang=en")
    assert page.locator(".md li li li li li li li li").count() > 0  # the nesting is rendered
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= page.evaluate("document.documentElement.clientWidth"), wide
    context.close()


def test_the_admin_logs_labels_on_a_phone_look_alike(browser, site):  # noqa: F811
    """A row of the audit log on a phone is one labelled block: the target's label took its
    cell's code font and size (smaller, monospace) where every other label is the page's."""
    live, _, _, _, admin = site
    registered(live.url, "throwaway_sam")
    admin.post(live.url + "/api/community", json={
        "action": "suspend_user", "username": "throwaway_sam", "reason": "test"}).raise_for_status()
    context, page = phone_page(browser, live.url, admin)
    page.goto(f"{live.url}/admin?lang=en")
    labels = page.evaluate("""() => [...document.querySelector('table.stack tbody tr')
        .querySelectorAll('td[data-label]')].map((cell) => {
            const style = getComputedStyle(cell, '::before');
            return [cell.dataset.label, style.fontFamily, style.fontSize];
        })""")
    page_size = page.evaluate("getComputedStyle(document.querySelector('table.stack td')).fontSize")
    context.close()
    assert "Target" in [label for label, _, _ in labels]
    assert len({(family, size) for _, family, size in labels}) == 1, labels
    # and at the size of the rows' own words (a label set to 1rem stood out above 0.9rem text)
    assert {size for _, _, size in labels} == {page_size}, (labels, page_size)


def test_a_reply_deep_in_a_thread_fits_the_narrowest_phone_with_its_buttons(browser, site):  # noqa: F811
    """Each level of a thread narrows it: an owner's "Allow in public answer cards" button,
    kept on one line, stuck out of a reply three levels down at 320 px (332 px wide)."""
    live, _, asker, member, _ = site
    topic = asker.post(live.url + "/api/community", json={
        "action": "topic", "title": "A thread four replies deep"}).json()["id"]
    token = member.post(live.url + "/api/external/manage", json={
        "action": "register", "name": "Replier", "perspective": "Replies.", "client": "codex"}
    ).json()["token"]
    agent = requests.Session()
    agent.headers["Authorization"] = f"Bearer {token}"
    reply_to = None
    for _ in range(4):
        claim = {"action": "claim_task", "topic": topic, "requestId": str(uuid.uuid4())}
        task = agent.post(live.url + "/api/external", json={
            **claim, **({"replyTo": reply_to} if reply_to else {})}).json()["task"]["id"]
        submitted = agent.post(live.url + "/api/external", json={
            "action": "submit_result", "taskId": task, **good_result()})
        submitted.raise_for_status()
        reply_to = submitted.json()["messageId"]
    context, page = phone_page(browser, live.url, member)
    page.goto(f"{live.url}/q/{topic}?lang=en")
    assert page.locator(".thread .thread .thread .thread").count() > 0  # four levels shown
    assert page.get_by_role("button", name="Allow in public answer cards").count() == 4
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= page.evaluate("document.documentElement.clientWidth"), wide
    context.close()


# WCAG 1.4.12's text spacing, as its test bookmarklet sets it: a person's own style sheet.
TEXT_SPACING = ("* { line-height: 1.5 !important; letter-spacing: 0.12em !important;"
                " word-spacing: 0.16em !important; } p { margin-bottom: 2em !important; }")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_wider_text_spacing_fits_the_narrowest_phone(browser, site, lang):  # noqa: F811
    """Buttons never wrapped: with the spacing a reader may set, "Revoke every agent token",
    "Create and issue a token" and "Allow in public answer cards" ran 22-35 px off the side
    of a 320 px screen (what 400% zoom gives too)."""
    from playwright.sync_api import expect

    live, topic, asker, member, admin = site
    for who, paths in ((asker, ["/settings", f"/q/{topic}", "/ask"]),
                       (member, ["/agents", f"/q/{topic}", "/tasks", "/memories", "/inbox"]),
                       (admin, ["/admin"])):
        # the reader's own style sheet, as an extension adds it: not the site's, so not
        # under its Content-Security-Policy
        context, page = phone_page(browser, live.url, who, bypass_csp=True)
        for path in paths:
            page.goto(f"{live.url}{path}?lang={lang}")
            expect(page.locator("main")).to_be_visible()
            page.add_style_tag(content=TEXT_SPACING)
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= page.evaluate("document.documentElement.clientWidth"), (path, wide)
        context.close()


def test_the_answer_a_link_leads_to_stands_out_in_forced_colours(browser, site):  # noqa: F811
    """High-contrast modes drop shadows and paint every border alike: the answer a
    notification leads to (``#m-…``) looked like all the others."""
    live, topic, asker, _, _ = site
    context = browser.new_context(forced_colors="active", locale="en-GB")
    context.add_cookies([{"name": "xia_session", "value": asker.cookies.get("xia_session"),
                          "url": live.url}])
    page = context.new_page()
    page.goto(f"{live.url}/q/{topic}?lang=en")
    answer = page.locator("article.answer[id]").first.get_attribute("id")
    page.goto(f"{live.url}/q/{topic}?lang=en#{answer}")
    style = page.evaluate("id => { const s = getComputedStyle(document.getElementById(id));"
                          " return [s.outlineStyle, s.outlineWidth]; }", answer)
    context.close()
    assert style == ["solid", "3px"], style


def test_a_confirmation_quoting_a_title_of_one_long_word_wraps(browser, site):  # noqa: F811
    """Cancelling a task on a question titled with one long word (no space to break at):
    the dialog's sentence ran off its right edge, hiding which task it was about."""
    from playwright.sync_api import expect

    live, _, asker, member, _ = site
    topic = asker.post(live.url + "/api/community", json={
        "action": "topic", "title": "W" * 100 + "?"}).json()["id"]
    token = member.post(live.url + "/api/external/manage", json={
        "action": "register", "name": "长标题虾", "perspective": "Sources first.",
        "client": "codex"}).json()["token"]
    claimed = requests.post(live.url + "/api/external", headers={
        "Authorization": f"Bearer {token}"}, json={
        "action": "claim_task", "topic": topic, "requestId": str(uuid.uuid4())})
    assert claimed.ok, claimed.text
    context, page = phone_page(browser, live.url, member)
    problems: list[str] = []
    watch(page, problems)
    page.goto(f"{live.url}/tasks?lang=en")
    page.get_by_role("button", name="Cancel task").first.click()
    dialog = page.locator("#confirm-dialog")
    expect(dialog).to_contain_text("W" * 100)
    assert dialog.evaluate("el => el.scrollWidth <= el.clientWidth"), \
        dialog.evaluate("el => [el.scrollWidth, el.clientWidth]")
    box = page.locator("#confirm-text").bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"]
    page.get_by_role("button", name="Keep it").click()
    context.close()
    assert problems == []
