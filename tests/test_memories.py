"""Private memories: pending after a valid answer, confirmed by the owner, shown when active."""
from __future__ import annotations

import re

import pytest

from conftest import Person, count, good_result
from lobbytalks import clock, create_app
from helpers import assert_web_error
from qa_helpers import claim_ok, submit_ok


@pytest.fixture
def answered(asker, member, agent, topic):
    """(asker, the agent's owner, the agent, the body of its accepted answer)."""
    task = claim_ok(agent, topic)["task"]["id"]
    return asker, member, agent, submit_ok(agent, task)


def test_valid_answer_creates_a_pending_memory(answered, db):
    _, owner, agent, body = answered
    assert "待确认" in body["memoryNotice"]
    listing = owner.web_get(action="memories").get_json()
    assert [m["state"] for m in listing["memories"]] == ["pending"]
    assert listing["memories"][0]["messageId"] == body["messageId"]
    # its text is the conclusion without the citation of a source it does not keep
    assert good_result()["conclusion"].count("[S1]") == 1
    assert listing["memories"][0]["text"].endswith(
        "：用 SQLite 在线备份 API 可以在服务运行时得到一致副本，不要直接复制文件。")
    # Pending memories are not given to the agent.
    topic = db.value("SELECT topic_id FROM messages")
    assert agent.get("get_context", topic=topic).get_json()["memories"] == []


def test_a_replayed_submit_says_what_memory_it_made_while_it_is_kept(answered, db):
    """A client whose first response was lost still learns of the memory; one rejected
    since is not claimed, and a submit that made none (memory off) says nothing of it."""
    asker, owner, agent, first = answered
    task = first["task"]["id"]
    again = agent.post("submit_result", taskId=task, **good_result()).get_json()
    assert again["replayed"] is True and again["memoryNotice"] == first["memoryNotice"]
    memory = owner.web_get(action="memories").get_json()["memories"][0]["id"]
    owner.web_post("memory_reject", memory=memory)
    again = agent.post("submit_result", taskId=task, **good_result()).get_json()
    assert again["replayed"] is True and "memoryNotice" not in again
    owner.web_post("memory_switch", profile=agent.profile_id, enabled=False)
    second = agent.claim(asker.ask("第二个问题")).get_json()["task"]["id"]
    assert "关闭" in agent.post("submit_result", taskId=second, **good_result()).get_json()[
        "memoryNotice"]
    again = agent.post("submit_result", taskId=second, **good_result()).get_json()
    assert again["replayed"] is True and "memoryNotice" not in again


def test_confirmed_memory_reaches_only_that_agent(answered, db):
    _, owner, agent, _ = answered
    memory = owner.web_get(action="memories").get_json()["memories"][0]
    assert owner.web_post("memory_confirm", memory=memory["id"]).get_json()["state"] == "active"
    topic = db.value("SELECT topic_id FROM messages")
    assert agent.get("get_context", topic=topic).get_json()["memories"] == [memory["text"]]
    sibling = owner.new_agent(name="另一只")
    assert sibling.get("get_context", topic=topic).get_json()["memories"] == []


def test_memory_switch_hides_and_stops_new_memories(answered, db):
    asker, owner, agent, _ = answered
    memory = owner.web_get(action="memories").get_json()["memories"][0]
    owner.web_post("memory_confirm", memory=memory["id"])
    r = owner.web_post("memory_switch", profile=agent.profile_id, enabled=False)
    assert r.get_json()["memoryEnabled"] is False
    topic = asker.ask("第二个问题")
    assert agent.get("get_context", topic=topic).get_json()["memories"] == []
    task = agent.claim(topic).get_json()["task"]["id"]
    body = agent.post("submit_result", taskId=task, **good_result()).get_json()
    assert "关闭" in body["memoryNotice"]
    assert count(db, "memories") == 1


def test_thirty_memories_at_most(answered, db):
    asker, owner, agent, _ = answered
    profile = agent.profile_id
    user = db.value("SELECT user_id FROM profiles WHERE id = :id", {"id": profile})
    with db.transaction() as conn:
        conn.executemany("INSERT INTO memories (id, user_id, profile_id, text, state, created, updated) "
                         "VALUES (:id, :user, :profile, 'm', 'pending', 0, 0)",
                         [{"id": f"mem_fill{i}", "user": user, "profile": profile} for i in range(29)])
    task = agent.claim(asker.ask("第三个问题")).get_json()["task"]["id"]
    body = agent.post("submit_result", taskId=task, **good_result()).get_json()
    assert "30" in body["memoryNotice"]
    assert count(db, "memories") == 30


def test_memory_switch_spends_the_web_write_budget(settings, db):
    """Off and on again is a write each time: 3,000 in four seconds went through uncounted."""
    app = create_app(settings.with_overrides(rate_web_write="3/hour"))
    owner = Person(app).register()
    agent = owner.new_agent()
    for enabled in (False, True, False):
        r = owner.web_post("memory_switch", profile=agent.profile_id, enabled=enabled)
        assert r.status_code == 200, r.get_json()
    r = owner.web_post("memory_switch", profile=agent.profile_id, enabled=True)
    assert_web_error(r, 429, "rate_limited")
    assert int(r.headers["Retry-After"]) >= 1
    assert db.value("SELECT memory_enabled FROM profiles WHERE id = :id",
                    {"id": agent.profile_id}) == 0


def test_confirming_a_memory_again_changes_nothing(answered, db, monkeypatch):
    """Not counted against the write budget, a memory's change can happen once: confirming
    an active one again is answered as before and writes nothing."""
    _, owner, _, _ = answered
    memory = owner.web_get(action="memories").get_json()["memories"][0]["id"]
    assert owner.web_post("memory_confirm", memory=memory).get_json()["state"] == "active"
    confirmed = db.value("SELECT updated FROM memories WHERE id = :id", {"id": memory})
    later = confirmed + 3600
    monkeypatch.setattr(clock, "now", lambda: later)
    for _ in range(3):
        assert owner.web_post("memory_confirm", memory=memory).get_json() == {
            "ok": True, "id": memory, "state": "active"}
    assert db.value("SELECT updated FROM memories WHERE id = :id", {"id": memory}) == confirmed


def test_reject_and_delete(answered, app, db):
    _, owner, _, _ = answered
    memory = owner.web_get(action="memories").get_json()["memories"][0]["id"]
    stranger = Person(app).register()
    assert_web_error(stranger.web_post("memory_delete", memory=memory), 404)
    assert owner.web_post("memory_reject", memory=memory).get_json()["state"] == "deleted"
    assert count(db, "memories") == 0
    assert_web_error(owner.web_post("memory_confirm", memory=memory), 404)


def test_memories_need_login_and_own_agent(answered, app, client):
    _, _, agent, _ = answered
    assert_web_error(client.get("/api/community?action=memories"), 401)
    stranger = Person(app).register()
    assert_web_error(stranger.web_post("memory_switch", profile=agent.profile_id, enabled=False), 404)
    assert_web_error(stranger.web_post("memory_switch", profile=agent.profile_id, enabled="no"), 400)


def test_an_archived_agent_has_no_memory_switch_and_its_memories_can_go(answered, db):
    """Archived, an agent cannot be changed (as rename and rotate already refused): its
    memory switch is refused and not shown; its memories stay on /memories to be deleted
    until none is left, then the agent is not listed there at all."""
    _, owner, agent, _ = answered
    assert owner.manage_post("archive", profile=agent.profile_id).status_code == 200
    before = db.value("SELECT memory_enabled FROM profiles WHERE id = :id", {"id": agent.profile_id})
    r = owner.web_post("memory_switch", profile=agent.profile_id, enabled=not before)
    assert_web_error(r, 404)
    assert db.value("SELECT memory_enabled FROM profiles WHERE id = :id",
                    {"id": agent.profile_id}) == before
    listing = owner.web_get(action="memories").get_json()
    assert [a["archived"] for a in listing["agents"]] == [True]
    page = owner.http.get("/memories?lang=en").get_data(as_text=True)
    assert f'id="mem-{agent.profile_id}"' in page and "This agent is archived" in page
    assert "memory_switch" not in page
    [memory] = listing["memories"]
    assert owner.web_post("memory_reject", memory=memory["id"]).status_code == 200
    page = owner.http.get("/memories?lang=en").get_data(as_text=True)
    assert f'id="mem-{agent.profile_id}"' not in page and "No agents yet" in page


def test_the_memory_garden_shows_a_memorys_markdown_formatted(asker, member, agent, topic):
    """A memory repeats an answer's conclusion: its code and emphasis show as in the answer."""
    task = claim_ok(agent, topic)["task"]["id"]
    submit_ok(agent, task, conclusion="用 `PRAGMA journal_mode=WAL;` 和 **在线备份 API** 做热备份，不必停服务。")
    page = member.http.get("/memories?lang=en").get_data(as_text=True)
    assert "<code>PRAGMA journal_mode=WAL;</code>" in page
    assert "<strong>在线备份 API</strong>" in page and "**在线备份" not in page


def test_each_memorys_buttons_say_which_memory_they_act_on(asker, member, agent):
    """With two memories waiting a screen reader heard "Confirm, Reject, Confirm, Reject"."""
    for conclusion in ("用 **在线备份 API** 做热备份，不必停服务，也不用担心写入中的页面被复制坏 [S1]。",
                       "先开 WAL 再做 VACUUM INTO 备份，得到一份压缩过、可直接打开的一致副本 [S1]。"):
        submit_ok(agent, claim_ok(agent, asker.ask(conclusion[:20] + "？"))["task"]["id"],
                  conclusion=conclusion)
    page = member.http.get("/memories?lang=en").get_data(as_text=True)
    for action in ("Confirm", "Reject"):
        names = re.findall(rf'aria-label="({action}: [^"]+)"', page)
        assert len(names) == 2 and len(set(names)) == 2, names
        assert all("**" not in name and "在线备份" in "".join(names) for name in names), names
    [memory] = [m for m in member.web_get(action="memories").get_json()["memories"]
                if "WAL" in m["text"]]
    assert member.web_post("memory_confirm", memory=memory["id"]).status_code == 200
    page = member.http.get("/memories?lang=en").get_data(as_text=True)
    assert re.search(r'aria-label="Delete: [^"]*VACUUM INTO', page)


def test_rejecting_a_memory_asks_first_as_deleting_one_does(asker, member, agent, topic):
    """Reject threw a waiting memory away at the first click; Delete asked first."""
    submit_ok(agent, claim_ok(agent, topic)["task"]["id"])
    page = member.http.get("/memories?lang=en").get_data(as_text=True)
    assert 'data-confirm="Rejected, this memory is thrown away and cannot be confirmed later."' \
        in page
    assert page.count("data-confirm=") == 1  # Confirm does not ask


def test_the_garden_names_the_question_in_the_pages_own_punctuation(asker, member, agent):
    """A memory is kept as "《title》：conclusion" for its agent; the English garden showed
    those Chinese marks around an English title."""
    topic = asker.ask("How do I back up SQLite while it runs?")
    submit_ok(agent, claim_ok(agent, topic)["task"]["id"])
    [memory] = member.web_get(action="memories").get_json()["memories"]
    assert memory["text"].startswith("《How do I back up SQLite while it runs?》：")  # as stored
    english = member.http.get("/memories?lang=en").get_data(as_text=True)
    assert '<span class="memory-about">“How do I back up SQLite while it runs?”: </span>' in english
    assert "《" not in english and "》：" not in english
    chinese = member.http.get("/memories?lang=zh").get_data(as_text=True)
    assert ('<span class="memory-about">《<span lang="en">How do I back up SQLite while it runs?'
            '</span>》：</span>') in chinese  # the English title in its own voice


def test_a_title_holding_the_marks_is_named_whole(asker, member, agent):
    """The garden split "《Echo》：part two》：…" at the title's own "》："."""
    topic = asker.ask("Echo》：part two")
    submit_ok(agent, claim_ok(agent, topic)["task"]["id"])
    english = member.http.get("/memories?lang=en").get_data(as_text=True)
    assert '<span class="memory-about">“Echo》：part two”: </span><span lang="zh-CN">用 SQLite 在线备份 API' in english
