"""Rate limits on Flask-Limiter's storage, raised as the protocol's ``rate_limited`` error.

The external API dispatches many actions through one URL, so most limits depend on the
parsed body (claims per user, manage actions per user). Rather than decorating routes, the
handlers ask the gate by name; the counters live in Flask-Limiter's configured storage and
use its moving-window strategy.
"""
from __future__ import annotations

import math
import time

from flask import Flask
from flask_limiter import Limiter
from limits import parse

from .errors import ApiError


def _no_default_key() -> str:
    return "global"


class RateGate:
    def __init__(self, app: Flask, storage_uri: str) -> None:
        self.limiter = Limiter(
            key_func=_no_default_key,
            app=app,
            storage_uri=storage_uri,
            strategy="moving-window",
            default_limits=[],
            headers_enabled=False,
        )

    def _args(self, limit: str, scope: str, key: object):
        return parse(limit), f"lobbytalks:{scope}", str(key)

    def hit(self, limit: str, scope: str, key: object) -> None:
        """Count one request; raise 429 ``rate_limited`` with Retry-After when over."""
        item, scope_key, ident = self._args(limit, scope, key)
        if not self.limiter.limiter.hit(item, scope_key, ident):
            raise self._exceeded(item, scope_key, ident)

    def check(self, limit: str, scope: str, key: object) -> None:
        """Raise 429 if the budget is spent, without counting (for failed-login throttles)."""
        item, scope_key, ident = self._args(limit, scope, key)
        if not self.limiter.limiter.test(item, scope_key, ident):
            raise self._exceeded(item, scope_key, ident)

    def _exceeded(self, item, scope_key: str, ident: str) -> ApiError:
        stats = self.limiter.limiter.get_window_stats(item, scope_key, ident)
        retry_after = max(1, math.ceil(stats.reset_time - time.time()))
        return ApiError("rate_limited", retry_after=retry_after)

    def reset(self) -> None:
        self.limiter.reset()
