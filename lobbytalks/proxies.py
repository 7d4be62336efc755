"""Which connections may speak for a client through ``X-Forwarded-*``.

With ``LOBBYTALKS_TRUSTED_PROXIES=N`` the last N hops of ``X-Forwarded-For/-Proto/-Host``
name the client, its scheme and the host it asked for (werkzeug's ``ProxyFix``). Those
headers are only as honest as whoever sent them: a client that reaches the port directly
could claim any address and get a fresh rate-limit budget with every request. So they are
believed only from a peer inside ``LOBBYTALKS_TRUSTED_PROXY_NETWORKS`` (by default the
loopback and private ranges, where a proxy on the same machine, in a container network or
on a LAN connects from); from any other peer they are dropped and the request is that
peer's own, as gunicorn and uvicorn do with their allowed-addresses lists.
"""
from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Any, Callable, Iterable

from werkzeug.middleware.proxy_fix import ProxyFix

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# What ProxyFix and a reverse proxy could use to name the client, the scheme or the host.
FORWARDED_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST",
                     "HTTP_X_FORWARDED_PORT", "HTTP_X_FORWARDED_PREFIX", "HTTP_FORWARDED")


def parse_networks(value: str) -> tuple[Network, ...]:
    """``"10.0.0.0/8, ::1"`` as networks (a bare address is a network of one).

    :raise ValueError: naming the entry that is no address or network.
    """
    networks = []
    for entry in (part.strip() for part in value.split(",")):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"{entry!r} is no IP address or network (such as 10.0.0.0/8)") \
                from None
    if not networks:
        raise ValueError("name at least one address or network")
    return tuple(networks)


class TrustedPeers:
    """WSGI middleware: ``ProxyFix`` for peers in ``networks``; for others the forwarded
    headers are removed, so nothing later can read them."""

    def __init__(self, app: Callable[..., Any], hops: int, networks: Iterable[Network]) -> None:
        self.app = app
        self.fixed = ProxyFix(app, x_for=hops, x_proto=hops, x_host=hops)
        networks = tuple(networks)

        @lru_cache(maxsize=1024)
        def trusted(peer: str) -> bool:
            try:
                address = ipaddress.ip_address(peer.partition("%")[0])  # no IPv6 zone
            except ValueError:  # a Unix socket, or nothing: no proxy address
                return False
            address = getattr(address, "ipv4_mapped", None) or address
            return any(address in network for network in networks)

        self.trusted = trusted

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if self.trusted(environ.get("REMOTE_ADDR") or ""):
            return self.fixed(environ, start_response)
        for name in FORWARDED_HEADERS:
            environ.pop(name, None)
        return self.app(environ, start_response)
