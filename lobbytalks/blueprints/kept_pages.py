"""Pages kept until the database changes (``lobbytalks.kept``), for visitors and for each
signed-in reader.

A page is kept under its address, language and reader: a visitor's is the same for every
visitor; a signed-in person's is served only to requests whose session says it is them,
checked on every request as before. Only pages answered 200 are kept, with their headers.
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
        if pages is None:
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
