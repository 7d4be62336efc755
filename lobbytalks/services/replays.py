"""Creations sent again after their response was lost: the web's ``topic`` and the
communities' ``create`` take an optional ``requestId`` (an extension). The same request again
gets what the first made, ``replayed: true``; the same id with other fields is a conflict.

What is compared is a digest of the request's public fields as they are stored, never a
private context (which is kept nowhere but in its sealed copy).
"""
from __future__ import annotations

from typing import Any

from ..db import Row
from ..errors import ApiError
from ..jsonfast import dumps
from ..security import sha256_hex


def request_key(request_id: str | None, public: list[Any]) -> dict[str, str | None]:
    """The columns a creation keeps its request by: the id in lower case (it is compared
    without regard to case) and the digest; both None without a ``requestId``."""
    if request_id is None:
        return {"request_id": None, "request_hash": None}
    return {"request_id": request_id.lower(), "request_hash": sha256_hex(dumps(public))}


def replayed(row: Row | None, request: dict[str, Any]) -> dict[str, Any] | None:
    """``{id, replayed}`` for the row this request made before (found by its id), None
    when there is none.

    :raise 409 idempotency_conflict: the ``requestId`` made something else."""
    if row is None:
        return None
    if row["request_hash"] != request["request_hash"]:
        raise ApiError("idempotency_conflict", "这个 requestId 已用于另一次创建；新的创建请换一个")
    return {"id": row["id"], "replayed": True}
