"""How many connections each client address holds (``lobbytalks serve``): one client may not
take every slot of ``connection_limit``, however fast it opens sockets; and which connection
gives its slot up when every slot is taken (``longest_waiting``)."""
from __future__ import annotations

import ipaddress
import logging
import math
import select
import threading
import time
from typing import Any, Callable, Iterable

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


# A request still arriving at this pace or faster is not counted as waiting: an upload on a
# slow phone link is no socket that only waits.
KEEPS_PACE_BYTES_PER_SECOND = 1024


def longest_waiting(channels: Iterable[Any], now: float, at_least: float,
                    owner: Callable[[Any], Any] = lambda channel: None) -> Any | None:
    """The connection to close for a newcomer when every slot is taken.

    First the one that has held its slot longest without giving the server anything to do,
    once that is ``at_least`` seconds ago: an idle one (since its last activity) or one
    whose request is still arriving (since that request began, less a second for each KiB
    of it read: a dribble of bytes is activity, yet no request).

    When none has waited that long (every slot busy sending, or young), one of the client
    that holds the most connections (``owner`` names a connection's client) gives way: its
    oldest, then the one that has sent least for its age; a client's only connection not
    ``at_least`` seconds old is left to send its first request. Sockets trickling just over the
    pace, bursts then silence, or keep-alive sockets kept young, spread over a few
    addresses, would otherwise keep every newcomer out, and a pace alone cannot tell them
    from a phone's upload: an attacker can always send faster. Closing the heaviest
    client's makes it need as many addresses as there are slots.

    Never one whose request is being served, whose answer is still being sent, or that is
    already closing; None when every connection is such."""
    cutoff = now - at_least
    waiting, waiting_since = None, math.inf
    held: dict[Any, int] = {}
    others: list[tuple[Any, Any, bool, float]] = []
    for channel in channels:
        who = owner(channel)
        held[who] = held.get(who, 0) + 1
        if (channel.requests or channel.total_outbufs_len or channel.will_close
                or channel.close_when_flushed):
            continue
        arriving = channel.request
        if arriving is None:
            since, began = channel.last_activity, channel.creation_time
        else:
            since = arriving.started + arriving.arrived / KEEPS_PACE_BYTES_PER_SECOND
            began = arriving.started
        if since <= cutoff and since < waiting_since:
            waiting, waiting_since = channel, since
        others.append((channel, who, began > cutoff, since))
    others = [o for o in others if held[o[1]] > 1 or not o[2]]
    if waiting is not None or not others:
        return waiting
    return min(others, key=lambda o: (-held[o[1]], o[2], o[3]))[0]


def someone_waits(listener: Any) -> bool:
    """Whether a client waits in ``listener``'s backlog: closing a connection only because
    the count reached the limit would cut one off for nobody."""
    poller = select.poll()
    poller.register(listener.fileno(), select.POLLIN)
    return bool(poller.poll(0))


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
