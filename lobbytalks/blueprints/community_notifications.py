"""Notification actions on /api/community: the inbox, marking read, e-mail settings."""
from __future__ import annotations

from typing import Any

from flask import Response, request

from .. import clock
from ..auth import require_user
from ..models.common import parse_model
from ..models.web import NotificationsRead, NotifySettings
from ..runtime import runtime
from ..services import notifications
from .common import ActionTable, ok, read_conn
from .community import signed_in_write

actions = ActionTable()


@actions.get("notifications")
def inbox() -> Response:
    """The signed-in person's own notifications (``before``: the keyset of the next page)."""
    user = require_user(request)
    page = notifications.inbox(read_conn(), user.id,
                               notifications.cursor(request.args.get("before", "")))
    return ok({**page, **notifications.mail_settings(read_conn(), user.id)})


@actions.post("notifications_read")
def mark_read(body: dict[str, Any]) -> Response:
    # Not counted against the write budget: marking read changes only the reader's own rows.
    user = require_user(request)
    data = parse_model(NotificationsRead, body)
    return ok(notifications.mark_read(runtime().db, user.id, data.notification, now=clock.now()))


@actions.post("notify_settings")
def mail_settings(body: dict[str, Any]) -> Response:
    user, data, rt = signed_in_write(NotifySettings, body)
    return ok(notifications.set_mail_settings(rt.db, user.id, data.email, data.emailNotify))
