"""Account actions on /api/community: register, login, logout (protocol §11) and
LobbyTalks' own change_password, logout_all and delete_account.

Wrong passwords are counted in three windows: per (username, address), which stops a
guesser long before it stops the owner logging in from elsewhere; per username across all
addresses, a much higher ceiling that keeps a distributed guesser bounded; and per address
across usernames (password spraying). A browser that has logged in to the account before has
a window of its own instead of the last two (``devices``). Correct logins have their own
budget per user.
"""
from __future__ import annotations

import threading
from typing import Any

from flask import Response, request

from .. import clock, devices, turns
from ..auth import end_session, forget_session_cookie, require_session, require_user, start_session
from ..errors import ApiError
from ..models.common import parse_model
from ..models.web import AccountDeletion, LogoutEverywhere, PasswordChange, WebAuth, WebLogout
from ..password_rules import refuse_easy
from ..runtime import runtime
from ..services import account_deletion, accounts
from .common import ActionTable, client_address, ok
from .community import signed_in_write

actions = ActionTable()


def _failure_windows(username: str) -> tuple[tuple[str, str, str], ...]:
    rt, name, address = runtime(), username.lower(), client_address(request)
    settings = rt.settings
    device = devices.offered(request) and devices.known(
        request, username, accounts.password_hash_of(rt.db, username))
    pair = (settings.rate_login_pair, "login-pair", f"{name} {address}")
    # A browser that has logged in to this account before is held to a window of its own
    # instead of the account's and the address's, so strangers guessing this name anywhere,
    # or any names at the owner's own address (one NAT), do not lock its owner out.
    if device:
        return (pair, (settings.rate_login_pair, "login-device", device))
    return (pair, (settings.rate_login_user, "login-user", name),
            (settings.rate_login_client, "login-client", address))


# A failure is counted after its hash (a right password counts nothing), so checks of one
# name at the same moment would all pass the window's last free slot. They take turns in
# this process instead; with several processes a burst can pass it once per process.
_CHECKS_OF_NAME = tuple(threading.Lock() for _ in range(64))


def _checked_password(username: str, password: str) -> tuple[int, str] | None:
    """The user id and the hash checked when the password is right, else None after
    counting the failure.

    :raise 429: when a failure window is already full (checked before any hashing).
    """
    rt = runtime()
    windows = _failure_windows(username)
    with turns.waiting(_CHECKS_OF_NAME[hash(username.lower()) % len(_CHECKS_OF_NAME)]):
        for limit, scope, key in windows:
            rt.gate.check(limit, scope, key)
        verified = accounts.authenticate(rt.db, username, password,
                                         cost=rt.settings.password_cost)
        if verified is None:
            for limit, scope, key in windows:
                rt.gate.hit(limit, scope, key)
    return verified


def require_current_password(user: Any, password: str) -> str:
    """The hash checked, for the write to hold to (``accounts.require_password_still``).

    :raise 403: ``password`` is not the signed-in user's (counted as a failed login)."""
    verified = _checked_password(user.username, password)
    if verified is None or verified[0] != user.id:
        raise ApiError("forbidden", accounts.CURRENT_PASSWORD_WRONG)
    return verified[1]


@actions.post("register")
def register(body: dict[str, Any]) -> Response:
    data = parse_model(WebAuth, body)
    if data.checkPassword:  # (before the budget: choosing again costs no registration)
        refuse_easy(data.password, data.username, "password")
    rt = runtime()
    rt.gate.hit(rt.settings.rate_register, "register", client_address(request))
    user_id = accounts.register(rt.db, data.username, data.password, now=clock.now(),
                                cost=rt.settings.password_cost)
    response = ok({"ok": True})
    start_session(response, request, user_id)
    devices.remember(response, request, data.username,
                     accounts.password_hash_of(rt.db, data.username) or "")
    return response


@actions.post("login")
def login(body: dict[str, Any]) -> Response:
    data = parse_model(WebAuth, body)
    verified = _checked_password(data.username, data.password)
    if verified is None:
        raise ApiError("unauthorized", accounts.LOGIN_FAILED)
    user_id, checked_hash = verified
    rt = runtime()
    rt.gate.hit(rt.settings.rate_login_success, "login-ok", user_id)
    response = ok({"ok": True})
    start_session(response, request, user_id, checked_hash=checked_hash)
    devices.remember(response, request, data.username, checked_hash)
    return response


@actions.post("logout")
def logout(body: dict[str, Any]) -> Response:
    parse_model(WebLogout, body)
    require_session(request)
    response = ok({"ok": True})
    end_session(response, request)
    return response


@actions.post("change_password")
def change_password(body: dict[str, Any]) -> Response:
    """Every session of the account ends, this browser gets a new one."""
    user, data, rt = signed_in_write(PasswordChange, body)
    checked = require_current_password(user, data.currentPassword)
    if data.newPassword == data.currentPassword:  # would change nothing but end the sessions
        raise ApiError("invalid_request", "newPassword: 新密码与当前密码相同", status=409)
    refuse_easy(data.newPassword, user.username, "newPassword")
    new_hash = accounts.set_password(rt.db, user.id, data.newPassword,
                                     cost=rt.settings.password_cost, checked=checked)
    response = ok({"ok": True})
    start_session(response, request, user.id, checked_hash=new_hash)
    devices.remember(response, request, user.username, new_hash)  # the others are forgotten
    return response


@actions.post("delete_account")
def delete_account(body: dict[str, Any]) -> Response:
    """The account is deleted (``services.account_deletion``) and this browser logged out."""
    user, data, rt = signed_in_write(AccountDeletion, body)
    checked = require_current_password(user, data.currentPassword)
    account_deletion.delete(rt.db, user.id, now=clock.now(), checked=checked)
    response = ok({"ok": True, "deleted": True})
    forget_session_cookie(response, request)
    return response


@actions.post("logout_all")
def logout_everywhere(body: dict[str, Any]) -> Response:
    user = require_user(request)
    parse_model(LogoutEverywhere, body)
    ended = accounts.end_all_sessions(runtime().db, user.id)
    response = ok({"ok": True, "ended": ended})
    forget_session_cookie(response, request)
    return response
