"""Rate limits, raised as the protocol's ``rate_limited`` error with ``Retry-After``.

The external API dispatches many actions through one URL, so most limits depend on the
parsed body (claims per user, manage actions per user). Rather than decorating routes, the
handlers ask the gate by name.

Where the counters live:
- ``memory://`` (the default, one process): a small moving window kept here. The in-memory
  storage behind Flask-Limiter starts a timer thread about every 10 ms of traffic to expire
  entries, and the request waits for it; the bench measured the write cycle 45-65 % faster
  at concurrency 8 without it.
- any other URI (``redis://``, ``memcached://`` ... for several processes): Flask-Limiter's
  storage and its moving-window strategy, so every process shares the same budget.
"""
from __future__ import annotations

import functools
import math
import threading
import time
from collections import OrderedDict, deque
from typing import Protocol

from flask import Flask
from limits import RateLimitItem, parse

from .errors import ApiError


class _Window(Protocol):
    def hit(self, item: RateLimitItem, scope: str, key: str) -> float | None: ...
    def test(self, item: RateLimitItem, scope: str, key: str) -> float | None: ...
    def reset(self) -> None: ...


@functools.lru_cache(maxsize=64)
def _parsed(limit: str) -> RateLimitItem:
    return parse(limit)


class LocalWindow:
    """An exact moving window per (scope, key): the times of the last ``amount`` hits.

    ``hit`` and ``test`` return None when allowed, else the seconds until a slot frees.

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

    def hit(self, item: RateLimitItem, scope: str, key: str) -> float | None:
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
            if len(bucket.times) >= item.amount:
                return bucket.times[0] + bucket.expiry - now
            bucket.times.append(now)
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


class SharedWindow:
    """Flask-Limiter's configured storage with its moving-window strategy."""

    def __init__(self, app: Flask, storage_uri: str) -> None:
        from flask_limiter import Limiter

        self._limiter = Limiter(key_func=lambda: "global", app=app, storage_uri=storage_uri,
                                strategy="moving-window", default_limits=[],
                                headers_enabled=False)
        # No limit is attached to a route: let the per-request hook return at once.
        self._limiter.request_filter(lambda: True)

    def _wait(self, item: RateLimitItem, scope: str, key: str) -> float:
        stats = self._limiter.limiter.get_window_stats(item, scope, key)
        return stats.reset_time - time.time()

    def hit(self, item: RateLimitItem, scope: str, key: str) -> float | None:
        return None if self._limiter.limiter.hit(item, scope, key) else self._wait(item, scope, key)

    def test(self, item: RateLimitItem, scope: str, key: str) -> float | None:
        return None if self._limiter.limiter.test(item, scope, key) else self._wait(item, scope, key)

    def reset(self) -> None:
        self._limiter.reset()


class RateGate:
    def __init__(self, app: Flask, storage_uri: str) -> None:
        self._window: _Window = (LocalWindow() if storage_uri == "memory://"
                                 else SharedWindow(app, storage_uri))

    def hit(self, limit: str, scope: str, key: object) -> None:
        """Count one request; raise 429 ``rate_limited`` with Retry-After when over."""
        self._raise_if(self._window.hit(_parsed(limit), f"lobbytalks:{scope}", str(key)))

    def check(self, limit: str, scope: str, key: object) -> None:
        """Raise 429 if the budget is spent, without counting (for failed-login throttles)."""
        self._raise_if(self._window.test(_parsed(limit), f"lobbytalks:{scope}", str(key)))

    @staticmethod
    def _raise_if(wait: float | None) -> None:
        if wait is not None:
            raise ApiError("rate_limited", retry_after=max(1, math.ceil(wait)))

    def reset(self) -> None:
        self._window.reset()
