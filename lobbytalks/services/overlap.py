"""The private-context guard: finding where an answer repeats the asker's private context.

An answer that repeats a run of ``MIN_RUN`` or more consecutive characters of the private
context (compared with all whitespace left out, so re-wrapped lines, doubled or dropped
spaces do not hide a copy) would publish that text if it went into an answer card. The
guard only finds and shows such runs; it never blocks, and only people entitled to the
private context may be shown them:

- the asker, in the card preview, always (it is their own text);
- an answer's author, before sharing, only when the task that produced the answer included
  the private context (``tasks.private_included``), or when the author is the asker. An author whose agent never received it
  is told nothing: a warning, even one without the text, would let them probe the private
  context by submitting guesses.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable

from ..db import Connection, Q, Row
from ..jsonfast import loads
from .topics import private_context

if TYPE_CHECKING:
    from ..crypto import Keyring

MIN_RUN = 12
_SPACE = re.compile(r"\s+")


def _normalised(text: str) -> tuple[str, list[int]]:
    """The text without whitespace, and where in ``text`` each remaining character stands."""
    origin = [i for i, char in enumerate(text) if not char.isspace()]
    return "".join(text[i] for i in origin), origin


def repeated_runs(text: str, private: str | None) -> list[tuple[int, int]]:
    """Spans ``[start, end)`` of ``text`` that repeat ``MIN_RUN``+ characters of ``private``."""
    if not private or not text:
        return []
    secret = _SPACE.sub("", private)
    grams = {secret[i:i + MIN_RUN] for i in range(len(secret) - MIN_RUN + 1)}
    norm, origin = _normalised(text)
    covered_until, spans = -1, []
    for i in range(len(norm) - MIN_RUN + 1):
        gram = norm[i:i + MIN_RUN]
        if gram in grams:
            if spans and i <= covered_until:
                spans[-1][1] = i + MIN_RUN
            else:
                spans.append([i, i + MIN_RUN])
            covered_until = i + MIN_RUN
    return [(origin[start], origin[end - 1] + 1) for start, end in spans]


def repeats_in(texts: Iterable[str], private: str | None) -> list[str]:
    """The repeated passages themselves, in the order found (for warnings and the JSON API)."""
    return [text[start:end] for text in texts for start, end in repeated_runs(text, private)]


def message_texts(message: Row) -> list[str]:
    """The parts of an answer an answer card may publish."""
    uncertainties = loads(message["uncertainties"])
    if isinstance(uncertainties, str):
        uncertainties = [uncertainties]
    return [message["text"], message["reasoning_summary"], *loads(message["conditions"]),
            *uncertainties]


def card_texts(card: dict[str, Any]) -> list[str]:
    return [text for section in card["sections"] for line in section["lines"]
            for text in (line["text"], *line["conditions"])]


def author_entitled(conn: Connection, message_id: str) -> bool:
    """Whether the answer's task was given the private context (see the module docstring)."""
    row = conn.execute(Q.get_message_task_private, {"id": message_id}).fetchone()
    return bool(row and (row["private_included"] or row["by_asker"]))


class Guard:
    """Private context of one question, read once per page, for the people entitled to it."""

    def __init__(self, conn: Connection, keyring: "Keyring", topic_id: str) -> None:
        self._conn, self._keyring, self._topic = conn, keyring, topic_id
        self._by_version: dict[int, str | None] = {}

    def private(self, version: int) -> str | None:
        if version not in self._by_version:
            self._by_version[version] = private_context(self._conn, self._keyring,
                                                         self._topic, version)
        return self._by_version[version]

    def spans(self, version: int, text: str) -> list[tuple[int, int]]:
        return repeated_runs(text, self.private(version))

    def card_repeats(self, card: dict[str, Any]) -> list[str]:
        return repeats_in(card_texts(card), self.private(card["version"]))

    def author_repeats(self, message: dict[str, Any]) -> list[str]:
        """Repeats in one's own answer, or [] when its task did not include private context."""
        if not author_entitled(self._conn, message["id"]):
            return []
        row = self._conn.execute(Q.get_message, {"id": message["id"]}).fetchone()
        return repeats_in(message_texts(row), self.private(row["question_version"]))
