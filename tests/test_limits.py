"""The rate gate: an exact moving window, Retry-After, and the limits library for shared storage."""
from __future__ import annotations

import pytest

from lobbytalks.errors import ApiError
from lobbytalks.limits import LocalWindow, RateGate, _parsed
from tests.redisserver import redis_server, redis_url  # noqa: F401 (fixtures)


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


# "memory://" is the local window; any other URI goes through the limits library's storage.
@pytest.mark.parametrize("storage", ["memory://", "memory://?shared=1", "redis"])
def test_gate_raises_rate_limited_with_retry_after(storage, request):
    if storage == "redis":
        storage = request.getfixturevalue("redis_url")
    gate = RateGate(storage)
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


def test_a_hit_of_several_counts_all_or_none_and_waits_for_enough_room(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("lobbytalks.limits.time.monotonic", lambda: clock[0])
    window = LocalWindow()
    item = _parsed("5/minute")
    assert window.hit(item, "s", "k") is None
    clock[0] += 10
    assert window.hit(item, "s", "k", cost=2) is None  # 3 of 5 used
    assert window.hit(item, "s", "k", cost=3) == pytest.approx(50.0)  # the first must go
    assert window.hit(item, "s", "k", cost=6) == pytest.approx(60.0)  # never fits: a window
    assert window.hit(item, "s", "k", cost=2) is None  # the refusals spent nothing
    assert window.hit(item, "s", "k") == pytest.approx(50.0)


@pytest.mark.parametrize("storage", ["memory://", "memory://?shared=1", "redis"])
def test_a_refused_hit_of_several_spends_nothing(storage, request):
    if storage == "redis":
        storage = request.getfixturevalue("redis_url")
    gate = RateGate(storage)
    gate.hit("4/hour", "scope", 1, cost=3)
    with pytest.raises(ApiError):
        gate.hit("4/hour", "scope", 1, cost=2)
    gate.hit("4/hour", "scope", 1)
    with pytest.raises(ApiError):
        gate.hit("4/hour", "scope", 1)


def test_testing_a_key_never_creates_a_bucket():
    window = LocalWindow()
    item = _parsed("3/minute")
    for n in range(1000):
        assert window.test(item, "login", f"stranger{n}") is None
    assert len(window) == 0


def test_distinct_keys_leave_memory_bounded(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("lobbytalks.limits.time.monotonic", lambda: clock[0])
    window = LocalWindow(max_buckets=5_000)
    item = _parsed("10/day")
    # a key hit again and again stays: eviction takes the least recently hit buckets
    for n in range(100_000):
        window.hit(item, "login", f"sprayed{n}")
        if n % 1000 == 0:
            window.hit(item, "login", "attacker-address")
        clock[0] += 0.001
    assert len(window) <= 5_000
    assert window._hits.get(("login", "attacker-address")) is not None
    assert len(window._hits[("login", "attacker-address")].times) == 10  # still counted
    assert window.hit(item, "login", "attacker-address") is not None  # still refused


def test_expired_buckets_make_room_before_live_ones(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("lobbytalks.limits.time.monotonic", lambda: clock[0])
    window = LocalWindow(max_buckets=10)
    long_item, short_item = _parsed("1/day"), _parsed("1/second")
    window.hit(long_item, "s", "kept")  # least recently hit, but its window is still open
    for n in range(9):
        window.hit(short_item, "s", f"brief{n}")
    clock[0] += 2  # every short bucket has expired
    window.hit(short_item, "s", "new")
    assert window._hits.get(("s", "kept")) is not None
    assert window.hit(long_item, "s", "kept") is not None  # its one hit is still remembered

