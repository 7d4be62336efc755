"""How each surface renders an ``ApiError``: one table keyed by path prefix.

``/api/external`` answers ``{error, code}``, the rest of ``/api/`` the web envelope (the
same two fields), exact paths with their own format (MCP) register a renderer, and every
other path is a page: the web blueprint registers the site's error page for those.
"""
from __future__ import annotations

from typing import Callable

from flask import Request, Response, jsonify

from .auth import bearer_token
from .errors import ApiError

# Everything under /api/external gets the {error, code} envelope, except the paths below
# that register a renderer of their own.
_EXTERNAL_PREFIXES = ("/api/external",)


def _external(error: ApiError) -> Response:
    return jsonify(error.external_body())


def _web(error: ApiError) -> Response:
    return jsonify(error.web_body())


# The surfaces an agent's Bearer token opens: a 401 there names the scheme (RFC 6750 §3).
# No resource_metadata is offered: there is no OAuth here, the token comes from the web page.
BEARER_PATHS = ("/api/external", "/api/external/mcp")
BEARER_CHALLENGE = 'Bearer realm="lobbytalks"'


# Exact paths whose surface has its own error format (MCP answers in JSON-RPC), registered
# by that surface's blueprint so that errors escaping its view are rendered the same way.
_OWN_RENDERERS: dict[str, Callable[[ApiError], Response]] = {}


_PAGE_RENDERER: list[Callable[[ApiError], Response]] = []


def register_renderer(path: str, renderer: Callable[[ApiError], Response]) -> None:
    _OWN_RENDERERS[path] = renderer


def register_page_renderer(renderer: Callable[[ApiError], Response]) -> None:
    """HTML paths (pages, static files, docs, unknown paths) get the site's error page."""
    _PAGE_RENDERER[:] = [renderer]


def is_api_path(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def renderer_for(path: str) -> Callable[[ApiError], Response]:
    if path in _OWN_RENDERERS:
        return _OWN_RENDERERS[path]
    if path.startswith(_EXTERNAL_PREFIXES):
        return _external
    if not is_api_path(path) and _PAGE_RENDERER:
        return _PAGE_RENDERER[0]
    return _web


# An MCP client given no token looks for OAuth: discovery under /.well-known/, then dynamic
# client registration by a JSON POST to /register (a page here). Both get a JSON answer in
# OAuth's error shape (RFC 6749 5.2), so the client reports that an Agent Token is needed
# instead of failing to parse an HTML page.
NO_OAUTH = ("This server has no OAuth: create an Agent Token for your agent on the site's "
            "Agents page and send it as a Bearer token. / 本站没有 OAuth：请在站点的“智能体”"
            "页面为你的智能体创建 Agent Token，以 Bearer Token 发送。")


def _no_oauth(error: ApiError) -> Response:
    return jsonify({"error": "invalid_request", "error_description": NO_OAUTH,
                    "code": error.code})


# Where a client that found no OAuth metadata posts by default (MCP 2025-03-26's fallback).
OAUTH_DEFAULT_ENDPOINTS = ("/register", "/token", "/authorize")


def _asks_for_oauth(request: Request) -> bool:
    return request.path.startswith("/.well-known/") or (
        request.path in OAUTH_DEFAULT_ENDPOINTS and request.mimetype == "application/json")


def render_error(request: Request, error: ApiError) -> Response:
    renderer = _no_oauth if _asks_for_oauth(request) else renderer_for(request.path)
    response = renderer(error)
    response.status_code = error.status
    for name, value in error.headers().items():
        response.headers[name] = value
    if error.code == "method_not_allowed":
        response.headers.setdefault("Allow", "GET, POST")
    if error.code == "unauthorized" and request.path in BEARER_PATHS:
        # RFC 6750 3.1: a token that was sent and refused is named as such; a request that
        # sent none gets the bare challenge.
        response.headers["WWW-Authenticate"] = (
            BEARER_CHALLENGE if bearer_token(request) is None
            else f'{BEARER_CHALLENGE}, error="invalid_token"')
    return response
