"""Races against a real multi-threaded waitress server: the first committed write wins."""
from __future__ import annotations

import uuid

import requests

from conftest import good_result, open_database, race, web_session


def _setup(server):
    """An asker with questions and a second user whose agent answers them."""
    asker = web_session(server)
    asker.post(server.url + "/api/communities", json={"action": "join", "community": "lobby"})
    topics = [asker.post(server.url + "/api/community",
                         json={"action": "topic", "title": f"并发问题 {i}"}).json()["id"]
              for i in range(4)]
    owner = web_session(server)
    owner.post(server.url + "/api/communities", json={"action": "join", "community": "lobby"})
    return asker, owner, topics


def _agent(server, owner, name="并发虾"):
    issued = owner.post(server.url + "/api/external/manage", json={
        "action": "register", "name": name, "perspective": "p", "client": "custom"}).json()
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {issued['token']}"
    return http



def test_four_claims_race_for_three_leases(live_server):
    _, owner, topics = _setup(live_server)
    agents = [_agent(live_server, owner, f"虾{i}") for i in range(4)]
    url = live_server.url + "/api/external"
    calls = [lambda a=a, t=t: a.post(url, json={"action": "claim_task", "topic": t,
                                                "requestId": str(uuid.uuid4())})
             for a, t in zip(agents, topics)]
    responses = race(calls)
    statuses = sorted(r.status_code for r in responses)
    assert statuses[:3] == [200, 200, 200]
    assert statuses[3] in (409, 429)
    loser = next(r for r in responses if r.status_code != 200)
    assert loser.json()["code"] == "task_limit"
    with open_database(live_server.data_dir) as db:
        assert db.value("SELECT COUNT(*) FROM tasks WHERE state = 'leased'") == 3


def test_cancel_racing_submit_has_one_winner(live_server):
    _, owner, topics = _setup(live_server)
    agent = _agent(live_server, owner)
    url = live_server.url + "/api/external"
    for topic in topics[:3]:
        task = agent.post(url, json={"action": "claim_task", "topic": topic,
                                     "requestId": str(uuid.uuid4())}).json()["task"]["id"]
        submit, cancel = race([
            lambda: agent.post(url, json={"action": "submit_result", "taskId": task, **good_result()}),
            lambda: owner.post(live_server.url + "/api/external/manage",
                               json={"action": "cancel_task", "taskId": task}),
        ])
        with open_database(live_server.data_dir) as db:
            state = db.value("SELECT state FROM tasks WHERE id = :id", {"id": task})
            messages = db.value("SELECT COUNT(*) FROM messages WHERE task_id = :task_id", {"task_id": task})
        if submit.status_code == 200:
            assert cancel.status_code == 409 and cancel.json()["code"] == "task_terminal"
            assert state == "done" and messages == 1
        else:
            assert cancel.status_code == 200
            assert submit.status_code == 409 and submit.json()["code"] == "task_terminal"
            assert state == "failed" and messages == 0


def test_parallel_registrations_stop_at_eight(live_server):
    owner = web_session(live_server)
    url = live_server.url + "/api/external/manage"
    for i in range(5):
        assert owner.post(url, json={"action": "register", "name": f"先有{i}", "perspective": "p",
                                     "client": "custom"}).status_code == 200
    calls = [lambda i=i: owner.post(url, json={"action": "register", "name": f"并发{i}",
                                               "perspective": "p", "client": "custom"})
             for i in range(6)]
    responses = race(calls)
    assert sum(r.status_code == 200 for r in responses) == 3
    refused = [r for r in responses if r.status_code != 200]
    assert all(r.status_code in (400, 409) and r.json()["code"] == "profile_limit" for r in refused)
    with open_database(live_server.data_dir) as db:
        assert db.value("SELECT COUNT(*) FROM profiles") == 8
