"""The owner's manage API (§3): agents, tokens, tasks and cancel — web session only."""
from __future__ import annotations

import hashlib

import pytest

from conftest import Person, count, good_result, joined_person
from helpers import assert_external_error
from lobbytalks.security import is_agent_token_shape


def test_register_issues_a_token_once_and_stores_only_its_digest(person, db):
    r = person.manage_post("register", name="代码查证虾", perspective="先给结论", client="codex", role=2)
    issued = r.get_json()
    assert r.status_code == 200 and set(issued) == {"profileId", "tokenId", "token", "expires"}
    token = issued["token"]
    assert token.startswith("lbt_") and is_agent_token_shape(token)
    row = db.one("SELECT digest, last4, expires, created FROM tokens")
    assert row["digest"] == hashlib.sha256(token.encode()).hexdigest()
    assert row["expires"] - row["created"] == 30 * 86400 == issued["expires"] - row["created"]
    listing = person.manage_get().get_json()
    assert token not in str(listing) and row["digest"] not in str(listing)
    agent = listing["agents"][0]
    assert agent["model"] == "codex" and agent["role"] == 2 and agent["name"] == "代码查证虾"
    # §3: a token entry carries exactly these fields, nothing that could identify the token
    assert set(agent["tokens"][0]) == {"id", "created", "expires", "revoked"}
    assert agent["tokens"][0]["revoked"] == 0 and agent["tokens"][0]["id"] == issued["tokenId"]


def test_listing_shows_when_a_token_was_last_used(person):
    person.join()
    agent = person.new_agent()
    assert "lastUsed" not in person.manage_get().get_json()["agents"][0]
    agent.get("list_topics")
    listed = person.manage_get().get_json()["agents"][0]
    assert listed["lastUsed"] is not None and "lastUsed" not in listed["tokens"][0]


@pytest.mark.parametrize("fields", [
    {"name": "", "perspective": "p", "client": "codex"},
    {"name": "n" * 25, "perspective": "p", "client": "codex"},
    {"name": "n", "perspective": "p" * 401, "client": "codex"},
    {"name": "n", "perspective": "p", "client": "gpt"},
    {"name": "n", "perspective": "p", "client": "codex", "role": 4},
    {"name": "n", "perspective": "p", "client": "codex", "role": "1"},
    {"name": "n", "perspective": "p", "client": "codex", "role": 1.5},
    {"name": "n", "perspective": "p", "client": "codex", "role": True},
    {"name": "n", "perspective": "p"},
    {"name": "n", "perspective": "p", "client": "codex", "model": "x"},
])
def test_register_validation(person, db, fields):
    assert_external_error(person.manage_post("register", **fields), 400, "invalid_request")
    assert count(db, "profiles") == 0


@pytest.mark.parametrize("role", [1.0, 3.0, 0.0])
def test_a_whole_role_written_as_a_float_is_the_integer(person, role):
    """JSON Schema counts 1.0 as an integer: the contract's role 0-3 takes it."""
    r = person.manage_post("register", name="n", perspective="p", client="codex", role=role)
    assert r.status_code == 200, r.get_json()
    [agent] = person.manage_get().get_json()["agents"]
    assert agent["role"] == int(role) and isinstance(agent["role"], int)


SECRET = "ghp_" + "A" * 36


@pytest.mark.parametrize("fields", [
    {"name": "n", "perspective": f"用这把钥匙 {SECRET}", "client": "codex"},
    {"name": "sk-" + "a1" * 10, "perspective": "p", "client": "codex"},
])
def test_a_secret_in_a_new_agent_is_refused(person, db, fields):
    """Name and perspective reach every task the agent claims (get_context.agent)."""
    body = assert_external_error(person.manage_post("register", **fields), 400,
                                 "sensitive_content")
    assert SECRET not in body["error"] and count(db, "profiles") == 0


def test_a_secret_in_an_update_is_refused(person, db):
    agent = person.new_agent()
    r = person.manage_post("update", profile=agent.profile_id, perspective=f"钥匙 {SECRET}")
    assert_external_error(r, 400, "sensitive_content")
    assert db.value("SELECT perspective FROM profiles WHERE id = :id",
                    {"id": agent.profile_id}) == "先给结论，再给可复核来源。"


def test_eight_agents_per_user(person, db):
    for i in range(8):
        person.new_agent(name=f"虾{i}")
    r = person.manage_post("register", name="第九只", perspective="p", client="custom")
    assert_external_error(r, 400, "profile_limit")
    assert count(db, "profiles") == 8


def test_manage_needs_the_cookie_not_a_token(app, person, db):
    agent = person.new_agent()
    anon = app.test_client()
    assert_external_error(anon.get("/api/external/manage"), 401, "unauthorized")
    r = anon.get("/api/external/manage", headers=agent.headers)
    assert_external_error(r, 401, "unauthorized")
    r = anon.post("/api/external/manage", headers=agent.headers,
                  json={"action": "register", "name": "n", "perspective": "p", "client": "codex"})
    assert_external_error(r, 401, "unauthorized")
    assert count(db, "profiles") == 1


def test_rotate_revokes_old_tokens_and_fails_their_leases(person, db):
    person.join()
    topic = person.ask()
    agent = person.new_agent()
    task = agent.claim(topic).get_json()["task"]["id"]
    rotated = person.manage_post("rotate", profile=agent.profile_id).get_json()
    assert rotated["profileId"] == agent.profile_id and rotated["token"] != agent.token
    assert_external_error(agent.get("list_topics"), 401, "unauthorized")
    state, error = db.one("SELECT state, error FROM tasks WHERE id = :id", {"id": task})
    assert state == "failed" and error
    revoked = db.value("SELECT revoked FROM tokens WHERE id = :id", {"id": agent.token_id})
    assert revoked == 1


def test_old_task_does_not_move_to_the_new_token(app, person, db):
    person.join()
    topic = person.ask()
    agent = person.new_agent()
    task = agent.claim(topic).get_json()["task"]["id"]
    rotated = person.manage_post("rotate", profile=agent.profile_id).get_json()
    from conftest import AgentClient
    fresh = AgentClient(app, rotated["token"], rotated["profileId"], rotated["tokenId"])
    assert_external_error(fresh.get("get_task_status", taskId=task), 404, "not_found")
    assert_external_error(fresh.post("submit_result", taskId=task, **good_result()), 404, "not_found")
    assert count(db, "messages") == 0


def test_revoke_replays_and_fails_leases(person, db):
    person.join()
    topic = person.ask()
    agent = person.new_agent()
    task = agent.claim(topic).get_json()["task"]["id"]
    for _ in range(2):
        assert person.manage_post("revoke", tokenId=agent.token_id).get_json() == {"ok": True}
    assert db.value("SELECT state FROM tasks WHERE id = :id", {"id": task}) == "failed"
    assert_external_error(agent.get("list_topics"), 401, "unauthorized")


def test_cannot_manage_someone_elses_agent(app, person, db):
    agent = person.new_agent()
    other = Person(app).register()
    assert_external_error(other.manage_post("rotate", profile=agent.profile_id), 404, "not_found")
    assert_external_error(other.manage_post("revoke", tokenId=agent.token_id), 404, "not_found")
    assert db.value("SELECT revoked FROM tokens") == 0


def _tasks(person, **filters):
    return person.manage_get(action="tasks", **filters)


def test_task_listing_fields_order_filters_and_pages(app, person, db):
    person.join()
    topics = [person.ask(f"问题 {i}") for i in range(3)]
    a, b = person.new_agent(name="甲"), person.new_agent(name="乙")
    t1 = a.claim(topics[0]).get_json()["task"]["id"]
    t2 = b.claim(topics[1]).get_json()["task"]["id"]
    a.post("fail_task", taskId=t1, error="找不到来源")
    listing = _tasks(person).get_json()
    assert listing["total"] == 2 and listing["page"] == 1 and listing["hasMore"] is False
    first = listing["tasks"][0]
    assert set(first) == {"id", "topic", "topicTitle", "communityId", "profile", "agentName",
                          "client", "state", "replyTo", "created", "updated", "expires",
                          "messageId", "error"}
    assert {t["id"] for t in listing["tasks"]} == {t1, t2}
    assert _tasks(person, state="failed").get_json()["tasks"][0]["id"] == t1
    assert _tasks(person, profile=b.profile_id).get_json()["total"] == 1
    assert _tasks(person, topic=topics[2]).get_json() == {"tasks": [], "page": 1, "hasMore": False,
                                                          "total": 0}
    assert _tasks(person, topic=topics[0], state="leased").get_json()["total"] == 0


def test_the_total_counts_the_tasks_listed_whatever_commits_between(app, person, db,
                                                                   monkeypatch):
    """The count and the page were two reads: a task failed between them was counted as
    leased and then not listed ({"total": 1, "tasks": []})."""
    import threading

    from lobbytalks.db import Q
    person.join()
    agent = person.new_agent()
    task = agent.claim(person.ask()).get_json()["task"]["id"]

    def fail_elsewhere():  # another request's commit, on its own connection
        with db.transaction() as conn:
            conn.execute("UPDATE tasks SET state = 'failed' WHERE id = :id", {"id": task})

    class Interleaved:
        def __init__(self, conn):
            self.conn = conn

        def __getattr__(self, name):
            return getattr(self.conn, name)

        def execute(self, sql, *args):
            cursor = self.conn.execute(sql, *args)
            if sql == Q.count_managed_tasks:
                worker = threading.Thread(target=fail_elsewhere)
                worker.start()
                worker.join()
            return cursor

    database = type(db)
    plain = database.conn
    monkeypatch.setattr(database, "conn", property(lambda self: Interleaved(plain.fget(self))))
    listing = _tasks(person, state="leased").get_json()
    monkeypatch.undo()
    assert db.value("SELECT state FROM tasks WHERE id = :id", {"id": task}) == "failed"
    assert (listing["total"], [t["id"] for t in listing["tasks"]]) == (1, [task])


def test_task_listing_pages_of_twenty(person, db):
    person.join()
    topic = person.ask()
    agent = person.new_agent()
    task = agent.claim(topic).get_json()["task"]["id"]
    row = db.one("SELECT * FROM tasks WHERE id = :id", {"id": task})
    cols = row.keys()
    for i in range(24):
        values = dict(row)
        values.update(id=f"task_copy{i:02}", request_id=f"00000000-0000-0000-0000-{i:012}",
                      created=row["created"] - i - 1, state="failed")
        with db.transaction() as conn:
            conn.execute(f"INSERT INTO tasks ({', '.join(cols)}) "
                         f"VALUES ({', '.join(':' + c for c in cols)})", values)
    one = _tasks(person, page=1).get_json()
    two = _tasks(person, page=2).get_json()
    assert len(one["tasks"]) == 20 and one["hasMore"] and one["total"] == 25
    assert len(two["tasks"]) == 5 and not two["hasMore"]
    assert one["tasks"][0]["id"] == task
    created = [t["created"] for t in one["tasks"] + two["tasks"]]
    assert created == sorted(created, reverse=True)


def test_other_users_ids_never_widen_the_listing(app, person):
    other = joined_person(app)
    topic = other.ask()
    their_agent = other.new_agent()
    their_agent.claim(topic)
    assert _tasks(person, profile=their_agent.profile_id).get_json()["total"] == 0
    assert _tasks(person, topic=topic).get_json()["total"] == 0


@pytest.mark.parametrize("filters", [{"state": "all"}, {"state": "running"}, {"page": 0},
                                     {"page": 10001}, {"topic": "bad id"}, {"profile": "x" * 65}])
def test_task_listing_validation(person, filters):
    assert_external_error(_tasks(person, **filters), 400, "invalid_request")


def test_task_listing_settles_expired_leases_first(person, db, clock_file):
    from conftest import advance
    person.join()
    agent = person.new_agent()
    agent.claim(person.ask())
    advance(clock_file, 31 * 60)
    assert _tasks(person).get_json()["tasks"][0]["state"] == "expired"
    assert db.value("SELECT state FROM tasks") == "expired"


def test_cancel_task(app, person, db):
    person.join()
    agent = person.new_agent()
    task = agent.claim(person.ask()).get_json()["task"]["id"]
    r = person.manage_post("cancel_task", taskId=task)
    body = r.get_json()
    assert r.status_code == 200 and body["ok"] is True and "replayed" not in body
    assert body["task"]["state"] == "failed" and body["task"]["error"] == "用户已取消外部任务"
    again = person.manage_post("cancel_task", taskId=task).get_json()
    assert again["replayed"] is True and again["task"]["id"] == task
    r = agent.post("submit_result", taskId=task, **good_result())
    assert_external_error(r, 409, "task_terminal")
    assert count(db, "messages") == 0 and count(db, "memories") == 0


def test_cancel_other_terminal_states_and_strangers(app, person, db):
    person.join()
    agent = person.new_agent()
    done = agent.claim(person.ask()).get_json()["task"]["id"]
    agent.post("submit_result", taskId=done, **good_result())
    assert_external_error(person.manage_post("cancel_task", taskId=done), 409, "task_terminal")
    stranger = Person(app).register()
    assert_external_error(stranger.manage_post("cancel_task", taskId=done), 404, "not_found")
    assert_external_error(person.manage_post("cancel_task", taskId="task_nope"), 404, "not_found")
    assert db.value("SELECT state FROM tasks") == "done"


def test_manage_actions_limited_to_twenty_an_hour(person):
    agent = person.new_agent()
    for _ in range(19):
        assert person.manage_post("revoke", tokenId=agent.token_id).status_code == 200
    r = person.manage_post("revoke", tokenId=agent.token_id)
    assert_external_error(r, 429, "rate_limited")
    assert int(r.headers["Retry-After"]) > 0


def test_manage_wrong_method_and_unknown_action(person, db):
    assert_external_error(person.http.delete("/api/external/manage"), 405, "method_not_allowed")
    assert_external_error(person.manage_post("explode"), 400, "unknown_action")
    assert_external_error(person.manage_get(action="secrets"), 400, "unknown_action")
    # an action it has, with the other method: said so, as /api/external does
    for wrong in (person.manage_get(action="register"), person.manage_get(action="cancel_task"),
                  person.manage_post("tasks"), person.manage_post("agents")):
        assert_external_error(wrong, 405, "method_not_allowed")
        assert wrong.headers["Allow"] == "GET, POST"
    assert "需要使用 POST" in person.manage_get(action="rotate").get_json()["error"]
    assert count(db, "profiles") == 0


def test_manage_listing_checks_the_task_filters_it_does_not_use(person):
    """GET /api/external/manage declares the task filters for the operation: the agent
    listing takes them (checked, then left out) and refuses anything else."""
    person.new_agent()
    for query in ({}, {"action": "agents", "page": "3", "state": "done"}):
        r = person.manage_get(**query)
        assert r.status_code == 200 and len(r.get_json()["agents"]) == 1, query
    for query in ({"action": "agents", "page": "0"}, {"state": "sleeping"},
                  {"action": "agents", "sneaky": "1"}):
        assert_external_error(person.manage_get(**query), 400, "invalid_request")

@pytest.mark.parametrize("query", ["", "?action=tasks"])
def test_head_of_a_listing_answers_like_get_without_a_body(person, query):
    """HEAD is a GET without its body (with a cookie it was a 503: the view took it for a
    POST and read a body that HEAD does not have)."""
    person.new_agent()
    got = person.http.get(f"/api/external/manage{query}")
    r = person.http.head(f"/api/external/manage{query}")
    assert got.status_code == 200 and r.status_code == 200 and r.data == b""
    assert r.headers["Content-Type"] == got.headers["Content-Type"]
