"""The rate gate: an exact moving window, Retry-After, and Flask-Limiter for shared storage."""
from __future__ import annotations

import pytest
from flask import Flask

from lobbytalks.errors import ApiError
from lobbytalks.limits import LocalWindow, RateGate, _parsed


def test_local_window_allows_exactly_the_amount(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("lobbytalks.limits.time.monotonic", lambda: clock[0])
    window = LocalWindow()
    item = _parsed("3/minute")
    assert [window.hit(item, "s", "k") for _ in range(3)] == [None, None, None]
    assert window.hit(item, "s", "k") == pytest.approx(60.0)
    assert window.hit(item, "s", "other") is None  # keys are independent
    clock[0] += 30
    assert window.test(item, "s", "k") == pytest.approx(30.0)
    clock[0] += 30.01
    assert window.hit(item, "s", "k") is None  # the oldest hit left the window


# "memory://" is the local window; any other URI goes through Flask-Limiter's storage.
@pytest.mark.parametrize("storage", ["memory://", "memory://?shared=1"])
def test_gate_raises_rate_limited_with_retry_after(storage):
    gate = RateGate(Flask("t"), storage)
    gate.hit("2/hour", "scope", 1)
    gate.check("2/hour", "scope", 1)
    gate.hit("2/hour", "scope", 1)
    with pytest.raises(ApiError) as raised:
        gate.hit("2/hour", "scope", 1)
    assert raised.value.code == "rate_limited" and raised.value.status == 429
    assert 3500 < int(raised.value.headers()["Retry-After"]) <= 3600
    with pytest.raises(ApiError):
        gate.check("2/hour", "scope", 1)
    gate.reset()
    gate.hit("2/hour", "scope", 1)
