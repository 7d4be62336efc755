"""No one person's agents fill a question: they hold at most ``MAX_ANSWERS_PER_PERSON`` of
its places. One member's agent claimed the same question again and again and stored 200
answers (the same one each time), leaving the asker and every other member a question that
refused all claims, and the asker 200 notifications."""
from __future__ import annotations

import pytest

from conftest import contributor, good_result, settings_for
from helpers import assert_external_error
from test_moderation import make_admin
from lobbytalks.quotas import MAX_ANSWERS_PER_PERSON, MAX_MESSAGES_PER_TOPIC
from lobbytalks.services.preconditions import SHARE_FULL


@pytest.fixture
def settings(tmp_path, clock_file):
    # the claims of a whole share within the test's minute
    return settings_for(tmp_path / "data", clock_offset_file=str(clock_file),
                        rate_claim="1000/minute", rate_token="1000/minute")


def answer(agent, topic, n):
    task = agent.claim(topic).get_json()["task"]["id"]
    r = agent.post("submit_result", taskId=task, **good_result(
        conclusion=f"第 {n} 条：在线备份用 SQLite 的 backup API [S1]，不要直接复制数据库文件。"))
    assert r.status_code == 200, r.get_json()
    return r.get_json()["messageId"]


def test_one_person_holds_at_most_a_quarter_of_a_questions_places(app, asker, member, agent,
                                                                  db):
    assert MAX_ANSWERS_PER_PERSON * 4 == MAX_MESSAGES_PER_TOPIC
    topic = asker.ask()
    mine = [answer(agent, topic, n) for n in range(MAX_ANSWERS_PER_PERSON)]
    refused = agent.claim(topic)
    assert_external_error(refused, 409, "topic_unavailable")
    assert refused.get_json()["error"] == SHARE_FULL == (
        f"你的智能体在此话题已有 {MAX_ANSWERS_PER_PERSON} 条发言，达到每人上限")
    # the share is the person's, whichever of their agents asks
    assert_external_error(member.new_agent("第二只虾").claim(topic), 409, "topic_unavailable")
    # everyone else still answers, the asker's own agent too
    _, other = contributor(app, "别人的虾")
    answer(other, topic, 0)
    answer(asker.new_agent("题主的虾"), topic, 0)
    assert db.value("SELECT message_count FROM topics WHERE id = :id", {"id": topic}) == \
        MAX_ANSWERS_PER_PERSON + 2
    # a hidden answer holds no place, in the person's share as in the question's
    admin = make_admin(app)
    assert admin.web_post("hide_answer", message=mine[0], reason="灌水").status_code == 200
    answer(agent, topic, MAX_ANSWERS_PER_PERSON)
    assert_external_error(agent.claim(topic), 409, "topic_unavailable")
    # another question is a share of its own
    answer(agent, asker.ask("另一个关于备份的问题？"), 0)


def test_a_result_past_the_share_is_not_stored(asker, agent, db, monkeypatch):
    """Leases taken while the share had room: the first result fills it, the next is
    refused as not stored, and its lease stays for the agent to fail."""
    monkeypatch.setattr("lobbytalks.services.preconditions.MAX_ANSWERS_PER_PERSON", 2)
    topic = asker.ask()
    answer(agent, topic, 1)
    first, second = (agent.claim(topic).get_json()["task"]["id"] for _ in range(2))
    assert agent.post("submit_result", taskId=first, **good_result()).status_code == 200
    refused = agent.post("submit_result", taskId=second, **good_result())
    assert_external_error(refused, 409, "submission_rejected")
    assert refused.get_json()["error"] == SHARE_FULL
    assert db.value("SELECT COUNT(*) FROM messages WHERE topic_id = :id", {"id": topic}) == 2
    assert agent.get("get_task_status", taskId=second).get_json()["task"]["state"] == "leased"
    assert agent.post("fail_task", taskId=second, error="本人份额已满").status_code == 200


def test_suspending_a_flooder_can_hide_every_answer_they_gave(app, asker, member, agent, db):
    """Four accounts still fill a question, and hiding a flood took an admin one click per
    answer: suspending a person can hide every answer their agents gave, in one write."""
    from test_moderation import audit_rows
    admin = make_admin(app)
    first, second = asker.ask(), asker.ask("另一个关于备份的问题？")
    for page in (f"/u/{member.username}?lang=en", "/admin?lang=en"):  # the option, labelled
        assert "> Also hide all their answers</label>" in \
            admin.http.get(page).get_data(as_text=True)
    # repeated for every person listed, each box says whose answers it hides
    assert f'aria-label="Also hide all their answers: {member.username}"' in \
        admin.http.get("/admin?lang=en").get_data(as_text=True)
    flood = [answer(agent, topic, n) for n, topic in enumerate((first, first, second))]
    _, other = contributor(app, "别人的虾")
    kept = answer(other, first, 9)
    task = agent.claim(second).get_json()["task"]["id"]  # a lease held as it happens
    assert admin.web_post("suspend_user", username=member.username, reason="刷屏",
                          hideAnswers="yes").status_code == 400  # a boolean, nothing else
    r = admin.web_post("suspend_user", username=member.username, reason="刷屏", hideAnswers=True)
    assert r.get_json() == {"ok": True, "username": member.username, "suspended": True,
                            "answersHidden": 3}
    assert [row[0] for row in db.all("SELECT id FROM messages WHERE hidden_at IS NULL")] == [kept]
    assert [row[0] for row in db.all(
        "SELECT message_count FROM topics WHERE id IN (:a, :b) ORDER BY id = :b",
        {"a": first, "b": second})] == [1, 0]
    assert [m["id"] for m in asker.web_get(topic=first).get_json()["messages"]] == [kept]
    assert db.value("SELECT state FROM tasks WHERE id = :id", {"id": task}) == "failed"
    assert sorted(row[2] for row in audit_rows(db) if row[0] == "hide_answer") == sorted(flood)
    assert [row[:2] for row in audit_rows(db)][-1] == ("suspend_user", "user")
    # the suspended person is not told of each (their suspension says why)
    assert db.value("SELECT COUNT(*) FROM notifications WHERE kind = 'answer_hidden'") == 0
    # again: nothing more to hide, a replay; hiding also works for someone suspended before
    again = admin.web_post("suspend_user", username=member.username, reason="刷屏",
                           hideAnswers=True).get_json()
    assert again == {"ok": True, "username": member.username, "suspended": True,
                     "answersHidden": 0, "replayed": True}
    # without the option nothing is hidden, as before
    _, third = contributor(app, "第三只虾")
    third_answer = answer(third, second, 1)
    owner = db.value("SELECT u.username FROM users u JOIN messages m ON m.user_id = u.id"
                     " WHERE m.id = :id", {"id": third_answer})
    assert "answersHidden" not in admin.web_post("suspend_user", username=owner,
                                                 reason="另一个").get_json()
    assert db.value("SELECT hidden_at IS NULL FROM messages WHERE id = :id",
                    {"id": third_answer}) == 1
    r = admin.web_post("suspend_user", username=owner, reason="另一个", hideAnswers=True)
    assert r.get_json()["answersHidden"] == 1 and "replayed" not in r.get_json()
    # reinstating takes no such option
    assert admin.web_post("unsuspend_user", username=owner, hideAnswers=True).status_code == 400


def test_an_answer_another_admin_hides_meanwhile_is_not_hidden_twice(app, asker, member, agent,
                                                                     db, monkeypatch):
    """The suspension lists the answers, then waits for each question's lock: one hidden by
    another admin in between must not give its place back a second time."""
    from lobbytalks.services import moderation
    admin = make_admin(app)
    topic = asker.ask()
    first, second = answer(agent, topic, 1), answer(agent, topic, 2)
    hold = moderation.hold_topic

    def another_admin_first(conn, topic_id):  # as if their hide had committed just before
        conn.execute("UPDATE messages SET hidden_at = 1, hidden_reason = 'x' WHERE id = :id",
                     {"id": first})
        conn.execute("UPDATE topics SET message_count = message_count - 1 WHERE id = :id",
                     {"id": topic_id})
        hold(conn, topic_id)

    monkeypatch.setattr(moderation, "hold_topic", another_admin_first)
    r = admin.web_post("suspend_user", username=member.username, reason="刷屏", hideAnswers=True)
    assert r.get_json()["answersHidden"] == 1
    assert db.value("SELECT message_count FROM topics WHERE id = :id", {"id": topic}) == 0
    assert db.value("SELECT hidden_reason FROM messages WHERE id = :id", {"id": second}) == "刷屏"


def test_showing_an_answer_again_keeps_to_the_share(app, asker, agent, db, monkeypatch):
    """An admin showing a hidden answer again put its author past the share (51 of theirs):
    the places are counted as a claim counts them."""
    from helpers import assert_web_error
    monkeypatch.setattr("lobbytalks.services.preconditions.MAX_ANSWERS_PER_PERSON", 2)
    admin = make_admin(app)
    topic = asker.ask()
    first, _ = answer(agent, topic, 1), answer(agent, topic, 2)
    assert admin.web_post("hide_answer", message=first, reason="重复").status_code == 200
    third = answer(agent, topic, 3)
    r = admin.web_post("unhide_answer", message=first)
    assert assert_web_error(r, 409, "topic_unavailable")["error"] == SHARE_FULL
    assert db.value("SELECT hidden_at IS NOT NULL FROM messages WHERE id = :id",
                    {"id": first}) == 1
    assert admin.web_post("hide_answer", message=third, reason="重复").status_code == 200
    assert admin.web_post("unhide_answer", message=first).status_code == 200
    assert db.value("SELECT message_count FROM topics WHERE id = :id", {"id": topic}) == 2
