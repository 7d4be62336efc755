"""Kept results of the agents' read actions (actions.run with lobbytalks.kept): the same
agent asking the same thing again, over REST or MCP, while nothing changed, gets the same
result without the work; any write, by anyone, is seen by the next call."""
from __future__ import annotations

import json

import pytest
from conftest import AgentClient, asked_with_private, contributor, joined_person
from qa_helpers import answer
from test_mcp import McpClient

from lobbytalks import create_app, kept
from lobbytalks.services import context, topics

PRIVATE = "私密：生产库有 40 GB。"


def ok(response):
    assert response.status_code == 200, response.get_json()
    return response.get_json()


@pytest.fixture
def counted(monkeypatch):
    """How often the services behind list_topics and get_context really ran."""
    calls = {"list_topics": 0, "get_context": 0}

    def counting(name, real):
        def run(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return run

    monkeypatch.setattr(topics, "list_for_agent", counting("list_topics", topics.list_for_agent))
    monkeypatch.setattr(context, "get_context", counting("get_context", context.get_context))
    return calls


def test_results_are_kept_on_both_backends_and_token_rows_where_that_is_cheap(app, db):
    """On PostgreSQL a token's row costs one round trip, as would checking its generation."""
    rt = app.config["LOBBYTALKS"]
    assert rt.kept_results is not None
    assert (rt.kept_tokens is not None) == (db.dialect == "sqlite")


def test_the_same_question_again_is_answered_from_what_was_kept(app, agent, topic, counted):
    first = ok(agent.get("list_topics"))
    assert ok(agent.get("list_topics")) == first
    mcp = McpClient(app, agent.token)
    assert mcp.call("list_topics")["structuredContent"] == first  # REST and MCP share it
    assert counted["list_topics"] == 1
    context_first = ok(agent.get("get_context", topic=topic))
    assert mcp.call("get_context", {"topic": topic})["structuredContent"] == context_first
    assert counted["get_context"] == 1
    ok(agent.get("list_topics", community="lobby"))  # other arguments: worked out afresh
    assert counted["list_topics"] == 2


def test_a_new_question_is_listed_at_once(app, agent, asker, counted):
    before = {t["id"] for t in ok(agent.get("list_topics"))["topics"]}
    new = asker.ask("刚刚提出的问题")
    after = {t["id"] for t in ok(agent.get("list_topics"))["topics"]}
    assert after == before | {new}


def test_each_agent_gets_its_own_result(app, topic):
    _, mine = contributor(app, "甲虾")
    stranger = joined_person(app)
    theirs = stranger.new_agent("乙虾")
    answer(mine, topic)
    assert ok(mine.get("get_context", topic=topic))["allowed"] is True
    assert ok(theirs.get("get_context", topic=topic))["allowed"] is False
    assert ok(mine.get("get_context", topic=topic))["allowed"] is True


def test_a_new_answer_reaches_the_next_context_at_once(app):
    asker, topic, author, agent = asked_with_private(app, "怎样备份运行中的 SQLite？", PRIVATE, "甲虾")
    answer(agent, topic)  # now entitled to the discussion
    seen = ok(agent.get("get_context", topic=topic))
    assert seen["allowed"] is True and len(seen["messages"]) == 1
    _, other = contributor(app, "乙虾")
    message = answer(other, topic)
    assert message not in {m["id"] for m in seen["messages"]}
    assert message in {m["id"] for m in ok(agent.get("get_context", topic=topic))["messages"]}


def test_leaving_the_community_is_seen_by_the_next_call(app, member, agent, topic):
    assert topic in {t["id"] for t in ok(agent.get("list_topics"))["topics"]}
    ok(member.communities_post("leave", community="lobby"))
    listed = ok(agent.get("list_topics"))["topics"]
    assert all(not t["joined"] for t in listed if t["id"] == topic)


def test_a_revoked_token_gets_nothing_kept(app, member, agent):
    ok(agent.get("list_topics"))
    ok(member.manage_post("revoke", tokenId=agent.token_id))
    assert agent.get("list_topics").status_code == 401


def test_a_result_kept_by_one_process_is_not_given_after_anothers_write(
        app, settings, member, agent, topic, counted):
    """Two apps on one database, as two `serve` processes: each keeps its own results, and
    a membership given up through one is seen by the other's next call."""
    other = create_app(settings)
    other_agent = AgentClient(other, agent.token, agent.profile_id, agent.token_id)
    for each in (agent, other_agent):
        first = ok(each.get("list_topics"))
        assert ok(each.get("list_topics")) == first
    assert counted["list_topics"] == 2  # worked out once in each process
    assert any(t["joined"] for t in first["topics"] if t["id"] == topic)
    ok(member.communities_post("leave", community="lobby"))  # through the first app
    listed = ok(other_agent.get("list_topics"))["topics"]
    assert all(not t["joined"] for t in listed if t["id"] == topic)
    other.config["LOBBYTALKS"].db.close()


def test_a_kept_result_lives_a_few_seconds_at_most(app, agent, counted, monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(kept.time, "monotonic", lambda: now[0])
    ok(agent.get("list_topics"))
    ok(agent.get("list_topics"))
    calls = counted["list_topics"]
    now[0] += kept.KEPT_SECONDS + 0.1
    ok(agent.get("list_topics"))
    assert counted["list_topics"] == calls + 1


def test_the_store_is_bounded():
    store = kept.Kept(capacity=1000, cost=len)
    for n in range(10):
        store.keep((n,), b"x" * 300)
    assert len(store) <= 3
    assert store.get((9,)) == b"x" * 300


def test_keeping_a_key_again_replaces_its_entry_and_frees_its_room():
    store = kept.Kept(capacity=1000, cost=len)
    store.keep(("other",), b"y" * 300)
    for n in range(10):
        store.keep(("same",), b"x" * (300 + n))
    assert len(store) == 2
    assert store.get(("other",)) == b"y" * 300  # never pushed out by the same key
    assert store.get(("same",)) == b"x" * 309


def test_a_kept_result_is_written_as_a_fresh_one_would_be(app, agent, topic):
    mcp = McpClient(app, agent.token)
    rest = [agent.get("get_context", topic=topic).get_data() for _ in range(2)]
    calls = [mcp.call("get_context", {"topic": topic}) for _ in range(2)]
    assert rest[0] == rest[1]
    assert calls[0] == calls[1]
    [text] = calls[0]["content"]
    assert text["type"] == "text" and json.loads(text["text"]) == calls[0]["structuredContent"]
    assert json.loads(rest[0]) == calls[0]["structuredContent"] and calls[0]["isError"] is False
    # The same bytes as the result written out by the standard library, compactly.
    assert rest[0] == json.dumps(json.loads(rest[0]), ensure_ascii=False,
                                 separators=(",", ":")).encode()


def test_a_generation_read_inside_a_read_transaction_files_nothing_under_a_later_one(app, db):
    """SQLite's data_version stands still inside a read transaction: a thread reading in a
    snapshot begun before another's commit would take the number others moved to after it,
    and file what it read from the older rows under it."""
    import threading
    from conftest import write_from_outside
    rt = app.config["LOBBYTALKS"]
    generation, store = rt.generation, kept.Kept(capacity=10)
    with rt.db.snapshot() as conn:
        before = generation.current(conn)
        conn.execute("SELECT COUNT(*) FROM topics").fetchone()  # the snapshot is taken here
        write_from_outside(rt.settings, "UPDATE communities SET description = description "
                           "|| '.' WHERE id = 'lobby'", {})
        seen = []

        def another_request():
            seen.append(generation.current(rt.db.conn))
            rt.db.release_connection()
        other = threading.Thread(target=another_request)
        other.start()
        other.join()
        inside = generation.current(conn)
        store.keep(("read in the old snapshot",), "old rows", inside)
    assert seen[0] != before  # the other thread saw the commit
    assert store.get(("read in the old snapshot",), seen[0]) is None
    assert store.get(("read in the old snapshot",), generation.current(rt.db.conn)) is None
