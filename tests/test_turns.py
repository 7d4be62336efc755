"""Worker threads taking turns (lobbytalks/turns.py, dispatchers.TurnTakingDispatcher): one task
runs at a time, every task runs, a task waiting outside the interpreter lets the others go
on and gets its turn back before any further task starts, and the server still stops."""
from __future__ import annotations

import logging
import threading

import pytest
import requests

from lobbytalks import turns
from lobbytalks.dispatchers import Dispatcher, TurnTakingDispatcher
from lobbytalks.settings import Settings

from conftest import LiveServer

WAIT = 10  # seconds: only reached if something hangs


class Recorder:
    """Tasks that note when they start and end, and check that none overlap."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[tuple[str, str]] = []
        self.running = 0
        self.overlapped = False
        self.done = threading.Semaphore(0)

    def task(self, name: str, body=lambda: None):
        recorder = self

        class Task:
            def service(self) -> None:
                recorder._enter(name)
                try:
                    body()
                finally:
                    recorder._leave(name)

            def cancel(self) -> None:
                pass
        return Task()

    def _enter(self, name: str) -> None:
        with self.lock:
            self.running += 1
            self.overlapped |= self.running > 1
            self.events.append(("start", name))

    def _leave(self, name: str) -> None:
        with self.lock:
            self.running -= 1
            self.events.append(("end", name))
        self.done.release()

    def wait_for(self, count: int) -> None:
        for _ in range(count):
            assert self.done.acquire(timeout=WAIT), f"tasks hang: {self.events}"


@pytest.fixture
def dispatcher():
    tasks = TurnTakingDispatcher()
    tasks.set_thread_count(4)
    yield tasks
    tasks.shutdown(timeout=WAIT)
    assert not tasks.threads


def test_tasks_run_one_at_a_time_and_all_of_them_run(dispatcher):
    recorder = Recorder()
    for n in range(200):
        dispatcher.add_task(recorder.task(f"t{n}", body=lambda: sum(range(2000))))
    recorder.wait_for(200)
    assert not recorder.overlapped
    assert sorted(name for kind, name in recorder.events if kind == "end") == \
        sorted(f"t{n}" for n in range(200))


def test_a_task_that_sets_its_turn_aside_lets_the_queue_go_on_and_is_then_first(dispatcher):
    recorder = Recorder()
    release = threading.Event()
    others_ran = threading.Event()

    def slow_wait():
        with turns.set_aside():  # as a password hash does
            assert others_ran.wait(WAIT)  # the queue moves while this one waits
            release.wait(WAIT)

    def other():
        others_ran.set()

    dispatcher.add_task(recorder.task("slow", slow_wait))
    for n in range(3):
        dispatcher.add_task(recorder.task(f"other{n}", other))
    recorder.wait_for(3)
    assert ("end", "slow") not in recorder.events
    dispatcher.add_task(recorder.task("later", other))
    recorder.wait_for(1)  # "later" ran while "slow" still waited
    release.set()
    recorder.wait_for(1)
    assert recorder.events[-1] == ("end", "slow")


def test_a_returning_task_has_its_turn_before_further_tasks_start(dispatcher):
    # "slow" sets its turn aside; while it is away "busy" holds the turn and more tasks queue
    # behind it. When "slow" wants its turn back, no queued task starts before it resumes.
    events: list[str] = []
    back = threading.Event()
    busy_started = threading.Event()
    finish_busy = threading.Event()
    done = threading.Semaphore(0)

    class Task:
        def __init__(self, name, body):
            self.name, self.body = name, body

        def service(self):
            events.append(f"start {self.name}")
            self.body()
            events.append(f"end {self.name}")
            done.release()

        def cancel(self):
            pass

    def slow():
        with turns.set_aside():
            assert busy_started.wait(WAIT)
            for n in range(3):
                dispatcher.add_task(Task(f"queued{n}", lambda: None))
            finish_busy.set()
        back.set()

    def busy():
        busy_started.set()
        assert finish_busy.wait(WAIT)
        asking = threading.Event()  # until "slow" asks for its turn back (it then blocks)
        while not asking.wait(0.001):
            with dispatcher.lock:
                if dispatcher._returning:
                    asking.set()

    dispatcher.add_task(Task("slow", slow))
    dispatcher.add_task(Task("busy", busy))
    for _ in range(5):
        assert done.acquire(timeout=WAIT), events
    assert events.index("end slow") < events.index("start queued0")


def test_waiting_for_a_lock_held_elsewhere_sets_the_turn_aside(dispatcher):
    recorder = Recorder()
    lock = threading.Lock()
    lock.acquire()  # held by a thread that does not take turns (the mailer, say)

    def writer():
        with turns.waiting(lock):
            pass

    dispatcher.add_task(recorder.task("writer", writer))
    dispatcher.add_task(recorder.task("reader"))
    recorder.wait_for(1)
    assert recorder.events == [("start", "writer"), ("start", "reader"), ("end", "reader")]
    lock.release()
    recorder.wait_for(1)
    assert recorder.events[-1] == ("end", "writer")


def test_without_a_turn_set_aside_and_waiting_change_nothing():
    lock = threading.Lock()
    assert not turns.held()
    with turns.set_aside():
        assert not turns.held()
    with turns.waiting(lock):
        assert lock.locked()
    assert not lock.locked()


def test_stopping_ends_every_thread_with_work_still_queued():
    tasks = TurnTakingDispatcher()
    tasks.set_thread_count(3)
    recorder = Recorder()
    for n in range(50):
        tasks.add_task(recorder.task(f"t{n}"))
    tasks.shutdown(timeout=WAIT)
    assert not tasks.threads
    assert not recorder.overlapped


def test_queued_requests_are_reported_with_what_adds_capacity_there(caplog):
    with caplog.at_level(logging.WARNING, logger="waitress.queue"):
        TurnTakingDispatcher().add_task(Recorder().task("queued"))  # no threads: it waits
        Dispatcher().add_task(Recorder().task("queued"))
    turn_taking, competing = (record.getMessage() for record in caplog.records)
    assert "the process is busy: PostgreSQL with --workers adds capacity" in turn_taking
    assert "LOBBYTALKS_THREADS or --workers add capacity" in competing


def test_only_sqlite_takes_turns(tmp_path):
    assert turns.wanted(Settings.load(env={"LOBBYTALKS_DATA_DIR": str(tmp_path)}))
    assert not turns.wanted(Settings.load(env={
        "LOBBYTALKS_DATA_DIR": str(tmp_path),
        "LOBBYTALKS_DATABASE_URL": "postgresql://lobbytalks@localhost/lobbytalks"}))
    assert not turns.wanted(Settings.load(env={
        "LOBBYTALKS_DATA_DIR": str(tmp_path), "LOBBYTALKS_TAKE_TURNS": "false"}))
    assert not hasattr(Dispatcher(), "turn")


def test_a_served_app_answers_logins_and_reads_side_by_side(tmp_path):
    # Through `lobbytalks serve`: sign-ups (each an Argon2id hash, on SQLite with the turn
    # set aside) and reads at once from several clients all get their answers.
    live = LiveServer(tmp_path / "live")
    try:
        errors: list[str] = []

        def sign_up(n: int) -> None:
            response = requests.post(f"{live.url}/api/community", json={
                "action": "register", "username": f"person{n}", "password": "a long passphrase 1"},
                timeout=WAIT)
            if response.status_code != 200:
                errors.append(f"register {n}: {response.status_code} {response.text[:200]}")

        def read() -> None:
            for _ in range(20):
                response = requests.get(f"{live.url}/healthz", timeout=WAIT)
                if response.status_code != 200:
                    errors.append(f"healthz: {response.status_code}")

        threads = [threading.Thread(target=sign_up, args=(n,)) for n in range(4)]
        threads += [threading.Thread(target=read) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT * 3)
        assert not any(thread.is_alive() for thread in threads)
        assert errors == []
    finally:
        live.stop()
