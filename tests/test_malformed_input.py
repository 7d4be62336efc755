"""Bad input gets the spec's 400, never a 5xx, and nothing of it reaches the database.

Each case here was a 503 with a traceback, or Flask's HTML 500, before: non-string actions,
lone surrogates in any string field, MCP ids the encoder cannot write, ``page=²``.
"""
from __future__ import annotations

import copy
import json
from typing import Any, Iterator

import pytest
import requests

from conftest import LiveServer, count, web_session
from helpers import assert_external_error, assert_web_error
from lobbytalks.errors import CODES
from valid_bodies import AGENT_BODIES, COMMUNITIES_BODIES, MANAGE_BODIES, WEB_BODIES

ACCEPT = "application/json, text/event-stream"
JSON = {"Content-Type": "application/json"}
TABLES = ("users", "sessions", "communities", "memberships", "topics", "profiles", "tokens",
          "tasks", "messages")


@pytest.fixture
def actors(asker, member):
    """The member's cookie client, its agent's token headers and this run's ids."""
    topic = asker.ask()
    agent = member.new_agent()
    task = agent.claim(topic).get_json()["task"]["id"]
    ids = {"$TOPIC": topic, "$TASK": task, "$PROFILE": agent.profile_id,
           "$TOKEN_ID": agent.token_id}
    return member, agent.headers, ids


def snapshot(db) -> dict[str, int]:
    return {table: count(db, table) for table in TABLES}


def filled(body: Any, ids: dict[str, str]) -> bytes:
    """The body as a hostile client sends it: ASCII JSON, a lone surrogate as ``\\ud800``."""
    text = json.dumps(body, ensure_ascii=True)
    for placeholder, value in ids.items():
        text = text.replace(placeholder, value)
    return text.encode()


def string_paths(node: Any, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(node, str):
        yield path
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from string_paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from string_paths(value, (*path, index))


def broken(body: dict, path: tuple) -> dict:
    changed = copy.deepcopy(body)
    target = changed
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] += "\ud800"
    return changed


def mcp_call(name: str, arguments: dict, ident: Any = 1) -> dict:
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


SURFACE_BODIES = [("/api/external", AGENT_BODIES), ("/api/external/manage", MANAGE_BODIES),
                  ("/api/communities", COMMUNITIES_BODIES), ("/api/community", WEB_BODIES)]
# (surface, a valid body): each of its string fields, at any depth, gets a lone surrogate.
SURROGATE_CASES = [
    (path, {**body, "action": action}) for path, bodies in SURFACE_BODIES
    for action, body in bodies.items()
] + [("/api/external/mcp", mcp_call(action, body)) for action, body in AGENT_BODIES.items()]


def post(actors, path: str, body: Any, raw: bytes | None = None):
    person, token, ids = actors
    headers = {**JSON, "Accept": ACCEPT}
    if path in ("/api/external", "/api/external/mcp"):
        headers.update(token)
    return person.http.post(path, data=filled(body, ids) if raw is None else raw,
                            headers=headers)


def assert_refused(response, path: str, code: str, rpc_code: int | None = None) -> None:
    """The spec's 400 with its machine code in the surface's own envelope."""
    if path == "/api/external/mcp":
        body = response.get_json()
        assert response.status_code == 400, body
        assert body["id"] is None, body
        assert body["error"]["code"] == rpc_code, body
        return
    if path.startswith("/api/external"):
        assert_external_error(response, 400, code)
    else:
        assert_web_error(response, 400)


@pytest.mark.parametrize("path,body", SURROGATE_CASES,
                         ids=[f"{p}:{b.get('action') or b['params']['name']}"
                              for p, b in SURROGATE_CASES])
def test_a_lone_surrogate_in_any_string_field_is_invalid_json(actors, db, path, body):
    fields = [field for field in string_paths(body) if field != ("jsonrpc",)]
    assert fields
    for field in fields:
        before = snapshot(db)
        r = post(actors, path, broken(body, field))
        assert_refused(r, path, "invalid_json", rpc_code=-32000)
        if not path.startswith("/api/external"):
            assert r.get_json()["error"] == CODES["invalid_json"][1], field
        assert snapshot(db) == before, field


def test_the_unbroken_bodies_are_accepted(actors, db):
    """The surrogate table proves something only if its bodies are otherwise good."""
    for action in ("join_community", "fail_task"):
        assert post(actors, "/api/external", {**AGENT_BODIES[action], "action": action}
                    ).status_code == 200, action
    assert post(actors, "/api/communities", {**COMMUNITIES_BODIES["create"],
                                             "action": "create"}).status_code == 200
    assert post(actors, "/api/external/manage", {**MANAGE_BODIES["register"],
                                                 "action": "register"}).status_code == 200
    assert post(actors, "/api/community", {**WEB_BODIES["topic"], "action": "topic"}
                ).status_code == 200
    assert count(db, "communities", "name = :name", {"name": COMMUNITIES_BODIES["create"]["name"]}) == 1


@pytest.mark.parametrize("action", [{}, [], {"create": 1}, 5, None])
@pytest.mark.parametrize("path", ["/api/external", "/api/external/manage", "/api/communities",
                                  "/api/community"])
def test_an_action_that_is_not_a_string_is_unknown(actors, db, path, action):
    before = snapshot(db)
    r = post(actors, path, {"action": action, "community": "lobby"})
    if path.startswith("/api/external"):
        assert_external_error(r, 400, "unknown_action")
    else:
        assert_web_error(r, 400)
    assert snapshot(db) == before


@pytest.mark.parametrize("body", [[], [{"action": "join"}], "join", None])
@pytest.mark.parametrize("path", ["/api/external", "/api/external/manage", "/api/communities",
                                  "/api/community"])
def test_a_body_that_is_not_an_object_is_invalid_request(actors, db, path, body):
    before = snapshot(db)
    r = post(actors, path, body)
    if path.startswith("/api/external"):
        assert_external_error(r, 400, "invalid_request")
    else:
        assert_web_error(r, 400)
    assert snapshot(db) == before


@pytest.mark.parametrize("raw", [b"[" * 1000 + b"]" * 1000,
                                 b'{"action":' * 1000 + b"1" + b"}" * 1000,
                                 b"[" * 33 + b"]" * 33])
@pytest.mark.parametrize("path", ["/api/external", "/api/external/manage", "/api/communities",
                                  "/api/community", "/api/external/mcp"])
def test_deep_nesting_is_invalid_json_with_credentials_too(actors, db, path, raw):
    if path == "/api/communities" and len(raw) > 4096:
        raw = b"[" * 1000 + b"]" * 1000  # the 4 KiB surface: the deepest that fits
    before = snapshot(db)
    assert_refused(post(actors, path, None, raw=raw), path, "invalid_json", rpc_code=-32000)
    assert snapshot(db) == before


def test_json_nested_to_the_limit_is_still_read(actors):
    """32 levels pass the parser (and then fail validation like any other wrong value)."""
    r = post(actors, "/api/external", None, raw=b'{"action": "join_community", "community": '
             + b"[" * 31 + b"]" * 31 + b"}")
    assert_external_error(r, 400, "invalid_request")


def test_many_brackets_without_depth_are_still_read(actors):
    """Brackets in strings and side by side count towards no depth: the body is read and
    validated (refused for its unknown field, not as invalid JSON)."""
    r = post(actors, "/api/external", None, raw=b'{"action": "join_community", "community": "'
             + b"[{" * 8 + b'", "x": [' + b"[], " * 40 + b"[]]}")
    assert "x:" in assert_external_error(r, 400, "invalid_request")["error"]


# --- MCP ids -----------------------------------------------------------------------------

@pytest.mark.parametrize("ident", [2**64, -(2**63) - 1, 10**30])
def test_an_mcp_id_the_encoder_cannot_write_is_an_invalid_request(actors, ident):
    r = post(actors, "/api/external/mcp", {"jsonrpc": "2.0", "id": ident, "method": "ping"})
    body = r.get_json()
    assert r.status_code == 400 and body["id"] is None, body
    assert body["error"]["code"] == -32600, body


@pytest.mark.parametrize("ident", [2**64 - 1, -(2**63), 0, "", "😀"])
def test_an_mcp_id_within_range_is_echoed(actors, ident):
    r = post(actors, "/api/external/mcp", {"jsonrpc": "2.0", "id": ident, "method": "ping"})
    assert r.status_code == 200 and r.get_json() == {"jsonrpc": "2.0", "id": ident, "result": {}}


@pytest.mark.parametrize("ident", ["\ud800", "ok\udfff"])
def test_a_lone_surrogate_mcp_id_is_a_parse_error(actors, ident):
    r = post(actors, "/api/external/mcp", {"jsonrpc": "2.0", "id": ident, "method": "nope"})
    assert_refused(r, "/api/external/mcp", "invalid_json", rpc_code=-32000)


def test_a_huge_mcp_id_without_a_token_still_gets_a_json_rpc_answer(client):
    r = client.post("/api/external/mcp", data=b'{"jsonrpc":"2.0","id":18446744073709551616,'
                    b'"method":"ping"}', headers={**JSON, "Accept": ACCEPT})
    body = r.get_json()
    assert r.status_code == 401 and body["id"] is None, body
    assert body["error"]["data"]["code"] == "unauthorized"


# --- page numbers --------------------------------------------------------------------------

# A page number is plain digits everywhere: "+2", " 2", "2.0" and "1e0" are not the integer
# the contract's query parameter asks for, however a lax parser would read them.
ODD_PAGES = ["²", "٣", "9" * 5000, "1" * 7, "-1", "0", "+2", " 2", "2.0", "1e0"]


@pytest.mark.parametrize("path, page", [
    (path, page) for path in ("/communities", "/c/lobby", "/tasks") for page in ODD_PAGES])
def test_pages_answer_an_odd_page_number_with_a_400_page(actors, path, page):
    person, _, _ = actors
    r = person.http.get(path, query_string={"page": page})
    assert r.status_code == 400 and r.mimetype == "text/html"
    assert 'class="site-header"' in r.get_data(as_text=True)  # the site's own page, not Flask's
    assert person.http.get(path, query_string={"page": "1"}).status_code == 200


@pytest.mark.parametrize("page", ODD_PAGES)
@pytest.mark.parametrize("url", ["/api/communities?page=", "/api/community?community=lobby&page=",
                                 "/api/external/manage?action=tasks&page="])
def test_web_and_manage_apis_refuse_an_odd_page_number(actors, url, page):
    person, _, _ = actors
    r = person.http.get(url + requests.utils.quote(page))
    if url.startswith("/api/external"):
        assert_external_error(r, 400, "invalid_request")
    else:
        assert_web_error(r, 400)


@pytest.mark.parametrize("page", ODD_PAGES)
def test_external_api_refuses_an_odd_page_number(actors, page):
    person, token, _ = actors
    r = person.http.get("/api/external", query_string={"action": "list_communities",
                                                       "page": page}, headers=token)
    assert_external_error(r, 400, "invalid_request")


@pytest.mark.parametrize("url, agent", [
    ("/api/external?action=get_context&topic=$TOPIC&topic=t_other", True),
    ("/api/external?action=get_context&action=list_topics&topic=$TOPIC", True),
    ("/api/external/manage?action=tasks&page=1&page=2", False),
    ("/api/community?topic=$TOPIC&topic=t_other", False),
    ("/api/communities?page=1&page=1", False),
    ("/api/communities?id=lobby&id=t_other", False),
])
def test_a_query_parameter_given_twice_is_refused_not_guessed(actors, url, agent):
    """Which of two values is meant is not the server's to guess (and a proxy or a cache
    in front may have guessed the other one)."""
    person, token, ids = actors
    r = person.http.get(url.replace("$TOPIC", ids["$TOPIC"]), headers=token if agent else {})
    if url.startswith("/api/external"):
        assert_external_error(r, 400, "invalid_request")
    else:
        assert_web_error(r, 400)
    name = url.split("&")[-1].split("=")[0] if "action=list" not in url else "action"
    assert r.get_json()["error"] == f"{name}: 只能出现一次"


# --- the same through a real server ----------------------------------------------------

def test_malformed_input_through_a_real_server(tmp_path):
    """Under waitress these showed as tracebacks in the server's log; now each is a 400."""
    server = LiveServer(tmp_path / "live")
    try:
        web = web_session(server)
        assert web.post(server.url + "/api/communities",
                        json={"action": "join", "community": "lobby"}).status_code == 200
        issued = web.post(server.url + "/api/external/manage", json={
            "action": "register", "name": "查证虾", "perspective": "先给结论", "client": "codex"})
        token = {"Authorization": f"Bearer {issued.json()['token']}"}
        mcp = {**token, **JSON, "Accept": ACCEPT}
        deep = b"[" * 1000 + b"]" * 1000

        r = requests.post(server.url + "/api/external", data=deep, headers={**token, **JSON})
        assert (r.status_code, r.json()["code"]) == (400, "invalid_json")
        r = web.post(server.url + "/api/community", data=deep, headers=JSON)
        assert r.status_code == 400 and set(r.json()) == {"error", "code"}
        r = web.post(server.url + "/api/external/manage", json={"action": {}})
        assert (r.status_code, r.json()["code"]) == (400, "unknown_action")
        r = web.post(server.url + "/api/communities", headers=JSON,
                     data=b'{"action": "create", "name": "\\ud800"}')
        assert r.status_code == 400
        r = requests.post(server.url + "/api/external/mcp", headers=mcp,
                          data=b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}')
        assert r.status_code == 400 and r.json()["id"] is None
        assert r.json()["error"]["code"] == -32600
        r = requests.post(server.url + "/api/external/mcp", headers=mcp,
                          data=b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}')
        assert r.status_code == 400 and r.json()["error"]["code"] == -32000
        for path in ("/communities?page=%C2%B2", "/c/lobby?page=" + "9" * 5000,
                     "/tasks?page=%C2%B2"):
            assert web.get(server.url + path).status_code == 400, path
        names = [c["name"] for c in web.get(server.url + "/api/communities").json()["communities"]]
        assert "\ufffd" not in "".join(names)
    finally:
        log = server.stop()
    assert "Traceback" not in log and "unhandled" not in log, log


def _strict_models() -> list[type]:
    import lobbytalks.models.external  # noqa: F401  (every request model is defined on import)
    import lobbytalks.models.web  # noqa: F401
    from lobbytalks.models.common import Strict
    found, todo = [], [Strict]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


OPTIONAL_FIELDS = [(model, name) for model in _strict_models()
                   for name, field in model.model_fields.items() if not field.is_required()]


def test_the_optional_field_table_is_not_empty():
    names = {(model.__name__, name) for model, name in OPTIONAL_FIELDS}
    assert {("ClaimTask", "replyTo"), ("SubmitResult", "conditions"),
            ("WebTopicCreate", "originalTitle")} <= names


@pytest.mark.parametrize("model,name", OPTIONAL_FIELDS,
                         ids=[f"{m.__name__}.{n}" for m, n in OPTIONAL_FIELDS])
def test_null_for_a_field_one_may_omit_is_refused_at_its_name(model, name):
    """The published schemas show such a field with its own type only, so null is as wrong
    as a number would be (a contract fuzzer sends exactly that)."""
    from pydantic import ValidationError
    alias = model.model_fields[name].alias or name
    with pytest.raises(ValidationError) as refused:
        model.model_validate({alias: None}, strict=True)
    assert any(error["loc"] == (alias,) and "null" in error["msg"]
               for error in refused.value.errors()), refused.value.errors()


NULL_CASES = [
    ("/api/external", {**AGENT_BODIES["claim_task"], "action": "claim_task", "replyTo": None},
     "replyTo", "invalid_request"),
    ("/api/external", {**AGENT_BODIES["submit_result"], "action": "submit_result",
                       "conditions": None}, "conditions", "invalid_request"),
    ("/api/external", {**AGENT_BODIES["submit_result"], "action": "submit_result",
                       "toolRuns": None}, "toolRuns", "invalid_result"),
    ("/api/external/manage", {**MANAGE_BODIES["register"], "action": "register", "role": None},
     "role", "invalid_request"),
    ("/api/communities", {**COMMUNITIES_BODIES["create"], "action": "create",
                          "description": None}, "description", None),
    ("/api/community", {**WEB_BODIES["topic"], "action": "topic", "originalTitle": None},
     "originalTitle", None),
]


@pytest.mark.parametrize("path,body,field,code", NULL_CASES,
                         ids=[f"{c[0]}:{c[2]}" for c in NULL_CASES])
def test_null_for_an_omittable_field_is_a_400_naming_it_and_writes_nothing(
        actors, db, path, body, field, code):
    before = snapshot(db)
    r = post(actors, path, body)
    if code:
        assert_external_error(r, 400, code)
    else:
        assert_web_error(r, 400)
    assert r.get_json()["error"].startswith(f"{field}: ")
    assert snapshot(db) == before
    # The same body without the field is accepted: null, not the rest, was the fault.
    assert post(actors, path, {k: v for k, v in body.items() if k != field}).status_code == 200


# --- what a refusal says -------------------------------------------------------------------

WORDED_REFUSALS = [  # (surface, body, the message or how it starts; its code is invalid_request
    # but for a result's shape)
    ("/api/external", {"action": "heartbeat", "taskId": 5}, "taskId: 必须是字符串"),
    ("/api/external", {"action": "claim_task", "topic": "$TOPIC", "requestId": "x"},
     "requestId: 必须是 UUID，如 123e4567-e89b-42d3-a456-426614174000"),
    ("/api/community", {"action": "share", "message": "m 1", "sharePublic": True},
     "message: 只能包含英文字母、数字和 : _ -"),
    ("/api/community", {"action": "register", "username": "new user", "password": "correct horse 1"},
     "username: 只能包含英文字母、数字和下划线"),
    ("/api/external", {"action": "submit_result", **AGENT_BODIES["submit_result"], "evidence": {}},
     "evidence: 必须是数组"),
    ("/api/external/manage", {"action": "register", "name": "查证虾", "perspective": "先给结论。",
                              "client": "vim"}, "client: 只能是 "),
    ("/api/community", {"action": "memory_switch", "profile": "$PROFILE", "enabled": "yes"},
     "enabled: 必须是布尔值"),
]


@pytest.mark.parametrize("path, body, said", WORDED_REFUSALS,
                         ids=[said.split(":")[0] for _, _, said in WORDED_REFUSALS])
def test_a_refusal_names_the_field_and_says_what_is_wrong_in_the_apis_language(
        actors, db, path, body, said):
    before = snapshot(db)
    r = post(actors, path, body)
    check = assert_web_error if path == "/api/community" else assert_external_error
    code = "invalid_result" if body["action"] == "submit_result" else "invalid_request"
    message = check(r, 400, code)["error"]
    assert message.startswith(said) if said.endswith(" ") else message == said, message
    assert "should" not in message and "Input" not in message, message
    assert snapshot(db) == before


def test_every_worded_check_formats_from_pydantics_own_context():
    """Each type in the table, raised by pydantic itself, comes out in the table's words with
    its limits filled in (a placeholder pydantic does not supply would fall back to English)."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field, ValidationError

    from lobbytalks.models.common import VALIDATION_MESSAGES, error_location

    class Every(BaseModel):
        model_config = ConfigDict(strict=True, extra="forbid")
        text: str = Field("xy", min_length=2, max_length=3, pattern=r"^x")
        items: list[int] = Field([1], min_length=1, max_length=2)
        number: int = Field(3, ge=1, le=5)
        strictly: float = Field(3.0, gt=1, lt=5)
        flag: bool = True
        kind: Literal["codex", "claude-code", "custom"] = "codex"
        inner: dict[str, int] = {}

    class Outer(BaseModel):
        model_config = ConfigDict(strict=True)
        every: Every
        needed: int

    cases = {
        "string_type": {"text": 1}, "int_type": {"number": "1"}, "bool_type": {"flag": 1},
        "float_type": {"strictly": "2"}, "list_type": {"items": "x"}, "dict_type": {"inner": []},
        "string_too_short": {"text": "x"}, "string_too_long": {"text": "xxxx"},
        "too_short": {"items": []}, "too_long": {"items": [1, 2, 3]},
        "string_pattern_mismatch": {"text": "yy"}, "greater_than_equal": {"number": 0},
        "less_than_equal": {"number": 9}, "greater_than": {"strictly": 1.0},
        "less_than": {"strictly": 5.0}, "literal_error": {"kind": "vim"},
        "extra_forbidden": {"other": 1},
    }
    expected = {
        "string_too_short": "至少需要 2 个字符", "string_too_long": "最多 3 个字符",
        "too_short": "至少 1 项", "too_long": "最多 2 项", "string_pattern_mismatch": "格式不正确，须匹配 ^x",
        "greater_than_equal": "不能小于 1", "less_than_equal": "不能大于 5",
        "greater_than": "必须大于 1.0", "less_than": "必须小于 5.0",
        "literal_error": "只能是 'codex', 'claude-code' 或 'custom'",
    }
    seen = set()
    for kind, data in cases.items():
        with pytest.raises(ValidationError) as raised:
            Outer.model_validate({"every": data, "needed": 1})
        assert raised.value.errors()[0]["type"] == kind
        loc, message = error_location(raised.value)
        assert message == expected.get(kind, VALIDATION_MESSAGES[kind]), (kind, message)
        seen.add(kind)
    for kind, data in (("missing", {"every": {}}), ("model_type", {"every": [], "needed": 1})):
        with pytest.raises(ValidationError) as raised:
            Outer.model_validate(data)
        assert error_location(raised.value)[1] == VALIDATION_MESSAGES[kind]
        seen.add(kind)
    assert seen == set(VALIDATION_MESSAGES)


def test_each_named_pattern_is_said_in_words():
    from pydantic import BaseModel, Field, ValidationError

    from lobbytalks.models.common import PATTERN_RULES, Text, error_location

    for pattern, rule in PATTERN_RULES.items():
        class Native(BaseModel):  # pydantic's own check of a pattern
            value: str = Field(pattern=pattern)

        class Checked(BaseModel):  # the one Text() makes
            value: Text(1, 64, pattern=pattern)

        for model in (Native, Checked):
            with pytest.raises(ValidationError) as raised:
                model.model_validate({"value": "a b!"})
            assert error_location(raised.value) == (("value",), rule)


@pytest.mark.parametrize("url, error", [
    # an unknown parameter beside a community's id is as unknown as beside the list's page
    ("/api/communities?id=lobby&unknown=1", "unknown: 不支持的字段"),
    # a long number is a number too large, not "no integer" (REST now says what MCP says)
    ("/api/communities?page=1000000", "page: 不能大于 10000"),
    ("/api/external/manage?action=tasks&page=" + "9" * 30, "page: 不能大于 10000"),
])
def test_query_parameters_are_checked_alike_everywhere(actors, url, error):
    person, _, _ = actors
    r = person.http.get(url)
    assert r.status_code == 400 and r.get_json()["error"] == error, r.get_json()


def test_an_unknown_field_is_named_in_forty_characters_whatever_its_length(actors):
    """A 20,000-character key made a 20 KB error repeating it."""
    person, token, _ = actors
    r = person.http.post("/api/external", json={"action": "join_community",
                                                "community": "lobby", "k" * 20000: 1},
                         headers=token)
    assert_external_error(r, 400, "invalid_request")
    assert r.get_json()["error"] == "k" * 40 + "…: 不支持的字段"


# --- ids that name nothing ----------------------------------------------------------------

@pytest.mark.parametrize("where, request_args", [
    ("get_context", {"query_string": {"action": "get_context", "topic": "t_\x00"}}),
    ("get_task_status", {"query_string": {"action": "get_task_status", "taskId": "\x00"}}),
    ("heartbeat", {"method": "POST", "json": {"action": "heartbeat", "taskId": "task\x00"}}),
    ("web topic", {"query_string": {"topic": "\x00"}, "path": "/api/community"}),
    ("manage rotate", {"method": "POST", "json": {"action": "rotate", "profile": "agt\x00"},
                       "path": "/api/external/manage"}),
])
def test_an_id_holding_nul_names_nothing_as_any_unknown_id(actors, where, request_args):
    """The contract's ids are strings of 1-64 characters: one holding NUL was refused 400,
    where an id that names nothing is 404 (and no id the server makes holds one)."""
    person, token, _ = actors
    args = dict(request_args)
    path = args.pop("path", "/api/external")
    method = args.pop("method", "GET")
    headers = token if path == "/api/external" else {}
    r = person.http.open(path, method=method, headers=headers, **args)
    assert r.status_code == 404 and r.get_json()["code"] == "not_found", (where, r.get_json())
    # a community's impossible id stays 400, as the protocol has it for communities
    refused = person.http.get("/api/communities", query_string={"id": "\x00"})
    assert refused.status_code == 400
