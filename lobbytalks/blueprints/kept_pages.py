"""Pages kept until the database changes, for visitors and for each signed-in reader.

A page is kept under its address, language and reader (a visitor's is the same for every
visitor; a signed-in person's is served only to requests whose session says it is them,
checked on every request as before) and under the database's *generation*, a number that moves as soon as any thread of this
process notices a change: SQLite's ``data_version`` of the thread's connection moves when
another connection (another thread, or another process such as ``lobbytalks admin``) has
committed, ``total_changes`` when the thread's own connection wrote. Every lookup first
looks, so a page kept before a commit is never served after it: a withdrawn share, a
hidden answer, a closed question or a lost membership leaves the page with the write that
did it. A short lifetime covers what changes with the clock alone (a lease running out).

Only with SQLite, where one process serves the file. With PostgreSQL several processes
write and none of them would see the others' commits; pages are rendered every time.
"""
from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass
from functools import wraps
from typing import Any, Callable

from flask import Flask, Response, current_app, request

from ..auth import current_user
from .common import read_conn
from .page_text import lang

EXTENSION = "lobbytalks.kept_pages"
KEPT_BYTES = 16 * 1024 * 1024  # 300-800 pages
KEPT_SECONDS = 5.0


@dataclass(frozen=True)
class KeptPage:
    body: bytes
    headers: list[tuple[str, str]]
    kept_until: float


class KeptPages:
    def __init__(self, kept_bytes: int = KEPT_BYTES, kept_seconds: float = KEPT_SECONDS) -> None:
        self.kept_bytes, self.kept_seconds = kept_bytes, kept_seconds
        self._pages: dict[tuple[Any, ...], KeptPage] = {}
        self._size = 0
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._generation = 0
        self._local = threading.local()

    def generation(self, conn: Any) -> int:
        """The current generation, after noticing any change this thread's connection
        can see since it last looked."""
        seen = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)
        if getattr(self._local, "seen", None) != seen:
            with self._lock:
                self._generation = next(self._numbers)
            self._local.seen = seen
        return self._generation

    def get(self, key: tuple[Any, ...]) -> KeptPage | None:
        kept = self._pages.get(key)
        if kept is None or kept.kept_until < time.monotonic():
            return None
        return kept

    def keep(self, key: tuple[Any, ...], response: Response) -> None:
        body = response.get_data()
        with self._lock:
            if self._size + len(body) > self.kept_bytes:
                self._pages.clear()  # older generations are dead weight anyway
                self._size = 0
            self._pages[key] = KeptPage(body, list(response.headers.items()),
                                        time.monotonic() + self.kept_seconds)
            self._size += len(body)


def install(app: Flask, dialect: str) -> None:
    if dialect == "sqlite":
        app.extensions[EXTENSION] = KeptPages()


def kept_page(view: Callable[..., Any]) -> Callable[..., Any]:
    """Serve the kept page of this address, language and reader, or keep the one the view
    renders (200 only). Inside ``login_required``, so a visitor is sent to log in first."""
    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        pages: KeptPages | None = current_app.extensions.get(EXTENSION)
        if pages is None:
            return view(*args, **kwargs)
        reader = current_user(request)
        key = (request.url, lang(), reader.id if reader else None,
               pages.generation(read_conn()))
        kept = pages.get(key)
        if kept is not None:
            return Response(kept.body, headers=kept.headers)
        response = view(*args, **kwargs)
        if response.status_code == 200:
            pages.keep(key, response)
        return response
    return wrapper
