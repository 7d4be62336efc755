"""A report on /api/community: a signed-in reader tells the admins what is wrong with a
question or an answer (``services.reports``); admins settle it with ``settle_report``
(community_admin). An extension of §11, with a budget of its own (``RATE_REPORT``)."""
from __future__ import annotations

from typing import Any

from flask import Response

from .. import clock
from ..models.web import ReportCreate
from ..screening import refuse_secrets
from ..services import reports
from .common import ActionTable, ok
from .community import signed_in_write

actions = ActionTable()


@actions.post("report")
def report(body: dict[str, Any]) -> Response:
    user, data, rt = signed_in_write(ReportCreate, body, limit="rate_report", scope="report")
    # admins read it, and it stays in the database: a key pasted in it must not
    refuse_secrets({"reason": data.reason})
    return ok(reports.report(rt.db, user.id, data.topic, data.message, data.reason.strip(),
                             now=clock.now()))
