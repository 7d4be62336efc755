"""The WAL is checkpointed off the request path, by a thread that ends when writes stop."""
from __future__ import annotations

import time

import pytest

from lobbytalks.checkpoint import Checkpointer
from lobbytalks.db import Database

# WAL checkpoints of the SQLite file.
pytestmark = pytest.mark.sqlite_only


def _wait(predicate, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_request_connections_do_not_checkpoint_in_commits(app):
    db = app.config["LOBBYTALKS"].db
    assert db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0


def test_commits_are_checkpointed_by_a_thread_that_ends_when_idle(app, monkeypatch):
    monkeypatch.setattr(Checkpointer, "interval", 0.02)
    monkeypatch.setattr(Checkpointer, "idle_rounds", 3)
    db: Database = app.config["LOBBYTALKS"].db
    before = db.checkpointer.completed
    with db.transaction() as conn:
        conn.execute("INSERT INTO islands (id, name, position) VALUES ('x', 'x', 99)")
    assert db.checkpointer.running
    assert _wait(lambda: not db.checkpointer.running)
    assert db.checkpointer.completed == before + 1
    # Every frame of the WAL is now in the database file.
    busy, logged, moved = db.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert busy == 0 and logged == moved
    # The next commit starts it again.
    with db.transaction() as conn:
        conn.execute("DELETE FROM islands WHERE id = 'x'")
    assert db.checkpointer.running
    assert _wait(lambda: not db.checkpointer.running)
