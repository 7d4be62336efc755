"""Renaming, re-briefing and archiving an agent: manage API extensions ``update``/``archive``."""
from __future__ import annotations

import pytest

from conftest import contributor, count, good_result, joined_person
from helpers import assert_external_error
from lobbytalks.services import agents, moderation, tasks
from lobbytalks.services.settlement import AGENT_ARCHIVED


def _answered(asker, member):
    """The member's agent answers one of the asker's questions and holds a lease on another."""
    agent = member.new_agent("旧名字虾")
    agent.post("join_community", community="lobby")
    topic = asker.ask()
    task = agent.claim(topic).get_json()["task"]["id"]
    assert agent.post("submit_result", taskId=task, **good_result()).status_code == 200
    leased = agent.claim(asker.ask("另一个问题：WAL 要注意什么？")).get_json()["task"]["id"]
    return agent, topic, leased


def test_rename_and_change_perspective_keep_old_answers_named(asker, member, db):
    agent, topic, _ = _answered(asker, member)
    r = member.manage_post("update", profile=agent.profile_id, name="  新名字虾 ")
    assert r.status_code == 200
    assert r.get_json() == {"ok": True, "profile": agent.profile_id, "name": "新名字虾",
                            "perspective": "先给结论，再给可复核来源。"}
    r = member.manage_post("update", profile=agent.profile_id, perspective="只用一手来源。")
    assert r.get_json()["name"] == "新名字虾" and r.get_json()["perspective"] == "只用一手来源。"
    row = db.one("SELECT name, perspective FROM profiles WHERE id = :id", {"id": agent.profile_id})
    assert tuple(row) == ("新名字虾", "只用一手来源。")
    # The answer keeps the name it was given under; the agent's own context uses the new one.
    assert [m["name"] for m in asker.web_get(topic=topic).get_json()["messages"]] == ["旧名字虾"]
    context = agent.get("get_context", topic=topic).get_json()
    assert context["agent"]["name"] == "新名字虾" and context["agent"]["perspective"] == "只用一手来源。"


@pytest.mark.parametrize("fields", [
    {},                                   # nothing to change
    {"name": ""}, {"name": "   "}, {"name": "n" * 25}, {"name": "a\nb"},
    {"perspective": ""}, {"perspective": "p" * 401},
    {"name": "ok", "client": "codex"},    # not changeable here
    {"name": 5},
])
def test_update_validation(person, db, fields):
    agent = person.new_agent("原名")
    assert_external_error(person.manage_post("update", profile=agent.profile_id, **fields),
                          400, "invalid_request")
    assert db.value("SELECT name FROM profiles") == "原名"


def test_archive_revokes_tokens_fails_leases_and_leaves_the_cap(asker, member, db):
    agent, topic, leased = _answered(asker, member)
    r = member.manage_post("archive", profile=agent.profile_id)
    assert r.status_code == 200
    archived_at = r.get_json()["archived"]
    assert r.get_json() == {"ok": True, "profile": agent.profile_id, "archived": archived_at}
    assert count(db, "tokens", "profile_id = :profile_id AND revoked = 0", {"profile_id": agent.profile_id}) == 0
    task = db.one("SELECT state, error FROM tasks WHERE id = :id", {"id": leased})
    assert tuple(task) == ("failed", AGENT_ARCHIVED)
    # The token is refused with a message that names the reason; the answer keeps its name.
    refused = agent.get("list_topics")
    assert_external_error(refused, 401, "unauthorized")
    assert "归档" in refused.get_json()["error"]
    assert [m["name"] for m in asker.web_get(topic=topic).get_json()["messages"]] == ["旧名字虾"]
    assert count(db, "messages") == 1
    # Archiving again replays; the archived agent cannot be rotated, renamed or revived.
    again = member.manage_post("archive", profile=agent.profile_id).get_json()
    assert again == {"ok": True, "profile": agent.profile_id, "archived": archived_at, "replayed": True}
    for action, fields in (("rotate", {}), ("update", {"name": "复活"})):
        assert_external_error(member.manage_post(action, profile=agent.profile_id, **fields),
                              404, "not_found")
    assert count(db, "tokens", "profile_id = :profile_id", {"profile_id": agent.profile_id}) == 1
    listing = member.manage_get().get_json()
    assert listing["agents"] == []
    assert [a["id"] for a in listing["archivedAgents"]] == [agent.profile_id]
    assert listing["archivedAgents"][0]["archived"] == archived_at


def test_archived_agents_do_not_count_toward_eight(person, db):
    first = person.new_agent("虾0")
    for i in range(1, 8):
        person.new_agent(name=f"虾{i}")
    assert_external_error(person.manage_post("register", name="第九只", perspective="p",
                                             client="custom"), 400, "profile_limit")
    assert person.manage_post("archive", profile=first.profile_id).status_code == 200
    assert person.manage_post("register", name="第九只", perspective="p",
                              client="custom").status_code == 200
    assert count(db, "profiles") == 9
    assert count(db, "profiles", "archived_at IS NULL") == 8
    assert len(person.manage_get().get_json()["agents"]) == 8


def test_only_the_owner_can_update_or_archive(app, person, make_person, db):
    agent = person.new_agent("我的虾")
    stranger = make_person()
    for action, fields in (("update", {"name": "抢走"}), ("archive", {})):
        assert_external_error(stranger.manage_post(action, profile=agent.profile_id, **fields),
                              404, "not_found")
        assert_external_error(stranger.manage_post(action, profile="agt_nope", **fields),
                              404, "not_found")
    row = db.one("SELECT name, archived_at FROM profiles")
    assert tuple(row) == ("我的虾", None)
    # An agent token never stands in for the owner's login.
    r = stranger.http.post("/api/external/manage", json={"action": "archive", "profile": agent.profile_id},
                           headers=agent.headers)
    assert_external_error(r, 401, "unauthorized")


def test_agents_page_shows_the_controls_and_the_archived_list(person):
    live = person.new_agent("在用虾")
    gone = person.new_agent("退役虾")
    person.manage_post("archive", profile=gone.profile_id)
    page = person.http.get("/agents?lang=en").get_data(as_text=True)
    assert f'id="edit-{live.profile_id}"' in page and 'data-action="update"' in page
    assert f'{{"action":"archive","profile":"{live.profile_id}"}}' in page and "Archived agents" in page
    archived_section = page[page.index('id="archived-agents"'):]
    assert "退役虾" in archived_section and f'id="edit-{gone.profile_id}"' not in page


@pytest.mark.parametrize("ended_by", ["revoke", "suspension"])
def test_a_token_ended_between_authentication_and_the_claim_leases_nothing(app, db, monkeypatch,
                                                                          ended_by):
    """The request read a live token; a revoke or a suspension then commits before the claim's
    transaction begins (two requests at once). The claim must see it and lease nothing."""
    asker = joined_person(app)
    topic = asker.ask()
    owner, agent = contributor(app)
    admin_id = db.value("SELECT id FROM users WHERE username = :u", {"u": asker.username})
    real_claim = tasks.claim

    def ended_first(database, keyring, who, data, *, now, **more):
        if ended_by == "revoke":
            agents.revoke(database, who.user_id, who.token_id, now=now)
        else:
            moderation.suspend(database, admin_id, owner.username, "刷屏", now=now)
        return real_claim(database, keyring, who, data, now=now, **more)

    monkeypatch.setattr(tasks, "claim", ended_first)
    refused = agent.claim(topic)
    assert (refused.status_code, refused.get_json()["code"]) == (401, "unauthorized"), \
        refused.get_json()
    if ended_by == "suspension":
        assert "刷屏" in refused.get_json()["error"]
    assert count(db, "tasks", "token_id = :t", {"t": agent.token_id}) == 0
