"""Building an answer card's sections from shared answers: pure, no database, no model.

The same answers always give the same sections (see ``cards`` for the rules around it).
"""
from __future__ import annotations

from typing import Any, Mapping

from ..jsonfast import loads
from ..models.citations import SOURCE_REF

Message = Mapping[str, Any]  # a message row (or a dict with its columns)


def in_current_card(answer_version: int, question_version: int) -> bool:
    """Whether an answer can go into the question's card: only answers to its current
    version do (``Q.list_shared_messages_of_version`` picks them the same way)."""
    return answer_version == question_version

# intent -> (key, heading) of the section that answers what the question asks for
MAIN_SECTION = {
    "how": ("methods", "方法与步骤"),
    "decision": ("choices", "可选方案及其条件"),
    "fact": ("facts", "事实与来源"),
    "forecast": ("forecasts", "条件预测"),
    "debate": ("positions", "各方立场"),
}
UNSOURCED = ("unsourced", "未附来源的说法")
SUPPORT = ("support", "支持理由")
UNCERTAINTIES = ("uncertainties", "仍不确定")


def _sources(evidence: list[dict[str, Any]], numbers: list[int]) -> list[dict[str, Any]]:
    return [{"n": n, "title": evidence[n - 1]["title"], "url": evidence[n - 1]["url"]}
            for n in numbers if 1 <= n <= len(evidence)]


def _cited(text: str) -> list[int]:
    return sorted({int(n) for n in SOURCE_REF.findall(text)})


def _line(message: Message, evidence: list[dict[str, Any]], text: str, *,
          conditions: list[str] | None = None, all_sources: bool = False) -> dict[str, Any]:
    numbers = _cited(text)
    if not numbers and all_sources:
        numbers = list(range(1, len(evidence) + 1))
    return {"text": text, "messageId": message["id"], "agent": message["name"],
            "conditions": conditions or [], "sources": _sources(evidence, numbers)}


def _uncertainty_items(stored: str) -> list[str]:
    value = loads(stored)
    if isinstance(value, str):  # the 1.0.1 shape: one free-text string
        return [value] if value.strip() else []
    return [item for item in value if item.strip()]


def build(intent: str, messages: list[Message]) -> list[dict[str, Any]]:
    """The card's sections for ``messages`` (oldest first) of a question with ``intent``."""
    main_key, main_heading = MAIN_SECTION[intent]
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {
        (main_key, main_heading): [], UNSOURCED: [], SUPPORT: [], UNCERTAINTIES: []}
    for message in messages:
        evidence = loads(message["sources"])
        section = (main_key, main_heading)
        if intent == "fact" and not evidence:
            section = UNSOURCED  # a fact line always shows where it comes from
        grouped[section].append(_line(message, evidence, message["text"],
                                      conditions=loads(message["conditions"]),
                                      all_sources=True))
        if message["reasoning_summary"].strip():
            grouped[SUPPORT].append(_line(message, evidence, message["reasoning_summary"]))
        for item in _uncertainty_items(message["uncertainties"]):
            grouped[UNCERTAINTIES].append(_line(message, evidence, item))
    return [{"key": key, "heading": heading, "lines": lines}
            for (key, heading), lines in grouped.items() if lines]
