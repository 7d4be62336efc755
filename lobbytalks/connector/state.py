"""The connector's state folder: attempts, kept results and the daily budget, crash-safe.

Every file is written whole (temporary file, fsync, rename, fsync of the folder), so a
``kill -9`` at any moment leaves either the old or the new version, never half of one.
An attempt is written **before** its claim is sent, and a result **before** it is submitted,
which is what lets a restart replay instead of claiming or answering twice.

Layout (folder 0700, files 0600; the token is never kept here: what a harness wrote in its
``work`` folder is kept for the owner to see with the token taken out, ``scrub``)::

    attempts/<requestId>.json   one attempt: topic, replyTo, task, state, errors
    results/<requestId>.json    the exact bytes submitted for that attempt
    work/<requestId>/           the harness's own working folder and files
                                (both removed KEEP_FINISHED_DAYS after the attempt finished)
    budget.json                 research runs started per local day
    lock                        held by the running connector
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .events import redact
from .scrub import scrub

# Local states of an attempt. "new": requestId saved, claim not yet answered; "leased":
# claimed, researching; "submitting": result saved, not yet confirmed; "failing": failed
# here, fail_task not yet confirmed; the rest are final.
# "deferred": the claim was refused for now (the user's leases are all taken), so the
# question may be chosen again by a later attempt; no task exists for its requestId, so its
# file is not kept (one a minute would pile up while the leases stay busy).
OPEN_STATES = ("new", "leased", "submitting", "failing")
FINAL_STATES = ("done", "failed", "expired", "rejected", "deferred")
MAX_ERRORS_KEPT = 10
# A finished attempt's harness files and submitted result are kept this long for the owner
# to look at, then removed (a connector running for months would fill its disk); the
# attempt's own small file stays, so the question is never tried again.
KEEP_FINISHED_DAYS = 14


class StateInUse(Exception):
    """Another connector holds this state folder."""


def default_state_dir(server: str, token: str) -> Path:
    """One folder per server and agent under the user's state folder. The agent is named by
    a short digest of its token (never the token), so a new token starts a new folder."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    host = re.sub(r"[^A-Za-z0-9.-]+", "_", urlsplit(server).netloc or server)
    agent = hashlib.sha256(token.encode()).hexdigest()[:12]
    return base / "lobbytalks" / "agent" / f"{host}-{agent}"


def write_atomic(path: Path, data: bytes) -> None:
    # A new file under a name nobody can guess: in a harness's folder, a link planted under
    # a predictable one would have had this write go wherever it pointed.
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        left = memoryview(data)  # a nearly full disk takes a part, said only by the count:
        while left:
            left = left[os.write(fd, left):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)  # the old file stays as it was, whole
        raise
    os.close(fd)
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _json_bytes(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True).encode()


def _unlink_links(*folders: Path) -> None:
    """Each of ``folders`` that is a link removed (the link, not what it points to)."""
    for folder in folders:
        if folder.is_symlink():
            folder.unlink()


# The disk itself failing: wherever in the state folder, or with no file named (full).
_DISK_FAULTS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)


def _an_attempt(value: Any) -> bool:
    """Whether ``value`` has the shape of an attempt this connector writes."""
    return (isinstance(value, dict)
            and all(isinstance(value.get(key), str) for key in ("requestId", "state", "topic"))
            and isinstance(value.get("task"), (dict, type(None)))
            and isinstance(value.get("created", 0), (int, float)))


class StateStore:
    def __init__(self, root: Path, secrets: tuple[str, ...] = ()) -> None:
        self.root = Path(root)
        self.secrets = secrets  # kept out of every error noted here (events.redact)
        self.attempts = self.root / "attempts"
        self.results = self.root / "results"
        self.work = self.root / "work"
        self._lock_fd: int | None = None
        self._budget = threading.Lock()  # the scheduler counts, attempt threads refund

    def failed_by(self, exc: BaseException) -> bool:
        """Whether ``exc`` is this folder failing (read-only, full, its permissions changed),
        not what a harness did to its own work folder (work/)."""
        if not isinstance(exc, OSError):
            return False
        where = str(exc.filename or "")
        inside = where.startswith(os.path.join(self.root, ""))
        if inside and not where.startswith(os.path.join(self.work, "")):
            return True
        return exc.errno in _DISK_FAULTS and (inside or not where)

    def open(self) -> "StateStore":
        for folder in (self.root, self.attempts, self.results, self.work):
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return self

    def make_private(self) -> "StateStore":
        """Closed to others (a folder made by hand has the usual 0755): it keeps the
        questions, their private context and the results. ``doctor`` only says so."""
        if self.root.stat().st_mode & 0o077:
            self.root.chmod(0o700)
        return self

    def lock(self) -> None:
        """Hold the folder for this process; the kernel drops the lock if it dies."""
        fd = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StateInUse(f"another connector is using {self.root}") from None
        self._lock_fd = fd

    # --- attempts ------------------------------------------------------------------------

    def new_attempt(self, topic: str, reply_to: str | None = None, *,
                    version: int | None = None) -> dict[str, Any]:
        """A fresh requestId for a topic (at the version listed, when known), saved before
        anything is sent."""
        attempt = {"requestId": str(uuid.uuid4()), "topic": topic, "replyTo": reply_to,
                   "version": version, "state": "new", "created": int(time.time()),
                   "task": None, "messageId": None, "errors": [], "harnessRuns": 0}
        self.save(attempt)
        return attempt

    def save(self, attempt: dict[str, Any]) -> None:
        attempt["updated"] = int(time.time())
        write_atomic(self.attempts / f"{attempt['requestId']}.json", _json_bytes(attempt))

    def discard(self, attempt: dict[str, Any]) -> None:
        (self.attempts / f"{attempt['requestId']}.json").unlink(missing_ok=True)

    def note_error(self, attempt: dict[str, Any], error: str) -> None:
        """Kept for ``agent status``, which prints it: redacted as an event is (a harness's
        result may carry the token in its field names, which a refusal quotes)."""
        error = redact(error, self.secrets)
        attempt["errors"] = [*attempt.get("errors", []), error][-MAX_ERRORS_KEPT:]
        self.save(attempt)

    def note_token_rejected(self, attempt: dict[str, Any], code: str) -> None:
        """Why the attempt stopped where it did, for ``agent status``."""
        self.note_error(attempt, f"token rejected ({code}): revoked, rotated or expired; "
                        "the server ends its tasks")

    def all_attempts(self) -> list[dict[str, Any]]:
        return self.read_attempts()[0]

    def read_attempts(self) -> tuple[list[dict[str, Any]], list[Path]]:
        """The attempts, oldest first, and the files in attempts/ that are no attempt
        (damaged by hand or by a disk: skipped)."""
        found: list[dict[str, Any]] = []
        unreadable: list[Path] = []
        for path in sorted(self.attempts.glob("*.json")):
            attempt = None  # never ours half-written (atomic), nor a link, a pipe or a folder
            if path.is_file() and not path.is_symlink():
                try:
                    attempt = json.loads(path.read_text("utf-8"))
                except (OSError, ValueError):
                    pass
            if _an_attempt(attempt):
                found.append(attempt)
            else:
                unreadable.append(path)
        return sorted(found, key=lambda a: (a.get("created", 0), a["requestId"])), unreadable

    def open_attempts(self) -> list[dict[str, Any]]:
        return [a for a in self.all_attempts() if a["state"] in OPEN_STATES]

    def tried_topics(self) -> dict[tuple[str, int | None], int]:
        """``(question, version)`` of each attempt made -> when the latest began: each version
        of a question is tried once per folder (a new version asks again, and so does the
        user asking their agents after that time). The version is None where it was never
        known (an attempt saved before versions were), and then stands for every version.
        The time is the server's, the claim's, where known: a request's time is the server's."""
        tried: dict[tuple[str, int | None], int] = {}
        for attempt in self.all_attempts():
            if attempt["state"] == "deferred" or attempt.get("stopped"):
                continue
            task = attempt.get("task") or {}
            key = (attempt["topic"], attempt.get("version") or task.get("questionVersion"))
            tried[key] = max(tried.get(key, 0), task.get("created") or attempt.get("created", 0))
        return tried

    # --- results ---------------------------------------------------------------------------

    def result_path(self, attempt: dict[str, Any]) -> Path:
        return self.results / f"{attempt['requestId']}.json"

    def keep_result(self, attempt: dict[str, Any], body: bytes) -> None:
        """Persist the submission once; later submits send these bytes unchanged."""
        write_atomic(self.result_path(attempt), body)

    def kept_result(self, attempt: dict[str, Any]) -> bytes | None:
        try:
            return self.result_path(attempt).read_bytes()
        except FileNotFoundError:
            return None

    def work_dir(self, attempt: dict[str, Any]) -> Path:
        folder = self.work / attempt["requestId"]
        _unlink_links(self.work, folder)  # a folder a harness swapped for a link: ours again
        for level in (self.work, folder):
            level.mkdir(exist_ok=True, mode=0o700)
        return folder

    def prune_finished(self, now: float, keep_days: int = KEEP_FINISHED_DAYS) -> int:
        """Remove the work folder and kept result of every attempt that finished more than
        ``keep_days`` ago; how many attempts had something removed."""
        pruned, before = 0, now - keep_days * 86400
        for attempt in self.all_attempts():
            if attempt["state"] in OPEN_STATES or attempt.get("updated", now) > before:
                continue
            folder = self.work / attempt["requestId"]
            result = self.result_path(attempt)
            if not (folder.exists() or result.exists()):
                continue
            _unlink_links(self.work, folder)  # what they point to is not ours to remove
            shutil.rmtree(folder, ignore_errors=True)  # links inside are removed, not followed
            result.unlink(missing_ok=True)
            pruned += 1
        return pruned

    def scrub_work(self, attempt: dict[str, Any], secrets: tuple[str, ...]) -> None:
        """Take the token out of what the harness wrote, once the attempt has read it: the
        files stay for the owner to look at, the token is never stored (``scrub``)."""
        if not self.work.is_symlink():  # else not the state folder's own: not ours to touch
            scrub(self.work / attempt["requestId"], secrets, write_atomic)

    # --- the daily budget ------------------------------------------------------------------

    def runs_today(self, today: str) -> int:
        """Runs counted for ``today``: none from a file unreadable or of another shape."""
        try:
            data = json.loads((self.root / "budget.json").read_text("utf-8"))
        except (OSError, ValueError):
            return 0
        runs = data.get(today, 0) if isinstance(data, dict) else 0
        return runs if type(runs) is int and runs >= 0 else 0

    def count_run(self, today: str, attempt: dict[str, Any]) -> None:
        """A research run of ``today``'s budget, for ``attempt`` (refunded if its claim is
        refused: nothing was researched)."""
        with self._budget:
            self._set_runs(today, self.runs_today(today) + 1)
        attempt["budgetDay"] = today
        self.save(attempt)

    def refund_run(self, attempt: dict[str, Any]) -> None:
        day = attempt.pop("budgetDay", None)
        if day is None:
            return
        with self._budget:
            counted = self.runs_today(day)
            if counted > 0:  # a day that has passed is no longer counted at all
                self._set_runs(day, counted - 1)
        self.save(attempt)

    def _set_runs(self, day: str, runs: int) -> None:
        write_atomic(self.root / "budget.json", _json_bytes({day: runs}))  # only the one day

