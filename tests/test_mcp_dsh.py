"""DeepSeek Harness's own MCP bridge, ``@deepseek-ai/dsh-mcp-client``, against a real
``lobbytalks serve`` process.

``tests/mcp_ts/dsh.mjs`` loads the bridge into a Cordis app with the harness's tool runtime,
configured as the developer docs tell a dsh user to (``transport: streamable-http``, the
Bearer header, server name ``community``), and calls the tools the way a model's calls
reach them. The runtime registers each tool under ``mcp__community__<tool>`` and checks every
value a call returns against the output schema it registered, so a result the bridge could
not hand to the model fails here. ``scripts/test.sh`` installs the bridge with the other
Node clients (``npm ci --prefix tests/mcp_ts``).
"""
from __future__ import annotations

import json
import uuid
from typing import Any

from conftest import LiveServer, good_result, open_database
from lobbytalks.actions import ACTIONS
from lobbytalks.blueprints.web_developers import TOKEN_ENV, client_configs
from node_clients import assert_stored_done, our_tools, refusal_in, run_client
from test_mcp_sdk import ask_in_lobby, register_agent


def run_dsh(server: LiveServer, token: str, steps: list[list[Any]]) -> dict[str, Any]:
    return run_client("dsh.mjs", "@deepseek-ai/dsh-mcp-client", server.url, token, steps)


def test_dsh_registers_the_nine_tools_as_the_model_sees_them(server):
    # dsh.mjs configures the bridge as the snippet /developers shows for this server.
    [snippet] = [c["text"] for c in client_configs(server.url)
                 if c["client"] == "deepseek-harness"]
    for line in ("name: '@deepseek-ai/dsh-mcp-client'", "serverName: community",
                 "transport: streamable-http", f"url: {server.url}/api/external/mcp",
                 "Authorization: !!js '`Bearer ${process.env.%s}`'" % TOKEN_ENV):
        assert line in snippet
    _, token = register_agent(server, "dsh 虾")
    report = run_dsh(server, token, [])
    assert report["started"] is None
    listed = our_tools()
    assert [tool["name"] for tool in report["tools"]] == [
        f"mcp__community__{name}" for name in ACTIONS]
    for seen in report["tools"]:
        ours = listed[seen["name"].removeprefix("mcp__community__")]
        # What the model is given to call with: our words and our input schema, unchanged.
        assert seen["description"] == ours["description"] and seen["description"]
        assert seen["parameters"] == ours["inputSchema"]


def test_dsh_runs_the_whole_claim_cycle(server):
    topic, second = ask_in_lobby(server), ask_in_lobby(server)
    _, token = register_agent(server, "dsh 答题虾")
    request_id = str(uuid.uuid4())
    report = run_dsh(server, token, [
        ["list_communities", {}],
        ["join_community", {"community": "lobby"}],
        ["list_topics", {}],
        ["get_context", {"topic": topic}],  # not yet a contributor: no discussion
        ["claim_task", {"topic": topic, "requestId": request_id}],
        ["heartbeat", {"taskId": "$taskId"}],
        ["get_task_status", {"taskId": "$taskId"}],
        ["submit_result", {"taskId": "$taskId", **good_result()}],
        ["claim_task", {"topic": topic, "requestId": request_id}],
        ["get_context", {"topic": topic}],
        ["claim_task", {"topic": second, "requestId": str(uuid.uuid4())}],
        ["fail_task", {"taskId": "$taskId", "error": "资料不足，无法给出有来源的结论"}],
    ])
    assert [step["isError"] for step in report["seen"]] == [False] * 12, report["seen"]
    (communities, joined, listed, before, claim, beat, status, submit, replay, after, _,
     failed) = (step["structured"] for step in report["seen"])
    for step in report["seen"]:  # the model reads the same JSON as text
        assert json.loads(step["text"]) == step["structured"]
    assert "lobby" in [c["id"] for c in communities["communities"]]
    assert joined == {"ok": True, "id": "lobby", "joined": True}
    assert topic in [t["id"] for t in listed["topics"]]
    assert before["allowed"] is False and before["messages"] == []
    assert claim["task"]["state"] == beat["task"]["state"] == status["task"]["state"] == "leased"
    assert submit["task"]["state"] == "done" and replay["replayed"] is True
    assert replay["task"]["id"] == claim["task"]["id"]
    assert after["allowed"] is True and submit["messageId"] in [m["id"] for m in after["messages"]]
    assert failed["task"]["state"] == "failed"
    assert_stored_done(server.data_dir, claim["task"]["id"], submit["messageId"])


def refusal(step: dict[str, Any]) -> tuple[int, str]:
    """(status, code) of a refused call, read from the text the bridge gives the model."""
    assert step["isError"] is True and step["structured"] is None, step
    return refusal_in(step["text"].removeprefix("Error: "))


def test_dsh_hands_the_model_every_refusal_with_its_code(server):
    topic = ask_in_lobby(server)
    _, token = register_agent(server, "dsh 被拒虾")
    report = run_dsh(server, token, [
        ["claim_task", {"topic": topic, "requestId": str(uuid.uuid4())}],  # not a member yet
        ["get_context", {"topic": "no-such-topic"}],
        ["claim_task", {"topic": topic}],  # the model forgot the requestId
        ["heartbeat", {"taskId": 7}],
        ["submit_result", {"taskId": "no-such-task", **good_result(evidence=[])}],
    ])
    assert [refusal(step) for step in report["seen"]] == [
        (403, "forbidden"), (404, "not_found"), (400, "invalid_request"),
        (400, "invalid_request"), (400, "invalid_citation")]
    with open_database(server.data_dir) as db:
        assert db.value("SELECT COUNT(*) FROM tasks WHERE topic_id = :topic", {"topic": topic}) == 0


def test_dsh_startup_with_a_revoked_token_names_the_reason_not_the_token(server):
    session, token = register_agent(server, "dsh 撤销虾")
    agents = session.get(server.url + "/api/external/manage").json()["agents"]
    r = session.post(server.url + "/api/external/manage",
                     json={"action": "revoke", "tokenId": agents[0]["tokens"][0]["id"]})
    assert r.status_code == 200, r.text
    report = run_dsh(server, token, [])
    # failOnStartupError: the harness refuses to start and says why.
    assert report["tools"] == [] and '"code":"unauthorized"' in report["started"]
    assert token not in report["started"]
