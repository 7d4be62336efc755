"""How an answer cites its evidence (§5): the one place the forms of a citation are read."""
from __future__ import annotations

import re

# How an answer cites its n-th evidence item: "[S1]" (§5), the form the cards and the pages
# link; validation reads every form below. Spaces before one are taken from a run's start
# only (from each: quadratic).
SOURCE_REF = re.compile(r"\[S([0-9]+)\]", re.IGNORECASE)  # "[s2]" cites too, and must exist
# What a reader takes for a citation, however it is written: "[S1]", "[s1]", "[S 1]",
# "[S1, S2]", "[S1-S3]", "［S1］", in any digits ("[S２]", "[S٢]"), and read as the scanners
# read text (``textrules.fold_for_scanning``: "[S\u200b3]" shows as [S3]). Every number in
# one must have its evidence (§5), though the pages link only "[S1]".
CITED_GROUP = re.compile(r"[\[［]\s*+S\s*+\d++(?:\s*+[,，、;；\-–—~～]\s*+(?:S\s*+)?\d++)*+"
                          r"\s*+[\]］]", re.IGNORECASE)
# The history's numbering ("[M1]", "[M1:S1]"), which answers no longer use (§5).
MESSAGE_REF = re.compile(r"\[M[0-9]+(?::S[0-9]+)?\]", re.IGNORECASE)
_CITING = re.compile(r"(?<![ \t])[ \t]*" + SOURCE_REF.pattern, re.IGNORECASE)


def without_source_refs(text: str) -> str:
    """The text without its "[S1]" citations (and the spaces before them), for where the
    sources are not shown beside it."""
    return _CITING.sub("", text)
