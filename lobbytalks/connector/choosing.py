"""Which listed questions ``agent run`` takes, and in what order (see ``scheduler``)."""
from __future__ import annotations

from typing import Any


def priority(topic: dict[str, Any]) -> tuple[Any, ...]:
    """Asked-for-by-the-user first, then the user's own, then unanswered, then oldest."""
    return (not topic.get("requestedByMe"), not topic.get("askedByMe"),
            topic.get("messageCount", 0) > 0, topic.get("created", 0), topic["id"])


def tried_since_asked(topic: dict[str, Any], tried: dict[tuple[str, int | None], int]) -> bool:
    """Tried in this version already, and not asked for since (pressing "Ask my agents"
    after a failed try buys one more; asked in the second the try began is not since)."""
    keys = ((topic["id"], None), (topic["id"], topic.get("questionVersion")))
    began = [tried[key] for key in keys if key in tried]
    asked = topic.get("requestedAt")
    return bool(began) and (asked is None or asked <= max(began))
