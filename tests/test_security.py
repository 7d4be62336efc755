"""Tests for lobbytalks.security: one parametrized table per rule, accept and reject cases.

Fake secrets are assembled from pieces ("ghp_" + "A" * 36) so this file does not itself
look like a leak to secret scanners.
"""
from __future__ import annotations

import hashlib
import re
import string
import time
import zlib

import pytest

from lobbytalks.security import (
    check_source_url,
    find_secret,
    find_secret_in,
    has_control_chars,
    has_nul,
    is_agent_token_shape,
    js_length,
    new_agent_token,
    new_id,
    new_session_secret,
    parse_retrieved_at,
    sha256_hex,
)

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


# --------------------------------------------------------------------------- text


@pytest.mark.parametrize(("text", "expected"), [
    ("", 0),
    ("abc", 3),
    ("a😀", 3),            # astral plane: a surrogate pair in UTF-16
    ("😀😀", 4),
    ("中文", 2),           # BMP CJK: one unit each
    ("é", 1),
    ("e\u0301", 2),        # combining accent counts separately, as in JS
    ("\U0010ffff", 2),
])
def test_js_length_counts_utf16_units(text, expected):
    assert js_length(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("plain text", False),
    ("中文，标点。", False),
    ("emoji 😀", False),
    ("tab\there", True),
    ("line\nbreak", True),
    ("carriage\rreturn", True),
    ("nul\x00", True),
    ("bell\x07", True),
    ("escape\x1b[31m", True),
    ("delete\x7f", True),
    ("c1 next line\x85", True),
    ("c1\x9f", True),
    ("zero\u200bwidth", False),     # Cf, not Cc
    ("line\u2028separator", False),  # Zl, not Cc
])
def test_has_control_chars(text, expected):
    assert has_control_chars(text) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("line\nbreak", False),
    ("crlf\r\n", False),
    ("tab\t", False),
    ("plain", False),
    ("nul\x00", True),
    ("vertical tab\x0b", True),
    ("form feed\x0c", True),
    ("escape\x1b", True),
    ("c1\x85", True),
])
def test_has_control_chars_allowing_newlines(text, expected):
    assert has_control_chars(text, allow_newlines=True) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("", False),
    ("abc", False),
    ("a\x00b", True),
    ("\x00", True),
    ("\\x00 written out", False),
])
def test_has_nul(text, expected):
    assert has_nul(text) is expected


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


# --------------------------------------------------------------------------- secret scanning

AGENT_TOKEN = _valid_token()
SECRET_CASES = [
    ("my key is sk-" + "a1B2c3D4" * 6, "api_key"),
    ("sk-" + "x" * 20, "api_key"),
    ("sk-ant-api03-" + "Ab3_" * 23 + "AA", "api_key"),
    ("sk-proj-" + "Xy9Zz_Ab3Cd4Ef5Gh6Ij7-" * 6, "api_key"),
    ("deepseek: sk-" + "0123456789abcdef" * 2, "api_key"),
    ("我的密钥是sk-" + "q" * 32 + "请不要外传", "api_key"),
    ("AKIA" + "IOSFODNN7EXAMPLE", "aws_key"),
    ("aws_access_key_id=AKIA" + "ABCDEFGHIJKLMNOP", "aws_key"),
    ("ghp_" + "A" * 36, "github_token"),
    ("token: gho_" + "b1" * 18, "github_token"),
    ("ghu_" + "c" * 36, "github_token"),
    ("ghs_" + "D" * 36, "github_token"),
    ("ghr_" + "e" * 36, "github_token"),
    ("github_pat_" + "11ABCDEFG0" * 3 + "_" + "x" * 59, "github_token"),
    ("xoxb-" + "123456789012-1234567890123-" + "a" * 24, "slack_token"),
    ("xoxp-" + "1" * 12, "slack_token"),
    ("AIza" + "Sy" + "A" * 33, "google_api_key"),
    ("AIza" + "-_" * 17 + "Q", "google_api_key"),
    ("eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NSJ9" + ".c2lnbmF0dXJlX2hlcmU", "jwt"),
    ("cookie=eyJhbGciOiJub25lIn0" + ".eyJ1c2VyIjoiYWRtaW4ifQ" + ".", "jwt"),
    ("-----BEGIN " + "PRIVATE KEY-----\nMIIE...", "private_key"),
    ("-----BEGIN RSA " + "PRIVATE KEY-----", "private_key"),
    ("-----BEGIN EC " + "PRIVATE KEY-----", "private_key"),
    ("-----BEGIN OPENSSH " + "PRIVATE KEY-----", "private_key"),
    ("-----BEGIN ENCRYPTED " + "PRIVATE KEY-----", "private_key"),
    ("-----BEGIN PGP " + "PRIVATE KEY BLOCK-----", "private_key"),
    ("curl -H 'Authorization: Bearer " + "abcdefghijklmnopqrstuvwxyz'", "bearer_token"),
    ("bearer " + "aB3dE6gH9jK2mN5pQ8sT", "bearer_token"),
    ("Bearer " + "ya29_a0AfH6SM_bcd123xyz", "bearer_token"),
    ("Bearer " + "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "bearer_token"),
    ("Bearer " + "dGhpcyBpcyBhIHRva2Vu.Zm9v/YmFy+YmF6=", "bearer_token"),
    ("Authorization: Basic " + "dXNlcjpwYXNz", "authorization_header"),
    ('{"Authorization": "token ' + "x1y2z3" * 3 + '"}', "authorization_header"),
    ("Authorization=" + "Zm9vOmJhcmJhejEyMzQ1Ng==", "authorization_header"),
    (AGENT_TOKEN, "agent_token"),
    ("export LOBBY=" + AGENT_TOKEN + " # mine", "agent_token"),
    ("lbt_" + "Z" * 46, "agent_token"),                   # wrong checksum: still a leak
    ("令牌" + AGENT_TOKEN + "结束", "agent_token"),
    ("postgres://app:" + "s3cret@db.example.org/app", "url_password"),
    ("https://user:" + "pa55word@example.com/", "url_password"),
    ("redis://:" + "hunter2@cache.example.net:6379", "url_password"),
    ("连接串 mysql://root:" + "root@10.0.0.2:3306/db", "url_password"),
    ({"nested": "not a str"}, None),
]


@pytest.mark.parametrize(("text", "label"), SECRET_CASES)
def test_find_secret_detects(text, label):
    assert find_secret(text) == label


NOT_SECRETS = [
    "",
    "This is an ordinary sentence about keys, tokens and passwords.",
    "我们讨论一下如何安全地保存密钥和令牌，不要把它们写进代码。",
    "https://example.com/a?b=c",
    "https://user@example.com/ has no password",
    "ssh://git@github.com/org/repo.git",
    "git@github.com:org/repo.git",
    "mailto:someone@example.com",
    "skill-based matchmaking",
    "sk-learn is the wrong name; use scikit-learn",
    "import sklearn  # sk-learn",
    "risk-assessment-framework-for-autonomous-agents",
    "sk-hynix-memory-chips-2024-annual-report",
    "The Bearer of this letter is trusted.",
    "Use a Bearer token in the header.",
    "Bearer authentication/authorization explained",
    "Bearer <your-token-goes-here>",
    "Authorization: Bearer YOUR_ACCESS_TOKEN_HERE",
    "Authorization: Bearer $TOKEN",
    "Bearer Token-Based-Authentication-Guide",
    "Authorization: required for admin pages",
    "Authorization: Basic authentication",
    "Authorization header format",
    "-----BEGIN PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----",
    "AKIA is the prefix of AWS access key ids",
    "AKIA" + "SHORT1",
    "ghp_tooShort",
    "AIza" + "tooShort",
    "eyJ alone",
    "xoxo-hugs-and-kisses",
    "lbt_" + "a" * 20,
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "time 12:30@noon",
    "价格：sk-ii 神仙水 230ml",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_find_secret_false_positives(text):
    assert find_secret(text) is None


def test_find_secret_is_fast_on_long_input():
    text = "a" * 50_000 + "sk-" + "-a" * 10_000 + "https://" + "b" * 50_000
    started = time.monotonic()
    assert find_secret(text) is None
    assert time.monotonic() - started < 2


@pytest.mark.parametrize(("values", "label"), [
    ("plain", None),
    ("ghp_" + "A" * 36, "github_token"),
    (["fine", {"deep": [{"deeper": "AKIA" + "B" * 16}]}], "aws_key"),
    ({"a": "fine", "b": ("tuple", "sk-" + "z" * 30)}, "api_key"),
    ({"ghp_" + "A" * 36: "secret in a key"}, "github_token"),
    ([{"first": "AKIA" + "C" * 16}, {"second": "ghp_" + "A" * 36}], "aws_key"),  # order
    ({"n": 1, "f": 1.5, "b": True, "none": None, "bytes": b"sk-" + b"x" * 30}, None),
    ([], None),
    ({}, None),
    (None, None),
    ({"content": "我们讨论一下", "sources": ["https://example.com/a?b=c"]}, None),
])
def test_find_secret_in(values, label):
    assert find_secret_in(values) == label


def test_find_secret_in_handles_deep_nesting():
    value: object = "AKIA" + "D" * 16
    for _ in range(5000):
        value = [value]
    assert find_secret_in(value) == "aws_key"


# --------------------------------------------------------------------------- source URLs


@pytest.mark.parametrize(("url", "expected"), [
    ("https://example.com", "https://example.com"),
    ("https://example.com/a?b=c", "https://example.com/a?b=c"),
    ("https://example.com/a?b=c#section", "https://example.com/a?b=c"),
    ("https://example.com/#", "https://example.com/"),
    ("https://docs.python.org/3/library/hashlib.html#hashlib.scrypt",
     "https://docs.python.org/3/library/hashlib.html"),
    ("https://zh.wikipedia.org/wiki/中文", "https://zh.wikipedia.org/wiki/中文"),
    ("https://zh.wikipedia.org/wiki/%E4%B8%AD%E6%96%87",
     "https://zh.wikipedia.org/wiki/%E4%B8%AD%E6%96%87"),
    ("https://xn--fiqs8s.xn--55qx5d/path", "https://xn--fiqs8s.xn--55qx5d/path"),
    ("https://Example.COM/Path", "https://Example.COM/Path"),
    ("HTTPS://example.com/", "HTTPS://example.com/"),
    ("https://a-b.c-d.example.org/x", "https://a-b.c-d.example.org/x"),
    ("https://1.2.3.example.com/", "https://1.2.3.example.com/"),
    ("https://example.com/search?q=token&page=2", "https://example.com/search?q=token&page=2"),
    ("https://example.com/?keyword=x&tokens=y&coder=z",
     "https://example.com/?keyword=x&tokens=y&coder=z"),
    ("https://example.com/?q=sk-learn", "https://example.com/?q=sk-learn"),
    ("https://example.com/wiki/Bearer_bond", "https://example.com/wiki/Bearer_bond"),
    ("https://example.com/" + "a" * (1500 - 20), "https://example.com/" + "a" * (1500 - 20)),
])
def test_check_source_url_accepts(url, expected):
    assert check_source_url(url) == expected


@pytest.mark.parametrize(("url", "reason"), [
    # scheme
    ("http://example.com/", "https"),
    ("ftp://example.com/", "https"),
    ("javascript:alert(1)", "https"),
    ("example.com/path", "https"),
    ("//example.com/path", "https"),
    ("https:example.com", "主机名"),
    ("https:///example.com", "主机名"),
    ("https://", "主机名"),
    # IP addresses in every spelling
    ("https://127.0.0.1/", "IP"),
    ("https://8.8.8.8/", "IP"),
    ("https://10.0.0.1./", "IP"),
    ("https://2130706433/", "IP"),
    ("https://0x7f000001/", "IP"),
    ("https://017700000001/", "IP"),
    ("https://0x7f.1/", "IP"),
    ("https://127.1/", "IP"),
    ("https://[::1]/", "IP"),
    ("https://[2001:db8::1]/x", "IP"),
    ("https://[::ffff:127.0.0.1]/", "IP"),
    ("https://[::1/", "格式"),
    # non-public names
    ("https://localhost/", "公网"),
    ("https://LOCALHOST/", "公网"),
    ("https://intranet/", "公网"),
    ("https://printer/", "公网"),                 # single label
    ("https://com/", "公网"),
    ("https://app.localhost/", "公网"),
    ("https://printer.local/", "公网"),
    ("https://box.localdomain/", "公网"),
    ("https://metadata.google.internal/", "公网"),
    ("https://wiki.intranet/", "公网"),
    ("https://nas.lan/", "公网"),
    ("https://router.home/", "公网"),
    ("https://router.home.arpa/", "公网"),
    ("https://git.corp/", "公网"),
    ("https://db.private/", "公网"),
    ("https://site.test/", "公网"),
    ("https://site.invalid/", "公网"),
    ("https://hidden.onion/", "公网"),
    ("https://www.example/", "公网"),
    ("https://1.0.0.127.in-addr.arpa/", "公网"),
    ("https://example.123/", "IP"),  # numeric last label: WHATWG reads IPv4
    # malformed host names
    ("https://example.com./", "无效"),
    ("https://example..com/", "无效"),
    ("https://.example.com/", "无效"),
    ("https://-bad.example.com/", "无效"),
    ("https://bad-.example.com/", "无效"),
    ("https://under_score.example.com/", "无效"),
    ("https://%65xample.com/", "无效"),
    ("https://evil.com\\good.com/", "无效"),
    ("https://" + "a" * 64 + ".com/", "无效"),
    ("https://例子.中国/", "punycode"),
    ("https://exаmple.com/", "punycode"),   # Cyrillic а
    # ports and userinfo
    ("https://example.com:443/", "端口"),
    ("https://example.com:8443/", "端口"),
    ("https://example.com:/", "端口"),
    ("https://user@example.com/", "用户名"),
    ("https://user:pass@example.com/", "用户名"),
    ("https://:pass@example.com/", "用户名"),
    ("https://evil.com\\@example.com/", "用户名"),
    # whitespace, control and invisible characters
    ("https://example.com/a b", "空白"),
    (" https://example.com/", "空白"),
    ("https://example.com/\n", "空白"),
    ("https://example.com/\t", "空白"),
    ("https://exam\x00ple.com/", "空白"),
    ("https://example.com/\x7f", "空白"),
    ("https://example.com/\u3000", "空白"),
    ("https://example.com/\u200b", "空白"),
    ("https://example.com/\u202e", "空白"),
    # length, counted in UTF-16 units
    ("https://example.com/" + "a" * (1500 - 19), "过长"),
    ("https://example.com/" + "😀" * 741, "过长"),
    # sensitive query parameter names
    ("https://example.com/?token=abc", "敏感"),
    ("https://example.com/?access_token=abc", "敏感"),
    ("https://example.com/?refresh_token=abc", "敏感"),
    ("https://example.com/?id_token=abc", "敏感"),
    ("https://example.com/?auth=abc", "敏感"),
    ("https://example.com/?Authorization=abc", "敏感"),
    ("https://example.com/?password=abc", "敏感"),
    ("https://example.com/?passwd=abc", "敏感"),
    ("https://example.com/?pwd=abc", "敏感"),
    ("https://example.com/?pass=abc", "敏感"),
    ("https://example.com/?secret=abc", "敏感"),
    ("https://example.com/?client_secret=abc", "敏感"),
    ("https://example.com/?api_key=abc", "敏感"),
    ("https://example.com/?apikey=abc", "敏感"),
    ("https://example.com/?api-key=abc", "敏感"),
    ("https://example.com/?key=abc", "敏感"),
    ("https://example.com/?sig=abc", "敏感"),
    ("https://example.com/?signature=abc", "敏感"),
    ("https://bucket.s3.amazonaws.com/f?X-Amz-Signature=abc", "敏感"),
    ("https://bucket.s3.amazonaws.com/f?X-Amz-Credential=abc", "敏感"),
    ("https://bucket.s3.amazonaws.com/f?X-Amz-Security-Token=abc", "敏感"),
    ("https://storage.googleapis.com/f?X-Goog-Signature=abc", "敏感"),
    ("https://storage.googleapis.com/f?X-Goog-Credential=abc", "敏感"),
    ("https://example.com/?session=abc", "敏感"),
    ("https://example.com/?sessionid=abc", "敏感"),
    ("https://example.com/?SID=abc", "敏感"),
    ("https://example.com/?code=abc", "敏感"),
    ("https://gitlab.example.com/api?private_token=abc", "敏感"),
    ("https://example.com/?page=1&TOKEN=abc", "敏感"),
    ("https://example.com/?tok%65n=abc", "敏感"),          # percent-encoded name
    ("https://example.com/?api%5Fkey=abc", "敏感"),
    ("https://example.com/?access-token=abc", "敏感"),
    ("https://example.com/?token", "敏感"),                 # name without value
    ("https://example.com/?a=1;token=abc", "敏感"),
    # secrets in values or path
    ("https://example.com/?q=sk-" + "a" * 30, "密钥"),
    ("https://example.com/?note=ghp_" + "A" * 36, "密钥"),
    ("https://example.com/?h=Bearer%20" + "aB3dE6gH9jK2mN5pQ8sT", "密钥"),
    ("https://example.com/?h=Bearer+" + "aB3dE6gH9jK2mN5pQ8sT", "密钥"),
    ("https://example.com/?jwt=eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NSJ9.sig", "密钥"),
    ("https://example.com/hooks/" + AGENT_TOKEN, "密钥"),
    # not a string
    (None, "字符串"),
    (b"https://example.com/", "字符串"),
])
def test_check_source_url_rejects(url, reason):
    with pytest.raises(ValueError, match=reason):
        check_source_url(url)


def test_check_source_url_length_limit_is_inclusive():
    url = "https://example.com/" + "😀" * 740  # 20 + 1480 = 1500 units
    assert js_length(url) == 1500
    assert check_source_url(url) == url


# --------------------------------------------------------------------------- retrievedAt

NOW = 1790812800  # 2026-10-01T00:00:00Z


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-10-01T00:00:00Z", NOW),
    ("2026-10-01T00:00:00z", NOW),
    ("2026-10-01t00:00:00Z", NOW),
    ("2026-10-01T08:00:00+08:00", NOW),
    ("2026-10-01T08:00:00+0800", NOW),
    ("2026-10-01T08:00:00+08", NOW),
    ("2026-09-30T19:00:00-05:00", NOW),
    ("2026-10-01T00:00:00-00:00", NOW),
    ("2026-10-01T00:00:00.999Z", NOW),           # fraction dropped, not rounded up
    ("2026-10-01T00:00:00.123456789+00:00", NOW),
    ("2026-10-01T00:00:00,5Z", NOW),
    ("2026-10-01T00:00:00", NOW),                # no zone: UTC
    ("2026-10-01T00:00", NOW),
    ("2026-10-01", NOW),                         # bare date: midnight UTC
    ("2026-09-30T08:30:15Z", 1790757015),
    ("2026-09-30T23:59:59Z", NOW - 1),
    ("1970-01-01T00:00:00Z", 0),
    ("1969-12-31T23:59:59Z", -1),
    ("2024-02-29T00:00:00Z", 1709164800),        # leap day
    ("2026-10-01T00:05:00Z", NOW + 300),         # exactly the allowed skew
    ("2026-10-01T08:05:00+08:00", NOW + 300),
])
def test_parse_retrieved_at_accepts(value, expected):
    assert parse_retrieved_at(value, NOW) == expected


@pytest.mark.parametrize("value", [
    "",
    "yesterday",
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
    "2026-10-01T00:00:00.1234567890Z",
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
    assert parse_retrieved_at("2030-01-01", now=1893456000) == 1893456000
    with pytest.raises(ValueError):
        parse_retrieved_at("2030-01-01", now=1893456000 - 301)
