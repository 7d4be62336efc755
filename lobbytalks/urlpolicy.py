"""Framework-free policy for evidence source URLs (protocol §5): public https names only, and
nothing in the URL that reaches a private network or carries a credential.

Decided from the text alone -- no DNS lookups at request time, so a verdict is instant and
repeatable. What the text cannot show (a public name whose DNS an attacker later points
inward) is out of reach for any static check; what it can show is refused here: IP
addresses in every spelling, names that embed a private IP by construction (nip.io-style
wildcard DNS), well-known names that resolve to loopback, credentials in userinfo, query or
path parameters, and secrets anywhere in the URL.
"""
from __future__ import annotations

import ipaddress
import re
import unicodedata
from functools import cache
from typing import Iterator
from urllib.parse import SplitResult, unquote, unquote_plus, urlsplit, urlunsplit

from .secrets_scan import find_secret
from .textrules import fold_for_scanning, js_length

__all__ = ["MAX_SOURCE_URL_LENGTH", "check_source_url"]

MAX_SOURCE_URL_LENGTH = 1500

_NON_PUBLIC_NAMES = frozenset({"localhost"})
# Special-use and customary private suffixes (RFC 6761, 6762, 8375, 9476 and common LAN
# names), plus names that only exist inside a cluster.
_NON_PUBLIC_SUFFIXES = (
    "localhost", "local", "localdomain", "internal", "intranet", "lan", "home", "home.arpa",
    "corp", "private", "test", "invalid", "onion", "example", "arpa", "alt", "svc",
)
# Public domains whose names resolve inward by construction, refused with every subdomain:
# wildcard-IP services (10.0.0.1.sslip.io, 7f000001.nip.io, 10-0-0-1.nip.io) and DNS
# rebinding helpers, whose names are IP addresses in disguise; and domains pointing every
# name at 127.0.0.1 for local development.
_IP_IN_DISGUISE_DOMAINS = (
    "nip.io", "sslip.io", "xip.io", "traefik.me", "backname.io", "1u.ms", "rbndr.us",
)
_LOOPBACK_DOMAINS = (
    "localtest.me", "lvh.me", "vcap.me", "lacolhost.com", "fuf.me", "local.gd",
    "localhost.direct",
)
_DNS_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_TOP_LEVEL_LABEL = re.compile(r"[a-z]{2,63}|xn--[a-z0-9-]{1,59}")
# WHATWG URL parsers read a host whose last label is a number (decimal, 0x-hex or
# 0-octal) as IPv4: http://2130706433 and http://0x7f.1 are both 127.0.0.1.
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
# An IPv4 address written inside a name, the ways wildcard-IP services read them:
# dotted across four labels, dashed inside one label, or 8 hex digits as one dash part.
# Lookaheads, so overlapping runs are all read: 1.10.0.0.1 holds 10.0.0.1.
_DOTTED_IPV4 = re.compile(r"(?:^|\.)(?=((?:[0-9]{1,3}\.){3}[0-9]{1,3})(?:\.|$))")
_DASHED_IPV4 = re.compile(r"(?:^|[.-])(?=([0-9]{1,3}(?:-[0-9]{1,3}){3})(?:[.-]|$))")
_HEX_IPV4 = re.compile(r"(?:^|[.-])([0-9a-f]{8})(?=[.-]|$)")
# RFC 1918 and "this network" (0.0.0.0/8), for the narrower hex rule.
_PRIVATE_BLOCKS = tuple(ipaddress.IPv4Network(block) for block in (
    "0.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))


def _has_invisible_chars(text: str) -> bool:
    # In ASCII the characters below are exactly the unprintable ones and the space.
    if text.isascii():
        return not text.isprintable() or " " in text
    # Cf covers zero-width and bidi-override characters that disguise a URL; Cs is a lone
    # surrogate, which no real URL holds and no encoder can write out.
    return any(char.isspace() or unicodedata.category(char) in ("Cc", "Cf", "Cs") for char in text)


def _looks_like_ipv4(host: str) -> bool:
    last_label = host.removesuffix(".").rsplit(".", 1)[-1]
    return _NUMERIC_LABEL.fullmatch(last_label) is not None


def _within(host: str, domains: tuple[str, ...]) -> bool:
    return host in domains or host.endswith(_subdomain_endings(domains))


@cache
def _subdomain_endings(domains: tuple[str, ...]) -> tuple[str, ...]:
    return tuple("." + domain for domain in domains)


def _is_inward(address: str) -> bool:
    try:
        ip = ipaddress.IPv4Address(address)
    except ValueError:  # "999.1.1.1" is no address, just a name
        return False
    return not ip.is_global or ip.is_multicast


def _embeds_private_ipv4(host: str) -> bool:
    """True if ``host`` spells out a non-public IPv4 address, e.g. 10.0.0.1.example.org,
    app-127-0-0-1.example.org or 7f000001.example.org.

    Hex is judged more narrowly (loopback, private, link-local, "this network") because 8
    hex digits also occur as random deployment ids, and 1 in 16 of those would decode to
    a reserved block.
    """
    for match in _DOTTED_IPV4.finditer(host):
        if _is_inward(match[1]):
            return True
    for match in _DASHED_IPV4.finditer(host):
        if _is_inward(match[1].replace("-", ".")):
            return True
    for match in _HEX_IPV4.finditer(host):
        ip = ipaddress.IPv4Address(int(match[1], 16))
        if ip.is_loopback or ip.is_link_local or any(ip in block for block in _PRIVATE_BLOCKS):
            return True
    return False


def _check_host(netloc: str) -> None:
    if not netloc:
        raise ValueError("来源地址缺少主机名")
    if "@" in netloc:
        raise ValueError("来源地址不能包含用户名或密码")
    if netloc.startswith("["):
        raise ValueError("来源地址不能使用 IP 地址")
    if ":" in netloc:
        raise ValueError("来源地址不能指定端口")
    if not netloc.isascii():  # before lower(): "\u212a" (Kelvin) lowers to an ASCII "k"
        raise ValueError("来源地址的域名须使用 ASCII 或 punycode（xn--）形式")
    host = netloc.lower()
    if _looks_like_ipv4(host):
        raise ValueError("来源地址不能使用 IP 地址")
    labels = host.split(".")
    if len(host) > 253 or not all(_DNS_LABEL.fullmatch(label) for label in labels):
        raise ValueError("来源地址的主机名无效")
    if len(labels) < 2 or not _TOP_LEVEL_LABEL.fullmatch(labels[-1]):
        raise ValueError("来源地址必须是公网域名")
    if host in _NON_PUBLIC_NAMES or _within(host, _NON_PUBLIC_SUFFIXES):
        raise ValueError("来源地址必须是公网域名")
    if _within(host, _IP_IN_DISGUISE_DOMAINS):
        raise ValueError("来源地址不能使用 IP 地址（含 nip.io 一类把 IP 写进域名的服务）")
    if _within(host, _LOOPBACK_DOMAINS) or _embeds_private_ipv4(host):
        raise ValueError("来源地址的域名指向本机或内网地址")


# --------------------------------------------------------------------------- parameters

# Real URLs are encoded once, sometimes twice by a careless redirect; more layers than
# this only serve to hide something.
_MAX_DECODE_ROUNDS = 4


def _fully_decoded(text: str) -> str:
    """Percent-decode until nothing changes, so "%2574oken" and "%74oken" both read
    "token", then fold invisible characters away.

    :raise ValueError: when text is still changing after the last round.
    """
    for _ in range(_MAX_DECODE_ROUNDS):
        decoded = unquote_plus(text)
        if decoded == text:
            return fold_for_scanning(text)
        text = decoded
    raise ValueError("来源地址的百分号编码层数过多")


# Words of a parameter name: camelCase and acronyms split, any other character a boundary,
# so "sessionToken", "X-Api-Key", "token[]", "token%00" and "PHPSESSID" all come apart.
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# A name holding one of these words is sensitive wherever the word stands.
_SENSITIVE_WORDS = frozenset({
    "token", "password", "passwd", "passphrase", "passcode", "secret", "credential",
    "credentials", "signature", "jwt", "apikey", "authorization", "bearer", "sessionid",
    "sessid", "phpsessid", "jsessionid", "aspsessionid", "cftoken", "authcode", "otp",
})
# Run-together compounds ("accesstoken", "clientsecret") end in one of these.
_SENSITIVE_ENDINGS = ("token", "secret", "password", "passwd", "sessionid", "sessid",
                      "signature", "apikey", "accesskey", "secretkey", "privatekey", "authkey")
# Words that are sensitive only next to each other ("api_key", "session-id").
_SENSITIVE_PAIRS = frozenset({
    ("api", "key"), ("access", "key"), ("private", "key"), ("auth", "key"),
    ("session", "id"), ("auth", "code"), ("client", "secret"),
})
# Names sensitive only on their own: "key=" is a credential, "sort_key" is not.
_SENSITIVE_WHOLE_NAMES = frozenset({
    "key", "sig", "pwd", "pass", "auth", "session", "sid",
})
# "code=" on its own is an OAuth authorization code (long, random) or a public code: a stock
# ticker ("SH600519" on a market data page), an airport, a country, a language. Values up to
# this long, of letters, digits, "." and "-", are read as the latter.
_PUBLIC_CODE = re.compile(r"[A-Za-z0-9.\-]{1,12}")


def _is_sensitive(raw_name: str, value: str) -> bool:
    """Whether the parameter ``raw_name=value`` passes a credential, by its name (and, for
    a lone ``code``, by its value)."""
    words = [word.lower() for word in _NAME_WORDS.findall(_fully_decoded(raw_name))]
    whole = "_".join(words)
    if whole in _SENSITIVE_WHOLE_NAMES:
        return True
    if whole == "code" and not _PUBLIC_CODE.fullmatch(_fully_decoded(value)):
        return True
    if any(word in _SENSITIVE_WORDS or word.endswith(_SENSITIVE_ENDINGS) for word in words):
        return True
    return any(pair in _SENSITIVE_PAIRS for pair in zip(words, words[1:]))


def _pairs(text: str, separators: str) -> Iterator[tuple[str, str]]:
    for pair in re.split(f"[{separators}]", text):
        if pair:
            name, _, value = pair.partition("=")
            yield name, value


def _parameters(parts: SplitResult) -> Iterator[tuple[str, str]]:
    """Every name=value the URL passes: query pairs split on "&" and ";" (some servers
    accept either), and path parameters after ";" in any segment (";jsessionid=...")."""
    yield from _pairs(parts.query, "&;")
    for segment in _fully_decoded(parts.path).split("/"):
        yield from _pairs(segment.partition(";")[2], ";")


def _check_parameters(parts: SplitResult) -> None:
    for name, value in _parameters(parts):
        if _is_sensitive(name, value):
            shown = unquote(name)[:40]
            raise ValueError(f"来源地址不能包含敏感参数：{shown!r}")
        if find_secret(_fully_decoded(value)) is not None:
            raise ValueError("来源地址中检测到密钥或 Token")


def _split_url(url: str) -> SplitResult:
    try:
        return urlsplit(url)
    except ValueError:  # e.g. an unbalanced "[" in the host
        raise ValueError("来源地址格式不正确") from None


def check_source_url(url: str) -> str:
    """Check a citation source URL and return it without its ``#fragment`` and with its
    scheme in lower case ("HTTPS://" is the same scheme), otherwise unchanged.

    Accepted: https to a public DNS name with no port, no userinfo, no sensitive
    parameters or secrets (judged after repeated percent-decoding), at most 1500 UTF-16
    units, no whitespace/control/invisible characters.
    :raise ValueError: with a short Chinese message saying which rule failed.
    """
    if not isinstance(url, str):
        raise ValueError("来源地址必须是字符串")
    if js_length(url) > MAX_SOURCE_URL_LENGTH:
        raise ValueError(f"来源地址过长（最多 {MAX_SOURCE_URL_LENGTH} 个字符）")
    if _has_invisible_chars(url):
        raise ValueError("来源地址不能包含空白或控制字符")
    without_fragment = url.split("#", 1)[0]
    parts = _split_url(without_fragment)
    if parts.scheme != "https":
        raise ValueError("来源地址必须使用 https")
    _check_host(parts.netloc)
    _check_parameters(parts)
    # Path segments can carry keys too (e.g. webhook URLs with a token in the path).
    if find_secret(_fully_decoded(without_fragment)) is not None:
        raise ValueError("来源地址中检测到密钥或 Token")
    return "https" + without_fragment[len("https"):]


def source_identity(url: str) -> str:
    """What two accepted source URLs share when they name the same source (§5 refuses a
    repeated one): the scheme's and the host's case do not count (DNS names are
    case-insensitive), nor does an empty query ("x?") or an empty path ("https://a.org")."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/",
                       parts.query, ""))
