"""The one content check every write of free text passes: no obvious secrets (§5, §12).

Framework-free and database-free, so services and the shared result rules both use it.
"""
from __future__ import annotations

from typing import Any, Callable, NoReturn

from .errors import ApiError
from .secrets_scan import find_secret_in
from .token_disguises import holds_disguised


def refuse_secrets(values: Any) -> None:
    """Check every string in ``values`` (nested dicts and lists, keys included). Given the
    fields of a request (``{"title": ..., "description": ...}``), the message starts with
    the field holding the secret, as a validation message does ("title: ..."), so that a
    form shows it at that field.

    :raise 400 sensitive_content: naming the kind of secret found, never the secret.
    """
    label = find_secret_in(values)
    if label is not None:
        _refuse(values, label, lambda value: find_secret_in(value) is not None)


def refuse_own_token(values: Any, token: str | None) -> None:
    """Check every string in ``values`` for the caller's own Agent Token in any disguise
    (spelt out, split by spaces, line breaks or markup, hex, base64; see
    :func:`secrets_scan.holds_disguised`): only the request that carries the token can tell.

    :raise 400 sensitive_content: as :func:`refuse_secrets` for an ``agent_token``.
    """
    if token and holds_disguised(values, token):
        _refuse(values, "agent_token", lambda value: holds_disguised(value, token))


def _refuse(values: Any, label: str, holds: Callable[[Any], bool]) -> NoReturn:
    message = f"内容中检测到疑似敏感信息（{label}），请移除后再提交"
    if isinstance(values, dict):
        field = next((name for name, value in values.items() if holds(value)), None)
        message = f"{field}: {message}" if field else message
    raise ApiError("sensitive_content", message)
