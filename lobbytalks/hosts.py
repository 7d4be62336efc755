"""The names a server listening on this machine alone answers to: a defence against DNS
rebinding.

A web page on another site can have its own name resolve to 127.0.0.1 after it loaded, and
then send requests to a server listening there as if to its own site, with its own name in
``Host`` and ``Origin``. Without ``LOBBYTALKS_PUBLIC_URL`` the Origin rule (``guards``)
compares ``Origin`` with the request's own Host, so the two agree and the request would pass:
the page could register accounts, post questions, or talk MCP with a token it was given.
MCP's transport rules ask a local server to guard against exactly this.

So a server that listens on a loopback address, has no public URL and no proxy in front
answers only requests addressed to a loopback name (``localhost``, ``*.localhost``,
127.0.0.0/8, ``[::1]``, any port); everything else gets 400 ``invalid_request``. Listening
on another address, or with ``LOBBYTALKS_PUBLIC_URL`` (the Origin rule then uses it) or
``LOBBYTALKS_TRUSTED_PROXIES`` set, nothing changes.
"""
from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Any, Callable

from flask import request

from .errors import ApiError
from .models.common import plain_int


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) can only
    mean this machine: ``localhost`` and its subdomains (RFC 6761) or a loopback address."""
    host = host.rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.removeprefix("[").removesuffix("]")).is_loopback
    except ValueError:  # another name: it may resolve anywhere
        return False


@lru_cache(maxsize=64)
def _addressed_to_loopback(host_header: str) -> bool:
    """``host[:port]`` from a Host header names this machine."""
    if host_header.startswith("["):
        name, bracket, rest = host_header[1:].partition("]")
        valid_rest = not rest or (rest[0] == ":" and _is_port(rest[1:]))
        return bool(bracket) and valid_rest and is_loopback(name)
    name, _, port = host_header.partition(":")
    return (not port or _is_port(port)) and is_loopback(name)


def _is_port(text: str) -> bool:
    """RFC 3986's port (ASCII digits), here at most 65535."""
    port = plain_int(text) if len(text) <= 5 else None
    return port is not None and port <= 65535


class UnknownHost(ApiError):
    page_detail = "err.page.unknown_host"

    def __init__(self) -> None:
        super().__init__("invalid_request", "此服务只在本机提供，请用 localhost 或 127.0.0.1 "
                                            "访问；要用其他地址，请设置 LOBBYTALKS_PUBLIC_URL")


def check_loopback_host() -> None:
    # A browser always names the host; a request without one (HTTP/1.0) is no page's.
    host = request.environ.get("HTTP_HOST")
    if host is not None and not _addressed_to_loopback(host):
        raise UnknownHost()


class UnreadableHost(ApiError):
    def __init__(self) -> None:
        super().__init__("invalid_request", "Host（或 X-Forwarded-Host）不是可用的主机名")


def check_readable_host() -> None:
    """A host in punycode that does not decode back to itself (``xn--strae-oqa``, as IDNA
    2003 reads it) failed every page with 503 where werkzeug built the request's own URL
    from it: refused as a bad request instead. Only such names are looked at twice."""
    if "xn--" in request.host.lower():
        try:
            request.host_url  # noqa: B018 (building it is the test)
        except UnicodeError:
            raise UnreadableHost() from None


def host_step(settings: Any) -> tuple[Callable[[], None], ...]:
    """The request steps that refuse a host name werkzeug cannot read and, where the
    settings call for it, other names than this machine's."""
    wanted = (is_loopback(settings.host) and not settings.public_url
              and not settings.trusted_proxies)
    return (check_readable_host, *((check_loopback_host,) if wanted else ()))
