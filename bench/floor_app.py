"""The floor: the cheapest JSON endpoint Flask + waitress can serve, set up like LobbyTalks.

``bench/run.py`` measures it in the same run as the real endpoints, so every figure can be
read as a fraction of what this stack manages when the handler does nothing.

With ``--db`` it also serves two references that show what the stack allows once SQLite
is involved, done the way LobbyTalks does it (``lobbytalks.db.connect``, one connection
per thread, one process-wide write lock around ``BEGIN IMMEDIATE``):
``GET /read?id=TOPIC`` (one primary-key read) and ``POST /write`` with ``{"id": TOPIC}``
(one write transaction rewriting the row's ``updated`` with its own value: no visible
change).

Usage: ``python -m bench.floor_app --port PORT [--threads N] [--db PATH]``
"""
from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/floor_app.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import waitress  # noqa: E402
from flask import Flask, jsonify, request  # noqa: E402


def create_app(db_path: str | None = None) -> Flask:
    app = Flask(__name__)

    @app.get("/")
    def floor():
        return jsonify({"ok": True})

    if db_path:
        _add_references(app, db_path)
    return app


def _add_references(app: Flask, db_path: str) -> None:
    from lobbytalks.db import Database

    db = Database(db_path)

    @app.get("/read")
    def read():
        row = db.one("SELECT id, title, message_count FROM topics WHERE id = ?",
                     (request.args["id"],))
        return jsonify({"id": row["id"], "title": row["title"], "count": row["message_count"]})

    @app.post("/write")
    def write():
        with db.transaction() as conn:
            conn.execute("UPDATE topics SET updated = updated WHERE id = ?", (request.json["id"],))
        return jsonify({"ok": True})


def _stop(signum, frame) -> None:
    raise SystemExit(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.floor_app",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=8, help="waitress threads (default 8, "
                        "like LobbyTalks)")
    parser.add_argument("--db", help="a LobbyTalks database: adds the /read and /write references")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    # The same waitress options as `lobbytalks serve`.
    waitress.serve(create_app(args.db), host=args.host, port=args.port, threads=args.threads,
                   ident="lobbytalks", clear_untrusted_proxy_headers=True, _quiet=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
