"""Tests for lobbytalks.secrets_scan: per format, true cases and near misses; the folding
that defeats zero-width and lookalike tricks; no false positives on prose and code.

Fake secrets are assembled from pieces ("ghp_" + "A" * 36) so this file does not itself
look like a leak to secret scanners.
"""
from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lobbytalks import secrets_scan
from lobbytalks.gapped import any_with_gaps
from lobbytalks.secrets_scan import SECRET_LABELS, find_secret, find_secret_in
from lobbytalks.token_disguises import holds_disguised
from lobbytalks.security import new_agent_token

AGENT_TOKEN = new_agent_token()

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
    ("LBT" + AGENT_TOKEN[3:], "agent_token"),             # the prefix in capitals
    ("令牌" + AGENT_TOKEN + "结束", "agent_token"),
    ("postgres://app:" + "s3cret@db.example.org/app", "url_password"),
    ("https://user:" + "pa55word@example.com/", "url_password"),
    ("redis://:" + "hunter2@cache.example.net:6379", "url_password"),
    ("连接串 mysql://root:" + "root@10.0.0.2:3306/db", "url_password"),
    # Cyrillic and Greek letters drawn like Latin ones
    ("密钥 AKI\u0410IOSFODNN7EXAMPL\u0415", "aws_key"),
    ("\u0391\u039a\u0399\u0391IOSFODNN7EXAMPLE", "aws_key"),
    ("gh\u0440_" + "A" * 36, "github_token"),
    ("\u0455k-proj-" + "abcdefghijklmnopqrstuvwxyz0123456789", "api_key"),
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


def test_find_secret_in_never_joins_two_strings():
    # The keywords are looked for across all strings at once: a keyword or a secret split
    # over two strings is neither.
    assert find_secret_in(["AK", "IA" + "B" * 16]) is None
    assert find_secret_in(["ghp", "_" + "A" * 36]) is None
    assert find_secret_in(["sk-" + "x" * 10, "x" * 10]) is None
    assert find_secret_in(["a\x00sk-", "x" * 20]) is None


_PIECES = [case for case, _ in SECRET_CASES] + ["", "plain words", "我们讨论一下", "sk-", "AKIA",
                                                "https://example.com/a?b=c", "\x00", "Bearer"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=40)), max_size=8))
def test_find_secret_in_is_find_secret_on_each_string_in_order(texts):
    expected = next((label for label in map(find_secret, texts) if label), None)
    assert find_secret_in(texts) == expected


def test_find_secret_in_handles_deep_nesting():
    value: object = "AKIA" + "D" * 16
    for _ in range(5000):
        value = [value]
    assert find_secret_in(value) == "aws_key"



# --------------------------------------------------------------------------- per format

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
FORMATS = {
    # label: (true cases, near misses that must pass)
    "stripe_key": (
        ["sk_live_" + "4eC39HqLyjWDarjt" + "T1zdp7dc",
         "rk_live_" + "51H8s2a" * 4,
         "STRIPE_KEY=sk_test_" + "26PHem9AhJZvU623DfE1x4sd",
         "whsec_" + "a1b2C3d4" * 4,
         "密钥：sk_live_" + "x9Y8w7V6" * 3 + "。"],
        ["sk_live_mode = False", "sk_live_" + "short1", "task_live_" + "abcdefghijklmnopqrstuvwx",
         "请把 Stripe 的 sk_live_ 密钥放进环境变量", "whsec_ prefix marks webhook secrets"],
    ),
    "gitlab_token": (
        ["glpat-" + "xY3zA9bC" * 2 + "dE5f", "token=gldt-" + "Ab12" * 6, "glrt-" + "_-aB" * 6],
        ["glpat-" + "short", "myglpat-" + "xY3zA9bC" * 3, "GitLab tokens start with glpat-"],
    ),
    "slack_webhook": (
        ["https://hooks.slack.com/services/" + "T01ABCDEF/B02GHIJKL/" + "xYz123AbC456dEf789gHi012",
         "POST hooks.slack.com/workflows/" + "T01ABCDEF/" + "A02b/345678/abcdefABCDEF1234"],
        ["https://hooks.slack.com/services/", "https://api.slack.com/messaging/webhooks",
         "hooks.slack.com/services/T01ABCDEF/B02GHIJKL/short"],
    ),
    "discord_webhook": (
        ["https://discord.com/api/webhooks/" + "123456789012345678/" + "aB3_-dE6" * 8,
         "discordapp.com/api/v10/webhooks/" + "123456789012345678/" + "Zz9" * 12],
        ["https://discord.com/api/webhooks/123456789012345678",
         "https://discord.com/developers/docs/resources/webhook"],
    ),
    "aws_key": (
        ["ASIA" + "IOSFODNN7EXAMPLE", "临时凭证 ASIA" + "ZZZZ2345677ABCDE" + " 已过期",
         "AKIA\u200b" + "IOSFODNN7EXAMPLE",                    # zero-width space inside
         "ＡＫＩＡ" + "ＩＯＳＦＯＤＮＮ７ＥＸＡＭＰＬＥ"],                  # fullwidth
        ["ASIAN markets rallied", "ASIA" + "IOSFODNN7EXAMPL", "ASIA" + "IOSFODNN0EXAMPLE",
         "ASIA" + "IOSFODNN7EXAMPLEX", "亚洲 ASIA 市场"],
    ),
    "aws_secret_key": (
        ["aws_secret_access_key = " + AWS_SECRET,
         '{"SecretAccessKey": "' + AWS_SECRET + '"}',
         "export AWS_SECRET_ACCESS_KEY=" + AWS_SECRET],
        ["aws_secret_access_key = os.environ['AWS_SECRET_ACCESS_KEY']",
         "aws_secret_access_key = YOUR_SECRET_ACCESS_KEY_HERE",
         "The secret access key is 40 characters long.",
         "secret_access_key: " + AWS_SECRET[:39]],
    ),
    "google_oauth_token": (
        ["ya29." + "a0AfH6SMBx" * 3, "Authorization: Bearer ya29." + "c.b0Aa" + "Xy_-12" * 5],
        ["ya29." + "short", "def get_ya29_token():", "ya29 tokens expire after an hour"],
    ),
    "google_api_key": (
        ["AIza" + "Sy" + "A" * 33, "key=AIza\u2060" + "Sy" + "B1" * 16 + "c"],
        ["AIza" + "tooShort", "AIzaSomething"],
    ),
    "npm_token": (
        ["npm_" + "a1B2" * 9, "//registry.npmjs.org/:_authToken=npm_" + "Zq9" * 12],
        ["npm_config_registry", "npm_" + "a" * 35, "npm_" + "a" * 37, "run npm_install_all"],
    ),
    "huggingface_token": (
        ["hf_" + "aBcDeFgHiJ" * 3 + "kLmN", "HF_TOKEN=hf_" + "Q" * 34],
        ["hf_hub_download(repo_id='gpt2')", "hf_" + "a" * 33, "hf_" + "a" * 35,
         "from huggingface_hub import hf_api"],
    ),
    "sendgrid_key": (
        ["SG." + "aB3dE6gH9jK2mN5pQ8sT_-" + "." + "x" * 43],
        ["SG." + "aB3dE6gH9jK2mN5pQ8sT_-", "SG.2024 release", "SG." + "a" * 22 + "." + "b" * 42],
    ),
    "twilio_key": (
        ["SK" + "0123456789abcdef" * 2, "api key: SK" + "FEDCBA9876543210" * 2],
        ["SK" + "0123456789abcdef" * 2 + "0", "SK" + "0123456789abcdeg" * 2,
         "ASK" + "0123456789abcdef" * 2, "SKU 12345", "SKIP_TESTS=1"],
    ),
    "github_token": (
        ["ghp_\u200b" + "A" * 36, "gh\u200dp_" + "B" * 36, "ｇｈｐ＿" + "C" * 36],
        ["ghp_ is GitHub's prefix", "ghp_" + "A" * 35],
    ),
    "agent_token": (
        [AGENT_TOKEN[:10] + "\u200b" + AGENT_TOKEN[10:], AGENT_TOKEN[:4] + "\u00ad" + AGENT_TOKEN[4:]],
        ["lbt_" + "a" * 45, "lbt_ is LobbyTalks' token prefix"],
    ),
    "jwt": (
        ["eyJhbGciOiJSUzI1NiJ9" + ".\u200beyJpc3MiOiJhIn0" + ".c2ln"],
        ["eyJhbGciOiJIUzI1NiJ9 is a JWT header", "eyJ.eyJ.", "eyJhbGciOiJIUzI1NiJ9.notjson.sig"],
    ),
    "private_key": (
        ["-----begin rsa " + "private key-----", "-----BEGIN  RSA  " + "PRIVATE  KEY-----",
         "----- BEGIN OPENSSH " + "PRIVATE KEY -----", "---BEGIN EC " + "PRIVATE KEY---",
         "-----Begin Pgp " + "Private Key Block-----", "-----BEGIN\u200b " + "PRIVATE KEY-----"],
        ["-----BEGIN PUBLIC KEY-----", "-----begin certificate-----",
         "keep the private key private", "BEGIN PRIVATE KEY marks PKCS#8"],
    ),
}
TRUE_CASES = [(text, label) for label, (hits, _) in FORMATS.items() for text in hits]
NEAR_MISSES = [text for _, (_, misses) in FORMATS.items() for text in misses]


@pytest.mark.parametrize(("text", "label"), TRUE_CASES)
def test_each_format_is_found(text, label):
    assert find_secret(text) == label


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_not_secrets(text):
    assert find_secret(text) is None


def test_every_label_has_true_cases():
    covered = {label for _, label in TRUE_CASES} | {label for _, label in SECRET_CASES}
    assert covered >= set(SECRET_LABELS)


PROSE_AND_CODE = [
    "Привет! Это обычный текст о резервном копировании базы SQLite, без ключей и паролей.",
    "Ο κόσμος της Ελλάδας: ΑΚΡΟΠΟΛΗ, ΣΚΟΠΟΣ, μια απλή πρόταση χωρίς κλειδιά.",
    "Компания АКСА и SKU ЕКСЕ: ничего секретного, просто названия и артикулы.",
    "LobbyTalks 是一个社区：人们提问，他们自己的智能体带着证据回答。平台只检查权限、结构和明显的密钥。",
    "如何在 SQLite 中安全地做在线备份？请给出可复核的步骤、命令和官方文档链接，谢谢！",
    "The token bucket refills at a fixed rate; each request takes one token from the bucket.",
    "Rotate the API key every 90 days and store the secret access key in a vault, not in git.",
    "Set AWS_SECRET_ACCESS_KEY and AWS_ACCESS_KEY_ID in the environment before running.",
    "def hash_password(password: str, *, n: int = DEFAULT_SCRYPT_N) -> str:",
    "const stripeSecretKey = process.env.STRIPE_SECRET_KEY;",
    "from huggingface_hub import hf_hub_download, snapshot_download",
    "npm_config_cache=/tmp/npm npm ci --prefer-offline",
    "SELECT id, session_token_sha256 FROM sessions WHERE expires > :now",
    "class GitlabPersonalAccessTokenValidator(BaseValidator):",
    "ASIA_PACIFIC_REGION_CODES = ['ap-east-1', 'ap-south-1']",
    "sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709, commit 4f41869e0fade4df09c46d471762e6c583e0b8a1",
    "base64 of the header: eyJ0eXAiOiJKV1QifQ",
    "亚太区（ASIA）的 SKU 数量同比增长 12%，详见 2024 年报第 3 页。",
    "用 hf_transfer 加速下载；npm_ 开头的是 npm 的令牌前缀；ya29 开头的是 Google 的访问令牌。",
]


@pytest.mark.parametrize("text", PROSE_AND_CODE)
def test_no_false_positives_on_prose_and_code(text):
    assert find_secret(text) is None


def test_scanning_a_long_mixed_text_stays_fast():
    text = ("中文段落，带标点。" * 2000 + "a\u200b" * 5000 + "sk_live_" * 500 + "SG." * 500)
    started = time.monotonic()
    assert find_secret(text) is None
    assert time.monotonic() - started < 2


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in text)


@pytest.mark.parametrize("disguise", [
    lambda t: t,
    lambda t: " ".join(t),
    lambda t: "\n".join([t[:10], t[10:30], t[30:]]),
    lambda t: "**" + "**_".join(t[i:i + 5] for i in range(0, len(t), 5)),
    lambda t: "令".join(t),                          # a Chinese character between each
    lambda t: "\u200b".join(t),
    lambda t: "".join(c + "\u0301" for c in t),    # an accent on every letter
    _fullwidth,
    lambda t: t.translate(str.maketrans("aeopcxAEKMHOPT", "аеорсхΑΕΚΜΗΟΡΤ")),  # Cyrillic, Greek
    lambda t: t.encode().hex(),
    lambda t: t.encode().hex().upper(),
    lambda t: __import__("base64").b64encode(t.encode()).decode(),
    lambda t: __import__("base64").b64encode(b"x:" + t.encode()).decode(),  # mid-stream
    lambda t: f"the key starts {t[:25]} and ends with {t[25:]}",          # in parts
    lambda t: " / then / ".join(t[i:i + 11] for i in range(0, len(t), 11)),
    lambda t: t[::-1],
    lambda t: __import__("codecs").encode(t, "rot13"),
    lambda t: __import__("codecs").encode(t, "rot13")[::-1],
    lambda t: "".join(c + str(i % 10) for i, c in enumerate(t)),          # l0b1t2_3…
    lambda t: "".join(c + "xy" for c in t),
    lambda t: f"backwards, in two: {t[::-1][:22]} … {t[::-1][22:]}",
    # what follows the public "lbt_" alone: the prefix is no secret, so it was left out
    lambda t: t[4:].encode().hex(),
    lambda t: t[4:].encode().hex().upper(),
    lambda t: __import__("base64").b64encode(t[4:].encode()).decode(),
    lambda t: __import__("base64").b64encode(b"k" + t[4:].encode()).decode(),
    lambda t: __import__("base64").urlsafe_b64encode(b"k=" + t[4:].encode()).decode(),
    # byte by byte, and base32 (from a re-test: each was stored, and decoded it worked)
    lambda t: ", ".join(f"0x{b:02x}" for b in t[4:].encode()),
    lambda t: "".join(f"\\x{b:02X}" for b in t.encode()),
    lambda t: str(list(t[4:].encode())),
    lambda t: "".join(f"&#x{b:x};" for b in t[4:].encode()),
    lambda t: "".join(f"&#{b};" for b in t[4:].encode()),
    lambda t: __import__("base64").b32encode(t[4:].encode()).decode(),
    lambda t: __import__("base64").b32encode(b"ab" + t[4:].encode()).decode().lower(),
    lambda t: "".join(c.upper() if i % 2 else c for i, c in enumerate(t[4:].encode().hex())),
    lambda t: f"part one {t[4:].encode().hex()[:46]} then {t[4:].encode().hex()[46:]}",
    # without the public "lbt_", woven (a third re-test: stored, and decoded it worked)
    lambda t: "Each character twice: " + "".join(c * 2 for c in t[4:]),
    lambda t: "".join(c + "z" for c in t[4:]),
    lambda t: " and ".join(str(b) for b in t[4:].encode()),
    lambda t: " ".join(f"{b:04d}" for b in t[4:].encode()),
    lambda t: "".join(f"\\{b:03o}" for b in t[4:].encode()),
    lambda t: " ".join(f"{b:08b}" for b in t[4:].encode()),
    lambda t: __import__("base64").b85encode(t[4:].encode()).decode(),
    lambda t: __import__("base64").a85encode(b"q" + t[4:].encode()).decode(),
    # as Python or C prints bytes, and in rows (a fourth re-test: stored)
    lambda t: ", ".join(bin(b) for b in t[4:].encode()),
    lambda t: ", ".join(oct(b) for b in t[4:].encode()),
    lambda t: ", ".join("0%o" % b for b in t[4:].encode()),
    lambda t: "\n/* next row */\n".join(" ".join(str(b) for b in t[4:].encode()[i:i + 15])
                                        for i in range(0, len(t) - 4, 15)),
], ids=["plain", "spaced", "lines", "markup", "chinese", "zero-width", "accents",
        "fullwidth", "lookalikes", "hex", "HEX", "base64", "base64-shifted", "halves",
        "quarters", "reversed", "rot13", "rot13-reversed", "interleaved", "interleaved-2",
        "reversed-halves", "body-hex", "body-HEX", "body-base64", "body-base64-shifted",
        "body-base64url-shifted", "body-0x", "token-escapes", "body-decimal", "body-entities-hex",
        "body-entities", "body-base32", "body-base32-shifted-lower", "body-hex-mixed-case",
        "body-hex-halves", "body-doubled", "body-woven", "body-decimal-and", "body-decimal-padded",
        "body-octal", "body-binary", "body-base85", "body-ascii85-shifted", "body-bin-prefixed",
        "body-oct-prefixed", "body-c-octal", "body-decimal-rows"])
def test_a_known_token_is_found_in_any_disguise(disguise):
    token = new_agent_token()
    assert holds_disguised({"reasoningSummary": "结论：" + disguise(token) + "。"}, token)
    assert holds_disguised(["x", {"k": [disguise(token)]}], token)
    assert not holds_disguised({"reasoningSummary": "结论：" + disguise(token) + "。"},
                               new_agent_token())


def test_an_encoded_token_split_over_two_fields_is_found_in_each():
    token = new_agent_token()
    for encoded in (__import__("base64").b64encode(token[4:].encode()).decode(),
                    token[4:].encode().hex()):
        assert holds_disguised({"conclusion": encoded[:32], "reasoningSummary": encoded[32:]},
                               token)


@pytest.mark.parametrize("text", [
    "commit " + "0123456789abcdef" * 2 + "89abcdef, sha256 " + "f0e1d2c3b4a59687" * 4,
    "data:image/png;base64," + __import__("base64").b64encode(bytes(range(256))).decode(),
    "bytes " + str(list(range(40))) + " and " + ", ".join(f"0x{b:02x}" for b in range(64)),
    "AT&amp;T &lt;b&gt; &#x4e2d;&#25991;" * 20,
    __import__("base64").b32encode(bytes(range(100))).decode(),
])
def test_encodings_of_something_else_are_no_token(text):
    """What answers cite (hashes, data URLs, byte tables, escaped markup) is left alone."""
    assert not holds_disguised({"reasoningSummary": text}, new_agent_token())


def test_a_disguise_is_not_pieced_together_across_strings():
    """Each string on its own: two fields that happen to meet are not one text. (Each
    half of a token is found on its own now: any eleven of its letters and digits in a
    row hold one of the pieces looked for.)"""
    token = new_agent_token()
    plain = "".join(c for c in token if c.isalnum())
    # six letters each, straddling the pieces [0:6], [6:12], [12:18]: together they hold
    # [6:12], apart neither does
    assert holds_disguised({"a": plain[2:8] + plain[8:14]}, token)
    assert not holds_disguised({"a": plain[2:8], "b": plain[8:14]}, token)
    assert not holds_disguised([plain[2:8], plain[8:14]], token)
    assert holds_disguised({"a": token[:25], "b": "x"}, token)


# --- no input makes a scan backtrack for ever ---------------------------------------------------
# Each of these took minutes to hours before its pattern was rewritten (2^n readings of
# "A.A.…", every gap length of a woven token, every start inside a run of dashes); the
# bound only catches that, it measures no speed.

def test_a_credential_of_single_capitals_is_judged_at_once():
    started = time.monotonic()
    assert find_secret("Bearer " + "A." * 40 + "1") == "bearer_token"
    assert find_secret("Authorization: " + "A." * 40 + "1") == "authorization_header"
    assert find_secret("Bearer " + "A." * 40) is None  # prose-like: capitals and dots
    assert time.monotonic() - started < 2


# The reading of prose-like credentials before it was made unambiguous, as the reference.
_AMBIGUOUS_WORD = r"(?:[A-Za-z][a-z]{0,14}|[A-Z]{1,15})"
_AMBIGUOUS_PROSE = re.compile(f"{_AMBIGUOUS_WORD}(?:[-/._~+]{_AMBIGUOUS_WORD})*[-/._~+]?")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="aAbB1.-/_~+Zz", max_size=24))
def test_prose_like_reads_the_same_strings_as_before(text):
    assert bool(secrets_scan._PROSE_LIKE.fullmatch(text)) == bool(_AMBIGUOUS_PROSE.fullmatch(text))


def test_a_long_run_of_dashes_is_scanned_once():
    started = time.monotonic()
    assert find_secret("-" * 60_000) is None
    assert find_secret("-" * 60_000 + "BEGIN PRIVATE KEY-----") == "private_key"
    assert time.monotonic() - started < 2


def test_a_token_written_with_its_letters_tripled_is_judged_at_once():
    token = new_agent_token()
    letters = [c for c in token if c.isalnum()]
    tripled = "".join(c * 3 for c in letters[:40]) + "0" * 60
    started = time.monotonic()
    assert not holds_disguised({"error": tripled}, token)
    assert not holds_disguised({"error": tripled * 40}, token)  # 64 KB of it
    assert time.monotonic() - started < 2


@settings(max_examples=400, deadline=None)
@given(form=st.text(alphabet="abc1", min_size=2, max_size=6),
       text=st.text(alphabet="abc1xy\x00", max_size=40))
def test_woven_search_finds_what_the_pattern_finds(form, text):
    """The bit-parallel search against the regular expression it replaced, on texts short
    enough for that to answer quickly."""
    pattern = re.compile("[0-9A-Za-z]{0,4}".join(form))
    assert any_with_gaps(text, (form,), 4, "\x00") == bool(pattern.search(text))
