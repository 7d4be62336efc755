"""JSON through orjson: responses and every JSON column (written with ``dumps``, read with
``loads``: one encoding for what is stored).

Answers carry sources, tool runs and conditions as JSON columns, and ``get_context`` sends
40 of them (about 70 KB): the bench showed the standard library's encoder and decoder as the
largest single cost of that request. orjson writes UTF-8 directly (no ``\\u`` escapes for
Chinese text) and keeps key order, as the API's documents expect.
"""
from __future__ import annotations

from typing import Any, Callable

import orjson
from flask import Flask, Response
from flask.json.provider import JSONProvider


def dumps(value: Any) -> str:
    """A JSON column's text: compact, UTF-8 as it is (no ``\\u`` escapes)."""
    return orjson.dumps(value).decode("utf-8")


def loads(text: str | bytes) -> Any:
    return orjson.loads(text)


class Encoded(dict):
    """A result that no longer changes (one kept between requests, ``lobbytalks.kept``):
    each JSON form of it is written once and spliced into every response that carries it."""

    __slots__ = ("_forms",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._forms: dict[str, orjson.Fragment] = {}

    def encoded(self, form: str, write: Callable[["Encoded"], bytes]) -> orjson.Fragment:
        if form not in self._forms:
            self._forms[form] = orjson.Fragment(write(self))
        return self._forms[form]


def as_json(value: Any) -> Any:
    """``value`` as orjson should write it: an ``Encoded`` result by its kept encoding."""
    return value.encoded("json", orjson.dumps) if isinstance(value, Encoded) else value


class OrjsonProvider(JSONProvider):
    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return orjson.dumps(obj).decode("utf-8")

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return orjson.loads(s)

    def response(self, *args: Any, **kwargs: Any) -> Response:
        data = self._prepare_response_obj(args, kwargs)
        return self._app.response_class(orjson.dumps(as_json(data)), mimetype="application/json")


def install(app: Flask) -> None:
    app.json = OrjsonProvider(app)
