"""Who is asking: the web session cookie or an agent's Bearer token."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flask import Request, Response, g

from . import clock
from .db import Q
from .errors import ApiError
from .runtime import runtime
from .security import new_session_secret, sha256_hex
from .services import accounts, moderation
from .services.locks import hold_user
from .textrules import HTTP_WHITESPACE

if TYPE_CHECKING:
    from .runtime import Runtime

SESSION_COOKIE = "xia_session"
KEPT_TOKENS = 4096  # tokens looked up while the database has not changed (kept.Kept)


@dataclass(frozen=True)
class User:
    id: int
    username: str
    is_admin: bool


@dataclass(frozen=True)
class Agent:
    """The identity behind a Bearer token: a user, one of their agents, and the token."""
    user_id: int
    profile_id: str
    token_id: str
    name: str
    client: str
    perspective: str
    memory_enabled: bool


def current_user(request: Request) -> User | None:
    """The logged-in user from the session cookie, cached per request."""
    if "user" in g:
        return g.user
    user = None
    secret = request.cookies.get(SESSION_COOKIE)
    if secret:
        row = runtime().db.one(Q.get_session_user, {
            "digest": sha256_hex(secret), "now": clock.now()})
        if row:
            user = User(row["id"], row["username"], bool(row["is_admin"]))
    g.user = user
    return user


# Sent by the pages' script with every call: the account the page was drawn for. Another
# tab may have logged out and in as someone else since; the page would then act as them
# (a question with its private context posted in their name, an agent made in their account).
VIEWER_HEADER = "X-LobbyTalks-Viewer"


class ViewerChanged(ApiError):
    """A 401 that says so in a header too: the page's script tells it from an ended login."""

    def __init__(self) -> None:
        super().__init__("unauthorized", "这个页面是为另一个账号打开的，请刷新页面")

    def headers(self) -> dict[str, str]:
        return {**super().headers(), "X-LobbyTalks-Viewer-Changed": "1"}


def require_user(request: Request) -> User:
    """:raise 401: not logged in, or logged in as another account than the page that sent the
    request was drawn for (``VIEWER_HEADER``)."""
    user = require_session(request)
    drawn_for = request.headers.get(VIEWER_HEADER)
    if drawn_for is not None and drawn_for != str(user.id):
        raise ViewerChanged()
    return user


def require_session(request: Request) -> User:
    """:raise 401: not logged in. Whoever's the session: logging out ends it, whatever page
    asked (a page drawn for another account asks to log this browser out, too)."""
    user = current_user(request)
    if user is None:
        raise ApiError("unauthorized", "请先登录")
    return user


def require_admin(request: Request) -> User:
    """:raise 401: not logged in; :raise 403 forbidden: not an admin."""
    user = require_user(request)
    if not user.is_admin:
        raise ApiError("forbidden", "只有管理员可以执行此操作")
    return user


def start_session(response: Response, request: Request, user_id: int, *,
                  checked_hash: str | None = None) -> None:
    """A new session for ``user_id``, replacing the one this browser presented (whoever's
    it was: logging in again leaves no older session of it valid).

    Under the user's row lock, as a suspension and a password change are, so that neither
    can slip between the check and the session: a login whose password (``checked_hash``)
    was changed since it was checked gets no session, nor does a suspended or deleted user.

    :raise 403 forbidden: the user is suspended (no session ever starts for them).
    :raise 401 unauthorized: the password checked is no longer the account's, or the
        account was deleted."""
    rt = runtime()
    secret = new_session_secret()
    now = clock.now()
    max_age = rt.settings.session_days * 86400
    presented = request.cookies.get(SESSION_COOKIE)
    with rt.db.transaction() as conn:
        hold_user(conn, user_id)
        accounts.refuse_if_deleted(conn, user_id)
        moderation.refuse_if_suspended(conn, user_id)
        if checked_hash is not None and not accounts.password_still(conn, user_id, checked_hash):
            raise ApiError("unauthorized", accounts.LOGIN_FAILED)
        if presented:
            conn.execute(Q.delete_session, {"digest": sha256_hex(presented)})
        conn.execute(Q.delete_expired_sessions, {"user_id": user_id, "now": now})
        conn.execute(Q.insert_session, {"digest": sha256_hex(secret), "user_id": user_id,
                                        "created": now, "expires": now + max_age})
        # Bounded per user: a script holding the password cannot pile up sessions.
        conn.execute(Q.delete_sessions_beyond, {"user_id": user_id,
                                                "keep": rt.settings.sessions_per_user})
    response.set_cookie(
        SESSION_COOKIE, secret, max_age=max_age, httponly=True, samesite="Lax",
        secure=is_https(request), path="/",
    )


def end_session(response: Response, request: Request) -> None:
    secret = request.cookies.get(SESSION_COOKIE)
    if secret:
        with runtime().db.transaction() as conn:
            conn.execute(Q.delete_session, {"digest": sha256_hex(secret)})
    forget_session_cookie(response, request)


def forget_session_cookie(response: Response, request: Request) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="Lax",
                           secure=is_https(request))


def is_https(request: Request) -> bool:
    public_url = runtime().settings.public_url
    return public_url.startswith("https://") if public_url else request.scheme == "https"


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    token = value.strip(HTTP_WHITESPACE)
    if scheme.lower() != "bearer" or not token:
        return None
    return token


# A client configured with ``Bearer ${NAME}`` (Claude Code, .mcp.json) sends that text as
# it is when NAME is not set; no token looks like this, and saying so spares a rotation.
_UNSET_VARIABLE = re.compile(r"\$\{([A-Za-z_]\w{0,63})\}|\$([A-Za-z_]\w{0,63})|%([A-Za-z_]\w{0,63})%",
                             re.ASCII)


def authenticate_agent(request: Request) -> Agent:
    """Resolve the Bearer token; missing, unknown, expired or revoked -> 401."""
    if "agent" in g:
        return g.agent
    token = bearer_token(request)
    if token is None:
        raise ApiError("unauthorized", "缺少 Agent Token")
    if unset := _UNSET_VARIABLE.fullmatch(token):
        raise ApiError("unauthorized", f"Authorization 头里是未展开的变量 {token}，不是 Token："
                                       f"启动客户端前请先设置环境变量 "
                                       f"{next(name for name in unset.groups() if name)}")
    rt = runtime()
    now = clock.now()
    row = _token_row(rt, sha256_hex(token))
    if row is None or row["revoked"] or row["expires"] <= now:
        raise moderation.token_refusal(rt.db.conn, row["token_id"] if row else None)
    agent = Agent(row["user_id"], row["profile_id"], row["token_id"], row["name"],
                  row["client"], row["perspective"], bool(row["memory_enabled"]))
    if row["last_used"] is None or now - row["last_used"] >= 60:
        # Recording last use at most once a minute keeps reads from becoming writes.
        with rt.db.transaction() as conn:
            conn.execute(Q.touch_token, {"now": now, "id": agent.token_id})
    g.agent = agent
    return agent


def _token_row(rt: "Runtime", digest: str):
    """The token's row with its agent, kept under the database's generation: revoking,
    rotating or archiving is a write, after which the next lookup reads afresh; the expiry
    is compared with the clock at every use. Unknown digests are not kept."""
    if rt.kept_tokens is None:
        return rt.db.one(Q.get_agent_by_token_digest, {"digest": digest})
    generation = rt.generation.current(rt.db.conn)
    row = rt.kept_tokens.get(digest, generation)
    if row is None:
        row = rt.db.one(Q.get_agent_by_token_digest, {"digest": digest})
        if row is not None:
            rt.kept_tokens.keep(digest, row, generation)
    return row
