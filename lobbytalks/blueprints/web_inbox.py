"""The inbox page and the counts every page's header shows: unread notifications, and for
admins the reports waiting."""
from __future__ import annotations

from functools import partial
from typing import Any

from flask import request

from ..auth import current_user
from ..runtime import runtime
from ..services import mail_address, notifications, reports
from .web_base import Pages, in_own_lang, lang, login_required, render, t, viewer
from .kept_pages import kept_page
from .common import read_conn

pages = Pages()


@pages.get("/inbox")
@login_required
@kept_page
def inbox():
    user = viewer()
    before = notifications.cursor(request.args.get("before", ""))
    page = notifications.inbox_page(read_conn(), user.id, before)
    for item in page["notifications"]:
        item["text"] = notifications.describe(item, lang(), translate=t,
                                              set_apart=partial(in_own_lang, isolated=True))
    return render("inbox.html", page=page, paged=before is not None,
                  mail=mail_address.settings(read_conn(), user.id),
                  mail_available=runtime().settings.sends_mail)


def header_counts() -> dict[str, Any]:
    """The header's counts: one capped, indexed COUNT for signed-in readers, and for an
    admin one more of the reports waiting (a partial index of them); none for visitors."""
    user = current_user(request)
    if user is None:
        return {"unread_count": "", "reports_waiting": 0}
    conn = read_conn()
    return {"unread_count": notifications.unread_badge(conn, user.id),
            "reports_waiting": reports.waiting_count(conn) if user.is_admin else 0}
