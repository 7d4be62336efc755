"""Leases (§6): 30-minute lease, heartbeat to claim + 2 h, three live leases, settlement."""
from __future__ import annotations

import pytest

from lobbytalks import clock

from conftest import advance, count, good_result, joined_person
from helpers import assert_external_error


@pytest.fixture
def world(asker, member, agent):
    """The asker, the agent's owner and the agent."""
    return asker, member, agent


def test_heartbeat_extends_to_now_plus_thirty_minutes(world, clock_file):
    asker, _, agent = world
    task = agent.claim(asker.ask()).get_json()["task"]
    advance(clock_file, 600)
    before = clock.now()  # the heartbeat may fall in a later second than the claim
    beat = agent.post("heartbeat", taskId=task["id"]).get_json()["task"]
    assert before + 1800 <= beat["expires"] <= clock.now() + 1800
    assert beat["expires"] >= task["created"] + 600 + 1800


def test_heartbeat_is_capped_at_two_hours_after_claim(world, clock_file):
    asker, _, agent = world
    task = agent.claim(asker.ask()).get_json()["task"]
    for _ in range(4):  # at 25, 50, 75 and 100 minutes
        advance(clock_file, 25 * 60)
        r = agent.post("heartbeat", taskId=task["id"])
        assert r.status_code == 200
        assert r.get_json()["task"]["expires"] <= task["created"] + 7200
    assert r.get_json()["task"]["expires"] == task["created"] + 7200
    advance(clock_file, 20 * 60 + 1)  # just past claim + 2 h
    assert_external_error(agent.post("heartbeat", taskId=task["id"]), 409, "task_terminal")


def test_heartbeat_after_expiry_is_refused_and_settles(world, clock_file, db):
    asker, _, agent = world
    task = agent.claim(asker.ask()).get_json()["task"]["id"]
    advance(clock_file, 1801)
    assert_external_error(agent.post("heartbeat", taskId=task), 409, "task_terminal")
    assert db.value("SELECT state FROM tasks") == "expired"


def test_fail_after_expiry_is_refused_and_settles(world, clock_file, db):
    asker, _, agent = world
    task = agent.claim(asker.ask()).get_json()["task"]["id"]
    advance(clock_file, 1801)
    assert_external_error(agent.post("fail_task", taskId=task, error="工具超时"), 409,
                          "task_terminal")
    assert db.value("SELECT state FROM tasks") == "expired"
    assert db.value("SELECT kind FROM notifications") == "task_expired"


def test_heartbeat_requires_membership_and_open_topic(world, db):
    asker, helper, agent = world
    topic = asker.ask()
    task = agent.claim(topic).get_json()["task"]["id"]
    asker.web_post("close", topic=topic)
    assert_external_error(agent.post("heartbeat", taskId=task), 409, "topic_unavailable")
    second = agent.claim(asker.ask("另一个")).get_json()["task"]["id"]
    helper.communities_post("leave", community="lobby")
    assert_external_error(agent.post("heartbeat", taskId=second), 403, "forbidden")
    # Failing is still allowed after leaving.
    assert agent.post("fail_task", taskId=second, error="已退出社区").status_code == 200


def test_status_query_settles_expiry(world, clock_file, db):
    asker, _, agent = world
    task = agent.claim(asker.ask()).get_json()["task"]["id"]
    advance(clock_file, 1800)
    status = agent.get("get_task_status", taskId=task).get_json()["task"]
    assert status["state"] == "expired"
    assert db.value("SELECT state FROM tasks") == "expired"


def test_three_live_leases_per_user(world, clock_file, db):
    asker, helper, agent = world
    topics = [asker.ask(f"问题 {i}") for i in range(4)]
    second_agent = helper.new_agent(name="第二只")
    tasks = [agent.claim(topics[0]), agent.claim(topics[1]), second_agent.claim(topics[2])]
    assert all(r.status_code == 200 for r in tasks)
    first_expires = tasks[0].get_json()["task"]["expires"]

    def retry_after() -> int:
        """Until the first of the three runs out (a back-off the spec's §12 asks for), read
        on the server's clock, whose second may turn during the request."""
        before = clock.now()
        refused = second_agent.claim(topics[3])
        assert_external_error(refused, 429, "task_limit")
        assert int(refused.headers["Retry-After"]) in range(first_expires - clock.now(),
                                                            first_expires - before + 1)
        return int(refused.headers["Retry-After"])

    assert 1800 - 60 < retry_after() <= 1800
    advance(clock_file, 600)
    assert 1200 - 60 < retry_after() <= 1200
    assert count(db, "tasks") == 3
    # A finished task frees its slot; so does an expired one.
    agent.post("submit_result", taskId=tasks[0].get_json()["task"]["id"], **good_result())
    assert second_agent.claim(topics[3]).status_code == 200
    advance(clock_file, 1801)
    assert agent.claim(topics[0]).status_code == 200


def test_a_lease_on_a_question_since_closed_or_taken_down_frees_its_slot(app, world):
    """It can be neither renewed nor submitted; counted until it expired, someone else's
    close kept its holder's agents from claiming anything for up to half an hour."""
    from test_moderation import make_admin
    admin = make_admin(app)
    asker, helper, agent = world
    topics = [asker.ask(f"问题 {i}") for i in range(5)]
    second_agent = helper.new_agent(name="第二只")
    first = agent.claim(topics[0]).get_json()["task"]["id"]
    assert agent.claim(topics[1]).status_code == 200
    assert second_agent.claim(topics[2]).status_code == 200
    assert_external_error(second_agent.claim(topics[3]), 429, "task_limit")
    assert asker.web_post("close", topic=topics[0]).status_code == 200
    # closed, it can be neither renewed nor submitted (the close's own words)
    assert_external_error(agent.post("heartbeat", taskId=first), 409, "topic_unavailable")
    tasks_page = helper.http.get("/tasks?lang=en").get_data(as_text=True)  # not "lease valid"
    assert tasks_page.count("The question was closed: this lease can no longer be") == 1
    assert second_agent.claim(topics[3]).status_code == 200
    assert_external_error(agent.claim(topics[4]), 429, "task_limit")
    assert admin.web_post("hide_question", topic=topics[1], reason="测试").status_code == 200
    assert agent.claim(topics[4]).status_code == 200
    # Reopened, the question does not bring its old lease back on top of three others
    # (it did: four usable leases, six with three agents on it).
    assert admin.web_post("reopen", topic=topics[0], reason="误关").status_code == 200
    held = [t for t in helper.manage_get(action="tasks").get_json()["tasks"]
            if t["state"] == "leased"]
    assert len(held) == 3 and topics[0] not in {t["topic"] for t in held}
    assert_external_error(agent.post("heartbeat", taskId=first), 409, "task_terminal")
    assert_external_error(agent.post("submit_result", taskId=first, **good_result()), 409,
                          "task_terminal")


def test_leases_in_a_community_one_left_free_their_slots_and_end_on_rejoining(world):
    """They can be neither renewed nor submitted once their holder has left, yet they kept
    the holder's agents from claiming anything else for up to half an hour."""
    asker, helper, agent = world
    club = asker.communities_post("create", name="读书会").get_json()["id"]
    assert helper.communities_post("join", community=club).status_code == 200
    left_behind = [agent.claim(asker.ask(f"读书会问题 {i}", community=club)).get_json()["task"]["id"]
                   for i in range(3)]
    lobby = [asker.ask(f"广场问题 {i}") for i in range(4)]
    assert_external_error(agent.claim(lobby[0]), 429, "task_limit")
    assert helper.communities_post("leave", community=club).status_code == 200
    # out of the community: neither renewed nor submitted (as before), and no longer counted
    assert_external_error(agent.post("heartbeat", taskId=left_behind[0]), 403, "forbidden")
    assert_external_error(agent.post("submit_result", taskId=left_behind[1], **good_result()),
                          409, "submission_rejected")
    for topic in lobby[:3]:
        assert agent.claim(topic).status_code == 200
    assert_external_error(agent.claim(lobby[3]), 429, "task_limit")
    # Back in it, the old leases do not come back on top of three others: they have ended.
    assert helper.communities_post("join", community=club).status_code == 200
    held = {t["id"]: t for t in helper.manage_get(action="tasks").get_json()["tasks"]}
    assert [held[t]["state"] for t in left_behind] == ["failed"] * 3
    assert "退出过这个社区" in held[left_behind[2]]["error"]
    assert sum(t["state"] == "leased" for t in held.values()) == 3
    assert_external_error(agent.post("heartbeat", taskId=left_behind[2]), 409, "task_terminal")


def test_expired_task_rejects_submission(world, clock_file, db):
    asker, _, agent = world
    task = agent.claim(asker.ask()).get_json()["task"]["id"]
    advance(clock_file, 1801)
    assert_external_error(agent.post("submit_result", taskId=task, **good_result()), 409,
                          "submission_rejected")
    assert db.value("SELECT state FROM tasks") == "expired"
    # Again, now that the expiry is recorded: the same answer, not one that depends on
    # which request settled the lease first.
    assert_external_error(agent.post("submit_result", taskId=task, **good_result()), 409,
                          "submission_rejected")
    assert count(db, "messages") == 0


def test_a_submit_after_a_status_query_saw_the_lease_expire_is_rejected_alike(world, clock_file,
                                                                              db):
    asker, _, agent = world
    task = agent.claim(asker.ask()).get_json()["task"]["id"]
    advance(clock_file, 1801)
    assert agent.get("get_task_status", taskId=task).get_json()["task"]["state"] == "expired"
    assert_external_error(agent.post("submit_result", taskId=task, **good_result()), 409,
                          "submission_rejected")
    assert count(db, "messages") == 0


def test_claim_replay_does_not_include_later_messages(app, world):
    asker, helper, agent = world
    topic = asker.ask()
    first = agent.claim(topic).get_json()["task"]["id"]
    mine = agent.post("submit_result", taskId=first, **good_result()).get_json()["messageId"]
    frozen = agent.claim(topic, "11111111-2222-3333-4444-555555555555").get_json()
    assert [m["id"] for m in frozen["context"]["messages"]] == [mine]
    other = joined_person(app)
    other_agent = other.new_agent()
    t = other_agent.claim(topic).get_json()["task"]["id"]
    other_agent.post("submit_result", taskId=t, **good_result(
        conclusion="另一种做法：用 VACUUM INTO 生成一致的快照文件，也能在线备份 [S1]。"))
    replay = agent.claim(topic, "11111111-2222-3333-4444-555555555555").get_json()
    assert replay["replayed"] is True
    assert [m["id"] for m in replay["context"]["messages"]] == [mine]
    live = agent.get("get_context", topic=topic).get_json()
    assert len(live["messages"]) == 2


def test_manage_view_fails_leases_of_expired_tokens(world, db):
    asker, helper, agent = world
    agent.claim(asker.ask())
    with db.transaction() as conn:  # the token ran out, the lease did not
        conn.execute("UPDATE tokens SET expires = created")
    helper.manage_get()
    state, error = db.one("SELECT state, error FROM tasks")
    assert state == "failed" and "Token" in error
