"""Moderation actions on /api/community, for admins only: hide or show an answer, suspend
or reinstate a person, reopen a closed question, take a question down or show it again,
mark a report handled. Each one is audited by its service."""
from __future__ import annotations

from typing import Any, Callable

from flask import Response, request

from .. import clock
from ..auth import require_admin
from ..models.web import (AnswerModeration, PersonModeration, ReportSettle, Suspension,
                          TopicModeration)
from ..screening import refuse_secrets
from ..services import moderation, reports
from .common import ActionTable, ok
from .community import signed_in_write

actions = ActionTable()

# action -> (request model, the field naming the target, service)
ADMIN_ACTIONS: dict[str, tuple[Any, str, Callable[..., dict[str, Any]]]] = {
    "hide_answer": (AnswerModeration, "message", moderation.hide_answer),
    "unhide_answer": (AnswerModeration, "message", moderation.unhide_answer),
    "suspend_user": (Suspension, "username", moderation.suspend),
    "unsuspend_user": (PersonModeration, "username", moderation.unsuspend),
    "reopen": (TopicModeration, "topic", moderation.reopen),
    "hide_question": (TopicModeration, "topic", moderation.hide_question),
    "unhide_question": (TopicModeration, "topic", moderation.unhide_question),
    "settle_report": (ReportSettle, "report", reports.settle),
}
# Not counted in the web write budget: each report is settled once, like a question closed,
# and any member's reports (their own budget) must never use up an admin's.
UNCOUNTED = frozenset({"settle_report"})


def _admin_action(model: Any, target: str, service: Callable[..., dict[str, Any]],
                  limit: str | None) -> Callable[[dict[str, Any]], Response]:
    def handle(body: dict[str, Any]) -> Response:
        require_admin(request)  # before validation: others learn nothing about the body
        user, data, rt = signed_in_write(model, body, limit=limit)
        # a reason is shown to the person concerned (and kept in the audit log): an admin
        # quoting the spam they remove must not pass on a key it carried
        refuse_secrets({"reason": data.reason})
        return ok(service(rt.db, user.id, getattr(data, target), data.reason.strip(),
                          now=clock.now(), **data.service_options()))
    return handle


for _name, (_model, _target, _service) in ADMIN_ACTIONS.items():
    actions.post(_name)(_admin_action(_model, _target, _service,
                                      None if _name in UNCOUNTED else "rate_web_write"))
