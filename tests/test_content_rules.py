"""Content rules on every surface that takes free text (issue 10 items 13, 15, 16, 17):
display-text rules for names, titles, perspectives and descriptions; secrets in question
text and failure reports; evidence URLs meeting the URL policy before the secret scan.
Through the Flask test client, and the same rules once through a real ``lobbytalks serve``.
"""
from __future__ import annotations

import uuid

import pytest
import requests

from conftest import Person, count, good_result, joined_person, open_database, web_session
from helpers import assert_external_error, assert_web_error

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
HIDDEN_AWS_KEY = "AKIA\u200b" + "IOSFODNN7EXAMPLE"      # split by a zero-width space
DISGUISED = {
    "right-to-left override": "查证\u202e虾",
    "isolate": "a\u2067b\u2069c",
    "line separator": "第一行\u2028第二行",
    "paragraph separator": "第一段\u2029第二段",
}
INVISIBLE_ONLY = {"zero-width space": "\u200b", "joiners": "\u200d\u200c", "hangul filler": "\u3164"}


def _cases(fields_required, fields_optional):
    """(field, value) pairs: every disguise for every field, blankness only where the field
    must say something."""
    cases = [(field, value) for field in fields_required + fields_optional
             for value in DISGUISED.values()]
    cases += [(field, value) for field in fields_required for value in INVISIBLE_ONLY.values()]
    return cases


# --------------------------------------------------------------------------- agents


@pytest.mark.parametrize(("field", "value"), _cases(["name", "perspective"], []))
def test_agent_registration_refuses_disguised_text(person, db, field, value):
    fields = {"name": "查证虾", "perspective": "先给结论。", "client": "codex", field: value}
    r = person.manage_post("register", **fields)
    body = assert_external_error(r, 400, "invalid_request")
    assert body["error"].startswith(field)
    assert count(db, "profiles") == 0 and count(db, "tokens") == 0


@pytest.mark.parametrize("name", [
    "👨\u200d💻 程序虾", "🏳\ufe0f\u200d🌈", "می\u200cخواهم", "עברית\u200f虾", "Claude Code",
])
def test_agent_names_with_joiners_and_marks_are_kept_exactly(person, db, name):
    r = person.manage_post("register", name=name, perspective="第一行\n第二行", client="custom")
    assert r.status_code == 200, r.get_json()
    row = db.one("SELECT name, perspective FROM profiles")
    assert tuple(row) == (name, "第一行\n第二行")


# --------------------------------------------------------------------------- communities


@pytest.mark.parametrize(("field", "value"), _cases(["name"], ["description"]))
def test_community_creation_refuses_disguised_text(person, db, field, value):
    before = count(db, "communities")
    r = person.communities_post("create", **{"name": "读书会", "description": "", field: value})
    assert_web_error(r, 400)
    assert count(db, "communities") == before


def test_community_with_emoji_name_is_created(person, db):
    r = person.communities_post("create", name="👩\u200d🔬 科学", description="实验\n与讨论")
    assert r.status_code == 200, r.get_json()
    assert db.value("SELECT name, description FROM communities WHERE id = :id",
                      {"id": r.get_json()["id"]}) == "👩\u200d🔬 科学"


# --------------------------------------------------------------------------- questions


@pytest.mark.parametrize(("field", "value"), _cases(
    ["title", "originalTitle"], ["description", "privateContext"]))
def test_asking_refuses_disguised_text(asker, db, field, value):
    r = asker.web_post("topic", **{"title": "正常的标题", field: value})
    assert_web_error(r, 400)
    assert count(db, "topics") == 0 and count(db, "question_versions") == 0


@pytest.mark.parametrize(("field", "value"), _cases(["title"], ["description", "note"]))
def test_revising_refuses_disguised_text(asker, db, field, value):
    topic = asker.ask()
    r = asker.web_post("revise", topic=topic, **{"description": "新条件", field: value})
    assert_web_error(r, 400)
    assert count(db, "question_versions") == 1
    assert db.value("SELECT version FROM topics") == 1


@pytest.mark.parametrize("username", ["\u202eadmin", "ad\u200bmin", "ｕｓｅｒ_1", "user\u2028"])
def test_usernames_stay_ascii_so_no_disguise_fits(app, db, username):
    r = Person(app, username=username).web_post("register", username=username,
                                                  password="correct horse 1")
    assert_web_error(r, 400)
    assert count(db, "users") == 0


SECRETS_IN_QUESTIONS = [
    {"title": "我的密钥 " + HIDDEN_AWS_KEY + " 还能用吗"},
    {"originalTitle": "ghp_" + "A" * 36},
    {"description": "连接串 postgres://app:" + "s3cret@db.example.org/app"},
    {"privateContext": "-----begin rsa " + "private key-----"},
    {"privateContext": "token: ｇｈｐ＿" + "C" * 36},                 # fullwidth
]


@pytest.mark.parametrize("fields", SECRETS_IN_QUESTIONS)
def test_question_text_with_a_secret_is_refused(asker, db, fields):
    r = asker.web_post("topic", **{"title": "普通标题", **fields})
    body = assert_web_error(r, 400)
    assert AWS_KEY not in body["error"] and "ghp_" not in body["error"]
    assert count(db, "topics") == 0 and count(db, "question_versions") == 0


@pytest.mark.parametrize("fields", [
    {"title": "新标题 " + HIDDEN_AWS_KEY}, {"description": "npm_" + "a1B2" * 9},
    {"privateContext": "SG." + "a" * 22 + "." + "b" * 43},
    {"description": "新条件", "note": "xoxb-" + "1234567890-abc"},
])
def test_revision_with_a_secret_is_refused(asker, db, fields):
    topic = asker.ask()
    assert_web_error(asker.web_post("revise", topic=topic, **fields), 400)
    assert count(db, "question_versions") == 1


def test_fail_task_scans_the_folded_error(app, asker, db):
    helper = joined_person(app)
    agent = helper.new_agent()
    task = agent.claim(asker.ask()).get_json()["task"]["id"]
    split_token = agent.token[:8] + "\u2060" + agent.token[8:]      # word joiner inside
    r = agent.post("fail_task", taskId=task, error=f"令牌 {split_token} 不工作")
    assert_external_error(r, 400, "sensitive_content")
    assert agent.token[8:] not in r.get_data(as_text=True)
    assert db.one("SELECT state, error FROM tasks")[:] == ("leased", None)


# --------------------------------------------------------------------------- a real server


def test_content_rules_hold_through_a_real_server(live_server):
    """Items 13, 15, 16 and 17 against ``lobbytalks serve``: each refusal has the spec's
    status and code, and the database holds nothing of the refused writes."""
    url = live_server.url
    asker = web_session(live_server)
    asker.post(url + "/api/communities", json={"action": "join", "community": "lobby"})
    owner = web_session(live_server)
    owner.post(url + "/api/communities", json={"action": "join", "community": "lobby"})

    # 17: disguised names are refused on the manage API and the community API
    r = owner.post(url + "/api/external/manage", json={
        "action": "register", "name": "evil\u202egpj", "perspective": "p", "client": "custom"})
    assert (r.status_code, r.json()["code"]) == (400, "invalid_request")
    r = owner.post(url + "/api/communities", json={"action": "create", "name": "\u200b\u200b"})
    assert r.status_code == 400 and set(r.json()) == {"error", "code"}
    # 15: a secret hidden in the question text
    r = asker.post(url + "/api/community", json={
        "action": "topic", "title": "普通标题", "privateContext": "key " + HIDDEN_AWS_KEY})
    assert r.status_code == 400 and set(r.json()) == {"error", "code"}

    topic = asker.post(url + "/api/community", json={"action": "topic", "title": "真问题"}).json()["id"]
    issued = owner.post(url + "/api/external/manage", json={
        "action": "register", "name": "👨\u200d💻 虾", "perspective": "p", "client": "custom"}).json()
    agent = requests.Session()
    agent.headers["Authorization"] = f"Bearer {issued['token']}"
    claimed = agent.post(url + "/api/external", json={
        "action": "claim_task", "topic": topic, "requestId": str(uuid.uuid4())}).json()
    task = claimed["task"]["id"]

    def submit(**overrides):
        return agent.post(url + "/api/external",
                          json={"action": "submit_result", "taskId": task, **good_result(**overrides)})

    def evidence_url(value):
        return [{**good_result()["evidence"][0], "url": value}]

    refusals = [
        (evidence_url("https://admin:hunter2@www.sqlite.org/x"), "invalid_source"),        # 13
        (evidence_url("https://127.0.0.1.nip.io/x"), "invalid_source"),                    # 16
        (evidence_url("https://www.sqlite.org/x?%2561uth_token=abc"), "invalid_source"),  # 16
        (evidence_url("https://www.sqlite.org/x;jsessionid=ABC123"), "invalid_source"),   # 16
    ]
    for evidence, code in refusals:
        r = submit(evidence=evidence)
        assert (r.status_code, r.json()["code"]) == (400, code), (evidence, r.json())
    r = submit(reasoningSummary="密钥是 " + HIDDEN_AWS_KEY)                                # 15
    assert (r.status_code, r.json()["code"]) == (400, "sensitive_content")
    r = agent.post(url + "/api/external", json={
        "action": "fail_task", "taskId": task, "error": "ghp_\u200b" + "A" * 36})
    assert (r.status_code, r.json()["code"]) == (400, "sensitive_content")

    with open_database(live_server.data_dir) as db:
        assert [row["name"] for row in db.all("SELECT name FROM profiles")] == ["👨\u200d💻 虾"]
        assert db.value("SELECT COUNT(*) FROM communities WHERE name = :name",
                        {"name": "\u200b\u200b"}) == 0
        assert [row["title"] for row in db.all("SELECT title FROM topics")] == ["真问题"]
        assert db.value("SELECT COUNT(*) FROM messages") == 0
        assert tuple(db.one("SELECT state, error FROM tasks")) == ("leased", None)
