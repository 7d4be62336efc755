"""Property: no generated request makes any endpoint answer 5xx.

Hypothesis sends bodies of every JSON type (objects shaped like the real actions with
values of the wrong type, scalars, arrays, deep nesting, huge and 64-bit-edge integers,
lone surrogates, NUL, bidi controls, ``²``, 5,000-digit numbers, raw bytes) to every POST
surface, and odd query strings and path segments to every GET endpoint. The run is
derandomized and bounded, so it is the same run on every machine. Afterwards the
database must be consistent and no transaction left open.
"""
from __future__ import annotations

import copy
import inspect
import json
import re
import tempfile
import typing
import uuid
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from conftest import Person, joined_person
from valid_bodies import AGENT_BODIES, COMMUNITIES_BODIES, MANAGE_BODIES, WEB_BODIES
from lobbytalks import create_app, wiring
from lobbytalks.actions import ACTIONS
from lobbytalks.blueprints.common import merged_actions
from lobbytalks.blueprints.manage import POST_MODELS
from lobbytalks.mcp import METHODS, SUPPORTED_VERSIONS
from lobbytalks.models import external, web
from lobbytalks.settings import Settings

# What /api/community answers, as wiring mounts it (importing the modules mounts nothing).
_COMMUNITY_TABLES = [module.actions for module in wiring.COMMUNITY_ACTIONS]
POST_ACTIONS = merged_actions(_COMMUNITY_TABLES, "POST")
GET_ACTIONS = merged_actions(_COMMUNITY_TABLES, "GET")

ACCEPT = "application/json, text/event-stream"
FUZZ_BODIES = settings(max_examples=100, derandomize=True, deadline=None, database=None,
                       suppress_health_check=list(HealthCheck))
FUZZ_QUERIES = settings(FUZZ_BODIES, max_examples=30)

# Stand-ins for this run's real ids, swapped in after encoding, so that some requests get
# past "not found" into the code behind it.
PLACEHOLDERS = ("$TOPIC", "$TASK", "$PROFILE", "$TOKEN_ID")
LONE_SURROGATES = ["\ud800", "x\udfffy", "\ud83d", "\udc00\ud800"]
ODD_STRINGS = [
    "", " ", "\x00", "a\x00b", *LONE_SURROGATES, "²", "٣", "-1", "0", "1e999",
    "9" * 5000, "\u202e", "\u2028", "\u200b", "😀", "\ufeff", "'; DROP TABLE users; --",
    "<script>alert(1)</script>", "../../etc/passwd", "%00", "%ZZ", "https://127.0.0.1/",
    "https://example.org/a?token=1", "2026-10-01T00:00:00Z", "说" * 300, "lobby", *PLACEHOLDERS,
]
EDGE_INTEGERS = [2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1, 10**30]


def field_names(*models: type[BaseModel]) -> list[str]:
    names = set()
    for model in models:
        for name, info in model.model_fields.items():
            names.update(filter(None, (name, info.alias)))
        for info in model.model_fields.values():  # nested models: evidence, toolRuns
            names.update(field_names(*nested_models(info.annotation)))
    return sorted(names)


def nested_models(annotation) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in nested_models(arg)]


def models_in(module) -> list[type[BaseModel]]:
    return [m for _, m in inspect.getmembers(module, inspect.isclass)
            if issubclass(m, BaseModel) and m.__module__ == module.__name__]


FIELDS = field_names(*models_in(external), *models_in(web))
ACTION_MODELS = [action.model for action in ACTIONS.values()]
QUERY_NAMES = ["page", "action", "topic", "community", "scope", "state", "q", "status", "sort",
               "taskId", "profile", "id", "next", "lang", "communityId"]
NUMBERISH = ["²", "٣", "9" * 5000, "1" * 7, "-1", "0", "1e3", " 1", "+1", "0x10", "1.5"]
ACTION_NAMES = sorted({*ACTIONS, *POST_MODELS, *POST_ACTIONS, *GET_ACTIONS, "create", "join",
                       "leave", "agents", "tasks"})

strings = st.one_of(st.sampled_from(ODD_STRINGS), st.sampled_from(NUMBERISH),
                    st.sampled_from(LONE_SURROGATES), st.text(max_size=12),
                    st.text(st.characters(exclude_categories=()), max_size=6))
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                    st.sampled_from(EDGE_INTEGERS),
                    st.floats(allow_nan=False, allow_infinity=False), strings)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(FIELDS) | strings, inner, max_size=3), max_leaves=8)


def fields(*models: type[BaseModel]):
    """Objects with the models' own field names (nested ones too), values of any type."""
    return st.dictionaries(st.sampled_from(field_names(*models)), json_values, max_size=6)


def with_action(names, *models: type[BaseModel]):
    return st.builds(lambda action, rest: {**rest, "action": action},
                     st.sampled_from(sorted(names)) | json_values, fields(*models))


# Past 1,000 levels and past what the raised recursion limit under hypothesis allows.
depths = st.sampled_from([33, 1000, 1025, 5000, 20000]) | st.integers(20, 1500)
raw_bodies = st.one_of(
    st.binary(max_size=40),
    depths.map(lambda n: b"[" * n + b"]" * n),
    depths.map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
    st.sampled_from([b'{"action":', b"NaN", b"\xef\xbb\xbf{}", b"1" + b"0" * 400, b'"\\ud800"']),
)
odd_values = st.one_of(st.sampled_from(LONE_SURROGATES), strings, strings, json_values)


@st.composite
def one_field_changed(draw, templates: dict[str, dict]):
    action, template = draw(st.sampled_from(sorted(templates.items())))
    body = {**copy.deepcopy(template), "action": action}
    target = body
    inner = [key for key, value in body.items()
             if isinstance(value, list) and value and isinstance(value[0], dict)]
    if inner and draw(st.booleans()):
        target = body[draw(st.sampled_from(inner))][0]
    key = draw(st.sampled_from(sorted(target)) | st.sampled_from(FIELDS)) if target else "action"
    target[key] = draw(odd_values)
    return body


rpc_ids = st.one_of(st.sampled_from(EDGE_INTEGERS), st.integers(-(2**70), 2**70), strings,
                    json_values)
rpc_params = st.one_of(json_values, st.fixed_dictionaries({}, optional={
    "name": st.sampled_from(sorted(ACTIONS)) | json_values,
    "arguments": fields(*ACTION_MODELS) | json_values,
    "protocolVersion": st.sampled_from(SUPPORTED_VERSIONS) | json_values,
}))
envelope = {"jsonrpc": st.just("2.0") | json_values,
            "method": st.sampled_from([*METHODS, "notifications/initialized", "nope"])
            | json_values}
tool_calls = st.builds(lambda args, ident: {
    "jsonrpc": "2.0", "id": ident, "method": "tools/call",
    "params": {"name": args.pop("action"), "arguments": args}},
    one_field_changed(AGENT_BODIES), st.just(1) | rpc_ids)
rpc_messages = st.one_of(
    st.fixed_dictionaries({**envelope, "id": rpc_ids}, optional={"params": rpc_params}),
    st.fixed_dictionaries(envelope, optional={"params": rpc_params}))  # notifications


def bodies(changed, shaped):
    """Mostly valid bodies with one field changed, then random objects, any JSON, raw bytes."""
    encoded = st.one_of(changed, changed, changed, shaped, json_values).map(
        lambda value: json.dumps(value, ensure_ascii=True).encode())
    return st.one_of(encoded, encoded, encoded, raw_bodies)


POST_BODIES = {
    "/api/external": bodies(one_field_changed(AGENT_BODIES), with_action(ACTIONS, *ACTION_MODELS)),
    "/api/external/manage": bodies(one_field_changed(MANAGE_BODIES),
                                   with_action(POST_MODELS, *POST_MODELS.values())),
    "/api/communities": bodies(one_field_changed(COMMUNITIES_BODIES),
                               with_action(["create", "join", "leave"], web.CommunityCreate,
                                           web.CommunityMembership)),
    "/api/community": bodies(one_field_changed(WEB_BODIES),
                             with_action(POST_ACTIONS, *models_in(web))),
    "/api/external/mcp": bodies(tool_calls, rpc_messages),
}
GENERIC_BODIES = bodies(json_values, fields(*models_in(web)))


def served_endpoints() -> list[tuple[str, str]]:
    """Every (rule, method) the app serves, read from a throwaway app at collection time,
    so that an endpoint added later is fuzzed without anyone listing it here."""
    with tempfile.TemporaryDirectory() as folder:  # no password is hashed: default costs
        app = create_app(Settings(data_dir=folder, access_log=False))
        app.config["LOBBYTALKS"].db.close_thread_connection()
        return sorted((rule.rule, method) for rule in app.url_map.iter_rules()
                      for method in rule.methods - {"HEAD", "OPTIONS"})


ENDPOINTS = served_endpoints()
GET_RULES = [rule for rule, method in ENDPOINTS if method == "GET"]
POST_RULES = [rule for rule, method in ENDPOINTS if method == "POST"]


def encode_pairs(pairs: list[tuple[str, str]]) -> str:
    # surrogatepass: a lone surrogate goes out as the bytes a hostile client would send.
    return "&".join(f"{quote(k, errors='surrogatepass')}={quote(v, errors='surrogatepass')}"
                    for k, v in pairs)


query_strings = st.lists(
    st.tuples(st.sampled_from(QUERY_NAMES) | st.sampled_from(FIELDS) | strings,
              st.sampled_from(NUMBERISH) | strings | st.sampled_from(ACTION_NAMES)
              | st.integers(-5, 10**6).map(str)),
    max_size=5).map(encode_pairs)
path_segments = (st.sampled_from(["lobby", "$TOPIC"]) | strings.filter(bool)).map(
    lambda s: quote(s, safe="", errors="surrogatepass"))


class World:
    """An app with a question to work on; each POST example gets a fresh user and agent
    (an example may log out, rotate or revoke)."""

    def __init__(self, app) -> None:
        self.app = app
        asker = joined_person(app)
        self.topic = asker.ask("模糊测试用的问题：SQLite 的 WAL 模式怎么备份？")

    def actors(self) -> tuple[Person, dict[str, str], dict[str, str]]:
        person = Person(self.app).register()
        person.join()
        agent = person.new_agent()
        task = agent.claim(self.topic, str(uuid.uuid4())).get_json()["task"]["id"]
        ids = {"$TOPIC": self.topic, "$TASK": task, "$PROFILE": agent.profile_id,
               "$TOKEN_ID": agent.token_id}
        return person, agent.headers, ids

    def check_consistent(self) -> None:
        db = self.app.config["LOBBYTALKS"].db
        conn = db.conn
        assert not conn.in_transaction
        if db.dialect == "sqlite":
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        else:  # PostgreSQL checks foreign keys per statement; the connection must still work
            assert conn.execute("SELECT 1").fetchone()[0] == 1


@pytest.fixture
def world(settings):
    """The test's app with every rate limit out of the way."""
    unlimited = {name: "100000/minute" for name in Settings().__dataclass_fields__
                 if name.startswith("rate_")}
    return World(create_app(settings, **unlimited))


def substitute(text: str, ids: dict[str, str]) -> str:
    for placeholder, value in ids.items():
        text = text.replace(placeholder, value)
    return text


def assert_no_server_error(response, path: str) -> None:
    assert response.status_code < 500, (path, response.status_code, response.data[:300])
    if path.startswith("/api/") and response.status_code != 202:
        assert response.is_json, (path, response.data[:300])


def test_the_tailored_strategies_match_served_endpoints():
    assert set(POST_BODIES) <= set(POST_RULES) and "/api/external/mcp" in POST_RULES
    assert {"/communities", "/c/<community_id>", "/tasks", "/q/<topic_id>"} <= set(GET_RULES)


@pytest.mark.parametrize("path", POST_RULES)
def test_no_body_makes_a_post_fail(world, path):
    @FUZZ_BODIES
    @given(body=POST_BODIES.get(path, GENERIC_BODIES))
    def post(body: bytes) -> None:
        person, token, ids = world.actors()
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        if path in ("/api/external", "/api/external/mcp"):
            headers.update(token)
        data = substitute(body.decode("latin-1"), ids).encode("latin-1")
        assert_no_server_error(person.http.post(path, data=data, headers=headers), path)

    post()
    world.check_consistent()


@pytest.mark.parametrize("rule", GET_RULES)
def test_no_query_string_makes_a_get_fail(world, rule):
    person, token, ids = world.actors()  # reads change nothing the next example needs

    @FUZZ_QUERIES
    @given(query=query_strings, segment=path_segments, with_token=st.booleans())
    def get(query: str, segment: str, with_token: bool) -> None:
        path = substitute(re.sub(r"<[^>]+>", segment, rule), ids)  # every path parameter
        response = person.http.get(f"{path}?{substitute(query, ids)}",
                                   headers=token if with_token else {})
        assert_no_server_error(response, path)

    get()
    world.check_consistent()
