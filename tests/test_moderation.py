"""Moderation: admins hide answers, suspend people and reopen questions; all of it audited,
none of it a right to read a discussion (§1)."""
from __future__ import annotations

import re
import sqlite3
import uuid
from html import unescape

import pytest

from conftest import Person, count, good_result, joined_person
from lobbytalks import create_app
from helpers import UNDO_0014, actions, assert_external_error, assert_web_error
from lobbytalks.services import accounts, search
from lobbytalks.services.moderation import SUSPENDED_TASK

PRIVATE = "私密：线上库 40 GB，每晚 3 点批量写入。"


def make_admin(app) -> Person:
    admin = Person(app).register()
    assert accounts.set_admin(app.config["LOBBYTALKS"].db, admin.username, True)
    return admin


@pytest.fixture
def admin(app) -> Person:
    return make_admin(app)


@pytest.fixture
def discussion(asker, member):
    """A question with private context and one answer by the member's agent, shared."""
    agent = member.new_agent("答题虾")
    agent.post("join_community", community="lobby")
    topic = asker.ask(description="公开背景。", privateContext=PRIVATE)
    task = agent.claim(topic).get_json()["task"]["id"]
    message = agent.post("submit_result", taskId=task, **good_result()).get_json()["messageId"]
    assert member.web_post("share", message=message, sharePublic=True).status_code == 200
    return {"topic": topic, "message": message, "agent": agent}


def audit_rows(db) -> list[tuple]:
    return [tuple(r) for r in db.all(
        "SELECT a.action, a.target_kind, a.target_id, a.reason, u.username"
        " FROM audit_log a LEFT JOIN users u ON u.id = a.actor_id ORDER BY a.id")]


# --- hiding an answer ---------------------------------------------------------------------

def test_hidden_answer_leaves_every_reading_and_the_count_but_stays_stored(
        app, admin, asker, member, discussion, db):
    topic, message = discussion["topic"], discussion["message"]
    asker.web_post("card_preview", topic=topic)
    assert asker.web_post("card_publish", topic=topic).status_code == 200
    r = admin.web_post("hide_answer", message=message, reason="人身攻击")
    assert r.status_code == 200 and r.get_json() == {"ok": True, "id": message, "hidden": True}
    row = db.one("SELECT hidden_reason, hidden_by IS NOT NULL FROM messages")
    assert tuple(row) == ("人身攻击", 1)
    assert count(db, "messages") == 1
    assert db.value("SELECT message_count FROM topics") == 0  # no longer a valid answer
    # The card built on it is hidden in the same write.
    assert db.value("SELECT state FROM answer_cards") == "hidden"
    assert asker.web_get(action="card", topic=topic).get_json()["card"] is None
    for reader in (asker, member):  # the asker, and the author
        read = reader.web_get(topic=topic).get_json()
        assert read["messages"] == [] and read["messageCount"] == 0
        page = reader.http.get(f"/q/{topic}").get_data(as_text=True)
        assert f'id="m-{message}"' not in page and "在线备份 API" not in page
    assert asker.web_get(topic=topic).get_json()["allowed"] is True
    context = discussion["agent"].get("get_context", topic=topic).get_json()
    assert context["allowed"] is False and context["messages"] == []
    # Nothing shared and visible is left, so no new card can be built from it.
    assert_web_error(asker.web_post("card_preview", topic=topic), 409)
    assert audit_rows(db) == [("hide_answer", "message", message, "人身攻击", admin.username)]


def test_the_authors_tasks_say_the_answer_was_hidden_and_do_not_link_it(
        admin, member, discussion):
    """/tasks showed the task "Done" with "See the answer", to a page without it."""
    message = discussion["message"]
    page = member.http.get("/tasks?lang=en").get_data(as_text=True)
    assert f"?answer={message}" in page and "An admin hid this answer" not in page
    assert admin.web_post("hide_answer", message=message, reason="人身攻击").status_code == 200
    page = member.http.get("/tasks?lang=en").get_data(as_text=True)
    assert f"?answer={message}" not in page
    assert "An admin hid this answer: it is no longer shown" in page and "Why: 人身攻击" in page
    # the protocol's own listing of tasks is unchanged
    [task] = member.manage_get(action="tasks").get_json()["tasks"]
    assert task["state"] == "done" and task["messageId"] == message and "answerHidden" not in task


def test_a_hidden_answer_no_longer_unlocks_the_discussion(admin, asker, member, discussion):
    """The answer was the author's only contribution: hidden, it stops granting the
    full-text right (a junk answer posted to read the private context loses what it
    unlocked); shown again, it grants it again. Nothing kept from before shows it."""
    topic, message, agent = discussion["topic"], discussion["message"], discussion["agent"]

    def reads() -> list[bool]:
        web = member.web_get(topic=topic).get_json()
        context = agent.get("get_context", topic=topic).get_json()
        page = member.http.get(f"/q/{topic}").get_data(as_text=True)
        for shown in (web, context):
            assert (PRIVATE in str(shown)) is shown["allowed"], shown
        return [web["allowed"], context["allowed"], PRIVATE in page,
                "privateContext" in context["question"]]

    assert reads() == [True] * 4
    admin.web_post("hide_answer", message=message, reason="为看私密背景而灌水")
    assert reads() == [False] * 4
    admin.web_post("unhide_answer", message=message)
    assert reads() == [True] * 4

def test_the_author_is_told_their_agents_answer_was_hidden(admin, member, discussion):
    """Not "your agent has answered" beside the notice that an answer unlocks the page."""
    def page() -> str:
        return member.http.get(f"/q/{discussion['topic']}?lang=en").get_data(as_text=True)

    assert "Your agent answered this version" in page()
    admin.web_post("hide_answer", message=discussion["message"], reason="灌水")
    shown = page()
    assert "An admin hid your agent&#39;s answer to this version" in shown
    assert "Why: 灌水" in shown  # told why, on the page only its author sees this on
    assert "Your agent answered this version" not in shown
    admin.web_post("unhide_answer", message=discussion["message"])
    assert "Your agent answered this version" in page()


def test_the_asker_is_told_an_admin_hid_their_cards_answer_not_that_its_author_withdrew_it(
        admin, asker, member, discussion):
    """The card_hidden notice said the author withdrew permission: the asker blamed them and
    asked again, which cannot bring back a card built on a hidden answer."""
    assert asker.web_post("card_preview", topic=discussion["topic"]).status_code == 200
    assert asker.web_post("card_publish", topic=discussion["topic"]).status_code == 200
    admin.web_post("hide_answer", message=discussion["message"], reason="广告")
    [item] = [n for n in asker.web_get(action="notifications").get_json()["notifications"]
              if n["kind"] == "card_hidden"]
    assert item["cause"] == "moderated"
    page = unescape(asker.http.get("/inbox?lang=en").get_data(as_text=True))
    said = page[page.index(f'id="n-{item["id"]}"'):]
    said = said[:said.index("</li>")]
    assert f"An administrator hid an answer (by {member.username}'s agent 答题虾)" in said
    assert "withdrawn" not in said, said
    # and the question's page says so where the card was, as it does for a withdrawal
    # (it said only that there was nothing to build a card from)
    shown = unescape(asker.http.get(f"/q/{discussion['topic']}?lang=en").get_data(as_text=True))
    assert 'id="card-moderated"' in shown and 'id="card-withdrawn"' not in shown
    assert "An admin hid an answer the card used, so the card is hidden" in shown
    assert 'id="card-moderated"' not in member.http.get(  # the asker's alone to act on
        f"/q/{discussion['topic']}?lang=en").get_data(as_text=True)
    admin.web_post("unhide_answer", message=discussion["message"])
    assert asker.web_post("card_preview", topic=discussion["topic"]).status_code == 200
    assert asker.web_post("card_publish", topic=discussion["topic"]).status_code == 200
    assert 'id="card-moderated"' not in asker.http.get(f"/q/{discussion['topic']}").get_data(
        as_text=True)  # a card again: nothing to say


def test_a_link_to_a_hidden_answer_says_it_is_not_shown(admin, asker, discussion):
    """/tasks, /memories and the inbox link to an answer: once hidden, the page says why it
    is not there instead of landing on an anchor that does not exist."""
    link = f"/q/{discussion['topic']}?answer={discussion['message']}&lang=en"
    assert 'id="answer-missing"' not in asker.http.get(link).get_data(as_text=True)
    admin.web_post("hide_answer", message=discussion["message"], reason="灌水")
    page = asker.http.get(link).get_data(as_text=True)
    assert 'id="answer-missing"' in page and "an admin may have hidden it" in page
    assert f'id="m-{discussion["message"]}"' not in page


def test_a_hidden_answer_is_asked_for_and_allowed_in_cards_no_more(admin, asker, member,
                                                                   discussion, db):
    """Shown to no one, a hidden answer cannot be asked of its author for a card (404, as a
    report of it is) nor allowed by its author; withdrawing it stays open to the author."""
    message = discussion["message"]
    assert member.web_post("share", message=message, sharePublic=False).status_code == 200
    admin.web_post("hide_answer", message=message, reason="广告")
    before = db.value("SELECT COUNT(*) FROM notifications WHERE kind = 'share_request'")
    assert_web_error(asker.web_post("share_request", message=message), 404, "not_found")
    assert db.value("SELECT COUNT(*) FROM notifications WHERE kind = 'share_request'") == before
    assert_web_error(member.web_post("share", message=message, sharePublic=True), 409,
                     "invalid_request")
    assert db.value("SELECT share_public FROM messages") == 0
    assert member.web_post("share", message=message, sharePublic=False).status_code == 200
    admin.web_post("unhide_answer", message=message)
    assert asker.web_post("share_request", message=message).status_code == 200
    assert member.web_post("share", message=message, sharePublic=True).status_code == 200


def test_hiding_replays_and_showing_again_restores_it(admin, asker, discussion, db):
    topic, message = discussion["topic"], discussion["message"]
    admin.web_post("hide_answer", message=message, reason="垃圾信息")
    again = admin.web_post("hide_answer", message=message, reason="又一次").get_json()
    assert again["replayed"] is True
    assert db.value("SELECT hidden_reason FROM messages") == "垃圾信息"
    r = admin.web_post("unhide_answer", message=message)
    assert r.get_json() == {"ok": True, "id": message, "hidden": False}
    assert [m["id"] for m in asker.web_get(topic=topic).get_json()["messages"]] == [message]
    assert db.one("SELECT hidden_reason, hidden_at FROM messages")[:] == (None, None)
    assert admin.web_post("unhide_answer", message=message).get_json()["replayed"] is True
    assert [r[0] for r in audit_rows(db)] == ["hide_answer", "unhide_answer"]


def test_hiding_a_flood_gives_the_question_its_room_back(app, admin, asker, member, db,
                                                        monkeypatch):
    """One member's agent filling a question leaves others no room (the cap counts valid
    answers): hiding the flood frees it; a hidden one shown again must fit."""
    monkeypatch.setattr("lobbytalks.services.preconditions.MAX_MESSAGES_PER_TOPIC", 2)
    flooder = member.new_agent("灌水虾")
    flooder.post("join_community", community="lobby")
    topic = asker.ask()
    flood = []
    for _ in range(2):
        task = flooder.claim(topic).get_json()["task"]["id"]
        flood.append(flooder.post("submit_result", taskId=task, **good_result(
            conclusion=f"第 {len(flood) + 1} 条：在线备份用 SQLite 的 backup API [S1]，不要直接复制文件。"
        )).get_json()["messageId"])
    honest = asker.new_agent("题主的虾")
    assert_external_error(honest.claim(topic), 409, "topic_unavailable")
    assert admin.web_post("hide_answer", message=flood[0], reason="灌水").status_code == 200
    assert asker.web_get(topic=topic).get_json()["messageCount"] == 1
    task = honest.claim(topic).get_json()["task"]["id"]
    assert honest.post("submit_result", taskId=task, **good_result()).status_code == 200
    assert_web_error(admin.web_post("unhide_answer", message=flood[0]), 409, "topic_unavailable")
    assert db.value("SELECT hidden_at IS NOT NULL FROM messages WHERE id = :id",
                    {"id": flood[0]}) == 1
    assert [r[0] for r in audit_rows(db)] == ["hide_answer"]
    assert admin.web_post("hide_answer", message=flood[1], reason="灌水").status_code == 200
    assert admin.web_post("unhide_answer", message=flood[0]).status_code == 200
    assert db.value("SELECT message_count FROM topics WHERE id = :id", {"id": topic}) == 2


def hidden_then_migrated_from(settings, admin, discussion, db, older: str):
    """The discussion's answer hidden, the database set back by ``older`` (SQL), then
    opened by a new app, which migrates it: that app's database."""
    admin.web_post("hide_answer", message=discussion["message"], reason="灌水")
    db.close_thread_connection()
    old = sqlite3.connect(settings.db_path)
    old.executescript(older)
    old.close()
    return create_app(settings).config["LOBBYTALKS"].db


@pytest.mark.sqlite_only
def test_the_migration_counts_hidden_answers_out(settings, admin, discussion, db):
    """Migration 0013: a database whose hidden answers were still counted counts them out."""
    again = hidden_then_migrated_from(settings, admin, discussion, db, (
        "UPDATE topics SET message_count = message_count + 1;"
        "DELETE FROM schema_migrations WHERE version >= 13;" + UNDO_0014))
    assert again.value("SELECT message_count FROM topics WHERE id = :id",
                       {"id": discussion["topic"]}) == 0


def test_a_hidden_answers_memory_reaches_no_agent_until_it_is_shown_again(admin, asker, member,
                                                                         discussion):
    """Its conclusion, remembered at its submit and confirmed, went on into every later
    task's context: hidden for an injection, it still fed the agent."""
    memory = member.web_get(action="memories").get_json()["memories"][0]
    assert member.web_post("memory_confirm", memory=memory["id"]).status_code == 200
    agent, other = discussion["agent"], asker.ask("日志轮转时要注意什么？")
    remembered = agent.get("get_context", topic=other).get_json()["memories"]
    assert len(remembered) == 1
    admin.web_post("hide_answer", message=discussion["message"], reason="提示注入")
    assert agent.get("get_context", topic=other).get_json()["memories"] == []
    admin.web_post("unhide_answer", message=discussion["message"])
    assert agent.get("get_context", topic=other).get_json()["memories"] == remembered


def test_a_question_whose_only_answer_is_hidden_is_answered_no_more(app, admin, asker, discussion):
    """Hiding lowered the count but left when the newest answer came: the question stayed
    first among the recently answered, and out of "no answer yet"."""
    topic, message = discussion["topic"], discussion["message"]
    newer = asker.ask("一个没有回答的新问题？")

    def listed(**filters) -> list[tuple[str, int | None]]:
        with app.config["LOBBYTALKS"].db.snapshot() as conn:
            page = search.browse(conn, **filters)["topics"]
        return [(t["id"], t["lastAnswerAt"]) for t in page]
    answered_at = dict(listed(sort="recent"))[topic]
    assert answered_at and listed(sort="recent")[0] == (topic, answered_at)
    admin.web_post("hide_answer", message=message, reason="灌水")
    assert [t for t, _ in listed(answered=False, sort="recent")] == [newer, topic]
    assert dict(listed(sort="recent"))[topic] is None
    admin.web_post("unhide_answer", message=message)
    assert dict(listed(sort="recent"))[topic] == answered_at


@pytest.mark.sqlite_only
def test_the_migration_dates_questions_by_their_shown_answers(settings, admin, discussion, db):
    """Migration 0029: a question whose answer was hidden before it kept the answer's time."""
    again = hidden_then_migrated_from(settings, admin, discussion, db, (
        "UPDATE topics SET last_answer_at = 1700000000;"
        "DELETE FROM schema_migrations WHERE version >= 29;"))
    assert again.value("SELECT last_answer_at FROM topics WHERE id = :id",
                       {"id": discussion["topic"]}) == 0


def test_a_frozen_claim_and_replies_skip_a_hidden_answer(app, admin, asker, member, discussion, db):
    topic, message = discussion["topic"], discussion["message"]
    agent = discussion["agent"]
    request_id = str(uuid.uuid4())
    claimed = agent.claim(topic, request_id).get_json()
    assert [m["id"] for m in claimed["context"]["messages"]] == [message]
    admin.web_post("hide_answer", message=message, reason="泄露隐私")
    replayed = agent.claim(topic, request_id).get_json()
    assert replayed["replayed"] is True and replayed["context"]["messages"] == []
    assert_external_error(agent.claim(topic, replyTo=message), 400, "invalid_reply")


@pytest.mark.parametrize("body, status", [
    ({"message": "msg_nothere", "reason": "x"}, 404),
    ({"reason": "没有对象"}, 400),
    ({"message": "MSG"}, 400),                       # hiding needs a reason
    ({"message": "MSG", "reason": "   "}, 400),
    ({"message": "MSG", "reason": "r" * 301}, 400),
    ({"message": "MSG", "reason": "a\nb"}, 400),
    ({"message": "bad id!", "reason": "x"}, 400),
    ({"message": "MSG", "reason": "x", "extra": 1}, 400),
])
def test_hide_validation_writes_nothing(admin, discussion, db, body, status):
    body = {k: discussion["message"] if v == "MSG" else v for k, v in body.items()}
    assert_web_error(admin.web_post("hide_answer", **body), status)
    assert count(db, "messages", "hidden_at IS NOT NULL") == 0 and count(db, "audit_log") == 0


@pytest.mark.parametrize("reason", ["", "   "])
def test_a_suspension_without_a_reason_is_told_so_at_the_reason_field(admin, member, db, reason):
    body = assert_web_error(admin.web_post("suspend_user", username=member.username,
                                           reason=reason), 400)
    assert body["error"] == "reason: 请写明原因"  # "reason: ": the page shows it at the field
    assert count(db, "users", "suspended_at IS NOT NULL") == 0


@pytest.mark.parametrize("action, body", [
    ("hide_answer", {"message": "MSG", "reason": "x"}),
    ("unhide_answer", {"message": "MSG"}),
    ("suspend_user", {"username": "NAME", "reason": "x"}),
    ("unsuspend_user", {"username": "NAME"}),
    ("reopen", {"topic": "TOPIC"}),
])
def test_only_admins_moderate(app, asker, member, discussion, db, action, body):
    body = {k: {"MSG": discussion["message"], "NAME": member.username,
                "TOPIC": discussion["topic"]}.get(v, v) for k, v in body.items()}
    body_error = assert_web_error(asker.web_post(action, **body), 403)
    assert "管理员" in body_error["error"]
    assert_web_error(asker.web_post(action), 403)  # even a broken body is refused as such
    assert_web_error(Person(app).web_post(action, **body), 401)
    assert count(db, "audit_log") == 0 and count(db, "messages", "hidden_at IS NOT NULL") == 0
    assert count(db, "users", "suspended_at IS NOT NULL") == 0


def test_an_admin_still_cannot_read_the_discussion(admin, discussion):
    read = admin.web_get(topic=discussion["topic"]).get_json()
    assert read["allowed"] is False and read["messages"] == [] and "privateContext" not in read["topic"]
    admin.web_post("hide_answer", message=discussion["message"], reason="举报")
    assert admin.web_get(topic=discussion["topic"]).get_json()["allowed"] is False


# --- suspending a person ------------------------------------------------------------------

def test_suspension_ends_sessions_tokens_and_leases_and_refuses_login_and_agents(
        app, admin, asker, member, db):
    agent = member.new_agent()
    agent.post("join_community", community="lobby")
    task = agent.claim(asker.ask()).get_json()["task"]["id"]
    r = admin.web_post("suspend_user", username=member.username.upper(), reason="批量刷屏")
    assert r.get_json() == {"ok": True, "username": member.username, "suspended": True}
    user_id = db.value("SELECT id FROM users WHERE username = :username", {"username": member.username})
    assert count(db, "sessions", "user_id = :user_id", {"user_id": user_id}) == 0
    assert count(db, "tokens", "user_id = :user_id AND revoked = 0", {"user_id": user_id}) == 0
    assert tuple(db.one("SELECT state, error FROM tasks WHERE id = :id", {"id": task})) == \
        ("failed", SUSPENDED_TASK)
    # The old cookie is dead; logging in again is refused with the reason.
    assert member.web_get(action="me").get_json()["user"] is None
    assert_external_error(member.manage_get(), 401, "unauthorized")
    refused = assert_web_error(member.web_post("login", username=member.username,
                                               password=member.password), 403)
    assert "停用" in refused["error"] and "批量刷屏" in refused["error"]
    assert "Set-Cookie" not in member.web_post("login", username=member.username,
                                               password=member.password).headers
    assert count(db, "sessions", "user_id = :user_id", {"user_id": user_id}) == 0
    # A wrong password still reads as a wrong password (nothing learned without it).
    assert_web_error(member.web_post("login", username=member.username, password="wrong pass 123"), 401)
    # The agent is told why, not just "invalid token"; over MCP as well.
    # 401, as the spec has it for a revoked token (the suspension revoked it), with the reason
    body = assert_external_error(agent.get("list_topics"), 401, "unauthorized")
    assert "停用" in body["error"] and "批量刷屏" in body["error"] and agent.token not in body["error"]
    mcp = agent.http.post("/api/external/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                          headers={**agent.headers, "Accept": "application/json, text/event-stream"})
    assert mcp.status_code == 401 and mcp.get_json()["error"]["data"]["code"] == "unauthorized"
    assert audit_rows(db) == [("suspend_user", "user", member.username, "批量刷屏", admin.username)]


def test_suspension_is_reversible(admin, member, db):
    agent = member.new_agent()
    admin.web_post("suspend_user", username=member.username, reason="误判")
    assert admin.web_post("suspend_user", username=member.username,
                          reason="再一次").get_json()["replayed"] is True
    assert admin.web_post("unsuspend_user", username=member.username).get_json() == {
        "ok": True, "username": member.username, "suspended": False}
    assert member.web_post("login", username=member.username,
                           password=member.password).status_code == 200
    assert db.one("SELECT suspended_at, suspended_reason FROM users WHERE username = :username",
                      {"username": member.username})[:] == (None, None)
    # Old tokens stay revoked (the generic refusal now); rotating connects the agent again.
    assert_external_error(agent.get("list_topics"), 401, "unauthorized")
    assert member.manage_post("rotate", profile=agent.profile_id).status_code == 200
    assert [r[0] for r in audit_rows(db)] == ["suspend_user", "unsuspend_user"]


def test_admins_and_unknown_people_cannot_be_suspended(app, admin, db):
    other_admin = make_admin(app)
    for name, status in ((admin.username, 403), (other_admin.username, 403), ("nobody_here", 404)):
        assert_web_error(admin.web_post("suspend_user", username=name, reason="x"), status)
    assert count(db, "users", "suspended_at IS NOT NULL") == 0 and count(db, "audit_log") == 0


def test_someone_made_admin_while_suspended_can_still_be_reinstated(app, admin, member, db):
    admin.web_post("suspend_user", username=member.username, reason="刷屏")
    assert accounts.set_admin(app.config["LOBBYTALKS"].db, member.username, True)
    assert_web_error(member.web_post("login", username=member.username, password=member.password), 403)
    assert admin.web_post("unsuspend_user", username=member.username).get_json()["suspended"] is False
    assert member.web_post("login", username=member.username, password=member.password).status_code == 200


# --- reopening and closing ----------------------------------------------------------------

def test_reopen_a_closed_question(admin, asker, member, db):
    topic = asker.ask()
    asker.web_post("close", topic=topic)
    agent = member.new_agent()
    agent.post("join_community", community="lobby")
    assert_external_error(agent.claim(topic), 409, "topic_unavailable")
    r = admin.web_post("reopen", topic=topic, reason="题主误操作")
    assert r.get_json() == {"ok": True, "id": topic, "status": "open"}
    row = db.one("SELECT status, closed_at, closed_by FROM topics")
    assert tuple(row) == ("open", None, None)
    assert agent.claim(topic).status_code == 200
    assert admin.web_post("reopen", topic=topic).get_json()["replayed"] is True
    assert_web_error(admin.web_post("reopen", topic="t_nothere"), 404)
    assert audit_rows(db) == [("reopen_question", "topic", topic, "题主误操作", admin.username)]


def test_an_admin_closing_someone_elses_question_is_audited(admin, asker, db):
    own, other = asker.ask("自己结束"), asker.ask("管理员结束")
    asker.web_post("close", topic=own)
    admin.web_post("close", topic=other)
    admin.web_post("close", topic=other)  # replay: no second entry
    assert audit_rows(db) == [("close_question", "topic", other, "", admin.username)]


# --- the /admin page ----------------------------------------------------------------------

def test_admin_page_is_for_admins_only(app, person):
    anonymous = Person(app).http.get("/admin")
    assert anonymous.status_code == 302 and "/login" in anonymous.headers["Location"]
    assert person.http.get("/admin").status_code == 404
    assert 'href="/admin"' not in person.http.get("/").get_data(as_text=True)


@pytest.mark.parametrize("lang, heading, withheld", [
    ("zh", "最近的回答", "结论不在公开答案卡中"),
    ("en", "Recent answers", "Its conclusion is in no public answer card"),
])
def test_admin_page_lists_public_facts_never_private_context(admin, asker, member, discussion,
                                                             lang, heading, withheld):
    page = admin.http.get(f"/admin?lang={lang}").get_data(as_text=True)
    assert heading in page and 'href="/admin"' in page
    assert discussion["message"] in page and member.username in page and asker.username in page
    assert "如何在 SQLite 中安全地做在线备份？" in page
    assert PRIVATE not in page
    assert withheld in page and "在线备份 API" not in page  # the conclusion is not public yet
    assert "官方文档说明备份 API" not in page  # reasoning never appears
    # Once a published card shows the conclusion to everyone, the admin sees it too.
    asker.web_post("card_preview", topic=discussion["topic"])
    asker.web_post("card_publish", topic=discussion["topic"])
    page = admin.http.get(f"/admin?lang={lang}").get_data(as_text=True)
    assert "在线备份 API" in page and PRIVATE not in page and "官方文档说明备份 API" not in page


def test_the_admin_pages_repeated_controls_name_what_they_act_on(app, admin, asker, member,
                                                                discussion):
    """Each answer, question and person has its own Hide/Close/Suspend and reason field:
    a screen reader hears which one (the visible words first)."""
    Person(app, username="another_one").register()
    second = asker.ask("另一个问题：WAL 文件为什么会变大？")
    task = discussion["agent"].claim(second).get_json()["task"]["id"]
    assert discussion["agent"].post("submit_result", taskId=task, **good_result()).status_code == 200
    page = unescape(admin.http.get("/admin?lang=en").get_data(as_text=True))
    for words in ("Hide answer", "Close question", "Suspend", "Reason (required)"):
        names = re.findall(rf'aria-label="({re.escape(words)}: [^"]+)"', page)
        assert len(names) >= 2 and len(names) == len(set(names)), (words, names)
    # the agent and the question, not an id spelled out letter by letter
    assert 'aria-label="Hide answer: 答题虾\'s answer to “如何在 SQLite 中安全地做在线备份？”"' in page
    assert f'aria-label="Hide answer: answer {discussion["message"]}' not in page
    assert 'aria-label="Suspend: another_one"' in page


def test_admin_page_shows_states_reasons_and_the_log(admin, asker, member, discussion):
    admin.web_post("hide_answer", message=discussion["message"], reason="广告内容")
    admin.web_post("suspend_user", username=member.username, reason="冒充他人")
    asker.web_post("close", topic=discussion["topic"])
    page = admin.http.get("/admin?lang=en").get_data(as_text=True)
    assert "Reason: 广告内容" in page and "Reason: 冒充他人" in page
    assert 'data-action="unhide_answer"' in page and 'data-action="unsuspend_user"' in page
    assert 'data-action="reopen"' in page
    reopen_form = page[page.index('data-action="reopen"'):]
    reopen_form = reopen_form[:reopen_form.index("</form>")]
    assert "required" not in reopen_form  # a note is optional there, unlike hiding's reason
    log = page[page.index('id="admin-log"'):]
    assert "hid an answer" in log and "suspended an account" in log and f"user {member.username}" in log


def test_admin_page_shows_a_public_conclusion_as_words_not_markdown(app, admin, asker, member):
    """The excerpt is one line of words: no raw ``**`` or backticks, and no live HTML."""
    agent = member.new_agent("格式虾")
    topic = asker.ask()
    task = agent.claim(topic).get_json()["task"]["id"]
    conclusion = "**用备份 API** [S1]：先 `sqlite3 .backup`，<b onclick=x>再校验</b>。"
    message = agent.post("submit_result", taskId=task,
                         **good_result(conclusion=conclusion)).get_json()["messageId"]
    assert member.web_post("share", message=message, sharePublic=True).status_code == 200
    asker.web_post("card_preview", topic=topic)
    assert asker.web_post("card_publish", topic=topic).status_code == 200
    page = admin.http.get("/admin?lang=en").get_data(as_text=True)
    excerpt = page[page.index(f'id="admin-m-{message}"'):]
    excerpt = excerpt[excerpt.index('class="excerpt public-conclusion"'):]
    excerpt = excerpt[:excerpt.index("</p>")]
    assert "用备份 API" in excerpt and "sqlite3 .backup" in excerpt
    assert "**" not in excerpt and "`" not in excerpt and "<b" not in excerpt


def _moderation_panel(page: str) -> str:
    """The admin's controls on a question's or a person's page ('' when there are none)."""
    if 'id="moderation"' not in page:
        return ""
    panel = page[page.index('id="moderation"'):]
    return panel[:panel.index("</section>")]


def busy_app(settings):
    """An app where 20 more questions or people than /admin lists are quickly made."""
    return create_app(settings.with_overrides(rate_topic="100/day", rate_register="100/hour"))


def test_an_admin_closes_and_reopens_any_question_on_its_own_page(settings):
    """/admin lists the 20 newest questions; older ones are moderated where they are."""
    app = busy_app(settings)
    admin, asker, member = make_admin(app), joined_person(app), joined_person(app)
    old = asker.ask("一个早就问过的问题：WAL 文件会自己变小吗？")
    for n in range(20):
        member.ask(f"后来的第 {n} 个问题：备份要多久做一次？")
    assert f"/q/{old}" not in admin.http.get("/admin").get_data(as_text=True)
    page = admin.http.get(f"/q/{old}?lang=en").get_data(as_text=True)
    panel = _moderation_panel(page)
    assert "Moderation" in panel and {"action": "close", "topic": old} in actions(panel)
    for someone in (asker, member, Person(app)):  # not for the asker, members or visitors
        assert _moderation_panel(someone.http.get(f"/q/{old}").get_data(as_text=True)) == ""
    assert admin.web_post("close", topic=old).status_code == 200
    panel = _moderation_panel(admin.http.get(f"/q/{old}?lang=en").get_data(as_text=True))
    assert 'data-action="reopen"' in panel and f'value="{old}"' in panel
    assert admin.web_post("reopen", topic=old, reason="误关").status_code == 200


def test_an_admin_suspends_anyone_from_their_page_or_by_name(settings):
    app = busy_app(settings)
    admin, member = make_admin(app), joined_person(app)
    for n in range(20):
        Person(app, username=f"later_{n}").register()
    assert f"admin-u-{member.username}" not in admin.http.get("/admin").get_data(as_text=True)
    admin_page = admin.http.get("/admin?lang=en").get_data(as_text=True)
    by_name = admin_page[admin_page.index('id="suspend-by-name"'):]
    by_name = by_name[:by_name.index("</form>")]
    assert 'data-action="suspend_user"' in by_name and 'name="username"' in by_name
    panel = _moderation_panel(admin.http.get(f"/u/{member.username}?lang=en").get_data(as_text=True))
    assert 'data-action="suspend_user"' in panel and f'value="{member.username}"' in panel
    assert _moderation_panel(member.http.get(f"/u/{member.username}").get_data(as_text=True)) == ""
    assert _moderation_panel(admin.http.get(f"/u/{admin.username}").get_data(as_text=True)) == ""
    admin.web_post("suspend_user", username=member.username, reason="冒充他人")
    panel = _moderation_panel(admin.http.get(f"/u/{member.username}?lang=en").get_data(as_text=True))
    assert "Reason: 冒充他人" in panel and 'data-action="unsuspend_user"' in panel
