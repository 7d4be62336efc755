"""Tests for lobbytalks.urlpolicy: one table of accepted URLs and one of refused URLs with
the reason each is refused for."""
from __future__ import annotations

import unicodedata

import pytest

from lobbytalks.security import new_agent_token
from lobbytalks.textrules import js_length
from lobbytalks.urlpolicy import check_source_url

AGENT_TOKEN = new_agent_token()
GITHUB_TOKEN = "ghp_" + "A" * 36


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
    ("HTTPS://example.com/", "https://example.com/"),  # the page links only "https://"
    ("hTtPs://Example.com/A", "https://Example.com/A"),
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
    ("https://\u212aernel.org/doc", "punycode"),  # Kelvin sign: lowered, an ASCII "k"
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
    ("https://example.com/\ud800", "空白"),
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
    # an OAuth authorization code: long and random, or holding "/" (Google's "4/0A...")
    ("https://example.com/callback?code=4%2F0AeanS0Zx9Q&state=xyz", "敏感"),
    ("https://example.com/callback?code=SplxlOBeZQQYbYS6WxSbIA", "敏感"),
    ("https://example.com/callback?CODE=0123456789abcdef01", "敏感"),
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
    ("https://example.com/?state=eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NSJ9.sig", "密钥"),
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



# --------------------------------------------------------------------------- hosts that point inward

@pytest.mark.parametrize("url", [
    "https://1.2.3.example.com/",                    # three numbers are no address
    "https://deadbeef.example.com/",                 # hex, but a public address
    "https://preview-a1b2c3d4.example.app/",
    "https://2024-01-02-03.example.com/",
    "https://ec2-54-12-34-56.compute-1.amazonaws.com/",  # a public address spelled out
    "https://999.1.1.1.example.com/",                # not an address at all
    "https://nipio.example.com/", "https://notnip.io/", "https://mylvh.me/",
    "https://en.wikipedia.org/wiki/Session_(computer_science)",
    "https://example.com/search?zip_code=10001&country_code=cn&sort_key=date",
    # a public code: a stock ticker, an airport (an authorization code is long and random)
    "https://emweb.securities.eastmoney.com/PC_HSF10/OperationsRequired/Index?type=web&code=SH600519",
    "https://www.flightradar24.com/data/airports?code=PEK",
    "https://example.com/lang?code=zh-Hans",
    "https://example.com/?q=password+reset+guide&monkey=1&keyboard=us",
    "https://example.com/?tokens=3&tokenizer=bpe&author=me&passage=2",
    "https://example.com/docs;v=2/page",
    "https://example.com/?q=%25E4%25B8%25AD",        # double-encoded Chinese is fine
])
def test_ordinary_urls_pass(url):
    assert check_source_url(url) == url


@pytest.mark.parametrize(("url", "reason"), [
    # wildcard-IP and rebinding services: an IP address in disguise, whatever it is
    ("https://127.0.0.1.nip.io/", "IP"),
    ("https://169.254.169.254.nip.io/latest/meta-data/", "IP"),
    ("https://10.0.0.1.sslip.io/", "IP"),
    ("https://10-0-0-1.sslip.io/", "IP"),
    ("https://www-192-168-1-1.sslip.io/", "IP"),
    ("https://0--1.sslip.io/", "IP"),                # ::1 in sslip's dashed IPv6
    ("https://7f000001.nip.io/", "IP"),
    ("https://app-7f000001.NIP.IO/", "IP"),
    ("https://8.8.8.8.nip.io/", "IP"),
    ("https://nip.io/", "IP"),
    ("https://foo.traefik.me/", "IP"),
    ("https://7f000001.c0a80001.rbndr.us/", "IP"),
    ("https://make-127.0.0.1-rr.1u.ms/", "IP"),
    # names that resolve to loopback for local development
    ("https://localtest.me/", "本机"),
    ("https://api.localtest.me/", "本机"),
    ("https://lvh.me/", "本机"),
    ("https://app.lvh.me/", "本机"),
    ("https://vcap.me/", "本机"),
    ("https://x.lacolhost.com/", "本机"),
    ("https://anything.local.gd/", "本机"),
    ("https://sub.localhost.direct/", "本机"),
    ("https://deep.app.localhost/", "公网"),
    ("https://kubernetes.default.svc/", "公网"),
    ("https://shop.alt/", "公网"),
    # a private address embedded in any other name
    ("https://127.0.0.1.example.com/", "本机"),
    ("https://www.192.168.1.1.example.org/", "本机"),
    ("https://ip-10-0-0-1.example.net/", "本机"),
    ("https://169-254-169-254.example.org/", "本机"),
    ("https://host-172-16-5-4.example.org/", "本机"),
    ("https://100.64.0.1.example.com/", "本机"),     # carrier-grade NAT
    ("https://0.0.0.0.example.com/", "本机"),
    ("https://1.10.0.0.1.example.com/", "本机"),     # overlapping runs are all read
    ("https://1-10-0-0-1.example.com/", "本机"),
    ("https://c0a80101.example.org/", "本机"),       # 192.168.1.1 in hex
    ("https://app-0a000001.example.org/", "本机"),   # 10.0.0.1 in hex
    ("https://7f000001.example.org/", "本机"),
])
def test_hosts_that_point_inward_are_refused(url, reason):
    with pytest.raises(ValueError, match=reason):
        check_source_url(url)


# --------------------------------------------------------------------------- sensitive parameters

@pytest.mark.parametrize("url", [
    "https://example.com/?auth_token=abc",
    "https://example.com/?x-api-key=abc",
    "https://example.com/?X-API-KEY=abc",
    "https://example.com/?oauth_token=abc",
    "https://example.com/?sessionToken=abc",
    "https://example.com/?jwt=abc",
    "https://example.com/?PHPSESSID=abc",
    "https://example.com/shop;jsessionid=0123ABC?item=1",
    "https://example.com/a;JSESSIONID=0123ABC/b",
    "https://example.com/?token[]=abc",
    "https://example.com/?token%5B%5D=abc",
    "https://example.com/?token%00=abc",
    "https://example.com/?%2574oken=abc",           # double-encoded name
    "https://example.com/?%252574oken=abc",         # triple-encoded name
    "https://example.com/?access%255Ftoken=abc",
    "https://example.com/?%EF%BD%94oken=abc",       # fullwidth "ｔ"
    "https://example.com/?to%E2%80%8Bken=abc",      # zero-width space inside
    "https://example.com/?t%D0%BEken=abc",          # Cyrillic "о"
    "https://example.com/?%CE%A1ASSWORD=abc",       # Greek capital rho for "P"
    "https://example.com/?user[password]=abc",
    "https://example.com/?apiKey=abc",
    "https://example.com/?XApiKey=abc",
    "https://example.com/?client-secret=abc",
    "https://example.com/?accesstoken=abc",
    "https://example.com/?clientsecret=abc",
    "https://example.com/?private_key=abc",
    "https://example.com/?auth_code=abc",
    "https://example.com/?session_id=abc",
    "https://example.com/?csrf_token=abc",
    "https://example.com/?a=1&b=2;Auth=abc",
    "https://example.com/%3Bjsessionid%3D0123ABC",  # an encoded ";" in the path
])
def test_sensitive_parameters_are_refused_by_pattern(url):
    with pytest.raises(ValueError, match="敏感"):
        check_source_url(url)


@pytest.mark.parametrize("url", [
    "https://example.com/?q=%2567hp_" + "A" * 36,        # double-encoded value
    "https://example.com/?q=%252567hp_" + "A" * 36,      # triple-encoded value
    "https://example.com/?q=AKIA%E2%80%8B" + "IOSFODNN7EXAMPLE",
    "https://example.com/files/%2567hp_" + "A" * 36,     # double-encoded path
    "https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/" + "xYz123AbC456dEf789gHi012",
    "https://discord.com/api/webhooks/123456789012345678/" + "aB3_-dE6" * 8,
    "https://example.com/x;note=" + GITHUB_TOKEN,
])
def test_secrets_are_found_after_decoding(url):
    with pytest.raises(ValueError, match="密钥"):
        check_source_url(url)


@pytest.mark.parametrize("part", ["?%s=1", "?q=%s", "%s"])
def test_layers_of_encoding_beyond_any_real_use_are_refused(part):
    # Decoding stops after a few rounds; what is still encoded then is refused rather
    # than passed unread.
    layered = "%74oken"
    for _ in range(20):
        layered = layered.replace("%", "%25")
    with pytest.raises(ValueError, match="编码层数"):
        check_source_url("https://example.com/" + part % layered)


@pytest.mark.parametrize("code", range(128), ids=lambda code: f"{code:#04x}")
def test_an_ascii_character_is_refused_as_unseen_exactly_when_blank_or_control(code):
    """ASCII takes a shortcut past the Unicode categories; it must draw the same line."""
    char = chr(code)
    unseen = char.isspace() or unicodedata.category(char) == "Cc"
    try:
        check_source_url(f"https://example.com/a{char}b")
        refused_as_unseen = False
    except ValueError as error:
        refused_as_unseen = "空白" in str(error)
    assert refused_as_unseen == unseen
