"""The pages and the agent API stay flat with size: a bounded number of statements per
request whatever the rows on the page, counts read from where they are kept rather than
counted, and an index behind every hot query (no scan of a big table, no sort in a
temporary B-tree)."""
from __future__ import annotations

import re
import sqlite3
from typing import Any

import pytest

from conftest import Person, contributor, good_result, joined_person, query_plan, settings_for
from helpers import UNDO_0011
from lobbytalks import create_app
from lobbytalks.db import Q, connect
from lobbytalks.blueprints import kept_pages

# EXPLAIN QUERY PLAN, the trace callback and the file-level migration test are SQLite's.
sqlite_only = pytest.mark.sqlite_only


@pytest.fixture(autouse=True)
def _nothing_kept(app):
    """These tests count what answering costs: a kept page or result would answer instead
    (tests/test_kept_pages.py and test_kept_results.py test those)."""
    app.extensions.pop(kept_pages.EXTENSION, None)
    app.config["LOBBYTALKS"].kept_results = None


@pytest.fixture
def settings(tmp_path, clock_file):
    return settings_for(tmp_path / "data", clock_offset_file=str(clock_file),
                        rate_claim="10000/minute", rate_token="10000/minute",
                        rate_topic="10000/day")


class Statements:
    """Every statement the app's connection on this thread runs while counting (the test
    client runs requests on the test's own thread)."""

    # "--": what SQLite runs inside a virtual table (FTS5's shadow tables), not the app
    SKIPPED = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "PRAGMA", "--")

    def __init__(self, app):
        self.conn = app.config["LOBBYTALKS"].db.conn
        self.seen: list[str] = []

    def __enter__(self) -> "Statements":
        self.conn.set_trace_callback(self._keep)
        return self

    def __exit__(self, *exc) -> None:
        self.conn.set_trace_callback(None)

    def _keep(self, sql: str) -> None:
        if not sql.lstrip().upper().startswith(self.SKIPPED):
            self.seen.append(sql)


def written(app, request) -> tuple[Any, list[str]]:
    """``request()``'s response and every statement it ran on the writer's connection."""
    writer = app.config["LOBBYTALKS"].db._writer()  # where write transactions run
    seen: list[str] = []
    writer.set_trace_callback(seen.append)
    try:
        return request(), seen
    finally:
        writer.set_trace_callback(None)


def statements_of(app, client, path: str, **kwargs) -> list[str]:
    with Statements(app) as counted:
        response = client.get(path, **kwargs)
    assert response.status_code == 200, response.data[:300]
    return counted.seen


def answer(app, topic: str, agent) -> str:
    claimed = agent.claim(topic)
    assert claimed.status_code == 200, claimed.get_json()
    submitted = agent.post("submit_result", taskId=claimed.get_json()["task"]["id"],
                           **good_result())
    assert submitted.status_code == 200, submitted.get_json()
    return submitted.get_json()["messageId"]


def answered_topic(app, answers: int):
    """A question with ``answers`` answers by one contributor's agent: (asker, author, topic)."""
    asker = joined_person(app)
    topic = asker.ask()
    author, agent = contributor(app)
    for _ in range(answers):
        answer(app, topic, agent)
    return asker, author, agent, topic


@sqlite_only
@pytest.mark.parametrize("reader", ["visitor", "asker", "contributor"])
def test_a_question_page_runs_as_many_statements_with_40_answers_as_with_5(app, db, reader):
    few = answered_topic(app, 5)
    many = answered_topic(app, 40)
    assert db.value("SELECT message_count FROM topics WHERE id = :id", {"id": many[3]}) == 40

    def page(world) -> list[str]:
        asker, author, _, topic = world
        client = {"visitor": app.test_client(), "asker": asker.http,
                  "contributor": author.http}[reader]
        return statements_of(app, client, f"/q/{topic}")

    page(few)  # the first request of a client fills what is read once per process
    assert len(page(many)) == len(page(few)) <= 20


@sqlite_only
def test_the_agent_calls_run_as_many_statements_with_40_answers_as_with_5(app):
    few, many = answered_topic(app, 5), answered_topic(app, 40)
    counts = []
    for _, _, agent, topic in (few, many):
        with Statements(app) as context:
            assert agent.get("get_context", topic=topic).status_code == 200
        with Statements(app) as listing:
            assert agent.get("list_topics").status_code == 200
        counts.append((len(context.seen), len(listing.seen)))
    assert counts[0] == counts[1]
    assert counts[0][0] <= 8 and counts[0][1] <= 4


@sqlite_only
@pytest.mark.parametrize("path", ["/", "/communities", "/c/lobby", "/questions"])
def test_a_listing_runs_as_many_statements_with_30_questions_as_with_3(app, path):
    asker = joined_person(app)
    visitor = app.test_client()
    for _ in range(3):
        asker.ask()
    statements_of(app, visitor, path)
    before = len(statements_of(app, visitor, path))
    for _ in range(27):
        asker.ask()
    after = statements_of(app, visitor, path)
    assert len(after) == before <= 4
    assert not any(re.search(r"COUNT\(\*\) FROM (topics|memberships)", s) for s in after), after


# --- the counts the listings show, kept instead of counted ---------------------------------

def _counts(db, community: str) -> tuple[int, int]:
    row = db.one("SELECT member_count, topic_count FROM communities WHERE id = :id",
                 {"id": community})
    return row["member_count"], row["topic_count"]


def _counted(db, community: str) -> tuple[int, int]:
    return (db.value("SELECT COUNT(*) FROM memberships WHERE community_id = :id", {"id": community}),
            db.value("SELECT COUNT(*) FROM topics WHERE community_id = :id", {"id": community}))


def _listed(person: Person, community: str) -> tuple[int, int]:
    r = person.http.get("/api/communities", query_string={"scope": "all"})
    assert r.status_code == 200, r.get_json()
    listed = next(c for c in r.get_json()["communities"] if c["id"] == community)
    return listed["memberCount"], listed["topicCount"]


def test_joining_leaving_and_asking_move_the_kept_counts(app, db):
    owner = Person(app).register()
    created = owner.communities_post("create", name="备份讨论", description="")
    assert created.status_code == 200, created.get_json()
    community = created.get_json()["id"]
    assert _counts(db, community) == (1, 0) == _listed(owner, community)
    member = Person(app).register()
    member.join(community)
    member.join(community)  # a repeated join adds no one
    owner.ask(community=community)
    member.ask(community=community)
    assert _counts(db, community) == (2, 2) == _counted(db, community) == _listed(member, community)
    for _ in range(2):  # a repeated leave removes no one
        left = member.communities_post("leave", community=community)
        assert left.status_code == 200, left.get_json()
    assert _counts(db, community) == (1, 2) == _counted(db, community) == _listed(owner, community)
    page = app.test_client().get(f"/c/{community}")
    assert page.status_code == 200


def test_a_refused_question_or_leave_moves_no_count(app, db):
    owner = Person(app).register()
    community = owner.communities_post("create", name="只读", description="").get_json()["id"]
    outsider = Person(app).register()
    refused = outsider.web_post("topic", title="不是成员能提问吗？", community=community)
    assert refused.status_code == 403
    creator_leaves = owner.communities_post("leave", community=community)
    assert creator_leaves.status_code == 409
    assert _counts(db, community) == (1, 0) == _counted(db, community)


@sqlite_only
def test_the_migration_counts_what_an_older_database_holds(settings):
    """Migration 0011 on a database at version 10 fills the counts from the rows."""
    app = create_app(settings)
    asker = joined_person(app)
    asker.ask()
    joined_person(app)
    app.config["LOBBYTALKS"].db.close_thread_connection()
    old = sqlite3.connect(settings.db_path)
    old.executescript(UNDO_0011 + "DELETE FROM schema_migrations WHERE version >= 11;")
    old.close()
    again = create_app(settings)
    db = again.config["LOBBYTALKS"].db
    assert _counts(db, "lobby") == (2, 1) == _counted(db, "lobby")
    assert db.value("SELECT MAX(version) FROM schema_migrations") >= 11


# --- the plans behind the hot queries -------------------------------------------------------

def _walks_indexes_only(plan: str) -> bool:
    """No full scan of a table and no sort in a temporary B-tree (an FTS5 MATCH shows as a
    SCAN of its virtual table: that is its index)."""
    scans = re.findall(r"\bSCAN (\w+)\b(?! USING (?:COVERING )?INDEX| VIRTUAL TABLE)", plan)
    return not scans and "TEMP B-TREE" not in plan


# name, parameters, the index its plan must use (the listings of communities walk
# communities_created: a table of a few hundred rows, read a page at a time).
HOT_QUERIES = [
    ("list_communities", {"viewer": 1, "joined_only": 0, "limit": 61, "offset": 0},
     "communities_created"),
    ("get_community", {"viewer": 1, "id": "lobby"}, "sqlite_autoindex_communities_1"),
    ("get_topic", {"id": "t_x"}, "sqlite_autoindex_topics_1"),
    ("list_open_topics_newest", {"viewer": 1, "community": None, "limit": 21, "room": 200},
     "topics_open_created"),
    ("list_open_topics_requested", {"viewer": 1, "community": None, "limit": 21, "room": 200},
     "agent_requests_user_created"),
    ("list_latest_messages", {"topic_id": "t_x", "limit": 200}, "messages_topic_created"),
    ("list_latest_message_ids", {"topic_id": "t_x", "limit": 200}, "messages_topic_created"),
    ("get_message_of_user_in_topic", {"topic_id": "t_x", "user_id": 1}, "messages_topic_user"),
    ("get_membership", {"community_id": "lobby", "user_id": 1}, "PRIMARY KEY"),
    ("list_last_task_per_profile", {"user_id": 1}, "tasks_profile_created"),
    ("recent_questions_by", {"author": 1, "since": 0, "amount": 10}, "topics_author_created"),
    ("list_questions_by_author", {"author": 1, "status": "open", "limit": 51, "offset": 50},
     "topics_author_questions"),
    ("list_browse_newest", {"before_created": 2**62, "before_id": "", "community": None,
                            "status": None, "intent": None, "answered": None, "card": None,
                            "match": None, "limit": 21}, "topics_"),
]


@sqlite_only
@pytest.mark.parametrize("name, params, index", HOT_QUERIES, ids=[q[0] for q in HOT_QUERIES])
def test_a_hot_query_walks_its_index(conn, name, params, index):
    plan = query_plan(conn, name, params)
    assert index in plan and _walks_indexes_only(plan), plan


@sqlite_only
@pytest.mark.parametrize("name", ["list_published_cards_by_author",
                                  "count_published_cards_by_author"])
def test_a_profiles_cards_are_found_from_the_persons_questions(conn, name):
    """Joined the other way, a profile walked every published card of the site and kept
    those of the person's questions."""
    plan = query_plan(conn, name, {"author": 1, "limit": 51})
    assert plan.startswith("SEARCH t USING INDEX topics_author_created"), plan
    assert "SCAN" not in plan, plan


@sqlite_only
@pytest.mark.parametrize("name", ["list_communities", "get_community"])
def test_the_community_listings_count_nothing(conn, name):
    plan = query_plan(conn, name, {"viewer": 1, "joined_only": 0, "limit": 61, "offset": 0,
                              "id": "lobby"})
    assert "SEARCH t " not in plan and "(community_id=?)" not in plan, plan


# --- renderings kept between requests show no one more than their rights ------------------

def test_a_rendered_answer_leaves_the_page_once_hidden_and_never_reaches_a_visitor(app, db):
    from lobbytalks.services import accounts
    asker, author, agent, topic = answered_topic(app, 0)
    conclusion = "只在这一条回答里出现的结论 [S1]：用 SQLite 在线备份 API 得到一致副本，用于检查缓存。"
    claimed = agent.claim(topic).get_json()["task"]["id"]
    message = agent.post("submit_result", taskId=claimed,
                         **good_result(conclusion=conclusion)).get_json()["messageId"]
    marker = "只在这一条回答里出现的结论"
    assert marker in asker.http.get(f"/q/{topic}").get_data(as_text=True)  # rendered, kept
    assert marker not in app.test_client().get(f"/q/{topic}").get_data(as_text=True)
    admin = Person(app).register()
    assert accounts.set_admin(db, admin.username, True)
    assert admin.web_post("hide_answer", message=message, reason="垃圾信息").status_code == 200
    assert db.value("SELECT hidden_at IS NOT NULL FROM messages WHERE id = :id",
                    {"id": message}) == 1
    for reader in (asker.http, author.http, app.test_client()):
        assert marker not in reader.get(f"/q/{topic}").get_data(as_text=True)


def test_an_answer_read_once_leaves_get_context_once_hidden(app, db):
    from lobbytalks.services import accounts
    _, _, agent, topic = answered_topic(app, 2)
    first = agent.get("get_context", topic=topic).get_json()
    ids = [m["id"] for m in first["messages"]]
    assert len(ids) == 2 and agent.get("get_context", topic=topic).get_json() == first
    admin = Person(app).register()
    assert accounts.set_admin(db, admin.username, True)
    assert admin.web_post("hide_answer", message=ids[0], reason="垃圾信息").status_code == 200
    again = agent.get("get_context", topic=topic).get_json()
    assert [m["id"] for m in again["messages"]] == ids[1:]
    assert again["messages"][0] == first["messages"][1]  # the kept parse, unchanged


@sqlite_only
def test_a_claim_with_no_lease_to_settle_updates_none(app):
    """Settling is asked about first: a claim with no lease past its end or left by a dead
    connection runs neither settling UPDATE (tests/test_leases.py settles the others)."""
    asker = joined_person(app)
    first, second = asker.ask(), asker.ask()
    _, agent = contributor(app)
    assert agent.claim(first).status_code == 200  # a lease that is still running
    claimed, seen = written(app, lambda: agent.claim(second))
    assert claimed.status_code == 200
    assert any(sql.lstrip().startswith("INSERT INTO tasks") for sql in seen), seen
    updates = [sql for sql in seen if sql.lstrip().upper().startswith("UPDATE")]
    assert updates == [], updates


@sqlite_only
def test_a_claim_reads_the_full_text_right_once(app):
    """The claim has just read whether the agent's person may read the whole discussion;
    the frozen context it returns uses that answer instead of asking again."""
    _, _, agent, topic = answered_topic(app, 1)  # the agent contributed: the right holds
    claimed, seen = written(app, lambda: agent.claim(topic))
    assert claimed.status_code == 200, claimed.get_json()
    assert claimed.get_json()["context"]["allowed"] is True
    right = [sql for sql in seen if "FROM messages" in sql and "LIMIT 1" in sql]
    assert len(right) == 1, right


@sqlite_only
def test_a_claim_reads_the_question_version_once(app):
    """The version's row gives the public context and, sealed, the private one: one read."""
    asker = joined_person(app)
    topic = asker.ask(privateContext="内部网段 10.2.0.0/16，只给回答过的人看")
    agent = asker.new_agent("自家虾")  # the asker may read all: the private context comes too
    claimed, seen = written(app, lambda: agent.claim(topic))
    assert claimed.status_code == 200, claimed.get_json()
    assert claimed.get_json()["context"]["question"]["privateContext"].startswith("内部网段")
    # (the memories' read names the versions too: only for a question taken down, none here)
    reads = [sql for sql in seen if "FROM question_versions" in sql and "FROM memories" not in sql]
    assert len(reads) == 1, reads
