"""Rate limits, raised as the protocol's ``rate_limited`` error with ``Retry-After``.

The external API dispatches many actions through one URL, so most limits depend on the
parsed body (claims per user, manage actions per user). Rather than decorating routes, the
handlers ask the gate by name.

Where the counters live (``LOBBYTALKS_RATELIMIT_STORAGE``):
- ``memory://`` (the default, one process): a small moving window kept here. The in-memory
  storage of the ``limits`` library starts a timer thread about every 10 ms of traffic to
  expire entries, and the request waits for it; the bench measured the write cycle 45-65 %
  faster at concurrency 8 without it.
- any other URI (``redis://``, ``rediss://`` ... for several processes): that storage with
  the library's moving-window strategy. Every limit the gate knows then lives there, none
  stays in a process: each one bounds a person, an address or a token, and a request for
  the same one may reach any process.

The shared storage must answer at start (else the server refuses to start, see
``RateStorageUnavailable``). When it fails during a request the gate fails closed: 503
``service_unavailable`` with Retry-After, before anything is written. Counting locally
instead would multiply every budget by the number of processes exactly while the storage is
down, which is when a guesser would press.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import math
import threading
import time
from collections import OrderedDict, deque
from typing import Protocol

from limits import RateLimitItem, parse
from limits.errors import ConfigurationError, StorageError
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

from .errors import ApiError
from .uri_secrets import hide_uri_secrets, mask_uri_credentials
from .turns import set_aside

log = logging.getLogger(__name__)

IN_PROCESS = "memory://"
# A storage that cannot answer within this many seconds counts as failing: a request waits
# at most this long for it, never a socket's default minutes.
STORAGE_TIMEOUT_SECONDS = 2
# What a client is told to wait when the storage fails mid-request.
STORAGE_RETRY_AFTER_SECONDS = 5


class _Window(Protocol):
    def hit(self, item: RateLimitItem, scope: str, key: str, cost: int = 1) -> float | None: ...
    def test(self, item: RateLimitItem, scope: str, key: str) -> float | None: ...
    def reset(self) -> None: ...


@functools.lru_cache(maxsize=64)
def _parsed(limit: str) -> RateLimitItem:
    return parse(limit)


def window(limit: str) -> tuple[int, int]:
    """A limit setting as (requests, seconds): for a budget counted elsewhere than here
    (the day's questions, counted in the database)."""
    item = _parsed(limit)
    return item.amount, item.get_expiry()


class LocalWindow:
    """An exact moving window per (scope, key): the times of the last ``amount`` hits.

    ``hit`` and ``test`` return None when allowed, else the seconds until a slot frees (until
    ``cost`` slots free, for a hit counting several requests at once: all or none).

    Memory stays bounded however many distinct keys (usernames, addresses) arrive: ``test``
    never creates a bucket, buckets are kept in least-recently-hit order, and past
    ``max_buckets`` the expired ones go first, then the least recently hit. Forgetting a key
    that nobody has hit for the longest time only forgets its count; the attacker who sprays
    keys keeps hitting (and so keeps) their own per-address bucket.
    """

    def __init__(self, max_buckets: int = 20_000) -> None:
        self._lock = threading.Lock()
        self._hits: OrderedDict[tuple[str, str], _Bucket] = OrderedDict()
        self._max_buckets = max_buckets

    def __len__(self) -> int:
        return len(self._hits)

    @staticmethod
    def _drop_expired(bucket: _Bucket, now: float) -> None:
        horizon = now - bucket.expiry
        while bucket.times and bucket.times[0] <= horizon:
            bucket.times.popleft()

    def hit(self, item: RateLimitItem, scope: str, key: str, cost: int = 1) -> float | None:
        now = time.monotonic()
        with self._lock:
            bucket = self._hits.get((scope, key))
            if bucket is None:
                self._make_room(now)
                bucket = self._hits[(scope, key)] = _Bucket(item.get_expiry())
            else:
                self._hits.move_to_end((scope, key))
                bucket.expiry = item.get_expiry()
            self._drop_expired(bucket, now)
            leaving = len(bucket.times) + cost - item.amount  # oldest hits that must go first
            if leaving > len(bucket.times):  # more than the whole budget: never fits
                return bucket.expiry
            if leaving > 0:
                return bucket.times[leaving - 1] + bucket.expiry - now
            bucket.times.extend([now] * cost)
            return None

    def test(self, item: RateLimitItem, scope: str, key: str) -> float | None:
        now = time.monotonic()
        with self._lock:
            bucket = self._hits.get((scope, key))
            if bucket is None:
                return None
            self._drop_expired(bucket, now)
            if len(bucket.times) >= item.amount:
                return bucket.times[0] + bucket.expiry - now
            return None

    def _make_room(self, now: float) -> None:
        """Before adding a bucket at the cap: drop the expired ones, else the least recent."""
        if len(self._hits) < self._max_buckets:
            return
        expired = [k for k, b in self._hits.items() if not b.times or b.times[-1] <= now - b.expiry]
        for k in expired:
            del self._hits[k]
        # Keep a tenth of the room free so the scan above runs rarely, not on every new key.
        while len(self._hits) >= self._max_buckets * 9 // 10:
            self._hits.popitem(last=False)

    def reset(self) -> None:
        with self._lock:
            self._hits.clear()


class _Bucket:
    __slots__ = ("expiry", "times")

    def __init__(self, expiry: int) -> None:
        self.expiry = expiry
        self.times: deque[float] = deque()


class RateStorageUnavailable(RuntimeError):
    """The shared rate-limit storage cannot be used; the message names it, masked."""


REDIS_SCHEMES = ("redis://", "rediss://", "redis+unix://")


def _redis_client_installed() -> bool:
    try:
        import redis  # noqa: F401
    except ImportError:
        return False
    return True


class SharedWindow:
    """A ``limits`` storage shared by every process, with its moving-window strategy."""

    def __init__(self, storage_uri: str) -> None:
        self._shown = mask_uri_credentials(storage_uri)
        options: dict = {"wrap_exceptions": True}
        if storage_uri.startswith(REDIS_SCHEMES):
            options.update(socket_timeout=STORAGE_TIMEOUT_SECONDS,
                           socket_connect_timeout=STORAGE_TIMEOUT_SECONDS)
        try:
            self._storage = storage_from_string(storage_uri, **options)
        except (ConfigurationError, ValueError) as exc:
            # The library's message may repeat the whole URI, password and all.
            reason = hide_uri_secrets(str(exc), storage_uri)
            if storage_uri.startswith(REDIS_SCHEMES) and not _redis_client_installed():
                reason = ("the Redis client is not installed: pip install redis (the [scale] "
                          "extra of LobbyTalks installs it)")
            raise RateStorageUnavailable(
                f"LOBBYTALKS_RATELIMIT_STORAGE={self._shown} cannot be used: {reason}") from None
        if not self._storage.check():
            raise RateStorageUnavailable(
                f"rate-limit storage {self._shown} is not reachable or refused the "
                "connection (is it running, and are its password and database number "
                "right?); start it or fix LOBBYTALKS_RATELIMIT_STORAGE")
        self._limiter = MovingWindowRateLimiter(self._storage)

    def _wait(self, item: RateLimitItem, scope: str, key: str) -> float:
        stats = self._limiter.get_window_stats(item, scope, key)
        return stats.reset_time - time.time()

    def hit(self, item: RateLimitItem, scope: str, key: str, cost: int = 1) -> float | None:
        # all or none, as the local window (the storages' moving-window scripts are); the
        # wait is until the oldest hit leaves, which may be too soon for a ``cost`` above 1
        with self._failing_closed():
            return (None if self._limiter.hit(item, scope, key, cost=cost)
                    else self._wait(item, scope, key))

    def test(self, item: RateLimitItem, scope: str, key: str) -> float | None:
        with self._failing_closed():
            return None if self._limiter.test(item, scope, key) else self._wait(item, scope, key)

    @contextlib.contextmanager
    def _failing_closed(self):
        try:
            with set_aside():  # a network round trip, up to the timeout: others go on
                yield
        except StorageError as exc:
            # The storage's own message names host and port, never the password.
            log.warning("rate-limit storage %s failed: %s: %s", self._shown,
                        type(exc.storage_error).__name__, exc.storage_error)
            raise ApiError("service_unavailable",
                           retry_after=STORAGE_RETRY_AFTER_SECONDS) from None

    def reset(self) -> None:
        self._storage.reset()


def with_lower_scheme(storage_uri: str) -> str:
    """``Memory://`` is ``memory://`` (RFC 3986 3.1), as the settings' check and ``limits``
    read it: compared as written, it passed for a shared storage."""
    scheme, sep, rest = storage_uri.partition("://")
    return scheme.lower() + sep + rest if sep else storage_uri


def shared_across_processes(storage_uri: str) -> bool:
    """Whether every process sees the same counters (``memory://?...`` is per process too)."""
    return not with_lower_scheme(storage_uri).startswith(IN_PROCESS)


class RateGate:
    def __init__(self, storage_uri: str) -> None:
        """:raise RateStorageUnavailable: when a shared storage is unusable or unreachable."""
        storage_uri = with_lower_scheme(storage_uri)
        self._window: _Window = (LocalWindow() if storage_uri == IN_PROCESS
                                 else SharedWindow(storage_uri))

    def hit(self, limit: str, scope: str, key: object, cost: int = 1) -> None:
        """Count one request (or ``cost`` at once, all or none); raise 429 ``rate_limited``
        with Retry-After when over."""
        self._raise_if(self._window.hit(_parsed(limit), f"lobbytalks:{scope}", str(key), cost))

    @staticmethod
    def capacity(limit: str) -> int:
        """How many requests ``limit`` allows in one window at most."""
        return _parsed(limit).amount

    def check(self, limit: str, scope: str, key: object) -> None:
        """Raise 429 if the budget is spent, without counting (for failed-login throttles)."""
        self._raise_if(self._window.test(_parsed(limit), f"lobbytalks:{scope}", str(key)))

    @staticmethod
    def _raise_if(wait: float | None) -> None:
        if wait is not None:
            raise ApiError("rate_limited", retry_after=max(1, math.ceil(wait)))

    def reset(self) -> None:
        self._window.reset()
