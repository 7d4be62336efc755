"""Moving the WAL into the database file on a thread of its own.

Request connections run with ``wal_autocheckpoint`` off: SQLite would otherwise checkpoint
inside whichever commit crosses 1000 pages, with the process-wide write lock held (the bench
saw such commits take about half a second while every other writer waited). Instead a
PASSIVE checkpoint runs here, at most once a second while there are commits, on a
connection opened for that checkpoint only (so nothing keeps the WAL index mapped between
checkpoints). The thread ends when writes stop and starts again with the next commit, so an
idle app holds none; ``stop`` ends it at once, before the files are replaced (restore).

A checkpoint copies the frames that were in the WAL when it began, and the WAL starts again
from its beginning only once every frame is in the database file. Under steady writes there
were always newer frames, so it never started again: the bench's claim cycle grew it by
48 MB a second without end, every commit wrote to newly allocated file pages (the kernel
zeroing each one) and every page read searched a longer WAL index. So when a checkpoint
here found more than ``restart_frames``, it copies again what came in while it ran, twice
(each pass shorter than the one before), and then the next write transaction, right after
its COMMIT and still holding the write lock, copies the few frames committed meanwhile
(``catch_up``: 3-4 ms at the bench's rate, against 35-45 ms on its 3 GB database without
the two passes); the commit after it starts the WAL afresh. That is done by the writer
rather than by this thread holding the lock: every time this thread comes back from SQLite
it waits for the interpreter behind the busy workers (up to 5 ms each time), which kept the
writers waiting 22-33 ms. A shorter WAL waits for a pause in the writes.
"""
from __future__ import annotations

import logging
import sqlite3
import threading

log = logging.getLogger("lobbytalks")
PASSIVE = "PRAGMA wal_checkpoint(PASSIVE)"  # never waits for readers or writers


class Checkpointer:
    interval = 1.0      # seconds between checkpoints while there are commits
    idle_rounds = 5     # quiet intervals before the thread ends
    restart_frames = 1000  # a WAL this long is caught up with under the write lock
    shortening_passes = 2  # copies of what came in meanwhile, before the writer's

    def __init__(self, path: str) -> None:
        self.path = path
        self._catch_up_wanted = False  # set here, cleared by the writer that catches up
        self.completed = 0
        self._lock = threading.Lock()
        self._dirty = False
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        with self._lock:
            return self._thread is not None

    def stop(self) -> None:
        """End the thread (if any) and wait for it; the next commit starts a new one."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            self._stopping.set()
            thread.join()
            self._stopping.clear()

    def notify(self) -> None:
        """Called after each commit: there is something to checkpoint."""
        with self._lock:
            self._dirty = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="lobbytalks-checkpoint",
                                                daemon=True)
                self._thread.start()

    def _take_work(self, idle: int) -> int | None:
        """The new idle count, or None when the thread should end (it is then forgotten)."""
        with self._lock:
            if self._stopping.is_set():
                self._thread = None
                return None
            if self._dirty:
                self._dirty = False
                return 0
            if idle + 1 >= self.idle_rounds:
                self._thread = None
                return None
            return idle + 1

    def _run(self) -> None:
        idle: int | None = 0
        try:
            while True:
                self._stopping.wait(self.interval)
                idle = self._take_work(idle)
                if idle is None:
                    return
                if idle == 0:
                    self._checkpoint()
        except sqlite3.Error:
            log.exception("WAL checkpoint failed; the next commit tries again")
            with self._lock:
                self._thread = None

    def _checkpoint(self) -> None:
        from .db import connect

        conn = connect(self.path)
        try:
            _, frames, _ = conn.execute(PASSIVE).fetchone()
            if frames > self.restart_frames:
                for _ in range(self.shortening_passes):
                    conn.execute(PASSIVE).fetchall()
                self._catch_up_wanted = True
            self.completed += 1
        finally:
            conn.close()

    def catch_up(self, conn: sqlite3.Connection) -> None:
        """Called by the writer after each COMMIT, holding the write lock: copy what was
        committed while the last checkpoint ran, if it found a long WAL. A failure only
        leaves the WAL as it was (the commit stands)."""
        if not self._catch_up_wanted:
            return
        self._catch_up_wanted = False
        try:
            conn.execute(PASSIVE).fetchall()
        except sqlite3.Error:
            log.warning("catching up with the WAL failed; the next checkpoint tries again",
                        exc_info=True)
