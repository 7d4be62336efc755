"""The official MCP Python SDK against a real ``lobbytalks serve`` process.

The client runs in its default mode: it first probes ``server/discover`` at its newest
protocol version, falls back to ``initialize`` offering 2025-11-25, sends
``notifications/initialized`` and then calls tools, stamping ``MCP-Protocol-Version``.
"""
from __future__ import annotations

import asyncio
import json
import operator
import uuid
from typing import Any

import httpx2
import jsonschema
import pytest
import requests
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

from conftest import LiveServer, good_result, open_database, web_session
from lobbytalks import prose
from lobbytalks.actions import ACTIONS
from lobbytalks.settings import Settings
from test_mcp_output_schema import OPTIONAL_MEMBERS, REF, resolved, undeclared


def register_agent(server: LiveServer, name: str = "SDK 虾") -> tuple[Any, str]:
    """A fresh web user with one external agent; returns (session, token)."""
    session = web_session(server)
    r = session.post(server.url + "/api/external/manage",
                     json={"action": "register", "name": name, "client": "custom",
                           "perspective": "先给结论，再给可复核来源。"})
    assert r.status_code == 200, r.text
    return session, r.json()["token"]


def ask_in_lobby(server: LiveServer, **fields: str) -> str:
    session = web_session(server)
    assert session.post(server.url + "/api/communities",
                        json={"action": "join", "community": "lobby"}).status_code == 200
    r = session.post(server.url + "/api/community",
                     json={"action": "topic", "title": "SQLite 在线备份该怎么做？",
                           "description": "服务不能停。", **fields})
    assert r.status_code == 200, r.text
    return r.json()["id"]


def run_with_client(server: LiveServer, token: str, body, **client_options: Any):
    """Connect the SDK client with the Bearer header and run ``body(client)``."""
    async def main():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                  timeout=httpx2.Timeout(30.0))
        async with http:
            transport = streamable_http_client(server.url + "/api/external/mcp", http_client=http)
            async with Client(transport, **client_options) as client:
                return await body(client)
    return asyncio.run(main())


def test_sdk_connects_and_lists_the_nine_tools(server):
    _, token = register_agent(server)

    async def body(client):
        tools = await client.list_tools()
        return client.protocol_version, client.server_info, client.server_capabilities, tools

    version, info, capabilities, tools = run_with_client(server, token, body)
    assert version == "2025-06-18"
    assert info.name == "lobbytalks"
    assert capabilities.tools is not None and capabilities.resources is None
    assert [t.name for t in tools.tools] == list(ACTIONS)
    for tool in tools.tools:
        # a served instance with default settings states the default limits
        assert tool.description == ACTIONS[tool.name].describe(prose.numbers(Settings()))
        assert tool.input_schema["type"] == "object"
        assert tool.annotations.read_only_hint is (ACTIONS[tool.name].method == "GET")


def test_sdk_full_flow_join_claim_heartbeat_submit(server):
    topic = ask_in_lobby(server)
    _, token = register_agent(server)
    request_id = str(uuid.uuid4())

    async def body(client):
        steps = {"join": await client.call_tool("join_community", {"community": "lobby"})}
        steps["claim"] = await client.call_tool("claim_task", {"topic": topic,
                                                               "requestId": request_id})
        task_id = steps["claim"].structured_content["task"]["id"]
        steps["heartbeat"] = await client.call_tool("heartbeat", {"taskId": task_id})
        steps["submit"] = await client.call_tool("submit_result",
                                                 {"taskId": task_id, **good_result()})
        steps["replay"] = await client.call_tool("claim_task", {"topic": topic,
                                                                "requestId": request_id})
        return steps

    steps = run_with_client(server, token, body)
    assert all(result.is_error is False for result in steps.values())
    assert steps["join"].structured_content == {"ok": True, "id": "lobby", "joined": True}
    claim = steps["claim"].structured_content
    assert claim["task"]["state"] == "leased" and claim["context"]["topic"]["id"] == topic
    assert steps["heartbeat"].structured_content["task"]["state"] == "leased"
    submit = steps["submit"].structured_content
    assert submit["ok"] is True and submit["task"]["state"] == "done"
    assert steps["replay"].structured_content["replayed"] is True
    with open_database(server.data_dir) as db:
        task = db.one("SELECT state, message_id FROM tasks WHERE id = :id",
                      {"id": claim["task"]["id"]})
        assert tuple(task) == ("done", submit["messageId"])
        text = db.value("SELECT text FROM messages WHERE id = :id", {"id": submit["messageId"]})
        assert text == good_result()["conclusion"]


def test_sdk_sees_a_business_failure_as_is_error(server):
    topic = ask_in_lobby(server)
    _, token = register_agent(server, "被拒虾")

    async def body(client):
        listed = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        # Not a member of lobby yet: the claim is refused by the service. The SDK holds
        # claim_task's outputSchema and raises nothing: the refusal is text only.
        refused = await client.call_tool("claim_task", {"topic": topic,
                                                        "requestId": str(uuid.uuid4())})
        malformed = await client.call_tool("join_community", {"community": "lobby", "x": 1})
        return listed, refused, malformed

    listed, result, malformed = run_with_client(server, token, body)
    assert listed["claim_task"] is not None and listed["join_community"] is not None
    assert result.is_error is True and result.structured_content is None
    refusal = json.loads(result.content[0].text)
    assert refusal == {"code": "forbidden", "status": 403, "error": refusal["error"]}
    assert malformed.is_error is True and malformed.structured_content is None
    assert operator.itemgetter("code", "status")(json.loads(malformed.content[0].text)) == \
        ("invalid_request", 400)
    with open_database(server.data_dir) as db:
        assert db.value("SELECT COUNT(*) FROM tasks WHERE topic_id = :topic", {"topic": topic}) == 0
        assert db.value("SELECT COUNT(*) FROM memberships m JOIN profiles p ON p.user_id = m.user_id"
                        " WHERE p.name = '被拒虾' AND m.community_id = 'lobby'") == 0


# --- outputSchema: the SDK checks every successful result against it ------------------

def test_sdk_gets_the_openapi_success_shape_as_output_schema(server):
    _, token = register_agent(server)

    async def body(client):
        return (await client.list_tools()).tools

    tools = run_with_client(server, token, body)
    components = requests.get(server.url + "/docs/external-agents-openapi.json",
                              timeout=10).json()["components"]["schemas"]
    assert [t.name for t in tools] == list(ACTIONS)
    for tool in tools:
        assert tool.output_schema["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        expected = resolved(components[ACTIONS[tool.name].output.__name__], components)
        assert tool.output_schema == expected, tool.name


def test_sdk_validates_every_tools_successful_result(server):
    topic = ask_in_lobby(server, privateContext="库大约 40 GB。")
    _, token = register_agent(server)
    request_id = str(uuid.uuid4())
    results: list[tuple[str, CallToolResult]] = []

    async def body(client):
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}

        async def call(name: str, **arguments):
            # The SDK raises RuntimeError when structuredContent does not fit outputSchema.
            result = await client.call_tool(name, arguments)
            results.append((name, result))
            return result.structured_content

        await call("list_communities")
        await call("join_community", community="lobby")
        await call("list_topics", community="lobby")
        await call("get_context", topic=topic)
        task_id = (await call("claim_task", topic=topic, requestId=request_id))["task"]["id"]
        await call("claim_task", topic=topic, requestId=request_id)
        await call("heartbeat", taskId=task_id)
        submitted = await call("submit_result", taskId=task_id, **good_result())
        await call("submit_result", taskId=task_id, **good_result())
        await call("get_task_status", taskId=task_id)
        await call("get_context", topic=topic)
        reply = await call("claim_task", topic=topic, requestId=str(uuid.uuid4()),
                           replyTo=submitted["messageId"])
        await call("fail_task", taskId=reply["task"]["id"], error="来源打不开")
        await call("fail_task", taskId=reply["task"]["id"], error="来源打不开")
        # A control: the same SDK check refuses a result that does not fit.
        broken = CallToolResult(content=[], structured_content={"task": {"id": task_id}})
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            await client.session.validate_tool_result("get_task_status", broken)
        return schemas, submitted, reply

    schemas, submitted, reply = run_with_client(server, token, body)
    seen: dict[str, set[str]] = {name: set() for name in ACTIONS}
    for name, result in results:
        assert result.is_error is False, (name, result.structured_content)
        jsonschema.Draft202012Validator(
            schemas[name], format_checker=jsonschema.FormatChecker()).validate(result.structured_content)
        assert undeclared(result.structured_content, schemas[name]) == [], name
        seen[name] |= set(result.structured_content)
    assert all(seen.values())
    for name, members in OPTIONAL_MEMBERS.items():
        assert members <= seen[name], (name, members - seen[name])
    after = [r.structured_content for name, r in results if name == "get_context"][-1]
    assert after["allowed"] is True and after["question"]["privateContext"] == "库大约 40 GB。"
    assert [m["id"] for m in after["messages"]] == [submitted["messageId"]]
    with open_database(server.data_dir) as db:
        states = dict(db.all("SELECT id, state FROM tasks WHERE topic_id = :topic_id", {"topic_id": topic}))
        assert states == {submitted["task"]["id"]: "done", reply["task"]["id"]: "failed"}
        assert db.value("SELECT COUNT(*) FROM messages WHERE topic_id = :topic", {"topic": topic}) == 1


def test_sdk_legacy_mode_also_works(server):
    _, token = register_agent(server)

    async def body(client):
        return client.protocol_version, await client.call_tool("list_communities", {})

    version, result = run_with_client(server, token, body, mode="legacy")
    assert version == "2025-06-18" and result.is_error is False
    assert any(c["id"] == "lobby" for c in result.structured_content["communities"])


def test_sdk_with_a_wrong_token_fails_to_connect(server):
    async def body(client):  # pragma: no cover - never reached
        return None

    with pytest.raises(BaseException) as caught:
        run_with_client(server, "lbt_" + "x" * 40, body)
    error = _leaf(caught.value)  # anyio may wrap it in an exception group
    assert isinstance(error, MCPError)
    assert error.error.code == -32000
    assert error.error.data == {"code": "unauthorized", "status": 401}


def _leaf(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error
