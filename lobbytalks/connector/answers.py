"""What the connector reads of each answer of the server, checked before it is read.

A server (or something in front of it) answering a JSON object of another shape, such as
``{"communities": "nope"}`` or a task without an id, is a refusal the connector can report
like any other; met as a ``KeyError`` in the middle of a run it ended the connector with a
traceback while a harness ran on, its lease held. Only the fields the connector uses are
checked: a newer server may add any others.
"""
from __future__ import annotations

from typing import Any

NUMBER = (int, float)


def _task(task: Any) -> str | None:
    if not isinstance(task, dict):
        return "task is not an object"
    for name, kind in (("id", str), ("state", str), ("topic", str), ("created", NUMBER),
                       ("expires", NUMBER)):
        value = task.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"task.{name} is missing or of another type"
    if task["state"] == "done" and not isinstance(task.get("messageId"), str):
        return "a done task has no messageId"
    return None


def _objects_with_ids(value: Any, name: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, list) or not all(
            isinstance(item, dict) and isinstance(item.get("id"), str) for item in value):
        return f"{name} is not a list of objects with an id"
    return None


def _topics(value: Any, name: str, *, optional: bool = False) -> str | None:
    """A listing's questions, with what choosing one reads of them where present: its
    title (said when chosen) and its numbers (sorted and compared: a string among them, or
    a question without a title, stopped every poll)."""
    wrong = _objects_with_ids(value, name, optional=optional)
    for topic in [] if wrong else value or []:
        for field, kind in (("title", str), ("created", NUMBER), ("messageCount", NUMBER),
                            ("requestedAt", NUMBER), ("questionVersion", int)):
            found = topic.get(field)
            if found is not None and (not isinstance(found, kind) or isinstance(found, bool)):
                return f"{name}[].{field} is of another type"
    return wrong


def _object_or_absent(value: Any, name: str) -> str | None:
    return None if value is None or isinstance(value, dict) else f"{name} is not an object"


def _claim(data: dict[str, Any]) -> str | None:
    context = data.get("context")
    return (_task(data.get("task")) or _object_or_absent(context, "context")
            or _object_or_absent((context or {}).get("question"), "context.question"))


_CHECKS = {
    "list_communities": lambda data: _objects_with_ids(data.get("communities"), "communities"),
    "list_topics": lambda data: (_topics(data.get("topics"), "topics") or
                                 _topics(data.get("requested"), "requested", optional=True)),
    "claim_task": _claim,
    "get_task_status": lambda data: _task(data.get("task")),
    "heartbeat": lambda data: _task(data.get("task")),
    "submit_result": lambda data: (None if isinstance(data.get("messageId"), str)
                                   else "messageId is missing or not a string"),
}


def problem(action: str, data: dict[str, Any]) -> str | None:
    """What is wrong with ``data`` as the answer to ``action``, or None."""
    return _CHECKS[action](data)
