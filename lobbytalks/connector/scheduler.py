"""``agent run``: poll, choose, and keep at most ``max_tasks`` attempts going.

Choosing: the user's joined communities (or the ``--community`` ones) are polled with
jitter; questions this user's agents already answered in their current version (the server
says so in ``list_topics``) and versions this state folder already tried are skipped; questions the
user asked their agents to take come first, then the user's own questions, then the oldest
unanswered ones. A daily budget caps research runs (they cost the owner money) and quiet
hours pause new ones.
"""
from __future__ import annotations

import random
import threading
import time
from typing import Any, Callable

from ..quotas import MAX_LIVE_LEASES
from .attempt import AttemptRunner
from .choosing import priority, tried_since_asked
from .client import Client, ProtocolError, TokenRejected, Unreachable
from .commands import LocalFault
from .events import Reporter, describe
from .pacing import Stopped
from .plan import Plan, in_quiet_hours
from .state import StateStore

MAX_COMMUNITY_PAGES = 10
PRUNE_EVERY_SECONDS = 3600
# Quiet hours and a spent budget send nothing; a token revoked meanwhile is still noticed
# within this many seconds (one read), not at the next research.
TOKEN_CHECK_SECONDS = 300


def _account_refused(exc: ProtocolError) -> TokenRejected | None:
    """A 403 to a listing, which refuses only an account (a server before 2026-12-06 said
    so to a suspended owner's agent; now its 401 does): as final as a rejected token."""
    if exc.status != 403:
        return None
    return TokenRejected(exc.status, exc.code, exc.message)


class Scheduler:
    def __init__(self, client: Client, store: StateStore, runner: AttemptRunner,
                 reporter: Reporter, plan: Plan, *, now: Callable[[], int],
                 stop: threading.Event) -> None:
        self.client, self.store, self.runner, self.say = client, store, runner, reporter.emit
        self.plan, self.now, self.stop = plan, now, stop
        self._threads: list[threading.Thread] = []
        self._away: set[str] = set()  # attempts the server stayed away from: the next poll's
        self._fatal: BaseException | None = None
        self._lock = threading.Lock()
        self.errors = 0  # attempts an unexpected error stopped (--once exits 1 for them)
        self.outcomes: list[str] = []  # the local state each attempt of this run ended in
        self._said_waiting: tuple[str, str] | None = None  # quiet hours or budget, said
        self._pruned_at = float("-inf")
        self._token_checked_at = float("-inf")

    # --- the loop ----------------------------------------------------------------------

    def run(self) -> BaseException | None:
        """Until stopped (or one pass with ``once``); the fatal error that ended it, if any.

        Whatever ends it, running attempts are stopped first (their harness stopped, their
        task failed or kept for the next run): never a harness left running on its own."""
        try:
            return self._run()
        finally:
            self.stop.set()
            for thread in self._threads:
                thread.join()

    def _run(self) -> BaseException | None:
        self._prune()
        if self.plan.once:  # failures the server did not hear of are told first, and the
            self._resume_failing()  # pass goes on to its one question all the same
            for thread in self._threads:
                thread.join()
            self._reap()
        for attempt in self.store.open_attempts():  # resume before choosing anything new
            if attempt["state"] == "failing":
                continue  # told at every pass (_resume_failing)
            self._start(attempt)
            if self.plan.once:
                break
        while not self.stop.is_set() and self._fatal is None:
            if not (self.plan.once and self._threads):
                try:
                    self._start_new()
                except OSError as exc:  # the state folder is full or read-only
                    self._fatal = LocalFault(f"cannot write the state folder: {describe(exc)}")
                    self.stop.set()  # running attempts stop their harness and fail their task
                    break
                except Exception as exc:  # a bug: the next poll tries again (--once: failed)
                    problem = f"choosing a question failed: {describe(exc)}"
                    if self.plan.once:
                        self._fatal = LocalFault(problem)
                    else:
                        self.say("error", problem)
            if self.plan.once or self._fatal is not None:
                break  # a rejected token ends the run now, not a poll interval later
            self.stop.wait(self.plan.poll_interval * (0.75 + random.random() / 2))
            self._reap()
            self._prune()
        for thread in self._threads:
            thread.join()
        return self._fatal

    def _prune(self) -> None:
        """Old finished attempts' files go, at start and then at most once an hour."""
        now = self.now()
        if now - self._pruned_at < PRUNE_EVERY_SECONDS:
            return
        self._pruned_at = now
        try:
            removed = self.store.prune_finished(now)
        except OSError as exc:  # not worth stopping for: the next pass tries again
            self.say("error", f"could not remove old work folders: {describe(exc)}")
            return
        if removed:
            self.say("pruned", f"removed the files of {removed} finished attempts",
                     attempts=removed)

    def _start_new(self) -> None:
        self._reap()
        if not self.plan.once:  # --once told them first (run), and its one slot is a question's
            self._resume_failing()
        allowed = 1 if self.plan.once else min(self.plan.max_tasks, MAX_LIVE_LEASES)
        slots = allowed - len(self._threads)
        if slots <= 0:
            return
        today = time.strftime("%Y-%m-%d", time.localtime(self.now()))
        if in_quiet_hours(self.plan.quiet_hours, time.localtime(self.now()).tm_hour):
            self._say_once("quiet_hours", "no new research during quiet hours")
            return self._check_token_while_waiting()
        left = self.plan.daily_budget - self.store.runs_today(today)
        if left <= 0:
            self._say_once("skipped_budget", "today's answer budget is spent", today,
                           budget=self.plan.daily_budget)
            return self._check_token_while_waiting()
        self._said_waiting = None
        if self._harness_gone():
            return
        try:
            chosen = self.candidates()[:min(slots, left)]
        except TokenRejected as exc:
            self._fatal = exc
            return
        except Unreachable as exc:
            if self.plan.once:  # the one pass could not happen: exit says so (4)
                self._fatal = exc
            else:
                self.say("unreachable", str(exc))
            return
        except ProtocolError as exc:  # e.g. a --community that does not exist or was left
            self._fatal = _account_refused(exc)
            if self._fatal is not None:
                return
            self.say("poll_refused", f"the server refused the list of questions: {exc}",
                     code=exc.code)
            if self.plan.once:
                self._fatal = exc
            return
        if not chosen and not self._threads:
            self.say("idle", "nothing to answer right now")
        for topic in chosen:
            self.say("chosen", topic.get("title") or topic["id"], topic=topic["id"],
                     requestedByMe=topic.get("requestedByMe"), askedByMe=topic.get("askedByMe"))
            attempt = self.store.new_attempt(topic["id"], version=topic.get("questionVersion"))
            self.store.count_run(today, attempt)
            self.say("attempt_created", topic=topic["id"], requestId=attempt["requestId"],
                     resumed=False)  # (open attempts resume in _run, without this event)
            self._start(attempt)

    def _harness_gone(self) -> bool:
        """Whether the harness can no longer be started (moved away by an upgrade): the run
        stops, as it would not have started, before claiming what would fail."""
        problem = self.runner.harness.unusable(self.runner.env.get("PATH"))
        if problem:
            self._fatal = LocalFault(problem)
        return problem is not None

    def _say_once(self, event: str, message: str, day: str = "", **fields: Any) -> None:
        """Why nothing is started, said when it begins (not at every poll: a log line a
        minute all night), again on a new day."""
        if self._said_waiting != (event, day):
            self._said_waiting = (event, day)
            self.say(event, message, **fields)

    def _check_token_while_waiting(self) -> None:
        """While nothing is researched, one read every few minutes: a rotated or revoked
        token ends the run (exit 3) instead of leaving a service that looks healthy all day."""
        if self.now() - self._token_checked_at < TOKEN_CHECK_SECONDS:
            return
        self._token_checked_at = self.now()
        try:
            self.client.list_communities("joined", 1)
        except TokenRejected as exc:
            self._fatal = exc
        except ProtocolError as exc:
            self._fatal = _account_refused(exc)  # else the next poll says so
        except Unreachable:
            pass

    def _resume_failing(self) -> None:
        """Failures the server could not be told of: told again at every pass (not this
        run's outcomes: --once exits by the question it took), and the attempts it stayed
        away from (their claim, heartbeat or submission tried again)."""
        running = {thread.name for thread in self._threads}
        with self._lock:
            away, self._away = self._away, set()
        for attempt in self.store.open_attempts():
            if attempt["requestId"] in running:
                continue
            if attempt["state"] == "failing" or attempt["requestId"] in away:
                self._start(attempt, counted=attempt["requestId"] in away)

    def _start(self, attempt: dict[str, Any], counted: bool = True) -> None:
        thread = threading.Thread(target=self._drive, args=(attempt, counted), daemon=True,
                                  name=attempt["requestId"])
        self._threads.append(thread)
        thread.start()

    def _drive(self, attempt: dict[str, Any], counted: bool) -> None:
        try:
            outcome = self.runner.run(attempt)
            with self._lock:
                self.outcomes += [outcome] if counted else []
        except Stopped:
            pass
        except Unreachable as exc:
            if not self.plan.once:  # run polls again later, the other attempts going on
                self.say("unreachable", f"the server stayed away: {exc}; tried again at the "
                         "next poll", taskId=(attempt.get("task") or {}).get("id"))
                with self._lock:
                    self._away.add(attempt["requestId"])
                return
            with self._lock:
                self._fatal = self._fatal or exc
            self.stop.set()
        except TokenRejected as exc:  # `agent status` says why it stopped here
            self.store.note_token_rejected(attempt, exc.code)
            with self._lock:
                self._fatal = self._fatal or exc
            self.stop.set()  # nothing else can work either: stop the loop, keep the state
        except Exception as exc:  # a bug must not end the loop; the attempt resumes next run
            if self._state_folder_failed(exc):  # every next question would fail the same way
                return
            with self._lock:
                self.errors += 1
            self.say("error", f"attempt stopped by an unexpected error: {describe(exc)}",
                     requestId=attempt["requestId"])

    def _state_folder_failed(self, exc: Exception) -> bool:
        """An attempt could not write the state folder (``StateStore.failed_by``): the run
        ends with exit 1, as when that happens between attempts."""
        if not self.store.failed_by(exc):
            return False
        with self._lock:
            self._fatal = self._fatal or LocalFault(
                f"cannot write the state folder: {describe(exc)}")
        self.stop.set()  # running attempts stop their harness and fail their task
        return True

    def _reap(self) -> None:
        self._threads = [t for t in self._threads if t.is_alive()]

    # --- choosing ----------------------------------------------------------------------

    def communities(self) -> list[str]:
        if self.plan.communities:
            return self.plan.communities
        joined: list[str] = []
        for page in range(1, MAX_COMMUNITY_PAGES + 1):
            listing = self.client.list_communities("joined", page)
            joined += [c["id"] for c in listing["communities"]]
            if not listing.get("hasMore"):
                break
        return joined

    def candidates(self) -> list[dict[str, Any]]:
        tried = self.store.tried_topics()
        found: dict[str, dict[str, Any]] = {}
        for community in self.communities():
            listing = self.client.list_topics(community)
            for topic in [*(listing.get("requested") or []), *listing["topics"]]:
                found.setdefault(topic["id"], topic)
        self.say("polled", topics=len(found))
        # a --community the owner is not in is listed all the same (joined: false), and
        # every claim there would be refused
        unjoined = sum(1 for t in found.values() if t.get("joined") is False)
        if unjoined:
            self.say("skipped_not_joined", f"{unjoined} question(s) in communities you have "
                     "not joined are skipped: join them on the site to answer there",
                     topics=unjoined)
        fresh = [t for t in found.values() if t.get("joined") is not False
                 and not t.get("answeredByMyAgents") and not tried_since_asked(t, tried)]
        return sorted(fresh, key=priority)
