"""The numbers texts state, from the constant or the setting in force.

Tool descriptions, the OpenAPI document, error messages and page strings write
``{claim_rate}``, ``{max_agents}`` ... instead of a number; ``numbers`` supplies the values
for one app's settings, so an operator who changes ``LOBBYTALKS_RATE_CLAIM`` has agents
and people told the new budget.
"""
from __future__ import annotations

from typing import Any, Mapping

from limits import parse

from . import quotas
from .settings import Settings

_ZH_UNITS = {"second": "秒", "minute": "分钟", "hour": "小时", "day": "天", "month": "月",
             "year": "年"}


def rate(setting: str, lang: str = "zh") -> str:
    """A rate setting as a phrase: ``20/minute`` → 每分钟 20 次 / 20 per minute."""
    item = parse(setting)
    unit, every = item.GRANULARITY.name, item.multiples
    if lang == "en":
        return f"{item.amount} per {unit}" if every == 1 else f"{item.amount} per {every} {unit}s"
    zh_unit = _ZH_UNITS[unit]
    return f"每{zh_unit} {item.amount} 次" if every == 1 else f"每 {every} {zh_unit} {item.amount} 次"


class _KeepUnknown(dict):
    """Placeholders that are not numbers (``{when}``, a literal ``{code, error}``) stay."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def fill(text: str, values: Mapping[str, Any]) -> str:
    """``text`` with the placeholders ``values`` knows filled in, the others left as written."""
    return text.format_map(_KeepUnknown(values))


FIXED: dict[str, int] = {
    "max_agents": quotas.MAX_AGENTS,
    "max_owned": quotas.MAX_OWNED_COMMUNITIES,
    "token_days": quotas.TOKEN_DAYS,
    "max_memories": quotas.MAX_MEMORIES,
    "context_memories": quotas.CONTEXT_MEMORIES,
    "lease_minutes": quotas.LEASE_SECONDS // 60,
    "max_lease_hours": quotas.MAX_LEASE_SECONDS // 3600,
    "heartbeat_minutes": quotas.HEARTBEAT_SECONDS // 60,
    "max_live_leases": quotas.MAX_LIVE_LEASES,
    "max_messages": quotas.MAX_MESSAGES_PER_TOPIC,
    "max_own_answers": quotas.MAX_ANSWERS_PER_PERSON,
    "body_kib": quotas.EXTERNAL_BODY_LIMIT // 1024,
    "communities_body_kib": quotas.COMMUNITIES_BODY_LIMIT // 1024,
}


# (id of the settings, lang) -> (the settings, their numbers). Pages ask once per string;
# hashing the whole Settings each time cost ~5 µs a call, an id lookup costs nothing.
_KNOWN: dict[tuple[int, str], tuple[Settings, dict[str, Any]]] = {}


def numbers(settings: Settings, lang: str = "zh") -> dict[str, Any]:
    """Every number a text may state: the fixed caps and this app's rate budgets."""
    known = _KNOWN.get((id(settings), lang))
    if known is None or known[0] is not settings:
        if len(_KNOWN) > 64:  # apps come and go in tests; a server has one
            _KNOWN.clear()
        known = _KNOWN[(id(settings), lang)] = (settings, _numbers(settings, lang))
    return known[1]


def forget() -> None:
    """Compute the numbers again (after a test changed ``FIXED``)."""
    _KNOWN.clear()


def _numbers(settings: Settings, lang: str) -> dict[str, Any]:
    return {**FIXED,
            "token_rate": rate(settings.rate_token, lang),
            "claim_rate": rate(settings.rate_claim, lang),
            "manage_rate": rate(settings.rate_manage, lang),
            "community_rate": rate(settings.rate_community, lang),
            "topic_rate": rate(settings.rate_topic, lang)}
