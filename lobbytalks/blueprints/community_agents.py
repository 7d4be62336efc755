""""Ask my agents" and the live research count on /api/community (issue 11)."""
from __future__ import annotations

from typing import Any

from flask import Response, request

from .. import clock
from ..auth import current_user
from ..models.common import parse_model, query_args
from ..models.web import AgentRequest, TopicRef
from ..services import agent_requests
from ..services.reading import readable_topic
from .common import ActionTable, as_reader, ok, read_conn
from .community import signed_in_write

actions = ActionTable()


@actions.post("agent_request")
def agent_request(body: dict[str, Any]) -> Response:
    user, data, rt = signed_in_write(AgentRequest, body)
    return ok(agent_requests.set_request(rt.db, user.id, data.topic, data.requested,
                                         now=clock.now()))


@actions.get("activity")
def activity() -> Response:
    """Polled by the question page: anyone who may see the question may see this."""
    data = parse_model(TopicRef, query_args(request.args), strict=False)
    user = current_user(request)
    conn = read_conn()
    topic = readable_topic(conn, data.topic, **as_reader(user))
    return ok(agent_requests.activity(conn, topic, now=clock.now()))
