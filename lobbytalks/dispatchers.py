"""The queues waitress' worker threads take requests from (``lobbytalks serve``).

``Dispatcher`` is waitress' own, saying once a minute that requests wait for a thread;
``TurnTakingDispatcher`` (on SQLite) lets one worker at a time serve (``lobbytalks.turns``).
"""
from __future__ import annotations

import time
from typing import Any

from waitress.task import ThreadedTaskDispatcher

from . import turns

# At most one "requests are waiting for a thread" line in this many seconds.
QUEUE_WARNING_SECONDS = 60


class Dispatcher(ThreadedTaskDispatcher):
    """waitress' task queue, saying that requests wait for a thread once a minute.

    waitress logs "Task queue depth is N" for every request that finds no idle thread, and
    does it holding the queue's lock: under steady load that is a formatted log line per
    request, serialising the threads (healthz at concurrency 8 on 4 threads spent more time
    in that warning than in the app). The news is the same, so it is summed up instead.
    """

    capacity = "LOBBYTALKS_THREADS or --workers add capacity"

    def __init__(self) -> None:
        super().__init__()
        self._waits = 0
        self._warned_at = -float(QUEUE_WARNING_SECONDS)

    def add_task(self, task: Any) -> None:
        with self.lock:
            self.queue.append(task)
            self._wake_a_worker()
            idle = len(self.threads) - self.stop_count - self.active_count
            if len(self.queue) > idle:
                self._note_wait(len(self.queue) - idle)

    def _wake_a_worker(self) -> None:
        self.queue_cv.notify()

    def _note_wait(self, depth: int) -> None:
        self._waits += 1
        now = time.monotonic()
        if now - self._warned_at >= QUEUE_WARNING_SECONDS:
            self.queue_logger.warning(
                "requests are waiting for a worker thread: queue depth %d, %d requests waited "
                "since the last such line (%s)", depth, self._waits, self.capacity)
            self._warned_at, self._waits = now, 0


class TurnTakingDispatcher(Dispatcher):
    """The task queue served by one worker at a time (``lobbytalks.turns``).

    The worker holding the turn takes task after task; the others sleep until it runs out
    of work or sets its turn aside, and then one of them serves instead. A worker that wants
    its turn back has it before any further task is started. All counts are kept under the
    queue's lock, where every wake-up is decided:

    * ``_serving``: workers holding the turn, or about to, to serve the queue (0 or 1);
    * ``_returning``: workers waiting to take back a turn they set aside.
    """

    capacity = "the process is busy: PostgreSQL with --workers adds capacity"

    def __init__(self) -> None:
        super().__init__()
        self.turn = turns.Turn(self)
        self._serving = 0
        self._returning = 0

    def _wake_a_worker(self) -> None:
        if not self._serving and not self._returning:
            self.queue_cv.notify()

    def handler_thread(self, thread_no: int) -> None:
        while True:
            with self.lock:
                while self.stop_count == 0 and not self._may_serve():
                    self.active_count -= 1
                    self.queue_cv.wait()
                    self.active_count += 1
                if self.stop_count > 0:
                    self.active_count -= 1
                    self.stop_count -= 1
                    self.threads.discard(thread_no)
                    self.thread_exit_cv.notify()
                    return
                self._serving += 1
            with self.turn.taken():
                self._serve()

    def _may_serve(self) -> bool:
        return bool(self.queue) and not self._serving and not self._returning

    def _serve(self) -> None:
        """Tasks until none is left, someone wants their turn back, or the server stops."""
        while True:
            with self.lock:
                if not self.queue or self._returning or self.stop_count:
                    self._serving -= 1
                    return
                task = self.queue.popleft()
            try:
                task.service()
            except BaseException:
                self.logger.exception("Exception when servicing %r", task)

    # turns.Keeper
    def turn_set_aside(self) -> None:
        with self.lock:
            self._serving -= 1
            if self._may_serve():
                self.queue_cv.notify()

    def turn_wanted_back(self) -> None:
        with self.lock:
            self._returning += 1

    def turn_taken_back(self) -> None:
        with self.lock:
            self._returning -= 1
            self._serving += 1
