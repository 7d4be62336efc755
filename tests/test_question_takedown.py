"""An admin takes a question down (spam, a phishing address in its title): closed, gone
from every listing, search, profile and agent read, its page 404 to all but its asker and
the admins; shown again, it comes back closed."""
from __future__ import annotations

import uuid
from html import unescape

import pytest

from conftest import Person, good_result, joined_person
from helpers import assert_external_error, assert_web_error
from test_mcp import McpClient, business_error
from test_moderation import audit_rows, make_admin

PHISH = "账号异常请访问 verify-example 重新验证"


@pytest.fixture
def scene(app, asker):
    """A phishing question with an answer by another member's agent, and an admin."""
    topic = asker.ask(PHISH)
    member = joined_person(app)
    agent = member.new_agent()
    task = agent.claim(topic).get_json()["task"]["id"]
    assert agent.post("submit_result", taskId=task, **good_result()).status_code == 200
    return {"topic": topic, "member": member, "agent": agent, "admin": make_admin(app)}


def listed(person_or_client, path: str) -> bool:
    http = getattr(person_or_client, "http", person_or_client)
    return PHISH in unescape(http.get(path).get_data(as_text=True))


def lobby_topics(client) -> int:
    return client.get("/api/communities?id=lobby").get_json()["community"]["topicCount"]


def test_a_question_taken_down_leaves_every_listing_and_every_reader_but_two(
        app, client, asker, scene, db):
    topic, admin, member, agent = scene["topic"], scene["admin"], scene["member"], scene["agent"]
    paths = ["/", "/c/lobby", "/questions", "/questions?q=verify", f"/u/{asker.username}"]
    assert all(listed(client, path) for path in paths)
    before = lobby_topics(client)
    r = admin.web_post("hide_question", topic=topic, reason="钓鱼链接")
    assert r.status_code == 200 and r.get_json() == {"ok": True, "id": topic, "hidden": True}
    assert admin.web_post("hide_question", topic=topic, reason="钓鱼").get_json()["replayed"]
    assert not any(listed(client, path) for path in paths)
    assert lobby_topics(client) == before - 1
    # gone for visitors, members, the answer's author and agents alike
    for reader in (client, Person(app).register().http, member.http):
        assert reader.get(f"/q/{topic}").status_code == 404
        assert reader.get(f"/api/community?topic={topic}").status_code == 404
    assert_web_error(client.get(f"/api/community?action=card&topic={topic}"), 404, "not_found")
    assert_external_error(agent.get("get_context", topic=topic), 404, "not_found")
    assert topic not in [t["id"] for t in agent.get("list_topics").get_json()["topics"]]
    assert_external_error(agent.claim(topic), 404, "not_found")  # as unknown
    # its asker and the admins still open it, told why
    own = unescape(asker.http.get(f"/q/{topic}?lang=en").get_data(as_text=True))
    assert "An administrator took this question down; only its asker and admins can see " \
        "this page. Reason: 钓鱼链接</p>" in own  # nothing after the reason as written
    assert 'data-action="hide_question"' not in own
    assert '"share_request"' not in own and 'id="card-tools"' not in own  # nothing to send
    theirs = unescape(admin.http.get(f"/q/{topic}?lang=en").get_data(as_text=True))
    assert 'data-action="unhide_question"' in theirs and 'data-action="reopen"' not in theirs
    assert [n["kind"] for n in asker.web_get(action="notifications").get_json()["notifications"]
            ][0] == "question_hidden"
    assert db.value("SELECT status FROM topics WHERE id = :id", {"id": topic}) == "closed"
    assert audit_rows(db) == [("hide_question", "topic", topic, "钓鱼链接", admin.username)]


def test_shown_again_it_is_listed_closed_and_may_then_be_reopened(app, client, asker, scene, db):
    topic, admin = scene["topic"], scene["admin"]
    before = lobby_topics(client)
    admin.web_post("hide_question", topic=topic, reason="误判")
    assert_web_error(admin.web_post("reopen", topic=topic), 409)  # shown first, then reopened
    r = admin.web_post("unhide_question", topic=topic, reason="核实无误")
    assert r.get_json() == {"ok": True, "id": topic, "hidden": False}
    assert admin.web_post("unhide_question", topic=topic).get_json()["replayed"]
    assert lobby_topics(client) == before and listed(client, "/c/lobby")
    assert client.get(f"/q/{topic}").status_code == 200
    assert db.value("SELECT status FROM topics WHERE id = :id", {"id": topic}) == "closed"
    assert admin.web_post("reopen", topic=topic).status_code == 200
    kinds = [n["kind"] for n in asker.web_get(action="notifications").get_json()["notifications"]]
    assert kinds[:3] == ["question_reopened", "question_restored", "question_hidden"]


@pytest.mark.parametrize("body, status", [
    ({"topic": "TOPIC"}, 400),                         # taking down needs a reason
    ({"topic": "TOPIC", "reason": "   "}, 400),
    ({"topic": "t_nothere", "reason": "x"}, 404),
    ({"reason": "x"}, 400),
])
def test_bad_take_downs_are_refused_and_change_nothing(client, scene, db, body, status):
    body = {k: scene["topic"] if v == "TOPIC" else v for k, v in body.items()}
    assert_web_error(scene["admin"].web_post("hide_question", **body), status)
    assert db.value("SELECT COUNT(*) FROM topics WHERE hidden_at IS NOT NULL") == 0


def test_only_admins_take_questions_down(asker, scene, db):
    for person in (asker, scene["member"]):
        assert_web_error(person.web_post("hide_question", topic=scene["topic"], reason="x"), 403)
    assert db.value("SELECT COUNT(*) FROM topics WHERE hidden_at IS NOT NULL") == 0


def test_nothing_more_goes_out_about_it_not_even_from_its_asker(app, asker, scene, db):
    """Its asker could still send the phishing title into contributors' inboxes (a share
    request, a card published on its answers) after the takedown."""
    topic, admin, member = scene["topic"], scene["admin"], scene["member"]
    message = db.value("SELECT id FROM messages WHERE topic_id = :t", {"t": topic})
    admin.web_post("hide_question", topic=topic, reason="钓鱼")
    to_others = ("SELECT COUNT(*) FROM notifications WHERE user_id <> "
                 "(SELECT author_id FROM topics WHERE id = :t)")
    before = db.value(to_others, {"t": topic})
    assert_web_error(asker.web_post("share_request", message=message), 409, "topic_unavailable")
    member.web_post("share", message=message, sharePublic=True)
    for action in ("card_preview", "card_publish", "card_republish"):
        assert_web_error(asker.web_post(action, topic=topic), 409, "topic_unavailable")
    assert db.value(to_others, {"t": topic}) == before


def test_its_leases_end_and_no_replay_reads_it(app, asker, scene, db):
    topic, admin = scene["topic"], scene["admin"]
    owner = joined_person(app)
    other = owner.new_agent()
    request_id = str(uuid.uuid4())
    task = other.claim(topic, request_id).get_json()["task"]["id"]
    admin.web_post("hide_question", topic=topic, reason="钓鱼")
    assert db.value("SELECT state FROM tasks WHERE id = :id", {"id": task}) == "failed"
    # its owner is told why in their language, and sent nowhere that is a 404 to them
    for path in ("/tasks?lang=en", "/agents?lang=en"):
        page = owner.http.get(path).get_data(as_text=True)
        assert "An admin took the question down; this task ended." in page, path
        assert f'href="/q/{topic}' not in page, path
    assert_external_error(other.claim(topic, request_id), 404, "not_found")
    for reader in (Person(app).register().http, scene["member"].http):
        r = reader.get(f"/api/community?action=activity&topic={topic}")
        assert r.status_code == 404
    assert asker.http.get(f"/api/community?action=activity&topic={topic}").status_code == 200
    assert asker.http.get(f"/api/community?action=card&topic={topic}").status_code == 200
    assert admin.http.get(f"/api/community?action=card&topic={topic}").status_code == 200


def test_others_lists_keep_the_item_but_not_the_title(app, asker, scene):
    """The answer's author keeps their task and their notices, without the phishing title."""
    topic, admin, member = scene["topic"], scene["admin"], scene["member"]
    message = member.manage_get(action="tasks").get_json()["tasks"][0]["messageId"]
    asker.web_post("share_request", message=message)
    scene["admin"].web_post("hide_question", topic=topic, reason="钓鱼")
    [task] = member.manage_get(action="tasks").get_json()["tasks"]
    assert task["topicTitle"] == "（此问题已被管理员下架）"
    page = member.http.get("/tasks?lang=en").get_data(as_text=True)
    assert PHISH not in page and "(a question an admin took down)" in page
    assert f'href="/q/{topic}' not in page  # a 404 to them: no title link, no answer button
    inbox = member.http.get("/inbox?lang=en").get_data(as_text=True)
    assert PHISH not in inbox and "(a question an admin took down)" in inbox
    assert f'href="/q/{topic}' not in inbox  # the share request's notice no longer links there
    garden = member.http.get("/memories?lang=en").get_data(as_text=True)
    # its memory stays, its title stood in for and no dead link
    assert PHISH not in garden
    assert '(a question an admin took down): </span><span lang="zh-CN">用 SQLite 在线备份 API' in garden
    assert f'href="/q/{topic}' not in garden
    asked = unescape(asker.http.get("/inbox").get_data(as_text=True))
    assert PHISH in asked


def test_the_tasks_filter_does_not_name_it_to_those_it_is_hidden_from(app, asker, scene):
    """/tasks?topic= named the question filtered by, when no task of the reader's was on it,
    with its real title: a taken-down phishing title for anyone logged in."""
    topic, admin = scene["topic"], scene["admin"]
    assert admin.web_post("hide_question", topic=topic, reason="钓鱼").status_code == 200
    stranger = joined_person(app)
    page = unescape(stranger.http.get(f"/tasks?topic={topic}&lang=en").get_data(as_text=True))
    assert PHISH not in page and "a question that does not exist" in page
    # its asker and the admins still see what they filter by
    for reader in (asker, admin):
        assert PHISH in unescape(reader.http.get(f"/tasks?topic={topic}&lang=en").get_data(as_text=True))


def test_asking_ones_agents_about_it_is_told_as_for_a_question_that_never_was(app, scene):
    """"Ask my agents" answered 409 topic_unavailable for a taken-down id and 404 for an
    unknown one: anyone could tell the two apart."""
    topic, member = scene["topic"], scene["member"]
    assert scene["admin"].web_post("hide_question", topic=topic, reason="钓鱼").status_code == 200
    for asked in (topic, "t_neverexisted"):
        assert_web_error(member.web_post("agent_request", topic=asked, requested=True),
                         404, "not_found")


def test_claims_and_the_askers_actions_tell_it_from_a_question_that_never_was_to_nobody(
        app, asker, scene, db):
    """A claim answered 409 topic_unavailable for a taken-down id (404 for an unknown one),
    and revise, close and the card's preview 403 "only the asker" to anyone else: each told
    a remembered id still existed and had been taken down."""
    topic, member, admin = scene["topic"], scene["member"], scene["admin"]
    message = db.value("SELECT id FROM messages WHERE topic_id = :t", {"t": topic})
    assert admin.web_post("hide_question", topic=topic, reason="钓鱼").status_code == 200
    never = "t_00000000000000000000"
    for agent in (joined_person(app).new_agent(), asker.new_agent()):  # its asker's too
        for asked in (topic, never):
            assert_external_error(agent.claim(asked), 404, "not_found")
        mcp = McpClient(app, agent.token)
        for asked in (topic, never):
            business_error(mcp.call("claim_task", {"topic": asked,
                                                   "requestId": str(uuid.uuid4())}), 404, "not_found")
    for asked in (topic, never):
        for action, fields in (("revise", {"title": "改个标题再试试看"}), ("close", {}),
                               ("card_preview", {})):
            assert_web_error(member.web_post(action, topic=asked, **fields), 404, "not_found")
    stranger = joined_person(app)
    for who, action, fields in ((member, "share_request", {}), (stranger, "share_request", {}),
                                (admin, "share_request", {}),
                                (stranger, "share", {"sharePublic": False}),
                                (admin, "share", {"sharePublic": False})):
        # the same words as for an answer that never was (its author keeps their say)
        told = [who.web_post(action, message=asked, **fields) for asked in (message, "msg_0000000000")]
        assert [(r.status_code, r.get_json()) for r in told] == [
            (404, {"error": "发言不存在", "code": "not_found"})] * 2, (action, told[0].get_json())
    assert member.web_post("share", message=message, sharePublic=False).status_code == 200
    # its asker and the admins still meet what it is: closed, taken down
    assert_web_error(asker.web_post("revise", topic=topic, title="改个标题再试试看"), 409,
                     "topic_unavailable")
    assert asker.web_post("close", topic=topic).status_code == 200
    assert admin.web_post("close", topic=topic).status_code == 200
    assert db.value("SELECT COUNT(*) FROM tasks WHERE topic_id = :t AND state = 'leased'",
                    {"t": topic}) == 0


def test_the_take_down_form_asks_first(scene):
    """It acted on the first click, as suspending did (the browser test presses the dialog)."""
    page = unescape(scene["admin"].http.get(f"/q/{scene['topic']}?lang=en").get_data(as_text=True))
    form = page[page.index('data-action="hide_question"'):].split(">", 1)[0]
    assert f'data-confirm="Take “{PHISH}” down? It leaves every listing and search' in form


def test_a_memory_of_it_reaches_its_agent_without_the_title(app, asker, scene):
    """The garden stood in for a taken-down question's title; get_context still gave the
    agent the memory as written, phishing title and all."""
    topic, member, agent = scene["topic"], scene["member"], scene["agent"]
    [memory] = member.web_get(action="memories").get_json()["memories"]
    assert member.web_post("memory_confirm", memory=memory["id"]).status_code == 200
    other = asker.ask("另一个正常的问题")
    assert PHISH in agent.get("get_context", topic=other).get_json()["memories"][0]
    assert scene["admin"].web_post("hide_question", topic=topic, reason="钓鱼").status_code == 200
    [remembered] = agent.get("get_context", topic=other).get_json()["memories"]
    assert PHISH not in remembered
    assert remembered.startswith("（此问题已被管理员下架）：用 SQLite 在线备份 API")
    claimed = agent.claim(other).get_json()["context"]["memories"]
    assert claimed == [remembered]
    # and the Chinese garden names it as the agent reads it (two wordings before)
    garden = member.http.get("/memories?lang=zh").get_data(as_text=True)
    assert '<span class="memory-about">（此问题已被管理员下架）：</span><span>用 SQLite 在线备份 API' in garden


def test_a_memory_made_under_a_title_revised_since_names_it_no_more(app, asker, db):
    """The stand-in replaced only the first and the current title: a memory made under a
    title in between still named the question taken down."""
    from qa_helpers import claim_ok, revise, submit_ok
    topic = asker.ask("Alpha secret project codename")
    revise(asker, topic, title="Bravo secret project codename")
    member = joined_person(app)
    agent = member.new_agent()
    submit_ok(agent, claim_ok(agent, topic)["task"]["id"])
    [memory] = member.web_get(action="memories").get_json()["memories"]
    assert memory["text"].startswith("《Bravo secret project codename》：")
    assert member.web_post("memory_confirm", memory=memory["id"]).status_code == 200
    revise(asker, topic, title="Charlie secret project codename")
    assert make_admin(app).web_post("hide_question", topic=topic, reason="泄密").status_code == 200
    other = asker.ask("另一个问题")
    read = [agent.get("get_context", topic=other).get_json()["memories"],
            [m["text"] for m in member.web_get(action="memories").get_json()["memories"]],
            [member.http.get("/memories?lang=zh").get_data(as_text=True)]]
    for texts in read:
        assert not any("secret project" in text for text in texts), texts
    assert read[0][0].startswith("（此问题已被管理员下架）：用 SQLite 在线备份 API")


def test_the_audit_log_names_every_action_in_words(app, scene):
    """Take-downs showed as admin.action.hide_question on /admin."""
    import re
    from pathlib import Path
    from lobbytalks import i18n
    sources = Path(app.root_path).rglob("*.py")
    recorded = {m.group(1) for path in sources for m in re.finditer(
        r'record\(conn, [^,]+, f?"([a-z_{}\'\[\] ]+)"', path.read_text("utf-8"))}
    actions = {a for a in recorded if "{" not in a} | {"grant_admin", "revoke_admin"}
    assert {"hide_question", "unhide_question", "hide_answer"} <= actions
    assert [a for a in sorted(actions) if not i18n.has(f"admin.action.{a}")] == []
    scene["admin"].web_post("hide_question", topic=scene["topic"], reason="钓鱼")
    page = scene["admin"].http.get("/admin?lang=en").get_data(as_text=True)
    assert "took a question down" in page and "admin.action." not in page


@pytest.mark.parametrize("action, target", [("hide_question", "topic"),
                                            ("suspend_user", "username"),
                                            ("hide_answer", "message")])
def test_a_reason_quoting_a_key_is_refused_as_any_shown_text(app, asker, scene, db, action, target):
    """A reason is shown to the person concerned (and kept in the audit log)."""
    value = {"topic": scene["topic"], "username": asker.username,
             "message": db.value("SELECT id FROM messages")}[target]
    r = scene["admin"].web_post(action, **{target: value},
                                reason="leaked ghp_0123456789abcdefghijABCDEFGHIJ012345")
    assert_web_error(r, 400, "sensitive_content")
    assert db.value("SELECT COUNT(*) FROM audit_log") == 0
