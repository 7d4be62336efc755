"""Known devices: a browser that has logged in to an account keeps its own way in while
strangers have filled that account's window of failed logins (OWASP's "device cookies").

Without it, a guesser with a few addresses can fill the per-username window (or does so on
purpose) and lock the owner out for an hour. A browser holding the device cookie for the
username it logs in to is counted in a window of its own instead of the per-username one
and the per-address one across usernames (``community_account._failure_windows``), as
strict per device as the (username, address) one, which still applies.

The cookie is ``NONCE.MAC``: the MAC binds the nonce to the username (case aside) and to the
account's password hash with a key derived from the data folder's secret key, so nothing is
stored; a new password (changed, or reset by the operator) forgets every device, so that
someone who once knew the old one keeps no window of their own, and rotating the key
forgets them all. It is sent only to the API that logs in.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets

from flask import Request, Response

from .auth import is_https
from .runtime import runtime

COOKIE = "xia_device"
COOKIE_PATH = "/api/community"
MAX_AGE = 365 * 86400
_PURPOSE = b"known-device"


def _mac(username: str, password_hash: str, nonce: str) -> str:
    key = runtime().keyring.derive(_PURPOSE)
    message = f"{username.lower()}\n{password_hash}\n{nonce}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:32]


def offered(request: Request) -> bool:
    """Whether this browser sends a device cookie at all (before anything is looked up)."""
    return COOKIE in request.cookies


def known(request: Request, username: str, password_hash: str | None) -> str | None:
    """This browser's device id when it has logged in to ``username`` under the password
    whose hash is ``password_hash`` (None: no such account), else None."""
    nonce, _, mac = request.cookies.get(COOKIE, "").partition(".")
    if not nonce or len(nonce) > 64 or not mac or password_hash is None:
        return None
    # as bytes: compare_digest refuses a str with anything but ASCII, which a cookie may hold
    right = hmac.compare_digest(_mac(username, password_hash, nonce).encode(),
                                mac.encode("utf-8", "replace"))
    return nonce if right else None


def remember(response: Response, request: Request, username: str, password_hash: str) -> None:
    """After a successful login, registration or password change: this browser is known to
    ``username`` under its password now."""
    nonce = known(request, username, password_hash) or secrets.token_urlsafe(16)
    response.set_cookie(COOKIE, f"{nonce}.{_mac(username, password_hash, nonce)}",
                        max_age=MAX_AGE, httponly=True, samesite="Lax",
                        secure=is_https(request), path=COOKIE_PATH)
