"""Answer-card actions on /api/community: share a message or ask its author to, and
preview/publish/unpublish/republish a card."""
from __future__ import annotations

from typing import Any, Callable

from flask import Response, request

from .. import clock
from ..auth import current_user
from ..models.common import parse_model, query_args
from ..models.web import CardPublish, MessageShare, ShareRequest, TopicRef
from ..services import cards, notifications, overlap
from .common import ActionTable, as_reader, ok, read_conn
from .community import signed_in_write

actions = ActionTable()


@actions.get("card")
def published_card() -> Response:
    """The published card of a topic, or null; anonymous readers may ask too."""
    data = parse_model(TopicRef, query_args(request.args), strict=False)
    user = current_user(request)
    return ok({"card": cards.published_card(read_conn(), data.topic, **as_reader(user))})


@actions.post("share")
def share(body: dict[str, Any]) -> Response:
    user, data, rt = signed_in_write(MessageShare, body)
    return ok(cards.share(rt.db, user.id, data.message, data.sharePublic, now=clock.now()))


@actions.post("share_request")
def share_request(body: dict[str, Any]) -> Response:
    """The asker asks an answer's author to allow the answer in the card (a notification)."""
    user, data, rt = signed_in_write(ShareRequest, body)
    return ok(notifications.request_share(rt.db, user.id, data.message, now=clock.now()))


def _asker_action(service: Callable[..., dict[str, Any]]) -> Callable[[dict[str, Any]], Response]:
    def handle(body: dict[str, Any]) -> Response:
        user, data, rt = signed_in_write(TopicRef, body)
        return ok(service(rt.db, user.id, data.topic, now=clock.now()))
    return handle


@actions.post("card_preview")
def card_preview(body: dict[str, Any]) -> Response:
    """The draft, and the passages of it that repeat the asker's own private context."""
    user, data, rt = signed_in_write(TopicRef, body)
    result = cards.preview(rt.db, user.id, data.topic, now=clock.now())
    guard = overlap.Guard(read_conn(), rt.keyring, data.topic)
    return ok({**result, "privateRepeats": guard.card_repeats(result["card"])})


@actions.post("card_publish")
def card_publish(body: dict[str, Any]) -> Response:
    user, data, rt = signed_in_write(CardPublish, body)
    return ok(cards.publish(rt.db, user.id, data.topic, now=clock.now(), card_id=data.card))


for _name, _service in (("card_unpublish", cards.unpublish), ("card_republish", cards.republish)):
    actions.post(_name)(_asker_action(_service))
