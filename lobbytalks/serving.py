"""How ``lobbytalks serve`` runs the app under waitress, hardened for hostile clients.

Waitress reads every request completely on its event loop before a worker thread sees it,
so an idle or slow connection costs a socket, not a thread. What is decided here:

- connections: many sockets may be open (``connection_limit``), polled with ``poll()``
  (``select()`` stops at descriptor 1024), but no more than ``connections_per_client`` from
  one address, so that one client cannot take every slot; an idle one closes after
  ``idle_timeout``, and a request that is still arriving after ``request_timeout`` (a
  slowloris dribble of header lines or body bytes) is cut off, however steadily it trickles;
- bodies: no more than the largest body any surface accepts is ever buffered. A
  ``Content-Length`` over it is refused as soon as the headers are in, and a chunked body
  as soon as it outgrows it; the request then reaches the app without its body, flagged
  (``guards.BODY_REFUSED``), so each surface answers 413 ``payload_too_large`` in its own
  envelope, and the connection closes (the unread rest of the body is never parsed);
- proxies: ``X-Forwarded-*`` reach the app only when ``trusted_proxies`` is set; the app's
  ``ProxyFix`` (``create_app``) is the one place that interprets them;
- threads: on SQLite the worker threads take turns (``lobbytalks.turns``, the queue in
  ``lobbytalks.dispatchers``), one serving at a time, the others going on only while it
  waits for something else than the interpreter;
- responses: a response's header leaves in one send with its body, and what waitress
  refuses before the app sees it (a malformed request line or header) is answered in the
  API's JSON envelope;
- memory: glibc's allocator keeps at most ``MALLOC_ARENAS`` arenas and hands blocks of
  ``MMAP_THRESHOLD`` and more straight back to the system (``MALLOC_TUNING``).
"""
from __future__ import annotations

import ctypes
import ipaddress
import logging
import os
import socket
import threading
import time
from typing import Any

import orjson
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError
from waitress.server import MultiSocketServer, TcpWSGIServer
from waitress.task import ErrorTask, WSGITask
from waitress.utilities import BadRequest, RequestEntityTooLarge

from . import turns
from .dispatchers import Dispatcher, TurnTakingDispatcher
from .errors import ApiError
from .guards import BODY_REFUSED, LARGEST_BODY_LIMIT, SECURITY_HEADERS

log = logging.getLogger(__name__)

# A chunked body is counted on the wire, chunk-size lines included; this much framing on
# top of the largest body is still read, and the app then applies the exact limit.
CHUNK_FRAMING_ALLOWANCE = 4096
ACCEPTS_PER_TURN = 64
# At most one "a client holds too many connections" line in this many seconds.
REFUSAL_WARNING_SECONDS = 60
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
        "max_request_body_size": LARGEST_BODY_LIMIT + 1 + CHUNK_FRAMING_ALLOWANCE,
    }


def serve(app: Any, settings: Any, sockets: list[socket.socket] | None = None) -> None:
    """Serve ``app`` until SystemExit / KeyboardInterrupt (then let requests finish).

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
    MultiSocketServer(channels, adj, [(s.effective_host, s.effective_port) for s in listeners],
                      tasks).run()


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


class _BoundedRequest(HTTPRequestParser):
    """A request parser that stops at the body limit instead of failing with waitress'
    plain-text 413 (which, for a Content-Length body, it sends only after reading it)."""

    body_refused = False

    def __init__(self, adj) -> None:
        super().__init__(adj)
        self.started = time.time()  # the clock waitress' maintenance() is given

    def parse_header(self, header_plus: bytes) -> None:
        """waitress' parsing, refusing framings it would otherwise accept (RFC 9112):
        Content-Length beside a chunked body, which a proxy framing by the length would
        split elsewhere (the root of request smuggling), more than one Host, and an
        HTTP/1.1 request without one."""
        super().parse_header(header_plus)
        if self.chunked and "CONTENT_LENGTH" in self.headers:
            raise ParsingError("Content-Length and Transfer-Encoding together")
        if "," in self.headers.get("HOST", ""):  # waitress joins repeated headers with ", "
            raise ParsingError("more than one Host header")
        if self.version == "1.1" and "HOST" not in self.headers:
            raise ParsingError("HTTP/1.1 request without a Host header")

    def received(self, data: bytes) -> int:
        consumed = super().received(data)
        if self.body_rcv is None and not self.completed and b"\n\n" in self.header_plus:
            # Headers ended with bare line feeds: waitress waits for CRLF CRLF, which will
            # never come, until the request times out. Say so at once instead.
            self.error = BadRequest("header lines must end with CRLF")
            self.completed = True
            return consumed
        if isinstance(self.error, RequestEntityTooLarge) or (
                self._announces_too_much() and not self.completed):
            self.error = None
            self.body_refused = self.completed = True
            self.expect_continue = False  # no "100 Continue": the body is not wanted
        return consumed

    def _announces_too_much(self) -> bool:
        """A Content-Length, or the size line of one chunk, over the largest body."""
        if not self.headers_finished:
            return False
        if self.chunked:
            return getattr(self.body_rcv, "chunk_remainder", 0) > LARGEST_BODY_LIMIT
        return self.content_length > LARGEST_BODY_LIMIT


class _BoundedTask(WSGITask):
    def execute(self) -> None:
        if self.request.body_refused:
            self.set_close_on_finish()
        super().execute()

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


class _JsonErrorTask(ErrorTask):
    """What waitress refuses before the app sees a request (a malformed request line or
    header, a Content-Length of -1, headers past their limit, an unknown
    Transfer-Encoding) is answered in the API's JSON envelope, with waitress' status and
    the security headers every response carries, instead of waitress' plain text. No input
    earns a 5xx: waitress' 501 for a transfer coding it does not know becomes the contract's
    400 invalid_request."""

    def execute(self) -> None:
        refusal = self.request.error
        status, reason = refusal.code, refusal.reason
        if status >= 500:  # an unknown Transfer-Encoding (501): the request is at fault
            status, reason = 400, "Bad Request"
        detail = f"{refusal.reason}: {refusal.body}" if refusal.body else refusal.reason
        error = ApiError("payload_too_large" if status == 413 else "invalid_request",
                         f"HTTP 请求无法解析：{detail[:200]}", status=status)
        body = orjson.dumps(error.external_body())
        self.status = f"{status} {reason}"
        self.response_headers.extend([
            ("Content-Type", "application/json"), ("Cache-Control", "no-store"),
            *SECURITY_HEADERS.items()])
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


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


class ClientConnections:
    """How many connections each client address has open, against ``limit`` (0: none).

    A connection past the limit is closed as soon as it is accepted, before a byte of it
    is read; at most one warning a minute says so. (Channels are made on the event loop's
    thread and nearly always closed there; the lock covers the exceptions.)"""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()
        self._refused = 0
        self._warned_at = -float(REFUSAL_WARNING_SECONDS)

    def opened(self, key: str) -> bool:
        """Count a new connection from ``key``; False if it is one too many."""
        if not self.limit:
            return True
        with self._lock:
            count = self._open.get(key, 0)
            if count < self.limit:
                self._open[key] = count + 1
                return True
        self._note_refusal(key)
        return False

    def closed(self, key: str) -> None:
        with self._lock:
            count = self._open.get(key, 0) - 1
            if count > 0:
                self._open[key] = count
            else:
                self._open.pop(key, None)

    def _note_refusal(self, key: str) -> None:
        self._refused += 1
        now = time.monotonic()
        if now - self._warned_at >= REFUSAL_WARNING_SECONDS:
            log.warning("%s already holds %d connections (LOBBYTALKS_CONNECTIONS_PER_CLIENT): "
                        "%d connections refused since the last such line",
                        key, self.limit, self._refused)
            self._warned_at, self._refused = now, 0


class _BoundedChannel(HTTPChannel):
    parser_class = _BoundedRequest
    task_class = _BoundedTask
    error_task_class = _JsonErrorTask
    counted_as: str | None = None  # the client address key, once counted

    def __init__(self, server, sock, addr, adj, map=None) -> None:
        super().__init__(server, sock, addr, adj, map)
        key = client_address_key(addr)
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
    per_client = ClientConnections(0)  # shared by the listeners; set by serve()

    def handle_accept(self) -> None:
        # waitress accepts one connection per turn of the event loop, and a turn costs time
        # in proportion to the open connections: a burst of hundreds would keep a healthy
        # client waiting in the backlog for seconds. Take what is waiting, a batch a turn.
        for _ in range(ACCEPTS_PER_TURN):
            before = len(self._map)
            super().handle_accept()
            if len(self._map) == before or len(self._map) >= self.adj.connection_limit:
                return

    def maintenance(self, now: float) -> None:
        """Close idle channels (waitress), and those whose request is still arriving after
        ``request_timeout``: a steady dribble is never idle, so only this ends it."""
        super().maintenance(now)
        cutoff = now - self.request_timeout
        for channel in self.active_channels.values():
            arriving = channel.request
            if arriving is not None and not arriving.completed and arriving.started < cutoff:
                channel.will_close = True
