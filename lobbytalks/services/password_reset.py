"""A forgotten password, reset through a link mailed to the address its owner confirmed last.

Asking (``ask``) only marks the account; the mailer signs the moment of asking into a link
(``token``) and sends it. Nothing about a link is stored: it is the user id, that moment and
a MAC over both, the account's password hash and that address, under a key derived from the
data folder's secret key. So a link works once (the new password changes the hash), for
``VALID_SECONDS``, and not after another address was confirmed, the address was removed or
the key was rotated.

Whether an account of that name or address exists, or has a confirmed address, is never
told: every request is answered alike. The link goes to the address the owner confirmed last
(confirming takes the password: a session alone cannot point it elsewhere), never to one
still waiting for its code, and to none once the owner removed their address.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
from typing import TYPE_CHECKING, NamedTuple

from ..db import Database, Q, Row
from .accounts import password_still, replace_password
from .locks import hold_user
from .moderation import refuse_if_suspended

if TYPE_CHECKING:
    from ..crypto import Keyring

VALID_SECONDS = 3600
# Another process may have marked the request by a clock a little ahead of this one's.
CLOCK_SKEW_SECONDS = 60
_PURPOSE = b"password-reset"
# user id, moment asked, 120 bits of MAC in lower-case base32; ids and moments short enough
# for a 64-bit integer column (a longer number never reaches the database)
_TOKEN = re.compile(r"([1-9]\d{0,14})-([1-9]\d{0,11})-([a-z2-7]{24})")


class Checked(NamedTuple):
    """The account a token was made for, as it was when checked."""
    user_id: int
    password_hash: str
    username: str


def ask(db: Database, account: str, *, now: int) -> None:
    """Mark the account named by ``account`` (its username, or its confirmed address when
    it holds an @) for a reset mail, if there is one to mail."""
    with db.transaction() as conn:
        if "@" in account:
            conn.execute(Q.queue_password_reset_by_email, {"email": account, "now": now})
        else:
            conn.execute(Q.queue_password_reset_by_name, {"username": account, "now": now})


def token(keyring: "Keyring", user_id: int, asked: int, password_hash: str, email: str) -> str:
    """The link's token for the account as it is now (``email``: its confirmed address)."""
    return f"{user_id}-{asked}-{_mac(keyring, user_id, asked, password_hash, email)}"


def _mac(keyring: "Keyring", user_id: int, asked: int, password_hash: str, email: str) -> str:
    signed = f"{user_id}\n{asked}\n{password_hash}\n{email}".encode()
    mac = hmac.new(keyring.derive(_PURPOSE), signed, hashlib.sha256).digest()
    return base64.b32encode(mac[:15]).decode().lower()


def check(db: Database, keyring: "Keyring", given: str, *, now: int) -> Checked | None:
    """The account the token was made for, when ``given`` is a token of this server, of
    the account as it is now, asked for within ``VALID_SECONDS``."""
    parsed = _TOKEN.fullmatch("".join(given.split()).lower())
    if parsed is None:
        return None
    user_id, asked = int(parsed[1]), int(parsed[2])
    if not now - VALID_SECONDS <= asked <= now + CLOCK_SKEW_SECONDS:
        return None
    row = db.one(Q.get_password_reset_state, {"id": user_id})
    if not _signed_for(keyring, row, user_id, asked, parsed[3]):
        return None
    return Checked(user_id, row["password_hash"], row["username"])


def _signed_for(keyring: "Keyring", row: Row | None, user_id: int, asked: int, mac: str) -> bool:
    return row is not None and bool(row["email"]) and hmac.compare_digest(
        _mac(keyring, user_id, asked, row["password_hash"], row["email"]), mac)


def reset(db: Database, checked: Checked, new_hash: str) -> bool:
    """Set the new password, if the account's password is still the one the token was
    checked against (a link works once, however many tabs send it at the same moment);
    every session of the account ends in the same write. False when it is not.

    :raise 403: the account was suspended.
    """
    with db.transaction() as conn:
        hold_user(conn, checked.user_id)
        if not password_still(conn, checked.user_id, checked.password_hash):
            return False
        refuse_if_suspended(conn, checked.user_id)
        replace_password(conn, checked.user_id, new_hash)
        return True
