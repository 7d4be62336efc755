"""What an admin does to someone's own answer or question reaches its owner's inbox: an
answer hidden or shown again, a question closed or reopened by someone else."""
from __future__ import annotations

import sqlite3

import pytest

from conftest import good_result
from helpers import UNDO_0015
from lobbytalks import create_app
from test_moderation import make_admin


def inbox(person) -> list[dict]:
    r = person.web_get(action="notifications")
    assert r.status_code == 200, r.get_json()
    return r.get_json()["notifications"]


def kinds(person) -> list[str]:
    return [n["kind"] for n in inbox(person)]


@pytest.fixture
def answered(asker, member):
    """The asker's question and the member's agent's answer to it."""
    agent = member.new_agent("答题虾")
    agent.post("join_community", community="lobby")
    topic = asker.ask("怎样备份 SQLite？")
    task = agent.claim(topic).get_json()["task"]["id"]
    message = agent.post("submit_result", taskId=task, **good_result()).get_json()["messageId"]
    return {"topic": topic, "message": message}


def test_hiding_and_showing_an_answer_tells_its_author(app, asker, member, answered):
    admin = make_admin(app)
    topic, message = answered["topic"], answered["message"]
    assert admin.web_post("hide_answer", message=message, reason="广告").status_code == 200
    assert admin.web_post("hide_answer", message=message, reason="广告").get_json()["replayed"]
    [hidden] = inbox(member)
    assert (hidden["kind"], hidden["actor"], hidden["messageId"]) == \
        ("answer_hidden", "答题虾", message)
    assert hidden["link"] == f"/q/{topic}?answer={message}#m-{message}"
    page = member.http.get("/inbox").get_data(as_text=True)
    assert "管理员隐藏了你的智能体 答题虾 在“怎样备份 SQLite？”下的回答" in page
    assert admin.web_post("unhide_answer", message=message).status_code == 200
    assert kinds(member) == ["answer_restored", "answer_hidden"]
    english = member.http.get("/inbox?lang=en").get_data(as_text=True)
    assert "An administrator showed your agent 答题虾&#39;s answer to “怎样备份 SQLite？” again" \
        in english
    assert "answer_hidden" not in kinds(asker) and "answer_restored" not in kinds(asker)


def test_an_admin_hiding_their_own_agents_answer_tells_nobody(app, asker):
    admin = make_admin(app)
    agent = admin.new_agent()
    agent.post("join_community", community="lobby")
    topic = asker.ask()
    task = agent.claim(topic).get_json()["task"]["id"]
    message = agent.post("submit_result", taskId=task, **good_result()).get_json()["messageId"]
    assert admin.web_post("hide_answer", message=message, reason="重复").status_code == 200
    assert kinds(admin) == []


def test_the_asker_hears_of_an_admin_closing_and_reopening_their_question(app, asker):
    admin = make_admin(app)
    topic = asker.ask("会被管理员结束的问题")
    assert admin.web_post("close", topic=topic).status_code == 200
    admin.web_post("close", topic=topic)  # a replay tells nothing more
    assert kinds(asker) == ["question_closed"]
    assert inbox(asker)[0]["link"] == f"/q/{topic}"
    assert admin.web_post("reopen", topic=topic, reason="误操作").status_code == 200
    assert admin.web_post("reopen", topic=topic).get_json()["replayed"]
    assert kinds(asker) == ["question_reopened", "question_closed"]
    page = asker.http.get("/inbox").get_data(as_text=True)
    assert "管理员结束了你的问题“会被管理员结束的问题”" in page
    assert "管理员重新开放了你的问题“会被管理员结束的问题”" in page


def test_closing_ones_own_question_tells_nobody(app, asker):
    admin = make_admin(app)
    own = asker.ask()
    asker.web_post("close", topic=own)
    assert kinds(asker) == []
    admin.join()
    mine = admin.ask()
    admin.web_post("close", topic=mine)
    admin.web_post("reopen", topic=mine, reason="再问一次")
    assert kinds(admin) == []


@pytest.mark.sqlite_only
def test_the_migration_keeps_every_notification_and_its_queued_mail(
        settings, app, asker, member, answered, db):
    """Migration 0015 rebuilds the notifications table on SQLite: its rows and ids stay,
    and so do the mails queued for them (a drop with foreign keys on would delete those)."""
    with db.transaction() as conn:
        conn.execute("INSERT INTO mail_outbox (notification_id, next_attempt, created)"
                     " SELECT id, 0, 0 FROM notifications")
    before = [tuple(r) for r in db.all("SELECT * FROM notifications ORDER BY id")]
    assert len(before) == 1
    db.close_thread_connection()
    old = sqlite3.connect(settings.db_path)
    old.executescript("DELETE FROM schema_migrations WHERE version >= 15;" + UNDO_0015)
    with pytest.raises(sqlite3.IntegrityError):  # the old list of kinds, as before 0015
        old.execute("INSERT INTO notifications (user_id, kind, topic_id, created)"
                    " SELECT user_id, 'question_closed', topic_id, 0 FROM notifications")
    old.close()
    again = create_app(settings).config["LOBBYTALKS"].db
    assert [tuple(r) for r in again.all("SELECT * FROM notifications ORDER BY id")] == before
    assert again.value("SELECT COUNT(*) FROM mail_outbox") == 1
    index_names = {r[0] for r in again.all(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'notifications'")}
    assert {"notifications_user", "notifications_unread", "notifications_message",
            "notifications_mailed"} <= index_names
    with again.transaction() as conn:  # foreign keys are back on: the mail goes with it
        conn.execute("DELETE FROM notifications")
    assert again.value("SELECT COUNT(*) FROM mail_outbox") == 0
