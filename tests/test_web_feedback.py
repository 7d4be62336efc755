"""Error pages, error codes and labels of the web pages, through the Flask test client.

The browser side of the same items (what a person sees at phone and desktop width, in
both languages) is in test_browser_pages.py.
"""
from __future__ import annotations

import json
import re
from html import unescape

import pytest

from conftest import Person, advance, count, joined_person
from test_moderation import make_admin
from helpers import UNDO_0019, assert_external_error, assert_web_error
from lobbytalks import i18n
from lobbytalks.blueprints.web_base import distinct_labels
from lobbytalks.errors import CODES


def html(response) -> str:
    assert response.mimetype == "text/html"
    return response.get_data(as_text=True)


def h1s(body: str) -> list[str]:
    return re.findall(r"<h1[^>]*>(.*?)</h1>", body, re.S)


# --- item 1: the site's own error page on every HTML path ------------------------------------

@pytest.mark.parametrize("path, status", [
    ("/no/such/page", 404), ("/static/missing.css", 404), ("/static/../../etc/passwd", 404),
    ("/communities", 405), ("/c/missing", 404), ("/q/t_missing", 404),
])
@pytest.mark.parametrize("lang, html_lang", [("zh", "zh-CN"), ("en", "en")])
def test_html_errors_use_the_site_page_in_the_readers_language(client, path, status, lang,
                                                               html_lang):
    method = client.post if status == 405 else client.get
    r = method(f"{path}?lang={lang}")
    assert r.status_code == status
    body = html(r)
    assert f'<html lang="{html_lang}">' in body
    expected = i18n.translate(lang, f"error.{status}")
    assert h1s(body) == [expected]
    assert 'class="main-nav"' in body and i18n.translate(lang, "nav.communities") in body
    assert "Not Found" not in body and "Method Not Allowed" not in body
    assert r.headers["Cache-Control"] == "no-store" and "Content-Security-Policy" in r.headers



@pytest.mark.parametrize("method, path", [("PUT", "/"), ("POST", "/"), ("POST", "/login"),
                                          ("DELETE", "/static/app.js"), ("PUT", "/healthz")])
def test_a_405_names_the_methods_that_path_takes(client, method, path):
    """``Allow`` lists what the resource supports (RFC 9110), not the API's GET, POST."""
    r = client.open(path, method=method)
    assert r.status_code == 405
    allowed = {m.strip() for m in r.headers["Allow"].split(",")}
    assert "GET" in allowed and "POST" not in allowed and method not in allowed

@pytest.mark.parametrize("path, key", [("/c/missing", "err.page.community_page.not_found"),
                                       ("/q/t_missing", "err.page.question.not_found")])
def test_error_page_details_come_from_the_catalogue(client, path, key):
    assert i18n.translate("en", key) in html(client.get(path + "?lang=en"))
    body = html(client.get(path + "?lang=zh"))
    assert i18n.translate("zh", key) in body and i18n.translate("en", key) not in body


def test_api_paths_keep_json_errors_with_a_code(client):
    assert_web_error(client.get("/api/nothing-here"), 404, "not_found")
    assert_web_error(client.get("/api/community?action=nope"), 400, "unknown_action")


def test_favicon_ico_leads_to_the_icon(client):
    r = client.get("/favicon.ico")
    assert r.status_code == 301 and r.headers["Location"].endswith("/static/favicon.svg")
    assert client.get(r.headers["Location"]).status_code == 200


# --- item 3: codes beside {error}, the page catalogue, categories and reasons -------------------

def test_web_errors_carry_the_machine_code(app, db):
    first = Person(app, username="taken_name").register()
    again = Person(app, username="taken_name")
    body = assert_web_error(again.web_post("register", username="taken_name",
                                           password="correct horse 1"), 409, "invalid_request")
    assert body["error"]  # the server's own sentence stays
    assert count(db, "users", "username = :username", {"username": "taken_name"}) == 1
    first.join()
    assert_web_error(first.web_post("topic", title="   "), 400, "invalid_request")
    assert count(db, "topics", "author_id = (SELECT id FROM users WHERE username = :username)",
                 {"username": "taken_name"}) == 0


def test_a_blank_title_or_name_says_it_cannot_be_blank(app, db):
    person = joined_person(app)
    for response in (person.web_post("topic", title="    "),
                     person.communities_post("create", name="   "),
                     person.manage_post("register", name="  ", perspective="x", client="codex")):
        body = assert_web_error(response, 400, "invalid_request")
        assert "不能为空" in body["error"] and "至少" not in body["error"], body
    assert count(db, "topics") == 0 and count(db, "profiles") == 0
    assert count(db, "communities", "owner_id IS NOT NULL") == 0


def test_every_code_has_a_page_message_in_both_languages():
    for code in CODES:
        zh, en = i18n.STRINGS[f"err.{code}"]
        assert zh and en and zh != en, code
    js = i18n.js_strings("en")
    assert js["err.community.register.invalid_request"] == "This username is taken; choose another."
    assert "{when}" in js["err.community.topic.rate_limited"]
    # a right password refused: the person is told their account is suspended, not that
    # they "are not allowed to do this"
    assert "suspended" in js["err.community.login.forbidden"]
    # the way past the agent limit is the one /agents offers: there is no delete, and a
    # rotation frees no place
    assert "archive" in js["err.profile_limit"] and "rotate" not in js["err.profile_limit"]
    assert "归档" in i18n.js_strings("zh")["err.profile_limit"]


def test_every_catalogue_key_names_a_real_code_or_field():
    for key in i18n.STRINGS:
        if key.startswith("err.") and not key.startswith(("err.field", "err.page.")):
            assert key.rsplit(".", 1)[1] in CODES, key


def test_categories_are_translated(app):
    person = joined_person(app)
    body = html(person.http.get("/ask?lang=en"))
    assert '<option value="tech">Technology</option>' in body
    assert "技术" not in body and "公共讨论" not in body
    topic = person.ask(island="science")
    assert "<span>Science</span>" in html(person.http.get(f"/q/{topic}?lang=en"))
    assert "<span>科学</span>" in html(person.http.get(f"/q/{topic}?lang=zh"))



def test_the_seeded_lobby_is_shown_in_the_readers_language(app, db):
    """The community every site starts with is named and described in English on the
    English pages, wherever it appears; renamed by an operator, it shows as written."""
    person = joined_person(app)
    topic = person.ask()
    paths = ["/", "/communities", "/c/lobby", "/ask", f"/q/{topic}", "/questions",
             f"/u/{person.username}"]
    for path in paths:
        english = html(person.http.get(f"{path}?lang=en"))
        assert "The Lobby" in english and "虾扯淡广场" not in english, path
        assert "The Lobby" not in html(person.http.get(f"{path}?lang=zh")), path
    assert "anyone can join" in html(person.http.get("/c/lobby?lang=en"))
    with db.transaction() as conn:
        conn.execute("UPDATE communities SET name = '本站大厅' WHERE id = 'lobby'")
    english = html(person.http.get("/communities?lang=en"))
    assert "本站大厅" in english and "The Lobby" not in english

def test_ask_page_states_the_configured_daily_limit(settings):
    from lobbytalks import create_app
    app = create_app(settings, rate_topic="3/day")
    person = joined_person(app)
    body = html(person.http.get("/ask?lang=en"))
    assert "ask: up to 3 (a day, counted over the last 24 hours)" in body


def test_the_ask_page_says_when_one_may_ask_again_before_anything_is_typed(settings, clock_file):
    """The limit reached, the page said only what it was; the person learnt it after writing
    a question and sending it."""
    from lobbytalks import clock, create_app
    app = create_app(settings, rate_topic="3/day")
    person = joined_person(app)
    asked_at = clock.now()
    for n in range(2):
        person.ask(f"第 {n} 个问题")
    assert 'id="topic-limit-reached"' not in html(person.http.get("/ask?lang=en"))
    advance(clock_file, 60)
    person.ask("第三个问题")
    body = html(person.http.get("/ask?lang=en"))
    notice = body[body.index('id="topic-limit-reached"'):].split("</div>")[0]
    assert "you can ask again at" in notice
    again = int(re.search(r'data-ts="(\d+)"', notice).group(1))
    assert asked_at + 86400 <= again <= asked_at + 86400 + 2  # when the first leaves the window
    assert 'data-endpoint="/api/community"' in body  # the form stays, to write in meanwhile
    advance(clock_file, 86400 - 60)
    assert 'id="topic-limit-reached"' not in html(person.http.get("/ask?lang=en"))


# --- item 4: pages past the end --------------------------------------------------------------

@pytest.mark.parametrize("path", ["/communities?page=999", "/c/lobby?page=999", "/tasks?page=999"])
def test_a_page_past_the_end_says_so_with_a_link_back(app, path):
    person = Person(app).register()
    body = html(person.http.get(path + "&lang=en"))
    assert "Page 999 is past the end of the list" in body
    base = path.split("?")[0]
    assert f'<a href="{base}">Back to page 1</a>' in body
    assert "No communities here yet" not in body
    assert 'rel="prev"' not in body  # no pager leading to page 998, just as empty


# --- item 7: cancelled tasks and the question filter ----------------------------------------

def element(body: str, marker: str, end: str) -> str:
    """The part of a page from ``marker`` (an element's id attribute) to the first ``end``."""
    return body[body.index(marker):].split(end)[0]


def cancelled_and_failed(app):
    """A person whose one agent's task they cancelled, and another agent's task it failed
    itself: (person, (agent, task) cancelled, (agent, task) failed)."""
    person = joined_person(app)
    topic = person.ask(title="被取消的问题")
    cancelling, failing = person.new_agent("取消虾"), person.new_agent("失败虾")
    cancelled = cancelling.claim(topic).get_json()["task"]["id"]
    failed = failing.claim(topic).get_json()["task"]["id"]
    assert person.manage_post("cancel_task", taskId=cancelled).status_code == 200
    assert failing.post("fail_task", taskId=failed, error="找不到可靠来源").status_code == 200
    return person, (cancelling, cancelled), (failing, failed)


def test_cancelled_tasks_show_apart_from_failures(app, db):
    person, (_, cancelled), (_, failed) = cancelled_and_failed(app)
    body = html(person.http.get("/tasks?lang=en"))
    block = lambda task: element(body, f'id="task-{task}"', "</li>")  # noqa: E731
    assert 'badge state-cancelled">Cancelled<' in block(cancelled)
    assert "You cancelled this task." in block(cancelled) and "用户已取消" not in body
    assert 'badge state-failed">Failed<' in block(failed)
    assert "Reason given by the agent: 找不到可靠来源" in block(failed)
    assert db.value("SELECT state FROM tasks WHERE id = :id", {"id": cancelled}) == "failed"


def test_agents_page_shows_the_last_task_as_tasks_does(app):
    """The agent's card on /agents names a cancelled task and the server's reasons as /tasks
    does, in the page's language (it showed "Failed" and the stored Chinese reason)."""
    person, (cancelling, _), (failing, _) = cancelled_and_failed(app)
    body = html(person.http.get("/agents?lang=en"))
    card = lambda agent: element(body, f'id="agent-{agent.profile_id}"', "</article>")  # noqa: E731
    assert 'badge state-cancelled">Last task: Cancelled<' in card(cancelling)
    assert "You cancelled this task." in card(cancelling) and "用户已取消" not in body
    assert 'badge state-failed">Last task: Failed<' in card(failing)
    assert "Reason given by the agent: 找不到可靠来源" in card(failing)


def test_tasks_ended_by_archiving_or_suspension_are_not_said_to_be_the_agents_words(app):
    person = joined_person(app)
    topic = person.ask(title="被结束的任务")
    archived = person.new_agent("甲虾")
    ended = archived.claim(topic).get_json()["task"]["id"]
    assert person.manage_post("archive", profile=archived.profile_id).status_code == 200
    agent = person.new_agent("乙虾")
    suspended = agent.claim(topic).get_json()["task"]["id"]
    admin = make_admin(app)
    assert admin.web_post("suspend_user", username=person.username, reason="误判").status_code == 200
    assert admin.web_post("unsuspend_user", username=person.username).status_code == 200
    assert person.web_post("login", username=person.username,
                           password=person.password).status_code == 200
    body = html(person.http.get("/tasks?lang=en"))
    block = lambda task: element(body, f'id="task-{task}"', "</li>")  # noqa: E731
    assert "The agent was archived; tasks of this connection ended." in block(ended)
    assert "An admin suspended the account; this task ended." in block(suspended)
    assert "Reason given by the agent" not in body
    assert "已归档，此连接" not in body and "已被管理员停用" not in body


def test_a_lease_that_ran_out_is_not_said_to_be_the_agents_words(app, db, clock_file):
    """The server writes the reason of an expired lease; it showed as "Reason given by the
    agent: 租约已过期", in Chinese on the English page."""
    person = joined_person(app)
    agent = person.new_agent("慢虾")
    task = agent.claim(person.ask(title="租约会过期的问题")).get_json()["task"]["id"]
    advance(clock_file, 31 * 60)
    for lang, said in (("en", "The lease ran out before the agent submitted a result or renewed it."),
                       ("zh", "租约到期前，智能体既没有提交成果，也没有续租。")):
        body = html(person.http.get(f"/tasks?lang={lang}"))
        assert said in element(body, f'id="task-{task}"', "</li>")
        assert "Reason given by the agent" not in body and "智能体给出的原因" not in body
    assert db.value("SELECT state FROM tasks WHERE id = :id", {"id": task}) == "expired"
    # settled when someone looked, 31 minutes on: the page says when the lease really ran out
    expires = db.value("SELECT expires FROM tasks WHERE id = :id", {"id": task})
    block = element(html(person.http.get("/tasks?lang=en&at=end")), f'id="task-{task}"', "</li>")
    assert f'lease ran out <time datetime="' in block and f'data-ts="{expires}"' in block


def test_an_agent_cannot_pass_its_failure_off_as_an_expired_lease(app):
    """Only the server expires a lease: an agent's fail_task that says "租约已过期" is shown
    as the agent's words, not as the server's sentence."""
    person = joined_person(app)
    agent = person.new_agent("装作过期的虾")
    task = agent.claim(person.ask(title="装作过期的问题")).get_json()["task"]["id"]
    assert agent.post("fail_task", taskId=task, error="租约已过期").status_code == 200
    body = element(html(person.http.get("/tasks?lang=en")), f'id="task-{task}"', "</li>")
    assert "Reason given by the agent: 租约已过期" in body
    assert "The lease ran out" not in body


@pytest.mark.parametrize("sentence, servers", [
    ("用户已取消外部任务", "You cancelled this task."),
    ("Token 已撤销，此连接的任务已终止", "The token was revoked"),
    ("外部虾已归档，此连接的任务已终止", "The agent was archived"),
])
def test_an_agent_cannot_pass_its_failure_off_as_the_servers(app, sentence, servers):
    """The server's fixed reasons for a failed task are the protocol's sentences, which an
    agent's own fail_task may also send: /tasks and /agents showed the owner "You cancelled
    this task." (with the Cancelled badge) for a task they never cancelled."""
    person = joined_person(app)
    agent = person.new_agent("装作取消的虾")
    task = agent.claim(person.ask(title="装作取消的问题")).get_json()["task"]["id"]
    assert agent.post("fail_task", taskId=task, error=sentence).status_code == 200
    listed = element(html(person.http.get("/tasks?lang=en")), f'id="task-{task}"', "</li>")
    card = element(html(person.http.get("/agents?lang=en")), f'id="agent-{agent.profile_id}"',
                   "</article>")
    for shown in (listed, card):
        assert f"Reason given by the agent: {sentence}" in shown
        assert servers not in shown and "state-cancelled" not in shown and "state-failed" in shown


def test_a_cancel_does_not_replay_over_an_agents_failure_in_the_same_words(app, db):
    """Cancelling a task its agent already failed with "用户已取消外部任务" answered
    ``replayed: true``, as if the owner had cancelled it: it is a 409 like any other end."""
    person = joined_person(app)
    agent = person.new_agent()
    task = agent.claim(person.ask()).get_json()["task"]["id"]
    assert agent.post("fail_task", taskId=task, error="用户已取消外部任务").status_code == 200
    assert_external_error(person.manage_post("cancel_task", taskId=task), 409, "task_terminal")
    # the agent's own report still replays, and a real cancel still does
    assert agent.post("fail_task", taskId=task, error="用户已取消外部任务").get_json()["replayed"]
    other = agent.claim(person.ask(title="真的取消")).get_json()["task"]["id"]
    assert person.manage_post("cancel_task", taskId=other).status_code == 200
    assert person.manage_post("cancel_task", taskId=other).get_json()["replayed"] is True
    assert db.value("SELECT agent_failed FROM tasks WHERE id = :id", {"id": other}) == 0


def test_an_agents_fail_task_replays_only_its_own_report(app, db):
    """fail_task answered ``replayed: true`` over its owner's cancel when it copied the cancel's
    sentence, and "already reported with another text" for any other, though the agent had
    reported nothing: a task its owner or the server ended is a 409 task_terminal to it."""
    person = joined_person(app)
    agent = person.new_agent()
    task = agent.claim(person.ask()).get_json()["task"]["id"]
    assert person.manage_post("cancel_task", taskId=task).status_code == 200
    for error in ("用户已取消外部任务", "找不到可靠来源"):
        assert_external_error(agent.post("fail_task", taskId=task, error=error), 409, "task_terminal")
    own = agent.claim(person.ask(title="自己报告失败")).get_json()["task"]["id"]
    assert agent.post("fail_task", taskId=own, error="找不到可靠来源").status_code == 200
    assert agent.post("fail_task", taskId=own, error="找不到可靠来源").get_json()["replayed"] is True
    assert_external_error(agent.post("fail_task", taskId=own, error="另一个原因"), 409,
                          "idempotency_conflict")
    assert db.value("SELECT error FROM tasks WHERE id = :id", {"id": task}) == "用户已取消外部任务"


def test_the_failures_before_the_column_are_marked_by_the_servers_own_sentences(settings, app, db):
    """Migration 0019 marks every older failure as the agent's but those in the server's own
    words: the list it names is the one the pages read (SERVER_REASONS), no more, no less."""
    import sqlite3
    from pathlib import Path

    from lobbytalks.blueprints.web_agents import SERVER_REASONS
    from lobbytalks.db.queries import sql_dir
    written = (sql_dir("sqlite", "migrations") / "0019_earlier_agent_failures.sql").read_text("utf-8")
    listed = set(re.findall(r"'([^']+)'", written.split("NOT IN", 1)[1]))
    assert listed == {error for state, error in SERVER_REASONS if state == "failed"}
    if not Path(str(settings.db_path)).exists():
        return  # the rest reopens a SQLite file as version 18 left it
    person = joined_person(app)
    agent = person.new_agent()
    own = agent.claim(person.ask(title="旧的失败")).get_json()["task"]["id"]
    assert agent.post("fail_task", taskId=own, error="找不到可靠来源").status_code == 200
    cancelled = agent.claim(person.ask(title="旧的取消")).get_json()["task"]["id"]
    assert person.manage_post("cancel_task", taskId=cancelled).status_code == 200
    db.close_thread_connection()
    old = sqlite3.connect(settings.db_path)
    old.executescript("UPDATE tasks SET agent_failed = 0;"
                      "DELETE FROM schema_migrations WHERE version >= 19;" + UNDO_0019)
    old.close()
    from lobbytalks import create_app
    again = create_app(settings).config["LOBBYTALKS"].db
    marks = {r["id"]: r["agent_failed"] for r in again.all("SELECT id, agent_failed FROM tasks")}
    assert marks == {own: 1, cancelled: 0}


def test_a_task_names_its_agent_and_id_in_each_languages_punctuation(app):
    """Chinese pages read "智能体：名（Codex）", as their other labels do, not "智能体: 名 (Codex)"."""
    person = joined_person(app)
    agent = person.new_agent("标点虾")
    task = agent.claim(person.ask(title="标点的问题")).get_json()["task"]["id"]
    zh = element(html(person.http.get("/tasks?lang=zh")), f'id="task-{task}"', "</li>")
    assert "智能体：标点虾（Codex）" in zh and f"任务编号：{task}" in zh
    en = element(html(person.http.get("/tasks?lang=en")), f'id="task-{task}"', "</li>")
    assert "Agent: 标点虾 (Codex)" in en and f"Task ID: {task}" in en


def test_an_agents_card_warns_before_and_after_its_last_token_expires(app, clock_file):
    """A connector running as a service simply stopped on the 30th day; nothing said so."""
    person = joined_person(app)
    agent, quiet = person.new_agent("到期虾"), person.new_agent("停用虾")
    assert person.manage_post("revoke", tokenId=quiet.token_id).status_code == 200
    card = lambda body, who: element(body, f'id="agent-{who.profile_id}"', "</article>")  # noqa: E731
    body = html(person.http.get("/agents?lang=en"))
    assert "token-warning" not in card(body, agent)
    advance(clock_file, 24 * 86400)
    # (another address: the page kept seconds ago would be served again otherwise)
    body = html(person.http.get("/agents?lang=en&day=24"))
    assert "Its token expires" in card(body, agent) and "Rotate it before then." in card(body, agent)
    assert "token-warning" not in card(body, quiet)  # every token revoked: switched off on purpose
    # but said plainly (a suspension lifted since revoked them too: nothing told its person)
    assert "Its tokens are all revoked: it cannot answer until you rotate" in card(body, quiet)
    advance(clock_file, 7 * 86400)
    assert person.web_post("login", username=person.username,
                           password=person.password).status_code == 200  # the session ended too
    body = html(person.http.get("/agents?lang=zh"))
    assert "它的 Token 已过期，现在不能回答" in card(body, agent)
    assert "token-warning" not in card(body, quiet)


def test_the_create_form_is_not_offered_past_the_most_one_may_make(app):
    """It was filled in and sent, then refused: "每人最多创建 5 个社区"."""
    person = joined_person(app)
    for n in range(4):
        assert person.communities_post("create", name=f"社区{n}").status_code == 200
    assert 'data-action="create"' in html(person.http.get("/communities?lang=en"))
    assert person.communities_post("create", name="第五个").status_code == 200
    body = html(person.http.get("/communities?lang=en&made=5"))
    assert 'data-action="create"' not in body
    assert "You have made 5 communities, the most one person may." in body


def test_the_home_page_links_to_the_create_form_only_while_there_is_one(app, client):
    person = joined_person(app)
    link = 'href="/communities#create"'
    assert link in html(client.get("/?lang=en"))  # a visitor is led to log in there
    for n in range(4):
        assert person.communities_post("create", name=f"社区{n}").status_code == 200
    assert link in html(person.http.get("/?lang=en"))
    assert person.communities_post("create", name="第五个").status_code == 200
    assert link not in html(person.http.get("/?lang=en"))


@pytest.mark.parametrize("lang, refused", [("zh", "每人最多创建 5 个社区。"),
                                           ("en", "You can create up to 5 communities.")])
def test_the_page_scripts_messages_state_their_numbers(client, lang, refused):
    """The script fills in only what an answer says ({when}, {reason}); a number the text
    states is filled in on the server (the form read "每人最多创建 {max_owned} 个社区")."""
    page = client.get(f"/communities?lang={lang}").get_data(as_text=True)
    raw = re.search(r'<script type="application/json" id="page-strings">(.*?)</script>',
                    page, re.S).group(1)
    strings = json.loads(raw)
    assert strings["err.communities.create.forbidden"] == refused
    left = {name for text in strings.values() for name in re.findall(r"\{(\w+)\}", text)}
    assert left <= {"when", "reason", "n", "max", "name"}, left  # what app.js fills


def test_a_page_drawn_for_one_account_does_not_act_as_another(app, db):
    """Tina's /ask, then, in another tab, a log-out and Umar's log-in: her page posted her
    question, private context and all, in his name. The page says whom it was drawn for."""
    tina, umar = joined_person(app), joined_person(app)
    page = html(tina.http.get("/ask"))
    drawn_for = re.search(r'<meta name="lobbytalks-viewer" content="(\d+)">', page).group(1)
    assert db.value("SELECT username FROM users WHERE id = :id", {"id": int(drawn_for)}) \
        == tina.username
    assert umar.web_post("login", username=umar.username, password=umar.password).status_code == 200
    tina.http.set_cookie("xia_session", umar.http.get_cookie("xia_session").value)  # the other tab
    topics = count(db, "topics")
    for path, body in (("/api/community", {"action": "topic", "community": "lobby", "title": "蒂娜的问题",
                                           "privateContext": "诊所的 NAS 在前台后面"}),
                       ("/api/external/manage", {"action": "register", "name": "蒂娜的虾",
                                                 "perspective": "先给结论", "client": "codex"})):
        r = tina.http.post(path, json=body, headers={"X-LobbyTalks-Viewer": drawn_for})
        assert_web_error(r, 401, "unauthorized")
        assert r.headers["X-LobbyTalks-Viewer-Changed"] == "1"  # not an ended login: the page says so
    assert count(db, "topics") == topics and count(db, "profiles") == 0
    # the same request from a page drawn for Umar, or from a client that sends no page's
    # account (a script), acts as the session's owner as before
    r = tina.http.post("/api/community", json={"action": "topic", "community": "lobby",
                                               "title": "乌马尔的问题"})
    assert r.status_code == 200 and count(db, "topics") == topics + 1
    assert "lobbytalks-viewer" not in html(Person(app).http.get("/"))  # a visitor's page
    # Log out, from Tina's page, logs this browser out whoever is in: what was asked for
    r = tina.http.post("/api/community", json={"action": "logout"},
                       headers={"X-LobbyTalks-Viewer": drawn_for})
    assert r.status_code == 200
    assert tina.http.get("/api/community", query_string={"action": "me"}).get_json()["user"] is None


@pytest.mark.parametrize("action, english", [
    ("reopen", "show it again first"), ("share_request", "already allowed this answer"),
    ("card_republish", "already republished"), ("card_publish", "rebuilt on another page")])
def test_a_stale_pages_409_says_what_happened(client, action, english):
    """From a page another tab had overtaken, these said "Please check what you entered."
    on a button where nothing was entered."""
    strings = {lang: json.loads(re.search(
        r'<script type="application/json" id="page-strings">(.*?)</script>',
        client.get(f"/?lang={lang}").get_data(as_text=True), re.S).group(1))
        for lang in ("en", "zh")}
    key = f"err.community.{action}.invalid_request"
    assert english in strings["en"][key] and strings["zh"][key]


def test_the_question_filter_shows_the_title_even_without_tasks(app):
    person = joined_person(app)
    topic = person.ask(title="筛选用的问题标题")
    body = html(person.http.get(f"/tasks?topic={topic}&lang=en"))
    assert "Question: 筛选用的问题标题" in body and f"Question: {topic}" not in body
    body = html(person.http.get("/tasks?topic=t_nothing&lang=en"))
    assert "Question: a question that does not exist" in body


# --- item 10: names that collide ---------------------------------------------------------------

def test_a_new_community_invites_the_first_question_and_a_search_says_none_match(app):
    person = Person(app).register()
    made = person.communities_post("create", name="新社区").get_json()["id"]
    body = html(person.http.get(f"/c/{made}?lang=en"))
    assert (f'No questions here yet. <a href="/ask?community={made}">Ask the first one.</a>'
            in body and "No questions match" not in body)
    visitor = html(Person(app).http.get(f"/c/{made}?lang=en"))  # cannot ask here: no link
    assert '<p class="empty">No questions here yet.</p>' in visitor
    for narrowed in ("q=sqlite", "status=closed"):
        body = html(person.http.get(f"/c/{made}?{narrowed}&lang=en"))
        assert "No questions match." in body and "No questions here yet" not in body
    agent = person.new_agent()
    body = html(person.http.get("/agents?lang=en"))
    assert 'badge token-state-active">Active<' in body and agent.token_id


def test_same_named_agents_and_communities_can_be_told_apart(app, db):
    bob = Person(app, username="bob_owner").register()
    alice = Person(app, username="alice_asker").register()
    mine = alice.communities_post("create", name="读书会").get_json()["id"]
    theirs = bob.communities_post("create", name="读书会").get_json()["id"]
    alice.join(theirs)
    body = html(alice.http.get("/ask?lang=en"))
    assert f'<option value="{mine}" selected>读书会 · alice_asker</option>' in body
    assert f'<option value="{theirs}">读书会 · bob_owner</option>' in body
    assert '<option value="lobby"' not in body  # not joined
    first = alice.new_agent("查证虾", client="codex")
    second = alice.new_agent("查证虾", client="claude-code")
    third = alice.new_agent("查证虾", client="codex")
    labels = re.findall(r'<option value="(agt[^"]*)"[^>]*>([^<]*)</option>',
                        html(alice.http.get("/tasks?lang=en")))
    assert len({label for _, label in labels}) == 3, labels
    shown = dict(labels)
    assert shown[second.profile_id] == "查证虾 (Claude Code)"
    assert shown[first.profile_id].startswith("查证虾 (Codex) · created ")
    assert shown[first.profile_id] != shown[third.profile_id]
    assert count(db, "profiles", "name = :name", {"name": "查证虾"}) == 3  # nothing was refused


def test_communities_whose_names_read_alike_are_named_with_their_maker_everywhere(app):
    """Spacing, a no-break space, case, punctuation or an invisible character made a
    look-alike that no page told apart from the original (/communities showed no maker;
    the community's own page, question pages and lists only the name)."""
    bob = Person(app, username="bob_owner").register()
    eve = Person(app, username="eve_mimic").register()
    original = bob.communities_post("create", name="Rust Fans").get_json()["id"]
    mimics = [eve.communities_post("create", name=name).get_json()["id"]
              for name in ("  rust   fans ", "Rust\u00a0Fans", "Rust.Fans")]
    unique = eve.communities_post("create", name="Go 语言").get_json()["id"]
    emoji = Person(app, username="emoji_maker").register()  # five each at most
    snakes = [emoji.communities_post("create", name=name).get_json()["id"]
              for name in ("🐍🐍", "🐍\ufe0f🐍")]
    for page in ("/communities?lang=en", "/?lang=en"):
        labels = {k: unescape(v) for k, v in re.findall(
            r'<a class="item-title" href="/c/(c_[^"]+)"[^>]*>([^<]+)</a>', html(eve.http.get(page)))}
        assert labels[original] == "Rust Fans · bob_owner", page
        assert labels[unique] == "Go 语言", page
        # eve made three of them: her name does not tell them apart, their ids do
        assert all(labels[m].endswith(" · eve_mimic · " + m) for m in mimics), page
        assert all(labels[m].endswith(" · emoji_maker · " + m) for m in snakes), page
    bob.join(original)
    topic = bob.ask(title="Rust 的所有权怎么理解？", community=original)
    assert f"<h1>Rust Fans · bob_owner</h1>" in html(eve.http.get(f"/c/{original}?lang=en"))
    assert f'<a href="/c/{original}">Rust Fans · bob_owner</a>' in html(
        eve.http.get(f"/q/{topic}?lang=en"))
    assert "in Rust Fans · bob_owner" in unescape(html(eve.http.get("/questions?lang=en")))
    eve.join(original)
    options = dict(re.findall(r'<option value="(c_[^"]+)"[^>]*>([^<]+)</option>',
                              html(eve.http.get("/ask?lang=en"))))
    assert options[original] == "Rust Fans · bob_owner"
    assert unescape(options[mimics[1]]) == f"Rust\u00a0Fans · eve_mimic · {mimics[1]}"
    assert options[unique] == "Go 语言"


def test_look_alike_makers_add_the_id(app):
    """Two makers whose names read alike too ("bob_l", "bob_I") made the labels look alike."""
    first = Person(app, username="maker_l").register()
    second = Person(app, username="maker_I").register()
    ids = [p.communities_post("create", name="Go 语言").get_json()["id"] for p in (first, second)]
    labels = {k: unescape(v) for k, v in re.findall(
        r'<a class="item-title" href="/c/(c_[^"]+)"[^>]*>([^<]+)</a>',
        html(first.http.get("/communities?lang=en")))}
    assert labels[ids[0]] == f"Go 语言 · maker_l · {ids[0]}"
    assert labels[ids[1]] == f"Go 语言 · maker_I · {ids[1]}"


def test_distinct_labels_add_only_what_is_needed():
    items = [{"id": "a", "name": "x", "k": "1", "d": "d1"},
             {"id": "b", "name": "x", "k": "2", "d": "d1"},
             {"id": "c", "name": "y", "k": "1", "d": "d1"},
             {"id": "d", "name": "z", "k": "1", "d": "d1"},
             {"id": "e", "name": "z", "k": "1", "d": "d2"}]
    labels = distinct_labels(items, [lambda i: i["k"], lambda i: i["d"]])
    assert labels == {"a": "x · 1", "b": "x · 2", "c": "y", "d": "z · 1 · d1", "e": "z · 1 · d2"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_page_that_crashes_gets_the_site_error_page(app, client, monkeypatch, caplog, lang):
    from lobbytalks.services import topics

    def broken(*args, **kwargs):
        raise RuntimeError("internal detail that must not be shown")

    monkeypatch.setattr(topics, "list_open", broken)
    r = client.get(f"/?lang={lang}")
    assert r.status_code == 503
    body = html(r)
    assert h1s(body) == [i18n.translate(lang, "error.503")]
    assert "internal detail" not in body and 'class="main-nav"' in body
    assert "internal detail" in caplog.text  # logged for the operator, not shown


def test_a_bare_community_read_lists_the_default_community(client, asker):
    """Every parameter of GET /api/community is optional in the contract: with no selector
    it lists the seeded community's questions, as ``community=lobby`` does."""
    topic = asker.ask()
    bare = client.get("/api/community")
    assert bare.status_code == 200
    assert bare.get_json() == client.get("/api/community?community=lobby").get_json()
    assert topic in [t["id"] for t in bare.get_json()["topics"]]
    paged = client.get("/api/community?page=2")
    assert paged.status_code == 200 and paged.get_json()["page"] == 2
    assert_web_error(client.get("/api/community?page=0"), 400)
    assert_web_error(client.get("/api/community?nonsense=1"), 400)


@pytest.mark.parametrize("query", ["action=me&page=abc", "action=islands&page=0",
                                   "action=me&topic=" + "t" * 65, "topic=x&page=-1",
                                   "action=me&community="])
def test_a_declared_parameter_is_checked_whichever_view_answers(client, query):
    """GET /api/community's contract lists action, community, topic and page for the whole
    operation: a wrong one is a 400 naming it even where the view asked for ignores it."""
    body = assert_web_error(client.get(f"/api/community?{query}"), 400, "invalid_request")
    named = query.split("&")[-1].split("=")[0]
    assert body["error"].startswith(f"{named}: ")


def test_a_declared_parameter_the_view_ignores_is_accepted_when_valid(client):
    assert client.get("/api/community?action=me&page=3&community=lobby").status_code == 200
