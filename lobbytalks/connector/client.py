"""The REST protocol client, with the retry rules of §12.

- 401: :class:`TokenRejected`; the caller stops and keeps its state.
- 429: wait ``Retry-After`` (bounded), then the same request again.
- 502/503/504 and connection failures: bounded exponential backoff with jitter.
- any other 4xx: :class:`ProtocolError` at once; a deterministic refusal is never repeated.
- a write whose answer was lost (timeout, reset after sending) is repeated only when the
  caller says repeating it is safe (``replay_safe``); a submission instead raises
  :class:`AnswerLost`, so the caller asks ``get_task_status`` first.
"""
from __future__ import annotations

import json
import random
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from http.client import HTTPException, IncompleteRead
from typing import Any, Callable

from .. import __version__
from . import answers
from .transport import OPENER, AnswerDeadline

TRANSIENT_STATUSES = (502, 503, 504)
MAX_RETRY_AFTER = 300
# The largest answer the protocol gives is a claim or get_context with 40 long answers, a few
# MB; a server sending more is broken or hostile, and is not read into memory.
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
READ_CHUNK = 64 * 1024
ANSWER_TIMEOUTS = 2  # a whole answer may take this many socket timeouts (60 s by default)


class ProtocolError(Exception):
    """The server refused the request (``{error, code}``)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        self.status, self.code, self.message = status, code, message
        super().__init__(f"{status} {code}: {message}")


class TokenRejected(ProtocolError):
    """401: the token is missing, expired or revoked."""


# What to do about a rejected token, whatever the server said was wrong with it.
TOKEN_FIX = ("make a new token on /agents: rotate this one, or, if the agent was archived (its "
             "tokens cannot come back), connect a new agent; an account an admin suspended "
             "(the server's words say so) gets none until an admin reinstates it")


class Unreachable(Exception):
    """The server stayed unavailable through every retry."""


class AnswerLost(Exception):
    """A write was sent but its answer never arrived; it may or may not have been stored."""


class Client:
    def __init__(self, server: str, token: str, *, timeout: float = 30.0, retries: int = 6,
                 backoff: float = 1.0, max_backoff: float = 60.0,
                 sleep: Callable[[float], bool | None] = time.sleep,
                 jitter: Callable[[], float] = random.random,
                 on_retry: Callable[[str, float], None] | None = None) -> None:
        self.base = server.rstrip("/")
        self._token = token
        self.timeout, self.retries = timeout, retries
        self.backoff, self.max_backoff = backoff, max_backoff
        self.sleep, self.jitter = sleep, jitter
        self.on_retry = on_retry or (lambda why, delay: None)

    # --- the nine actions that the connector uses --------------------------------------

    # Each answer is checked for what the connector reads of it (``answers``).

    def list_communities(self, scope: str = "joined", page: int = 1) -> dict[str, Any]:
        return shaped("list_communities", self.get("list_communities", scope=scope, page=page))

    def list_topics(self, community: str | None = None) -> dict[str, Any]:
        return shaped("list_topics", self.get(
            "list_topics", **({"community": community} if community else {})))

    def claim(self, topic: str, request_id: str, reply_to: str | None) -> dict[str, Any]:
        body = {"topic": topic, "requestId": request_id, **({"replyTo": reply_to} if reply_to else {})}
        return shaped("claim_task", self.post("claim_task", body, replay_safe=True))  # replays

    def status(self, task_id: str) -> dict[str, Any]:
        return shaped("get_task_status", self.get("get_task_status", taskId=task_id))

    def heartbeat(self, task_id: str) -> dict[str, Any]:
        return shaped("heartbeat", self.post("heartbeat", {"taskId": task_id},
                                             replay_safe=True))  # extends only

    def fail(self, task_id: str, reason: str) -> dict[str, Any]:
        return self.post("fail_task", {"taskId": task_id, "error": reason}, replay_safe=True)

    def submit(self, body: bytes) -> dict[str, Any]:
        """Send the persisted submission exactly as stored."""
        return shaped("submit_result", self._send("POST", "/api/external", body,
                                                  replay_safe=False))

    # --- transport ---------------------------------------------------------------------

    def get(self, action: str, **params: Any) -> dict[str, Any]:
        query = urllib.parse.urlencode({"action": action, **params})
        return self._send("GET", f"/api/external?{query}", None, replay_safe=True)

    def post(self, action: str, fields: dict[str, Any], *, replay_safe: bool) -> dict[str, Any]:
        body = json.dumps({"action": action, **fields}, ensure_ascii=False).encode()
        return self._send("POST", "/api/external", body, replay_safe=replay_safe)

    def healthz(self) -> bool:
        """The server's own health answer, ``{"ok": true}``: a proxy's page or a login
        form that answers 200 at any address is no LobbyTalks server."""
        try:
            with OPENER.open(self.base + "/healthz", timeout=self.timeout) as r:
                return r.status == 200 and json.loads(r.read(64)) == {"ok": True}
        except (urllib.error.URLError, OSError, HTTPException, ValueError):
            return False

    def _request(self, method: str, path: str, body: bytes | None) -> urllib.request.Request:
        headers = {"Authorization": f"Bearer {self._token}", "Accept": "application/json",
                   "User-Agent": f"lobbytalks-agent/{__version__}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        return urllib.request.Request(self.base + path, data=body, method=method, headers=headers)

    def _send(self, method: str, path: str, body: bytes | None, *, replay_safe: bool
              ) -> dict[str, Any]:
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            deadline = AnswerDeadline(ANSWER_TIMEOUTS * self.timeout)
            try:
                answered = self._exchange(method, path, body, deadline)
                if isinstance(answered, dict):
                    return answered
                status, payload, headers = answered
                retry_after, location = headers.get("Retry-After"), headers.get("Location")
                if 300 <= status < 400:
                    raise ProtocolError(status, "redirected", (
                        f"the server redirects to {_settles_on(location, self.base, path)}: "
                        "give that address with --server (no redirect is followed: the "
                        "token goes only where you said)"))
                self._refuse_unless_transient(status, payload)
                if last:
                    raise Unreachable(f"HTTP {status} after {self.retries + 1} tries") from None
                delay = self._delay(attempt, retry_after if status == 429 else None)
                self._unless_stopping()
                self.on_retry(f"HTTP {status}", delay)
            except (urllib.error.URLError, OSError, HTTPException) as exc:
                if deadline.passed:  # not the server's reset: ours, at the deadline
                    exc = TimeoutError(f"the answer took more than {deadline.seconds:g} s")
                if isinstance(_reason(exc), ssl.SSLError):  # the same at every try
                    raise Unreachable(_tls_failure(self.base, _reason(exc))) from None
                if not (replay_safe or _never_sent(exc)):
                    raise AnswerLost(str(_reason(exc))) from None
                if last:
                    raise Unreachable(f"{_reason(exc)} after {self.retries + 1} tries") from None
                delay = self._delay(attempt, None)
                self._unless_stopping()
                self.on_retry(str(_reason(exc)), delay)
            if self.sleep(delay):  # stopped while waiting: no more tries, state kept
                raise Unreachable("stopped while waiting to try again") from None
        raise AssertionError("unreachable")

    def _exchange(self, method: str, path: str, body: bytes | None, deadline: AnswerDeadline
                  ) -> dict[str, Any] | tuple[int, dict[str, Any], Any]:
        """One request and its whole answer within ``deadline``: a success's JSON object,
        or a refusal's status, JSON and headers, its page read within the deadline too (a
        trickled error page held the request, and a stop waiting for it, for ever)."""
        with deadline:
            try:
                with OPENER.open(self._request(method, path, body),
                                 timeout=self.timeout) as response:
                    return _answer(response.status, self._read(response, deadline))
            except urllib.error.HTTPError as exc:
                try:
                    return exc.code, _json_or_empty(exc), exc.headers
                finally:
                    exc.close()

    def _unless_stopping(self) -> None:
        """No retry is announced, nor made, once the connector is stopping (``sleep`` is
        its stop event's wait, which answers at once whether it is set)."""
        if self.sleep(0):
            raise Unreachable("stopped before trying again") from None

    def _read(self, response: Any, deadline: AnswerDeadline) -> bytes:
        """The whole answer, within MAX_RESPONSE_BYTES and the exchange's deadline: the
        socket's timeout alone lets a server trickling a byte at a time hold the connector.
        What ends at the deadline ends as if the server had closed: it is no answer."""
        chunks, size = [], 0
        while chunk := response.read1(READ_CHUNK):  # what has come: read() waits for all
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise ProtocolError(response.status, "response_too_large",
                                    f"the server's answer passed {MAX_RESPONSE_BYTES} bytes")
            chunks.append(chunk)
        if deadline.passed:
            raise TimeoutError(f"the answer took more than {deadline.seconds:g} s")
        if getattr(response, "length", None):  # the connection closed before it all came
            raise IncompleteRead(b"".join(chunks), response.length)
        return b"".join(chunks)

    def _refuse_unless_transient(self, status: int, payload: dict[str, Any]) -> None:
        # task_limit is a 429 too, but waiting does not end someone's live leases.
        if (status == 429 and payload.get("code") != "task_limit") or status in TRANSIENT_STATUSES:
            return
        code = str(payload.get("code") or f"http_{status}")
        message = str(payload.get("error") or "")
        raise (TokenRejected if status == 401 else ProtocolError)(status, code, message)

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        seconds = (retry_after or "").strip()
        if seconds.isascii() and seconds.isdigit():  # "²" is a digit to isdigit, not to int
            return float(min(int(seconds), MAX_RETRY_AFTER))
        ceiling = min(self.max_backoff, self.backoff * 2 ** attempt)
        return ceiling / 2 + self.jitter() * ceiling / 2  # "equal jitter": never zero


def _answer(status: int, raw: bytes) -> dict[str, Any]:
    """A success's JSON object; anything else (a proxy's HTML page) is refused, not a crash."""
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ProtocolError(status, "invalid_response",
                            "the server's answer is not a JSON object (a proxy's page?)")
    return data


def shaped(action: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` if it holds what the connector reads of ``action``'s answer."""
    wrong = answers.problem(action, data)
    if wrong:
        raise ProtocolError(200, "invalid_response", f"the server's answer to {action} is "
                            f"not as the protocol has it: {wrong}")
    return data


def _json_or_empty(exc: urllib.error.HTTPError) -> dict[str, Any]:
    try:
        data = json.loads(exc.read(MAX_RESPONSE_BYTES) or b"{}")
    except (ValueError, OSError):
        return {}
    return data if isinstance(data, dict) else {}


def _reason(exc: BaseException) -> BaseException | str:
    return getattr(exc, "reason", None) or exc


def _settles_on(location: str | None, base: str, path: str) -> str | None:
    """The server's address in a redirect of ``base + path``, without the request's own
    path and query (what --server takes): ``https://talk.example.org/api/external?action=…``
    → ``https://talk.example.org``; a relative Location is read against what was asked."""
    if not location:
        return location
    location = urllib.parse.urljoin(base + path, location)
    asked = path.split("?", 1)[0]
    return location[:location.index(asked)] if asked and asked in location else location


def _tls_failure(base: str, error: BaseException) -> str:
    """No retry mends a certificate, or a server that speaks no TLS (its answer to the
    handshake is plain HTTP, or nothing)."""
    said = f"TLS with {base} failed: {error}"
    if isinstance(error, ssl.SSLCertVerificationError):
        return said
    plain = urllib.parse.urlsplit(base)._replace(scheme="http").geturl()
    return f"{said}; if the server speaks plain HTTP there, give --server {plain}"


def _never_sent(exc: BaseException) -> bool:
    """A refused or unresolvable connection cannot have delivered the request."""
    reason = _reason(exc)
    return isinstance(reason, (ConnectionRefusedError, socket.gaierror))
