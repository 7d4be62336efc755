"""JSON-RPC batches: accepted from clients speaking MCP 2025-03-26 (whose base protocol says
they must be), refused under 2025-06-18 (which removed them), each message answered as it
would be alone and counted against the token's budget as a request of its own."""
from __future__ import annotations

import json
import uuid

import pytest

from conftest import Person, count
from lobbytalks import create_app
from lobbytalks import mcp_batch
from lobbytalks.mcp_batch import MAX_BATCH
from test_mcp import McpClient, assert_rpc_error

PING = {"jsonrpc": "2.0", "method": "ping"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def ping(ident):
    return {**PING, "id": ident}


@pytest.fixture
def mcp(app) -> McpClient:
    return McpClient(app, Person(app).register().new_agent().token)


@pytest.mark.parametrize("header", [None, "2025-03-26"])
def test_a_batch_is_answered_in_order_without_its_notifications(mcp, header):
    r = mcp.send([ping(1), INITIALIZED, {"jsonrpc": "2.0", "id": "b", "method": "tools/list"},
                  {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "list_communities", "arguments": {}}}],
                 **{"MCP-Protocol-Version": header})
    assert r.status_code == 200, r.get_json()
    first, tools, called = r.get_json()
    assert first == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert tools["id"] == "b" and "submit_result" in {t["name"] for t in tools["result"]["tools"]}
    assert called["id"] == 3 and called["result"]["isError"] is False
    assert called["result"]["structuredContent"]["communities"][0]["id"] == "lobby"


def test_a_batch_of_notifications_only_is_accepted_with_no_body(mcp):
    r = mcp.send([INITIALIZED, INITIALIZED])
    assert r.status_code == 202 and r.get_data() == b""


def test_a_notification_in_a_batch_is_never_answered_even_with_wrong_params(mcp):
    """A notification whose params were an array got an error reply in a batch (200 with a
    body for a batch of notifications only): JSON-RPC answers no notification."""
    cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1]}
    r = mcp.send([cancelled])
    assert r.status_code == 202 and r.get_data() == b""
    r = mcp.send([cancelled, ping(7), {**INITIALIZED, "params": "x"}])
    assert r.status_code == 200 and r.get_json() == [{"jsonrpc": "2.0", "id": 7, "result": {}}]
    # a message with no valid envelope is no notification: still answered as invalid
    r = mcp.send([{"jsonrpc": "1.0", "method": "notifications/initialized"}])
    assert r.status_code == 200 and r.get_json()[0]["error"]["code"] == -32600


def test_2025_06_18_has_no_batches(mcp):
    r = mcp.send([ping(1)], **{"MCP-Protocol-Version": "2025-06-18"})
    assert_rpc_error(r, 400, -32600, id=None)
    assert "2025-03-26" in r.get_json()["error"]["message"]


@pytest.mark.parametrize("batch", [[], [ping(i) for i in range(MAX_BATCH + 1)]])
def test_an_empty_or_too_long_batch_is_refused(mcp, batch):
    assert_rpc_error(mcp.send(batch), 400, -32600, id=None)


def test_each_message_of_a_batch_gets_its_own_answer_or_error(mcp):
    init = {"jsonrpc": "2.0", "id": 7, "method": "initialize",
            "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                       "clientInfo": {"name": "pytest", "version": "1"}}}
    r = mcp.send([init, [ping(8)], "ping", {"jsonrpc": "2.0", "id": 9, "method": "nothing"},
                  ping(10)])
    assert r.status_code == 200, r.get_json()
    answers = r.get_json()
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        (7, -32600), (None, -32600), (None, -32600), (9, -32601), (10, None)]


def test_every_message_of_a_batch_counts_against_the_token_budget(settings):
    app = create_app(settings.with_overrides(rate_token="3/minute"))
    mcp = McpClient(app, Person(app).register().new_agent().token)
    assert mcp.send([ping(1), ping(2), ping(3)]).status_code == 200
    assert_rpc_error(mcp.send(ping(4)), 429, -32000, id=4, data_code="rate_limited")
    other = McpClient(app, Person(app).register().new_agent().token)
    assert other.send(ping(0)).status_code == 200
    assert_rpc_error(other.send([ping(1), ping(2), ping(3)]), 429, -32000, id=None,
                     data_code="rate_limited")  # 2 left of 3: a batch of 3 does not fit


def test_a_batch_larger_than_the_whole_budget_is_told_so_not_to_wait(settings):
    """It had 429 with Retry-After 60: a client obeying it waited for ever."""
    app = create_app(settings.with_overrides(rate_token="3/minute"))
    mcp = McpClient(app, Person(app).register().new_agent().token)
    r = mcp.send([ping(i) for i in range(4)])
    assert_rpc_error(r, 400, -32000, id=None, data_code="invalid_request")
    assert "Retry-After" not in r.headers and "（3 条）" in r.get_json()["error"]["message"]
    assert mcp.send([ping(1), ping(2)]).status_code == 200  # it spent its one request only
    assert_rpc_error(mcp.send(ping(3)), 429, -32000, id=3, data_code="rate_limited")


def test_a_batch_refused_for_want_of_budget_leaves_the_rest_of_it(settings):
    app = create_app(settings.with_overrides(rate_token="6/minute"))
    mcp = McpClient(app, Person(app).register().new_agent().token)
    assert mcp.send([ping(1), ping(2), ping(3)]).status_code == 200  # 3 of 6
    assert_rpc_error(mcp.send([ping(i) for i in range(4)]), 429, -32000, id=None,
                     data_code="rate_limited")  # the request itself counted: 4 of 6
    assert mcp.send([ping(4), ping(5)]).status_code == 200
    assert_rpc_error(mcp.send(ping(6)), 429, -32000, id=6, data_code="rate_limited")


@pytest.mark.parametrize("batch", [
    [{"jsonrpc": "2.0", "id": 1, "result": {}}],
    [{"jsonrpc": "2.0", "id": 7, "error": {"code": 1, "message": "x"}}, INITIALIZED],
])
def test_a_batch_of_responses_only_is_refused_as_a_single_response_is(mcp, batch):
    """MCP 2025-03-26: input of responses or notifications only that the server cannot
    accept gets an HTTP error (it had been a 200 with an array of errors)."""
    assert_rpc_error(mcp.send(batch), 400, -32600, id=None)


def call(ident, name, **arguments):
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize("retire", [
    lambda owner, agent: owner.manage_post("rotate", profile=agent.profile_id),
    lambda owner, agent: owner.manage_post("revoke_all"),
], ids=["rotate", "revoke_all"])
def test_a_token_retired_while_its_batch_runs_stops_the_calls_after_it(
        app, db, monkeypatch, retire):
    """The owner rotates (or revokes every token) while a batch is being answered: the
    calls after that answered are refused as the same call sent alone would be."""
    owner = Person(app).register()
    agent = owner.new_agent()
    community = Person(app).register().communities_post("create", name="读书会").get_json()["id"]
    answer_one = mcp_batch._answer_one

    def answer_then_retire(message, *args):
        reply = answer_one(message, *args)
        if message["id"] == 1:
            assert retire(owner, agent).status_code == 200
        return reply

    monkeypatch.setattr(mcp_batch, "_answer_one", answer_then_retire)
    r = McpClient(app, agent.token).send([call(1, "list_communities"),
                                          call(2, "join_community", community=community)])
    assert r.status_code == 200, r.get_json()
    listed, joined = r.get_json()
    assert listed["result"]["isError"] is False
    assert joined["result"]["isError"] is True
    assert json.loads(joined["result"]["content"][0]["text"])["code"] == "unauthorized"
    assert count(db, "memberships", "community_id = :c", {"c": community}) == 1  # its maker


def test_the_served_contract_describes_batches(app):
    import jsonschema
    doc = app.test_client().get("/docs/external-agents-openapi.json").get_json()
    post = doc["paths"]["/api/external/mcp"]["post"]
    body = post["requestBody"]["content"]["application/json"]["schema"]
    answer = post["responses"]["200"]["content"]["application/json"]["schema"]
    resolver = {"components": doc["components"]}
    for schema, value in ((body, [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
                          (answer, [{"jsonrpc": "2.0", "id": 1, "result": {}}])):
        jsonschema.validate(value, {**schema, **resolver})


def test_a_batch_whose_answer_is_full_runs_none_of_the_requests_after_it(app, db, monkeypatch):
    """Twenty get_context calls on large questions built one 75 MB body from a 3 KB batch.
    Once the answers reach the limit, the requests after them are refused unrun (a claim
    among them takes no lease) and a notification still needs no answer."""
    asker = Person(app).register()
    asker.join()
    topic = asker.ask()
    helper = Person(app).register()
    helper.join()
    mcp = McpClient(app, helper.new_agent().token)
    alone = mcp.send(call(1, "list_communities")).get_data()
    monkeypatch.setattr(mcp_batch, "MAX_ANSWER_BYTES", len(alone))
    r = mcp.send([call(1, "list_communities"), INITIALIZED, ping(2),
                  call(3, "claim_task", topic=topic, requestId=str(uuid.uuid4())), [ping(4)]])
    assert r.status_code == 200, r.get_json()
    listed, pinged, claimed, nested = r.get_json()
    assert listed["result"]["isError"] is False and listed["id"] == 1
    for refused, ident in ((pinged, 2), (claimed, 3)):
        assert refused["id"] == ident and refused["error"]["code"] == -32600
        assert "没有执行" in refused["error"]["message"]
    assert nested["id"] is None and nested["error"]["code"] == -32600  # malformed, as ever
    assert count(db, "tasks", "topic_id = :t", {"t": topic}) == 0
    monkeypatch.setattr(mcp_batch, "MAX_ANSWER_BYTES", len(alone) + 1)
    r = mcp.send([call(1, "list_communities"), ping(2)])
    assert [a.get("result") for a in r.get_json()] == [listed["result"], {}]  # under: runs
