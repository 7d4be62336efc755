"""How many connections each client address holds (``lobbytalks serve``): one client may not
take every slot of ``connection_limit``, however fast it opens sockets; and which connection
gives its slot up when every slot is taken (``longest_waiting``)."""
from __future__ import annotations

import ipaddress
import logging
import math
import threading
import time
from typing import Any, Iterable

log = logging.getLogger("lobbytalks.serving")

# At most one line of each kind of connection warning in this many seconds.
WARNING_SECONDS = 60


def client_address_key(addr: Any) -> str:
    """Whose connection this is: the IPv4 address (also when mapped into IPv6), or the /64
    of an IPv6 one, since a single host is usually handed a whole /64."""
    host = addr[0] if isinstance(addr, tuple) and addr else str(addr)
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if ip.version == 4:
        return str(ip)
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.IPv6Network((ip, 64), strict=False))


class OccasionalWarning:
    """Counts what happens and says so in at most one log line a minute."""

    def __init__(self, message: str) -> None:
        self.message = message  # formatted with the count since the last line, then args
        self._count = 0
        self._warned_at = -float(WARNING_SECONDS)

    def note(self, *args: Any) -> None:
        self._count += 1
        now = time.monotonic()
        if now - self._warned_at >= WARNING_SECONDS:
            log.warning(self.message, *args, self._count)
            self._warned_at, self._count = now, 0


# A request still arriving at this pace or faster keeps its place while sockets only wait:
# an upload on a slow phone link is no socket that only waits.
KEEPS_PACE_BYTES_PER_SECOND = 1024


def longest_waiting(channels: Iterable[Any], now: float, at_least: float) -> Any | None:
    """The connection that has held its slot longest without giving the server anything to
    do: an idle one (since its last activity) or one whose request is still arriving (since
    that request began, less a second for each KiB of it read: a dribble of bytes is
    activity, yet no request), once that is ``at_least`` seconds ago.

    When none has waited that long and none is idle (an idle one soon will have), the
    request arriving slowest for its age (begun at least ``at_least`` seconds ago) gives
    way: sockets each sending a little faster than the pace, or a burst and then nothing,
    must not keep every newcomer out for as long as the attacker pays for them; a faster
    upload goes after them. None when no connection qualifies. Never one whose request is
    being served, whose answer is still being sent, or that is already closing."""
    cutoff = now - at_least
    waiting = slowest = None
    waiting_since = slowest_since = math.inf
    idle_for_now = False
    for channel in channels:
        if (channel.requests or channel.total_outbufs_len or channel.will_close
                or channel.close_when_flushed):
            continue
        arriving = channel.request
        if arriving is None:
            since = channel.last_activity
            idle_for_now = idle_for_now or since > cutoff
        else:
            since = arriving.started + arriving.arrived / KEEPS_PACE_BYTES_PER_SECOND
            if arriving.started <= cutoff and since < slowest_since:
                slowest, slowest_since = channel, since
        if since <= cutoff and since < waiting_since:
            waiting, waiting_since = channel, since
    if waiting is not None or idle_for_now:
        return waiting
    return slowest


class ClientConnections:
    """How many connections each client address has open, against ``limit`` (0: none).

    A connection past the limit is closed as soon as it is accepted, before a byte of it
    is read; at most one warning a minute says so. (Channels are made on the event loop's
    thread and nearly always closed there; the lock covers the exceptions.)"""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()
        self._refusals = OccasionalWarning(
            "%s already holds %d connections (LOBBYTALKS_CONNECTIONS_PER_CLIENT): "
            "%d connections refused since the last such line")

    def opened(self, key: str) -> bool:
        """Count a new connection from ``key``; False if it is one too many."""
        if not self.limit:
            return True
        with self._lock:
            count = self._open.get(key, 0)
            if count < self.limit:
                self._open[key] = count + 1
                return True
        self._refusals.note(key, self.limit)
        return False

    def closed(self, key: str) -> None:
        with self._lock:
            count = self._open.get(key, 0) - 1
            if count > 0:
                self._open[key] = count
            else:
                self._open.pop(key, None)
