"""Framework-free security helpers: IDs and tokens and ``retrievedAt`` parsing. Text
rules live in :mod:`.textrules`, secret scanning in :mod:`.secrets_scan` and the source-URL
policy in :mod:`.urlpolicy`; their names are re-exported here so
``from lobbytalks.security import find_secret`` keeps working.

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
import zlib
from datetime import datetime, timedelta, timezone

from .secrets_scan import find_secret, find_secret_in
from .token_disguises import holds_disguised, written_forms
from .textrules import has_control_chars, has_nul, js_length
from .urlpolicy import MAX_SOURCE_URL_LENGTH, check_source_url

__all__ = [
    "js_length", "has_control_chars", "has_nul",
    "new_id", "new_agent_token", "is_agent_token_shape", "sha256_hex", "new_session_secret",
    "find_secret", "find_secret_in", "holds_disguised", "written_forms",
    "check_source_url", "parse_retrieved_at",
]


# --------------------------------------------------------------------------- ids and tokens

_ID_ALPHABET = string.ascii_lowercase + string.digits
_ID_RANDOM_LENGTH = 20
ID_MAX_LENGTH = 64
ID_CHARS = "a-zA-Z0-9:_-"  # every id the server makes or accepts is 1-64 of these
_ID_PREFIX = re.compile(rf"[{ID_CHARS}]+")

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
    """``length`` characters of ``alphabet``, each string equally likely: one random number
    below ``len(alphabet) ** length`` written in that base (one read of the system's
    randomness instead of one per character)."""
    return _encode(secrets.randbelow(len(alphabet) ** length), alphabet, length)


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
    max_prefix_length = ID_MAX_LENGTH - 1 - _ID_RANDOM_LENGTH
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


def agent_tokens_in(text: str) -> list[str]:
    """Every agent token (checksum and all) that ``text`` holds."""
    return [m[0] for m in _AGENT_TOKEN_SHAPE.finditer(text) if is_agent_token_shape(m[0])]


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


# --------------------------------------------------------------------------- retrievedAt

MAX_RETRIEVED_AT_LENGTH = 40
MAX_CLOCK_SKEW_SECONDS = 300
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# RFC 3339's date-time, as the contract's ``format: date-time`` says: a date, a time with
# seconds, and a zone ("Z" or "+08:00"); [0-9] not \d, which matches other scripts.
_RFC3339_DATE_TIME = re.compile(
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
    r"[Tt](?P<hour>[0-9]{2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})"
    r"(?:\.[0-9]+)?"  # any fraction, within 40 characters
    r"(?P<zone>[Zz]|(?P<sign>[+-])(?P<zone_hour>[0-9]{2}):(?P<zone_minute>[0-9]{2}))"
)


def _zone(match: re.Match[str]) -> timezone:
    if match["sign"] is None:  # "Z"
        return timezone.utc
    hours, minutes = int(match["zone_hour"]), int(match["zone_minute"])
    if minutes > 59:
        raise ValueError("时区偏移不正确")
    offset = timedelta(hours=hours, minutes=minutes)  # timezone() rejects >= 24h
    return timezone(-offset if match["sign"] == "-" else offset)


def _unix_seconds(match: re.Match[str]) -> int:
    # Fractional seconds are dropped: the result is whole seconds, rounded down.
    second = int(match["second"])
    leap = second == 60  # RFC 3339 5.7: only as the last second of a UTC day
    moment = datetime(
        int(match["year"]), int(match["month"]), int(match["day"]),
        int(match["hour"]), int(match["minute"]), 59 if leap else second,
        tzinfo=_zone(match),
    )
    if leap and (moment - _EPOCH) // timedelta(seconds=1) % 86400 != 86399:
        raise ValueError("a leap second ends a UTC day")
    # Unix time has no leap seconds: 23:59:60Z is the moment the next day begins.
    return (moment - _EPOCH) // timedelta(seconds=1) + leap


def parse_retrieved_at(value: str, now: int) -> int:
    """Parse an RFC 3339 date-time ("2026-10-01T08:00:00.5+08:00", "2026-10-01T00:00:00Z")
    into Unix seconds. A bare date or a time without its zone is refused: the contract asks
    for ``date-time``, and a moment without a zone is not one.

    :raise ValueError: if not a str, longer than 40 chars, not such a date-time, not a
        real calendar moment, or more than 300 seconds after ``now``.
    """
    if not isinstance(value, str) or len(value) > MAX_RETRIEVED_AT_LENGTH:
        raise ValueError("retrievedAt 必须是不超过 40 个字符的 RFC 3339 时间")
    match = _RFC3339_DATE_TIME.fullmatch(value)
    if match is None:
        raise ValueError("retrievedAt 必须是带时区的完整时间，如 2026-10-01T08:00:00Z")
    try:
        seconds = _unix_seconds(match)
    except (ValueError, OverflowError):
        raise ValueError("retrievedAt 不是有效的日期时间") from None
    if seconds > now + MAX_CLOCK_SKEW_SECONDS:
        raise ValueError("retrievedAt 不能晚于当前时间")
    return seconds
