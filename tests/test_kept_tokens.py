"""The rows behind agent tokens, kept under the database's generation (auth._token_row):
looked up once while nothing changes, and never trusted past a write or the token's expiry."""
from __future__ import annotations

import sqlite3

import pytest
from conftest import advance
from helpers import assert_external_error

from lobbytalks.db import Q

pytestmark = pytest.mark.sqlite_only  # nothing is kept on PostgreSQL (kept.for_database)


def ok(response):
    assert response.status_code == 200, response.get_json()
    return response.get_json()


@pytest.fixture
def lookups(app, monkeypatch):
    """How often a token's row was read from the database."""
    database = app.config["LOBBYTALKS"].db
    real, seen = database.one, []

    def one(sql, params=()):
        if sql == Q.get_agent_by_token_digest:
            seen.append(params["digest"])
        return real(sql, params)

    monkeypatch.setattr(database, "one", one)
    return seen


def used(agent, lookups) -> None:
    """Two calls: the first records the token's use (a write, at most once a minute), the
    second reads the row again after that write; then the count starts afresh."""
    ok(agent.get("list_topics"))
    ok(agent.get("list_topics"))
    assert len(lookups) == 2
    lookups.clear()


def test_a_token_is_read_once_while_nothing_changes(agent, lookups):
    used(agent, lookups)
    ok(agent.get("list_communities"))
    ok(agent.get("list_topics"))
    assert lookups == []


def test_any_write_makes_the_next_call_read_the_token_again(agent, asker, lookups):
    used(agent, lookups)
    asker.ask("又一个问题")
    ok(agent.get("list_topics"))
    ok(agent.get("list_topics"))
    assert len(lookups) == 1


def test_a_token_revoked_by_another_process_is_refused_at_once(app, agent, db):
    ok(agent.get("list_topics"))
    other = sqlite3.connect(app.config["LOBBYTALKS"].db.path)
    with other:
        other.execute("UPDATE tokens SET revoked = 1 WHERE id = ?", (agent.token_id,))
    other.close()
    assert_external_error(agent.get("list_topics"), 401, "unauthorized")


def test_a_kept_token_still_expires_with_the_clock(agent, clock_file, lookups):
    used(agent, lookups)
    advance(clock_file, 30 * 86400 + 1)
    assert_external_error(agent.get("list_topics"), 401, "unauthorized")
    assert lookups == []  # refused on the kept row


def test_unknown_tokens_are_not_kept(app, client):
    tokens = app.config["LOBBYTALKS"].kept_tokens
    before = len(tokens)
    for n in range(5):
        r = client.get("/api/external?action=list_topics",
                       headers={"Authorization": f"Bearer lbt_{n:046d}"})
        assert_external_error(r, 401, "unauthorized")
    assert len(tokens) == before
