"""The served OpenAPI document: valid 3.1, the 1.0.2 contract's structure, and true.

"True" means real responses of every surface it describes validate against its schemas.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from openapi_spec_validator import OpenAPIV31SpecValidator

from conftest import Person, good_result, joined_person
from fixtures.contract_facts import facts
from lobbytalks.actions import ACTIONS
from lobbytalks.errors import CODES
from lobbytalks.models.responses import TOPIC_EXTENSIONS

FIXTURE = Path(__file__).parent / "fixtures" / "contract_1_0_2.json"
# The specification lives beside the repository (../shared), both here and in CI.
CONTRACT = Path(__file__).resolve().parents[2] / "shared" / "spec" / "001_a7812d2541cbb4fd.txt"

# Facts the served document adds to the contract, each a rule the server really enforces.
# Anything else extra (an enum, a maximum, a required field) would be an incompatible change.
TIGHTER_KEYS = {"pattern", "default", "minLength"}  # ids' formats, defaults, "not empty"
EXTRA_KEYS_AT = {("WebTopicCreate", "island"): {"maxLength"}}  # category ids are ≤64 chars
EXTRA_LOCATIONS = {("CommunityJoin", "communityId"), ("CommunityLeave", "communityId")}  # alias
# Extension actions a request union may gain; the contract's own members must all stay.
EXTRA_UNION_MEMBERS = {("ManageRequest", ""): {"UpdateAgent", "ArchiveAgent", "RevokeAll"},
                       ("CommunityRequest", ""): {"CommunityUpdate"}}
# Optional extension fields of a response (everything inside them is new, not changed).
EXTENSION_FIELDS = {("Connections", "archivedAgents"), ("WebTopicCreate", "requestId"),
                    ("WebAuth", "checkPassword"),
                    ("CommunityCreate", "requestId"), ("WebError", "code"),
                    *(("Connections", f"agents[].{field}")
                      for field in ("client", "memoryEnabled", "created"))}


def _is_extension(name: str, where: str) -> bool:
    return (name, where) in EXTRA_LOCATIONS or any(
        name == model and (where == field or where.startswith((field + "[", field + ".")))
        for model, field in EXTENSION_FIELDS)


def is_extension(where: str) -> bool:
    """list_topics' documented extensions (additive fields, never changed spec fields)."""
    return any(part.removesuffix("[]") in TOPIC_EXTENSIONS for part in where.split("."))


@pytest.fixture
def doc(client) -> dict[str, Any]:
    r = client.get("/docs/external-agents-openapi.json")
    assert r.status_code == 200 and r.mimetype == "application/json"
    return r.get_json()


def test_served_document_is_valid_openapi_3_1(doc):
    assert doc["openapi"] == "3.1.0"
    OpenAPIV31SpecValidator(doc).validate()


def test_document_names_this_instance(open_client, settings):
    doc = open_client.get("/docs/external-agents-openapi.json", base_url="https://qa.example.org").get_json()
    assert doc["servers"][0]["url"] == "https://qa.example.org"
    assert doc["externalDocs"]["url"] == "https://qa.example.org/docs/external-agents-v1.md"


def test_each_host_gets_the_document_built_for_it_without_building_it_again(open_client, app,
                                                                             monkeypatch):
    """Without a public URL the address is the request's Host. The document is built once
    and the address filled in: a stranger sending a new Host each time must not make the
    server build it again (tens of milliseconds each)."""
    from lobbytalks import openapi
    from lobbytalks.blueprints import docs
    built = []
    original = openapi.document
    monkeypatch.setattr(openapi, "document", lambda *a: built.append(a) or original(*a))
    docs._openapi_template.cache_clear()
    settings = app.config["LOBBYTALKS"].settings
    for host in ("qa.example.org", "other.example:8443", "[::1]:8000", "127.0.0.1:18000"):
        r = open_client.get("/docs/external-agents-openapi.json",
                       environ_overrides={"HTTP_HOST": host})
        assert r.status_code == 200
        # exactly what building it for this address gives
        assert r.get_json() == json.loads(json.dumps(original(f"http://{host}", settings)))
    assert len(built) == 1


# Answers of extension actions, beside the contract's own (path, method, status) answer.
EXTRA_RESPONSES = {("/api/communities", "post", "200"): {"CommunityUpdated"}}


def test_paths_and_operations_match_the_contract(doc):
    contract = json.loads(FIXTURE.read_text("utf-8"))
    served = facts(doc)["paths"]
    for (path, method, status), extra in EXTRA_RESPONSES.items():
        answers = served[path][method]["responses"][status]
        assert extra <= set(answers), (path, answers)
        served[path][method]["responses"][status] = sorted(set(answers) - extra)
    assert served == contract["paths"]


def test_schemas_match_the_contract(doc):
    contract = json.loads(FIXTURE.read_text("utf-8"))["schemas"]
    ours = facts(doc)["schemas"]
    problems = []
    for name, locations in contract.items():
        if name not in ours:
            problems.append(f"missing schema {name}")
            continue
        for where, expected in locations.items():
            got = ours[name].get(where)
            if got is None:
                problems.append(f"{name}.{where}: missing")
                continue
            for key, value in expected.items():
                served = got.get(key)
                if key == "union" and served is not None:
                    served = sorted(set(served) - EXTRA_UNION_MEMBERS.get((name, where), set()))
                if served != value:
                    problems.append(f"{name}.{where}.{key}: contract {value!r}, served {got.get(key)!r}")
            allowed = TIGHTER_KEYS | EXTRA_KEYS_AT.get((name, where), set())
            extra = set(got) - set(expected) - allowed
            if extra:
                problems.append(f"{name}.{where}: extra facts {sorted(extra)}")
        for where in set(ours[name]) - set(locations):
            if not _is_extension(name, where) and not is_extension(where):
                problems.append(f"{name}.{where}: not in the contract")
    assert problems == []


@pytest.mark.skipif(not CONTRACT.exists(), reason="the specification folder is not here")
def test_fixture_is_the_contracts_structure():
    assert facts(json.loads(CONTRACT.read_text("utf-8"))) == json.loads(FIXTURE.read_text("utf-8"))


def test_generated_from_the_action_table_and_codes(doc):
    schemas = doc["components"]["schemas"]
    assert [ref["$ref"].rsplit("/", 1)[1] for ref in schemas["ExternalRequest"]["oneOf"]] == list(ACTIONS)
    get_action = doc["paths"]["/api/external"]["get"]["parameters"][0]
    assert get_action["schema"]["enum"] == [a.name for a in ACTIONS.values() if a.method == "GET"]
    assert doc["paths"]["/api/external/mcp"]["post"]["x-mcp-tools"] == list(ACTIONS)
    assert schemas["ExternalError"]["properties"]["code"]["enum"] == list(CODES)
    for action in ACTIONS.values():
        schema = schemas[action.name]
        assert schema["required"][0] == "action"
        assert set(schema["properties"]) - {"action"} == set(action.model.model_fields) - {"action"}


# --- the document tells the truth ----------------------------------------------------

class Checker:
    def __init__(self, doc: dict[str, Any]):
        self.doc = doc

    def check(self, name: str, body: Any) -> None:
        schema = {"$ref": f"#/components/schemas/{name}", "components": self.doc["components"]}
        jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.FormatChecker()).validate(body)


def test_rest_responses_validate(app, doc):
    check = Checker(doc).check
    asker = joined_person(app)
    topic = asker.ask(description="生产库不能停机。", privateContext="库大约 40 GB。")
    owner = Person(app).register()
    agent = owner.new_agent()
    check("CommunityList", agent.get("list_communities").get_json())
    check("CommunityMutation", agent.post("join_community", community="lobby").get_json())
    check("TopicList", agent.get("list_topics").get_json())
    check("Context", agent.get("get_context", topic=topic).get_json())
    request_id = str(uuid.uuid4())
    claimed = agent.claim(topic, request_id).get_json()
    check("ClaimResponse", claimed)
    check("ClaimResponse", agent.claim(topic, request_id).get_json())
    task_id = claimed["task"]["id"]
    check("TaskResponse", agent.post("heartbeat", taskId=task_id).get_json())
    submitted = agent.post("submit_result", taskId=task_id, **good_result()).get_json()
    check("SubmitResponse", submitted)
    check("SubmitResponse", agent.post("submit_result", taskId=task_id, **good_result()).get_json())
    check("TaskResponse", agent.get("get_task_status", taskId=task_id).get_json())
    full = agent.get("get_context", topic=topic).get_json()
    assert full["allowed"] is True and full["messages"]
    check("Context", full)
    check("Context", asker.new_agent("题主虾").get("get_context", topic=topic).get_json())
    second = asker.ask("另一个问题：WAL 模式要注意什么？")
    failing = agent.claim(second).get_json()["task"]["id"]
    check("FailResponse", agent.post("fail_task", taskId=failing, error="来源打不开").get_json())
    for r in (agent.post("fail_task", taskId=failing, error="别的"), agent.get("get_context", topic="nope"),
              agent.http.get("/api/external", query_string={"action": "list_topics"})):
        check("ExternalError", r.get_json())


def test_manage_and_web_responses_validate(app, doc):
    check = Checker(doc).check
    owner = Person(app).register()
    issued = owner.manage_post("register", name="检查虾", perspective="先给结论。", client="codex")
    check("IssuedToken", issued.get_json())
    agent = owner.new_agent("第二只")
    check("Connections", owner.manage_get().get_json())
    owner.join()
    topic = owner.ask()
    agent.post("join_community", community="lobby")
    task_id = agent.claim(topic).get_json()["task"]["id"]
    check("ManagedTaskList", owner.manage_get(action="tasks").get_json())
    check("CancelledTask", owner.manage_post("cancel_task", taskId=task_id).get_json())
    check("CancelledTask", owner.manage_post("cancel_task", taskId=task_id).get_json())
    check("IssuedToken", owner.manage_post("rotate", profile=agent.profile_id).get_json())
    check("UpdatedAgent", owner.manage_post("update", profile=agent.profile_id, name="改名虾").get_json())
    check("ArchivedAgent", owner.manage_post("archive", profile=agent.profile_id).get_json())
    check("ArchivedAgent", owner.manage_post("archive", profile=agent.profile_id).get_json())
    listing = owner.manage_get().get_json()
    assert listing["archivedAgents"][0]["name"] == "改名虾"
    check("Connections", listing)
    check("ExternalError", owner.manage_post("revoke", tokenId="nope").get_json())
    check("CommunityList", owner.http.get("/api/communities").get_json())
    check("WebCommunityDetails", owner.http.get("/api/communities?id=lobby").get_json())
    check("CommunityMutation", owner.communities_post("join", community="lobby").get_json())
    check("WebError", owner.http.get("/api/communities?id=nope").get_json())
    # what the server sends beyond the contract is declared, as the Markdown doc says it
    schemas = doc["components"]["schemas"]
    assert set(schemas["WebError"]["properties"]) == {"error", "code"}
    assert {"client", "memoryEnabled", "created", "lastUsed", "archived"} <= set(
        schemas["ConnectionAgent"]["properties"])
    assert set(listing["agents"][0]) <= set(schemas["ConnectionAgent"]["properties"])


def test_mcp_structured_content_validates_against_the_action_outputs(app, doc):
    check = Checker(doc).check
    asker = joined_person(app)
    topic = asker.ask()
    token = Person(app).register().new_agent().token
    http = app.test_client()
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}

    def call(name: str, **arguments: Any) -> dict:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}}
        r = http.post("/api/external/mcp", json=body, headers=headers)
        check("JsonRpcResponse", r.get_json())
        result = r.get_json()["result"]
        assert result["isError"] is False, result
        check(ACTIONS[name].output.__name__, result["structuredContent"])
        return result["structuredContent"]

    call("list_communities")
    call("join_community", community="lobby")
    call("list_topics", community="lobby")
    call("get_context", topic=topic)
    task_id = call("claim_task", topic=topic, requestId=str(uuid.uuid4()))["task"]["id"]
    call("get_task_status", taskId=task_id)
    call("heartbeat", taskId=task_id)
    call("submit_result", taskId=task_id, **good_result())
    second = asker.ask("第二个问题：SQLite 的 VACUUM 会锁库吗？")
    call("fail_task", taskId=call("claim_task", topic=second, requestId=str(uuid.uuid4()))["task"]["id"],
         error="来源打不开")


def test_the_community_update_extension_is_described(doc):
    check = Checker(doc).check
    check("CommunityRequest", {"action": "update", "community": "c_x", "description": ""})
    check("CommunityUpdated", {"ok": True, "id": "c_x", "description": "一起读书"})
    for bad in ({"action": "update", "community": "c_x"},
                {"action": "update", "description": "x"},
                {"action": "update", "community": "c_x", "description": "x", "name": "改名"}):
        with pytest.raises(jsonschema.ValidationError):
            check("CommunityRequest", bad)


def test_manage_extensions_only_add_to_the_contracts_request_union(doc):
    contract = json.loads(FIXTURE.read_text("utf-8"))["schemas"]["ManageRequest"][""]["union"]
    served = [ref["$ref"].rsplit("/", 1)[1]
              for ref in doc["components"]["schemas"]["ManageRequest"]["oneOf"]]
    assert set(contract) <= set(served)  # nothing of §3's four is lost
    assert set(served) - set(contract) == EXTRA_UNION_MEMBERS[("ManageRequest", "")]
    check = Checker(doc).check
    check("ManageRequest", {"action": "update", "profile": "agt_x", "name": "新名字"})
    check("ManageRequest", {"action": "archive", "profile": "agt_x"})
    check("ManageRequest", {"action": "revoke_all"})
    with pytest.raises(jsonschema.ValidationError):
        check("ManageRequest", {"action": "archive", "profile": "agt_x", "name": "不收这个字段"})


def test_an_update_naming_nothing_to_change_is_refused_by_the_schema_as_by_the_server(app, doc):
    """The served schema took {"action": "update", "profile": ...} alone, which the server
    refuses (400: name or perspective, at least one)."""
    from conftest import joined_person
    check = Checker(doc).check
    check("ManageRequest", {"action": "update", "profile": "agt_x", "perspective": "先给结论"})
    with pytest.raises(jsonschema.ValidationError):
        check("ManageRequest", {"action": "update", "profile": "agt_x"})
    person = joined_person(app)
    agent = person.new_agent()
    refused = person.manage_post("update", profile=agent.profile_id)
    assert refused.status_code == 400 and refused.get_json()["code"] == "invalid_request"
