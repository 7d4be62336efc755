"""The web pages through the Flask test client: they render, guard, escape and translate."""
from __future__ import annotations

import json
import re
import string
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from conftest import Person, count, good_result, joined_person, settings_for
from helpers import actions
from lobbytalks import i18n

TEMPLATES = Path(__file__).resolve().parent.parent / "lobbytalks" / "templates"
XSS_TITLE = '<script>alert("x")</script> 标题'


def html(response) -> str:
    assert response.mimetype == "text/html"
    return response.get_data(as_text=True)


def action_names(body: str) -> set[str]:
    return {a["action"] for a in actions(body)}


def cite_link(message: str, n: int) -> str:
    """How the page links citation [Sn] of an answer to its source n."""
    return f'<a href="#m-{message}-s{n}" class="cite" rel="nofollow ugc noopener">[S{n}]</a>'


def answered_question(app, **ask_fields):
    """An asker, a question with private context, and one answer by the asker's own agent."""
    asker = joined_person(app)
    topic = asker.ask(description="公开背景：服务在运行。", privateContext="私密：库有 40 GB。",
                      **ask_fields)
    agent = asker.new_agent("题主的虾")
    task = agent.claim(topic).get_json()["task"]["id"]
    r = agent.post("submit_result", taskId=task, **good_result())
    assert r.status_code == 200, r.get_json()
    return asker, agent, topic, r.get_json()["messageId"]


# --- every page renders, with the security headers ----------------------------------------

@pytest.mark.parametrize("path, expected", [
    ("/", "最新问题"),
    ("/communities", "创建社区"),
    ("/c/lobby", "虾扯淡广场"),
    ("/login", 'autocomplete="current-password"'),
    ("/register", 'autocomplete="new-password"'),
])
def test_public_pages_render_with_csp(client, path, expected):
    r = client.get(path)
    assert r.status_code == 200
    body = html(r)
    assert expected in body
    csp = r.headers["Content-Security-Policy"]
    for rule in ("default-src 'self'", "script-src 'self'", "style-src 'self'",
                 "frame-ancestors 'none'", "form-action 'self'"):
        assert rule in csp
    assert r.headers["Cache-Control"] == "no-store"
    assert r.headers["X-Frame-Options"] == "DENY"
    # Nothing inline that the policy would block.
    assert "<style" not in body and " style=" not in body and " onclick=" not in body
    assert re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", body) == []


def test_static_files_are_served(client):
    for path, mimetype in (("/static/app.js", "text/javascript"), ("/static/app.css", "text/css"),
                           ("/static/favicon.svg", "image/svg+xml")):
        r = client.get(path)
        assert r.status_code == 200 and r.mimetype == mimetype, path
        r.close()


@pytest.mark.parametrize(("path", "member"), [("/register", False), ("/login", False),
                                              ("/ask", True)])
def test_without_javascript_the_note_comes_before_the_form(app, path, member):
    """A form cannot be sent without JavaScript: a visitor must read that before filling in
    the page's form, not below the footer after pressing its button."""
    body = html((joined_person(app) if member else Person(app)).http.get(path))
    note = body.index('class="noscript"')
    assert body.index('id="main"') < note < body.index("<form", body.index('id="main"'))


@pytest.mark.parametrize("headers, status", [
    ({"Origin": "http://localhost"}, 303),
    ({"Sec-Fetch-Site": "same-origin"}, 303),
    ({"Origin": "https://evil.example.com"}, 403),
    ({"Origin": "null"}, 403),
    ({"Sec-Fetch-Site": "cross-site"}, 403),
    ({"Sec-Fetch-Site": "none"}, 403),
    ({}, 403),  # a form may come from anywhere: one that does not say it is ours is not
])
def test_the_logout_form_must_come_from_this_site(app, db, headers, status):
    person = Person(app).register()
    r = person.http.post("/logout", data={}, headers=headers)
    assert r.status_code == status
    sessions = count(db, "sessions")
    if status == 303:
        assert r.headers["Location"] == "/" and sessions == 0
        assert person.web_get(action="me").get_json()["user"] is None
    else:
        assert sessions == 1 and person.web_get(action="me").get_json()["user"] is not None


def test_a_form_sent_without_javascript_is_told_why_it_failed(app):
    """Without the site's script a browser posts the form to the page itself: the answer
    says that JavaScript sends the forms, not merely that the request is not supported."""
    def shown(response) -> str:  # the error page's own words, not the page's script strings
        return unescape(html(response).split('<section class="narrow panel">')[1].split("</section>")[0])

    visitor, member = Person(app), joined_person(app)
    r = visitor.http.post("/register?lang=en", data={"username": "nojs", "password": "x" * 12})
    assert r.status_code == 405 and "This site's forms are sent by the page's JavaScript" in shown(r)
    r = member.http.post("/ask", data={"title": "没有脚本时提交"},
                         content_type="multipart/form-data")
    assert r.status_code == 405 and "本站的表单要由页面上的 JavaScript 提交" in shown(r)
    # any other refused method keeps the plain explanation
    r = visitor.http.put("/register?lang=en", data={"username": "nojs"})
    assert r.status_code == 405 and "JavaScript" not in shown(r)
    assert "That kind of request is not supported here." in shown(r)


@pytest.mark.parametrize("path", ["/ask", "/agents", "/tasks", "/memories", "/ask?community=lobby"])
def test_personal_pages_send_visitors_to_login_and_back(client, path):
    r = client.get(path)
    assert r.status_code == 302
    assert r.data == b""  # not Flask's English "Redirecting..." page, on a Chinese site too
    location = urlsplit(r.headers["Location"])
    assert location.path == "/login"
    assert parse_qs(location.query) == {"next": [path], "needed": ["1"]}
    # and the login page says why it is there; one opened on its own does not
    page = html(client.get(r.headers["Location"]))
    assert "这一页需要先登录" in page
    assert f'href="/register?next={quote(path, safe="/")}&amp;needed=1"' in page
    assert "这一页需要先登录" not in html(client.get("/login"))


@pytest.mark.parametrize("path", ["/communities", "/questions?q=tokio", "/developers"])
def test_the_headers_login_and_register_from_a_public_page_come_back_without_a_warning(
        client, path):
    header = html(client.get(path))
    back = quote(path, safe="/")
    assert f'href="/login?next={back}"' in header and f'href="/register?next={back}"' in header
    for page in (f"/login?next={back}", f"/register?next={back}"):
        shown = html(client.get(page))
        assert "这一页需要先登录" not in shown and "登录或注册后会回到你刚才所在的页面" in shown
        assert f'data-then="go:{path}"' in shown


def test_login_returns_only_to_local_pages(app, client):
    body = html(client.get("/login?next=//evil.example/x"))
    assert 'data-then="go:/"' in body
    assert 'data-then="go:/agents"' in html(client.get("/login?next=/agents"))
    person = Person(app).register()
    r = person.http.get("/login?next=https://evil.example/")
    assert r.status_code == 302 and r.headers["Location"] == "/"


@pytest.mark.parametrize("path", ["/%5Cevil.example/login", "/%09/evil.example/login",
                                  "/%0A/evil.example", "/%2F%2Fevil.example", "/%5C%5Cevil"])
def test_language_links_stay_on_this_site(client, path):
    """A crafted path's 404 page links to itself in the other language; read as a browser
    reads a link (tabs and newlines dropped, backslashes as slashes), it is still a path here."""
    body = html(client.get(path))
    links = [unescape(href) for href in re.findall(r'class="lang-switch" href="([^"]*)"', body)]
    assert links  # the other language
    for link in links:
        seen = re.sub(r"[\t\n\r]", "", link).replace("\\", "/")
        assert seen.startswith("/") and not seen.startswith("//"), link
        assert client.get(link).status_code == 404  # the same missing page, not elsewhere


def test_language_links_keep_the_page_and_its_arguments(client):
    body = html(client.get("/questions?q=备份&sort=new"))
    links = {unescape(h) for h in re.findall(r'class="lang-switch" href="([^"]*)"', body)}
    assert links == {"/questions?q=%E5%A4%87%E4%BB%BD&sort=new&lang=en"}


def test_logout_page_needs_a_session(app, client):
    assert client.get("/logout").headers["Location"] == "/"
    person = Person(app).register()
    body = html(person.http.get("/logout"))
    assert person.username in body and {"action": "logout"} in actions(body)


def test_unknown_objects_are_html_404_pages(client):
    for path in ("/q/t_missing", "/c/missing", "/c/bad!id", "/q/bad id"):
        r = client.get(path)
        assert r.status_code == 404, path
        assert "找不到这个页面或对象" in html(r)
        assert re.search(r"<title>找不到这个页面或对象", html(r))  # the tab says so too
        assert "Content-Security-Policy" in r.headers


def test_the_login_page_says_what_to_do_about_a_forgotten_password(client):
    assert "Ask this site's admin to reset it" in unescape(html(client.get("/login?lang=en")))
    assert "请联系本站管理员为你重置" in html(client.get("/login?lang=zh"))
    shown = html(client.get("/register?lang=en")).split('id="main"', 1)[1].split("</main>")[0]
    assert "reset it" not in shown  # (the page's catalogue of error messages may say it)


def test_the_login_page_names_how_to_reach_the_admins_when_the_operator_said(settings):
    """"Ask the admin" led nowhere: no page named one or said how to reach them."""
    from lobbytalks import create_app
    app = create_app(settings.with_overrides(admin_contact="help@talk.example.org <b>"))
    page = html(app.test_client().get("/login?lang=en"))
    assert "Ask this site&#39;s admins to reset it: help@talk.example.org &lt;b&gt;" in page


# --- languages ------------------------------------------------------------------------------

def test_chinese_by_default_english_on_request_and_remembered(client):
    body = html(client.get("/"))
    assert '<html lang="zh-CN">' in body and "首页" in body
    r = client.get("/?lang=en")
    assert '<html lang="en">' in html(r) and ">Home<" in html(r)
    assert "lang=en" in r.headers["Set-Cookie"]
    assert ">Communities<" in html(client.get("/communities"))  # the cookie remembers
    assert "首页" in html(client.get("/?lang=zh"))
    assert "首页" in html(client.get("/communities"))


def test_unknown_language_is_ignored(client):
    r = client.get("/?lang=xx")
    assert "Set-Cookie" not in r.headers and "首页" in html(r)


def test_every_string_has_both_languages_with_the_same_placeholders():
    for key, (zh, en) in i18n.STRINGS.items():
        assert zh.strip() and en.strip(), key
        fields = lambda s: sorted(f for _, f, _, _ in string.Formatter().parse(s) if f)  # noqa: E731
        assert fields(zh) == fields(en), key


def test_templates_use_only_known_strings():
    used = set()
    for template in TEMPLATES.glob("*.html"):
        used |= set(re.findall(r"""\bt\(\s*["']([a-z0-9_.\-]+)["']\s*[,)]""", template.read_text("utf-8")))
    assert used, "no strings found"
    assert sorted(k for k in used if not i18n.has(k)) == []


# --- escaping --------------------------------------------------------------------------------

def test_user_content_is_escaped_everywhere(app, client):
    asker = joined_person(app)
    topic = asker.ask(title=XSS_TITLE, description="<img src=x onerror=alert(1)>")
    agent = asker.new_agent("<b>虾</b>")
    task = agent.claim(topic).get_json()["task"]["id"]
    conclusion = "<img src=x onerror=alert(1)> 备份用在线备份 API [S1]，不要直接复制正在写入的文件。"
    r = agent.post("submit_result", taskId=task, **good_result(conclusion=conclusion))
    assert r.status_code == 200, r.get_json()
    message = r.get_json()["messageId"]
    pages = [client.get("/"), client.get("/c/lobby"), asker.http.get(f"/q/{topic}"),
             asker.http.get("/agents"), asker.http.get("/tasks"), asker.http.get("/memories")]
    for response in pages:
        body = html(response)
        assert '<script>alert("x")' not in body
        assert "<img src=x" not in body
        assert "<b>虾</b>" not in body
    question = html(pages[2])
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; 标题" in question
    assert "&lt;img src=x onerror=alert(1)&gt; 备份用在线备份 API " \
           f'{cite_link(message, 1)}' in question
    assert "&lt;b&gt;虾&lt;/b&gt;" in html(pages[3])


# --- the question page --------------------------------------------------------------------------

def test_visitor_sees_the_public_question_only(app, client):
    _, _, topic, message = answered_question(app)
    body = html(client.get(f"/q/{topic}"))
    assert "公开背景：服务在运行。" in body
    assert "私密：库有 40 GB。" not in body
    assert message not in body
    assert "讨论全文只对题主和已有有效回答的人开放。这里有 1 条回答。" in body
    assert "/login?next=/q/" in body


def test_joining_does_not_unlock_the_discussion(app):
    _, _, topic, message = answered_question(app)
    reader = joined_person(app)
    body = html(reader.http.get(f"/q/{topic}"))
    assert message not in body and "私密：库有 40 GB。" not in body
    assert "加入社区本身不会解锁全文" in body
    assert "close" not in action_names(body)  # not the asker


def test_a_locked_question_shows_the_next_step(app):
    """Logged in but not in the community: join right here; a member: connect an agent.
    ("My tasks on this question" only for those whose agents claimed it.)"""
    _, _, topic, _ = answered_question(app)
    outsider = Person(app).register()
    body = html(outsider.http.get(f"/q/{topic}"))
    assert {"action": "join", "community": "lobby"} in actions(body)
    assert 'href="/agents"' not in body.split('class="notice locked"')[1].split("</div>")[0]
    assert f'href="/tasks?topic={topic}"' not in body
    member = joined_person(app)
    body = html(member.http.get(f"/q/{topic}"))
    assert "join" not in action_names(body)
    assert "连接我的智能体" in body and f'href="/tasks?topic={topic}"' not in body
    member.new_agent().claim(topic)
    body = html(member.http.get(f"/q/{topic}"))
    assert f'href="/tasks?topic={topic}"' in body
    assert "连接我的智能体" not in body  # they have one: the page offers to ask it instead


def test_a_locked_closed_question_offers_no_step_that_would_open_nothing(app):
    """On a closed question (or one an admin took down) joining the community or connecting
    an agent can no longer unlock anything: the page offered both anyway."""
    asker, _, topic, _ = answered_question(app)
    assert asker.web_post("close", topic=topic).status_code == 200
    for reader in (Person(app).register(), joined_person(app)):
        locked = html(reader.http.get(f"/q/{topic}")).split('class="notice locked"')[1]
        locked = locked.split("</div>")[0]
        assert "此问题已结束，不再接受新的回答" in locked and "加入社区本身" not in locked
        assert "join" not in action_names(locked) and 'href="/agents"' not in locked
    visitor = html(app.test_client().get(f"/q/{topic}?lang=en"))
    assert "This question is closed and takes no new answers" in visitor
    assert "/login?next=/q/" in visitor  # those who took part may still log in to read


def test_a_question_closed_without_answers_says_so_to_everyone(app):
    """Its readers were told its discussion "stays with those who took part" (0 answers)."""
    asker = joined_person(app)
    topic = asker.ask()
    assert asker.web_post("close", topic=topic).status_code == 200
    for reader in (app.test_client(), Person(app).register().http, joined_person(app).http,
                   asker.http):
        body = html(reader.get(f"/q/{topic}"))
        assert "此问题已结束，没有收到回答。" in body and 'class="notice locked"' not in body


def test_dead_ends_point_somewhere(app):
    """No agents: the empty task list links to /agents. A search without results offers to
    clear it; a plain empty list has nothing to clear."""
    person = joined_person(app)
    body = html(person.http.get("/tasks?lang=en"))
    assert '<a class="btn primary sentence" href="/agents">None of your agents is connected' in body
    person.new_agent()
    assert 'href="/agents">None of your agents' not in html(person.http.get("/tasks?lang=en"))
    body = html(person.http.get("/questions?q=nothingmatchesthis&lang=en"))
    assert "No questions match." in body and '<a href="/questions">Clear the filters' in body
    assert "Clear the filters" not in html(person.http.get("/questions?lang=en"))


def test_a_closed_question_without_answers_no_longer_invites_agents(app):
    asker = joined_person(app)
    topic = asker.ask()
    assert "把问题交给你的智能体吧" in html(asker.http.get(f"/q/{topic}"))
    assert asker.web_post("close", topic=topic).status_code == 200
    body = html(asker.http.get(f"/q/{topic}"))
    assert "把问题交给你的智能体吧" not in body and "此问题已结束，没有收到回答。" in body
    assert 'id="live-research"' not in body  # nobody can research it any more


def test_asker_reads_answer_sources_tools_and_controls(app):
    asker, _, topic, message = answered_question(app, intent="fact")
    body = html(asker.http.get(f"/q/{topic}"))
    assert "私密：库有 40 GB。" in body
    # who reads it, said where it is shown: a member's one answer lets them (not "entitled")
    assert "只有你、以及其智能体在这里提交过有效回答的人能看到；社区的任何成员都能回答。" in body
    assert "any member of the community can post one" in html(asker.http.get(f"/q/{topic}?lang=en"))
    assert f'id="m-{message}"' in body
    assert cite_link(message, 1) in body
    assert f'id="m-{message}-s1"' in body
    assert 'href="https://www.sqlite.org/backup.html"' in body
    # a source opens in a new tab, and says so (the arrow for eyes, words for screen readers)
    source = re.search(r'<a href="https://www.sqlite.org/backup.html"[^>]*>(.*?)</a>', body).group(1)
    assert '<span class="visually-hidden"> （在新标签页打开）</span>' in source and "↗" in source
    assert "智能体自报" in body and "工具运行（智能体自报）" in body and "sqlite3" in body
    assert "超大数据库的备份耗时未实测" in body
    assert "回答第 1 版" in body
    assert {"close", "share"} <= action_names(body)
    # Nothing is shared yet: the preview button is disabled and says why, instead of a 409.
    assert "card_preview" not in action_names(body)
    assert 'id="card-why"' in body and "还没有一条允许公开使用。它们是你自己的回答" in body  # own answers
    assert 'data-action="revise"' in body



def test_a_source_written_with_a_capital_scheme_still_links(app, db):
    """"HTTPS://" is accepted as https; it is stored in lower case, and one stored before
    that (or any other case) still links instead of pointing at "#"."""
    asker = joined_person(app)
    topic = asker.ask()
    agent = joined_person(app).new_agent("大写虾")
    task = agent.claim(topic).get_json()["task"]["id"]
    evidence = {**good_result()["evidence"][0], "url": "HTTPS://www.SQLite.org/backup.html"}
    r = agent.post("submit_result", taskId=task, **good_result(evidence=[evidence]))
    assert r.status_code == 200, r.get_json()
    assert 'href="https://www.SQLite.org/backup.html"' in html(asker.http.get(f"/q/{topic}"))
    with db.transaction() as conn:
        conn.execute("UPDATE messages SET sources = replace(sources, 'https://', 'Https://')")
    assert 'href="Https://www.SQLite.org/backup.html"' in html(asker.http.get(f"/q/{topic}"))

def test_share_toggle_only_on_ones_own_answers(app):
    asker = joined_person(app)
    topic = asker.ask()
    other = joined_person(app)
    agent = other.new_agent("别人的虾")
    task = agent.claim(topic).get_json()["task"]["id"]
    message = agent.post("submit_result", taskId=task, **good_result()).get_json()["messageId"]
    assert "share" not in action_names(html(asker.http.get(f"/q/{topic}")))
    body = html(other.http.get(f"/q/{topic}"))
    assert {"action": "share", "message": message, "sharePublic": True} in actions(body)
    r = other.web_post("share", message=message, sharePublic=True)
    assert r.status_code == 200, r.get_json()
    body = html(other.http.get(f"/q/{topic}"))
    assert {"action": "share", "message": message, "sharePublic": False} in actions(body)
    assert "已允许用于公开答案卡" in body


def test_published_card_is_shown_to_visitors_and_draft_only_to_the_asker(app, client):
    asker, _, topic, message = answered_question(app)
    assert asker.web_post("share", message=message, sharePublic=True).status_code == 200
    assert asker.web_post("card_preview", topic=topic).status_code == 200
    assert "答案卡预览（只有你能看到）" in html(asker.http.get(f"/q/{topic}"))
    assert "answer-card" not in html(client.get(f"/q/{topic}"))
    assert asker.web_post("card_publish", topic=topic).status_code == 200
    body = html(client.get(f"/q/{topic}"))
    assert "answer-card" in body and "方法与步骤" in body
    # a member's agent, whatever its name says ("LobbyTalks 官方"), and not whose
    assert "来自成员的智能体 题主的虾" in body and asker.username not in body.split("answer-card")[1]
    assert 'href="https://www.sqlite.org/backup.html"' in body


def test_versions_are_listed_after_a_revision(app):
    asker = joined_person(app)
    topic = asker.ask(title="第一版标题")
    r = asker.web_post("revise", topic=topic, title="第二版标题", note="加了条件")
    assert r.status_code == 200, r.get_json()
    body = html(asker.http.get(f"/q/{topic}"))
    assert "第 2 版" in body and "第一版标题" in body and "说明：加了条件" in body


# --- the community page ----------------------------------------------------------------------

def test_community_page_filters_sorts_and_pages(app, client):
    asker = joined_person(app)
    asker.ask(title="关于备份的问题")
    closed = asker.ask(title="关于索引的问题")
    asker.web_post("close", topic=closed)
    body = html(client.get("/c/lobby?q=备份"))
    assert "关于备份的问题" in body and "关于索引的问题" not in body
    body = html(client.get("/c/lobby?status=closed"))
    assert "关于索引的问题" in body and "关于备份的问题" not in body
    body = html(client.get("/c/lobby?sort=old&status=bogus"))
    assert body.index("关于备份的问题") < body.index("关于索引的问题")
    assert 'rel="next"' not in body
    assert client.get("/c/lobby?page=abc").status_code == 400  # said, not guessed
    # every page with a page number says what is wrong with it, and leads to the first
    # (a profile's and a question's were the bare "the request is not valid")
    for path in ("/c/lobby?page=0&lang=en", "/communities?page=-1&lang=en",
                 f"/u/{asker.username}?page=abc&lang=en", f"/q/{closed}?page=1e3&lang=en"):
        r = client.get(path)
        shown = html(r).split('<section class="narrow panel">')[1].split("</section>")[0]
        assert r.status_code == 400 and "The page number in the address is not valid" in shown
        first = path.split("?")[0]
        assert f'<a class="btn primary" href="{first}">Back to page 1</a>' in shown, path


def test_join_and_leave_buttons_follow_membership(app, db):
    person = Person(app).register()
    assert {"action": "join", "community": "lobby"} in actions(html(person.http.get("/c/lobby")))
    person.join()
    body = html(person.http.get("/c/lobby"))
    assert {"action": "leave", "community": "lobby"} in actions(body)
    assert "/ask?community=lobby" in body
    r = person.communities_post("create", name="我的社区")
    community = r.get_json()["id"]
    body = html(person.http.get(f"/c/{community}"))
    assert "你是创建者" in body and "leave" not in action_names(body)


# --- ask ---------------------------------------------------------------------------------------

def test_ask_page_offers_joined_communities_intents_and_islands(app):
    person = Person(app).register()
    body = html(person.http.get("/ask"))
    assert "提问前需要先加入一个社区" in body and 'data-action="topic"' not in body
    person.join()
    body = html(person.http.get("/ask"))
    assert 'data-action="topic"' in body and '<option value="lobby" selected>' in body
    for intent in ("how", "decision", "fact", "forecast", "debate"):
        assert f'name="intent" value="{intent}"' in body
    assert 'name="privateContext"' in body and '<option value="tech">' in body
    # "a valid answer" unlocks it, and any member can post one: said where it is typed
    english = html(person.http.get("/ask?lang=en"))
    assert "any member of the community can post one" in english
    assert "社区的任何成员都能提交回答" in body


def test_ask_page_offers_to_join_a_community_named_in_the_link(app):
    owner = Person(app).register()
    community = owner.communities_post("create", name="别的社区").get_json()["id"]
    person = joined_person(app)
    body = html(person.http.get(f"/ask?community={community}"))
    assert {"action": "join", "community": community} in actions(body)


# --- my agents, tasks, memories ----------------------------------------------------------------

def test_agents_page_lists_tokens_and_configs_but_never_a_token(app):
    person = Person(app).register()
    agent = person.new_agent("配置虾", client="deepseek-harness")
    body = html(person.http.get("/agents"))
    assert agent.token not in body
    assert "配置虾" in body and f"…{agent.token[-4:]}" in body
    assert 'codex mcp add xia-chedan --url &#34;http://localhost/api/external/mcp&#34;' in body
    assert "--bearer-token-env-var XIA_CHEDAN_AGENT_TOKEN" in body
    assert "&#34;Authorization&#34;: &#34;Bearer ${XIA_CHEDAN_AGENT_TOKEN}&#34;" in body
    assert "url: http://localhost/api/external/mcp" in body
    assert "read -rs XIA_CHEDAN_AGENT_TOKEN" in body
    assert {"action": "revoke", "tokenId": agent.token_id} in actions(body)
    assert {"action": "rotate", "profile": agent.profile_id} in actions(body)
    assert "从未" in body  # the token has not been used yet
    agent.get("list_communities")
    assert "从未" not in html(person.http.get("/agents"))


def test_the_agents_page_points_to_the_connector_where_the_token_is_given(app):
    """Someone who wants their agent to answer on its own gets the token here, and the
    page spoke only of telling the agent what to do."""
    person = Person(app).register()
    page = html(person.http.get("/agents?lang=en"))
    link = page.split('<a href="/developers#agent">')[1].split("</a>")[0]
    assert link.startswith("Want it to answer on its own") and "lobbytalks agent" in link
    assert 'id="agent"' in html(person.http.get("/developers"))


def test_at_the_agent_limit_the_page_says_how_to_make_room(app):
    person = Person(app).register()
    for n in range(7):
        person.new_agent(f"虾{n}")
    assert "archive one first" not in html(person.http.get("/agents?lang=en"))
    person.new_agent("虾7")
    body = html(person.http.get("/agents?lang=en"))
    assert "Up to 8 agents per person. To add another, archive one first (under its " \
           "“Rename or change how it answers”)." in body
    assert 'data-action="register"' not in body


def test_configs_use_the_public_url_when_set(tmp_path):
    from lobbytalks import create_app
    app = create_app(settings_for(tmp_path / "d", public_url="https://talk.example.org"))
    person = Person(app).register()
    assert "https://talk.example.org/api/external/mcp" in html(person.http.get("/agents"))


def test_tasks_page_explains_leases_filters_and_offers_cancel(app):
    asker, agent, topic, _ = answered_question(app)
    leased = agent.claim(topic).get_json()["task"]["id"]
    body = html(asker.http.get("/tasks"))
    assert "不代表你的客户端在线" in body and "共 2 个任务" in body
    assert {"action": "cancel_task", "taskId": leased} in actions(body)
    body = html(asker.http.get("/tasks?state=done"))
    assert "共 1 个任务" in body and leased not in body
    body = html(asker.http.get(f"/tasks?topic={topic}&state=leased"))
    assert "共 1 个任务" in body and leased in body and "问题：如何在 SQLite" in body
    body = html(asker.http.get("/tasks?state=all"))
    assert "筛选条件无效" in body and "共 2 个任务" in body


def test_tasks_of_other_people_never_show(app):
    _, _, topic, _ = answered_question(app)
    stranger = Person(app).register()
    body = html(stranger.http.get(f"/tasks?topic={topic}"))
    assert "共 0 个任务" in body


def test_memory_garden_lists_pending_and_active_per_agent(app):
    asker, agent, _, _ = answered_question(app)
    body = html(asker.http.get("/memories"))
    assert "题主的虾" in body and "待确认（1）" in body and "已确认（0）" in body
    [memory] = [a["memory"] for a in actions(body) if a["action"] == "memory_confirm"]
    assert asker.web_post("memory_confirm", memory=memory).status_code == 200
    body = html(asker.http.get("/memories"))
    assert "待确认（0）" in body and "已确认（1）" in body
    assert {"action": "memory_delete", "memory": memory} in actions(body)
    assert {"action": "memory_switch", "profile": agent.profile_id, "enabled": False} \
        in actions(body)


def test_per_agent_controls_name_their_agent(app):
    """Rotate token and the memory switch repeat for every agent: a screen reader hears
    whose (the visible words first)."""
    person = joined_person(app)
    for name in ("第一只虾", "第二只虾"):
        person.new_agent(name)
    for path, words in (("/agents?lang=en", "Rotate token"), ("/memories?lang=en", "Turn memory off")):
        page = unescape(person.http.get(path).get_data(as_text=True))
        assert sorted(re.findall(rf'aria-label="{words}: ([^"]+)"', page)) == ["第一只虾", "第二只虾"]


def test_agents_sharing_a_name_are_told_apart_by_their_controls_and_gardens(app):
    """Two agents may share a name: their rotate and archive buttons, token tables and
    memory gardens (landmarks) were named alike, so a screen reader could not tell whose."""
    person = joined_person(app)
    person.new_agent("Azhde", client="codex")
    person.new_agent("Azhde", client="codex")
    person.new_agent("Azhde", client="claude-code")
    agents_page = unescape(person.http.get("/agents?lang=en").get_data(as_text=True))
    for words in ("Rotate token", "Archive"):
        names = re.findall(rf'aria-label="{words}:? ([^"]+)"', agents_page)
        assert len(names) == 3 and len(set(names)) == 3, names
    gardens = re.findall(r'<section class="panel garden"[^>]*aria-label="([^"]+)"',
                         unescape(person.http.get("/memories?lang=en").get_data(as_text=True)))
    assert len(gardens) == 3 and len(set(gardens)) == 3, gardens
    assert any("Claude Code" in garden for garden in gardens)


def test_home_lists_newest_open_questions(app, client):
    asker = joined_person(app)
    asker.ask(title="首页上的问题")
    body = html(client.get("/"))
    assert "首页上的问题" in body and "虾扯淡广场" in body


# --- long discussions are paged ----------------------------------------------------------

@pytest.fixture
def long_discussion(settings):
    """A question with 45 answers by one agent; the last one replies to the first."""
    from lobbytalks import create_app
    app = create_app(settings.with_overrides(rate_claim="1000/minute", rate_token="1000/minute"))
    asker = joined_person(app)
    topic = asker.ask()
    agent = asker.new_agent("长谈的虾")
    ids = []
    for n in range(45):
        reply_to = {"replyTo": ids[0]} if n == 44 else {}
        task = agent.claim(topic, **reply_to).get_json()["task"]["id"]
        r = agent.post("submit_result", taskId=task,
                       **good_result(conclusion=f"第 {n} 条回答：服务运行时用 SQLite 在线备份 API 得到一致的副本 [S1]。"))
        assert r.status_code == 200, r.get_json()
        ids.append(r.get_json()["messageId"])
    return asker, topic, ids


def answer_ids(body: str) -> list[str]:
    return re.findall(r'<article class="answer" id="m-([^"]+)"', body)


def test_a_long_discussion_is_paged_twenty_answers_at_a_time(long_discussion):
    asker, topic, ids = long_discussion
    first = html(asker.http.get(f"/q/{topic}"))
    assert answer_ids(first) == ids[:20]
    assert f'href="/q/{topic}?page=2#discussion-title"' in first and 'rel="prev"' not in first
    assert "45" in first  # the count is of the whole discussion, not of the page
    second = html(asker.http.get(f"/q/{topic}?page=2"))
    assert answer_ids(second) == ids[20:40]
    last = html(asker.http.get(f"/q/{topic}?page=3"))
    assert answer_ids(last) == ids[40:]
    assert 'rel="next"' not in last
    # the reply on page 3 links to its parent on page 1
    assert f'href="/q/{topic}?page=1#m-{ids[0]}"' in last
    past = html(asker.http.get(f"/q/{topic}?page=9"))
    assert answer_ids(past) == [] and "这一页没有回答" in past
    assert len(last) < len(first) and len(second) < 3 * len(last)


def test_a_link_to_one_answer_opens_the_page_that_holds_it(long_discussion):
    asker, topic, ids = long_discussion
    body = html(asker.http.get(f"/q/{topic}?answer={ids[33]}"))
    assert answer_ids(body) == ids[20:40]
    # an explicit page wins; a stranger's id just opens the first page
    assert answer_ids(html(asker.http.get(f"/q/{topic}?answer={ids[33]}&page=3"))) == ids[40:]
    assert answer_ids(html(asker.http.get(f"/q/{topic}?answer=nope"))) == ids[:20]
    tasks = html(asker.http.get(f"/tasks?topic={topic}"))
    assert f'/q/{topic}?answer={ids[-1]}#m-{ids[-1]}' in tasks


def test_each_answer_links_to_itself_from_any_page(long_discussion):
    """The admin page asks readers to report an answer by its link, and answers had none:
    each one's time is its link, which opens the page of answers that holds it."""
    asker, topic, ids = long_discussion
    second = html(asker.http.get(f"/q/{topic}?page=2&lang=en"))
    links = re.findall(r'<a class="permalink" href="([^"]+)" title="Link to this answer">', second)
    assert links == [f"/q/{topic}?answer={i}#m-{i}" for i in ids[20:40]]
    assert answer_ids(html(asker.http.get(links[13].split("#")[0]))) == ids[20:40]


@pytest.mark.parametrize("code", ["zh", "en"])
def test_the_page_strings_are_the_catalogue_in_the_readers_language(app, client, code):
    """Encoded once per language and kept: still the reader's language on every page, with
    the numbers it states, and escaped for a <script> element as |tojson would."""
    from lobbytalks import i18n, prose

    numbers = prose.numbers(app.config["LOBBYTALKS"].settings, code)
    for path in ("/", "/communities", "/login"):
        html = client.get(f"{path}?lang={code}").get_data(as_text=True)
        embedded = html.split('<script type="application/json" id="page-strings">')[1]
        embedded = embedded.split("</script>")[0]
        assert json.loads(embedded) == {key: prose.fill(text, numbers)
                                        for key, text in i18n.js_strings(code).items()}
        assert "<" not in embedded and ">" not in embedded and "&" not in embedded


def test_every_script_driven_form_is_a_post(app, client):
    """A form app.js sends as JSON is sent by the browser itself when the script has not
    run (JavaScript off, or not loaded yet): as a POST, so a password or a private
    context never lands in the address bar, the history or a proxy's access log."""
    from conftest import ask_question
    asker, topic = ask_question(app)
    pages = [(client, "/login"), (client, "/register")] + [
        (asker.http, path) for path in ("/settings", "/ask", "/agents", "/communities",
                                        "/inbox", f"/q/{topic}")]
    seen = 0
    for http, path in pages:
        body = html(http.get(path))
        for form in re.findall(r"<form\b[^>]*>", body):
            if "api-form" in form:
                seen += 1
                assert 'method="post"' in form, (path, form)
    assert seen >= len(pages)


def test_every_aria_reference_names_an_element_of_the_page(app, client):
    """aria-describedby / aria-labelledby point at ids the page has (a hint-less field
    named a "-hint" that was never rendered)."""
    from conftest import ask_question
    from test_moderation import make_admin
    asker, topic = ask_question(app)
    admin = make_admin(app)
    pages = [(client, "/login"), (client, "/register"), (admin.http, "/admin")] + [
        (asker.http, path) for path in ("/settings", "/ask", "/agents", "/communities",
                                        "/inbox", "/tasks", "/memories", f"/q/{topic}")]
    for http, path in pages:
        body = html(http.get(path))
        ids = set(re.findall(r'\bid="([^"]+)"', body))
        for refs in re.findall(r'aria-(?:describedby|labelledby)="([^"]*)"', body):
            missing = [ref for ref in refs.split() if ref not in ids]
            assert not missing, (path, missing)


@pytest.mark.parametrize("path", ["/ask", "/communities", "/agents"])
def test_field_hints_read_as_sentences_in_english(app, path):
    """A hint joined from pieces ("Say it in one line." + "Up to 180 characters.") starts
    each sentence with a capital and ends it with a full stop."""
    body = html(joined_person(app).http.get(path + "?lang=en"))
    hints = [unescape(h) for h in re.findall(r'<p class="hint" id="[^"]+">(.*?)</p>', body, re.S)]
    assert any("Up to" in hint for hint in hints), hints
    for hint in hints:
        assert hint[0].isupper() and hint.rstrip().endswith((".", ")")), hint
        assert not re.search(r"\. [a-z]", hint), hint


def test_visitors_navigation_leaves_out_what_only_a_login_would_show(app, client):
    def nav(body: str) -> list[str]:
        return re.findall(r'<a href="([^"]+)"', body.split('class="main-nav"')[1].split("</nav>")[0])
    assert nav(html(client.get("/"))) == ["/", "/communities", "/ask", "/developers"]
    person = Person(app).register()
    assert nav(html(person.http.get("/"))) == ["/", "/communities", "/ask", "/agents", "/tasks",
                                               "/memories", "/developers"]


def test_peoples_words_in_the_other_language_are_marked_for_screen_readers(app):
    """An English page read a Chinese title with an English voice (WCAG 3.1.2): titles,
    backgrounds and answers in the other language than the page's carry their own."""
    asker = joined_person(app)
    chinese = asker.ask("如何在线备份 SQLite？", description="数据库有 40 GB。")
    english = asker.ask("How do I back up SQLite online?")
    agent = joined_person(app).new_agent("查证虾")
    task = agent.claim(chinese).get_json()["task"]["id"]
    assert agent.post("submit_result", taskId=task, **good_result()).status_code == 200
    page = html(asker.http.get(f"/q/{chinese}?lang=en"))
    assert '<h1 lang="zh-CN">如何在线备份 SQLite？</h1>' in page
    assert '<div class="md" lang="zh-CN"><p>数据库有 40 GB。</p>' in page
    assert '<div class="conclusion md" lang="zh-CN">' in page
    listing = html(asker.http.get("/c/lobby?lang=en"))
    assert f'href="/q/{chinese}" lang="zh-CN">' in listing and f'href="/q/{english}">' in listing
    listing = html(asker.http.get("/c/lobby?lang=zh"))
    assert f'href="/q/{english}" lang="en">' in listing and f'href="/q/{chinese}">' in listing
    assert '<h1>如何在线备份 SQLite？</h1>' in html(asker.http.get(f"/q/{chinese}?lang=zh"))


def test_every_block_of_peoples_words_carries_its_language_not_only_titles(app):
    """On a Chinese page an English answer's conclusion was marked English, and its
    conditions, uncertainties, sources, the private background, earlier titles, the card
    and the excerpts in lists were read with the Chinese voice (WCAG 3.1.2)."""
    asker = joined_person(app)
    topic = asker.ask("How do I back up SQLite online?", description="The database is 40 GB.",
                      privateContext="Writers run all night long.")
    assert asker.web_post("revise", topic=topic, title="How do I back up a busy SQLite file?"
                          ).status_code == 200
    author = joined_person(app)
    agent = author.new_agent("Checker")
    task = agent.claim(topic).get_json()["task"]["id"]
    english = good_result(
        conclusion="Use the online backup API [S1]; copying the file is unsafe.",
        reasoningSummary="The documentation says the API copies page by page.",
        conditions=["WAL mode is on"], uncertainties=["Very busy writers may restart it"])
    english["evidence"][0]["excerpt"] = "The online backup API copies a live database."
    message = agent.post("submit_result", taskId=task, **english).get_json()["messageId"]
    assert author.web_post("share", message=message, sharePublic=True).status_code == 200
    assert asker.web_post("card_preview", topic=topic).status_code == 200
    preview = html(asker.http.get(f"/q/{topic}?lang=zh"))
    for marked in ('<div class="md" id="private-context" lang="en">',
                   '<li lang="en">WAL mode is on</li>', '<li lang="en">Very busy writers',
                   'target="_blank"><span lang="en">SQLite Online Backup API</span><span',
                   '<blockquote lang="en">The online backup API copies',
                   '<span lang="en">How do I back up SQLite online?</span>',  # the first title
                   '<p lang="en">How do I back up SQLite online?</p>',  # in the versions
                   # the preview sits in the asker's section: a level below it, same look
                   '<h3 class="card-title" id="card-', '<h4 class="card-section-title">'):
        assert marked in preview, marked
    assert re.search(r'<h3 class="card-title" id="card-[^"]+" lang="en">', preview)
    assert re.search(r'<div class="md" lang="en"><p>Use the online backup API', preview)
    assert asker.web_post("card_publish", topic=topic).status_code == 200
    published = html(asker.http.get(f"/q/{topic}?lang=zh"))
    assert re.search(r'<h2 class="card-title" id="card-[^"]+" lang="en">', published)
    assert '<h3 class="card-section-title">' in published
    assert '<p class="excerpt" lang="en">The database is 40 GB.' in html(
        asker.http.get("/c/lobby?lang=zh"))
    assert f'href="/q/{topic}" lang="en">How do I back up a busy SQLite file?' in html(
        asker.http.get(f"/u/{asker.username}?lang=zh"))
    # and nothing is marked on a page in the words' own language
    assert 'lang="en"' not in html(asker.http.get(f"/q/{topic}?lang=en")).split("<body", 1)[1]


def test_the_forms_that_take_markdown_say_so_and_the_unread_count_reads_as_words(app):
    """Markdown rendered, yet no hint said it would; the badge read "1 unread notifications"."""
    asker = joined_person(app)
    topic = asker.ask()
    for path, fields in (("/ask?lang=en", ("f-description", "f-privateContext")),
                         (f"/q/{topic}?lang=en", ("r-description", "r-private"))):
        page = html(asker.http.get(path))
        for field in fields:
            hint = re.search(rf'id="{field}-hint"[^>]*>([^<]+)<', page)
            assert hint and "Markdown works" in hint.group(1), (path, field)
    agent = joined_person(app).new_agent()
    task = agent.claim(topic).get_json()["task"]["id"]
    assert agent.post("submit_result", taskId=task, **good_result()).status_code == 200
    page = html(asker.http.get("/?lang=en"))
    assert 'aria-label="Unread notifications: 1"' in page and "1 unread notifications" not in page


@pytest.mark.parametrize("lang, rule", [("zh", "3–24 个英文字母、数字或下划线。"),
                                        ("en", "3–24 letters, digits or underscores.")])
def test_a_username_refused_by_the_browser_is_told_the_rule(client, lang, rule):
    """The browser's own bubble for a name outside the pattern said only "Please match the
    requested format" (and covered the hint saying which): a pattern's title is what the
    browser adds to that bubble."""
    page = html(client.get(f"/register?lang={lang}"))
    field = re.search(r'<input id="f-username"[^>]*>', page).group(0)
    assert 'pattern="[A-Za-z0-9_]{3,24}"' in field and f'title="{rule}"' in field
