"""The WAL is checkpointed off the request path, by a thread that ends when writes stop."""
from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

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


def _filled_database(tmp_path, transactions: int) -> Database:
    db = Database(tmp_path / "wal.db")
    with db.transaction() as conn:
        conn.execute("CREATE TABLE filler (v INTEGER)")
    for i in range(transactions):
        with db.transaction() as conn:
            conn.execute("INSERT INTO filler (v) VALUES (?)", (i,))
    db.checkpointer.stop()
    return db


def _statements_of_a_write(db: Database) -> list[tuple[str, bool]]:
    """What the writer's connection runs for one write transaction, each with whether
    another thread could have taken the write lock meanwhile."""
    seen: list[tuple[str, bool]] = []

    def note(sql: str) -> None:
        free = []
        probe = threading.Thread(target=lambda: free.append(
            db._write_lock.acquire(blocking=False) and (db._write_lock.release() or True)))
        probe.start()
        probe.join()
        seen.append((sql, free[0]))

    writer = db._writer()
    writer.set_trace_callback(note)
    try:
        with db.transaction() as conn:
            conn.execute("INSERT INTO filler (v) VALUES (-1)")
    finally:
        writer.set_trace_callback(None)
    return seen


def test_after_a_long_wal_the_next_writer_catches_up_holding_the_write_lock(tmp_path, monkeypatch):
    monkeypatch.setattr(Checkpointer, "restart_frames", 10)
    db = _filled_database(tmp_path, transactions=30)
    db.checkpointer._checkpoint()  # the bulk, with writers going on; it finds 30+ frames
    statements = _statements_of_a_write(db)
    assert [sql for sql, _ in statements][-2:] == ["COMMIT", "PRAGMA wal_checkpoint(PASSIVE)"]
    assert not any(free for _, free in statements)  # all of it under the write lock
    # Once: the writer after it just commits.
    assert [sql for sql, _ in _statements_of_a_write(db)][-1] == "COMMIT"
    db.close()


def test_a_short_wal_is_left_for_a_pause_in_the_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(Checkpointer, "restart_frames", 10)
    db = _filled_database(tmp_path, transactions=3)
    db.checkpointer._checkpoint()
    assert [sql for sql, _ in _statements_of_a_write(db)][-1] == "COMMIT"
    db.close()


def test_a_failed_catch_up_leaves_the_commit_standing(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(Checkpointer, "restart_frames", 10)
    db = _filled_database(tmp_path, transactions=30)
    db.checkpointer._checkpoint()

    class Refusing:
        """The writer's connection, refusing the checkpoint as a full disk would."""

        def __init__(self, conn):
            self.conn = conn

        def execute(self, sql, *args):
            if "wal_checkpoint" in sql:
                raise sqlite3.OperationalError("database or disk is full")
            return self.conn.execute(sql, *args)

    db.checkpointer.catch_up(Refusing(db._writer()))
    assert "catching up with the WAL failed" in caplog.text
    with db.transaction() as conn:
        conn.execute("INSERT INTO filler (v) VALUES (-2)")
    assert db.value("SELECT COUNT(*) FROM filler WHERE v = -2") == 1
    db.close()


def _wal_resets(db: Database) -> int:
    """The WAL header's checkpoint sequence number: SQLite adds one each time the WAL starts
    again from its beginning."""
    header = Path(db.path + "-wal").read_bytes()[:16]
    return int.from_bytes(header[12:16], "big")


def test_under_steady_writes_the_wal_starts_again_instead_of_growing(tmp_path, monkeypatch):
    """A writer that keeps committing: a checkpoint alone never finds the WAL all copied,
    so without the catch-up the WAL never started again and held every frame of the 2,000
    commits (25 MB, seen before it existed)."""
    monkeypatch.setattr(Checkpointer, "interval", 0.01)
    monkeypatch.setattr(Checkpointer, "restart_frames", 50)
    db = _filled_database(tmp_path, transactions=0)
    payload = "x" * 3000  # about a page per commit
    resets_before = None
    for i in range(2000):
        with db.transaction() as conn:
            conn.execute("INSERT INTO filler (v) VALUES (?)", (f"{i}{payload}",))
        if resets_before is None:
            resets_before = _wal_resets(db)
        time.sleep(0)  # as a request's own work between its commits lets other threads run
    resets = _wal_resets(db) - resets_before
    db.close()
    assert db.checkpointer.completed >= 3
    assert resets >= 2
