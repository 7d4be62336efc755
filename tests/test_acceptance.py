"""The protocol's acceptance list (§13), one named test per item, through HTTP."""
from __future__ import annotations


from conftest import AgentClient, Person, advance, count, good_result, joined_person
from helpers import assert_external_error


def test_01_wrong_token_is_rejected(app, member):
    agent = member.new_agent()
    wrong = AgentClient(app, agent.token[:-1] + ("A" if agent.token[-1] != "A" else "B"),
                        agent.profile_id, agent.token_id)
    assert_external_error(wrong.get("list_topics"), 401, "unauthorized")
    assert_external_error(wrong.post("join_community", community="lobby"), 401, "unauthorized")


def test_02_claim_without_joining_is_rejected(app, asker, db):
    outsider = Person(app).register()
    assert_external_error(outsider.new_agent().claim(asker.ask()), 403, "forbidden")
    assert count(db, "tasks") == 0


def test_03_first_context_has_no_full_text(asker, member):
    topic = asker.ask(privateContext="题主的私密背景")
    first = member.new_agent(name="甲")
    t = first.claim(topic).get_json()["task"]["id"]
    first.post("submit_result", taskId=t, **good_result())
    # A different user's agent, joined but never contributed, sees nothing of the discussion.
    newcomer = Person(asker.http.application).register()
    newcomer.join()
    ctx = newcomer.new_agent().get("get_context", topic=topic).get_json()
    assert ctx["allowed"] is False and ctx["messages"] == []
    assert "题主的私密背景" not in str(ctx)


def test_04_contribution_unlocks_reading(app, asker, member):
    topic = asker.ask()
    others = joined_person(app)
    other_agent = others.new_agent()
    t = other_agent.claim(topic).get_json()["task"]["id"]
    other_agent.post("submit_result", taskId=t, **good_result())
    agent = member.new_agent()
    assert agent.get("get_context", topic=topic).get_json()["allowed"] is False
    t = agent.claim(topic).get_json()["task"]["id"]
    agent.post("submit_result", taskId=t, **good_result(
        conclusion="也可以用 VACUUM INTO 在运行时生成一致快照，但会占用额外磁盘空间 [S1]。"))
    ctx = agent.get("get_context", topic=topic).get_json()
    assert ctx["allowed"] is True and len(ctx["messages"]) == 2
    # Another agent of the same user inherits the right.
    sibling = member.new_agent(name="同主人的另一只")
    assert sibling.get("get_context", topic=topic).get_json()["allowed"] is True
    assert member.web_get(topic=topic).get_json()["allowed"] is True


def test_05_same_result_replays_without_duplicates(asker, member, db):
    agent = member.new_agent()
    t = agent.claim(asker.ask()).get_json()["task"]["id"]
    first = agent.post("submit_result", taskId=t, **good_result()).get_json()
    again = agent.post("submit_result", taskId=t, **good_result()).get_json()
    assert again["replayed"] is True and again["messageId"] == first["messageId"]
    assert count(db, "messages") == 1 and count(db, "memories") == 1
    assert db.value("SELECT message_count FROM topics") == 1


def test_06_different_result_conflicts(asker, member, db):
    agent = member.new_agent()
    t = agent.claim(asker.ask()).get_json()["task"]["id"]
    agent.post("submit_result", taskId=t, **good_result())
    changed = good_result(evidence=[{**good_result()["evidence"][0],
                                     "retrievedAt": "2026-10-02T00:00:00Z"}])
    assert_external_error(agent.post("submit_result", taskId=t, **changed), 409,
                          "idempotency_conflict")
    assert count(db, "messages") == 1


def test_07_failure_does_not_unlock(asker, member, db):
    topic = asker.ask()
    other = Person(member.app).register()
    other.join()
    oa = other.new_agent()
    ot = oa.claim(topic).get_json()["task"]["id"]
    oa.post("submit_result", taskId=ot, **good_result())
    agent = member.new_agent()
    t = agent.claim(topic).get_json()["task"]["id"]
    agent.post("fail_task", taskId=t, error="没有找到可靠来源")
    ctx = agent.get("get_context", topic=topic).get_json()
    assert ctx["allowed"] is False and ctx["messages"] == []
    assert member.web_get(topic=topic).get_json()["messages"] == []


def test_08_submit_after_leaving_is_rejected(asker, member, db):
    agent = member.new_agent()
    t = agent.claim(asker.ask()).get_json()["task"]["id"]
    member.communities_post("leave", community="lobby")
    assert_external_error(agent.post("submit_result", taskId=t, **good_result()), 409,
                          "submission_rejected")
    assert count(db, "messages") == 0
    assert db.value("SELECT state FROM tasks") == "leased"


def test_09_expired_task_is_rejected(asker, member, db, clock_file):
    agent = member.new_agent()
    t = agent.claim(asker.ask()).get_json()["task"]["id"]
    advance(clock_file, 31 * 60)
    assert_external_error(agent.post("submit_result", taskId=t, **good_result()), 409,
                          "submission_rejected")
    assert_external_error(agent.post("heartbeat", taskId=t), 409, "task_terminal")
    assert count(db, "messages") == 0


def test_10_rotation_does_not_transfer_old_tasks(app, asker, member, db):
    agent = member.new_agent()
    t = agent.claim(asker.ask()).get_json()["task"]["id"]
    issued = member.manage_post("rotate", profile=agent.profile_id).get_json()
    fresh = AgentClient(app, issued["token"], issued["profileId"], issued["tokenId"])
    assert_external_error(fresh.post("submit_result", taskId=t, **good_result()), 404, "not_found")
    assert_external_error(agent.post("submit_result", taskId=t, **good_result()), 401,
                          "unauthorized")
    assert db.value("SELECT state FROM tasks") == "failed"


def test_11_sources_and_tool_summaries_are_shown_as_submitted(asker, member):
    topic = asker.ask()
    agent = member.new_agent()
    t = agent.claim(topic).get_json()["task"]["id"]
    result = good_result()
    agent.post("submit_result", taskId=t, **result)
    message = asker.web_get(topic=topic).get_json()["messages"][0]
    assert message["text"] == result["conclusion"]
    assert message["sources"] == result["evidence"]
    assert message["delivery"]["toolRuns"] == result["toolRuns"]
    assert message["delivery"]["support"] == result["reasoningSummary"]
    assert message["delivery"]["uncertainties"] == result["uncertainties"]
    assert message["provenance"] == "external-self-reported"
    via_agent = agent.get("get_context", topic=topic).get_json()["messages"][0]
    assert via_agent["sources"] == result["evidence"]
