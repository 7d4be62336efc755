"""One attempt, driven from whatever state it was saved in to a final state (§6, §8).

new        → claim (a replay after a lost answer or a crash returns the same task)
leased     → research with the harness, heartbeating from ``expires``; validate the result
             with the server's own rules; keep it on disk
submitting → submit the kept bytes; after a lost answer ask ``get_task_status``:
             done ends it, leased resubmits the same bytes with backoff, failed/expired
             keeps the result and reports it
failing    → send the kept ``fail_task`` reason again (``endings``)
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from .client import AnswerLost, Client, ProtocolError, TokenRejected, Unreachable
from .endings import Endings
from .events import Reporter, describe
from .harness import HarnessConfig, HarnessFailed, ResultUnreadable, RunFiles
from .pacing import (Deadline, Stopped, Timing, heartbeat_again_in, learn_server_clock,
                     next_heartbeat, research_deadline)
from .prompt import result_schema, task_document
from .running import Running, stop_leftover
from .state import StateStore
from .submission import submission

# Claim refusals that say "not now" rather than "not this question" (all three leases taken,
# the owner not in its community): the question is left for a later pass, not marked tried.
NOT_NOW = ("task_limit", "forbidden")
# A replayed claim refused as another claim's: the one sent was made with the token before
# a rotation (the connector never gives a request id to another question).
_EARLIER_TOKEN = "claim_of_an_earlier_token"


class AttemptRunner(Endings):
    def __init__(self, client: Client, store: StateStore, harness: HarnessConfig,
                 reporter: Reporter, *, env: dict[str, str], secrets: tuple[str, ...],
                 now: Callable[[], int], stop: threading.Event, timing: Timing) -> None:
        self.client, self.store, self.harness, self.say = client, store, harness, reporter.emit
        self.env, self.secrets, self.now, self.stop, self.timing = env, secrets, now, stop, timing

    def wait(self, seconds: float) -> None:
        self.stop.wait(seconds)

    def run(self, attempt: dict[str, Any]) -> str:
        """Drive ``attempt`` as far as it goes; return its local state.

        :raise TokenRejected: the token no longer works (state kept for a later run).
        :raise Unreachable: the server stayed away through every retry (state kept).
        """
        if stop_leftover(attempt.pop("harness", None)):  # a killed connector's run
            self.say("leftover_stopped", "stopped the harness run a killed connector left",
                     requestId=attempt["requestId"])
        try:
            return self._drive(attempt)
        except ProtocolError as exc:
            if isinstance(exc, TokenRejected) or exc.code not in ("not_found", _EARLIER_TOKEN):
                raise
            # The task is not this token's: the agent's token was rotated since, with the
            # same state folder. Nothing here can finish it (its lease runs out by itself);
            # the result, if any, is kept. Not a try: the question may be chosen again.
            attempt["stopped"] = True
            self._rejected(attempt, "the task belongs to an earlier token (rotated since); "
                                    f"the question may be chosen again: {exc.message}")
            return attempt["state"]
        finally:  # the harness has stopped: what it printed keeps no token
            self.store.scrub_work(attempt, self.secrets)

    def _drive(self, attempt: dict[str, Any]) -> str:
        if attempt["state"] == "failing":  # the server did not hear of the failure last time
            self._report_failure(attempt)
            return attempt["state"]
        try:
            claim = None
            if attempt["state"] in ("new", "leased") and self.store.kept_result(attempt) is None:
                claim = self._claim(attempt)
            elif attempt["state"] == "leased":  # killed between keeping the result and saying so
                self._set(attempt, "submitting")
            if attempt["state"] == "leased" and claim is not None:
                self._research(attempt, claim)
        except (Stopped, ProtocolError, Unreachable):
            raise
        except Exception as exc:  # a local fault (the state folder full or read-only)
            if attempt["state"] == "leased" and attempt.get("task"):  # the lease is not left
                self._fail(attempt, f"the connector failed: {describe(exc)}")
            raise
        if attempt["state"] == "submitting":
            self._submit(attempt)
        return attempt["state"]

    # --- claim -------------------------------------------------------------------------

    def _claim(self, attempt: dict[str, Any]) -> dict[str, Any] | None:
        replay = attempt["state"] != "new" or attempt.get("claimSent", False)
        attempt["claimSent"] = True
        self.store.save(attempt)
        try:
            claim = self.client.claim(attempt["topic"], attempt["requestId"], attempt["replyTo"])
        except TokenRejected:
            raise
        except ProtocolError as exc:
            self.store.refund_run(attempt)  # no research started: not a run of the budget
            if replay and exc.code == "idempotency_conflict":  # another token's claim
                raise ProtocolError(exc.status, _EARLIER_TOKEN, exc.message) from None
            if exc.code in NOT_NOW:
                attempt["state"] = "deferred"
                self.store.discard(attempt)
                self.say("deferred", f"claim refused for now: {exc.code}: {exc.message}",
                         topic=attempt["topic"])
                return None
            return self._rejected(attempt, f"claim refused: {exc.code}: {exc.message}")
        task = claim["task"]
        attempt["task"] = task
        if not (claim.get("replayed") or replay):
            learn_server_clock(attempt, self.now(), claimed=True)
        self.say("claim_replayed" if claim.get("replayed") or replay else "claimed",
                 topic=attempt["topic"], requestId=attempt["requestId"], taskId=task["id"],
                 expires=task["expires"])
        if not self._follow(attempt, task):
            return None
        return claim

    # --- research ----------------------------------------------------------------------

    def _research(self, attempt: dict[str, Any], claim: dict[str, Any]) -> None:
        # A replayed claim's answer says nothing of the server's clock (the task was created
        # then, not now): a renewal first tells it, before any time is read from the task.
        if "serverAhead" not in attempt and not self._heartbeat(attempt):
            return
        task = attempt["task"]
        deadline = research_deadline(attempt, self.timing)
        schema = result_schema()
        question = (claim.get("context") or {}).get("question") or {}
        private = question.get("privateContext")
        public = "\n".join(str(question.get(part) or "")
                           for part in ("originalTitle", "publicContext"))
        errors: list[str] = []
        for round_ in (1, 2):  # an invalid result goes back to the harness once
            # The harness is told the moment it is really stopped at: its own time limit,
            # or the lease's, whichever comes first.
            limit = min(self.now() + self.timing.harness_timeout, deadline)
            document = task_document(claim, deadline=limit, schema=schema,
                                     previous_errors=errors)
            try:
                result = self._run_harness(attempt, document, limit, deadline)
            except ResultUnreadable as exc:
                result, errors = None, [exc.reason]
            except HarnessFailed as exc:
                return self._fail(attempt, f"harness failed: {exc.reason}")
            except Deadline as exc:
                return self._fail(attempt, str(exc))
            except Stopped:  # the owner's stop, not the question's: tried again at the next start
                attempt["stopped"] = True
                self._fail(attempt, "the connector was stopped before research finished")
                raise
            if attempt["state"] != "leased":
                return None  # lost while researching (cancelled, expired, token gone)
            body = None
            if result is not None:
                body, errors = submission(attempt["task"]["id"], result, private,
                                          now=self.now(), secrets=self.secrets, public=public)
            if body is not None:
                self.store.keep_result(attempt, body)
                self._set(attempt, "submitting")
                self.say("result_saved", taskId=task["id"],
                         path=str(self.store.result_path(attempt)))
                return None
            said = "; ".join(errors)
            self.store.note_error(attempt, f"invalid result (round {round_}): {said}")
            self.say("result_invalid", said, taskId=task["id"], round=round_)
        return self._fail(attempt, f"the harness result was invalid twice: {said}")

    def _run_harness(self, attempt: dict[str, Any], document: dict[str, Any], limit: int,
                     deadline: int) -> dict[str, Any]:
        attempt["harnessRuns"] = attempt.get("harnessRuns", 0) + 1
        self.store.save(attempt)
        files = RunFiles.in_folder(self.store.work_dir(attempt), attempt["harnessRuns"])
        why = (f"the harness ran past its {self.timing.harness_timeout} s time limit"
               if limit < deadline else "research did not finish before the 2-hour lease limit")
        running = Running(self.harness, document, files, self.env)
        self.say("research_started", taskId=attempt["task"]["id"], harness=self.harness.kind,
                 run=attempt["harnessRuns"], deadline=limit)
        try:
            attempt["harness"] = running.record()  # inside: a failed save stops the run too
            self.store.save(attempt)
            next_beat = next_heartbeat(attempt, self.timing)
            next_look = self.now() + self.timing.status_every
            while not running.finished():
                if self.stop.is_set():
                    raise Stopped()
                running.check_output_size()
                if self.now() >= limit:
                    raise Deadline(why)
                if self.now() >= next_beat:
                    if not self._heartbeat(attempt):
                        return {}
                    next_beat = next_heartbeat(attempt, self.timing)
                    next_look = self.now() + self.timing.status_every
                elif self.now() >= next_look:
                    if not self._still_leased(attempt):
                        return {}
                    next_look = self.now() + self.timing.status_every
                self.wait(self.timing.tick)
        finally:
            running.stop()
            attempt.pop("harness", None)
        self.say("research_finished", taskId=attempt["task"]["id"],
                 exitCode=running.proc.returncode)
        return running.result()

    def _heartbeat(self, attempt: dict[str, Any]) -> bool:
        """Renew the lease; False when the task can no longer be finished."""
        try:
            task = self.client.heartbeat(attempt["task"]["id"])["task"]
        except Unreachable as exc:
            self.say("retrying", f"heartbeat failed: {exc}", taskId=attempt["task"]["id"])
            heartbeat_again_in(attempt, 60, self.now(), self.timing)
            return True  # try again in a minute; the lease may well still hold
        except TokenRejected:
            raise
        except ProtocolError as exc:
            self.store.note_error(attempt, f"heartbeat refused: {exc.code}")
            if not self._follow(attempt, self.client.status(attempt["task"]["id"])["task"]):
                return False
            # Still leased, yet it cannot be renewed (the question was closed, the owner left
            # its community), so a result could not be stored either: end it now rather
            # than ask again every tick until the lease runs out.
            self._fail(attempt, f"heartbeat refused: {exc.code}: {exc.message}")
            return False
        attempt["task"] = task
        learn_server_clock(attempt, self.now(), claimed=False)
        self.say("heartbeat", taskId=task["id"], expires=task["expires"])
        return self._follow(attempt, task)

    def _still_leased(self, attempt: dict[str, Any]) -> bool:
        """Between heartbeats (ten minutes apart, as the protocol suggests), a look at the
        task: cancelled on /tasks, its harness stops within a minute, not ten minutes of
        the owner's model later. Unanswered, it is asked again next time."""
        try:
            task = self.client.status(attempt["task"]["id"])["task"]
        except TokenRejected:
            raise
        except (Unreachable, ProtocolError):
            return True
        return self._follow(attempt, task)

    # --- submit ------------------------------------------------------------------------

    def _submit(self, attempt: dict[str, Any]) -> None:
        body = self.store.kept_result(attempt)
        task_id = attempt["task"]["id"]
        for round_ in range(self.timing.submit_retries + 1):
            try:
                answer = self.client.submit(body)
            except (AnswerLost, Unreachable) as exc:
                if self.stop.is_set():  # stopping: the kept result goes at the next run
                    raise Stopped() from None
                self.say("retrying", f"submission unconfirmed: {exc}", taskId=task_id)
                try:
                    task = self.client.status(task_id)["task"]
                except Unreachable:
                    self._pause(self._backoff(round_))
                    continue
                self.say("status_checked", taskId=task_id, state=task["state"])
                if not self._follow(attempt, task):
                    return
                self._pause(self._backoff(round_))  # still leased: the same bytes again
                continue
            except TokenRejected:
                raise
            except ProtocolError as exc:
                return self._refused(attempt, exc)
            self._done(attempt, answer["messageId"], replayed=bool(answer.get("replayed")))
            return
        self.say("unreachable", "the submission is kept and will be sent on the next run",
                 taskId=task_id, path=str(self.store.result_path(attempt)))
        raise Unreachable("the server did not confirm the submission")

    def _pause(self, seconds: float) -> None:
        """Wait before trying again; a stop ends the tries (the kept result goes next run)."""
        if self.stop.wait(seconds):
            raise Stopped()

    def _backoff(self, round_: int) -> float:
        return min(60.0, self.timing.backoff * 2 ** round_)

    def _refused(self, attempt: dict[str, Any], exc: ProtocolError) -> None:
        """A deterministic refusal: never resend the same bytes; keep them and report."""
        task = self.client.status(attempt["task"]["id"])["task"]
        if task["state"] == "done":
            return self._done(attempt, task["messageId"])
        self._rejected(attempt, f"submission refused: {exc.code}: {exc.message}")
        if task["state"] == "leased":
            self._fail(attempt, f"the server refused the result ({exc.code})")
