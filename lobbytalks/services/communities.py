"""Public communities: listing, creating, joining and leaving (protocol §10)."""
from __future__ import annotations

import unicodedata
from typing import Any

from .. import i18n
from ..db import Connection, Database, Q, Row
from ..errors import ApiError
from ..models.web import DEFAULT_COMMUNITY
from ..quotas import MAX_OWNED_COMMUNITIES as MAX_OWNED
from ..screening import refuse_secrets
from ..security import new_id
from ..textrules import fold_for_scanning
from . import moderation, replays
from .audit import record
from .locks import hold_user

PAGE_SIZE = 60


def may_create(conn: Connection, user_id: int) -> bool:
    """Whether the person has made fewer than ``MAX_OWNED`` communities (the page offers its
    form only then)."""
    return conn.execute(Q.count_owned_communities, {"user_id": user_id}).fetchone()[0] < MAX_OWNED


def _public(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"], "name": row["name"], "description": row["description"],
        "memberCount": row["member_count"], "topicCount": row["topic_count"],
        "joined": bool(row["joined"]), "owned": bool(row["owned"]),
    }


def list_page(conn: Connection, viewer: int | None, scope: str, page: int) -> dict[str, Any]:
    rows = conn.execute(Q.list_communities, {
        "viewer": viewer or 0, "joined_only": int(scope == "joined"),
        "limit": PAGE_SIZE + 1, "offset": (page - 1) * PAGE_SIZE,
    }).fetchall()
    return {
        "communities": [_public(r) for r in rows[:PAGE_SIZE]],
        "scope": scope, "page": page, "hasMore": len(rows) > PAGE_SIZE,
    }


def joined_origins(conn: Connection, viewer: int) -> dict[str, dict[str, Any]]:
    """``{id: {owner, created}}`` of the communities the viewer has joined (owner None for
    the site's own communities)."""
    return {r["id"]: {"owner": r["owner"], "created": r["created"]}
            for r in conn.execute(Q.list_joined_community_origins, {"viewer": viewer}).fetchall()}


def get_one(conn: Connection, viewer: int | None, community_id: str) -> dict[str, Any]:
    """:raise 404: for an unknown community."""
    row = conn.execute(Q.get_community, {"viewer": viewer or 0, "id": community_id}).fetchone()
    if row is None:
        raise ApiError("not_found", "社区不存在")
    return _public(row)


# Traditional, Japanese and look-alike forms of the default community's name, read as the
# simplified ones; digits and letters that pass for its Latin ones ("The L0bby", "The 1obby",
# "The Iobby"), too.
_SAME_CHARACTERS = str.maketrans("蝦鰕撦廣広場塲埸01iłƴ", "虾虾扯广广场场场ollly")


def name_key(name: str) -> str:
    """A community name as people read it: only its letters and digits ("虾扯淡·广场",
    "TheLobby", "The Lobby."), width, case, what draws nothing, accents and Cyrillic or
    Greek look-alikes of Latin letters aside."""
    folded = fold_for_scanning(name).casefold().translate(_SAME_CHARACTERS)
    return "".join(c for c in folded if unicodedata.category(c)[0] in "LN")


# The default community's names, in every language the pages speak, and its id ("Lobby"):
# a community of someone's own under one of them would pass for the official lobby in every
# listing. A name that only holds one ("虾扯淡广场分会", a branch) is anyone's to take.
RESERVED_NAMES = frozenset({*(name_key(i18n.translate(lang, "lobby.name")) for lang in i18n.LANGUAGES),
                            name_key(DEFAULT_COMMUNITY)})


def create(db: Database, user_id: int, name: str, description: str, *, now: int,
           request_id: str | None = None) -> dict[str, Any]:
    """Create a community owned (and joined) by the user, or give the one this
    ``request_id`` made (``replayed``); :raise 409: past five owned, the default community's
    name, or a ``request_id`` that made another; 400 sensitive_content: a secret in the name
    or description."""
    if name_key(name) in RESERVED_NAMES:
        raise ApiError("invalid_request", "name: 这是默认社区的名称，请换一个", status=409)
    refuse_secrets({"name": name, "description": description})
    request = _request_of(request_id, name, description)
    with db.transaction() as conn:
        hold_user(conn, user_id)  # the cap of five, and one community for a request sent twice
        again = _replayed(conn, user_id, request)
        if again is not None:
            return again
        if not may_create(conn, user_id):
            raise ApiError("forbidden", f"每个用户最多创建 {MAX_OWNED} 个社区", status=409)
        community_id = new_id("c")
        conn.execute(Q.insert_community, {"id": community_id, "name": name.strip(),
                                          "description": description, "owner_id": user_id,
                                          "now": now, **request})
        _add_member(conn, community_id, user_id, now)
    return {"ok": True, "id": community_id, "joined": True}


def created_before(conn: Connection, user_id: int, request_id: str | None, name: str,
                   description: str) -> dict[str, Any] | None:
    """The answer to a ``create`` sent before with this ``request_id``, None when it is new
    (read before the request is counted: a send again creates nothing).

    :raise 409 idempotency_conflict: the ``request_id`` made another community."""
    return _replayed(conn, user_id, _request_of(request_id, name, description))


def _request_of(request_id: str | None, name: str, description: str) -> dict[str, str | None]:
    return replays.request_key(request_id, [name.strip(), description])


def _replayed(conn: Connection, user_id: int, request: dict[str, Any]) -> dict[str, Any] | None:
    if request["request_id"] is None:
        return None
    again = replays.replayed(conn.execute(Q.get_community_by_request,
                                          {"owner_id": user_id, **request}).fetchone(), request)
    return None if again is None else {"ok": True, **again, "joined": True}


def update(db: Database, user_id: int, community_id: str, description: str, *, now: int,
           is_admin: bool = False) -> dict[str, Any]:
    """Its creator, or an admin (a description turned into bait once people joined; the audit
    log keeps it), rewrites a community's description. :raise 404: unknown; :raise 403:
    anyone else; 400 sensitive_content: a secret."""
    refuse_secrets({"description": description})
    with db.transaction() as conn:
        owner = _existing(conn, community_id)["owner_id"]
        if owner != user_id and not is_admin:
            raise ApiError("forbidden", "只有社区的创建者（或管理员）可以修改它的介绍")
        conn.execute(Q.update_community_description, {"id": community_id,
                                                      "description": description})
        if owner != user_id:
            record(conn, user_id, "update_community", "community", community_id, "", now)
    return {"ok": True, "id": community_id, "description": description}


def join(db: Database, user_id: int, community_id: str, *, now: int,
         token: str | None = None) -> dict[str, Any]:
    """Join (idempotent); :raise 404: for an unknown community; :raise 401/403: an agent's
    ``token`` died (rotated, revoked, its owner suspended) since its request showed it."""
    with db.transaction() as conn:
        if token is not None:
            hold_user(conn, user_id)
            moderation.refuse_unless_live(conn, token, now)
        _existing(conn, community_id)
        _add_member(conn, community_id, user_id, now)
    return {"ok": True, "id": community_id, "joined": True}


def leave(db: Database, user_id: int, community_id: str) -> dict[str, Any]:
    """Leave (idempotent); :raise 404: unknown; :raise 409: the creator cannot leave."""
    with db.transaction() as conn:
        if _existing(conn, community_id)["owner_id"] == user_id:
            raise ApiError("forbidden", "创建者暂不能退出自己创建的社区", status=409)
        if conn.execute(Q.delete_membership, {"community_id": community_id,
                                              "user_id": user_id}).rowcount:
            conn.execute(Q.add_to_community_members, {"id": community_id, "delta": -1})
    return {"ok": True, "id": community_id, "joined": False}


def _existing(conn: Connection, community_id: str) -> Row:
    """The community's owner row; :raise 404: no such community."""
    row = conn.execute(Q.get_community_owner, {"id": community_id}).fetchone()
    if row is None:
        raise ApiError("not_found", "社区不存在")
    return row


LEFT_MEANWHILE = "你在此期间退出过这个社区，这个租约已结束；请重新领取"


def _add_member(conn: Connection, community_id: str, user_id: int, now: int) -> None:
    """The membership and the community's member count, in the caller's transaction; a
    repeated join changes neither. Leases from before a leave end: they could be neither
    renewed nor submitted while out, did not count against the member's three, and must not
    come back on top of three others."""
    if conn.execute(Q.insert_membership, {"community_id": community_id, "user_id": user_id,
                                          "now": now}).rowcount:
        conn.execute(Q.add_to_community_members, {"id": community_id, "delta": 1})
        conn.execute(Q.fail_leased_of_user_in_community, {
            "user": user_id, "community": community_id, "reason": LEFT_MEANWHILE, "now": now})


def is_member(conn: Connection, community_id: str, user_id: int) -> bool:
    return conn.execute(Q.get_membership, {
        "community_id": community_id, "user_id": user_id}).fetchone() is not None
