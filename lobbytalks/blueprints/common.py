"""Small helpers every surface shares: the action named by a client, client address, JSON
responses, the read connection. (The request guards and the body they read are in ``guards``.)"""
from __future__ import annotations

from typing import Any, Callable, Mapping, TypeVar

from flask import Request, Response, jsonify, request

from ..client_connections import client_address_key
from ..db import Connection
from ..errors import ApiError
from ..runtime import runtime

Entry = TypeVar("Entry")
Handler = TypeVar("Handler", bound=Callable[..., Any])


class ActionTable:
    """The actions one module answers on a surface that dispatches by ``action``, per HTTP
    method. The surface merges the tables when it is mounted: importing registers nothing."""

    def __init__(self) -> None:
        self.by_method: dict[str, dict[str, Callable[..., Any]]] = {"GET": {}, "POST": {}}

    def get(self, name: str) -> Callable[[Handler], Handler]:
        return self._keep("GET", name)

    def post(self, name: str) -> Callable[[Handler], Handler]:
        return self._keep("POST", name)

    def _keep(self, method: str, name: str) -> Callable[[Handler], Handler]:
        def keep(handler: Handler) -> Handler:
            self.by_method[method][name] = handler
            return handler
        return keep


def merged_actions(tables: list[ActionTable], method: str) -> dict[str, Callable[..., Any]]:
    """Every table's actions for ``method``; an action two modules answer stops start-up."""
    merged: dict[str, Callable[..., Any]] = {}
    for table in tables:
        for name, handler in table.by_method[method].items():
            if merged.setdefault(name, handler) is not handler:
                raise RuntimeError(f"action {name!r} ({method}) is answered by two modules")
    return merged


def lookup_action(table: Mapping[str, Entry], name: Any, message: str | None = None, *,
                  other: tuple[str, Mapping[str, Any]] | None = None) -> Entry:
    """The entry for a client's ``action``; missing, unknown or not a string (``{}`` cannot
    even be a dict key) is ``unknown_action``. One the surface answers with its ``other``
    method (the method, its actions) is ``method_not_allowed``, as on /api/external."""
    entry = table.get(name) if isinstance(name, str) else None
    if entry is None and other is not None and isinstance(name, str) and name in other[1]:
        raise ApiError("method_not_allowed", f"{name} 需要使用 {other[0]}")
    if entry is None:
        raise ApiError("unknown_action", message)
    return entry


def client_address(req: Request) -> str:
    """Whom the per-address limits count: an IPv6 client by its /64, as connections are."""
    return client_address_key(req.remote_addr or "unknown")


def ok(data: Any, status: int = 200) -> Response:
    response = jsonify(data)
    response.status_code = status
    return response


def read_conn() -> Connection:
    """This thread's read connection, for services that only read; services that write open
    their own transaction on ``runtime().db``."""
    return runtime().db.conn


def as_reader(user: Any) -> dict[str, Any]:
    """The signed-in user (or None) as the services' ``viewer`` and ``admin`` keywords: a
    question an admin took down is read by its asker and the admins only."""
    return {"viewer": user.id if user else None, "admin": bool(user and user.is_admin)}


def base_url() -> str:
    """This instance's address as clients should use it: the configured public address,
    else the address this request came to."""
    return (runtime().settings.public_url or request.host_url).rstrip("/")
