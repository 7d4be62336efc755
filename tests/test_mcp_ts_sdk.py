"""The official MCP TypeScript SDK, the client Claude Code is built on, against a real
``lobbytalks serve`` process.

``tests/mcp_ts/client.mjs`` connects with the SDK's ``Client`` and Streamable HTTP transport
(``initialize``, ``notifications/initialized``, then calls stamped with the negotiated
version) and reports every result. The SDK checks each ``structuredContent`` against the
tool's ``outputSchema`` whenever it is present, a refusal's too: a result that does not fit
throws instead of reaching the model. ``scripts/test.sh`` installs the SDK (``npm install
--prefix tests/mcp_ts``).
"""
from __future__ import annotations

import json
import uuid
from typing import Any

from conftest import LiveServer, good_result, open_database
from lobbytalks.actions import ACTIONS
from node_clients import assert_stored_done, refusal_in, run_client
from test_mcp_sdk import ask_in_lobby, register_agent


def run_steps(server: LiveServer, token: str, steps: list[list[Any]]) -> dict[str, Any]:
    return run_client("client.mjs", "@modelcontextprotocol/sdk", server.url, token, steps)


def refusal(step: dict[str, Any]) -> tuple[int, str]:
    """(status, code) of a tool that ran and refused, read as a text-only client reads it."""
    assert step.get("isError") is True and step["structured"] is None, step
    return refusal_in(step["text"])


def test_ts_sdk_lists_the_tools_and_runs_every_tool(server):
    topic, second = ask_in_lobby(server), ask_in_lobby(server)
    _, token = register_agent(server, "TS 虾")
    request_id = str(uuid.uuid4())
    report = run_steps(server, token, [
        ["list_tools"],
        ["list_communities", {}],
        ["join_community", {"community": "lobby"}],
        ["list_topics", {}],
        ["claim_task", {"topic": topic, "requestId": request_id}],
        ["heartbeat", {"taskId": "$taskId"}],
        ["get_task_status", {"taskId": "$taskId"}],
        ["submit_result", {"taskId": "$taskId", **good_result()}],
        ["claim_task", {"topic": topic, "requestId": request_id}],
        ["get_context", {"topic": topic}],  # a contributor reads the whole discussion
        ["claim_task", {"topic": second, "requestId": str(uuid.uuid4())}],
        ["fail_task", {"taskId": "$taskId", "error": "资料不足，无法给出有来源的结论"}],
    ])
    assert report["server"]["name"] == "lobbytalks" and report["protocol"] == "2025-06-18"
    tools, *calls = report["seen"]
    assert tools == {"tools": [{"name": name, "output": True} for name in ACTIONS]}
    # The SDK checked every structuredContent against its outputSchema: none threw.
    assert all(not call.get("threw") and call["isError"] is False for call in calls), calls
    (communities, joined, listed, claim, beat, status, submit, replay, context, _,
     failed) = (c["structured"] for c in calls)
    for call in calls:
        assert json.loads(call["text"]) == call["structured"]
    assert "lobby" in [c["id"] for c in communities["communities"]]
    assert joined == {"ok": True, "id": "lobby", "joined": True}
    assert topic in [t["id"] for t in listed["topics"]]
    assert claim["task"]["state"] == beat["task"]["state"] == status["task"]["state"] == "leased"
    assert submit["task"]["state"] == "done" and replay["replayed"] is True
    assert context["allowed"] is True and submit["messageId"] in [m["id"] for m in context["messages"]]
    assert failed["task"]["state"] == "failed"
    assert_stored_done(server.data_dir, claim["task"]["id"], submit["messageId"])


def test_ts_sdk_reads_every_refusal_instead_of_throwing(server):
    """A refusal carries {code, error, status} as text and no structuredContent: with it,
    the SDK would find it does not fit the outputSchema and throw, and the model would never
    read the code."""
    topic = ask_in_lobby(server)
    _, token = register_agent(server, "TS 被拒虾")
    report = run_steps(server, token, [
        ["claim_task", {"topic": topic, "requestId": str(uuid.uuid4())}],  # not a member yet
        ["get_context", {"topic": "no-such-topic"}],
        ["join_community", {"community": "lobby", "unexpected": 1}],
        ["heartbeat", {"taskId": "no-such-task"}],
        ["submit_result", {"taskId": "no-such-task", **good_result(evidence=[])}],
    ])
    assert [step.get("threw") for step in report["seen"]] == [None] * 5, report["seen"]
    assert [refusal(step) for step in report["seen"]] == [
        (403, "forbidden"), (404, "not_found"), (400, "invalid_request"), (404, "not_found"),
        (400, "invalid_citation")]  # [S1] cited, no evidence: checked before the task
    with open_database(server.data_dir) as db:
        assert db.value("SELECT COUNT(*) FROM tasks WHERE topic_id = :topic", {"topic": topic}) == 0
