"""Structured answers (contract 1.0.2): limits, what messages carry, and old-shape replays."""
from __future__ import annotations

import json

import pytest
from conftest import ask_question, contributor, count, good_result
from helpers import assert_external_error
from qa_helpers import claim_ok, result, submit_ok

EMOJI = "😀"  # two UTF-16 code units: lengths are JavaScript lengths


@pytest.fixture
def setup(app):
    asking, topic = ask_question(app)
    person, agent = contributor(app)
    return {"asker": asking, "topic": topic, "person": person, "agent": agent}


def _submit(setup, **overrides):
    task = claim_ok(setup["agent"], setup["topic"])["task"]
    return task, setup["agent"].post("submit_result", taskId=task["id"], **result(**overrides))


ACCEPTED = {
    "reasoningSummary at 1600": {"reasoningSummary": "理" * 1600},
    "conditions 4 x 240": {"conditions": ["条" * 240] * 4},
    "condition of 120 emoji = 240 units": {"conditions": [EMOJI * 120]},
    "uncertainties string at 600": {"uncertainties": "疑" * 600},
    "uncertainties array 4 x 240": {"uncertainties": ["疑" * 240] * 4},
    "conclusion at 30 after trim": {"conclusion": "  " + "结" * 30 + "  "},
    # JavaScript's trim() keeps these (Python's strip() would not): 1 + 29 units
    "conclusion at 30 with a leading U+001F": {"conclusion": "\x1f" + "结" * 29},
    "conclusion at 30 with a trailing U+0085": {"conclusion": "结" * 29 + "\x85"},
    "conclusion at 200": {"conclusion": "结" * 200},
}
REJECTED = {
    "reasoningSummary at 1601": {"reasoningSummary": "理" * 1601},
    "five conditions": {"conditions": ["条件"] * 5},
    "condition at 241": {"conditions": ["条" * 241]},
    "condition of 120 emoji + 1": {"conditions": [EMOJI * 120 + "a"]},
    "empty condition": {"conditions": [" "]},
    "conditions not a list": {"conditions": "只有一条"},
    "uncertainties string at 601": {"uncertainties": "疑" * 601},
    "five uncertainties": {"uncertainties": ["疑"] * 5},
    "uncertainty item at 241": {"uncertainties": ["疑" * 241]},
    "conclusion at 29 after trim": {"conclusion": " " + "结" * 29 + " "},
    # JavaScript's trim() removes U+FEFF and U+3000 (Python's strip() keeps U+FEFF)
    "conclusion at 29 after trimming U+FEFF": {"conclusion": "\ufeff" + "结" * 29 + "\u3000"},
    "conclusion at 201": {"conclusion": "结" * 201},
}


@pytest.mark.parametrize("overrides", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_accepted_shapes_are_stored(setup, db, overrides):
    task, r = _submit(setup, **overrides)
    assert r.status_code == 200, r.get_json()
    row = db.one("SELECT text, reasoning_summary, conditions, uncertainties FROM messages"
                     " WHERE task_id = :task_id", {"task_id": task["id"]})
    sent = {**good_result(), **overrides}
    assert row["text"] == sent["conclusion"]
    assert row["reasoning_summary"] == sent["reasoningSummary"]
    assert json.loads(row["conditions"]) == sent.get("conditions", [])
    assert json.loads(row["uncertainties"]) == sent["uncertainties"]


def test_optional_fields_can_be_left_out(setup, db):
    task, r = _submit(setup, uncertainties=None, toolRuns=None)
    assert r.status_code == 200, r.get_json()
    row = db.one("SELECT conditions, uncertainties, tool_runs FROM messages WHERE task_id = :task_id",
                     {"task_id": task["id"]})
    assert (row["conditions"], row["uncertainties"], row["tool_runs"]) == ("[]", "[]", "[]")


@pytest.mark.parametrize("overrides", REJECTED.values(), ids=REJECTED.keys())
def test_out_of_limit_shapes_are_refused(setup, db, overrides):
    task, r = _submit(setup, **overrides)
    assert_external_error(r, 400, "invalid_request")
    assert count(db, "messages") == 0
    assert db.value("SELECT state FROM tasks WHERE id = :id", {"id": task["id"]}) == "leased"


@pytest.mark.parametrize("field, value", [
    ("conditions", ["仅当第二个来源成立 [S2]"]),
    ("uncertainties", ["见 [S3] 的反例"]),
    ("uncertainties", "参见 [S2]"),
    ("conditions", ["同意 [M1] 的说法"]),
    ("uncertainties", ["延续 [M2:S1]"]),
])
def test_citations_in_conditions_and_uncertainties_are_checked(setup, db, field, value):
    _, r = _submit(setup, **{field: value})
    assert_external_error(r, 400, "invalid_citation")
    assert count(db, "messages") == 0


def test_support_rule_without_evidence(setup, db):
    bare = {"evidence": [], "toolRuns": None, "conclusion": "纯概念推理即可回答这个问题：两个条件同时成立时结论必然成立，无需外部来源佐证。"}
    _, r = _submit(setup, reasoningSummary="理" * 29, **bare)
    assert_external_error(r, 400, "invalid_result")
    _, r = _submit(setup, reasoningSummary="理" * 30, **bare)
    assert r.status_code == 200, r.get_json()
    assert count(db, "messages") == 1


def test_message_carries_version_share_delivery_and_provenance(setup, db):
    task, r = _submit(setup, conditions=["数据库小于 10 GB"],
                      uncertainties=["网络文件系统上的行为未验证", "Windows 锁语义未测"])
    body = r.get_json()
    assert body["provenance"] == "external-self-reported"
    row = db.one("SELECT question_version, share_public, provenance FROM messages WHERE id = :id",
                     {"id": body["messageId"]})
    assert tuple(row) == (1, 0, "external-self-reported")
    # the asker reads it on the web, the author's agent through get_context
    web = setup["asker"].web_get(topic=setup["topic"]).get_json()["messages"]
    agent = setup["agent"].get("get_context", topic=setup["topic"]).get_json()["messages"]
    for message in (web[0], agent[0]):
        assert message["questionVersion"] == 1
        assert message["sharePublic"] is False
        assert message["provenance"] == "external-self-reported"
        assert message["delivery"] == {
            "support": good_result()["reasoningSummary"],
            "conditions": ["数据库小于 10 GB"],
            "uncertainties": ["网络文件系统上的行为未验证", "Windows 锁语义未测"],
            "toolRuns": good_result()["toolRuns"],
        }
        assert {"id", "name", "model", "text", "replyTo", "created", "sources"} <= set(message)


def test_old_string_uncertainties_are_delivered_as_given(setup):
    _submit(setup, uncertainties="只在 Linux 上验证过")
    message = setup["asker"].web_get(topic=setup["topic"]).get_json()["messages"][0]
    assert message["delivery"]["uncertainties"] == "只在 Linux 上验证过"
    assert message["delivery"]["conditions"] == []


def _old_shape() -> dict:
    """A 1.0.1 result: string uncertainties, no conditions, reasoning within the old 1000."""
    result = good_result(uncertainties="超大数据库的备份耗时未实测")
    assert len(result["reasoningSummary"]) <= 1000 and "conditions" not in result
    return result


def test_old_shape_replays_against_its_own_hash(setup, db):
    agent = setup["agent"]
    task = claim_ok(agent, setup["topic"])["task"]
    first = agent.post("submit_result", taskId=task["id"], **_old_shape())
    assert first.status_code == 200, first.get_json()
    digest = db.value("SELECT result_hash FROM tasks WHERE id = :id", {"id": task["id"]})

    again = agent.post("submit_result", taskId=task["id"], **_old_shape())
    assert again.status_code == 200
    assert again.get_json()["replayed"] is True
    assert again.get_json()["messageId"] == first.get_json()["messageId"]

    # the same words in the new array shape are a different result
    new_shape = {**_old_shape(), "uncertainties": ["超大数据库的备份耗时未实测"]}
    assert_external_error(agent.post("submit_result", taskId=task["id"], **new_shape),
                          409, "idempotency_conflict")
    assert count(db, "messages") == 1
    assert db.value("SELECT result_hash FROM tasks WHERE id = :id", {"id": task["id"]}) \
        == digest


@pytest.mark.parametrize("empty", [{"conditions": []}, {"toolRuns": []}])
def test_empty_optional_field_hashes_like_an_absent_one(setup, db, empty):
    agent = setup["agent"]
    task = claim_ok(agent, setup["topic"])["task"]
    submit_ok(agent, task["id"], toolRuns=None)
    r = agent.post("submit_result", taskId=task["id"], **{**result(toolRuns=None), **empty})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["replayed"] is True
    assert count(db, "messages") == 1


def test_changed_conditions_conflict(setup, db):
    agent = setup["agent"]
    task = claim_ok(agent, setup["topic"])["task"]
    submit_ok(agent, task["id"], conditions=["数据库小于 10 GB"])
    r = agent.post("submit_result", taskId=task["id"],
                   **good_result(conditions=["数据库小于 20 GB"]))
    assert_external_error(r, 409, "idempotency_conflict")
    stored = db.value("SELECT conditions FROM messages")
    assert json.loads(stored) == ["数据库小于 10 GB"]
