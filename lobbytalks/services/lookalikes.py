"""Communities whose names read alike, and who made each: what the pages add to such a name.

Names need not be unique (§10), and one that differs from another only in case, spacing,
punctuation, an invisible character or look-alike letters would pass for it wherever only
names are shown. Every page that names one of these names its maker too, and its id when
the makers' names read alike as well ("bob_l" and "bob_I"). Names never change and
communities are never deleted, so the grouping is kept until one is added.
"""
from __future__ import annotations

import unicodedata
import weakref
from typing import Any

from ..db import Q
from ..textrules import fold_for_scanning
from .communities import name_key

Mark = tuple[str | None, bool]  # (the maker's username, None for the site's own; id needed)
# database -> (its communities' version, the marks then): one per database a process opens
_kept: "weakref.WeakKeyDictionary[Any, tuple[tuple, dict[str, Mark]]]" = weakref.WeakKeyDictionary()


def reads_as(name: str) -> str:
    """``name_key``; for a name of no letters or digits (emoji), its symbols, variation
    selectors and joiners aside."""
    return (name_key(name) or
            "".join(c for c in fold_for_scanning(name) if unicodedata.category(c)[0] == "S")
            or name)


def marks(db: Any) -> dict[str, Mark]:
    """``{community id: mark}`` for every community of ``db`` (a ``Database``) whose name
    reads like another's."""
    conn = db.conn
    version = tuple(conn.execute(Q.communities_version).fetchone())
    kept = _kept.get(db)
    if kept is not None and kept[0] == version:
        return kept[1]
    groups: dict[str, list] = {}
    for row in conn.execute(Q.list_community_names_and_makers).fetchall():
        groups.setdefault(reads_as(row["name"]), []).append(row)
    found: dict[str, Mark] = {}
    for same in (group for group in groups.values() if len(group) > 1):
        makers = [name_key(row["owner"] or "") for row in same]
        for row, maker in zip(same, makers):
            found[row["id"]] = (row["owner"], makers.count(maker) > 1)
    _kept[db] = (version, found)
    return found
