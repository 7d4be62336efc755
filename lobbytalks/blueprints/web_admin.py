"""The admin page: waiting reports, recent questions, answers and sign-ups with the
moderation actions.

Only admins see it; everyone else gets the same 404 as for a page that does not exist.
What it shows is decided in ``services/moderation.py`` (public facts, never private context).
"""
from __future__ import annotations

from flask import abort

from ..runtime import runtime
from ..services import audit, moderation, reports
from .web_base import Pages, login_required, render, viewer
from .common import read_conn

pages = Pages()

AUDIT_ON_PAGE = 20


@pages.get("/admin")
@login_required
def admin_page():
    user = viewer()
    if not user.is_admin:
        abort(404)
    conn = read_conn()
    return render("admin.html", recent=moderation.recent(conn), reports=reports.waiting(conn),
                  me=user.username, log=audit.recent(runtime().db, AUDIT_ON_PAGE))
