"""A person's notification address: saved, confirmed with a code mailed to it, switched on.

Notification e-mail goes only to an address its owner has confirmed; otherwise anyone could
point their notifications at someone else's mailbox and have the server mail it, with a
question title of their choosing as the subject, as often as they can make a task fail.

Saving a new address asks the mailer to send it an eight-digit code (``email_code_due``);
entering the code confirms it (``email_confirmed`` keeps the address last confirmed, so
going back to it needs no new code). A code is not stored: it is a MAC of the person, the
address and the day under a key derived from the data folder's secret key, and the code of
the day before is accepted too, so a code lasts one to two days and a changed address or
a rotated key makes it worthless.
"""
from __future__ import annotations

import hashlib
import hmac
import re
from typing import TYPE_CHECKING, Any

from ..db import Connection, Database, Q
from ..errors import ApiError
from .accounts import require_password_still

if TYPE_CHECKING:
    from ..crypto import Keyring

# A deliberately plain check: one @, no spaces, a dot in the domain, and none of the
# characters that make a header a list of addresses or a display name (",;:<>()[]" quote
# backslash): "root,postmaster,me@example.org" is three recipients to a mail server. The
# mail server is the real judge; this catches typing mistakes and lists before they are saved.
_NOT_IN_ADDRESS = r"@\s,;:<>()\[\]\"\\"
EMAIL = re.compile(rf"^[^{_NOT_IN_ADDRESS}]{{1,64}}@[^{_NOT_IN_ADDRESS}]+\.[^{_NOT_IN_ADDRESS}]+$")
MAX_EMAIL_LENGTH = 254
CODE_DIGITS = 8
_DAY = 86400
_PURPOSE = b"email-code"


def settings(conn: Connection, user_id: int) -> dict[str, Any]:
    row = conn.execute(Q.get_notify_settings, {"user_id": user_id}).fetchone()
    return {"email": row["email"], "emailNotify": bool(row["email_notify"]),
            "emailConfirmed": bool(row["confirmed"])}


def needs_code(conn: Connection, user_id: int, email: str) -> bool:
    """Whether saving ``email`` would mail a code: a new address not confirmed before."""
    row = conn.execute(Q.get_notify_settings, {"user_id": user_id}).fetchone()
    return email not in ("", row["email"], row["email_confirmed"])


def save(db: Database, user_id: int, email: str, enabled: bool, *,
         code_due: bool) -> dict[str, Any]:
    """Save the address and the e-mail switch (``email`` already ``checked``); with
    ``code_due`` the mailer sends the address a code."""
    with db.transaction() as conn:
        conn.execute(Q.set_notify_settings, {"email": email, "notify": int(enabled),
                                             "code_due": int(code_due), "user": user_id})
        return {"ok": True, **settings(conn, user_id), "codeSent": code_due}


def checked(email: str, enabled: bool) -> str:
    """The address as saved (spaces around it dropped).

    :raise 400: an address that does not look like one, or the switch on without one.
    """
    email = email.strip()
    if email and (len(email) > MAX_EMAIL_LENGTH or not EMAIL.fullmatch(email)):
        raise ApiError("invalid_request", "email: 邮箱地址格式不正确")
    if enabled and not email:
        raise ApiError("invalid_request", "email: 开启邮件通知需要填写邮箱地址")
    return email


def send_code_again(db: Database, user_id: int, email: str) -> dict[str, Any]:
    """Mail the saved address its code again, if it is still ``email`` (the one whose
    budget the request spent: another saved meanwhile gets none, ``codeSent`` false).

    :raise 409: no address saved, or the one saved is confirmed already."""
    with db.transaction() as conn:
        pending_address(conn, user_id)
        queued = conn.execute(Q.queue_email_code, {"user": user_id, "email": email}).rowcount
    return {"ok": True, "codeSent": queued == 1}


def pending_address(conn: Connection, user_id: int) -> str:
    """The saved address waiting for its code. :raise 409: none is (no address saved, or
    the one saved is confirmed already)."""
    now = settings(conn, user_id)
    if not now["email"] or now["emailConfirmed"]:
        raise ApiError("invalid_request", "email: 没有待确认的邮箱地址", status=409)
    return now["email"]


def code(keyring: "Keyring", user_id: int, email: str, *, now: int, days_ago: int = 0) -> str:
    """The code for ``email`` of ``user_id`` on the day of ``now`` (or ``days_ago`` before)."""
    day = now // _DAY - days_ago
    mac = hmac.new(keyring.derive(_PURPOSE), f"{user_id}\n{email}\n{day}".encode(),
                   hashlib.sha256).digest()
    return f"{int.from_bytes(mac[:8], 'big') % 10 ** CODE_DIGITS:0{CODE_DIGITS}d}"


def confirm(db: Database, keyring: "Keyring", user_id: int, entered: str, *,
            now: int, checked: str | None = None) -> dict[str, Any] | None:
    """Confirm the saved address with ``entered``; None when the code is wrong or old.
    ``checked``: the hash of the password the request checked, still the account's (a
    confirmed address is where reset mail goes)."""
    with db.transaction() as conn:
        if checked is not None:
            require_password_still(conn, user_id, checked)
        email = settings(conn, user_id)["email"]
        typed = entered.encode("utf-8", "replace")  # compare_digest takes a str of ASCII only
        if not email or not any(hmac.compare_digest(
                code(keyring, user_id, email, now=now, days_ago=d).encode(), typed)
                for d in (0, 1)):
            return None
        conn.execute(Q.confirm_email, {"user": user_id, "email": email})
        return {"ok": True, **settings(conn, user_id)}
