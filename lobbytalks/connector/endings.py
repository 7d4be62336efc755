"""How an attempt ends: done, rejected, failed, or lost (``_follow``: the server ended it).

A failure is told to the server with ``fail_task`` so that the lease ends at once rather
than after its 30 minutes (it holds one of the user's three). When the server cannot be
reached the reason is kept ("failing", an open state) and the same reason is sent again by
a later pass or run: ``fail_task`` with an unchanged reason is a safe replay.
"""
from __future__ import annotations

from typing import Any, Callable

from .client import Client, ProtocolError, TokenRejected, Unreachable
from .events import WITHHELD, describe, short_reason
from .state import StateStore


class Endings:
    client: Client
    store: StateStore
    say: Callable[..., None]
    secrets: tuple[str, ...]

    def _set(self, attempt: dict[str, Any], state: str) -> None:
        attempt["state"] = state
        self.store.save(attempt)

    def _done(self, attempt: dict[str, Any], message_id: str, replayed: bool = False) -> None:
        attempt["messageId"] = message_id
        self._set(attempt, "done")
        self.say("submitted", topic=attempt["topic"], taskId=attempt["task"]["id"],
                 messageId=message_id, replayed=replayed)

    def _rejected(self, attempt: dict[str, Any], error: str) -> None:
        attempt["state"] = "rejected"
        self.store.note_error(attempt, short_reason(error, self.secrets))
        self.say("rejected", short_reason(error, self.secrets), topic=attempt["topic"])
        return None

    def _fail(self, attempt: dict[str, Any], reason: str) -> None:
        """Report the failure to the server with a short, redacted reason."""
        attempt["failReason"] = short_reason(reason, self.secrets)
        self._report_failure(attempt)

    def _report_failure(self, attempt: dict[str, Any]) -> None:
        """Send ``failReason``: "failed" once the server has it (or has ended the task
        itself), "failing" while it cannot be reached."""
        reason, task_id = attempt["failReason"], attempt["task"]["id"]
        try:
            try:
                self.client.fail(task_id, reason)
            except ProtocolError as exc:
                if exc.status != 400 or reason == WITHHELD:
                    raise
                # The server's checks found something in the reason the connector's did
                # not (a 400 is never sent again as it was): the lease still ends, with
                # a reason that says nothing.
                attempt["failReason"] = reason = WITHHELD
                self.client.fail(task_id, reason)
            state, said = "failed", reason
        except TokenRejected:
            raise
        except ProtocolError as exc:  # e.g. task_terminal: it expired or was cancelled
            state, said = "failed", f"{reason} (fail_task refused: {exc})"
        except Unreachable as exc:
            state, said = "failing", f"{reason} (fail_task not confirmed: {exc}; sent again later)"
        attempt["state"] = state
        try:
            self.store.note_error(attempt, said)
        except OSError as exc:  # told the server all the same; a restart asks it again
            said = f"{said} (not saved locally: {describe(exc)})"
        self.say("task_failed", said, taskId=task_id, confirmed=state == "failed")

    def _follow(self, attempt: dict[str, Any], task: dict[str, Any]) -> bool:
        """Record the server's view of the task; True while it is still leased."""
        attempt["task"] = task
        if task["state"] == "leased":
            if attempt["state"] == "new":
                attempt["state"] = "leased"
            self.store.save(attempt)
            return True
        if task["state"] == "done":
            self._done(attempt, task["messageId"])
        else:
            attempt["state"] = task["state"]
            self.store.note_error(attempt, f"task {task['state']}: {task.get('error') or ''}".strip())
            kept = self.store.kept_result(attempt) is not None
            self.say("task_lost", f"the task is {task['state']}", taskId=task["id"],
                     error=task.get("error"),
                     resultKept=str(self.store.result_path(attempt)) if kept else None)
        return False
