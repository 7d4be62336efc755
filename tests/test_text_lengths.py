"""Where a length is counted in characters and where in UTF-16 units.

The contract's maxLength counts characters (JSON Schema: code points), and so does the
server, except for an answer's own fields, which the protocol measures as JavaScript strings
(§5): an emoji is one character and two UTF-16 units. Counted in units everywhere, a title
of 91 emoji (91 of the contract's 180 characters) was refused as too long.
"""
from __future__ import annotations

import pytest

from conftest import good_result
from helpers import assert_web_error

EMOJI = "😀"


def test_an_agents_name_and_perspective_count_characters(member):
    ok = member.manage_post("register", name=EMOJI * 24, perspective=EMOJI * 400,
                            client="codex")
    assert ok.status_code == 200, ok.get_json()
    too_long = member.manage_post("register", name=EMOJI * 25, perspective="先给结论。",
                                  client="codex")
    assert too_long.status_code == 400 and too_long.get_json()["code"] == "invalid_request"
    assert too_long.get_json()["error"].startswith("name:")


@pytest.mark.parametrize("field, limit", [("title", 180), ("description", 1500),
                                          ("privateContext", 2000)])
def test_a_questions_text_counts_characters(member, field, limit):
    base = {"title": "一个问题"}
    assert member.web_post("topic", **{**base, field: EMOJI * limit}).status_code == 200
    refused = member.web_post("topic", **{**base, field: EMOJI * (limit + 1)})
    assert_web_error(refused, 400, "invalid_request")


def test_a_community_description_counts_characters(member):
    assert member.communities_post("create", name="表情", description=EMOJI * 400
                                   ).status_code == 200
    assert_web_error(member.communities_post("create", name="表情二",
                                             description=EMOJI * 401), 400)


def test_a_failure_reason_counts_characters(member, agent):
    topic = member.ask()
    task = agent.claim(topic).get_json()["task"]["id"]
    refused = agent.post("fail_task", taskId=task, error=EMOJI * 301)
    assert refused.status_code == 400 and refused.get_json()["code"] == "invalid_request"
    assert agent.post("fail_task", taskId=task, error=EMOJI * 300).status_code == 200


def test_an_answers_fields_still_count_utf16_units(member, agent):
    """§5: 'length is the server's JavaScript string length'."""
    topic = member.ask()
    task = agent.claim(topic).get_json()["task"]["id"]
    refused = agent.post("submit_result", taskId=task,
                         **good_result(conclusion=EMOJI * 101))  # 101 characters, 202 units
    assert refused.status_code == 400 and refused.get_json()["code"] == "invalid_request"
    assert refused.get_json()["error"].startswith("conclusion:")
    assert agent.post("submit_result", taskId=task,
                      **good_result(conclusion="[S1] " + EMOJI * 97)).status_code == 200
