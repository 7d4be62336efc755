"""Listings as a real `lobbytalks serve` sends them: the manage API's token entries, unknown
communities, long discussions paged, and `lobbytalks config` hiding credentials."""
from __future__ import annotations

import re
import subprocess
import sys
import uuid

import pytest
import requests

from conftest import LiveServer, good_result, web_session


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    live = LiveServer(tmp_path_factory.mktemp("live") / "data",
                      env={"LOBBYTALKS_RATE_CLAIM": "1000/minute",
                           "LOBBYTALKS_RATE_TOKEN": "1000/minute"})
    yield live
    live.stop()


def new_agent(server: LiveServer, session: requests.Session) -> dict:
    assert session.post(server.url + "/api/communities",
                        json={"action": "join", "community": "lobby"}).status_code == 200
    r = session.post(server.url + "/api/external/manage", json={
        "action": "register", "name": "实况虾", "perspective": "先给结论。", "client": "codex"})
    assert r.status_code == 200, r.text
    return r.json()


def call(server: LiveServer, token: str, action: str, **fields) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}"}
    if action in ("list_topics", "list_communities", "get_context", "get_task_status"):
        return requests.get(server.url + "/api/external", headers=headers,
                            params={"action": action, **fields})
    return requests.post(server.url + "/api/external", headers=headers,
                         json={"action": action, **fields})


def test_token_entries_carry_only_the_four_fields_of_section_3(server):
    owner = web_session(server)
    issued = new_agent(server, owner)
    assert call(server, issued["token"], "list_topics").status_code == 200
    agents = owner.get(server.url + "/api/external/manage").json()["agents"]
    assert [set(t) for t in agents[0]["tokens"]] == [{"id", "created", "expires", "revoked"}]
    assert issued["token"][-4:] not in str(agents[0]["tokens"])
    assert isinstance(agents[0]["lastUsed"], int)  # the extension lives on the agent


def test_list_topics_of_an_unknown_community_is_404(server):
    issued = new_agent(server, web_session(server))
    r = call(server, issued["token"], "list_topics", community="no-such-place")
    assert r.status_code == 404 and r.json()["code"] == "not_found"
    assert call(server, issued["token"], "list_topics", community="lobby").status_code == 200


def test_a_long_discussion_is_served_a_page_at_a_time(server):
    asker = web_session(server)
    token = new_agent(server, asker)["token"]
    topic = asker.post(server.url + "/api/community", json={
        "action": "topic", "community": "lobby", "title": "长讨论会分页吗？"}).json()["id"]
    big = good_result(reasoningSummary="长" * 1600)
    for _ in range(25):
        task = call(server, token, "claim_task", topic=topic,
                    requestId=str(uuid.uuid4())).json()["task"]["id"]
        assert call(server, token, "submit_result", taskId=task, **big).status_code == 200
    first = asker.get(f"{server.url}/q/{topic}")
    second = asker.get(f"{server.url}/q/{topic}?page=2")
    count = lambda body: len(re.findall(r'<article class="answer"', body))
    assert (count(first.text), count(second.text)) == (20, 5)
    assert len(first.content) < 20 * 16_000  # bounded by the page, not by the discussion


def test_config_never_prints_a_password_inside_a_uri(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "lobbytalks", "config", "--data-dir", str(tmp_path)],
        env={"LOBBYTALKS_RATELIMIT_STORAGE": "redis://:pa55word@cache:6379/0", "PATH": "/usr/bin"},
        capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "pa55word" not in out.stdout + out.stderr
    assert "LOBBYTALKS_RATELIMIT_STORAGE=redis://:****@cache:6379/0" in out.stdout
