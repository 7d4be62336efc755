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
    """(label, who, method, path, body) with who 'visitor', 'user' or 'agent'; a body is a
    function of the task id the claim returned."""
    ext = "/api/external"
    context = f"{ext}?action=get_context&topic="
    for label, who, path in (
            ("/", "visitor", "/"), ("/communities", "visitor", "/communities"),
            ("/c/lobby", "visitor", "/c/lobby"), ("/c/lobby (member)", "user", "/c/lobby"),
            ("/questions", "visitor", "/questions"),
            ("/questions?q=备份", "visitor", "/questions?q=备份"),
            ("/q/<hot> visitor", "visitor", f"/q/{manifest.hot_read}"),
            ("/q/<hot> reader", "user", f"/q/{manifest.hot_read}"),
            ("/tasks", "user", "/tasks"), ("/agents", "user", "/agents"),
            ("/inbox", "user", "/inbox"), ("/ (user)", "user", "/"),
            ("list_topics", "agent", f"{ext}?action=list_topics"),
            ("get_context allowed", "agent", context + manifest.hot_read),
            ("get_context denied", "agent", context + manifest.hot_noread)):
        yield label, who, "GET", path, None
    yield "claim_task", "agent", "POST", ext, lambda _: {
        "action": "claim_task", "topic": topic, "requestId": str(uuid.uuid4())}
    yield "heartbeat", "agent", "POST", ext, lambda task: {"action": "heartbeat", "taskId": task}
    yield "submit_result", "agent", "POST", ext, lambda task: {
        "action": "submit_result", **submit_fields(task)}


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
    for label, who, method, path, body in requests(manifest, topic):
        client = visitor if who == "visitor" else user
        statements: list[str] = []
        # A write runs on the writer's connection, its reads before BEGIN on the thread's.
        connections = (db.conn, db._writer())
        for conn in connections:
            trace(conn, statements)
        response = client.open(path, method=method, json=body(task_id) if body else None,
                               headers=bearer if who == "agent" else None)
        for conn in connections:
            conn.set_trace_callback(None)
        if label == "claim_task":
            task_id = response.get_json()["task"]["id"]
        print(f"\n{label}: HTTP {response.status_code}, {len(statements)} statements, "
              f"{len(response.data)} bytes")
        for sql in statements:
            lines = plan(db.conn, sql) if sql.lstrip().upper().startswith(("SELECT", "WITH")) \
                else []
            bad = [line for line in lines if (line.startswith(BAD_PLAN) or " TEMP B-TREE" in line)
                   and "VIRTUAL TABLE" not in line]  # an FTS5 MATCH is its own index
            short = " ".join(sql.split())[:150]
            if args.plans or bad:
                print(f"  {short}")
                for line in (lines if args.plans else bad):
                    print(f"      {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
