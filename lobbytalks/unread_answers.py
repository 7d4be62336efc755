"""A client that asks and does not read: no worker thread waits for it.

waitress keeps a connection's answers in its output buffer until the client reads them. Past
``outbuf_high_watermark`` (16 MiB), a worker about to add to that buffer, or about to serve
the connection's next pipelined request, waited until the client had read enough, with no
time limit: idle and request timeouts count nothing while a request is being served. A
client that sent a few dozen requests for large answers in one packet and never read held a
worker for as long as it kept the socket open, and on SQLite, where the workers take turns
(``turns``), every other request of the server with it.

Here nothing waits. Our app's answers are built whole before they are written, so waiting
saved no memory, it only kept the worker. Once the buffer is past the watermark, the client
keeps what it was answered so far (and the answer being written), its other pipelined
requests are dropped unanswered, as HTTP lets a server do by closing the connection, and the
connection closes when it has read the rest, or ``request_timeout`` after that at the latest
(``unread_too_long``): a client reading a byte now and then keeps the connection from
looking idle, and so what it asked for from being freed.
"""
from __future__ import annotations

import time
from typing import Any


class UnreadAnswers:
    """Mixin for waitress' ``HTTPChannel``: its wait for the client to read, replaced."""

    abandoned_at: float | None = None  # when its other requests were dropped

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
        if self.abandoned_at is None:
            self.abandoned_at = time.time()
        self.server.pull_trigger()


def unread_too_long(channel: Any, request_cutoff: float, idle_cutoff: float) -> bool:
    """Whether to close ``channel`` at once: between requests, its client has left answers
    unread since before ``request_cutoff`` after its other requests were dropped, or read
    nothing since ``idle_cutoff``. (waitress only marks an idle channel to close, and closes
    it when its socket polls writable, which one whose client reads nothing never does: the
    connection and its unsent answers, on disk past a megabyte, stayed.)"""
    if channel.requests or not channel.total_outbufs_len:
        return False
    abandoned_at = getattr(channel, "abandoned_at", None)
    return (abandoned_at is not None and abandoned_at < request_cutoff
            or channel.last_activity < idle_cutoff)
