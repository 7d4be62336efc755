"""Tests for lobbytalks.security: one parametrized table per rule, accept and reject cases.

Fake secrets are assembled from pieces ("ghp_" + "A" * 36) so this file does not itself
look like a leak to secret scanners.
"""
from __future__ import annotations

import hashlib
import re
import string
import zlib
from collections import Counter

import pytest

from lobbytalks import security
from lobbytalks.security import (
    is_agent_token_shape,
    new_agent_token,
    new_id,
    new_session_secret,
    parse_retrieved_at,
    sha256_hex,
)

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


# --------------------------------------------------------------------------- moved names


def test_names_moved_out_are_still_importable_from_security():
    # Code written against the old single module keeps working after the split.
    from lobbytalks import secrets_scan, textrules, urlpolicy
    assert security.find_secret is secrets_scan.find_secret
    assert security.find_secret_in is secrets_scan.find_secret_in
    assert security.check_source_url is urlpolicy.check_source_url
    assert security.js_length is textrules.js_length
    assert security.has_control_chars is textrules.has_control_chars
    assert security.has_nul is textrules.has_nul


# --------------------------------------------------------------------------- ids and tokens

ID_SHAPE = re.compile(r"^[a-zA-Z0-9:_-]{1,64}$")


@pytest.mark.parametrize("prefix", ["t", "c", "m:1", "topic-x", "a_b", "A" * 43])
def test_new_id_shape(prefix):
    value = new_id(prefix)
    assert ID_SHAPE.match(value)
    assert value.startswith(prefix + "_")
    assert re.fullmatch(r"[a-z0-9]{20}", value[len(prefix) + 1:])


def test_new_id_is_random():
    assert len({new_id("t") for _ in range(200)}) == 200


@pytest.mark.parametrize("prefix", ["", "A" * 44, "has space", "slash/", "中", "t\n", "dot."])
def test_new_id_rejects_bad_prefix(prefix):
    with pytest.raises(ValueError):
        new_id(prefix)


def reference_checksum(random_part: str) -> str:
    """An independent base62(CRC32) for cross-checking the module's encoder."""
    number = zlib.crc32(random_part.encode())
    digits = []
    for _ in range(6):
        number, remainder = divmod(number, 62)
        digits.append(BASE62[remainder])
    assert number == 0
    return "".join(reversed(digits))


def test_new_agent_token_format():
    token = new_agent_token()
    assert len(token) == 50
    assert re.fullmatch(r"lbt_[0-9A-Za-z]{46}", token)
    assert token[44:] == reference_checksum(token[4:44])
    assert is_agent_token_shape(token)


def test_new_agent_tokens_are_random():
    assert len({new_agent_token() for _ in range(100)}) == 100


def test_agent_token_checksum_is_left_padded():
    # A CRC32 small enough to need padding: find one among simple candidates.
    random_part = next(
        candidate for candidate in (f"{i:040d}" for i in range(100_000))
        if zlib.crc32(candidate.encode()) < 62**5
    )
    checksum = reference_checksum(random_part)
    assert checksum.startswith("0")
    assert is_agent_token_shape("lbt_" + random_part + checksum)
    assert not is_agent_token_shape("lbt_" + random_part + checksum.lstrip("0"))


def _valid_token() -> str:
    random_part = "a" * 40
    return "lbt_" + random_part + reference_checksum(random_part)


def _flip(char: str) -> str:
    return "b" if char != "b" else "c"


@pytest.mark.parametrize(("text", "expected"), [
    (_valid_token(), True),
    (_valid_token()[:-1] + _flip(_valid_token()[-1]), False),           # bad checksum
    ("lbt_" + "b" + _valid_token()[5:], False),                          # random part changed
    ("lbx_" + _valid_token()[4:], False),                                # wrong prefix
    ("LBT_" + _valid_token()[4:], False),
    (_valid_token() + "a", False),                                       # too long
    (_valid_token()[:-1], False),                                        # too short
    (_valid_token() + "\n", False),
    (" " + _valid_token(), False),
    ("lbt_" + "a" * 39 + "-" + reference_checksum("a" * 39 + "-"), False),  # charset
    ("", False),
    ("lbt_", False),
])
def test_is_agent_token_shape(text, expected):
    assert is_agent_token_shape(text) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ("中", hashlib.sha256("中".encode("utf-8")).hexdigest()),
])
def test_sha256_hex(text, expected):
    assert sha256_hex(text) == expected


def test_sha256_hex_accepts_lone_surrogates():
    assert re.fullmatch(r"[0-9a-f]{64}", sha256_hex("\ud800"))
    assert sha256_hex("\ud800") != sha256_hex("\ud801")


def test_new_session_secret():
    secrets_seen = {new_session_secret() for _ in range(50)}
    assert len(secrets_seen) == 50
    for secret in secrets_seen:
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", secret)


# --------------------------------------------------------------------------- retrievedAt

NOW = 1790812800  # 2026-10-01T00:00:00Z


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-10-01T00:00:00Z", NOW),
    ("2026-10-01T00:00:00z", NOW),
    ("2026-10-01t00:00:00Z", NOW),
    ("2026-10-01T08:00:00+08:00", NOW),
    ("2026-09-30T19:00:00-05:00", NOW),
    ("2026-10-01T00:00:00-00:00", NOW),
    ("2026-10-01T00:00:00.999Z", NOW),           # fraction dropped, not rounded up
    ("2026-10-01T00:00:00.123456789+00:00", NOW),
    ("2026-10-01T00:00:00.0000000000000000000Z", NOW),  # 40 characters, 19 digits
    ("2026-09-30T08:30:15Z", 1790757015),
    ("2026-09-30T23:59:59Z", NOW - 1),
    ("1970-01-01T00:00:00Z", 0),
    ("1969-12-31T23:59:59Z", -1),
    ("2024-02-29T00:00:00Z", 1709164800),        # leap day
    ("2016-12-31T23:59:60Z", 1483228800),        # a leap second (RFC 3339 5.7): the next day's start
    ("2017-01-01T08:59:60+09:00", 1483228800),   # the same, in Tokyo
    ("2026-10-01T00:05:00Z", NOW + 300),         # exactly the allowed skew
    ("2026-10-01T08:05:00+08:00", NOW + 300),
])
def test_parse_retrieved_at_accepts(value, expected):
    assert parse_retrieved_at(value, NOW) == expected


@pytest.mark.parametrize("value", [
    "",
    "yesterday",
    # what ISO 8601 allows and RFC 3339's date-time (the contract's format) does not
    "2026-10-01",                                # a bare date
    "2026-10-01T00:00:00",                       # no zone
    "2026-10-01T00:00Z",                         # no seconds
    "2026-10-01T08:00:00+08",
    "2026-10-01T08:00:00+0800",
    "2026-10-01T00:00:00,5Z",                    # a comma before the fraction
    "2026-10-01T00:05:01Z",                      # 301 s in the future
    "2026-10-02",
    "2027-01-01T00:00:00Z",
    "2026-10-01T07:00:00-01:00",                 # 08:00Z: in the future
    "2026-13-01",
    "2026-02-30",
    "2025-02-29T00:00:00Z",
    "2026-10-01T24:00:00Z",
    "2026-10-01T23:60:00Z",
    "2026-10-01T23:59:61Z",
    "2026-10-01T12:30:60Z",                      # a leap second only ends a UTC day
    "2016-12-31T23:59:60+01:00",                 # 22:59:60Z
    "2026-10-01T00:00:00+24:00",
    "2026-10-01T00:00:00+08:60",
    "2026-10-01Z",                               # zone without a time
    "2026-10-01 00:00:00Z",
    " 2026-10-01",
    "2026-10-01\n",
    "20261001T000000Z",
    "2026-W40-4",
    "2026-274",
    "2026-10-01T00",
    "2026-10-01T00:00:00.Z",
    "26-10-01",
    "+2026-10-01",
    "２０２６-10-01",                               # fullwidth digits
    "2026-10-01T00:00:00Z" + " " * 21,           # over 40 characters
    "2026-10-01T00:00:00.000000000000000000000Z",
    "0000-01-01",
    "1760000000",
    None,
    1790812800,
])
def test_parse_retrieved_at_rejects(value):
    with pytest.raises(ValueError):
        parse_retrieved_at(value, NOW)


def test_parse_retrieved_at_rejects_long_input_before_parsing():
    with pytest.raises(ValueError, match="40"):
        parse_retrieved_at("2026-10-01" + "0" * 31, NOW)


def test_parse_retrieved_at_uses_given_now():
    assert parse_retrieved_at("2030-01-01T00:00:00Z", now=1893456000) == 1893456000
    with pytest.raises(ValueError):
        parse_retrieved_at("2030-01-01T00:00:00Z", now=1893456000 - 301)


def test_random_strings_use_every_character_in_every_place_evenly():
    alphabet, length, draws = "abcdef", 5, 12_000
    seen = [Counter() for _ in range(length)]
    for _ in range(draws):
        text = security._random_string(alphabet, length)
        assert len(text) == length
        for place, char in enumerate(text):
            seen[place][char] += 1
    expected = draws / len(alphabet)  # 2,000; the bounds are some 20 standard deviations out
    assert all(set(counts) == set(alphabet) for counts in seen)
    assert all(0.6 * expected < n < 1.4 * expected for counts in seen for n in counts.values())
