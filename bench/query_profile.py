"""Which SQL statements each page and agent call runs, and the plan SQLite picks for each.

Not a test and not the benchmark: it opens a seeded data folder (``python -m bench.seed``)
in-process, sends each request once through the Flask test client as a visitor, as a bench
user or as a bench agent, records every statement the request runs (SQLite's trace
callback, with the values bound) and prints the count per request and the
``EXPLAIN QUERY PLAN`` lines that scan a table or sort in a temporary B-tree.

    .venv/bin/python -m bench.query_profile /work/bench-scale/large
    .venv/bin/python -m bench.query_profile DIR --plans     # every statement's whole plan

The claim cycle writes (one claim, heartbeat and submit on a claimable question), like a
benchmark run does.
"""
from __future__ import annotations

import argparse
import sys
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from bench.run import claimable_topics, submit_fields  # noqa: E402
from bench.seed import BENCH_PASSWORD, Manifest  # noqa: E402
from lobbytalks import create_app  # noqa: E402
from lobbytalks.settings import Settings  # noqa: E402

# Transaction control, and the statements SQLite runs inside a virtual table (FTS5 reading
# its shadow tables: traced with a leading "--"), which the app does not send.
SKIPPED = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "PRAGMA", "--")
BAD_PLAN = ("SCAN ", "TEMP B-TREE")


def trace(conn, statements: list[str]) -> None:
    conn.set_trace_callback(lambda sql: statements.append(sql)
                            if not sql.lstrip().upper().startswith(SKIPPED) else None)


def plan(conn, sql: str) -> list[str]:
    try:
        return [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
    except Exception as error:  # noqa: BLE001 (a statement that cannot be re-planned alone)
        return [f"(no plan: {error})"]


def requests(manifest: Manifest, topic: str):
    """(label, who, method, path, json body or None); who is 'visitor', 'user' or 'agent'."""
    ext = "/api/external"
    task: dict = {}

    def claim():
        return {"action": "claim_task", "topic": topic, "requestId": str(uuid.uuid4())}

    yield "/", "visitor", "GET", "/", None
    yield "/communities", "visitor", "GET", "/communities", None
    yield "/c/lobby", "visitor", "GET", "/c/lobby", None
    yield "/c/lobby (member)", "user", "GET", "/c/lobby", None
    yield "/questions", "visitor", "GET", "/questions", None
    yield "/questions?q=备份", "visitor", "GET", "/questions?q=备份", None
    yield "/q/<hot> visitor", "visitor", "GET", f"/q/{manifest.hot_read}", None
    yield "/q/<hot> reader", "user", "GET", f"/q/{manifest.hot_read}", None
    yield "/tasks", "user", "GET", "/tasks", None
    yield "/agents", "user", "GET", "/agents", None
    yield "/inbox", "user", "GET", "/inbox", None
    yield "/ (user)", "user", "GET", "/", None
    yield "list_topics", "agent", "GET", f"{ext}?action=list_topics", None
    yield "get_context allowed", "agent", "GET", f"{ext}?action=get_context&topic={manifest.hot_read}", None
    yield "get_context denied", "agent", "GET", f"{ext}?action=get_context&topic={manifest.hot_noread}", None
    yield "claim_task", "agent", "POST", ext, claim()
    yield "heartbeat", "agent", "POST", ext, {"action": "heartbeat", "taskId": task.get("id")}
    yield "submit_result", "agent", "POST", ext, {"action": "submit_result",
                                                  **submit_fields(task.get("id", ""))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--plans", action="store_true", help="print every statement's plan")
    args = parser.parse_args()
    manifest = Manifest.load(args.data_dir)
    app = create_app(Settings.load(env={"LOBBYTALKS_DATA_DIR": str(args.data_dir),
                                        "LOBBYTALKS_ACCESS_LOG": "false",
                                        "LOBBYTALKS_RATE_TOKEN": "100000/second",
                                        "LOBBYTALKS_RATE_CLAIM": "100000/second"}))
    db = app.config["LOBBYTALKS"].db
    visitor, user = app.test_client(), app.test_client()
    bench = manifest.agents[0]
    login = user.post("/api/community", json={"action": "login", "username": bench.username,
                                              "password": BENCH_PASSWORD})
    assert login.status_code == 200, login.get_json()
    bearer = {"Authorization": f"Bearer {bench.token}"}
    topic = claimable_topics(args.data_dir / "lobbytalks.db", manifest)[0]
    task_id = ""
    seen: Counter[str] = Counter()
    for label, who, method, path, body in requests(manifest, topic):
        if body and body.get("taskId") is None and "taskId" in body:
            body["taskId"] = task_id
        if body and body.get("action") == "submit_result":
            body.update(submit_fields(task_id))
        client = visitor if who == "visitor" else user
        statements: list[str] = []
        trace(db.conn, statements)
        response = client.open(path, method=method, json=body,
                               headers=bearer if who == "agent" else None)
        db.conn.set_trace_callback(None)
        if label == "claim_task":
            task_id = response.get_json()["task"]["id"]
        print(f"\n{label}: HTTP {response.status_code}, {len(statements)} statements, "
              f"{len(response.data)} bytes")
        for sql in statements:
            lines = plan(db.conn, sql) if sql.lstrip().upper().startswith(("SELECT", "WITH")) \
                else []
            bad = [line for line in lines if line.startswith(BAD_PLAN) or " TEMP B-TREE" in line]
            short = " ".join(sql.split())[:150]
            if args.plans or bad:
                print(f"  {short}")
                for line in (lines if args.plans else bad):
                    print(f"      {line}")
            seen[short[:60]] += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
