"""The private-context guard: finding where an answer repeats the asker's private context.

An answer that repeats a run of ``repeats.MIN_RUN`` or more consecutive characters of the private
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

from typing import TYPE_CHECKING, Any

from ..db import Connection, Q
from ..repeats import repeated_runs, repeats_in
from .topics import private_context

if TYPE_CHECKING:
    from ..crypto import Keyring

def message_texts(message: dict[str, Any]) -> list[str]:
    """The parts of an answer (as ``reading.message_view`` shows it) an answer card may
    publish."""
    delivery = message["delivery"]
    uncertainties = delivery["uncertainties"]
    if isinstance(uncertainties, str):
        uncertainties = [uncertainties]
    return [message["text"], delivery["support"], *delivery["conditions"], *uncertainties]


def card_texts(card: dict[str, Any]) -> list[str]:
    return [text for section in card["sections"] for line in section["lines"]
            for text in (line["text"], *line["conditions"])]


def entitled_answers(conn: Connection, topic_id: str, author: int) -> set[str]:
    """The author's answers on the topic whose task was given the private context, or all
    of them when the author is the asker (see the module docstring): one query per page."""
    return {r["id"] for r in conn.execute(Q.list_answers_entitled_to_private, {
        "topic_id": topic_id, "user_id": author}).fetchall()}


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

    def author_repeats(self, messages: list[dict[str, Any]],
                       author: int) -> dict[str, list[str]]:
        """Repeats in each of the author's own ``messages``; [] for one whose task did not
        include the private context."""
        entitled = entitled_answers(self._conn, self._topic, author) if messages else set()
        return {m["id"]: repeats_in(message_texts(m), self.private(m["questionVersion"]))
                if m["id"] in entitled else [] for m in messages}
