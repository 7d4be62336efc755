"""GET /healthz: 200 when the database answers and the schema is current, else 503."""
from __future__ import annotations

from flask import Blueprint

from ..db import DatabaseError, applied_version, latest_version
from .common import ok, read_conn

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    try:
        current = applied_version(read_conn())  # the server migrated it when it started
    except DatabaseError:
        return ok({"ok": False, "error": "database unavailable"}, 503)
    if current != latest_version():
        return ok({"ok": False, "error": "schema not migrated"}, 503)
    return ok({"ok": True})
