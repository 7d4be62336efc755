"""How often and how long an attempt works, and the two ways a harness run is cut short.

A task's times (``created``, ``expires``) are the server's. They are read on this machine's
clock by how far the server's is ahead (``serverAhead`` in the attempt), learnt whenever
the server's now is known from what it answers: a claim made just now was created now, and
a renewal runs to now + 30 minutes (a replayed claim tells nothing, so research then starts
with a renewal). Read as this machine's own, a clock 20 minutes behind the server's never
renewed the lease.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..quotas import LEASE_SECONDS, MAX_LEASE_SECONDS


@dataclass
class Timing:
    tick: float = 5.0                 # how often a running harness is checked
    heartbeat_every: int = 10 * 60    # ten minutes after each renewal
    status_every: int = 60            # between heartbeats, is the task still leased?
    stop_margin: int = 5 * 60         # stop research this long before claim + 2 h
    harness_timeout: int = 90 * 60
    submit_retries: int = 5
    backoff: float = 1.0


class Stopped(Exception):
    """The owner asked the connector to stop (SIGINT/SIGTERM)."""


class Deadline(Exception):
    """The harness ran out of time; the message says which limit ended it."""


def learn_server_clock(attempt: dict[str, Any], now: float, *, claimed: bool) -> None:
    """After a claim made just now (``claimed``) or a renewal of ``attempt["task"]``."""
    task = attempt["task"]
    if claimed:
        attempt["serverAhead"] = task["created"] - now
    elif task["expires"] < task["created"] + MAX_LEASE_SECONDS:  # not cut at the 2-hour cap
        attempt["serverAhead"] = task["expires"] - LEASE_SECONDS - now


def _ours(attempt: dict[str, Any], server_time: float) -> float:
    return server_time - attempt.get("serverAhead", 0)


def next_heartbeat(attempt: dict[str, Any], timing: Timing) -> float:
    task = attempt["task"]
    if task["expires"] >= task["created"] + MAX_LEASE_SECONDS:
        return float("inf")  # the 2-hour cap: nothing left to extend
    return _ours(attempt, task["expires"]) - (LEASE_SECONDS - timing.heartbeat_every)


def heartbeat_again_in(attempt: dict[str, Any], seconds: float, now: float,
                       timing: Timing) -> None:
    """A renewal that did not get through: the next try in ``seconds``."""
    expires = now + seconds + LEASE_SECONDS - timing.heartbeat_every
    attempt["task"] = {**attempt["task"], "expires": expires + attempt.get("serverAhead", 0)}


def research_deadline(attempt: dict[str, Any], timing: Timing) -> float:
    """When research must stop, to submit before the lease's 2 hours are up."""
    return _ours(attempt, attempt["task"]["created"] + MAX_LEASE_SECONDS) - timing.stop_margin
