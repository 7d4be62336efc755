"""How the pages write a community's name and description.

The seeded lobby speaks the reader's language while it keeps the words it was seeded with;
a community whose name reads like another's also names its maker (``lookalikes``), wherever
it is named, so that a look-alike cannot pass for the original on any page.
"""
from __future__ import annotations

from flask import g
from markupsafe import Markup

from .. import i18n
from ..models.web import DEFAULT_COMMUNITY
from ..services import lookalikes
from ..runtime import runtime
from .page_text import lang_of, t


def community_label(community_id: str, name: str) -> str:
    """A community's name in the reader's language (the seeded lobby's while it still has
    the name it was seeded with; one an operator renamed shows as written), with its maker,
    and its id if need be, when it reads like another's."""
    shown = _seeded_lobby("lobby.name", community_id, name)
    if "lookalikes" not in g:
        g.lookalikes = lookalikes.marks(runtime().db)
    mark = g.lookalikes.get(community_id)
    if mark is None:
        return shown
    maker, with_id = mark
    return " · ".join([shown, maker or t("common.site_owned"), *([community_id] if with_id else [])])


def community_about(community_id: str, description: str) -> str:
    """A community's description, like ``community_label``."""
    return _seeded_lobby("lobby.about", community_id, description)


def community_about_marks(community_id: str, description: str) -> Markup:
    """``lang_of`` for a description as its people wrote it; nothing where the page says the
    seeded lobby's in its own words."""
    shown = community_about(community_id, description)
    return lang_of(description) if shown == description else Markup("")


def _seeded_lobby(key: str, community_id: str, stored: str) -> str:
    return t(key) if community_id == DEFAULT_COMMUNITY and stored == i18n.translate("zh", key) else stored
