"""People: the public profile anyone may read, and a person's own data to take away.

A profile shows only what every visitor may already read: the person's questions (their
public fields) and the answer cards published on them. Nothing of a discussion, private
context or of the person's agents appears there.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..db import Connection, Q
from ..errors import ApiError
from ..jsonfast import loads
from . import mail_address, reports
from .reading import TAKEN_DOWN_TITLE
from .topics import private_context

if TYPE_CHECKING:
    from ..crypto import Keyring

PROFILE_QUESTIONS = 50
PROFILE_CARDS = 20


def profile(conn: Connection, username: str, page: int = 1) -> dict[str, Any]:
    """The person's public profile, with page ``page`` of their open and of their closed
    questions (``PROFILE_QUESTIONS`` each; ``more``: whether either list goes on).

    :raise 404 not_found: no such person."""
    person = conn.execute(Q.get_person_by_name, {"username": username}).fetchone()
    if person is None:
        raise ApiError("not_found", "用户不存在")
    author = person["id"]
    counts = conn.execute(Q.count_questions_by_author, {"author": author}).fetchone()
    questions = {status: _questions_by(conn, author, status, page) for status in ("open", "closed")}
    more = any(len(listed) > PROFILE_QUESTIONS for listed in questions.values())
    questions = {status: listed[:PROFILE_QUESTIONS] for status, listed in questions.items()}
    cards = [{"id": r["id"], "topic": r["topic_id"], "title": r["title"], "published": r["published"]}
             for r in conn.execute(Q.list_published_cards_by_author, {
                 "author": author, "limit": PROFILE_CARDS}).fetchall()]
    return {
        "username": person["username"], "created": person["created"],
        "admin": bool(person["is_admin"]), "suspended": bool(person["suspended"]),
        **questions, "openCount": counts["open"], "closedCount": counts["closed"],
        "page": page, "more": more,
        "cardCount": conn.execute(Q.count_published_cards_by_author,
                                  {"author": author}).fetchone()[0],
        "cards": cards,
    }


def _questions_by(conn: Connection, author: int, status: str, page: int) -> list[dict[str, Any]]:
    """Page ``page`` of a person's questions in ``status``, newest first, and the first of
    the next page if there is one."""
    return [{
        "id": r["id"], "title": r["title"], "description": r["description"],
        "communityId": r["community_id"], "communityName": r["community_name"],
        "created": r["created"], "messageCount": r["message_count"], "intent": r["intent"],
        "questionVersion": r["version"], "status": r["status"],
    } for r in conn.execute(Q.list_questions_by_author, {
        "author": author, "status": status, "limit": PROFILE_QUESTIONS + 1,
        "offset": (page - 1) * PROFILE_QUESTIONS}).fetchall()]


def export(conn: Connection, keyring: "Keyring", user_id: int, username: str, *,
           now: int) -> dict[str, Any]:
    """Everything a person wrote or set up, as plain JSON: their e-mail settings, the
    communities they joined or made, questions (every version, private context decrypted,
    since it is theirs), their agents' answers, their agents without any token material,
    their memories and the reports they sent."""
    questions = []
    for t in conn.execute(Q.list_questions_for_export, {"author": user_id}).fetchall():
        versions = [{
            "version": v["version"], "title": v["title"], "publicContext": v["public_context"],
            "privateContext": private_context(conn, keyring, t["id"], v["version"]),
            "note": v["note"], "created": v["created"],
        } for v in conn.execute(Q.list_question_versions, {"topic_id": t["id"]}).fetchall()]
        questions.append({
            "id": t["id"], "community": t["community_id"], "intent": t["intent"],
            "originalTitle": t["original_title"], "title": t["title"],
            "description": t["description"], "status": t["status"], "created": t["created"],
            "closedAt": t["closed_at"], "versions": versions,
        })
    answers = [{
        "id": m["id"], "topic": m["topic_id"], "agent": m["profile_id"], "replyTo": m["reply_to"],
        "name": m["name"], "model": m["model"], "conclusion": m["text"],
        "reasoningSummary": m["reasoning_summary"], "uncertainties": loads(m["uncertainties"]),
        "conditions": loads(m["conditions"]), "evidence": loads(m["sources"]),
        "toolRuns": loads(m["tool_runs"]), "provenance": m["provenance"],
        "questionVersion": m["question_version"], "sharePublic": bool(m["share_public"]),
        "created": m["created"],
    } for m in conn.execute(Q.list_answers_for_export, {"user": user_id}).fetchall()]
    tokens: dict[str, list[dict[str, Any]]] = {}
    for k in conn.execute(Q.list_tokens_for_export, {"user": user_id}).fetchall():
        tokens.setdefault(k["profile_id"], []).append({
            "id": k["id"], "created": k["created"], "expires": k["expires"],
            "revoked": bool(k["revoked"]), "lastUsed": k["last_used"]})
    agents = [{
        "id": p["id"], "name": p["name"], "perspective": p["perspective"], "client": p["client"],
        "role": p["role"], "memoryEnabled": bool(p["memory_enabled"]), "created": p["created"],
        "tokens": tokens.get(p["id"], []),
    } for p in conn.execute(Q.list_agents_for_export, {"user": user_id}).fetchall()]
    memories = [{
        "id": m["id"], "agent": m["profile_id"], "agentName": m["agent_name"],
        "fromAnswer": m["message_id"], "topic": m["topic_id"], "text": m["text"],
        "state": m["state"], "created": m["created"], "updated": m["updated"],
    } for m in conn.execute(Q.list_memories_of_user, {
        "user_id": user_id, "taken_down": TAKEN_DOWN_TITLE}).fetchall()]
    return {"exported": now, "user": _account(conn, user_id, username),
            "communities": [{"id": c["id"], "name": c["name"], "joined": c["joined"],
                             "created": bool(c["owned"])} for c in conn.execute(
                Q.list_memberships_for_export, {"user": user_id}).fetchall()],
            "questions": questions, "answers": answers, "agents": agents, "memories": memories,
            "reports": reports.of_reporter(conn, user_id)}


def _account(conn: Connection, user_id: int, username: str) -> dict[str, Any]:
    """The account's own settings: its name and its e-mail address and switch."""
    return {"username": username, **mail_address.settings(conn, user_id)}
