"""Framework-free security helpers: text checks, IDs and tokens, secret
scanning, the source-URL policy and ``retrievedAt`` parsing.

Standard library only, no Flask, no I/O: every function here is pure apart from drawing
randomness from :mod:`secrets`. Validators raise ``ValueError`` with a short message meant
for people; predicates return ``bool`` or ``None`` and never raise on odd input.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import string
import threading
import time
import unicodedata
import zlib
from datetime import datetime, timedelta, timezone
from typing import Any, Iterator
from urllib.parse import SplitResult, unquote, unquote_plus, urlsplit

__all__ = [
    "js_length", "has_control_chars", "has_nul",
    "new_id", "new_agent_token", "is_agent_token_shape", "sha256_hex", "new_session_secret",
    "find_secret", "find_secret_in",
    "check_source_url", "parse_retrieved_at",
]


# --------------------------------------------------------------------------- text


def js_length(text: str) -> int:
    """Length in UTF-16 code units, like JavaScript's ``String.length`` ("a😀" -> 3).

    Limits are shared with browser forms, which count this way. Never raises for a str.
    """
    # Code points above the BMP take a surrogate pair in UTF-16.
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


_NEWLINES_AND_TAB = frozenset("\n\r\t")


def has_control_chars(text: str, *, allow_newlines: bool = False) -> bool:
    """True if ``text`` holds a Unicode control character (category Cc: C0, DEL, C1).

    With ``allow_newlines``, ``\\n``, ``\\r`` and ``\\t`` are allowed (multi-line fields).
    Never raises for a str.
    """
    for char in text:
        if unicodedata.category(char) != "Cc":
            continue
        if allow_newlines and char in _NEWLINES_AND_TAB:
            continue
        return True
    return False


def has_nul(text: str) -> bool:
    """True if ``text`` contains U+0000, which SQLite and C APIs may truncate at."""
    return "\x00" in text


# --------------------------------------------------------------------------- ids and tokens

_ID_ALPHABET = string.ascii_lowercase + string.digits
_ID_RANDOM_LENGTH = 20
_ID_MAX_LENGTH = 64
_ID_PREFIX = re.compile(r"[a-zA-Z0-9:_-]+")

# GitHub's order (digits, upper, lower), so the checksum encoding matches their scheme.
_BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
AGENT_TOKEN_PREFIX = "lbt_"
_TOKEN_RANDOM_LENGTH = 40
_TOKEN_CHECKSUM_LENGTH = 6
AGENT_TOKEN_LENGTH = len(AGENT_TOKEN_PREFIX) + _TOKEN_RANDOM_LENGTH + _TOKEN_CHECKSUM_LENGTH
_AGENT_TOKEN_SHAPE = re.compile(
    re.escape(AGENT_TOKEN_PREFIX)
    + f"[0-9A-Za-z]{{{_TOKEN_RANDOM_LENGTH + _TOKEN_CHECKSUM_LENGTH}}}"
)


def _random_string(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


_BASE36_DIGITS = string.digits + string.ascii_lowercase  # ASCII order, so text order = number order
_ID_STAMP_LENGTH = 11  # base36 microseconds: sortable for the next four thousand years
_id_lock = threading.Lock()
_last_stamp = 0


def _monotonic_stamp() -> int:
    """Microseconds since the epoch, strictly increasing within this process."""
    global _last_stamp
    with _id_lock:
        _last_stamp = max(time.time_ns() // 1000, _last_stamp + 1)
        return _last_stamp


def _encode(number: int, alphabet: str, width: int) -> str:
    """``number`` written in base ``len(alphabet)``, left-padded with the zero digit."""
    digits = ""
    while number:
        number, digit = divmod(number, len(alphabet))
        digits = alphabet[digit] + digits
    return digits.rjust(width, alphabet[0])


def new_id(prefix: str) -> str:
    """A public id ``prefix + "_" + 20 chars of [a-z0-9]``, e.g. ``t_0fz3k...``.

    The first 11 characters are a base36 time stamp, so ids sort in creation order
    (lists ordered ``created DESC, id DESC`` are newest first even within one second);
    the last 9 are random (46 bits), so ids cannot be guessed.
    The result always matches ``^[a-zA-Z0-9:_-]{1,64}$``.
    :raise ValueError: if the prefix is empty, too long or uses other characters.
    """
    max_prefix_length = _ID_MAX_LENGTH - 1 - _ID_RANDOM_LENGTH
    if not _ID_PREFIX.fullmatch(prefix) or len(prefix) > max_prefix_length:
        raise ValueError(f"id prefix must be 1-{max_prefix_length} chars of [a-zA-Z0-9:_-]")
    stamp = _encode(_monotonic_stamp(), _BASE36_DIGITS, _ID_STAMP_LENGTH)
    random_part = _random_string(_ID_ALPHABET, _ID_RANDOM_LENGTH - _ID_STAMP_LENGTH)
    return f"{prefix}_{stamp}{random_part}"


def _token_checksum(random_part: str) -> str:
    # CRC32 < 2**32 < 62**6, so six base62 digits always suffice.
    return _encode(zlib.crc32(random_part.encode("ascii")), _BASE62, _TOKEN_CHECKSUM_LENGTH)


def new_agent_token() -> str:
    """A new agent token: ``lbt_`` + 40 random base62 chars + 6-char base62 CRC32 checksum.

    The fixed prefix and checksum let secret scanners recognise leaked tokens without
    false positives (GitHub's token format). 50 chars in total; never raises.
    """
    random_part = _random_string(_BASE62, _TOKEN_RANDOM_LENGTH)
    return AGENT_TOKEN_PREFIX + random_part + _token_checksum(random_part)


def is_agent_token_shape(text: str) -> bool:
    """True if ``text`` is exactly an agent token: prefix, length, base62 charset and a valid
    checksum. Says nothing about whether the token exists; never raises."""
    if not isinstance(text, str) or not _AGENT_TOKEN_SHAPE.fullmatch(text):
        return False
    body = text[len(AGENT_TOKEN_PREFIX):]
    random_part, checksum = body[:_TOKEN_RANDOM_LENGTH], body[_TOKEN_RANDOM_LENGTH:]
    return hmac.compare_digest(_token_checksum(random_part), checksum)


def _utf8(text: str) -> bytes:
    # surrogatepass: JSON can smuggle in lone surrogates; hashing them must not raise.
    # For any valid str this is plain UTF-8.
    return text.encode("utf-8", "surrogatepass")


def sha256_hex(text: str) -> str:
    """Hex SHA-256 of the UTF-8 bytes of ``text``: how tokens and session secrets are stored.

    Lone surrogates are encoded as-is instead of raising.
    """
    return hashlib.sha256(_utf8(text)).hexdigest()


def new_session_secret() -> str:
    """A new browser-session secret: 32 random bytes, URL-safe base64 (43 chars)."""
    return secrets.token_urlsafe(32)


# --------------------------------------------------------------------------- secret scanning

# Credentials after "Bearer"/"Authorization:" that are really prose or placeholders, e.g.
# "Bearer authentication/authorization" or "Bearer YOUR_ACCESS_TOKEN_HERE": short words
# (Capitalised, lower or UPPER case) joined by punctuation. Real tokens have digits, mixed
# case inside a word, or one very long run.
_WORD = r"(?:[A-Za-z][a-z]{0,14}|[A-Z]{1,15})"
_PROSE_LIKE = re.compile(f"{_WORD}(?:[-/._~+]{_WORD})*[-/._~+]?")


def _not_prose(match: re.Match[str]) -> bool:
    return not _PROSE_LIKE.fullmatch(match["credential"])


# (label, pattern, optional extra check). Order matters: the most specific kinds first, so
# "Authorization: Bearer ghp_..." reports github_token. Left boundaries use explicit ASCII
# classes, not \b, because \b treats Chinese characters as word characters.
_SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str], Any], ...] = (
    ("private_key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"), None),
    # Our own tokens by shape only: a leaked token with a typo'd checksum is still a leak.
    ("agent_token", re.compile(r"(?<![A-Za-z0-9])lbt_[A-Za-z0-9]{46}"), None),
    ("github_token", re.compile(
        r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,})"), None),
    ("slack_token", re.compile(r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}"), None),
    ("aws_key", re.compile(r"(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}(?![0-9A-Z])"), None),
    ("google_api_key", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}"), None),
    ("jwt", re.compile(
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), None),
    # sk-, sk-ant-api03-, sk-proj-...: some hyphen-free run of 20+ key characters, so
    # "sk-learn" and slugs such as "sk-hynix-memory-chips-2024" are not keys.
    ("api_key", re.compile(
        r"(?<![A-Za-z0-9_-])sk-(?:[A-Za-z0-9_]*-)*[A-Za-z0-9_]{20}"), None),
    ("bearer_token", re.compile(
        r"(?<![A-Za-z0-9_])bearer\s+(?P<credential>[A-Za-z0-9._~+/_-]{20,})=*",
        re.IGNORECASE), _not_prose),
    ("authorization_header", re.compile(
        r"(?<![A-Za-z0-9_])authorization[\"']?\s*[:=]\s*[\"']?"
        r"(?:(?:basic|bearer|token|digest|bot|apikey)\s+)?"
        r"(?P<credential>[A-Za-z0-9._~+/_-]{12,})=*",
        re.IGNORECASE), _not_prose),
    # scheme://user:password@host (user may be empty, as in redis://:pw@host).
    ("url_password", re.compile(
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:[^\s/?#@]+@[^\s/?#@]"),
        None),
)


def _pattern_finds(pattern: re.Pattern[str], extra_check: Any, text: str) -> bool:
    if extra_check is None:
        return pattern.search(text) is not None
    return any(extra_check(match) for match in pattern.finditer(text))


def find_secret(text: str) -> str | None:
    """The label of the first kind of secret found in ``text`` (e.g. "api_key",
    "agent_token", "private_key", "bearer_token", "authorization_header", "url_password",
    "aws_key", "github_token", "slack_token", "jwt", "google_api_key"), or None.

    Heuristic: tuned to miss prose, Chinese text and ordinary URLs. Returns None for
    non-str input; never raises.
    """
    if not isinstance(text, str):
        return None
    for label, pattern, extra_check in _SECRET_PATTERNS:
        if _pattern_finds(pattern, extra_check, text):
            return label
    return None


def _strings_in(values: Any) -> Iterator[str]:
    # Iterative depth-first walk: deeply nested JSON must not hit the recursion limit.
    stack = [values]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                stack.extend((item, key))
        elif isinstance(value, (list, tuple)):
            stack.extend(reversed(value))


def find_secret_in(values: Any) -> str | None:
    """:func:`find_secret` over every string (dict keys included) in nested dicts, lists
    and tuples, in document order; the first label found, or None. Other types are
    ignored; never raises."""
    for text in _strings_in(values):
        label = find_secret(text)
        if label is not None:
            return label
    return None


# --------------------------------------------------------------------------- source URLs

MAX_SOURCE_URL_LENGTH = 1500

_NON_PUBLIC_NAMES = frozenset({"localhost"})
_NON_PUBLIC_SUFFIXES = (
    "localhost", "local", "localdomain", "internal", "intranet", "lan", "home", "home.arpa",
    "corp", "private", "test", "invalid", "onion", "example", "arpa",
)
# Compared after lower-casing and treating "-" as "_", so "Access-Token" and
# "X_Amz_Signature" are caught too.
_SENSITIVE_QUERY_NAMES = frozenset({
    "token", "access_token", "refresh_token", "id_token", "auth", "authorization",
    "password", "passwd", "pwd", "pass", "secret", "client_secret", "api_key", "apikey",
    "key", "sig", "signature", "x_amz_signature", "x_amz_credential",
    "x_amz_security_token", "x_goog_signature", "x_goog_credential", "session",
    "sessionid", "sid", "code", "private_token",
})
_DNS_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_TOP_LEVEL_LABEL = re.compile(r"[a-z]{2,63}|xn--[a-z0-9-]{1,59}")
# WHATWG URL parsers read a host whose last label is a number (decimal, 0x-hex or
# 0-octal) as IPv4: http://2130706433 and http://0x7f.1 are both 127.0.0.1.
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")


def _has_invisible_chars(text: str) -> bool:
    # Cf covers zero-width and bidi-override characters that disguise a URL.
    return any(char.isspace() or unicodedata.category(char) in ("Cc", "Cf") for char in text)


def _looks_like_ipv4(host: str) -> bool:
    last_label = host.removesuffix(".").rsplit(".", 1)[-1]
    return _NUMERIC_LABEL.fullmatch(last_label) is not None


def _check_host(netloc: str) -> None:
    if not netloc:
        raise ValueError("来源地址缺少主机名")
    if "@" in netloc:
        raise ValueError("来源地址不能包含用户名或密码")
    if netloc.startswith("["):
        raise ValueError("来源地址不能使用 IP 地址")
    if ":" in netloc:
        raise ValueError("来源地址不能指定端口")
    host = netloc.lower()
    if not host.isascii():
        raise ValueError("来源地址的域名须使用 ASCII 或 punycode（xn--）形式")
    if _looks_like_ipv4(host):
        raise ValueError("来源地址不能使用 IP 地址")
    labels = host.split(".")
    if len(host) > 253 or not all(_DNS_LABEL.fullmatch(label) for label in labels):
        raise ValueError("来源地址的主机名无效")
    if len(labels) < 2 or not _TOP_LEVEL_LABEL.fullmatch(labels[-1]):
        raise ValueError("来源地址必须是公网域名")
    if host in _NON_PUBLIC_NAMES or any(
        host == suffix or host.endswith("." + suffix) for suffix in _NON_PUBLIC_SUFFIXES
    ):
        raise ValueError("来源地址必须是公网域名")


def _query_pairs(query: str) -> Iterator[tuple[str, str]]:
    # Split on ";" as well as "&": some servers accept either, and a credential hidden
    # behind ";" is still sent to them.
    for pair in re.split(r"[&;]", query):
        if pair:
            name, _, value = pair.partition("=")
            yield unquote_plus(name), unquote_plus(value)


def _check_query(query: str) -> None:
    for name, value in _query_pairs(query):
        canonical_name = name.strip().lower().replace("-", "_")
        if canonical_name in _SENSITIVE_QUERY_NAMES:
            raise ValueError(f"来源地址不能包含敏感查询参数：{name[:40]}")
        if find_secret(value) is not None:
            raise ValueError("来源地址中检测到密钥或 Token")


def _split_url(url: str) -> SplitResult:
    try:
        return urlsplit(url)
    except ValueError:  # e.g. an unbalanced "[" in the host
        raise ValueError("来源地址格式不正确") from None


def check_source_url(url: str) -> str:
    """Check a citation source URL and return it without its ``#fragment``, otherwise
    unchanged.

    Accepted: https to a public DNS name with no port, no userinfo, no credentials in the
    query, at most 1500 UTF-16 units, no whitespace/control/invisible characters.
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
    _check_query(parts.query)
    # Path segments can carry keys too (e.g. webhook URLs with a token in the path).
    if find_secret(unquote(without_fragment)) is not None:
        raise ValueError("来源地址中检测到密钥或 Token")
    return without_fragment


# --------------------------------------------------------------------------- retrievedAt

MAX_RETRIEVED_AT_LENGTH = 40
MAX_CLOCK_SKEW_SECONDS = 300
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# RFC 3339 profile of ISO 8601, plus a bare date; [0-9] not \d, which matches other scripts.
_ISO_DATE_TIME = re.compile(
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
    r"(?:[Tt](?P<hour>[0-9]{2}):(?P<minute>[0-9]{2})"
    r"(?::(?P<second>[0-9]{2})(?:[.,][0-9]{1,9})?)?"
    r"(?P<zone>[Zz]|(?P<sign>[+-])(?P<zone_hour>[0-9]{2})(?::?(?P<zone_minute>[0-9]{2}))?)?)?"
)


def _zone(match: re.Match[str]) -> timezone:
    if match["sign"] is None:  # "Z", or no zone at all: UTC
        return timezone.utc
    hours, minutes = int(match["zone_hour"]), int(match["zone_minute"] or 0)
    if minutes > 59:
        raise ValueError("时区偏移不正确")
    offset = timedelta(hours=hours, minutes=minutes)  # timezone() rejects >= 24h
    return timezone(-offset if match["sign"] == "-" else offset)


def _unix_seconds(match: re.Match[str]) -> int:
    # Fractional seconds are dropped: the result is whole seconds, rounded down.
    moment = datetime(
        int(match["year"]), int(match["month"]), int(match["day"]),
        int(match["hour"] or 0), int(match["minute"] or 0), int(match["second"] or 0),
        tzinfo=_zone(match),
    )
    return (moment - _EPOCH) // timedelta(seconds=1)


def parse_retrieved_at(value: str, now: int) -> int:
    """Parse an ISO 8601 date-time ("2026-10-01T08:00:00.5+08:00", "...Z", or a bare date
    "2026-10-01" = midnight UTC; no zone means UTC) into Unix seconds.

    :raise ValueError: if not a str, longer than 40 chars, not such a date-time, not a
        real calendar moment, or more than 300 seconds after ``now``.
    """
    if not isinstance(value, str) or len(value) > MAX_RETRIEVED_AT_LENGTH:
        raise ValueError("retrievedAt 必须是不超过 40 个字符的 ISO 8601 时间")
    match = _ISO_DATE_TIME.fullmatch(value)
    if match is None:
        raise ValueError("retrievedAt 不是 ISO 8601 时间")
    try:
        seconds = _unix_seconds(match)
    except (ValueError, OverflowError):
        raise ValueError("retrievedAt 不是有效的日期时间") from None
    if seconds > now + MAX_CLOCK_SKEW_SECONDS:
        raise ValueError("retrievedAt 不能晚于当前时间")
    return seconds
