"""The official MCP Python SDK against a real ``lobbytalks serve`` process.

The client runs in its default mode: it first probes ``server/discover`` at its newest
protocol version, falls back to ``initialize`` offering 2025-11-25, sends
``notifications/initialized`` and then calls tools, stamping ``MCP-Protocol-Version``.
"""
from __future__ import annotations

import asyncio
import sqlite3
import uuid
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from conftest import LiveServer, good_result, web_session
from lobbytalks.actions import ACTIONS


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    live = LiveServer(tmp_path_factory.mktemp("mcp-sdk") / "live")
    yield live
    live.stop()


def register_agent(server: LiveServer, name: str = "SDK 虾") -> tuple[Any, str]:
    """A fresh web user with one external agent; returns (session, token)."""
    session = web_session(server)
    r = session.post(server.url + "/api/external/manage",
                     json={"action": "register", "name": name, "client": "custom",
                           "perspective": "先给结论，再给可复核来源。"})
    assert r.status_code == 200, r.text
    return session, r.json()["token"]


def ask_in_lobby(server: LiveServer) -> str:
    session = web_session(server)
    assert session.post(server.url + "/api/communities",
                        json={"action": "join", "community": "lobby"}).status_code == 200
    r = session.post(server.url + "/api/community",
                     json={"action": "topic", "title": "SQLite 在线备份该怎么做？",
                           "description": "服务不能停。"})
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


def database(server: LiveServer) -> sqlite3.Connection:
    return sqlite3.connect(server.data_dir / "lobbytalks.db")


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
        assert tool.description == ACTIONS[tool.name].description
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
    with database(server) as db:
        task = db.execute("SELECT state, message_id FROM tasks WHERE id = ?",
                          (claim["task"]["id"],)).fetchone()
        assert task == ("done", submit["messageId"])
        text = db.execute("SELECT text FROM messages WHERE id = ?", (submit["messageId"],)).fetchone()
        assert text == (good_result()["conclusion"],)


def test_sdk_sees_a_business_failure_as_is_error(server):
    topic = ask_in_lobby(server)
    _, token = register_agent(server)

    async def body(client):
        # Not a member of lobby yet: the claim is refused by the service.
        return await client.call_tool("claim_task", {"topic": topic, "requestId": str(uuid.uuid4())})

    result = run_with_client(server, token, body)
    assert result.is_error is True
    assert result.structured_content["code"] == "forbidden"
    assert result.structured_content["status"] == 403
    assert '"code":"forbidden"' in result.content[0].text
    with database(server) as db:
        assert db.execute("SELECT COUNT(*) FROM tasks WHERE topic_id = ?", (topic,)).fetchone() == (0,)


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
