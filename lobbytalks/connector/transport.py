"""How the connector's requests reach the server: no redirect followed, and a deadline for
each whole exchange (``client.Client`` retries on top of this)."""
from __future__ import annotations

import http.client
import socket
import threading
import urllib.request


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """The API redirects nowhere; urllib would resend the token to wherever a 3xx points
    (another host, plain http). A redirect is answered as the refusal it is instead."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102
        return None


# The sockets of the request this thread is making, for its deadline to close
# (``AnswerDeadline``).
_in_flight = threading.local()


def _note_socket(sock: socket.socket) -> None:
    sockets = getattr(_in_flight, "sockets", None)
    if sockets is not None:
        sockets.append(sock)


class _NotedHTTPConnection(http.client.HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _note_socket(self.sock)


class _NotedHTTPSConnection(http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _note_socket(self.sock)


class _NotedHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req):  # noqa: D102
        return self.do_open(_NotedHTTPConnection, req)


class _NotedHTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req):  # noqa: D102
        return self.do_open(_NotedHTTPSConnection, req, context=self._context)


def _proxies() -> dict[str, str]:
    """The environment's proxy for https only (``https_proxy``; ``no_proxy`` still applies):
    it tunnels what stays encrypted to the server. Plain http through ``http_proxy`` would
    hand the proxy the token in clear, a server on this machine included, so it goes
    straight to ``--server``."""
    return {scheme: url for scheme, url in urllib.request.getproxies().items()
            if scheme == "https"}


OPENER = urllib.request.build_opener(_NoRedirects, urllib.request.ProxyHandler(_proxies()),
                                     _NotedHTTPHandler, _NotedHTTPSHandler)


class AnswerDeadline:
    """The whole exchange, status line and headers included, within ``seconds``: the
    socket's timeout is per read, so a server or proxy trickling a header every few seconds
    held a request (and a stop waiting for it) for as long as it liked. At the deadline the
    request's socket is shut down, which ends the read where it waits."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.passed = seconds, False
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._end)
        self._timer.daemon = True

    def __enter__(self) -> "AnswerDeadline":
        _in_flight.sockets = self._sockets
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        _in_flight.sockets = None

    def _end(self) -> None:
        self.passed = True
        for sock in list(self._sockets):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
