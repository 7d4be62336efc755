"""The WAL is checkpointed off the request path, by a thread that ends when writes stop."""
from __future__ import annotations

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



class _Probe:
    """A checkpoint connection noting, for each checkpoint, whether the write lock was
    held (another thread could not take it)."""

    def __init__(self, conn, write_lock, held):
        self._conn, self._lock, self._held = conn, write_lock, held

    def execute(self, sql, *args):
        if "wal_checkpoint" in sql:
            free = []
            probe = threading.Thread(target=lambda: free.append(
                self._lock.acquire(blocking=False) and (self._lock.release() or True)))
            probe.start()
            probe.join()
            self._held.append(not free[0])
        return self._conn.execute(sql, *args)

    def close(self):
        self._conn.close()


def _filled_database(tmp_path, transactions: int) -> Database:
    db = Database(tmp_path / "wal.db")
    with db.transaction() as conn:
        conn.execute("CREATE TABLE filler (v INTEGER)")
    for i in range(transactions):
        with db.transaction() as conn:
            conn.execute("INSERT INTO filler (v) VALUES (?)", (i,))
    db.checkpointer.stop()
    return db


def _checkpoints_holding_lock(db: Database, monkeypatch) -> list[bool]:
    import lobbytalks.db as db_package
    held: list[bool] = []
    real_connect = db_package.connect
    monkeypatch.setattr(db_package, "connect",
                        lambda path: _Probe(real_connect(path), db._write_lock, held))
    db.checkpointer._checkpoint()
    monkeypatch.setattr(db_package, "connect", real_connect)
    return held


def test_a_long_wal_is_caught_up_with_under_the_write_lock(tmp_path, monkeypatch):
    monkeypatch.setattr(Checkpointer, "restart_frames", 10)
    db = _filled_database(tmp_path, transactions=30)
    # The bulk is copied with writers going on, what they added meanwhile without them.
    assert _checkpoints_holding_lock(db, monkeypatch) == [False, True]
    db.close()


def test_a_short_wal_never_holds_writers_off(tmp_path, monkeypatch):
    monkeypatch.setattr(Checkpointer, "restart_frames", 10)
    db = _filled_database(tmp_path, transactions=3)
    assert _checkpoints_holding_lock(db, monkeypatch) == [False]
    db.close()


def test_under_steady_writes_the_wal_starts_again_instead_of_growing(tmp_path, monkeypatch):
    """A writer that keeps committing: a checkpoint alone never finds the WAL all copied,
    so without the catch-up the WAL would hold every frame of the 2,000 commits."""
    monkeypatch.setattr(Checkpointer, "interval", 0.01)
    monkeypatch.setattr(Checkpointer, "restart_frames", 50)
    db = _filled_database(tmp_path, transactions=0)
    payload = "x" * 3000  # about a page per commit
    for i in range(2000):
        with db.transaction() as conn:
            conn.execute("INSERT INTO filler (v) VALUES (?)", (f"{i}{payload}",))
        time.sleep(0)  # as a request's own work between its commits lets other threads run
    written = 2000 * 4096
    wal = Path(db.path + "-wal").stat().st_size
    db.close()
    assert db.checkpointer.completed >= 3
    assert wal < written / 4
