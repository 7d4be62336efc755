"""``outputSchema`` in ``tools/list``: negotiated by version, generated from the response
models the OpenAPI document uses, and true for every successful ``structuredContent``.

Through the Flask test client; tests/test_mcp_sdk.py drives the same against a real server
with the official SDK, which validates results against these schemas itself.
"""
from __future__ import annotations

import copy
import uuid
from typing import Any

import jsonschema
import pytest
import requests

from conftest import Person, advance, count, good_result, joined_person, web_session
from lobbytalks.actions import ACTIONS
from test_mcp import McpClient, _walk, business_error, tool_payload

MODERN = "2025-06-18"  # literals, not mcp's constants: the tests pin the versions MCP names
LEGACY = "2025-03-26"
REF = "#/components/schemas/"
# Members a successful answer may leave out; the scenario below must produce each of them.
OPTIONAL_MEMBERS = {
    "claim_task": {"context", "replayed"},
    "fail_task": {"replayed"},
    "submit_result": {"replayed", "memoryNotice", "provenance"},
    "get_context": {"question"},
}


def listed(mcp: McpClient, version: str | None) -> list[dict[str, Any]]:
    r = mcp.rpc("tools/list", **{"MCP-Protocol-Version": version})
    assert r.status_code == 200, r.get_json()
    return r.get_json()["result"]["tools"]


def output_schemas(mcp: McpClient) -> dict[str, dict[str, Any]]:
    return {t["name"]: t["outputSchema"] for t in listed(mcp, MODERN)}


def resolved(schema: Any, components: dict[str, Any]) -> Any:
    """An OpenAPI component with every ``$ref`` replaced by what it names."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            target = resolved(components[schema["$ref"].removeprefix(REF)], components)
            return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return {k: resolved(v, components) for k, v in schema.items()}
    if isinstance(schema, list):
        return [resolved(v, components) for v in schema]
    return schema


@pytest.fixture
def mcp(app) -> McpClient:
    return McpClient(app, Person(app).register().new_agent().token)


# --- negotiation ---------------------------------------------------------------------

@pytest.mark.parametrize("header, declared", [
    (None, False),          # no header: a stateless server assumes 2025-03-26
    (LEGACY, False),
    (MODERN, True),
])
def test_output_schema_is_negotiated_by_version(mcp, header, declared):
    tools = listed(mcp, header)
    assert [t["name"] for t in tools] == list(ACTIONS)
    assert all(("outputSchema" in t) is declared for t in tools)
    # Apart from outputSchema, every version gets the same list.
    assert without_output(tools) == without_output(listed(mcp, MODERN))


def without_output(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in t.items() if k != "outputSchema"} for t in tools]


def test_a_real_server_negotiates_by_the_header(live_server):
    """The header reaches the protocol through waitress as it does through the test client."""
    session = web_session(live_server)
    token = session.post(live_server.url + "/api/external/manage", json={
        "action": "register", "name": "版本虾", "client": "custom",
        "perspective": "先给结论。"}).json()["token"]
    declared = {}
    for header in (None, LEGACY, MODERN):
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
        if header:
            headers["MCP-Protocol-Version"] = header
        r = requests.post(live_server.url + "/api/external/mcp", headers=headers, timeout=10,
                          json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert r.status_code == 200, r.text
        declared[header] = ["outputSchema" in t for t in r.json()["result"]["tools"]]
    assert declared == {None: [False] * 9, LEGACY: [False] * 9, MODERN: [True] * 9}


def test_an_unsupported_version_gets_no_tool_list(mcp):
    r = mcp.rpc("tools/list", **{"MCP-Protocol-Version": "2025-11-25"})
    assert r.status_code == 400
    assert r.get_json()["error"]["data"] == {"code": "unsupported_protocol", "status": 400}


# --- the schemas ---------------------------------------------------------------------

def test_output_schemas_are_self_contained_objects(mcp):
    for name, schema in output_schemas(mcp).items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object", name
        assert not any("$ref" in node or "$defs" in node for node in _walk(schema)), name
        assert set(schema["required"]) <= set(schema["properties"]), name


def test_output_schemas_are_the_openapi_success_answers(mcp, client):
    """One source: each outputSchema is the success response the served OpenAPI document
    gives for the same action, with its references resolved."""
    doc = client.get("/docs/external-agents-openapi.json").get_json()
    components = doc["components"]["schemas"]
    success = {ref["$ref"].removeprefix(REF) for ref in components["ExternalResponse"]["anyOf"]}
    for name, schema in output_schemas(mcp).items():
        component = ACTIONS[name].output.__name__
        assert component in success, name
        assert schema == resolved(components[component], components), name


def test_output_schemas_carry_the_optional_members(mcp):
    schemas = output_schemas(mcp)
    for name, members in OPTIONAL_MEMBERS.items():
        assert members <= set(schemas[name]["properties"]), name
        assert not members & set(schemas[name].get("required", [])), name
    assert schemas["submit_result"]["properties"]["provenance"]["const"] == "external-self-reported"
    task = schemas["claim_task"]["properties"]["task"]["properties"]
    assert {"questionVersion", "privateContextIncluded"} <= set(task)   # the 0.7.3 fields
    message = schemas["get_context"]["properties"]["messages"]["items"]["properties"]
    assert {"questionVersion", "sharePublic", "delivery", "provenance"} <= set(message)


# --- every successful answer validates -----------------------------------------------

class Recorder:
    """Calls tools at 2025-06-18 and checks each success against its published schema."""

    def __init__(self, mcp: McpClient):
        self.mcp = mcp
        self.schemas = output_schemas(mcp)
        self.seen: dict[str, set[str]] = {name: set() for name in ACTIONS}

    def __call__(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = self.mcp.call(name, arguments, **{"MCP-Protocol-Version": MODERN})
        assert result["isError"] is False, result
        payload = tool_payload(result)
        jsonschema.Draft202012Validator(
            self.schemas[name], format_checker=jsonschema.FormatChecker()).validate(payload)
        assert undeclared(payload, self.schemas[name]) == [], name
        self.seen[name] |= set(payload)
        return payload


def undeclared(value: Any, schema: dict[str, Any], where: str = "") -> list[str]:
    """Members of ``value`` that ``schema`` does not name, wherever it names members:
    the schemas stay open for later additions, so validation alone would not notice."""
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [path for i, item in enumerate(value)
                for path in undeclared(item, schema["items"], f"{where}[{i}]")]
    if not isinstance(value, dict) or "properties" not in schema:
        return []
    missing = []
    for key, member in value.items():
        sub = schema["properties"].get(key)
        missing += [f"{where}.{key}"] if sub is None else undeclared(member, sub, f"{where}.{key}")
    return missing


def test_every_successful_answer_validates_against_its_output_schema(app, clock_file, db):
    asker = joined_person(app)
    topic = asker.ask(description="生产库不能停机。", privateContext="库大约 40 GB，在 NFS 上。")
    owner = Person(app).register()
    call = Recorder(McpClient(app, owner.new_agent().token))

    call("list_communities")
    call("join_community", community="lobby")
    call("list_communities", scope="joined")
    call("list_topics")
    call("list_topics", community="lobby")
    assert call("get_context", topic=topic)["allowed"] is False
    request_id = str(uuid.uuid4())
    task_id = call("claim_task", topic=topic, requestId=request_id)["task"]["id"]
    assert call("claim_task", topic=topic, requestId=request_id)["replayed"] is True
    call("heartbeat", taskId=task_id)
    submitted = call("submit_result", taskId=task_id,
                     **good_result(conditions=["数据库在本地磁盘上"]))
    assert submitted["memoryNotice"] and submitted["provenance"] == "external-self-reported"
    assert call("submit_result", taskId=task_id, **good_result(conditions=["数据库在本地磁盘上"])
                )["replayed"] is True
    assert call("get_task_status", taskId=task_id)["task"]["state"] == "done"

    # The memory, confirmed on the web, and the answer, shared, show up in the next context.
    memory = db.value("SELECT id FROM memories WHERE message_id = :message_id",
                        {"message_id": submitted["messageId"]})
    assert owner.web_post("memory_confirm", memory=memory).status_code == 200
    assert owner.web_post("share", message=submitted["messageId"], sharePublic=True).status_code == 200
    full = call("get_context", topic=topic)
    assert full["allowed"] is True and full["memories"]
    assert full["question"]["privateContext"] == "库大约 40 GB，在 NFS 上。"
    [message] = full["messages"]
    assert message["sharePublic"] is True and message["delivery"]["conditions"] == ["数据库在本地磁盘上"]

    # A follow-up reply: the claim freezes a context with the private part and the message.
    reply = call("claim_task", topic=topic, requestId=str(uuid.uuid4()),
                 replyTo=submitted["messageId"])
    assert reply["task"]["replyTo"] == submitted["messageId"]
    assert reply["task"]["privateContextIncluded"] is True
    assert reply["context"]["question"]["privateContextIncluded"] is True
    failed = call("fail_task", taskId=reply["task"]["id"], error="来源打不开")
    assert call("fail_task", taskId=reply["task"]["id"], error="来源打不开")["replayed"] is True
    assert call("get_task_status", taskId=reply["task"]["id"])["task"]["error"] == "来源打不开"

    # A lease left to run out is settled as expired by the status query.
    lapsing = call("claim_task", topic=asker.ask("第二个问题：WAL 要注意什么？"),
                   requestId=str(uuid.uuid4()))["task"]["id"]
    advance(clock_file, 31 * 60)
    assert call("get_task_status", taskId=lapsing)["task"]["state"] == "expired"

    assert {name for name, keys in call.seen.items() if keys} == set(ACTIONS)
    for name, members in OPTIONAL_MEMBERS.items():
        assert members <= call.seen[name], (name, members - call.seen[name])
    assert failed["task"]["state"] == "failed"
    states = dict(db.all("SELECT id, state FROM tasks"))
    assert states == {task_id: "done", reply["task"]["id"]: "failed", lapsing: "expired"}
    assert count(db, "messages", "topic_id = :topic_id", {"topic_id": topic}) == 1
    assert db.value("SELECT state FROM memories WHERE id = :id", {"id": memory}) == "active"


def test_a_missing_member_would_be_caught(mcp):
    """The schemas are not vacuous: a success answer without a required member, or with a
    member of the wrong type, fails them."""
    schemas = output_schemas(mcp)
    mcp.call("join_community", {"community": "lobby"})
    page = tool_payload(mcp.call("list_communities", {}, **{"MCP-Protocol-Version": MODERN}))
    validator = jsonschema.Draft202012Validator(schemas["list_communities"])
    assert validator.is_valid(page)
    broken = copy.deepcopy(page)
    del broken["communities"][0]["memberCount"]
    assert not validator.is_valid(broken)
    assert not validator.is_valid({**page, "hasMore": "no"})


# --- failures are not described by it --------------------------------------------------

def test_failed_calls_keep_their_error_body(app, db):
    asker = joined_person(app)
    topic = asker.ask()
    mcp = McpClient(app, Person(app).register().new_agent().token)
    schemas = output_schemas(mcp)
    modern = {"MCP-Protocol-Version": MODERN}
    for name, arguments, status, code in [
        ("claim_task", {"topic": topic, "requestId": str(uuid.uuid4())}, 403, "forbidden"),
        ("get_context", {"topic": "t_missing"}, 404, "not_found"),
        ("join_community", {"community": "lobby", "x": 1}, 400, "invalid_request"),
        ("submit_result", {"taskId": "t1", **good_result(conclusion="太短")}, 400, "invalid_request"),
        ("submit_result", {"taskId": "t1", **good_result()}, 404, "not_found"),
    ]:
        payload = business_error(mcp.call(name, arguments, **modern), status, code)
        # The error object is not a success answer; clients skip the check when isError.
        assert not jsonschema.Draft202012Validator(schemas[name]).is_valid(payload), name
    assert count(db, "tasks") == 0 and count(db, "messages") == 0
    assert count(db, "memberships", "community_id = 'lobby'") == 1   # only the asker


def test_the_served_docs_describe_the_output_schema(client):
    text = " ".join(client.get("/docs/external-agents-v1.md").get_data(as_text=True).split())
    for phrase in (f"以 `MCP-Protocol-Version: {MODERN}` 请求 `tools/list` 时，每个工具另带 `outputSchema`",
                   f"此时按 `{LEGACY}` 处理",
                   f"Asked for with `MCP-Protocol-Version: {MODERN}`, each tool also carries an `outputSchema`",
                   f"counts as `{LEGACY}`"):
        assert phrase in text
    assert "不提供 `outputSchema`" not in text and "There is no `outputSchema`" not in text
