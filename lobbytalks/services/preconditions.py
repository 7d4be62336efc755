"""What must hold before a task action writes, and the code each action answers with.

The same fact (the question closed, the person left its community, it holds its
``MAX_MESSAGES_PER_TOPIC`` answers, or ``MAX_ANSWERS_PER_PERSON`` of them are the person's)
is refused with the code the protocol gives that action:
claim and heartbeat say what is wrong (``topic_unavailable``, ``forbidden``), submit says the
result was not stored (``submission_rejected``).

Settle first, refuse after the commit: an action on an existing task first settles the
task's expiry inside its write transaction (``tasks.with_expiry_settled``). When the lease
ran out just then, the action stops there, lets the transaction commit and only then
refuses, so the expiry is recorded although the action is not done; otherwise nothing was
written yet, and any refusal further on may roll the whole transaction back.
"""
from __future__ import annotations

from typing import Callable

from ..db import Row
from ..errors import ApiError
from ..quotas import MAX_ANSWERS_PER_PERSON, MAX_MESSAGES_PER_TOPIC

FULL = f"话题已达到 {MAX_MESSAGES_PER_TOPIC} 条发言上限"
SHARE_FULL = f"你的智能体在此话题已有 {MAX_ANSWERS_PER_PERSON} 条发言，达到每人上限"


TopicCheck = Callable[[Row], bool]
_HOLDS: dict[str, TopicCheck] = {
    # only discussions are ever claimed, so a task's topic is always one
    "open": lambda topic: topic["status"] == "open" and topic["kind"] == "discussion",
    "member": lambda topic: topic["member"] == 1,
    # fewer valid (shown) answers than the question may hold
    "room": lambda topic: topic["message_count"] < MAX_MESSAGES_PER_TOPIC,
    # the person's own share of the places (hidden answers, like the room, count for none)
    "share": lambda topic: topic["own_answers"] < MAX_ANSWERS_PER_PERSON,
}

# action -> the checks it makes, in order, each with (code, message; None: the code's default)
TOPIC_REFUSALS: dict[str, dict[str, tuple[str, str | None]]] = {
    "claim_task": {"open": ("topic_unavailable", None),
                   "member": ("forbidden", "请先加入此话题所在的社区"),
                   "room": ("topic_unavailable", FULL),
                   "share": ("topic_unavailable", SHARE_FULL)},
    "heartbeat": {"open": ("topic_unavailable", None),
                  "member": ("forbidden", "已不是此社区成员，不能续期")},
    "submit_result": {"open": ("submission_rejected", "话题已结束，成果未入库"),
                      "member": ("submission_rejected", "已不是此社区成员，成果未入库"),
                      "room": ("submission_rejected", FULL),
                      "share": ("submission_rejected", SHARE_FULL)},
}


# the checks of the places an answer takes: the question's, and the person's share of them
ROOM = ("room", "share")


def check_topic(action: str, topic: Row, only: tuple[str, ...] | None = None) -> None:
    """``topic`` as ``reading.get_topic_for_member`` read it for the acting user; ``only``:
    just these of the action's checks.

    :raise ApiError: the action's code for the first check the topic fails."""
    for check, (code, message) in TOPIC_REFUSALS[action].items():
        if (only is None or check in only) and not _HOLDS[check](topic):
            raise ApiError(code, message)


# action -> what it answers, after the commit, when the lease ran out just as it came
# (a heartbeat or failure finds the task over; a result was not stored)
LEASE_RAN_OUT: dict[str, tuple[str, str | None]] = {
    "heartbeat": ("task_terminal", None),
    "fail_task": ("task_terminal", None),
    "submit_result": ("submission_rejected", "租约已过期，成果未入库"),
}


def lease_ran_out(action: str) -> ApiError:
    """The refusal for ``action`` on a lease that ``tasks.with_expiry_settled`` has just
    expired; raised once the transaction that recorded the expiry has committed."""
    code, message = LEASE_RAN_OUT[action]
    return ApiError(code, message)


def lease_running(task: Row, now: int) -> bool:
    """Whether the task is leased and its lease has time left (``Q.expire_task_if_due``
    expires exactly the leased tasks for which this is False)."""
    return task["state"] == "leased" and task["expires"] > now


def require_leased(task: Row) -> None:
    """A task that is no longer leased cannot be changed (its replays are handled before)."""
    if task["state"] != "leased":
        raise ApiError("task_terminal")
