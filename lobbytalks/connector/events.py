"""What the connector says: one JSON event per line (``--json``) or readable progress lines.

Every line passes through :func:`redact` first, so the token cannot appear in any output
even when a server message or a harness error happened to quote it.
"""
from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from typing import Any, TextIO

from ..security import find_secret, holds_disguised, js_length

MAX_REASON = 300  # fail_task's limit, in UTF-16 code units
WITHHELD = "(原因含疑似密钥，已隐去 / reason withheld: it looked like a secret)"

_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# A terminal's escape sequences whole (colours, a title set), not only their first byte
_ESCAPES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_C1 = re.compile(r"[\x7f-\x9f]")
# Fields holding Unix seconds: JSON lines keep the number, readable lines show the local time.
TIME_FIELDS = frozenset({"expires", "deadline"})

# The documented event names (README, "Let your agent answer on its own").
EVENTS = frozenset({
    "started", "stopping", "stopped", "idle", "polled", "skipped_not_joined", "chosen",
    "skipped_budget",
    "quiet_hours", "attempt_created", "claimed", "claim_replayed", "research_started",
    "heartbeat", "research_finished", "leftover_stopped", "result_invalid", "result_saved",
    "submitted",
    "status_checked", "task_failed", "task_lost", "retrying", "token_rejected",
    "unreachable", "poll_refused", "rejected", "deferred", "attempt", "check", "error",
    "pruned", "insecure",
})


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` without the given secrets; a text that still looks like it holds a secret
    (also one spelt out or encoded) is withheld as a whole rather than guessed at."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    disguised = any(holds_disguised(text, secret) for secret in secrets if secret)
    return WITHHELD if disguised or find_secret(text) else text


def short_reason(text: str, secrets: tuple[str, ...] = ()) -> str:
    """A one-line, redacted reason that fits ``fail_task`` (1–300 UTF-16 units), without a
    terminal's controls (a harness's coloured stderr), which /tasks would show as they are.

    Redacted after the controls are gone, the text the server scans: ``AKIA\x1b[0mIOSF…``
    is a key once its colour code is dropped. Cut after, so no cut hides part of one. A lone
    surrogate (a harness's JSON may hold "\\ud800") becomes "?": it cannot be sent."""
    plain = _CONTROLS.sub(" ", _ESCAPES.sub("", text)).encode("utf-8", "replace").decode()
    line = redact(" ".join(plain.split()), secrets) or "research failed"
    while js_length(line) > MAX_REASON:
        line = line[:-1]
    return line


def describe(exc: BaseException) -> str:
    """An error as the owner needs it: for a file, which one and what went wrong."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return repr(exc)


def _scrubbed(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: _scrubbed(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrubbed(v, secrets) for v in value]
    return value


class Reporter:
    """Writes events; thread-safe, because up to three tasks may run at once."""

    def __init__(self, json_lines: bool, secrets: tuple[str, ...] = (),
                 stream: TextIO | None = None) -> None:
        self.json_lines = json_lines
        self.secrets = secrets
        self.stream = stream or sys.stdout
        self._lock = threading.Lock()
        self._unheard = False  # the reader went away (`| head`, a closed terminal)

    def emit(self, event: str, message: str = "", **fields: Any) -> None:
        assert event in EVENTS, event
        fields = _scrubbed({**fields, **({"message": message} if message else {})},
                           self.secrets)
        if self.json_lines:
            line = json.dumps({"event": event, "time": int(time.time()), **fields},
                              ensure_ascii=False)
            # JSON escapes C0 itself; C1 (a terminal's CSI, 0x9b) is escaped here too
            line = _C1.sub(lambda c: f"\\u{ord(c.group()):04x}", line)
        else:
            text = fields.pop("message", "")
            details = " ".join(f"{k}={_readable(k, v)}" for k, v in fields.items()
                               if v not in (None, ""))
            # A server's or harness's words reach a terminal or a log: never its controls
            # (a title set, a screen cleared, fake coloured text).
            line = _CONTROLS.sub("\ufffd", " ".join(p for p in (f"[{event}]", text, details) if p))
        with self._lock:
            if self._unheard:
                return
            try:
                self.stream.write(line + "\n")
                self.stream.flush()
            except (OSError, ValueError):  # a broken pipe, a hung-up terminal, closed
                self._go_on_unheard()

    def _go_on_unheard(self) -> None:
        """Keep working without a reader: the task still ends on the server as it should
        (a stop fails it there) rather than on a traceback with the lease held. What is
        written later, Python's own last flush included, goes nowhere."""
        self._unheard = True
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.stream.fileno())
        except (OSError, ValueError, AttributeError):  # a stream without a descriptor
            pass


def _readable(name: str, value: Any) -> Any:
    if name in TIME_FIELDS and isinstance(value, int):
        return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(value))
    return value
