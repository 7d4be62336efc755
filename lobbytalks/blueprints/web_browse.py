"""The all-questions page: every community's questions, searched, filtered and sorted."""
from __future__ import annotations

from typing import Any

from flask import request

from ..models.common import COMMUNITY_ID
from ..models.web import INTENTS
from ..errors import ApiError
from ..services import communities, search
from .web_base import Pages, choice_arg, community_label, distinct_labels, render, viewer_id
from .common import read_conn
from .kept_pages import kept_page

pages = Pages()

STATUSES = ("all", "open", "closed")
ANSWERED = ("any", "yes", "no")
CARDS = ("any", "yes")
YES_NO = {"any": None, "yes": True, "no": False}


def browse_filters() -> dict[str, str]:
    """The page's filters as chosen in the query string; anything unknown is the default."""
    community = request.args.get("community", "")
    return {
        "q": request.args.get("q", "").strip()[:100],
        "community": community if COMMUNITY_ID.fullmatch(community) else "",
        "status": choice_arg("status", STATUSES, "all"),
        "intent": choice_arg("intent", ("any", *INTENTS), "any"),
        "answered": choice_arg("answered", ANSWERED, "any"),
        "card": choice_arg("card", CARDS, "any"),
        "sort": choice_arg("sort", tuple(search.BROWSE_SORTS), "new"),
    }


@pages.get("/questions")
@kept_page
def questions():
    filters = browse_filters()
    after = request.args.get("after", "")[:120]
    listing = search.browse(read_conn(), q=filters["q"], community=filters["community"] or None,
        status=None if filters["status"] == "all" else filters["status"],
        intent=None if filters["intent"] == "any" else filters["intent"],
        answered=YES_NO[filters["answered"]], card=YES_NO[filters["card"]],
        sort=filters["sort"], cursor=after)
    return render("questions.html", listing=listing, filters=filters, first_page=not after,
                  community_names=community_choices(filters["community"]), intents=INTENTS)


def community_labels(listed: list[dict[str, Any]]) -> dict[str, str]:
    """``{id: label}``: ``community_label`` (with the maker where names read alike), and
    the id where labels still do."""
    return distinct_labels([{**c, "name": community_label(c["id"], c["name"])} for c in listed],
                           [lambda c: c["id"]])


def community_choices(chosen: str) -> dict[str, str]:
    """The communities offered as a filter: the first page of all, and the chosen one."""
    names = community_labels(communities.list_page(read_conn(), viewer_id(), "all", 1)["communities"])
    if chosen and chosen not in names:
        try:
            names[chosen] = community_label(
                chosen, communities.get_one(read_conn(), None, chosen)["name"])
        except ApiError:
            pass  # an unknown community simply matches nothing
    return names
