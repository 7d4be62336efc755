"""Human questions: asking, listing, reading, new versions and closing (protocol §11, 0.7.3)."""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..crypto import DecryptionFailed
from ..db import Connection, Database, Q, Row
from ..errors import ApiError
from ..quotas import MAX_MESSAGES_PER_TOPIC
from ..security import new_id
from . import audit, communities, replays, search
from .locks import hold_topic, hold_user
from .notifications import notify_asker
from .reading import can_read_full, latest_messages, message_view, readable_topic
from ..screening import refuse_secrets

if TYPE_CHECKING:
    from ..crypto import Keyring

log = logging.getLogger(__name__)
UNREADABLE_PRIVATE = "私密背景无法解密（密钥与数据库不匹配或数据已损坏），请联系站点管理员"
WEB_PAGE_SIZE = 20
WEB_MESSAGE_LIMIT = MAX_MESSAGES_PER_TOPIC  # a question page shows every answer it can hold
# Per sort order of a community's listing, its named queries without and with a search.
_COMMUNITY_LISTINGS = {
    "new": (Q.list_community_topics_new, Q.list_community_topics_new_searching),
    "old": (Q.list_community_topics_old, Q.list_community_topics_old_searching),
    "active": (Q.list_community_topics_active, Q.list_community_topics_active_searching),
}
SORTS = tuple(_COMMUNITY_LISTINGS)
STATUSES = ("all", "open", "closed")


def create(db: Database, keyring: "Keyring", user_id: int, data: Any, *, now: int,
           per_window: tuple[int, int] | None = None) -> dict[str, Any]:
    """Ask a question in a community the user has joined: ``{id}``, or ``{id, replayed}``
    when its ``requestId`` already made it. ``per_window``: (questions, seconds) one person
    may ask (RATE_TOPIC).

    :raise 404: unknown community; :raise 403: not a member; :raise 400: unknown island,
        or sensitive_content when the question's text holds a secret; :raise 409
        idempotency_conflict: the ``requestId`` made another question; :raise 429
        rate_limited: ``per_window`` questions asked already.
    """
    refuse_secrets({"title": data.title, "originalTitle": data.originalTitle,
                    "description": data.description, "privateContext": data.privateContext})
    topic_id = new_id("t")
    request = _request_of(data)
    with db.transaction() as conn:
        # Under the asker's row lock, in every process: two copies of one request make one
        # question, and questions sent at once are counted one after another.
        hold_user(conn, user_id)
        if request["request_id"] is not None:
            replayed = _replayed_request(conn, user_id, request)
            if replayed is not None:
                return replayed
        if conn.execute(Q.get_community_owner, {"id": data.community}).fetchone() is None:
            raise ApiError("not_found", "社区不存在")
        if not communities.is_member(conn, data.community, user_id):
            raise ApiError("forbidden", "请先加入社区再提问")
        if conn.execute(Q.get_island, {"id": data.island}).fetchone() is None:
            raise ApiError("invalid_request", "讨论分类不存在")
        if per_window is not None:
            _refuse_past_window(conn, user_id, per_window, now)
        conn.execute(Q.insert_topic, {
            "id": topic_id, "community": data.community, "island": data.island,
            "author": user_id, "intent": data.intent,
            "original_title": (data.originalTitle or data.title).strip(),
            "title": data.title.strip(), "description": data.description, "now": now,
            **request,
        })
        conn.execute(Q.add_to_community_topics, {"id": data.community, "delta": 1})
        _insert_version(conn, keyring, topic_id, 1, data.title.strip(), data.description,
                        data.privateContext, "", now)
        search.index_topic(conn, topic_id, data.title.strip(), data.description)
    return {"id": topic_id}


def _refuse_past_window(conn: Connection, user_id: int, per_window: tuple[int, int],
                        now: int) -> None:
    """The questions a person asked are counted where they are kept, so a refused one
    spends nothing and questions sent at once cannot pass the count together (a rate
    limit's counter, checked and then counted, let 15 of 10 through across two processes).

    :raise 429 rate_limited: with the seconds until the oldest of them leaves the window."""
    again = next_question_at(conn, user_id, per_window, now)
    if again is not None:
        raise ApiError("rate_limited", retry_after=max(1, again - now))


def next_question_at(conn: Connection, user_id: int, per_window: tuple[int, int],
                     now: int) -> int | None:
    """When the person may ask again (the oldest of their questions in the window leaves
    it), or None while they may ask now."""
    amount, seconds = per_window
    asked = conn.execute(Q.recent_questions_by, {"author": user_id, "since": now - seconds,
                                                 "amount": amount}).fetchall()
    return asked[-1]["created"] + seconds if len(asked) >= amount else None


def _request_of(data: Any) -> dict[str, str | None]:
    """The question's ``requestId`` and its public fields as they are stored (a title's
    spaces trimmed, the original title the title unless given)."""
    return replays.request_key(data.requestId, [
        data.community, data.island, data.intent, data.title.strip(),
        (data.originalTitle or data.title).strip(), data.description])


def _replayed_request(conn: Connection, user_id: int,
                      request: dict[str, Any]) -> dict[str, Any] | None:
    return replays.replayed(
        conn.execute(Q.get_topic_by_request, {"author": user_id, **request}).fetchone(), request)


def _insert_version(conn, keyring, topic_id, version, title, public, private, note, now) -> None:
    key_id, sealed = (None, None)
    if private:
        key_id, sealed = keyring.encrypt(private, topic_id=topic_id, version=version)
    conn.execute(Q.insert_question_version,
                 {"topic_id": topic_id, "version": version, "title": title,
                  "public_context": public, "private_key_id": key_id, "private_context": sealed,
                  "note": note, "now": now})


def private_context(conn: Connection, keyring: "Keyring", topic_id: str,
                    version: int) -> str | None:
    """The decrypted private context of one question version, or None when it has none.

    :raise 503: when the stored value does not authenticate (tampered, moved to another row,
        or sealed with a key the keyring lacks) -- a loud failure, never garbage or a guess.
    """
    row = conn.execute(Q.get_question_version, {
        "topic_id": topic_id, "version": version}).fetchone()
    return opened_private_context(keyring, row)


def opened_private_context(keyring: "Keyring", row: Row | None) -> str | None:
    """``private_context`` of a question version row already read."""
    if row is None or row["private_context"] is None:
        return None
    topic_id, version = row["topic_id"], row["version"]
    try:
        return keyring.decrypt(row["private_key_id"], row["private_context"],
                               topic_id=topic_id, version=version)
    except DecryptionFailed as exc:
        # The message names the row and key id only; the operator needs it, readers do not.
        log.error("cannot open stored private context: %s", exc)
        raise ApiError("service_unavailable", UNREADABLE_PRIVATE) from None


def revise(db: Database, keyring: "Keyring", user_id: int, data: Any, *, now: int) -> dict[str, Any]:
    """A new version with changed conditions; earlier versions are kept.

    :raise 404: unknown topic; :raise 403: not the asker; :raise 409: closed;
    :raise 400 sensitive_content: when the new text holds a secret.
    """
    refuse_secrets({"title": data.title, "description": data.description,
                    "privateContext": data.privateContext, "note": data.note})
    with db.transaction() as conn:
        hold_topic(conn, data.topic)  # one new version number at a time
        topic = readable_topic(conn, data.topic, user_id)
        if topic["author_id"] != user_id:
            raise ApiError("forbidden", "只有题主可以更新问题")
        if topic["status"] != "open":
            raise ApiError("topic_unavailable", "话题已结束")
        old = private_context(conn, keyring, topic["id"], topic["version"]) or ""
        version = topic["version"] + 1
        title = data.title.strip() if data.title is not None else topic["title"]
        public = data.description if data.description is not None else topic["description"]
        private = data.privateContext if data.privateContext is not None else old
        _insert_version(conn, keyring, topic["id"], version, title, public, private, data.note, now)
        conn.execute(Q.update_topic_version, {"title": title, "description": public,
                                              "version": version, "now": now, "id": topic["id"]})
        search.index_topic(conn, topic["id"], title, public)
    return {"ok": True, "id": topic["id"], "questionVersion": version}


def close(db: Database, user_id: int, is_admin: bool, topic_id: str, *, now: int) -> dict[str, Any]:
    """Close an open question (asker or admin); closing twice replays."""
    with db.transaction() as conn:
        hold_topic(conn, topic_id)
        topic = readable_topic(conn, topic_id, user_id, admin=is_admin)
        if topic["author_id"] != user_id and not is_admin:
            raise ApiError("forbidden", "只有题主或管理员可以结束问题")
        closed = conn.execute(Q.close_topic, {
            "now": now, "closed_by": user_id, "id": topic_id}).rowcount == 1
        if closed and topic["author_id"] != user_id:
            audit.record(conn, user_id, "close_question", "topic", topic_id, "", now)
            notify_asker(conn, user_id, topic, "question_closed", now=now)
    return {"ok": True, "id": topic_id, "status": "closed"}


def public_summary(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"], "title": row["title"], "description": row["description"],
        "communityId": row["community_id"], "created": row["created"],
        "messageCount": row["message_count"], "intent": row["intent"],
        "questionVersion": row["version"],
    }


def list_for_agent(conn: Connection, viewer: int, community_id: str | None) -> dict[str, Any]:
    """``list_topics``: the newest open discussions and (an extension) the ones the viewer
    asked their agents to take. :raise 404 not_found: the community named does not exist."""
    if community_id is not None and \
            conn.execute(Q.get_community_owner, {"id": community_id}).fetchone() is None:
        raise ApiError("not_found", "社区不存在")
    return {"topics": list_open(conn, viewer, community_id, room=MAX_MESSAGES_PER_TOPIC),
            "requested": list_open(conn, viewer, community_id, requested=True,
                                   room=MAX_MESSAGES_PER_TOPIC)}


def list_open(conn: Connection, viewer: int, community_id: str | None, *, limit: int = 20,
              requested: bool = False, room: int | None = None) -> list[dict[str, Any]]:
    """The newest open discussions (optionally of one community, with fewer than ``room``
    answers), with the viewer's membership and the connector's extension flags;
    ``requested``: instead, the ones the viewer asked their agents to take."""
    query = Q.list_open_topics_requested if requested else Q.list_open_topics_newest
    rows = conn.execute(query, {"viewer": viewer, "community": community_id, "limit": limit,
                                "room": room}).fetchall()
    return [{**public_summary(r), "joined": bool(r["joined"]), "askedByMe": bool(r["asked_by_me"]),
             "requestedByMe": r["requested_at"] is not None,
             **({"requestedAt": r["requested_at"]} if r["requested_at"] is not None else {}),
             "answeredByMyAgents": bool(r["answered_by_mine"])} for r in rows]


def list_in_community(conn: Connection, viewer: int | None, community_id: str, *, q: str,
                      status: str, sort: str, page: int) -> dict[str, Any]:
    """One page of a community's questions, filtered and sorted."""
    if conn.execute(Q.get_community_owner, {"id": community_id}).fetchone() is None:
        raise ApiError("not_found", "社区不存在")
    query, match = search.searched_listing(conn, _COMMUNITY_LISTINGS[sort], q)
    rows = conn.execute(query, {
        "viewer": viewer or 0, "community": community_id,
        "status": None if status == "all" else status, "match": match,
        "limit": WEB_PAGE_SIZE + 1, "offset": (page - 1) * WEB_PAGE_SIZE}).fetchall()
    topics = [{**public_summary(r), "joined": bool(r["joined"]), "status": r["status"],
               "island": r["island_id"], "author": r["author_name"]}
              for r in rows[:WEB_PAGE_SIZE]]
    return {"topics": topics, "page": page, "hasMore": len(rows) > WEB_PAGE_SIZE}


def read(conn: Connection, keyring: "Keyring", viewer: int | None, topic: Row
         ) -> tuple[dict[str, Any], list[Row]]:
    """The public question for everyone; discussion and private context for the entitled.

    Also the discussion's rows, which say whose agents wrote them; ``question_page`` adds
    the answer cards.
    """
    allowed = can_read_full(conn, viewer, topic)
    is_asker = viewer is not None and viewer == topic["author_id"]
    view = {
        **public_summary(topic), "status": topic["status"], "island": topic["island_id"],
        "originalTitle": topic["original_title"], "author": topic["author_name"],
        "isAsker": is_asker,
        # taken down by an admin: only the asker and admins read it at all (readable_topic)
        "hidden": topic["hidden_at"] is not None, "hiddenReason": topic["hidden_reason"],
        "joined": viewer is not None and communities.is_member(conn, topic["community_id"], viewer),
    }
    if allowed:
        private = private_context(conn, keyring, topic["id"], topic["version"])
        if private:
            view["privateContext"] = private
    versions = [
        {"version": v["version"], "title": v["title"], "publicContext": v["public_context"],
         "note": v["note"], "created": v["created"], "hasPrivateContext": bool(v["has_private"])}
        for v in conn.execute(Q.list_question_versions, {"topic_id": topic["id"]})
    ]
    rows = latest_messages(conn, topic["id"], WEB_MESSAGE_LIMIT) if allowed else []
    return {"topic": view, "allowed": allowed, "messageCount": topic["message_count"],
            "messages": [message_view(m) for m in rows], "versions": versions}, rows


def islands(conn: Connection) -> list[dict[str, str]]:
    return [dict(r) for r in conn.execute(Q.list_islands).fetchall()]
