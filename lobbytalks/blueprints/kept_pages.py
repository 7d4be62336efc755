"""Pages kept until the database changes (``lobbytalks.kept``), for visitors and for each
signed-in reader.

A page is kept under its address, language and reader: a visitor's is the same for every
visitor; a signed-in person's is served only to requests whose session says it is them,
checked on every request as before. Only pages answered 200 are kept, with their headers,
and only for an address whose query names nothing but what pages read (``PAGE_ARGS``):
any other argument would make every request a page of its own, and a stream of them, each
rendered once, would push out every page worth keeping. Such a request is answered
without being kept; its links carry its arguments along, so it is never answered with a
page kept under another address either.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import wraps
from typing import Any, Callable

from flask import Flask, Response, current_app, request

from ..auth import current_user
from ..kept import Kept
from ..runtime import runtime
from .common import read_conn
from .page_text import lang

EXTENSION = "lobbytalks.kept_pages"
KEPT_BYTES = 8 * 1024 * 1024  # 150-400 pages
# Every query argument a kept page reads (a new one must be added here, or its pages are
# never kept).
PAGE_ARGS = frozenset({"lang", "page", "answer", "before", "after", "community", "q",
                       "status", "intent", "answered", "card", "sort", "scope", "topic",
                       "profile", "state"})


@dataclass(frozen=True)
class KeptPage:
    body: bytes
    headers: list[tuple[str, str]]


def install(app: Flask) -> None:
    app.extensions[EXTENSION] = Kept(KEPT_BYTES, cost=lambda page: len(page.body))


def kept_page(view: Callable[..., Any]) -> Callable[..., Any]:
    """Serve the kept page of this address, language and reader, or keep the one the view
    renders. Inside ``login_required``, so a visitor is sent to log in first."""
    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        pages: Kept | None = current_app.extensions.get(EXTENSION)
        if pages is None or not PAGE_ARGS.issuperset(request.args.keys()):
            return view(*args, **kwargs)
        reader = current_user(request)
        key = (request.url, lang(), reader.id if reader else None)
        current = runtime().generation.current(read_conn())
        kept = pages.get(key, current)
        if kept is not None:
            return Response(kept.body, headers=kept.headers)
        response = view(*args, **kwargs)
        if response.status_code == 200:
            page = KeptPage(response.get_data(), list(response.headers.items()))
            pages.keep(key, page, current)
        return response
    return wrapper
