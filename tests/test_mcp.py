"""POST /api/external/mcp through the Flask test client: every §9 rule, one test (table) each."""
from __future__ import annotations

import json
import uuid
from typing import Any

import jsonschema
import pytest

from conftest import AgentClient, Person, count, good_result, joined_person
from lobbytalks import create_app, prose
from lobbytalks.actions import ACTIONS

PATH = "/api/external/mcp"
ACCEPT = "application/json, text/event-stream"


class McpClient:
    """An agent speaking JSON-RPC to the MCP endpoint with its Bearer token."""

    def __init__(self, app, token: str | None):
        self.http = app.test_client()
        self.token = token

    def headers(self, **extra: str | None) -> dict[str, str]:
        base = {"Accept": ACCEPT}
        if self.token:
            base["Authorization"] = f"Bearer {self.token}"
        base.update(extra)
        return {k: v for k, v in base.items() if v is not None}

    def send(self, body: Any, **headers: str | None):
        return self.http.post(PATH, data=json.dumps(body, ensure_ascii=False),
                              content_type="application/json", headers=self.headers(**headers))

    def rpc(self, method: str, params: dict | None = None, id: Any = 1, **headers: str | None):
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            body["params"] = params
        return self.send(body, **headers)

    def call(self, name: str, arguments: dict | None = None, **headers: str | None):
        r = self.rpc("tools/call", {"name": name, "arguments": arguments or {}}, **headers)
        assert r.status_code == 200, r.get_json()
        return r.get_json()["result"]


def assert_rpc_error(response, status: int, code: int, *, id: Any = None,
                     data_code: str | None = None) -> dict:
    """A JSON-RPC error: the HTTP status, the JSON-RPC code, the echoed id, the machine code."""
    body = response.get_json()
    assert response.status_code == status, (response.status_code, body)
    assert set(body) == {"jsonrpc", "id", "error"} and body["jsonrpc"] == "2.0", body
    assert body["id"] == id, body
    assert body["error"]["code"] == code and body["error"]["message"], body
    if data_code is not None:
        waited = {"retryAfter": int(response.headers["Retry-After"])} \
            if "Retry-After" in response.headers else {}
        assert body["error"]["data"] == {"code": data_code, "status": status, **waited}, body
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers.get("Cache-Control") == "no-store"
    assert "Mcp-Session-Id" not in response.headers
    return body["error"]


def tool_payload(result: dict) -> dict:
    """What a tool returned: the text content, which a success also carries, the same JSON,
    as structuredContent. A refusal has no structuredContent: {code, error, status} does not
    fit the tool's outputSchema, and the TypeScript SDK checks even a failed call's."""
    assert [c["type"] for c in result["content"]] == ["text"]
    text = result["content"][0]["text"]
    payload = json.loads(text)
    # Byte for byte what the standard library writes (compact, UTF-8 unescaped).
    assert text == json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    if result["isError"]:
        assert "structuredContent" not in result, result
    else:
        assert result["structuredContent"] == payload
    return payload


def business_error(result: dict, status: int, code: str) -> dict:
    assert result["isError"] is True, result
    payload = tool_payload(result)
    # the wait a 429 names (REST's Retry-After), which an MCP client cannot otherwise see
    waits = {"retryAfter"} if code in ("rate_limited", "task_limit") else set()
    assert set(payload) == {"code", "error", "status"} | waits and payload["error"], payload
    assert all(isinstance(payload[k], int) and payload[k] >= 1 for k in waits), payload
    assert (payload["status"], payload["code"]) == (status, code), payload
    return payload


@pytest.fixture
def helper(app):
    """The agent's owner, registered but not yet a member of any community."""
    return Person(app).register()


@pytest.fixture
def agent(helper) -> AgentClient:
    return helper.new_agent()


@pytest.fixture
def mcp(app, agent) -> McpClient:
    return McpClient(app, agent.token)


def initialize(mcp: McpClient, version: str = "2025-06-18", **headers: str | None):
    return mcp.rpc("initialize", {"protocolVersion": version, "capabilities": {},
                                  "clientInfo": {"name": "pytest", "version": "1"}}, **headers)


# --- lifecycle -----------------------------------------------------------------------

@pytest.mark.parametrize("offered, agreed", [
    ("2025-06-18", "2025-06-18"),
    ("2025-03-26", "2025-03-26"),
    ("2025-11-25", "2025-06-18"),   # what current clients offer: answered, never refused
    ("2026-07-28", "2025-06-18"),
    ("2024-11-05", "2025-06-18"),   # older than we speak: our newest, the client decides
])
def test_initialize_negotiates_the_version(mcp, offered, agreed):
    r = initialize(mcp, offered)
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "application/json"
    assert "Mcp-Session-Id" not in r.headers
    body = r.get_json()
    assert body["id"] == 1 and "error" not in body
    result = body["result"]
    assert result["protocolVersion"] == agreed
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "lobbytalks" and result["serverInfo"]["version"]
    assert "join_community" in result["instructions"]


def test_initialize_ignores_the_version_header(mcp):
    # initialize negotiates in its body; a stale header from an earlier connection is moot.
    assert initialize(mcp, "2025-06-18", **{"MCP-Protocol-Version": "2099-01-01"}).status_code == 200


def test_initialize_needs_a_protocol_version(mcp):
    r = mcp.rpc("initialize", {"capabilities": {}})
    assert_rpc_error(r, 200, -32602, id=1)


def test_ping(mcp):
    r = mcp.rpc("ping", id="p-1")
    assert r.status_code == 200 and r.get_json() == {"jsonrpc": "2.0", "id": "p-1", "result": {}}


@pytest.mark.parametrize("number", [1.5, -0.25, 2.0, 2**63, 1e16, -6.7495647220519464e+16,
                                    1.8e19])
def test_any_number_is_an_id_and_is_echoed(mcp, number):
    """The contract's JsonRpcRequest.id is a string or a number, as in MCP's own schema."""
    r = mcp.send({"jsonrpc": "2.0", "id": number, "method": "ping"})
    assert r.status_code == 200 and r.get_json() == {"jsonrpc": "2.0", "id": number, "result": {}}


@pytest.mark.parametrize("message", [
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}},
    {"jsonrpc": "2.0", "method": "notifications/whatever-comes-next"},
])
def test_notifications_are_202_with_an_empty_body(mcp, message):
    r = mcp.send(message, **{"MCP-Protocol-Version": "2025-06-18"})
    assert r.status_code == 202
    assert r.data == b"" and "Content-Type" not in r.headers


@pytest.mark.parametrize("params", ["x", [1, 2], 5, True])
def test_a_notification_whose_params_are_no_object_is_an_http_error(mcp, params):
    """It was taken with 202 while the same message with an id was refused; the transport
    asks for an HTTP error status for a message the server cannot accept."""
    r = mcp.send({"jsonrpc": "2.0", "method": "notifications/initialized", "params": params},
                 **{"MCP-Protocol-Version": "2025-06-18"})
    assert r.status_code == 400
    assert r.get_json() == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32602, "message": "params 必须是 JSON 对象"}}


@pytest.mark.parametrize("ident", [0, 7, "0", "abc-1", ""])
def test_zero_and_string_ids_are_requests(mcp, ident):
    r = mcp.rpc("ping", id=ident)
    assert r.status_code == 200 and r.get_json() == {"jsonrpc": "2.0", "id": ident, "result": {}}


def test_meta_in_params_is_accepted_and_ignored(mcp):
    meta = {"progressToken": "tok-1", "threadId": "t-9"}
    r = mcp.rpc("tools/list", {"_meta": meta})
    assert r.status_code == 200 and len(r.get_json()["result"]["tools"]) == 9
    r = mcp.rpc("tools/call", {"name": "list_communities", "arguments": {}, "_meta": meta})
    assert r.get_json()["result"]["isError"] is False
    r = mcp.rpc("ping", {"_meta": meta})
    assert r.get_json()["result"] == {}


@pytest.mark.parametrize("method", ["server/discover", "resources/list", "prompts/list",
                                    "resources/templates/list", "logging/setLevel",
                                    "completion/complete", "tools/destroy", ""])
def test_methods_not_offered_are_32601(mcp, method):
    assert_rpc_error(mcp.rpc(method, {}, id=5), 200, -32601, id=5)


@pytest.mark.parametrize("method", ["server/discover", "resources/list", "tools/list", "ping"])
def test_an_unsupported_version_header_is_400_whatever_the_method(mcp, method):
    """The transport's MUST: a newer client's server/discover probe, sent with its own
    version, is refused as any request would be (the SDK then falls back to initialize:
    test_mcp_sdk)."""
    r = mcp.rpc(method, {"_meta": {}}, **{"MCP-Protocol-Version": "2026-07-28"})
    assert_rpc_error(r, 400, -32000, id=1, data_code="unsupported_protocol")


# --- protocol version header ---------------------------------------------------------

@pytest.mark.parametrize("header", [None, "2025-06-18", "2025-03-26"])
def test_supported_or_absent_version_header_is_fine(mcp, header):
    r = mcp.rpc("tools/list", **{"MCP-Protocol-Version": header})
    assert r.status_code == 200 and len(r.get_json()["result"]["tools"]) == 9


@pytest.mark.parametrize("header", ["2025-11-25", "2024-11-05", "latest", "2099-01-01",
                                    "2025-06-18\xa0", "2025-06-18\x85"])  # no HTTP whitespace
def test_unsupported_version_header_is_400(mcp, header):
    r = mcp.rpc("tools/list", id="x", **{"MCP-Protocol-Version": header})
    assert_rpc_error(r, 400, -32000, id="x", data_code="unsupported_protocol")
    r = mcp.send({"jsonrpc": "2.0", "method": "notifications/initialized"},
                 **{"MCP-Protocol-Version": header})
    assert_rpc_error(r, 400, -32000, id=None, data_code="unsupported_protocol")


# --- HTTP rules ----------------------------------------------------------------------

@pytest.mark.parametrize("accept", [
    "application/json, text/event-stream",
    "text/event-stream, application/json",
    "application/json;q=0.9, text/event-stream;q=0.5",
    "application/json; charset=utf-8 , text/event-stream",
    "TEXT/EVENT-STREAM,APPLICATION/JSON",
    "text/event-stream, */*;q=0.1, application/json",
    "application/json;q=1.000, text/event-stream;q=0.001",
    "application/json ;\tq=1. , text/event-stream",
])
def test_accept_lists_both_types(mcp, accept):
    assert mcp.rpc("ping", Accept=accept).status_code == 200


@pytest.mark.parametrize("accept", [
    None, "", "application/json", "text/event-stream", "text/html",
    "application/json, text/event-stream;q=0",
    "*/*, text/event-stream;q=0",
    "application/jsonx, text/event-streams",
    # wildcards are not a list of the two types (what curl and requests send by default)
    "*/*",
    "application/*, text/*",
    "text/event-stream, */*;q=0.1",
    "application/json, text/*",
    # a weight must be 0 to 1 with at most three decimals (RFC 9110 §12.4.2)
    "application/json, text/event-stream;q=inf",
    "application/json, text/event-stream;q=1e0",
    "application/json, text/event-stream;q=2",
    "application/json, text/event-stream;q=0.0001",
    "application/json, text/event-stream;q=１",
    "application/json, text/event-stream;q=\u00a01",
])
def test_accept_without_both_types_is_406(mcp, accept, db):
    r = mcp.rpc("tools/call", {"name": "join_community", "arguments": {"community": "lobby"}},
                Accept=accept, id=21)
    # The id is echoed although the body was refused unread: clients pair errors by id.
    assert_rpc_error(r, 406, -32000, id=21, data_code="not_acceptable")
    assert count(db, "memberships", "community_id = 'lobby'") == 0   # the tool never ran


@pytest.mark.parametrize("body, content_type", [
    (b'{"jsonrpc": "2.0", "id": 22,', "application/json"),           # unparseable
    (b'{"jsonrpc": "2.0", "id": 22, "method": "ping"}', "text/plain"),  # not declared JSON
    (b'[{"jsonrpc": "2.0", "id": 22, "method": "ping"}]', "application/json"),
])
def test_a_406_echoes_no_id_it_cannot_read(mcp, body, content_type):
    r = mcp.http.post(PATH, data=body, content_type=content_type,
                      headers=mcp.headers(Accept="application/json"))
    assert_rpc_error(r, 406, -32000, id=None, data_code="not_acceptable")


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH", "OPTIONS", "TRACE"])
@pytest.mark.parametrize("accept", ["text/event-stream", ACCEPT, None])
def test_other_http_methods_are_405(mcp, method, accept):
    r = mcp.http.open(PATH, method=method, headers=mcp.headers(Accept=accept))
    assert_rpc_error(r, 405, -32000, data_code="method_not_allowed")
    assert r.headers["Allow"] == "POST"


def test_405_comes_before_authentication(app):
    r = app.test_client().get(PATH, headers={"Accept": "text/event-stream"})
    assert_rpc_error(r, 405, -32000, data_code="method_not_allowed")


def test_invalid_json_is_a_parse_error(mcp):
    r = mcp.http.post(PATH, data=b'{"jsonrpc": "2.0", "id": 1,', content_type="application/json",
                      headers=mcp.headers())
    assert_rpc_error(r, 400, -32000, id=None, data_code="invalid_json")


@pytest.mark.parametrize("body, echoed", [
    ([], None),                                                # an empty batch (see test_mcp_batch)
    ("ping", None),
    (42, None),
    ({"id": 2, "method": "ping"}, 2),
    ({"jsonrpc": "1.0", "id": 3, "method": "ping"}, 3),
    ({"jsonrpc": "2.0", "id": 4}, 4),
    ({"jsonrpc": "2.0", "id": 5, "method": ["ping"]}, 5),
    ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
    ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
    ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None),
    ({"jsonrpc": "2.0", "id": 6, "result": {}}, None),  # we never ask; its id is not the client's
])
def test_malformed_messages_are_32600(mcp, body, echoed):
    assert_rpc_error(mcp.send(body), 400, -32600, id=echoed)


@pytest.mark.parametrize("literal", ["18446744073709551616", "-9223372036854775809",
                                     "1.8446744073709552e19", "1e30"])
def test_an_id_beyond_64_bits_is_not_echoed_as_another_number(mcp, literal):
    """Read as a float, an integer written past 64 bits would be echoed as another value;
    a whole float that far out may be one of them (1e16, inside, is echoed as sent)."""
    r = mcp.http.post("/api/external/mcp", data=f'{{"jsonrpc":"2.0","id":{literal},"method":"ping"}}',
                      content_type="application/json", headers=mcp.headers())
    assert_rpc_error(r, 400, -32600, id=None)


@pytest.mark.parametrize("body", [{"jsonrpc": "2.0", "id": 6, "result": {}},
                                  {"jsonrpc": "2.0", "id": 6, "error": {"code": 1}}])
def test_a_response_posted_to_the_server_is_told_it_asked_nothing(mcp, body):
    """Without an id: a response's id is from the server's requests, and echoing it would
    pair the error with the client's own request 6 (the transport: an error with no id)."""
    r = mcp.send(body)
    assert_rpc_error(r, 400, -32600, id=None)
    assert "不接受 JSON-RPC 响应" in r.get_json()["error"]["message"]


@pytest.mark.parametrize("params", [
    {"arguments": {}},
    {"name": 5},
    {"name": "delete_everything"},
    {"name": "list_topics", "arguments": ["lobby"]},
    {"name": "list_topics", "arguments": "community=lobby"},
])
def test_bad_tools_call_params_are_32602(mcp, params):
    assert_rpc_error(mcp.rpc("tools/call", params, id=9), 200, -32602, id=9)


def test_params_must_be_an_object(mcp):
    assert_rpc_error(mcp.rpc("tools/list", ["x"], id=2), 200, -32602, id=2)  # type: ignore[arg-type]


# --- authentication and the shared guards --------------------------------------------

@pytest.mark.parametrize("authorization", [None, "Bearer", "Bearer lbt_unknown", "Basic abc"])
def test_bad_tokens_are_401_with_the_id_echoed(app, authorization):
    client = McpClient(app, None)
    r = client.rpc("tools/list", id=11, Authorization=authorization)
    assert_rpc_error(r, 401, -32000, id=11, data_code="unauthorized")
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    r = client.send({"jsonrpc": "2.0", "method": "notifications/initialized"},
                    Authorization=authorization)
    assert_rpc_error(r, 401, -32000, id=None, data_code="unauthorized")


@pytest.mark.parametrize("sent, name", [("${XIA_CHEDAN_AGENT_TOKEN}", "XIA_CHEDAN_AGENT_TOKEN"),
                                        ("$LT_TOKEN", "LT_TOKEN"), ("%LT_TOKEN%", "LT_TOKEN")])
def test_an_unexpanded_variable_for_a_token_is_401_naming_the_variable(app, sent, name):
    """Claude Code sends ``Bearer ${NAME}`` as it is when NAME is unset; "invalid, expired
    or revoked" sent people off to rotate a token that was fine."""
    r = McpClient(app, None).rpc("tools/list", id=3, Authorization=f"Bearer {sent}")
    assert_rpc_error(r, 401, -32000, id=3, data_code="unauthorized")
    message = r.get_json()["error"]["message"]
    assert f"未展开的变量 {sent}" in message and message.endswith(f"环境变量 {name}")
    r = app.test_client().get("/api/external?action=list_topics",
                              headers={"Authorization": f"Bearer {sent}"})
    assert r.status_code == 401 and name in r.get_json()["error"]


@pytest.mark.parametrize("sent", ["${LT_TOKEN", "$LT_TOKEN}", "%LT_TOKEN", "${}"])
def test_what_is_no_whole_variable_gets_the_generic_401(app, sent):
    r = app.test_client().get("/api/external?action=list_topics",
                              headers={"Authorization": f"Bearer {sent}"})
    assert r.status_code == 401 and r.get_json()["error"] == "Agent Token 无效、已过期或已撤销"


def test_revoked_token_is_401(helper, agent, mcp):
    assert mcp.rpc("ping").status_code == 200
    assert helper.manage_post("revoke", tokenId=agent.token_id).status_code == 200
    assert_rpc_error(mcp.rpc("ping"), 401, -32000, id=1, data_code="unauthorized")


@pytest.mark.parametrize("headers", [{"Origin": "https://evil.example"},
                                     {"Sec-Fetch-Site": "cross-site"}])
def test_cross_site_requests_are_403(mcp, headers, db):
    r = mcp.rpc("tools/call", {"name": "join_community", "arguments": {"community": "lobby"}},
                id="o-1", **headers)
    assert_rpc_error(r, 403, -32000, id="o-1", data_code="forbidden_origin")
    assert count(db, "memberships", "community_id = 'lobby'") == 0


def test_same_origin_browser_request_is_fine(mcp):
    assert mcp.rpc("ping", Origin="http://localhost", **{"Sec-Fetch-Site": "same-origin"}
                   ).status_code == 200


def test_content_type_must_be_json(mcp):
    r = mcp.http.post(PATH, data=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                      content_type="text/plain", headers=mcp.headers())
    assert_rpc_error(r, 415, -32000, data_code="unsupported_media_type")


def test_body_over_64_kib_is_413(mcp, db):
    filler = "x" * (64 * 1024)
    r = mcp.rpc("tools/call", {"name": "join_community", "arguments": {"community": filler}})
    assert_rpc_error(r, 413, -32000, data_code="payload_too_large")
    assert count(db, "memberships", "community_id = 'lobby'") == 0


def test_body_of_exactly_64_kib_is_read(mcp):
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": {"pad": ""}}}
    body["params"]["_meta"]["pad"] = "x" * (64 * 1024 - len(json.dumps(body)))
    assert len(json.dumps(body).encode()) == 64 * 1024
    assert mcp.send(body).status_code == 200


def test_per_token_budget_is_shared_with_rest(settings):
    app = create_app(settings.with_overrides(rate_token="4/minute"))
    owner = Person(app).register()
    agent = owner.new_agent()
    mcp = McpClient(app, agent.token)
    assert agent.get("list_communities").status_code == 200
    assert agent.get("list_topics").status_code == 200
    assert mcp.rpc("ping").status_code == 200
    assert mcp.send({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
    r = mcp.rpc("tools/list", id=8)
    assert_rpc_error(r, 429, -32000, id=8, data_code="rate_limited")
    assert int(r.headers["Retry-After"]) >= 1 and r.get_json()["error"]["data"]["retryAfter"] >= 1
    assert agent.get("list_topics").status_code == 429
    other = McpClient(app, owner.new_agent("另一只").token)  # budgets are per token
    assert other.rpc("ping").status_code == 200


def test_unexpected_failure_is_a_503_jsonrpc_error(mcp, monkeypatch):
    from lobbytalks.services import tasks

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")
    monkeypatch.setattr(tasks, "status", broken)
    r = mcp.rpc("tools/call", {"name": "get_task_status", "arguments": {"taskId": "t1"}}, id=4)
    error = assert_rpc_error(r, 503, -32000, id=4, data_code="service_unavailable")
    assert "disk" not in error["message"]


# --- tools/list ----------------------------------------------------------------------

def _walk(node: Any):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_tools_list_refuses_a_cursor_it_never_handed_out(mcp):
    """Every tool is on the first page and no nextCursor is given, so any cursor is invalid
    (MCP pagination: invalid cursors get -32602); a null one is no cursor."""
    first = mcp.rpc("tools/list").get_json()["result"]
    assert "nextCursor" not in first
    for cursor in ("bogus", "", 123, {"page": 2}):
        assert_rpc_error(mcp.rpc("tools/list", {"cursor": cursor}, id=3), 200, -32602, id=3)
    assert mcp.rpc("tools/list", {"cursor": None}).get_json()["result"] == first


def test_tools_list_is_the_action_table(mcp):
    tools = mcp.rpc("tools/list").get_json()["result"]["tools"]
    assert [t["name"] for t in tools] == list(ACTIONS)
    for tool in tools:
        action = ACTIONS[tool["name"]]
        assert tool["title"] == action.title
        stated = action.describe(prose.numbers(mcp.http.application.config["LOBBYTALKS"].settings))
        assert tool["description"] == stated and len(stated) > 40 and "{" not in stated
        assert "outputSchema" not in tool
        schema = tool["inputSchema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert "action" not in schema["properties"]
        assert not any("$ref" in node or "$defs" in node for node in _walk(schema))
        model_fields = {name for name, f in action.model.model_fields.items()
                        if f.is_required() and name != "action"}
        assert set(schema.get("required", [])) == model_fields
        assert tool["annotations"] == {
            "title": action.title, "readOnlyHint": action.method == "GET",
            "destructiveHint": False, "idempotentHint": action.idempotent,
            "openWorldHint": False}


def test_annotations_tell_the_truth(mcp):
    tools = {t["name"]: t["annotations"] for t in mcp.rpc("tools/list").get_json()["result"]["tools"]}
    reads = {"list_communities", "list_topics", "get_context", "get_task_status"}
    assert {name for name, a in tools.items() if a["readOnlyHint"]} == reads
    # nothing is destroyed: fail_task ends the caller's own lease and keeps its record, as
    # submit_result does; marked destructive, Codex refused it unattended (`codex exec`)
    assert not any(a["destructiveHint"] for a in tools.values())
    assert tools["heartbeat"]["idempotentHint"] is False   # each call moves the expiry
    assert tools["claim_task"]["idempotentHint"] is True   # same requestId replays


def test_submit_schema_carries_the_limits(mcp):
    tools = {t["name"]: t for t in mcp.rpc("tools/list").get_json()["result"]["tools"]}
    props = tools["submit_result"]["inputSchema"]["properties"]
    assert (props["conclusion"]["minLength"], props["conclusion"]["maxLength"]) == (30, 200)
    assert props["evidence"]["maxItems"] == 8 and props["toolRuns"]["maxItems"] == 12
    evidence = props["evidence"]["items"]
    assert evidence["additionalProperties"] is False
    assert evidence["required"] == ["title", "url", "excerpt", "retrievedAt"]
    assert evidence["properties"]["kind"]["enum"] == ["snippet", "abstract", "metadata", "page"]
    assert props["reasoningSummary"]["maxLength"] == 1600
    claim = tools["claim_task"]["inputSchema"]
    assert claim["required"] == ["topic", "requestId"]
    assert claim["properties"]["requestId"]["format"] == "uuid"


@pytest.mark.parametrize("name, arguments", [
    # JSON arguments keep their JSON types: no "2" for 2, no true for 1 (a query string's
    # values are converted only on REST GETs).
    ("list_communities", {"page": 2}),
    ("list_communities", {"page": True}),
    ("list_communities", {"page": "2"}),
    ("list_communities", {"page": 1.0}),
    ("list_topics", {"community": 7}),
    ("list_communities", {"scope": "joined", "page": 2}),
    ("list_communities", {"scope": "mine"}),
    ("list_communities", {"page": 0}),
    ("list_topics", {"community": "lobby", "extra": 1}),
    ("join_community", {}),
    ("join_community", {"community": ""}),
    ("claim_task", {"topic": "t1", "requestId": "not-a-uuid"}),
    ("claim_task", {"topic": "t1", "requestId": str(uuid.uuid4()), "replyTo": "x" * 81}),
    ("fail_task", {"taskId": "t1", "error": "x" * 301}),
    ("submit_result", {"taskId": "t1", **good_result(conclusion="太短")}),
    ("submit_result", {"taskId": "t1", **good_result(evidence=[{"title": "t"}])}),
    ("submit_result", {"taskId": "t1", **good_result(conditions=["a"] * 5)}),
    ("submit_result", {"taskId": "t1", **good_result(uncertainties=["a"] * 5)}),
    ("submit_result", {"taskId": "t1", **good_result()}),
    ("get_task_status", {"taskId": "t1"}),
])
def test_published_schema_and_server_agree(mcp, name, arguments):
    """An argument set the schema rejects is rejected by the server as invalid input, and
    one it accepts gets past validation (to a business answer such as not_found)."""
    tools = {t["name"]: t for t in mcp.rpc("tools/list").get_json()["result"]["tools"]}
    schema_ok = jsonschema.Draft202012Validator(
        tools[name]["inputSchema"], format_checker=jsonschema.FormatChecker()).is_valid(arguments)
    result = mcp.call(name, arguments)
    validation_codes = {"invalid_request", "invalid_result", "invalid_source"}
    payload = tool_payload(result)
    server_ok = not (result["isError"] and payload["code"] in validation_codes)
    assert schema_ok == server_ok, payload


# --- tools/call ----------------------------------------------------------------------

def test_join_via_mcp_joins_the_user(mcp, helper, db):
    result = mcp.call("join_community", {"community": "lobby"})
    assert result["isError"] is False
    assert tool_payload(result) == {"ok": True, "id": "lobby", "joined": True}
    user_id = db.value("SELECT id FROM users WHERE username = :username", {"username": helper.username})
    assert count(db, "memberships", "community_id = 'lobby' AND user_id = :user_id", {"user_id": user_id}) == 1


def test_business_failure_is_an_error_result(mcp, topic, db):
    result = mcp.call("claim_task", {"topic": topic, "requestId": str(uuid.uuid4())})
    business_error(result, 403, "forbidden")   # not a member of lobby
    assert count(db, "tasks") == 0
    business_error(mcp.call("get_context", {"topic": "t_missing"}), 404, "not_found")
    business_error(mcp.call("join_community", {"community": "nope"}), 404, "not_found")


def test_argument_errors_are_error_results(mcp, db):
    payload = business_error(mcp.call("join_community", {"community": "lobby", "x": 1}),
                             400, "invalid_request")
    assert "x" in payload["error"]
    assert count(db, "memberships", "community_id = 'lobby'") == 0


def test_full_flow_over_mcp(mcp, topic, db):
    assert mcp.call("join_community", {"community": "lobby"})["isError"] is False
    listed = tool_payload(mcp.call("list_topics", {"community": "lobby"}))
    assert [t["id"] for t in listed["topics"]] == [topic]
    context = tool_payload(mcp.call("get_context", {"topic": topic}))
    assert context["allowed"] is False and context["messages"] == []
    claimed = tool_payload(mcp.call("claim_task", {"topic": topic, "requestId": str(uuid.uuid4())}))
    task_id = claimed["task"]["id"]
    assert claimed["task"]["state"] == "leased" and "replayed" not in claimed
    beat = tool_payload(mcp.call("heartbeat", {"taskId": task_id}))
    assert beat["task"]["state"] == "leased"
    submitted = tool_payload(mcp.call("submit_result", {"taskId": task_id, **good_result()}))
    assert submitted["ok"] is True and submitted["task"]["state"] == "done"
    assert tuple(db.one("SELECT state, message_id FROM tasks WHERE id = :id", {"id": task_id})) \
        == ("done", submitted["messageId"])
    assert count(db, "messages", "topic_id = :topic_id", {"topic_id": topic}) == 1
    status = tool_payload(mcp.call("get_task_status", {"taskId": task_id}))
    assert status["task"]["messageId"] == submitted["messageId"]
    after = tool_payload(mcp.call("get_context", {"topic": topic}))
    assert after["allowed"] is True and [m["id"] for m in after["messages"]] == [submitted["messageId"]]
    business_error(mcp.call("fail_task", {"taskId": task_id, "error": "太晚了"}), 409, "task_terminal")


def test_rest_claim_replays_over_mcp(agent, mcp, topic, db):
    agent.post("join_community", community="lobby")
    request_id = str(uuid.uuid4())
    rest = agent.claim(topic, request_id).get_json()
    over_mcp = tool_payload(mcp.call("claim_task", {"topic": topic, "requestId": request_id.upper()}))
    assert over_mcp["replayed"] is True and over_mcp["task"] == rest["task"]
    assert count(db, "tasks") == 1


def test_rest_submit_replays_over_mcp_and_conflicts_differ(agent, mcp, topic, db):
    agent.post("join_community", community="lobby")
    task_id = agent.claim(topic).get_json()["task"]["id"]
    rest = agent.post("submit_result", taskId=task_id, **good_result()).get_json()
    again = tool_payload(mcp.call("submit_result", {"taskId": task_id, **good_result()}))
    assert again["replayed"] is True and again["messageId"] == rest["messageId"]
    assert count(db, "messages") == 1 and count(db, "memories") == 1
    other = good_result(conclusion="换一个说法：SQLite 的在线备份 API 能在服务运行时复制出一致的数据库 [S1]。")
    business_error(mcp.call("submit_result", {"taskId": task_id, **other}), 409,
                   "idempotency_conflict")
    assert count(db, "messages") == 1


def test_fail_task_replays_and_conflicts(mcp, topic, db):
    mcp.call("join_community", {"community": "lobby"})
    task_id = tool_payload(mcp.call("claim_task", {"topic": topic, "requestId": str(uuid.uuid4())})
                           )["task"]["id"]
    first = tool_payload(mcp.call("fail_task", {"taskId": task_id, "error": "来源都打不开"}))
    assert first["task"]["state"] == "failed" and "replayed" not in first
    assert tool_payload(mcp.call("fail_task", {"taskId": task_id, "error": "来源都打不开"}))["replayed"]
    business_error(mcp.call("fail_task", {"taskId": task_id, "error": "别的原因"}), 409,
                   "idempotency_conflict")
    assert db.value("SELECT error FROM tasks WHERE id = :id", {"id": task_id}) == "来源都打不开"


def test_claim_limits_inside_a_tool_are_error_results(settings):
    app = create_app(settings.with_overrides(rate_claim="4/minute"))
    asker = joined_person(app)
    topics = [asker.ask(f"第 {i} 个问题：SQLite 备份要注意什么？") for i in range(5)]
    mcp = McpClient(app, asker.new_agent().token)
    for topic in topics[:3]:
        assert mcp.call("claim_task", {"topic": topic, "requestId": str(uuid.uuid4())})["isError"] is False
    # The per-user lease cap and claim rate are the tool's business, reported in the result;
    # only the per-token budget is transport level.
    business_error(mcp.call("claim_task", {"topic": topics[3], "requestId": str(uuid.uuid4())}),
                   429, "task_limit")
    business_error(mcp.call("claim_task", {"topic": topics[4], "requestId": str(uuid.uuid4())}),
                   429, "rate_limited")


def test_tool_text_keeps_unusual_characters_as_the_standard_library_writes_them(mcp, asker):
    """Quotes, a backslash, an emoji and markup in a title: the text content
    is the exact compact JSON, so a client comparing it to structuredContent agrees."""
    title = '为什么 "引号" 和 \\ 反斜杠 🦐 </script> &amp; 会出问题？'
    topic = asker.ask(title=title)
    mcp.call("join_community", {"community": "lobby"})
    listed = tool_payload(mcp.call("list_topics", {"community": "lobby"}))
    assert [(t["id"], t["title"]) for t in listed["topics"]] == [(topic, title)]


def test_a_null_argument_is_one_not_given(mcp, agent, topic, db):
    """mcp-use sends null for every optional argument it was not given: that is the
    argument left out, at any depth, while a required one sent as null is still missing.
    REST keeps the contract's types."""
    assert tool_payload(mcp.call("join_community", {"community": "lobby"}))["joined"] is True
    assert tool_payload(mcp.call("list_communities", {"scope": None, "page": None})) == \
        tool_payload(mcp.call("list_communities", {}))
    assert [t["id"] for t in tool_payload(mcp.call("list_topics", {"community": None}))["topics"]] \
        == [topic]
    claimed = tool_payload(mcp.call("claim_task", {"topic": topic, "requestId": str(uuid.uuid4()),
                                                   "replyTo": None}))
    task_id = claimed["task"]["id"]
    result = good_result(uncertainties=None, conditions=None, toolRuns=None)
    result["evidence"] = [{**item, "kind": None} for item in result["evidence"]]
    submitted = tool_payload(mcp.call("submit_result", {"taskId": task_id, **result}))
    assert submitted["task"]["state"] == "done"
    assert count(db, "messages", "id = :id", {"id": submitted["messageId"]}) == 1
    refused = business_error(mcp.call("get_context", {"topic": None}), 400, "invalid_request")
    assert "topic" in refused["error"]
    r = agent.http.post("/api/external", headers=agent.headers,
                        json={"action": "list_communities", "page": None})
    assert (r.status_code, r.get_json()["code"]) == (400, "invalid_request")


def test_the_key_gemini_cli_adds_to_every_tool_is_let_through(mcp, topic, db):
    """Gemini CLI adds ``wait_for_previous`` to each tool's parameters and tells its model
    to set it on a call that depends on an earlier one; it passes it on as it is."""
    assert mcp.call("join_community", {"community": "lobby", "wait_for_previous": False}
                    )["isError"] is False
    claimed = tool_payload(mcp.call("claim_task", {
        "topic": topic, "requestId": str(uuid.uuid4()), "wait_for_previous": True}))
    task_id = claimed["task"]["id"]
    beat = tool_payload(mcp.call("heartbeat", {"taskId": task_id, "wait_for_previous": True}))
    assert beat["task"]["state"] == "leased"
    submitted = tool_payload(mcp.call("submit_result", {"taskId": task_id, **good_result(),
                                                        "wait_for_previous": True}))
    assert submitted["task"]["state"] == "done" and count(db, "messages") == 1
    # any other key a tool does not declare is still refused
    refused = business_error(mcp.call("get_task_status", {"taskId": task_id, "wait": True}),
                             400, "invalid_request")
    assert refused["error"].startswith("wait: ")


@pytest.mark.parametrize("action", [None, 5, "submit_result", "list_communities"])
def test_an_action_among_a_tools_arguments_is_an_unknown_field(mcp, action):
    """The tool's name is the action: its inputSchema has no "action", and other fields it
    does not list are refused, so this one is too (it was silently overwritten)."""
    r = mcp.rpc("tools/call", {"name": "list_communities", "arguments": {"action": action}})
    payload = business_error(r.get_json()["result"], 400, "invalid_request")
    assert payload["error"].startswith("action: "), payload


@pytest.mark.parametrize("method, path, body", [
    ("get", "/.well-known/oauth-protected-resource", None),
    ("get", "/.well-known/oauth-protected-resource/api/external/mcp", None),
    ("get", "/.well-known/oauth-authorization-server", None),
    ("get", "/.well-known/openid-configuration", None),
    ("post", "/register", {"client_name": "Claude Code", "redirect_uris": ["http://localhost/cb"]}),
])
def test_a_client_looking_for_oauth_is_told_in_json_to_use_an_agent_token(app, method, path, body):
    """An MCP client sent no token looks for OAuth; an HTML page there read as "JSON Parse
    error: Unrecognized token '<'" instead of what to do."""
    client = app.test_client()
    r = client.get(path) if method == "get" else client.post(path, json=body)
    assert r.status_code in (404, 405) and r.content_type == "application/json"
    said = r.get_json()
    assert said["error"] == "invalid_request" and "Agent Token" in said["error_description"]
    # the sign-up page itself, as a browser posts it without JavaScript, is still a page
    page = client.post("/register", data={"username": "x"})
    assert page.content_type.startswith("text/html")


@pytest.mark.parametrize("tool, field, blank, arguments", [
    ("fail_task", "error", "   ", {"taskId": "task_missing"}),
    ("submit_result", "conclusion", " " * 40,
     {"taskId": "task_missing", "reasoningSummary": "它说明了结论从何而来。", "evidence": []}),
])
def test_a_blank_text_is_refused_by_the_published_schema_as_by_the_server(mcp, tool, field,
                                                                          blank, arguments):
    """A client checking arguments against inputSchema let a value of spaces through, which
    the server then refused: the schema said only minLength."""
    tools = {t["name"]: t for t in mcp.rpc("tools/list").get_json()["result"]["tools"]}
    schema = tools[tool]["inputSchema"]
    validator = jsonschema.Draft202012Validator(schema)
    assert not validator.is_valid({**arguments, field: blank})
    assert not validator.is_valid({**arguments, field: "\u3000\u00a0\n" * 20})
    written = "结论写在这里，" * 6
    assert validator.is_valid({**arguments, field: f"  {written}  "})
    refused = business_error(mcp.call(tool, {**arguments, field: blank}), 400, "invalid_request")
    assert field in refused["error"]


def test_the_published_blank_rule_is_the_servers_in_python_validators_too(mcp):
    """The pattern \\S, read by Python's re as jsonschema does, took U+FEFF for a letter and
    U+001C-U+001F and U+0085 for spaces, where the server (JavaScript's trim) does the
    opposite: every character is now judged alike by the schema and by the server."""
    from lobbytalks.textrules import JS_TRIMMED, js_trim
    tools = {t["name"]: t for t in mcp.rpc("tools/list").get_json()["result"]["tools"]}
    error = jsonschema.Draft202012Validator(tools["fail_task"]["inputSchema"]["properties"]["error"])
    for character in JS_TRIMMED + "\x1c\x1d\x1e\x1f\x85\u200b\u180e\u2060":
        blank_to_the_server = js_trim(character * 3) == ""
        assert error.is_valid(character * 3) is not blank_to_the_server, hex(ord(character))
