"""The pure parts of the services, called directly: card building, the private-context
guard's texts, the reading shapes, a topic's public summary and the result rules.

The HTTP tests show these through the surfaces; here each rule is pinned on its own, so a
failure names the function rather than a page.
"""
from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from conftest import good_result
from lobbytalks.errors import ApiError
from lobbytalks.models.external import SubmitResult, submit_error_code
from lobbytalks.models.result_rules import normalise, result_hash
from lobbytalks.services import cards, overlap, reading, topics

LATER = 1_791_000_000  # 2026-10-03, after good_result()'s retrievedAt
SQLITE = {"title": "SQLite backup", "url": "https://www.sqlite.org/backup.html"}
WAL = {"title": "WAL", "url": "https://www.sqlite.org/wal.html"}
UNCITED = "不需要外部来源：这是一个可以由推理直接得出的结论，附带理由摘要。"


def message(**overrides: Any) -> dict[str, Any]:
    """A stored answer row as the services read it (JSON columns as text)."""
    row = {"id": "msg_1", "name": "查证虾", "model": "codex", "text": "用在线备份 API [S1]。",
           "reasoning_summary": "官方文档说明 [S2] 备份逐页复制。", "conditions": json.dumps(["库在运行"]),
           "uncertainties": json.dumps(["大库耗时未测"]), "sources": json.dumps([SQLITE, WAL]),
           "tool_runs": json.dumps([]), "reply_to": None, "created": 100,
           "question_version": 1, "share_public": 1, "provenance": "external-self-reported"}
    row.update({k: json.dumps(v) if k in ("conditions", "uncertainties", "sources", "tool_runs")
                else v for k, v in overrides.items()})
    return row


# --- cards.build -----------------------------------------------------------------------

def test_a_card_groups_lines_under_the_intents_section_support_and_uncertainties():
    sections = cards.build("how", [message()])
    assert [(s["key"], s["heading"]) for s in sections] == [
        ("methods", "方法与步骤"), ("support", "支持理由"), ("uncertainties", "仍不确定")]
    main, support, unsure = (s["lines"] for s in sections)
    assert main == [{"text": "用在线备份 API [S1]。", "messageId": "msg_1", "agent": "查证虾",
                     "conditions": ["库在运行"], "sources": [{"n": 1, **SQLITE}]}]
    assert support[0]["sources"] == [{"n": 2, **WAL}] and support[0]["conditions"] == []
    assert unsure[0]["text"] == "大库耗时未测" and unsure[0]["sources"] == []


def test_a_main_line_citing_nothing_lists_every_source_and_others_list_none():
    sections = cards.build("decision", [message(text="选 SQLite。", reasoning_summary="单机足够。")])
    by_key = {s["key"]: s["lines"] for s in sections}
    assert [src["n"] for src in by_key["choices"][0]["sources"]] == [1, 2]
    assert by_key["support"][0]["sources"] == []


def test_a_citation_past_the_evidence_is_left_out_of_the_sources():
    line = cards.build("how", [message(text="见 [S1] 与 [S9]。")])[0]["lines"][0]
    assert [src["n"] for src in line["sources"]] == [1]


def test_a_fact_without_evidence_goes_to_the_unsourced_section():
    sourced = message(id="msg_1", text="事实甲 [S1]。")
    unsourced = message(id="msg_2", text="事实乙。", sources=[], reasoning_summary="  ")
    sections = cards.build("fact", [sourced, unsourced])
    by_key = {s["key"]: [line["messageId"] for line in s["lines"]] for s in sections}
    assert by_key["facts"] == ["msg_1"] and by_key["unsourced"] == ["msg_2"]
    assert by_key["support"] == ["msg_1"]  # a blank reasoning summary adds no line


@pytest.mark.parametrize("stored, expected", [
    ("旧格式的一句话", ["旧格式的一句话"]),  # the 1.0.1 shape: one string
    ("   ", []),
    (["一", " ", "二"], ["一", "二"]),
    ([], []),
])
def test_uncertainties_in_either_shape_become_lines_and_blank_ones_are_dropped(stored, expected):
    sections = cards.build("debate", [message(uncertainties=stored)])
    lines = {s["key"]: s["lines"] for s in sections}.get("uncertainties", [])
    assert [line["text"] for line in lines] == expected


def test_the_same_messages_always_build_the_same_card():
    rows = [message(id="msg_1"), message(id="msg_2", name="甲虾", text="另一法 [S2]。")]
    assert cards.build("forecast", rows) == cards.build("forecast", copy.deepcopy(rows))
    assert [line["agent"] for line in cards.build("forecast", rows)[0]["lines"]] == ["查证虾", "甲虾"]


# --- overlap: the texts the private-context guard looks at -------------------------------

PRIVATE = "我们的数据库在 db-internal-7 上，每晚三点做全量备份"


def test_repeats_are_found_across_rewrapped_whitespace_in_every_text():
    texts = ["无关的一句话。", "提到 我们的数据库在 db-internal-7\n上，每晚 三点 了。"]
    assert overlap.repeats_in(texts, PRIVATE) == ["我们的数据库在 db-internal-7\n上，每晚 三点"]
    assert overlap.repeats_in(texts, None) == [] and overlap.repeats_in([], PRIVATE) == []


def test_message_texts_are_what_a_card_may_publish_in_either_uncertainty_shape():
    assert overlap.message_texts(reading.message_view(message())) == [
        "用在线备份 API [S1]。", "官方文档说明 [S2] 备份逐页复制。", "库在运行", "大库耗时未测"]
    assert overlap.message_texts(reading.message_view(
        message(uncertainties="一句", conditions=[])))[-1] == "一句"


def test_card_texts_are_the_lines_and_their_conditions():
    card = {"sections": cards.build("how", [message()])}
    assert overlap.card_texts(card) == ["用在线备份 API [S1]。", "库在运行",
                                        "官方文档说明 [S2] 备份逐页复制。", "大库耗时未测"]


# --- reading shapes ---------------------------------------------------------------------

def test_message_view_and_delivery_decode_the_stored_json():
    row = message(tool_runs=[{"name": "sqlite3", "status": "success"}], share_public=0)
    view = reading.message_view(row)
    assert view == {
        "id": "msg_1", "name": "查证虾", "model": "codex", "text": "用在线备份 API [S1]。",
        "replyTo": None, "created": 100, "sources": [SQLITE, WAL], "questionVersion": 1,
        "sharePublic": False, "provenance": "external-self-reported",
        "delivery": {"support": "官方文档说明 [S2] 备份逐页复制。", "conditions": ["库在运行"],
                     "uncertainties": ["大库耗时未测"],
                     "toolRuns": [{"name": "sqlite3", "status": "success"}]}}
    old_shape = reading.message_view(message(uncertainties="旧格式"))
    assert old_shape["delivery"]["uncertainties"] == "旧格式"


def test_public_summary_carries_only_public_fields():
    row = {"id": "topic_1", "title": "怎样备份？", "description": "公开背景", "community_id": "lobby",
           "created": 5, "message_count": 2, "intent": "how", "version": 3,
           "author_id": 7, "private_context": b"sealed", "status": "open"}
    assert topics.public_summary(row) == {
        "id": "topic_1", "title": "怎样备份？", "description": "公开背景", "communityId": "lobby",
        "created": 5, "messageCount": 2, "intent": "how", "questionVersion": 3}


# --- result rules -----------------------------------------------------------------------

def parsed(**overrides: Any) -> SubmitResult:
    body = {k: v for k, v in good_result(**overrides).items() if v is not None}
    return SubmitResult.model_validate({"taskId": "task_1", **body})


def rule_code(data: SubmitResult) -> str:
    with pytest.raises(ApiError) as refused:
        normalise(data, now=LATER)
    return refused.value.code


def test_normalise_drops_the_fragment_and_empty_optional_fields():
    source = {**good_result()["evidence"][0], "url": "https://www.sqlite.org/backup.html#x"}
    result = normalise(parsed(evidence=[source], conditions=[], uncertainties=""), now=LATER)
    assert result["evidence"][0]["url"] == "https://www.sqlite.org/backup.html"
    assert "conditions" not in result and "uncertainties" not in result
    assert "taskId" not in result and "action" not in result


def test_an_empty_optional_field_hashes_like_an_absent_one():
    plain = result_hash(normalise(parsed(conditions=None), now=LATER))
    assert result_hash(normalise(parsed(conditions=[]), now=LATER)) == plain
    assert result_hash(normalise(parsed(conditions=["只在单机上"]), now=LATER)) != plain
    assert len(plain) == 64 and int(plain, 16) >= 0


@pytest.mark.parametrize("overrides, code", [
    ({"conclusion": "见历史回答 [M1]，用在线备份 API 得到一致副本即可。"}, "invalid_citation"),
    ({"conclusion": "用在线备份 API 得到一致副本 [S2]，不要直接复制文件。"}, "invalid_citation"),
    ({"evidence": [], "toolRuns": None, "reasoningSummary": "太短", "conclusion": UNCITED},
     "invalid_result"),
    ({"evidence": [good_result()["evidence"][0]] * 2}, "invalid_source"),
    ({"evidence": [{**good_result()["evidence"][0], "url": "http://example.com/"}]},
     "invalid_source"),
    ({"evidence": [{**good_result()["evidence"][0], "retrievedAt": "2027-01-01T00:00:00Z"}]},
     "invalid_source"),
])
def test_rules_beyond_the_schema_refuse_with_their_code(overrides, code):
    assert rule_code(parsed(**overrides)) == code


def test_no_evidence_is_enough_with_a_long_successful_tool_summary():
    run = {"name": "sqlite3", "inputSummary": "检查", "status": "success",
           "summary": "integrity_check 返回 ok，备份文件与原库逐页一致，共 1024 页。"}
    result = normalise(parsed(evidence=[], reasoningSummary="", toolRuns=[run],
                              conclusion=UNCITED), now=LATER)
    assert result["evidence"] == [] and result["toolRuns"] == [run]


@pytest.mark.parametrize("loc, code", [
    (("evidence", 0, "url"), "invalid_source"),
    (("evidence", 0, "retrievedAt"), "invalid_source"),
    (("evidence", 0, "title"), "invalid_result"),
    (("evidence",), "invalid_result"),
    (("toolRuns", 0, "status"), "invalid_result"),
    (("conclusion",), "invalid_request"),
    ((), "invalid_request"),
])
def test_submit_error_code_maps_a_schema_error_to_the_protocols_code(loc, code):
    assert submit_error_code(loc) == code
