"""Passwords and tokens inside URI-valued settings (a database or rate-limit storage URL):
masked wherever a setting or an error about it is shown, never the value itself."""
from __future__ import annotations

import re
from urllib.parse import unquote

_URI_USERINFO = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#]*)@")
# Query keys whose values are secrets: libpq's password and sslpassword, a storage's token...
_SECRET_QUERY = re.compile(
    r"(?i)([?&;](?:\w*(?:password|passwd|secret|token)\w*|pass|pwd|key)=)[^&;#]*")
# Userinfo without a colon is a username there, not a token as it may be elsewhere.
_USERNAME_SCHEMES = ("postgresql", "postgres")


def mask_uri_credentials(value: str) -> str:
    """A URI-valued setting with its password (and secret query parameters) masked.

    ``redis://:secret@host`` → ``redis://:****@host``; ``postgresql://me:pw@db/x`` →
    ``postgresql://me:****@db/x``; a userinfo without a colon is taken as the secret itself
    (``redis://token@host``, as some services issue).
    """
    def userinfo(match: re.Match[str]) -> str:
        user, colon, _ = match["userinfo"].partition(":")
        return f"{match['scheme']}{user}:****@" if colon else f"{match['scheme']}****@"
    if "://" in value:
        value = hide_uri_secrets(value, value)  # a password with "@" or "/" left unescaped
    return _SECRET_QUERY.sub(r"\1****", _URI_USERINFO.sub(userinfo, value, count=1))


def hide_uri_secrets(text: str, uri: str) -> str:
    """``text`` (an error about ``uri``, a driver's own words) with every copy of the URI's
    password and secret query values masked, however malformed the URI: a driver quotes
    what it could not parse, where ``_URI_USERINFO`` reads well-formed URIs only."""
    scheme, sep, rest = uri.partition("://")
    found = [m[0][len(m[1]):] for m in _SECRET_QUERY.finditer(uri)]
    if not sep:
        found.append(uri)  # no scheme: it may be a password alone, written where a URL goes
    elif "@" in rest:  # up to the last "@": a password may hold "@" or "/" unescaped
        userinfo = rest[:rest.rfind("@")]
        _, colon, password = userinfo.partition(":")
        if colon:
            found.append(password)
        elif "/" not in userinfo and scheme.lower() not in _USERNAME_SCHEMES:
            found.append(userinfo)  # a token alone (an "@" in a path is no userinfo)
    else:  # "user:password" with the "@host" forgotten, unless what follows ":" is a port
        authority = rest.split("/", 1)[0].split("?", 1)[0]
        after = authority.partition(":")[2]
        if after and not after.isdigit() and not authority.startswith("["):
            found.append(after)
    # A secret of one to three characters is not looked for everywhere: masking every "p"
    # would garble the message and hide next to nothing.
    for secret in sorted({v for s in found for v in (s, unquote(s)) if len(v) >= 4},
                         key=len, reverse=True):
        text = text.replace(secret, "****")
    return text


def unusable_uri(value: str, example: str) -> str:
    """What a refusal may say of a URI-valued setting it cannot use: never the value, which
    may hold a password (or be only one, from a file meant for the URL)."""
    if value != value.strip():
        return "it begins or ends with a space or a line break"
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.-]*(?=://)", value)  # "pass:word" has none
    return (f"its scheme is {scheme[0]!r}" if scheme
            else f"it has no scheme such as {example} (the value is not shown: it may hold "
                 "a password)")
