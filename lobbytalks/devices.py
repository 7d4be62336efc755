"""Known devices: a browser that has logged in to an account keeps its own way in while
strangers have filled that account's window of failed logins (OWASP's "device cookies").

Without it, a guesser with a few addresses can fill the per-username window (or does so on
purpose) and lock the owner out for an hour. A browser holding the device cookie for the
username it logs in to is counted in a window of its own instead, as strict per device as
the per-address one; every other window still applies.

The cookie is ``NONCE.MAC``: the MAC binds the nonce to the username (case aside) with a key
derived from the data folder's secret key, so nothing is stored, and rotating that key
forgets every device. It is sent only to the API that logs in.
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


def _mac(username: str, nonce: str) -> str:
    key = runtime().keyring.derive(_PURPOSE)
    message = f"{username.lower()}\n{nonce}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:32]


def known(request: Request, username: str) -> str | None:
    """This browser's device id when it has logged in to ``username`` before, else None."""
    nonce, _, mac = request.cookies.get(COOKIE, "").partition(".")
    if not nonce or len(nonce) > 64 or not mac:
        return None
    # as bytes: compare_digest refuses a str with anything but ASCII, which a cookie may hold
    right = hmac.compare_digest(_mac(username, nonce).encode(), mac.encode("utf-8", "replace"))
    return nonce if right else None


def remember(response: Response, request: Request, username: str) -> None:
    """After a successful login or registration: this browser is known to ``username``."""
    nonce = known(request, username) or secrets.token_urlsafe(16)
    response.set_cookie(COOKIE, f"{nonce}.{_mac(username, nonce)}", max_age=MAX_AGE,
                        httponly=True, samesite="Lax", secure=is_https(request), path=COOKIE_PATH)
