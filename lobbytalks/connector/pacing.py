"""How often and how long an attempt works, and the two ways a harness run is cut short."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Timing:
    tick: float = 5.0                 # how often a running harness is checked
    heartbeat_every: int = 10 * 60    # about every 10 minutes, computed from expires
    status_every: int = 60            # between heartbeats, is the task still leased?
    stop_margin: int = 5 * 60         # stop research this long before claim + 2 h
    harness_timeout: int = 90 * 60
    submit_retries: int = 5
    backoff: float = 1.0


class Stopped(Exception):
    """The owner asked the connector to stop (SIGINT/SIGTERM)."""


class Deadline(Exception):
    """The harness ran out of time; the message says which limit ended it."""
