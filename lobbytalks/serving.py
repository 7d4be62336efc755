"""How ``lobbytalks serve`` runs the app under waitress, hardened for hostile clients.

Waitress reads every request completely on its event loop before a worker thread sees it,
so an idle or slow connection costs a socket, not a thread. What is decided here:

- connections: many sockets may be open (``connection_limit``), polled with ``poll()``
  (``select()`` stops at descriptor 1024), but no more than ``connections_per_client`` from
  one address (``client_connections``), so that one client cannot take every slot; an idle
  one closes after ``idle_timeout``, and a request that is still arriving after
  ``request_timeout`` (a slowloris dribble of header lines or body bytes) is cut off, however
  steadily it trickles; and when every slot is taken, the connection that has waited longest
  without a request to serve gives its slot up to the next client, or else one of the
  client holding the most connections (so sockets that only wait or trickle, spread over
  many addresses, cannot keep everyone out until they time out);
- bodies (parsed by ``http_framing``): no more than the largest body any surface accepts
  is ever buffered. A ``Content-Length`` over it is refused as soon as the headers are in,
  and a chunked body as soon as it outgrows it; the request then reaches the app without its
  body, flagged (``guards.BODY_REFUSED``), so each surface answers 413 ``payload_too_large``
  in its own envelope, and the connection closes (the rest of the body is never parsed);
- proxies: ``X-Forwarded-*`` reach the app only when ``trusted_proxies`` is set; the app's
  ``ProxyFix`` (``create_app``) is the one place that interprets them;
- threads: on SQLite the worker threads take turns (``lobbytalks.turns``, the queue in
  ``lobbytalks.dispatchers``), one serving at a time, the others going on only while it
  waits for something else than the interpreter;
- responses: a response's header leaves in one send with its body, what waitress refuses
  before the app sees it (a malformed request line or header) is answered in the API's JSON
  envelope (``http_framing``), and no worker waits for a client to read (``lagging_clients``);
- memory: glibc's allocator keeps at most ``MALLOC_ARENAS`` arenas and hands blocks of
  ``MMAP_THRESHOLD`` and more straight back to the system (``MALLOC_TUNING``).
"""
from __future__ import annotations

import ctypes
import logging
import os
import socket
import time
from typing import Any

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.task import WSGITask

from . import turns
from .client_connections import (ClientConnections, OccasionalWarning, client_address_key,
                                 longest_waiting, someone_waits)
from .dispatchers import Dispatcher, TurnTakingDispatcher
from .draining import DrainingServer, LastAnswerBeforeStop
from .guards import BODY_REFUSED, LARGEST_BODY_LIMIT
from .http_framing import MAX_REQUEST_HEADER_BYTES, BoundedRequest, JsonErrorTask
from .lagging_clients import UnreadAnswers, close_now, overdue

log = logging.getLogger(__name__)

# waitress counts a chunked body on the wire, framing included, while the limit is on the
# decoded body (``http_framing``): in one-byte chunks, six bytes a byte on the wire.
CHUNKED_WIRE_FACTOR = 8
ACCEPTS_PER_TURN = 64
# At the connection limit, a connection that has waited this long without a request to serve
# may be closed for a new one; a client that has just connected is still sending.
MAKE_ROOM_AFTER_SECONDS = 1.0
# Descriptors beyond the client connections: listening sockets, the database, temp files.
SPARE_FILES = 128
# glibc gives a thread that finds the heap busy an arena of its own, up to eight per core, and
# what is freed in one arena is not reused by another. Worker threads that take turns gain
# nothing from more; with two the bench's server peaked at 113 MB instead of 148-151.
MALLOC_ARENAS = 2
# glibc maps a block of 128 KiB or more on its own, but once such a block is freed it raises
# that threshold to the block's size (up to 32 MiB) and keeps later ones in the arenas, which
# seldom give memory back. A password hash needs one 19 MiB block (Argon2id's memory cost), so
# after a few logins each arena held one for good: the server's memory rose 72 -> 150 MB on
# PostgreSQL and 67 -> 127 MB on SQLite. A fixed threshold keeps blocks this large mapped on
# their own and returned when freed (back to 73 MB), and leaves anything smaller in the arenas.
MMAP_THRESHOLD = 4 * 2**20
M_ARENA_MAX, M_MMAP_THRESHOLD = -8, -3  # glibc's mallopt() parameter numbers
# (parameter, value, the environment variable and the GLIBC_TUNABLES name that set it instead)
MALLOC_TUNING = (
    (M_ARENA_MAX, MALLOC_ARENAS, "MALLOC_ARENA_MAX", "glibc.malloc.arena_max"),
    (M_MMAP_THRESHOLD, MMAP_THRESHOLD, "MALLOC_MMAP_THRESHOLD_", "glibc.malloc.mmap_threshold"),
)


def waitress_options(settings: Any) -> dict[str, Any]:
    return {
        "host": settings.host, "port": settings.port, "threads": settings.threads,
        "ident": "lobbytalks",
        # with N = 0 waitress drops forged X-Forwarded-* / Forwarded before the app runs
        "clear_untrusted_proxy_headers": settings.trusted_proxies == 0,
        "connection_limit": settings.connection_limit,
        "channel_timeout": settings.idle_timeout,
        # how often maintenance() looks for idle and overdue channels
        "cleanup_interval": max(1, min(settings.idle_timeout, settings.request_timeout, 20) // 2),
        "asyncore_use_poll": True,
        "max_request_body_size": CHUNKED_WIRE_FACTOR * LARGEST_BODY_LIMIT,
        "max_request_header_size": MAX_REQUEST_HEADER_BYTES,
    }


def serve(app: Any, settings: Any, sockets: list[socket.socket] | None = None) -> None:
    """Serve ``app`` until ``draining.ask_to_stop`` (then answer what was received), or
    SystemExit / KeyboardInterrupt (then let running requests finish).

    ``sockets``: listening sockets bound by a parent process (``workers``) instead of
    binding ``settings.host``/``port`` here.
    """
    _allow_open_files(settings.connection_limit + SPARE_FILES)
    _tune_malloc()
    options = waitress_options(settings)
    if sockets:
        del options["host"], options["port"]
        options["sockets"] = sockets
    adj = Adjustments(**options)
    tasks = TurnTakingDispatcher() if turns.wanted(settings) else Dispatcher()
    tasks.set_thread_count(adj.threads)
    channels: dict = {}
    # What waitress.create_server does, with the hardened server class: one listener per
    # address ("localhost" may be IPv4 and IPv6), all on one event loop.
    if sockets:
        listeners = [_HardenedServer(app, channels, _sock=sock, dispatcher=tasks, adj=adj,
                                     bind_socket=False, sockinfo=(sock.family, sock.type,
                                                                  sock.proto, sock.getsockname()))
                     for sock in sockets]
    else:
        listeners = [_HardenedServer(app, channels, dispatcher=tasks, adj=adj, sockinfo=info)
                     for info in adj.listen]
    # Behind a trusted proxy every connection comes from the proxy: limiting per client
    # is its job there.
    per_client = ClientConnections(
        0 if settings.trusted_proxies else settings.connections_per_client)
    for listener in listeners:
        listener.request_timeout = settings.request_timeout
        listener.per_client = per_client
    DrainingServer(channels, adj, listeners, tasks).run()


def _tune_malloc() -> list[int]:
    """Apply ``MALLOC_TUNING`` before the worker threads start; the parameters set. Not one
    the environment sets (the administrator's choice stands), nor without glibc's
    ``mallopt`` (musl, macOS, Windows: nothing to do)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return []
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    return [param for param, value, variable, tunable in MALLOC_TUNING
            if not os.environ.get(variable) and tunable not in tunables
            and mallopt(param, value)]


def _allow_open_files(needed: int) -> None:
    """Raise the soft open-file limit towards ``needed`` (up to the hard limit)."""
    try:
        import resource
    except ImportError:  # not on Unix: the platform decides
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    if target < needed:
        log.warning("only %d open files allowed (hard limit); LOBBYTALKS_CONNECTION_LIMIT "
                    "is effectively about %d", target, target - SPARE_FILES)


class _BoundedTask(WSGITask):
    def execute(self) -> None:
        if self.request.body_refused:
            self.set_close_on_finish()
        super().execute()

    def build_response_header(self) -> bytes:
        if self.channel.last_before_stop():  # decided as late as can be: the stop may come
            self.set_close_on_finish()       # while the app runs
        return super().build_response_header()

    def get_environment(self) -> dict:
        environ = super().get_environment()
        if self.request.body_refused:
            environ[BODY_REFUSED] = True
        return environ

    def write(self, data: bytes) -> None:
        """The header goes out with the first piece of the body, in one send: waitress sends
        it on its own (``send_bytes`` is 1), a second packet and a second wake-up of the
        client for every response (healthz served 19% more requests a second with one).
        Not for a body past waitress' in-memory buffer: joining would copy it once more."""
        if (not self.wrote_header and data and self.complete and self.has_body
                and self.content_length is not None
                and len(data) <= self.channel.adj.outbuf_overflow):
            header = self.build_response_header()
            self.wrote_header = True
            body = data[:self.content_length]
            self.content_bytes_written += len(body)
            self.channel.write_soon(header + body)
            if len(body) == len(data):
                return
            data = data[len(body):]  # past Content-Length: waitress warns and drops it
        super().write(data)


class _BoundedChannel(UnreadAnswers, LastAnswerBeforeStop, HTTPChannel):
    parser_class = BoundedRequest
    task_class = _BoundedTask
    error_task_class = JsonErrorTask
    counted_as: str | None = None  # the client address key, once counted

    def __init__(self, server, sock, addr, adj, map=None) -> None:
        super().__init__(server, sock, addr, adj, map)
        self.client_key = key = client_address_key(addr)
        if server.per_client.opened(key):
            self.counted_as = key
        else:
            self.close()

    def del_channel(self, map=None) -> None:
        super().del_channel(map)
        if self.counted_as is not None:  # closing may come more than once
            self.server.per_client.closed(self.counted_as)
            self.counted_as = None

    def writable(self) -> bool:
        """Not while a task runs: its thread sends what it writes itself (waitress'
        ``send_bytes`` is 1) and wakes the loop when it is done, or when its output passes
        the high watermark. waitress polled such a channel for writing anyway, found the
        buffer locked by the task and went round again: 30-80 idle turns of the event loop
        per request, each taking the GIL from the thread doing the work (healthz at
        concurrency 8 ran at a quarter of the floor, the same app under plain waitress
        with select() at three quarters)."""
        if (self.requests and not (self.will_close or self.close_when_flushed)
                and self.total_outbufs_len <= self.adj.outbuf_high_watermark):
            return False
        return bool(super().writable())


class _HardenedServer(TcpWSGIServer):
    channel_class = _BoundedChannel
    request_timeout = 20  # seconds; set from the settings per instance
    draining = False  # set when the server stops (``draining``)
    per_client = ClientConnections(0)  # shared by the listeners; set by serve()
    made_room = OccasionalWarning(
        "all %d connections are open (LOBBYTALKS_CONNECTION_LIMIT): %d that waited longest "
        "without a request, or of the clients holding the most, closed for new clients "
        "since the last such line")
    full = OccasionalWarning(
        "all %d connections are open, each busy with a request or a client's only one and "
        "under a second old (LOBBYTALKS_CONNECTION_LIMIT): new clients wait for a slot (%d "
        "turns of the loop since the last such line)")

    def handle_accept(self) -> None:
        # waitress accepts one connection per turn of the event loop, and a turn costs time
        # in proportion to the open connections: a burst of hundreds would keep a healthy
        # client waiting in the backlog for seconds. Take what is waiting, a batch a turn.
        for _ in range(ACCEPTS_PER_TURN):
            before = len(self._map)
            super().handle_accept()
            if len(self._map) == before or len(self._map) >= self.adj.connection_limit:
                return

    def readable(self) -> bool:
        """waitress' own, but at the limit it makes room (``_make_room``), and says so in a
        line a minute: waitress logged each crossing of the limit, two lines a newcomer."""
        now = time.time()
        if now >= self.next_channel_cleanup:
            self.next_channel_cleanup = now + self.adj.cleanup_interval
            self.maintenance(now)
        if not self.accepting:
            return False
        if len(self._map) < self.adj.connection_limit:
            return True
        self._make_room(now)
        return False

    def _make_room(self, now: float) -> None:
        """Every slot is taken and a client waits in the backlog: close one connection
        (``longest_waiting``) so that it gets in on the next turn (waitress would stop
        accepting until a timeout freed a slot, 20-30 s later). A slot freed brings the
        count under the limit: no more than one goes a turn, and only while clients wait."""
        if not someone_waits(self.socket):
            return
        victim = longest_waiting(self.active_channels.values(), now, MAKE_ROOM_AFTER_SECONDS,
                                 owner=lambda channel: channel.client_key)
        if victim is None:
            self.full.note(self.adj.connection_limit)
            return
        victim.will_close = True  # closed on this turn of the loop or the next
        self.made_room.note(self.adj.connection_limit)

    def maintenance(self, now: float) -> None:
        """Close idle channels (waitress), and those of clients that lag
        (``lagging_clients``): a request still arriving, answers unread."""
        super().maintenance(now)
        for channel in list(self.active_channels.values()):
            if overdue(channel, now, self.request_timeout, self.adj.channel_timeout):
                close_now(channel)
