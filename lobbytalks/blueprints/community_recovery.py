"""A forgotten password on /api/community: ``forgot_password`` asks for a link mailed to the
address the account confirmed last, ``reset_password`` sets a new password with it and logs in.

Every ask is answered alike, whether an account of that name or address exists or not, and
counted per name or address (each is a mail to someone: ``RATE_PASSWORD_RESET``; a browser
that has logged in to the account before counts on its own) and per client address. Wrong
codes are counted per client address, at the failed-login rate, before any password is
hashed.
"""
from __future__ import annotations

import hashlib
from typing import Any

from flask import Response, request

from .. import clock, devices
from ..auth import start_session
from ..errors import ApiError
from ..models.common import parse_model
from ..models.web import PasswordForgotten, PasswordResetByMail
from ..password_rules import refuse_easy
from ..passwords import hash_password
from ..runtime import runtime
from ..services import accounts, password_reset
from .common import ActionTable, client_address, ok

actions = ActionTable()

NO_MAIL = "本站没有配置邮件服务器，不能用邮件重置密码；请联系本站管理员"
BAD_LINK = "code: 重置链接不正确、已用过或已过期，请重新申请"


@actions.post("forgot_password")
def forgot_password(body: dict[str, Any]) -> Response:
    data = parse_model(PasswordForgotten, body)
    rt = runtime()
    if not rt.settings.sends_mail:
        raise ApiError("invalid_request", NO_MAIL, status=409)
    account = data.account.strip()
    rt.gate.hit(rt.settings.rate_login_client, "password-reset-client", client_address(request))
    rt.gate.hit(rt.settings.rate_password_reset, *_ask_window(account))
    password_reset.ask(rt.db, account, now=clock.now())
    return ok({"ok": True})


def _ask_window(account: str) -> tuple[str, str]:
    """Whose asks this one counts with: the name or address typed (as a digest, whether or
    not it names anyone), or, for a browser that has logged in to the account named before,
    that browser's own (``devices``), so that strangers spending the name's asks do not keep
    its owner from asking."""
    if "@" not in account and devices.offered(request):
        device = devices.known(request, account,
                               accounts.password_hash_of(runtime().db, account))
        if device:
            return "password-reset-device", device
    return "password-reset", hashlib.sha256(account.lower().encode()).hexdigest()[:32]


@actions.post("reset_password")
def reset_password(body: dict[str, Any]) -> Response:
    """The new password ends every session of the account; this browser gets a new one."""
    data = parse_model(PasswordResetByMail, body)
    rt = runtime()
    window = (rt.settings.rate_login_client, "password-reset-wrong", client_address(request))
    rt.gate.check(*window)
    checked = password_reset.check(rt.db, rt.keyring, data.code, now=clock.now())
    if checked is None or data.username.strip().lower() not in ("", checked.username.lower()):
        rt.gate.hit(*window)
        raise ApiError("invalid_request", BAD_LINK)
    refuse_easy(data.newPassword, checked.username, "newPassword")
    new_hash = hash_password(data.newPassword, rt.settings.password_cost)
    if not password_reset.reset(rt.db, checked, new_hash):  # the same link, used a moment ago
        raise ApiError("invalid_request", BAD_LINK)
    response = ok({"ok": True})
    start_session(response, request, checked.user_id)
    devices.remember(response, request, checked.username, new_hash)
    return response
