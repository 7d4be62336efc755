"""Memory garden actions on /api/community: list, confirm, reject, delete, switch on/off."""
from __future__ import annotations

from typing import Any

from flask import Response, request

from .. import clock
from ..auth import require_user
from ..models.common import parse_model
from ..models.web import MemoryAction, MemorySwitch
from ..runtime import runtime
from ..services import agents, memories
from .common import ActionTable, ok, read_conn
from .community import signed_in_write

actions = ActionTable()


@actions.get("memories")
def list_memories() -> Response:
    user = require_user(request)
    return ok(memories.list_for_user(read_conn(), user.id))


def _change(body: dict[str, Any]) -> Response:
    user = require_user(request)
    data = parse_model(MemoryAction, body)
    return ok(memories.change(runtime().db, user.id, data.memory, data.action, now=clock.now()))


for _name in ("memory_confirm", "memory_reject", "memory_delete"):
    actions.post(_name)(_change)


@actions.post("memory_switch")
def switch(body: dict[str, Any]) -> Response:
    # Counted: turned off and on again it is a write every time. A memory's own change
    # (confirm, reject, delete) is not: each can happen once to each memory.
    user, data, rt = signed_in_write(MemorySwitch, body)
    return ok(agents.set_memory(rt.db, user.id, data.profile, data.enabled))
