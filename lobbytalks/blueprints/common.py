"""Small helpers every surface shares: JSON bodies, client address, JSON responses."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, Request, Response, jsonify, request

from ..guards import check_not_cross_site, check_origin, read_json_object

WEB_BODY_LIMIT = 64 * 1024
COMMUNITIES_BODY_LIMIT = 4 * 1024
EXTERNAL_BODY_LIMIT = 64 * 1024
# What the server itself buffers at most (lobbytalks.serving): the largest of the above.
LARGEST_BODY_LIMIT = max(WEB_BODY_LIMIT, COMMUNITIES_BODY_LIMIT, EXTERNAL_BODY_LIMIT)


def guard_origin(bp: Blueprint) -> None:
    """Every request to the blueprint, reads included, must come from the service's origin."""
    bp.before_request(lambda: check_origin(request))


def guarded_body(limit: int) -> dict[str, Any]:
    """A write: no cross-site fetch, then the JSON object body (415/413/400)."""
    check_not_cross_site(request)
    return read_json_object(request, limit)


def client_address(req: Request) -> str:
    return req.remote_addr or "unknown"


def ok(data: Any, status: int = 200) -> Response:
    response = jsonify(data)
    response.status_code = status
    return response
