"""Clients that lag: a request still arriving, answers left unread. No worker waits for
them, and none keeps its connection, or what was written for it, for long.

waitress keeps a connection's answers in its output buffer until the client reads them. Past
``outbuf_high_watermark`` (16 MiB), a worker about to add to that buffer, or about to serve
the connection's next pipelined request, waited until the client had read enough, with no
time limit: idle and request timeouts count nothing while a request is being served. A
client that sent a few dozen requests for large answers in one packet and never read held a
worker for as long as it kept the socket open, and on SQLite, where the workers take turns
(``turns``), every other request of the server with it.

Here nothing waits (``UnreadAnswers``). Our app's answers are built whole before they are
written, so waiting saved no memory, it only kept the worker. Once the buffer is past the
watermark, the client keeps what it was answered so far (and the answer being written), its
other pipelined requests are dropped unanswered, as HTTP lets a server do by closing the
connection, and the connection closes once the answers are read, or as soon as the client
reads them slower than ``MIN_DRAIN_PER_SECOND`` over a request timeout. So does one that
asked for less but leaves more than waitress keeps in memory (a megabyte, the rest in a
temp file) and reads it a few bytes at a time.

Closing is ``close_now``: waitress closes a channel marked ``will_close`` only when its
socket polls writable, which never happens while the client reads nothing (the connection
and its unsent answers, on disk past a megabyte, stayed for good); and closed outright in the
middle of the event loop, its descriptor could go to a connection accepted in the same turn,
which the closed one's pending event then reset.
"""
from __future__ import annotations

import fcntl
import socket
import struct
import termios
import time
from typing import Any

from waitress.buffers import OverflowableBuffer

# Answers a client left behind are to be read at this pace at least, over each request
# timeout; a client reading a few bytes now and then would otherwise keep them for ever.
MIN_DRAIN_PER_SECOND = 16 * 1024
_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() drops what is unsent


class UnreadAnswers:
    """Mixin for waitress' ``HTTPChannel``: its wait for the client to read, replaced."""

    # (mark time, bytes unsent then): its requests were dropped, or it left a megabyte unread
    behind: tuple[float, int] | None = None

    def _flush_outbufs_below_high_watermark(self) -> None:
        if self.total_outbufs_len <= self.adj.outbuf_high_watermark:
            return
        with self.outbuf_lock:  # reentrant: write_soon holds it already
            self._flush_exception(self._flush_some, do_close=False)  # what the socket takes
            if self.total_outbufs_len <= self.adj.outbuf_high_watermark:
                return
        with self.requests_lock:
            for dropped in self.requests[1:]:  # the first is the one being served
                dropped.close()
            del self.requests[1:]
            self.close_when_flushed = True
        if self.behind is None:
            self.behind = (time.time(), unsent(self))
        self.server.pull_trigger()


def overdue(channel: Any, now: float, request_timeout: float, idle_timeout: float) -> bool:
    """Whether ``channel`` is to be closed now: its request is still arriving after
    ``request_timeout`` (a dribble is never idle), its client has read nothing of its
    answers for ``idle_timeout``, or, its other requests dropped or more than a megabyte
    of answers unread, it reads them too slowly (``_falls_behind``)."""
    arriving = channel.request
    if arriving is not None and not arriving.completed and arriving.started < now - request_timeout:
        return True
    if channel.requests and channel.behind is None:
        return False
    if channel.total_outbufs_len and channel.last_activity < now - idle_timeout:
        return True
    if channel.behind is None:
        if channel.total_outbufs_len <= channel.adj.outbuf_overflow:
            return False
        # answers left past what waitress keeps in memory (the rest waits in a temp file):
        # read at the pace asked of a client whose requests were dropped, or let go
        channel.behind = (now, unsent(channel))
    return _falls_behind(channel, now, request_timeout)


def _falls_behind(channel: Any, now: float, window: float) -> bool:
    since, before = channel.behind
    left = unsent(channel)
    if not left:  # all read: a keep-alive client goes on as any other
        channel.behind = None
        return False
    if left > before:  # the answer being served was written since
        before = left
        channel.behind = (since, before)
    if now - since < window:
        return False
    if before - left < MIN_DRAIN_PER_SECOND * window:
        return True
    channel.behind = (now, left)
    return False


def unsent(channel: Any) -> int:
    """What ``channel``'s client has yet to receive: waitress' buffer and the socket's send
    queue, which takes megabytes before waitress sees any of its buffer go."""
    try:
        queued = fcntl.ioctl(channel.socket.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
    except (OSError, ValueError):  # closed meanwhile
        return channel.total_outbufs_len
    return channel.total_outbufs_len + struct.unpack("i", queued)[0]


def close_now(channel: Any) -> None:
    """Drop what ``channel`` has not sent and have the event loop close it on its next turn
    (``will_close``), whether or not its client reads: shut down, the socket polls as hung
    up and writable, so waitress closes it while handling its own event."""
    with channel.outbuf_lock:
        for outbuf in channel.outbufs:
            outbuf.close()
        channel.outbufs = [OverflowableBuffer(channel.adj.outbuf_overflow)]
        channel.total_outbufs_len = channel.current_outbuf_count = 0
    channel.will_close = True
    try:
        channel.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
        channel.socket.shutdown(socket.SHUT_RDWR)
    except OSError:  # already gone: waitress closes it on its own
        pass
