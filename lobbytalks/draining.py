"""Stopping ``lobbytalks serve`` without leaving what it was asked unanswered.

SIGTERM (``docker stop``, systemd, the supervisor of several workers) or Ctrl-C asks the
event loop to stop. It then closes its listening sockets, answers every request it has
read in full, the queued ones too (waitress on its own cancels those at exit, and their
clients saw the connection close without an answer: a lost submit, a lost claim), sends
each connection's last response with ``Connection: close`` and closes idle keep-alive
connections at once. What is still busy after ``DRAIN_SECONDS`` is left to waitress' own
stop, which waits for running requests up to 5 s more: under the 10 s ``docker stop``
allows before SIGKILL. A second signal stops at once.

The handler only sets a flag and wakes the loop with a byte in a trigger's pipe: an
exception raised wherever a signal lands could cut a connection's parsing in half.
"""
from __future__ import annotations

import logging
import select
import time
from typing import Any

from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.server import MultiSocketServer

log = logging.getLogger(__name__)

DRAIN_SECONDS = 4.0
_DRAIN_POLL_SECONDS = 0.05
_running: "DrainingServer | None" = None  # the server of this process, while it serves


def ask_to_stop(signum: int, frame: Any) -> None:
    """Signal handler for SIGTERM and SIGINT: drain and stop, or stop at once when nothing
    serves yet (the app is still starting) or a stop was asked already."""
    server = _running
    if server is None or server.stopping:
        raise SystemExit(0)
    server.stopping = True
    server.wake()


class DrainingServer(MultiSocketServer):
    """waitress' event loop over several listeners, which drains before it stops."""

    stopping = False

    def __init__(self, channels: dict, adj: Any, listeners: list, dispatcher: Any) -> None:
        super().__init__(channels, adj,
                         [(s.effective_host, s.effective_port) for s in listeners], dispatcher)
        self.listeners = listeners

    def wake(self) -> None:
        # os.write on the pipe itself: pull_trigger() takes a lock the interrupted main
        # thread may be holding.
        self.listeners[0].trigger._physical_pull()

    def run(self) -> None:
        global _running
        _running = self
        poll = self._poll_function()
        try:
            while not self.stopping:  # waitress' own loop, with the flag looked at each turn
                poll(self.adj.asyncore_loop_timeout, self.map)
            self._drain(time.monotonic() + DRAIN_SECONDS)
        except (SystemExit, KeyboardInterrupt):
            pass  # a second signal, or Ctrl-C before the handler was set: stop now
        finally:
            _running = None
            self.close()

    def _poll_function(self):
        """What ``wasyncore.loop`` turns with: poll(), or select() where there is none."""
        return (self.asyncore.poll2 if self.adj.asyncore_use_poll and hasattr(select, "poll")
                else self.asyncore.poll)

    def _drain(self, deadline: float) -> None:
        for listener in self.listeners:
            listener.draining = True
            # the listening socket only: its trigger stays, for the threads' wake-ups
            wasyncore.dispatcher.close(listener)
        while time.monotonic() < deadline:
            open_channels = [c for c in list(self.map.values()) if isinstance(c, HTTPChannel)]
            if not open_channels:
                return
            for channel in open_channels:
                _close_when_idle(channel)
            self._poll_function()(_DRAIN_POLL_SECONDS, self.map)
        log.warning("stopping with connections still busy after %.0f s", DRAIN_SECONDS)


def _close_when_idle(channel: HTTPChannel) -> None:
    """Close a connection with no request queued, running or arriving, once what it was
    sent has left."""
    with channel.requests_lock:
        if not channel.requests and channel.request is None:
            channel.close_when_flushed = True


class LastAnswerBeforeStop:
    """For the channel class: while the server drains, the response to a connection's
    last request (nothing queued or arriving behind it) says ``Connection: close``, and
    what the client sends after it is not read (HTTP/1.1 lets it send again elsewhere)."""

    last_answer = False

    def last_before_stop(self) -> bool:
        if not getattr(self.server, "draining", False):
            return False
        with self.requests_lock:
            if len(self.requests) == 1 and self.request is None:
                self.last_answer = True
        return self.last_answer

    def received(self, data: bytes) -> bool:
        if self.last_answer:
            return False
        return super().received(data)
