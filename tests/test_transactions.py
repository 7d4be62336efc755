"""db.transaction(): a failed COMMIT is rolled back, and nesting is tracked, not guessed."""
from __future__ import annotations

import sqlite3

import pytest

from conftest import count, open_database
from helpers import assert_web_error

# SQLite's own transaction machinery: deferred foreign keys, its error classes, the write
# connection swapped out.
pytestmark = pytest.mark.sqlite_only


def orphan_membership(conn: sqlite3.Connection) -> None:
    """A write whose foreign key is checked only at COMMIT, which then refuses it."""
    conn.execute("PRAGMA defer_foreign_keys = ON")
    conn.execute("INSERT INTO memberships (community_id, user_id, created) "
                 "VALUES ('no-such-community', 999999, 0)")


def add_community(conn: sqlite3.Connection, community_id: str) -> None:
    conn.execute("INSERT INTO communities (id, name, created) VALUES (:id, :id, 0)",
                 {"id": community_id})


class FailingCommit:
    """The write connection, except that its next COMMIT fails as a full disk would."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.real, self.failures = conn, 1

    def execute(self, sql: str, *args):
        if sql == "COMMIT" and self.failures:
            self.failures -= 1
            raise sqlite3.OperationalError("database or disk is full")
        return self.real.execute(sql, *args)

    def __getattr__(self, name: str):
        return getattr(self.real, name)


@pytest.fixture
def database(app):
    return app.config["LOBBYTALKS"].db


@pytest.fixture
def db(settings):
    """Another connection to the same database: it sees only what was committed."""
    with open_database(settings.data_dir) as observer:
        yield observer


def test_deferred_constraint_at_commit_rolls_back_and_the_next_write_commits(database, db):
    with pytest.raises(sqlite3.IntegrityError):
        with database.transaction() as conn:
            add_community(conn, "lost")
            orphan_membership(conn)
    assert not database.conn.in_transaction
    with database.transaction() as conn:
        add_community(conn, "kept")
    # Another connection sees the second write, and nothing of the failed one.
    assert count(db, "communities", "id = 'kept'") == 1
    assert count(db, "communities", "id = 'lost'") == 0
    assert count(db, "memberships", "community_id = 'no-such-community'") == 0


def test_commit_failing_with_an_io_error_rolls_back(database, db):
    database._write_conn = FailingCommit(database._writer())
    with pytest.raises(sqlite3.OperationalError):
        with database.transaction() as conn:
            add_community(conn, "lost")
    with database.transaction() as conn:
        add_community(conn, "kept")
    assert count(db, "communities", "id IN ('lost', 'kept')") == 1
    assert count(db, "communities", "id = 'kept'") == 1


def test_failed_commit_during_a_request_does_not_poison_the_next_one(app, person, db):
    database = app.config["LOBBYTALKS"].db
    r = person.communities_post("create", name="第一个社区")  # opens this thread's connection
    assert r.status_code == 200
    database._write_conn = FailingCommit(database._writer())
    r = person.communities_post("create", name="写不进去")
    assert_web_error(r, 503)
    r = person.communities_post("create", name="第二个社区")
    assert r.status_code == 200, r.get_json()
    names = {row[0] for row in db.all("SELECT name FROM communities")}
    assert {"第一个社区", "第二个社区"} <= names and "写不进去" not in names


def test_nested_failure_undoes_only_the_inner_part(database, db):
    with database.transaction() as conn:
        add_community(conn, "outer")
        with pytest.raises(RuntimeError):
            with database.transaction() as inner:
                add_community(inner, "inner")
                raise RuntimeError("inner part fails")
        with database.transaction() as inner:
            add_community(inner, "second-inner")
    assert {row[0] for row in db.all(
        "SELECT id FROM communities WHERE id IN ('outer', 'inner', 'second-inner')")} == {
        "outer", "second-inner"}


def test_nothing_is_visible_before_the_outer_commit(database, db):
    with database.transaction() as conn:
        with database.transaction() as inner:
            add_community(inner, "pending")
        assert count(db, "communities", "id = 'pending'") == 0
    assert count(db, "communities", "id = 'pending'") == 1


def test_a_transaction_left_open_is_rolled_back_not_joined(database, db):
    database.conn.execute("BEGIN")
    add_community(database.conn, "leaked")
    with database.transaction() as conn:
        add_community(conn, "fresh")
    assert count(db, "communities", "id = 'fresh'") == 1
    assert count(db, "communities", "id = 'leaked'") == 0


def test_a_connection_that_cannot_roll_back_is_replaced(database, db):
    class BrokenRollback(FailingCommit):
        def execute(self, sql: str, *args):
            if sql == "ROLLBACK":
                raise sqlite3.OperationalError("disk I/O error")
            return super().execute(sql, *args)

    broken = BrokenRollback(database._writer())
    database._write_conn = broken
    with pytest.raises(sqlite3.OperationalError):
        with database.transaction() as conn:
            add_community(conn, "lost")
    assert database._writer() is not broken
    with database.transaction() as conn:
        add_community(conn, "kept")
    assert count(db, "communities", "id = 'kept'") == 1
    assert count(db, "communities", "id = 'lost'") == 0
