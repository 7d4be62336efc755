"""Where a text repeats another's words: the rule the private-context guard reads
(``services.overlap``) and the connector checks before it submits (``connector.submission``).

A run of ``MIN_RUN`` or more consecutive characters of the other text counts, compared
with all whitespace and invisible format characters left out, so re-wrapped lines, doubled
or dropped spaces, and a zero-width space or soft hyphen between every letter (which look
like nothing on screen) do not hide a copy. Pure functions: the connector, which runs without the server's database code, uses
them too.
"""
from __future__ import annotations

import unicodedata
from typing import Iterable

MIN_RUN = 12


def _unseen(char: str) -> bool:
    """Whitespace, or a format character (Cf: zero-width space and joiners, soft hyphen,
    direction marks, word joiner, BOM) that a reader does not see."""
    return char.isspace() or unicodedata.category(char) == "Cf"


def without_spaces(text: str) -> str:
    """``text`` as copies are compared: what a reader sees, without spacing."""
    return "".join(char for char in text if not _unseen(char))


def _normalised(text: str) -> tuple[str, list[int]]:
    """The text as compared, and where in ``text`` each remaining character stands."""
    origin = [i for i, char in enumerate(text) if not _unseen(char)]
    return "".join(text[i] for i in origin), origin


def repeated_runs(text: str, private: str | None) -> list[tuple[int, int]]:
    """Spans ``[start, end)`` of ``text`` that repeat ``MIN_RUN``+ characters of ``private``."""
    if not private or not text:
        return []
    secret = without_spaces(private)
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
