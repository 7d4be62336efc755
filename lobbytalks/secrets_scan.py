"""Framework-free secret scanning: does a text hold an obvious credential?

Every text is first folded (:func:`textrules.fold_for_scanning`: NFKC, invisible characters
and combining marks dropped, Cyrillic and Greek look-alikes read as Latin), so
"AKIA\\u200bIOSF...", fullwidth letters or a Cyrillic "А" do not hide a key. The patterns
are tuned to miss prose, Chinese text, code identifiers and ordinary URLs; each carries the
label reported to the client. Standard library only, no I/O.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterator, NamedTuple

from .textrules import fold_for_scanning

__all__ = ["find_secret", "find_secret_in", "strings_in", "SEPARATOR", "SECRET_LABELS"]

# Credentials after "Bearer"/"Authorization:" that are really prose or placeholders, e.g.
# "Bearer authentication/authorization" or "Bearer YOUR_ACCESS_TOKEN_HERE": short words
# (Capitalised, lower or UPPER case) joined by punctuation. Real tokens have digits, mixed
# case inside a word, or one very long run. Each word can be read only one way (a lone
# capital is UPPER case, not Capitalised): with two, "A.A.A.…1" backtracked through 2^n
# readings before failing, and a 110-character link took minutes to render.
_WORD = r"(?:[a-z]{1,15}|[A-Z][a-z]{1,14}|[A-Z]{1,15})"
_PROSE_LIKE = re.compile(f"{_WORD}(?:[-/._~+]{_WORD})*[-/._~+]?")


def _not_prose(match: re.Match[str]) -> bool:
    return not _PROSE_LIKE.fullmatch(match["credential"])


# Left boundaries use explicit ASCII classes, not \b, because \b treats Chinese characters
# as word characters ("密钥AKIA..." must still match).
_START = r"(?<![A-Za-z0-9])"
_START_ID = r"(?<![A-Za-z0-9_-])"  # for prefixes that may follow "_" or "-" in identifiers

_IGNORE_CASE = int(re.IGNORECASE)  # a plain int: testing an enum flag costs a Python call


class _Format(NamedTuple):
    label: str
    # Literals every match contains, tried with ``in`` before the regex: most text holds
    # none of them, and a substring search runs far faster than a regex with a
    # lookbehind at every position. Lower case when the pattern ignores case.
    keywords: tuple[str, ...]
    pattern: re.Pattern[str]
    check: Callable[[re.Match[str]], bool] | None = None  # a further test of each match

    def may_be_in(self, folded: str, lowered: str) -> bool:
        """Whether one of the keywords occurs: a match is impossible without one."""
        haystack = lowered if self.pattern.flags & _IGNORE_CASE else folded
        for keyword in self.keywords:
            if keyword in haystack:
                return True
        return False

    def found_in(self, folded: str) -> bool:
        """Whether the pattern matches; called only once one of the keywords occurs."""
        if self.check is None:
            return self.pattern.search(folded) is not None
        return any(self.check(match) for match in self.pattern.finditer(folded))


# Order matters: the most specific kinds first, so "Authorization: Bearer ghp_..." reports
# github_token. Prefixes and lengths follow each vendor's published token format.
_FORMATS: tuple[_Format, ...] = (
    # Any case, any run of spaces or tabs between the words, three or more dashes around.
    # A run of dashes is tried once, from its start (else every dash of a long run starts
    # a scan to its end: quadratic, seconds for a page of them).
    _Format("private_key", ("---",), re.compile(
        r"(?<!-)-{3,}+[ \t]*BEGIN[ \t]+(?:[A-Z0-9]+[ \t]+)*PRIVATE[ \t]+KEY(?:[ \t]+BLOCK)?[ \t]*-{3,}",
        re.IGNORECASE)),
    # Our own tokens by shape only: a leaked token with a typo'd checksum is still a leak,
    # and so is one whose prefix was written in capitals.
    _Format("agent_token", ("lbt_",), re.compile(_START + r"lbt_[a-z0-9]{46}", re.IGNORECASE)),
    _Format("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), re.compile(
        _START + r"(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,})")),
    _Format("gitlab_token", ("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-",
                             "glimt-", "gloas-"), re.compile(
        _START_ID + r"gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|oas)-[A-Za-z0-9_-]{20,}")),
    _Format("slack_token", ("xox", "xapp-"), re.compile(
        _START + r"(?:xox[abprse]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{20,})")),
    _Format("slack_webhook", ("hooks.slack.com/",), re.compile(
        r"hooks\.slack\.com/(?:services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}"
        r"|(?:workflows|triggers)/T[A-Z0-9]+/[A-Za-z0-9/]{16,})")),
    _Format("discord_webhook", ("webhooks/",), re.compile(
        r"discord(?:app)?\.com/api/(?:v[0-9]+/)?webhooks/[0-9]{15,22}/[A-Za-z0-9_-]{30,}",
        re.IGNORECASE)),
    # Access key ids are base32 (A-Z, 2-7): AKIA long-term, ASIA temporary (STS).
    _Format("aws_key", ("AKIA", "ASIA", "ABIA", "ACCA"), re.compile(
        _START + r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Za-z0-9])")),
    # A secret access key is 40 base64 characters with nothing to recognise it by, so only
    # when it is assigned to a name that says what it is.
    _Format("aws_secret_key", ("secret",), re.compile(
        r"(?<![A-Za-z0-9])(?:aws_?)?secret_?access_?key[\"']?\s*[:=]\s*[\"']?"
        r"(?P<credential>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", re.IGNORECASE), _not_prose),
    _Format("stripe_key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"), re.compile(
        _START_ID + r"(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9]{32,})")),
    _Format("google_api_key", ("AIza",), re.compile(_START_ID + r"AIza[0-9A-Za-z_-]{35}")),
    _Format("google_oauth_token", ("ya29.",), re.compile(_START_ID + r"ya29\.[0-9A-Za-z._-]{20,}")),
    _Format("npm_token", ("npm_",), re.compile(_START_ID + r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])")),
    _Format("huggingface_token", ("hf_",), re.compile(
        _START_ID + r"hf_[A-Za-z0-9]{34}(?![A-Za-z0-9])")),
    _Format("sendgrid_key", ("SG.",), re.compile(
        _START_ID + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")),
    _Format("twilio_key", ("SK",), re.compile(_START + r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])")),
    _Format("jwt", ("eyJ",), re.compile(
        _START_ID + r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")),
    # sk-, sk-ant-api03-, sk-proj-...: some hyphen-free run of 20+ key characters, so
    # "sk-learn" and slugs such as "sk-hynix-memory-chips-2024" are not keys.
    _Format("api_key", ("sk-",), re.compile(_START_ID + r"sk-(?:[A-Za-z0-9_]*-)*[A-Za-z0-9_]{20}")),
    _Format("bearer_token", ("bearer",), re.compile(
        r"(?<![A-Za-z0-9_])bearer\s+(?P<credential>[A-Za-z0-9._~+/_-]{20,})=*",
        re.IGNORECASE), _not_prose),
    _Format("authorization_header", ("authorization",), re.compile(
        r"(?<![A-Za-z0-9_])authorization[\"']?\s*[:=]\s*[\"']?"
        r"(?:(?:basic|bearer|token|digest|bot|apikey)\s+)?"
        r"(?P<credential>[A-Za-z0-9._~+/_-]{12,})=*",
        re.IGNORECASE), _not_prose),
    # scheme://user:password@host (user may be empty, as in redis://:pw@host).
    _Format("url_password", ("://",), re.compile(
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:[^\s/?#@]+@[^\s/?#@]")),
)
SECRET_LABELS = tuple(kind.label for kind in _FORMATS)
SEPARATOR = "\x00"  # between strings read together: no keyword holds it
assert not any(SEPARATOR in keyword for kind in _FORMATS for keyword in kind.keywords)


def _first_found(folded: str, lowered: str, kinds: tuple[_Format, ...] | list[_Format]
                 ) -> str | None:
    """The label of the first of ``kinds`` that matches ``folded`` (``lowered`` is
    ``folded.lower()``, made once for all the kinds that ignore case)."""
    for kind in kinds:
        if kind.may_be_in(folded, lowered) and kind.found_in(folded):
            return kind.label
    return None


def find_secret(text: str) -> str | None:
    """The label of the first kind of secret found in ``text`` (one of
    :data:`SECRET_LABELS`, e.g. "aws_key" or "private_key"), or None.

    Reads the folded text, so zero-width characters, combining marks and compatibility
    forms do not hide a match. Returns None for non-str input; never raises.
    """
    if not isinstance(text, str):
        return None
    folded = fold_for_scanning(text)
    return _first_found(folded, folded.lower(), _FORMATS)


def strings_in(values: Any) -> Iterator[str]:
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
    folded = [fold_for_scanning(text) for text in strings_in(values)]
    # The keywords are looked for once in all the strings together (a result holds dozens
    # of short ones, most with no keyword at all); only the kinds whose keyword occurs are
    # then tried string by string. No keyword holds the separator, so none is found across
    # two strings, and each string is still judged on its own.
    joined = SEPARATOR.join(folded)
    joined_lower = joined.lower()
    candidates = [kind for kind in _FORMATS if kind.may_be_in(joined, joined_lower)]
    for text in folded if candidates else ():
        label = _first_found(text, text.lower(), candidates)
        if label is not None:
            return label
    return None
