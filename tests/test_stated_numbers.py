"""Texts state the limits in force: tool descriptions, the OpenAPI document, pages, errors.

An operator who changes a rate setting must not leave agents or people reading the old
number, and a cap changed in ``quotas`` must reach every text that states it.
"""
from __future__ import annotations

import re
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
import requests

from conftest import LiveServer, Person
from lobbytalks import create_app, prose, quotas
from lobbytalks.errors import ApiError
from test_mcp import McpClient

PACKAGE = Path(__file__).resolve().parent.parent / "lobbytalks"
CHANGED = {"rate_claim": "7/minute", "rate_token": "55/minute", "rate_community": "13/hour",
           "rate_topic": "4/day"}


@pytest.fixture
def changed_app(settings):
    return create_app(replace(settings, **CHANGED))


def _tools(app) -> dict[str, str]:
    owner = Person(app).register()
    agent = owner.new_agent()
    r = McpClient(app, agent.token).rpc("tools/list", **{"MCP-Protocol-Version": "2025-06-18"})
    assert r.status_code == 200, r.get_data(as_text=True)
    return {tool["name"]: tool["description"] for tool in r.get_json()["result"]["tools"]}


def test_rate_phrases_follow_the_setting():
    assert prose.rate("20/minute") == "每分钟 20 次"
    assert prose.rate("10/15minute") == "每 15 分钟 10 次"
    assert prose.rate("20/minute", "en") == "20 per minute"
    assert prose.rate("3/2hour", "en") == "3 per 2 hours"


def test_fill_leaves_placeholders_it_does_not_know():
    assert prose.fill("{max_agents} · {when} · {code, error}", prose.FIXED) == \
        f"{quotas.MAX_AGENTS} · {{when}} · {{code, error}}"


def test_mcp_tool_descriptions_state_the_settings_in_force(app, changed_app):
    assert "每分钟 20 次领取" in _tools(app)["claim_task"]
    claim = _tools(changed_app)["claim_task"]
    assert "每分钟 7 次领取" in claim and "20 次" not in claim
    assert f"最多 {quotas.MAX_LIVE_LEASES} 个未过期租约" in claim
    assert f"租约 {quotas.LEASE_SECONDS // 60} 分钟" in claim


def test_submit_result_states_the_body_cap_a_full_chinese_result_would_pass(app):
    """Every field at its length in Chinese is about 100 KB of UTF-8: past the body cap,
    where an MCP client gets an error it cannot pair with its call (no id to read)."""
    kib = quotas.EXTERNAL_BODY_LIMIT // 1024
    assert f"整个请求体最多 {kib} KiB" in _tools(app)["submit_result"]


def test_served_openapi_states_the_settings_in_force(changed_app):
    text = changed_app.test_client().get("/docs/external-agents-openapi.json").get_data(as_text=True)
    assert "每个 Token 每分钟 55 次（与 MCP 共用）" in text
    assert "每用户每小时 13 次" in text
    assert "每分钟 120 次" not in text and "每小时 30 次" not in text


def test_pages_state_the_settings_and_caps_in_force(changed_app, monkeypatch):
    person = Person(changed_app).register()
    person.join()
    ask = person.http.get("/ask?lang=en").get_data(as_text=True)
    assert "ask: up to 4 (a day, counted over the last 24 hours)" in ask
    # a cap changed at its one definition reaches the page that states it
    monkeypatch.setitem(prose.FIXED, "max_agents", 5)
    prose.forget()
    try:
        agents = person.http.get("/agents?lang=en").get_data(as_text=True)
        zh = person.http.get("/agents?lang=zh").get_data(as_text=True)
    finally:
        prose.forget()
    assert "Up to 5 agents per person." in agents and "每人最多 5 个智能体。" in zh
    assert "Up to 8 agents" not in agents


def test_error_messages_state_the_caps():
    assert ApiError("task_limit").message == f"已有 {quotas.MAX_LIVE_LEASES} 个未过期的外部任务"
    assert ApiError("profile_limit").message == f"每个用户最多 {quotas.MAX_AGENTS} 只虾"


def test_a_changed_claim_budget_is_both_stated_and_enforced(settings):
    app = create_app(replace(settings, rate_claim="2/minute"))
    asker = Person(app).register()
    asker.join()
    owner = Person(app).register()
    owner.join()
    agent = owner.new_agent()
    assert "每分钟 2 次领取" in _tools(app)["claim_task"]
    topics = [asker.ask(f"第 {n} 个关于 SQLite 在线备份的问题？") for n in range(3)]
    codes = [agent.claim(t).status_code for t in topics]
    assert codes == [200, 200, 429]
    assert agent.claim(topics[2], str(uuid.uuid4())).get_json()["code"] == "rate_limited"


def test_a_served_instance_states_the_environment_setting(tmp_path):
    server = LiveServer(tmp_path / "live", env={"LOBBYTALKS_RATE_TOKEN": "33/minute",
                                                "LOBBYTALKS_RATE_COMMUNITY": "9/hour"})
    try:
        text = requests.get(server.url + "/docs/external-agents-openapi.json", timeout=10).text
    finally:
        server.stop()
    assert "每个 Token 每分钟 33 次（与 MCP 共用）" in text
    assert "每用户每小时 9 次" in text


# Numbers these texts once typed in; each pattern is one claim that must come from prose.
TYPED_NUMBERS = [
    r"每分钟 \d+ 次", r"每小时 \d+ 次", r"\d+ (claims|requests) (a|per) minute",
    r"租约 \d+ 分钟", r"\d+ 分钟租约", r"\d+-minute lease", r"后 \d+ 分钟", r"领取后 \d+ 小时",
    r"\d+ hours after the claim", r"每 \d+ 分钟 heartbeat", r"heartbeat about every \d+",
    r"every \d+ minutes, up to", r"最多 \d+ 个智能体", r"Up to \d+ agents", r"limit of \d+",
    r"计入 \d+ (个|只)", r"最多 \d+ 只虾", r"\d+ 条记忆", r"up to \d+ memories", r"最多 \d+ 条）",
    r"\(up to \d+\)", r"\d+ 个未过期", r"\d+ 条(发言)?上限", r"有效期 \d+ 天", r"\d+ 天有效",
    r"for \d+ days", r"--max-tasks，最多 \d", r"--max-tasks, up to \d", r"最多 \d+ KiB",
]


def _prose_sources() -> list[Path]:
    return [PACKAGE / "i18n.py", PACKAGE / "actions.py", PACKAGE / "openapi.py",
            PACKAGE / "errors.py", PACKAGE / "mcp.py", *sorted((PACKAGE / "templates").glob("*.html")),
            *sorted((PACKAGE / "services").glob("*.py"))]


@pytest.mark.parametrize("pattern", TYPED_NUMBERS)
def test_no_text_types_a_limit_in(pattern):
    found = [f"{path.name}: {m.group(0)}" for path in _prose_sources()
             for m in re.finditer(pattern, path.read_text("utf-8"))]
    assert found == []


def test_the_grep_would_catch_a_typed_number():
    """The patterns above match the texts as they were before they were filled in."""
    before = ["每分钟 20 次领取", "租约 30 分钟", "Up to 8 agents per person.",
              "每个智能体最多保存 30 条记忆。", "已有 3 个未过期的外部任务", "话题已达到 200 条发言上限",
              "a 30-minute lease", "有效期 30 天", "每用户每小时 30 次", "请求体最多 64 KiB"]
    for text in before:
        assert any(re.search(p, text) for p in TYPED_NUMBERS), text


def test_the_protocol_doc_states_the_settings_in_force(app, changed_app):
    default = app.test_client().get("/docs/external-agents-v1.md").get_data(as_text=True)
    assert "每个 Token 最多每分钟 120 次请求" in default and "claims at 20 per minute per user" in default
    text = changed_app.test_client().get("/docs/external-agents-v1.md").get_data(as_text=True)
    assert "每个 Token 最多每分钟 55 次请求" in text and "每用户最多每分钟 7 次领取" in text
    assert "requests at 55 per minute" in text and "claims at 7 per minute per user" in text
    assert f"租约 {quotas.LEASE_SECONDS // 60} 分钟" in text
    assert f"{quotas.MAX_AGENTS} agents already" in text
    assert "{{" not in text
