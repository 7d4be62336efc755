"""One table of task preconditions: the same fact refused with each action's own code."""
from __future__ import annotations

import pytest

from conftest import count, good_result
from helpers import assert_external_error
from lobbytalks.errors import ApiError
from lobbytalks.quotas import MAX_ANSWERS_PER_PERSON, MAX_MESSAGES_PER_TOPIC
from lobbytalks.services.preconditions import TOPIC_REFUSALS, check_topic, require_leased
from test_leases import world  # noqa: F401  (the asker, a lobby member and its agent)


def _topic(**changes):
    """A topic as reading.get_topic_for_member reads it for a member."""
    row = {"status": "open", "kind": "discussion", "community_id": "lobby", "message_count": 0,
           "member": 1, "own_answers": 0}
    return {**row, **changes}


@pytest.mark.parametrize("action, topic, code", [
    ("claim_task", _topic(status="closed"), "topic_unavailable"),
    ("claim_task", _topic(kind="announcement"), "topic_unavailable"),
    ("claim_task", _topic(message_count=MAX_MESSAGES_PER_TOPIC), "topic_unavailable"),
    ("claim_task", _topic(member=0), "forbidden"),
    ("claim_task", _topic(own_answers=MAX_ANSWERS_PER_PERSON), "topic_unavailable"),
    ("heartbeat", _topic(status="closed"), "topic_unavailable"),
    ("heartbeat", _topic(member=0), "forbidden"),
    ("submit_result", _topic(status="closed"), "submission_rejected"),
    ("submit_result", _topic(message_count=MAX_MESSAGES_PER_TOPIC), "submission_rejected"),
    ("submit_result", _topic(member=0), "submission_rejected"),
    ("submit_result", _topic(own_answers=MAX_ANSWERS_PER_PERSON), "submission_rejected"),
])
def test_each_action_refuses_a_topic_with_its_own_code(action, topic, code):
    with pytest.raises(ApiError) as refused:
        check_topic(action, topic)
    assert refused.value.code == code


def test_a_full_topic_is_no_reason_to_stop_a_heartbeat():
    check_topic("heartbeat", _topic(message_count=MAX_MESSAGES_PER_TOPIC,
                                    own_answers=MAX_ANSWERS_PER_PERSON))
    assert "room" not in TOPIC_REFUSALS["heartbeat"]
    assert "share" not in TOPIC_REFUSALS["heartbeat"]


def test_the_full_message_states_the_cap():
    assert TOPIC_REFUSALS["submit_result"]["room"][1] == f"话题已达到 {MAX_MESSAGES_PER_TOPIC} 条发言上限"


def test_only_a_leased_task_changes():
    require_leased({"state": "leased"})
    for state in ("done", "failed", "expired"):
        with pytest.raises(ApiError) as refused:
            require_leased({"state": state})
        assert refused.value.code == "task_terminal"


def test_leaving_the_community_is_refused_per_action_over_http(world, db):
    asker, helper, agent = world
    first, second = asker.ask(), asker.ask("另一个关于备份的问题？")
    task = agent.claim(first).get_json()["task"]["id"]
    helper.communities_post("leave", community="lobby")
    assert_external_error(agent.post("heartbeat", taskId=task), 403, "forbidden")
    assert_external_error(agent.post("submit_result", taskId=task, **good_result()), 409,
                          "submission_rejected")
    assert_external_error(agent.claim(second), 403, "forbidden")
    assert db.value("SELECT state FROM tasks WHERE id = :id", {"id": task}) == "leased"
    assert count(db, "tasks") == 1 and count(db, "messages") == 0


def test_a_closed_question_is_refused_per_action_over_http(world, db):
    asker, _, agent = world
    topic = asker.ask()
    task = agent.claim(topic).get_json()["task"]["id"]
    asker.web_post("close", topic=topic)
    assert_external_error(agent.post("heartbeat", taskId=task), 409, "topic_unavailable")
    assert_external_error(agent.post("submit_result", taskId=task, **good_result()), 409,
                          "submission_rejected")
    assert_external_error(agent.claim(topic), 409, "topic_unavailable")
    assert count(db, "messages") == 0 and count(db, "tasks") == 1


def test_a_done_task_replays_and_then_refuses_a_heartbeat(world, db):
    asker, _, agent = world
    task = agent.claim(asker.ask()).get_json()["task"]["id"]
    assert agent.post("submit_result", taskId=task, **good_result()).status_code == 200
    again = agent.post("submit_result", taskId=task, **good_result())
    assert again.status_code == 200 and again.get_json()["replayed"] is True
    assert_external_error(agent.post("heartbeat", taskId=task), 409, "task_terminal")
    assert_external_error(agent.post("fail_task", taskId=task, error="太晚了"), 409, "task_terminal")
    assert count(db, "messages") == 1
    assert db.value("SELECT state FROM tasks") == "done"
