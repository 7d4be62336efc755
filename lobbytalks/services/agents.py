"""External agents and their tokens, managed by their owner with a web session (§3)."""
from __future__ import annotations

from typing import Any

from ..db import Connection, Database, Q, Row
from ..errors import ApiError
from ..quotas import MAX_AGENTS, TOKEN_DAYS
from ..screening import refuse_secrets
from ..security import new_agent_token, new_id, sha256_hex
from .accounts import refuse_if_deleted
from .locks import hold_user
from .moderation import refuse_if_suspended
from .settlement import (AGENT_ARCHIVED, TOKEN_REVOKED, TOKEN_ROTATED, settle_for_view,
                         settle_user)


def _issue_token(conn: Connection, user_id: int, profile_id: str, now: int) -> dict[str, Any]:
    """The one place a token is made; the caller holds the user's row, so a suspension or
    a deletion (which end every token under that lock) cannot have slipped in unseen since
    the request's session was read."""
    refuse_if_deleted(conn, user_id)
    refuse_if_suspended(conn, user_id)
    token = new_agent_token()
    token_id = new_id("tok")
    expires = now + TOKEN_DAYS * 86400
    conn.execute(Q.insert_token, {"id": token_id, "profile_id": profile_id, "user_id": user_id,
                                  "digest": sha256_hex(token), "last4": token[-4:], "now": now,
                                  "expires": expires})
    return {"profileId": profile_id, "tokenId": token_id, "token": token, "expires": expires}


def register(db: Database, user_id: int, data: Any, *, now: int) -> dict[str, Any]:
    """A new external agent and its first token; :raise 400 profile_limit: past eight.

    :raise 400 sensitive_content: when the name or perspective holds a secret (both are
        handed to every task the agent claims).
    """
    refuse_secrets({"name": data.name, "perspective": data.perspective})
    with db.transaction() as conn:
        hold_user(conn, user_id)  # the cap of eight
        if live_count(conn, user_id) >= MAX_AGENTS:
            raise ApiError("profile_limit", f"每个用户最多 {MAX_AGENTS} 只虾")
        profile_id = new_id("agt")
        conn.execute(Q.insert_profile, {"id": profile_id, "user_id": user_id,
                                        "name": data.name.strip(), "perspective": data.perspective,
                                        "client": data.client, "role": data.role, "now": now})
        return _issue_token(conn, user_id, profile_id, now)


def live_count(conn: Connection, user_id: int) -> int:
    """How many agents the user has that are not archived (what the cap counts)."""
    return conn.execute(Q.count_profiles, {"user_id": user_id}).fetchone()[0]


def has_live_token(conn: Connection, user_id: int, now: int) -> bool:
    """Whether a connector of the user's could still take a question (a live token)."""
    return conn.execute(Q.has_live_token, {"user_id": user_id, "now": now}).fetchone() is not None


def _live_profile(conn: Connection, user_id: int, profile_id: str) -> Row:
    """:raise 404 not_found: not the user's agent, or archived (its identity is gone)."""
    row = conn.execute(Q.get_profile_of_user, {"id": profile_id, "user_id": user_id}).fetchone()
    if row is None or row["archived_at"] is not None:
        raise ApiError("not_found", "外部虾不存在或已归档")
    return row


def _retire_tokens(conn: Connection, user_id: int, profile_id: str, reason: str,
                   now: int) -> None:
    """Fail the agent's leases with ``reason`` and revoke all its tokens (§6 settlement)."""
    settle_user(conn, user_id, now)
    conn.execute(Q.fail_leased_of_profile, {"profile": profile_id, "reason": reason, "now": now})
    conn.execute(Q.revoke_profile_tokens, {"profile_id": profile_id})


def rotate(db: Database, user_id: int, profile_id: str, *, now: int) -> dict[str, Any]:
    """Revoke every token of the agent, fail their leases, issue a new token."""
    with db.transaction() as conn:
        hold_user(conn, user_id)
        _live_profile(conn, user_id, profile_id)
        _retire_tokens(conn, user_id, profile_id, TOKEN_ROTATED, now)
        return _issue_token(conn, user_id, profile_id, now)


def update(db: Database, user_id: int, data: Any) -> dict[str, Any]:
    """Rename an agent or change its perspective (extension of §3). Answers already given
    keep the name they were submitted under. :raise 404: unknown or archived agent;
    400 sensitive_content: a secret in the new name or perspective."""
    refuse_secrets({"name": data.name, "perspective": data.perspective})
    with db.transaction() as conn:
        hold_user(conn, user_id)
        _live_profile(conn, user_id, data.profile)
        conn.execute(Q.update_profile, {
            "id": data.profile, "user": user_id, "perspective": data.perspective,
            "name": data.name.strip() if data.name is not None else None})
        row = conn.execute(Q.get_profile_of_user, {
            "id": data.profile, "user_id": user_id}).fetchone()
    return {"ok": True, "profile": row["id"], "name": row["name"],
            "perspective": row["perspective"]}


def archive(db: Database, user_id: int, profile_id: str, *, now: int) -> dict[str, Any]:
    """Retire an agent for good (extension of §3): its tokens are revoked and its leases
    fail as on revocation; its answers keep its name; it leaves the cap of eight. Archiving
    twice replays. It cannot be undone, or archiving would lift the cap.

    :raise 404: not the user's agent.
    """
    with db.transaction() as conn:
        hold_user(conn, user_id)
        row = conn.execute(Q.get_profile_of_user, {"id": profile_id, "user_id": user_id}).fetchone()
        if row is None:
            raise ApiError("not_found", "外部虾不存在")
        if row["archived_at"] is not None:
            return {"ok": True, "profile": profile_id, "archived": row["archived_at"],
                    "replayed": True}
        _retire_tokens(conn, user_id, profile_id, AGENT_ARCHIVED, now)
        conn.execute(Q.archive_profile, {"now": now, "id": profile_id, "user_id": user_id})
    return {"ok": True, "profile": profile_id, "archived": now}


def revoke(db: Database, user_id: int, token_id: str, *, now: int) -> dict[str, Any]:
    """Revoke one token (replays) and fail the leases it holds."""
    with db.transaction() as conn:
        hold_user(conn, user_id)
        token = conn.execute(Q.get_token_of_user, {"id": token_id, "user_id": user_id})
        if token.fetchone() is None:
            raise ApiError("not_found", "Token 不存在")
        settle_user(conn, user_id, now)
        conn.execute(Q.fail_leased_of_token, {"token": token_id, "reason": TOKEN_REVOKED, "now": now})
        conn.execute(Q.revoke_token, {"id": token_id})
    return {"ok": True}


def revoke_all(db: Database, user_id: int, *, now: int) -> dict[str, Any]:
    """Revoke every token of every agent of the user and fail their leases, in one write
    (an extension of §3): after someone else had the account, one step instead of one per
    agent, as a password change or "log out everywhere" end logins only."""
    with db.transaction() as conn:
        hold_user(conn, user_id)
        settle_user(conn, user_id, now)
        conn.execute(Q.fail_leased_of_user, {"user": user_id, "reason": TOKEN_REVOKED, "now": now})
        revoked = conn.execute(Q.revoke_live_tokens_of_user, {"user_id": user_id,
                                                              "now": now}).rowcount
    return {"ok": True, "revoked": revoked}


def list_agents(db: Database, user_id: int, *, now: int) -> dict[str, Any]:
    """The user's agents with token metadata (never a token or its digest).

    Each token also carries ``last4`` and ``lastUsed`` for the owner's own page; the manage API
    sends :func:`manage_view` of this instead.
    """
    settle_for_view(db, user_id, now)
    tokens: dict[str, list[dict[str, Any]]] = {}
    for t in db.all(Q.list_tokens_of_user, {"user_id": user_id}):
        tokens.setdefault(t["profile_id"], []).append({
            "id": t["id"], "created": t["created"], "expires": t["expires"],
            "revoked": int(t["revoked"]), "lastUsed": t["last_used"], "last4": t["last4"],
        })
    agents = []
    for p in db.all(Q.list_profiles_of_user, {"user_id": user_id}):
        own = tokens.get(p["id"], [])
        agents.append({
            "id": p["id"], "name": p["name"], "model": p["client"], "client": p["client"],
            "perspective": p["perspective"], "role": p["role"],
            "memoryEnabled": bool(p["memory_enabled"]), "created": p["created"],
            "lastUsed": max((t["lastUsed"] for t in own if t["lastUsed"]), default=None),
            "archived": p["archived_at"],
            "tokens": own,
        })
    return {"agents": agents}


# §3: a token entry in the manage API holds these fields and no others.
MANAGE_TOKEN_FIELDS = ("id", "created", "expires", "revoked")


def manage_view(listing: dict[str, Any]) -> dict[str, Any]:
    """The listing as the manage API sends it: token entries cut down to §3's fields and
    ``lastUsed`` (an extension) only once the agent has used a token. ``agents`` holds the
    live agents only (at most eight, as the contract says); archived ones follow in the
    extension ``archivedAgents`` when there are any."""
    def entry(agent: dict[str, Any]) -> dict[str, Any]:
        return {**{k: v for k, v in agent.items()
                   if k != "archived" and (k != "lastUsed" or v is not None)},
                **({"archived": agent["archived"]} if agent["archived"] else {}),
                "tokens": [{k: t[k] for k in MANAGE_TOKEN_FIELDS} for t in agent["tokens"]]}
    view: dict[str, Any] = {"agents": [entry(a) for a in listing["agents"] if not a["archived"]]}
    archived = [entry(a) for a in listing["agents"] if a["archived"]]
    if archived:
        view["archivedAgents"] = archived
    return view


def last_tasks(conn: Connection, user_id: int) -> dict[str, dict[str, Any]]:
    """Each agent's most recent task (its outcome, for /agents), keyed by agent id."""
    return {r["profile_id"]: {"id": r["id"], "topic": r["topic_id"], "state": r["state"],
                              "error": r["error"], "agent_failed": r["agent_failed"],
                              "updated": r["updated"]}
            for r in conn.execute(Q.list_last_task_per_profile, {"user_id": user_id}).fetchall()}


def set_memory(db: Database, user_id: int, profile_id: str, enabled: bool) -> dict[str, Any]:
    """:raise 404 not_found: unknown or archived agent, as for every other change to one."""
    with db.transaction() as conn:
        _live_profile(conn, user_id, profile_id)
        conn.execute(Q.set_memory_enabled, {"enabled": int(enabled), "id": profile_id,
                                            "user_id": user_id})
    return {"ok": True, "profile": profile_id, "memoryEnabled": enabled}
