"""Notification actions on /api/community: the inbox, marking read, the e-mail address."""
from __future__ import annotations

import hashlib
from typing import Any

from flask import Response, request

from .. import clock
from ..auth import require_user
from ..errors import ApiError
from ..models.common import parse_model
from ..models.web import EmailCodeAgain, EmailConfirm, NotificationsRead, NotifySettings
from ..runtime import runtime
from ..services import mail_address, notifications
from .common import ActionTable, ok, read_conn
from .community import signed_in_write
from .community_account import require_current_password

actions = ActionTable()


@actions.get("notifications")
def inbox() -> Response:
    """The signed-in person's own notifications (``before``: the keyset of the next page)."""
    user = require_user(request)
    given = request.args.get("before", "")
    before = notifications.cursor(given)
    if given and before is None:  # the page shows the first page instead; a client is told
        raise ApiError("invalid_request", "before 必须是上一页给出的 next（正整数）")
    with runtime().db.snapshot() as conn:  # the unread count agrees with the rows listed
        page = notifications.inbox(conn, user.id, before)
    return ok({**page, **mail_address.settings(read_conn(), user.id)})


@actions.get("unread")
def unread() -> Response:
    """The header's unread count as the header shows it ("" for none, "99+" past 99): the
    pages' script asks for it now and then, so that the count follows on every page."""
    user = require_user(request)
    return ok({"badge": notifications.unread_badge(read_conn(), user.id)})


@actions.post("notifications_read")
def mark_read(body: dict[str, Any]) -> Response:
    # Not counted against the write budget: marking read changes only the reader's own rows.
    user = require_user(request)
    data = parse_model(NotificationsRead, body)
    return ok(notifications.mark_read(runtime().db, user.id, data.notification, now=clock.now(),
                                      up_to=data.upTo))


@actions.post("notify_settings")
def mail_settings(body: dict[str, Any]) -> Response:
    user, data, rt = signed_in_write(NotifySettings, body)
    email = mail_address.checked(data.email, data.emailNotify)
    code_due = mail_address.needs_code(read_conn(), user.id, email)
    if code_due:  # each code is a mail to someone: a budget of its own
        rt.gate.hit(rt.settings.rate_email_code, "email-code", user.id)
        try:
            _spend_address_budget(rt, email)
        except ApiError:  # others spent this address's codes: saved, its code asked later
            code_due = False
    return ok(mail_address.save(rt.db, user.id, email, data.emailNotify, code_due=code_due))


@actions.post("email_code")
def send_code_again(body: dict[str, Any]) -> Response:
    user, _, rt = signed_in_write(EmailCodeAgain, body, limit=None)
    # asked before any budget is spent: a refusal mails nothing (the write checks again)
    email = mail_address.pending_address(read_conn(), user.id)
    rt.gate.hit(rt.settings.rate_email_code, "email-code", user.id)
    _spend_address_budget(rt, email)
    return ok(mail_address.send_code_again(rt.db, user.id, email))


def _spend_address_budget(rt: Any, email: str) -> None:
    """Code mails per address too: new accounts naming one address would otherwise each
    mail it ``RATE_EMAIL_CODE`` codes. The address is kept as a digest."""
    if email:
        digest = hashlib.sha256(email.lower().encode()).hexdigest()[:32]
        rt.gate.hit(rt.settings.rate_email_code, "email-code-to", digest)


@actions.post("confirm_email")
def confirm_email(body: dict[str, Any]) -> Response:
    user, data, rt = signed_in_write(EmailConfirm, body)
    # wrong codes have the per-address login window: guessing eight digits stays hopeless
    rt.gate.check(rt.settings.rate_login_pair, "email-code-wrong", user.id)
    checked = require_current_password(user, data.currentPassword)
    entered = "".join(data.code.split())
    confirmed = mail_address.confirm(rt.db, rt.keyring, user.id, entered, now=clock.now(),
                                     checked=checked)
    if confirmed is None:
        rt.gate.hit(rt.settings.rate_login_pair, "email-code-wrong", user.id)
        raise ApiError("invalid_request", "code: 确认码不正确或已过期")
    return ok(confirmed)
