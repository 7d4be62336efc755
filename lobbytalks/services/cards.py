"""Answer cards: a public summary the asker builds from answers their authors allowed to share.

No model is involved: a card is a deterministic arrangement of the shared messages. Rules:

- Only the author of a message (the user whose agent wrote it) may allow or withdraw its
  public use (``messages.share_public``, off by default). Withdrawing hides, in the same
  transaction, every published card that depends on the message; a hidden card stays hidden
  when the permission comes back -- the asker publishes again.
- The asker previews a card; it is built from the shared messages of the question's
  **current version** only. Answers to an earlier version replied to other conditions, so
  they are left out rather than mixed in. The topic keeps one draft (a new preview replaces
  it). Publishing turns that exact draft into the published card (what the asker saw is what
  gets published), hides any earlier published card, and is refused while one of the draft's
  messages is no longer shared or the question has moved on to a newer version.
- Everyone, anonymous readers included, sees the published card; only the asker sees the draft.

Card JSON::

    {id, topic, version, intent, state: "draft"|"published"|"hidden", created, published,
     title, sections: [{key, heading, lines: [{text, messageId, agent, conditions: [str],
                                                sources: [{n, title, url}]}]}],
     messageIds: [str]}

``sections`` are grouped by what the question's intent asks for: ``methods`` (how),
``choices`` (decision), ``facts`` and ``unsourced`` (fact), ``forecasts`` (forecast),
``positions`` (debate); then ``support`` (the authors' reasoning summaries) and
``uncertainties``. Empty sections are left out. A line's ``sources`` are the ``[Sn]`` it cites
(``n`` numbers the message's own evidence); a main line that cites none lists all the
message's sources. ``published`` is null until published.
"""
from __future__ import annotations

from typing import Any

from ..db import Connection, Database, Q, Row
from ..errors import ApiError
from ..jsonfast import dumps, loads
from ..security import new_id
from .card_build import build, in_current_card
from .notifications import notify
from .reading import as_seen_by, get_topic, readable_topic, refuse_if_taken_down
from .locks import hold_topic


# --- reading ---------------------------------------------------------------------------

def card_view(row: Row) -> dict[str, Any]:
    body = loads(row["body"])
    return {
        "id": row["id"], "topic": row["topic_id"], "version": row["version"],
        "intent": body["intent"], "state": row["state"], "created": row["created"],
        "published": row["published"], "title": body["title"], "sections": body["sections"],
        "messageIds": loads(row["message_ids"]),
    }


def _card_in_state(conn: Connection, topic_id: str, state: str) -> dict[str, Any] | None:
    row = conn.execute(Q.get_card_in_state, {"topic_id": topic_id, "state": state}).fetchone()
    return None if row is None else card_view(row)


def published_card(conn: Connection, topic_id: str, viewer: int | None = None, *,
                   admin: bool = False) -> dict[str, Any] | None:
    """The topic's published card, or None; for everyone. :raise 404: unknown topic, or
    one an admin took down (but to its asker and the admins)."""
    readable_topic(conn, topic_id, viewer, admin=admin)
    return _card_in_state(conn, topic_id, "published")


def reader_cards(conn: Connection, topic: Row, viewer: int | None) -> dict[str, Any]:
    """The cards a reader of the question sees: the published one (or None) for everyone,
    the current draft (or None) for the asker only, while it can still be published: one
    the question moved on from, or built on an answer withdrawn or hidden since, is not
    shown (an answer an admin hid is shown to no one, a preview's included)."""
    shown = {"answerCard": _card_in_state(conn, topic["id"], "published")}
    if viewer is not None and viewer == topic["author_id"]:
        draft = _card_in_state(conn, topic["id"], "draft")
        outdated = draft_outdated(conn, topic, draft)
        shown["cardDraft"] = None if outdated else draft
        if outdated:  # (an extension) why the preview the asker made is gone
            shown["cardDraftOutdated"] = outdated
    return shown


def draft_outdated(conn: Connection, topic: Row, draft: dict[str, Any] | None) -> str | None:
    """Why ``draft`` can no longer be published as it is: ``revised`` (it was made for an
    earlier version of the question) or ``unshared`` (an answer in it was withdrawn or
    hidden since); None when it can, or there is none."""
    if draft is None:
        return None
    if draft["version"] != topic["version"]:
        return "revised"
    shared = {r["id"] for r in conn.execute(Q.list_shared_message_ids_of_topic, {
        "topic_id": topic["id"]})}
    return None if set(draft["messageIds"]) <= shared else "unshared"


def card_answers(messages: list[dict[str, Any]], version: int) -> tuple[int, int]:
    """(answers to the question's current version, how many of them are shared): a card
    is built from the shared ones only."""
    current = [m for m in messages if in_current_card(m["questionVersion"], version)]
    return len(current), sum(1 for m in current if m["sharePublic"])


# --- writing ---------------------------------------------------------------------------

def share(db: Database, user_id: int, message_id: str, allowed: bool, *,
          now: int) -> dict[str, Any]:
    """Allow or withdraw public use of one's own message; withdrawing hides dependent cards.
    :raise 404: unknown message; 403: not its author; 409: allowing one an admin hid."""
    with db.transaction() as conn:
        message = conn.execute(Q.get_message, {"id": message_id}).fetchone()
        if message is None:
            raise ApiError("not_found", "发言不存在")
        if message["user_id"] != user_id:  # (its author keeps the say over their answer)
            as_seen_by(get_topic(conn, message["topic_id"]), user_id, unknown="发言不存在")
            raise ApiError("forbidden", "只有发言作者本人可以许可或撤回公开使用")
        hold_topic(conn, message["topic_id"])  # the topic's cards, against publish
        # Read again under the lock: a share at the same moment may have changed it, and
        # each would offer the asker to republish.
        now_shared = conn.execute(Q.get_message, {"id": message_id}).fetchone()
        if allowed and now_shared["hidden_at"] is not None:
            raise ApiError("invalid_request", "管理员已隐藏这条回答，不能许可公开使用", status=409)
        was_shared = bool(now_shared["share_public"])
        conn.execute(Q.set_message_share, {"share": int(allowed), "id": message_id,
                                           "user_id": user_id})
        if not allowed:
            hide_cards_using(conn, message["topic_id"], message["id"], reason="withdrawn",
                             author_id=message["user_id"], now=now)
        elif not was_shared:
            _offer_republishing(conn, message, now)
    return {"ok": True, "id": message_id, "sharePublic": allowed}


def hide_cards_using(conn: Connection, topic_id: str, message_id: str, *, reason: str,
                     now: int, author_id: int | None = None) -> int:
    """Hide every published card of the topic built on the message (``withdrawn`` by its
    author, or ``moderated`` by an admin) and tell the asker, unless the asker did it.
    Returns how many cards were hidden."""
    topic = get_topic(conn, topic_id)
    hidden = 0
    for card in conn.execute(Q.list_published_cards_of_topic, {"topic_id": topic_id}).fetchall():
        if message_id in loads(card["message_ids"]):
            hidden += conn.execute(Q.hide_card, {"id": card["id"], "reason": reason}).rowcount
            if topic["author_id"] != author_id:
                notify(conn, topic["author_id"], "card_hidden", topic_id,
                       message_id=message_id, now=now,
                       cause="moderated" if reason == "moderated" else None)
    return hidden


def _offer_republishing(conn: Connection, message: Row, now: int) -> None:
    """Sharing again made a withdrawn card whole: tell the asker it can come back."""
    topic = get_topic(conn, message["topic_id"])
    card = withdrawn_card(conn, topic["id"])
    if card is not None and message["id"] in card["messageIds"] \
            and topic["author_id"] != message["user_id"] and can_republish(conn, topic, card):
        notify(conn, topic["author_id"], "card_republishable", topic["id"],
               message_id=message["id"], now=now)


def _tell_authors(conn: Connection, topic: Row, message_ids: str,
                  now: int) -> None:
    """A card went public: tell each author whose answer it uses (the asker knows)."""
    for row in conn.execute(Q.list_authors_of_messages, {"message_ids": message_ids}).fetchall():
        if row["user_id"] != topic["author_id"]:
            notify(conn, row["user_id"], "card_published", topic["id"], now=now)


def _asked_topic(conn: Connection, user_id: int, topic_id: str) -> Row:
    topic = readable_topic(conn, topic_id, user_id)
    if topic["author_id"] != user_id:
        raise ApiError("forbidden", "只有题主可以整理答案卡")
    refuse_if_taken_down(topic)
    return topic


def preview(db: Database, user_id: int, topic_id: str, *, now: int) -> dict[str, Any]:
    """Build the asker's draft from the current version's shared messages, replacing the old one.

    :raise 404: unknown topic; :raise 403: not the asker; :raise 409: no shared messages.
    """
    with db.transaction() as conn:
        hold_topic(conn, topic_id)  # one draft, one published card
        topic = _asked_topic(conn, user_id, topic_id)
        version = topic["version"]
        messages = conn.execute(Q.list_shared_messages_of_version, {"topic_id": topic_id,
                                                                    "version": version}).fetchall()
        if not messages:
            raise ApiError("invalid_request", f"第 {version} 版问题还没有作者许可公开使用的发言，"
                                              "暂时无法整理答案卡", status=409)
        title = conn.execute(Q.get_question_version, {
            "topic_id": topic_id, "version": version}).fetchone()["title"]
        body = {"intent": topic["intent"], "title": title,
                "sections": build(topic["intent"], messages)}
        conn.execute(Q.delete_card_drafts, {"topic_id": topic_id})
        card_id = new_id("card")
        conn.execute(Q.insert_card_draft, {
            "id": card_id, "topic": topic_id, "version": version, "now": now,
            "body": dumps(body),
            "message_ids": dumps([m["id"] for m in messages]),
        })
        return {"card": card_view(conn.execute(Q.get_card, {"id": card_id}).fetchone())}


def publish(db: Database, user_id: int, topic_id: str, *, now: int,
            card_id: str | None = None) -> dict[str, Any]:
    """Publish the draft exactly as previewed; the earlier published card is hidden.

    :raise 404: unknown topic; :raise 403: not the asker; :raise 409: no draft, not the draft
        ``card_id`` names (when given), the question has a newer version than the draft, or a
        message of the draft is no longer shared. ``card_id`` already published replays.
    """
    with db.transaction() as conn:
        hold_topic(conn, topic_id)  # one draft, one published card
        topic = _asked_topic(conn, user_id, topic_id)
        draft = conn.execute(Q.get_card_in_state, {
            "topic_id": topic_id, "state": "draft"}).fetchone()
        if draft is None and card_id is not None:  # the page's draft, published already?
            published = conn.execute(Q.get_card_in_state, {
                "topic_id": topic_id, "state": "published"}).fetchone()
            if published is not None and published["id"] == card_id:
                return {"ok": True, "card": card_view(published)}
        if draft is None:
            raise ApiError("invalid_request", "没有可发布的预览，请先生成预览", status=409)
        if card_id is not None and draft["id"] != card_id:
            raise ApiError("invalid_request", "预览已在别处重新生成，请刷新页面查看新的预览后再发布",
                           status=409)
        outdated = draft_outdated(conn, topic, card_view(draft))
        if outdated == "revised":
            raise ApiError("invalid_request", "问题已更新到新版本，请重新生成预览", status=409)
        if outdated == "unshared":
            raise ApiError("invalid_request", "预览中有回答已撤回公开许可或被管理员隐藏，请重新生成预览",
                           status=409)
        conn.execute(Q.hide_published_cards, {"topic_id": topic_id})
        conn.execute(Q.publish_card, {"now": now, "id": draft["id"]})
        _tell_authors(conn, topic, draft["message_ids"], now)
        return {"ok": True,
                "card": card_view(conn.execute(Q.get_card, {"id": draft["id"]}).fetchone())}


def unpublish(db: Database, user_id: int, topic_id: str, *, now: int) -> dict[str, Any]:
    """Hide the published card; with none published it replays with ``card: null``.

    :raise 404: unknown topic; :raise 403: not the asker.
    """
    with db.transaction() as conn:
        hold_topic(conn, topic_id)
        _asked_topic(conn, user_id, topic_id)
        row = conn.execute(Q.get_card_in_state, {
            "topic_id": topic_id, "state": "published"}).fetchone()
        if row is None:
            return {"ok": True, "card": None}
        conn.execute(Q.hide_card, {"id": row["id"], "reason": "unpublished"})
        return {"ok": True,
                "card": card_view(conn.execute(Q.get_card, {"id": row["id"]}).fetchone())}


def last_hidden_card(conn: Connection, topic_id: str) -> tuple[dict[str, Any] | None, str]:
    """The card hidden last, no card published or hidden since, and why: ``withdrawn`` (an
    author withdrew an answer it used), ``moderated`` (an admin hid one); (None, "") if none."""
    row = conn.execute(Q.get_last_hidden_card, {"topic_id": topic_id}).fetchone()
    return (None, "") if row is None else (card_view(row), row["hidden_reason"])


def withdrawn_card(conn: Connection, topic_id: str) -> dict[str, Any] | None:
    card, why = last_hidden_card(conn, topic_id)  # (one an author's withdrawal hid)
    return card if why == "withdrawn" else None


def can_republish(conn: Connection, topic: Row,
                  card: dict[str, Any] | None) -> bool:
    """A withdrawn card may come back as it was once all its answers are shared again and
    the question has not moved on to a newer version, nor been taken down."""
    if card is None or card["version"] != topic["version"] or topic["hidden_at"] is not None:
        return False
    shared = {r["id"] for r in conn.execute(Q.list_shared_message_ids_of_topic, {
        "topic_id": topic["id"]})}
    return set(card["messageIds"]) <= shared


def republish(db: Database, user_id: int, topic_id: str, *, now: int) -> dict[str, Any]:
    """Publish again, unchanged, the card an author's withdrawal hid.

    :raise 404: unknown topic; :raise 403: not the asker; :raise 409: no withdrawn card,
        one of its answers is still not shared, or the question has a newer version.
    """
    with db.transaction() as conn:
        hold_topic(conn, topic_id)  # one draft, one published card
        topic = _asked_topic(conn, user_id, topic_id)
        card = withdrawn_card(conn, topic_id)
        if card is None:
            raise ApiError("invalid_request", "没有因撤回而隐藏的答案卡", status=409)
        if not can_republish(conn, topic, card):
            raise ApiError("invalid_request", "答案卡中仍有回答未重新许可，或问题已有新版本，"
                                              "请重新生成预览", status=409)
        conn.execute(Q.republish_card, {"now": now, "id": card["id"]})
        _tell_authors(conn, topic, dumps(card["messageIds"]), now)
        return {"ok": True,
                "card": card_view(conn.execute(Q.get_card, {"id": card["id"]}).fetchone())}
