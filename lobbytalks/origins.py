"""What an address of this service is, read alike however it is written: the Origin rule
(``guards.check_origin``), ``LOBBYTALKS_PUBLIC_URL`` (``setting_rules``) and the address
``lobbytalks healthcheck`` is given all ask it. Standard library only, no Flask."""
from __future__ import annotations

import ipaddress
import unicodedata
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str, *, path_allowed: bool = False) -> str | None:
    """``scheme://host[:port]`` of ``url``, lower case, the host as ``_one_host`` reads it
    and the scheme's default port left out: a PUBLIC_URL written otherwise than browsers
    write an Origin refused every browser's write. None for what is no address of a web
    service (another scheme, no host, a port past 65535 or 0, a user, a query, a fragment,
    spaces), or, unless ``path_allowed`` (a public address may have one), has a path."""
    try:
        parts = urlsplit(url)
        port, host = parts.port, _one_host(parts.hostname or "")
    except (ValueError, UnicodeError):
        return None
    scheme = parts.scheme.lower()
    if (scheme not in _DEFAULT_PORTS or not host or port == 0 or "@" in parts.netloc
            or "?" in url or "#" in url or any(c.isspace() for c in url)
            or not (path_allowed or parts.path in ("", "/"))):
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + ("" if port in (None, _DEFAULT_PORTS[scheme]) else f":{port}")


def _one_host(host: str) -> str:
    """An IP address in its short form, a name in Unicode, lower case: a browser writes an
    IDN in punycode by UTS 46 (``straße`` as ``xn--strae-oqa``), which Python's IDNA 2003
    codec does not (it makes ``strasse``); each punycode label is decoded instead.

    :raise UnicodeError: a label that is no punycode."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        labels = (label[4:].encode("ascii").decode("punycode") if label[:4] == "xn--"
                  else label for label in host.lower().split("."))
        return unicodedata.normalize("NFC", ".".join(labels))
