"""Small helpers every surface shares: the action named by a client, client address, JSON
responses, the read connection. (The request guards and the body they read are in ``guards``.)"""
from __future__ import annotations

from typing import Any, Mapping, TypeVar

from flask import Request, Response, jsonify, request

from ..db import Connection
from ..errors import ApiError
from ..runtime import runtime

Entry = TypeVar("Entry")


def lookup_action(table: Mapping[str, Entry], name: Any, message: str | None = None) -> Entry:
    """The entry for a client's ``action``; missing, unknown or not a string (``{}`` cannot
    even be a dict key) is ``unknown_action``."""
    entry = table.get(name) if isinstance(name, str) else None
    if entry is None:
        raise ApiError("unknown_action", message)
    return entry


def client_address(req: Request) -> str:
    return req.remote_addr or "unknown"


def ok(data: Any, status: int = 200) -> Response:
    response = jsonify(data)
    response.status_code = status
    return response


def read_conn() -> Connection:
    """This thread's read connection, for services that only read; services that write open
    their own transaction on ``runtime().db``."""
    return runtime().db.conn


def base_url() -> str:
    """This instance's address as clients should use it: the configured public address,
    else the address this request came to."""
    return (runtime().settings.public_url or request.host_url).rstrip("/")
