"""How each surface renders an ``ApiError``: one table keyed by path prefix."""
from __future__ import annotations

from typing import Callable

from flask import Request, Response, jsonify

from .errors import ApiError

# Longest prefix first. The MCP surface renders its own JSON-RPC errors; anything that
# escapes it still gets the external envelope.
_EXTERNAL_PREFIXES = ("/api/external",)


def _external(error: ApiError) -> Response:
    return jsonify(error.external_body())


def _web(error: ApiError) -> Response:
    return jsonify(error.web_body())


def renderer_for(path: str) -> Callable[[ApiError], Response]:
    return _external if path.startswith(_EXTERNAL_PREFIXES) else _web


def render_error(request: Request, error: ApiError) -> Response:
    response = renderer_for(request.path)(error)
    response.status_code = error.status
    for name, value in error.headers().items():
        response.headers[name] = value
    if error.code == "method_not_allowed":
        response.headers.setdefault("Allow", "GET, POST")
    return response
