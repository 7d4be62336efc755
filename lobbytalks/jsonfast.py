"""JSON through orjson: every response body, and reading the JSON columns of messages
(services write those columns with the standard library).

Answers carry sources, tool runs and conditions as JSON columns, and ``get_context`` sends
40 of them (about 70 KB): the bench showed the standard library's encoder and decoder as the
largest single cost of that request. orjson writes UTF-8 directly (no ``\\u`` escapes for
Chinese text) and keeps key order, as the API's documents expect.
"""
from __future__ import annotations

from typing import Any

import orjson
from flask import Flask, Response
from flask.json.provider import JSONProvider


def loads(text: str | bytes) -> Any:
    return orjson.loads(text)


class OrjsonProvider(JSONProvider):
    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return orjson.dumps(obj).decode("utf-8")

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return orjson.loads(s)

    def response(self, *args: Any, **kwargs: Any) -> Response:
        data = self._prepare_response_obj(args, kwargs)
        return self._app.response_class(orjson.dumps(data), mimetype="application/json")


def install(app: Flask) -> None:
    app.json = OrjsonProvider(app)
