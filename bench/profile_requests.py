"""What one request costs inside the app, without sockets, threads or a client.

Not a test and not the benchmark: it calls the WSGI app directly with a prepared environ,
so the figures are the app's own microseconds per request (hooks, headers, limiter, access
log, JSON, templates) and do not depend on how busy the machine's other cores are.

    .venv/bin/python -m bench.profile_requests              # µs per request, each surface
    .venv/bin/python -m bench.profile_requests --profile healthz   # and cProfile's top entries
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import tempfile
import time
from typing import Callable

from werkzeug.test import EnvironBuilder

from lobbytalks import create_app
from lobbytalks.settings import Settings


def prepare(data_dir: str):
    """An app with one person, one agent in the lobby and one question; the access log on."""
    app = create_app(Settings(data_dir=data_dir, argon2_memory_kib=8, access_log=True,
                              rate_token="100000/minute"))
    client = app.test_client()
    client.post("/api/community", json={"action": "register", "username": "bench1",
                                        "password": "correct horse 1"})
    client.post("/api/communities", json={"action": "join", "community": "lobby"})
    topic = client.post("/api/community", json={"action": "topic",
                                                "title": "如何在 SQLite 中安全地做在线备份？"}
                        ).get_json()["id"]
    agent = client.post("/api/external/manage", json={
        "action": "register", "name": "查证虾", "perspective": "先给结论", "client": "codex"}
    ).get_json()
    return app, agent["token"], topic


def requests_for(token: str, topic: str) -> dict[str, Callable[[], dict]]:
    bearer = {"Authorization": f"Bearer {token}"}
    mcp_body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "list_topics", "arguments": {"community": "lobby"}}}).encode()

    def environ(path: str, **kwargs) -> Callable[[], dict]:
        def build() -> dict:
            return EnvironBuilder(path=path, **kwargs).get_environ()
        return build

    return {
        "healthz": environ("/healthz"),
        "list_topics": environ("/api/external", query_string={"action": "list_topics",
                                                              "community": "lobby"},
                               headers=bearer),
        "mcp_list_topics": environ("/api/external/mcp", method="POST", data=mcp_body,
                                   content_type="application/json",
                                   headers={**bearer,
                                            "Accept": "application/json, text/event-stream"}),
        "page_home": environ("/"),
        "page_question": environ(f"/q/{topic}"),
    }


def call(app, environ: dict) -> int:
    status = []
    body = app(environ, lambda s, h, e=None: status.append(s))
    b"".join(body)
    getattr(body, "close", lambda: None)()
    return int(status[0].split()[0])


def per_request_us(app, build: Callable[[], dict], n: int) -> float:
    environs = [build() for _ in range(n)]
    started = time.thread_time()  # CPU time: other processes on the machine do not count
    for environ in environs:
        call(app, environ)
    return (time.thread_time() - started) / n * 1e6


def calls_per_request(app, build: Callable[[], dict], n: int = 100) -> float:
    """Python function calls per request: a figure a busy machine does not change."""
    environs = [build() for _ in range(n)]
    profiler = cProfile.Profile()
    profiler.enable()
    for environ in environs:
        call(app, environ)
    profiler.disable()
    return pstats.Stats(profiler).total_calls / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1000, help="requests per surface and round")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds over every surface; the fastest round is shown")
    parser.add_argument("--profile", help="also print cProfile's top entries for this one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        os.environ.setdefault("LOBBYTALKS_ACCESS_LOG", "true")
        app, token, topic = prepare(data_dir)
        sys.stderr = open(os.devnull, "w")  # the access log: formatted and written, unread
        from bench.floor_app import create_app as floor_app
        floor = floor_app()
        surfaces = {"floor": (floor, lambda: EnvironBuilder(path="/").get_environ())}
        surfaces.update((name, (app, build)) for name, build in requests_for(token, topic).items())
        best: dict[str, float] = {}
        for name, (target, build) in surfaces.items():
            assert call(target, build()) == 200, name
            per_request_us(target, build, n=200)  # warm: templates compiled, caches filled
        for _ in range(args.rounds):  # interleaved, so a busy moment hits every surface
            for name, (target, build) in surfaces.items():
                spent = per_request_us(target, build, args.n)
                best[name] = min(best.get(name, spent), spent)
        for name, spent in best.items():
            target, build = surfaces[name]
            print(f"{name:18} {spent:8.1f} µs/request  {spent / best['floor']:5.2f}x floor  "
                  f"{calls_per_request(target, build):6.0f} calls/request")
        for name, (target, build) in surfaces.items():
            if name == args.profile:
                environs = [build() for _ in range(args.n)]
                profiler = cProfile.Profile()
                profiler.enable()
                for environ in environs:
                    call(target, environ)
                profiler.disable()
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(35)
                print(out.getvalue())


if __name__ == "__main__":
    main()
