"""Kept pages (lobbytalks/blueprints/kept_pages.py): served again only while nothing
changed, only to the reader they were made for, never after a write that changes them."""
from __future__ import annotations

import html as htmllib
from unittest import mock

import pytest
from conftest import advance, asked_with_private, write_from_outside
from helpers import actions
from qa_helpers import answer

from lobbytalks import create_app, kept
from lobbytalks.blueprints import kept_pages
from lobbytalks.db import pgsql
from lobbytalks.quotas import LEASE_SECONDS

PRIVATE = "私密：生产库有 40 GB。"
SHARED = "用 SQLite 在线备份 API 可以在服务运行时得到一致副本 [S1]，不要直接复制文件。"


def visitor_page(app, path: str) -> str:
    response = app.test_client().get(path)
    assert response.status_code == 200
    return htmllib.unescape(response.get_data(as_text=True))


def ok(response):
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def statements_of(db, call) -> list[str]:
    """What the app's connections on this thread ran during ``call`` (the test client serves
    on the test's own thread)."""
    seen: list[str] = []
    if db.dialect == "sqlite":
        db.conn.set_trace_callback(seen.append)
        try:
            call()
        finally:
            db.conn.set_trace_callback(None)
        return seen
    real = pgsql.Connection.execute

    def execute(self, sql, params=()):
        seen.append(sql)
        return real(self, sql, params)
    with mock.patch.object(pgsql.Connection, "execute", execute):
        call()
    return seen


def generation_check(app) -> str:
    return app.config["LOBBYTALKS"].generation.statement


@pytest.mark.parametrize("path", ["/", "/communities", "/c/lobby", "/questions",
                                  "/questions?q=备份", "/q/{topic}", "/u/{asker}"])
def test_a_visitor_is_served_the_kept_page_until_something_changes(app, db, asker, topic, path):
    path = path.format(topic=topic, asker=asker.username)
    first = visitor_page(app, path)
    again: list[str] = []
    assert statements_of(db, lambda: again.append(visitor_page(app, path))) == [
        generation_check(app)]
    assert again == [first]
    asker.ask("又一个问题")  # any write: the next visitor's page is rendered afresh
    assert len(statements_of(db, lambda: visitor_page(app, path))) > 1


def reader_page(person, path: str) -> str:
    response = person.http.get(path)
    assert response.status_code == 200
    return htmllib.unescape(response.get_data(as_text=True))


def test_a_signed_in_person_never_gets_the_visitors_page(app, asker):
    visitor_page(app, "/")
    page = reader_page(asker, "/")
    assert asker.username in page and "/inbox" in page
    assert asker.username not in visitor_page(app, "/").split("<main")[0]


@pytest.mark.parametrize("path", ["/", "/tasks", "/agents", "/inbox", "/c/lobby"])
def test_each_reader_gets_their_own_page(app, asker, member, path):
    asker.new_agent("题主的虾")
    mine, theirs = reader_page(asker, path), reader_page(member, path)
    assert asker.username in mine and asker.username not in theirs.split("<main")[0]
    assert member.username in theirs and member.username not in mine.split("<main")[0]
    assert reader_page(asker, path) == mine


def test_a_signed_in_readers_page_is_kept_until_something_changes(app, db, asker, topic):
    first = reader_page(asker, f"/q/{topic}")
    seen = statements_of(db, lambda: reader_page(asker, f"/q/{topic}"))
    assert len(seen) == 2 and seen[1] == generation_check(app)  # the session, then the check
    asker.ask("又一个问题")
    assert len(statements_of(db, lambda: reader_page(asker, f"/q/{topic}"))) > 2
    assert reader_page(asker, f"/q/{topic}") == first


def test_the_task_list_is_kept_while_no_lease_is_due_and_settles_one_that_is(
        app, db, member, agent, topic, clock_file, monkeypatch):
    """/tasks ends leases that can no longer finish when its owner looks; with none due it
    writes nothing and locks nothing, so the page stays kept (on PostgreSQL a row lock is a
    commit, which would move the generation on every view)."""
    task = ok(agent.claim(topic))["task"]["id"]
    reader_page(member, "/tasks")
    seen = statements_of(db, lambda: reader_page(member, "/tasks"))
    assert len(seen) == 2 and seen[1] == generation_check(app)  # the session, then the check
    advance(clock_file, LEASE_SECONDS + 1)
    later = kept.time.monotonic() + kept.KEPT_SECONDS + 0.1  # what was kept has run out
    monkeypatch.setattr(kept.time, "monotonic", lambda: later)
    reader_page(member, "/tasks")
    assert db.value("SELECT state FROM tasks WHERE id = :id", {"id": task}) == "expired"


def test_leaving_a_community_shows_at_once(app, member):
    leave, join = {"action": "leave", "community": "lobby"}, {"action": "join", "community": "lobby"}
    assert leave in actions(reader_page(member, "/c/lobby"))
    ok(member.communities_post("leave", community="lobby"))
    page = actions(reader_page(member, "/c/lobby"))
    assert join in page and leave not in page


def test_a_logged_out_session_gets_the_visitors_page(app, asker):
    assert asker.username in reader_page(asker, "/")
    ok(asker.web_post("logout"))
    assert asker.username not in reader_page(asker, "/").split("<main")[0]


def test_each_language_has_its_own_page(app):
    assert 'lang="zh-CN"' in visitor_page(app, "/")
    assert 'lang="en"' in visitor_page(app, "/?lang=en")
    assert 'lang="zh-CN"' in visitor_page(app, "/")


def test_a_closed_question_or_a_new_title_reaches_the_visitor_at_once(app, asker):
    topic = asker.ask("第一版标题")
    for path in ("/", f"/q/{topic}"):
        assert "第一版标题" in visitor_page(app, path)
    ok(asker.web_post("revise", topic=topic, title="第二版标题", note="改"))
    assert "第二版标题" in visitor_page(app, f"/q/{topic}")
    assert "第二版标题" in visitor_page(app, "/")
    ok(asker.web_post("close", topic=topic))
    assert "第二版标题" not in visitor_page(app, "/")


def test_a_withdrawn_share_leaves_the_visitors_page_with_the_write(app):
    asker, topic, author, agent = asked_with_private(app, "怎样备份运行中的 SQLite？", PRIVATE, "甲虾")
    message = answer(agent, topic, conclusion=SHARED)
    ok(author.web_post("share", message=message, sharePublic=True))
    ok(asker.web_post("card_preview", topic=topic))
    ok(asker.web_post("card_publish", topic=topic))
    assert "在线备份 API" in visitor_page(app, f"/q/{topic}")
    ok(author.web_post("share", message=message, sharePublic=False))
    page = visitor_page(app, f"/q/{topic}")
    assert "在线备份 API" not in page and PRIVATE not in page


def test_a_write_from_another_process_is_noticed(app, asker, settings):
    topic = asker.ask("别的进程会改这个标题")
    assert "别的进程会改这个标题" in visitor_page(app, f"/q/{topic}")
    # as `lobbytalks admin` would, or another `serve` process on PostgreSQL
    write_from_outside(settings, "UPDATE topics SET title = '改过的标题' WHERE id = :id",
                       {"id": topic})
    assert "改过的标题" in visitor_page(app, f"/q/{topic}")


def test_a_page_kept_by_one_process_is_not_served_after_anothers_write(app, asker, settings):
    """Two apps on one database, as two `serve` processes: each keeps its own pages, and a
    write through either reaches the other's next visitor."""
    other = create_app(settings)
    topic = asker.ask("两个进程都看这个问题")
    for each in (app, other):
        assert "两个进程都看这个问题" in visitor_page(each, "/")
        kept_by_now = statements_of(each.config["LOBBYTALKS"].db, lambda: visitor_page(each, "/"))
        assert kept_by_now == [generation_check(each)]
    ok(asker.web_post("close", topic=topic))  # through the first app
    assert "两个进程都看这个问题" not in visitor_page(other, "/")
    other.config["LOBBYTALKS"].db.close()


def test_a_kept_page_lives_a_few_seconds_at_most(app, db, monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(kept.time, "monotonic", lambda: now[0])
    visitor_page(app, "/")
    assert len(statements_of(db, lambda: visitor_page(app, "/"))) == 1
    now[0] += kept.KEPT_SECONDS + 0.1
    assert len(statements_of(db, lambda: visitor_page(app, "/"))) > 1


def test_an_error_page_is_not_kept(app, db):
    assert app.test_client().get("/q/tpc_nope").status_code == 404
    assert len(app.extensions[kept_pages.EXTENSION]) == 0



def test_an_address_with_arguments_no_page_reads_is_answered_but_not_kept(app, db, topic):
    """Made-up arguments would make every request a page of its own: a stream of them
    would push out every page worth keeping."""
    visitor_page(app, f"/q/{topic}")
    pages = app.extensions[kept_pages.EXTENSION]
    assert len(pages) == 1
    for n in range(5):
        made_up = visitor_page(app, f"/q/{topic}?r={n}")
        assert f"r={n}" in made_up  # its links carry it along: no other address's page
    assert len(pages) == 1
    # the page kept for the plain address is still served without rendering it again
    assert statements_of(db, lambda: visitor_page(app, f"/q/{topic}")) == [
        generation_check(app)]
    # the arguments pages read still have their pages kept
    visitor_page(app, f"/q/{topic}?page=1&lang=en")
    visitor_page(app, "/questions?q=备份&status=open&sort=new&community=lobby")
    assert len(pages) == 3


def test_every_argument_a_kept_page_reads_is_one_its_pages_are_kept_for():
    """A page reading an argument missing from PAGE_ARGS would never be kept with it."""
    import inspect
    import re
    from lobbytalks.blueprints import (web, web_agents, web_base, web_browse, web_inbox,
                                       web_people, web_questions)
    read: set[str] = set()
    for module in (web, web_agents, web_base, web_browse, web_inbox, web_people, web_questions):
        source = inspect.getsource(module)
        read.update(re.findall(r'(?:args\.get|int_arg|choice_arg)\("(\w+)"', source))
        for names in re.findall(r"if k in \(([^)]*)\)", source):  # the task list's filters
            read.update(re.findall(r'"(\w+)"', names))
    assert {"page", "q", "topic", "after", "before"} <= read  # the search finds them
    read -= {"action", "next", "needed"}  # read only by pages that are never kept
    assert read <= kept_pages.PAGE_ARGS, read - kept_pages.PAGE_ARGS
