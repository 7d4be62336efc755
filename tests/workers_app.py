"""A supervisor of trivial WSGI children, run as a script by test_workers.py.

    python tests/workers_app.py PORT MODE DIR

Each child answers every request with its pid. MODE: ``serve``; ``fail-start`` (the second
child dies before it is ready: the first leaves a mark in DIR); ``crash`` (every child
exits right after it is ready); ``slow-start`` (the first child takes ``SLOW_START_SECONDS``
to be ready, as a long migration does); ``one-thread`` (each child serves with one thread; ``/slow``
takes ``SLOW_SECONDS`` in any mode); ``lobbytalks``: two workers of the real server with its
data in DIR, started as ``serve --workers 2`` does after its refusals -- the test-only seam
that lets two processes share one SQLite file until PostgreSQL lands.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from lobbytalks import serving, workers
from lobbytalks.settings import Settings
from lobbytalks.workers import Supervisor, bind, serve_several

SLOW_SECONDS = 0.3
SLOW_START_SECONDS = 3.0


def answer_with_pid(environ, start_response):
    if environ["PATH_INFO"] == "/slow":
        time.sleep(SLOW_SECONDS)
    body = str(os.getpid()).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


def main(port: int, mode: str, folder: Path) -> int:
    if mode == "lobbytalks":
        from lobbytalks.cli.server import _app_or_none
        return serve_several(Settings.load(port=port, data_dir=str(folder), workers=2),
                             _app_or_none)
    settings = Settings(port=port, threads=1 if mode == "one-thread" else 2)
    if mode == "slow-start":  # the start's deadline there was (two minutes), made short
        workers.READY_TIMEOUT_SECONDS = 1
    sockets = bind(settings)
    mark = folder / "first-child-started"

    def child_main(ready) -> None:
        if mode == "fail-start" and mark.exists():
            print("child cannot start", file=sys.stderr, flush=True)
            raise SystemExit(3)
        if mode == "slow-start" and not mark.exists():
            time.sleep(SLOW_START_SECONDS)
        mark.touch()
        ready()
        if mode == "crash":
            raise SystemExit(1)
        serving.serve(answer_with_pid, settings, sockets=sockets)

    print("supervising", flush=True)
    return Supervisor(child_main, 2, sockets, first_delay=0.1, max_delay=0.8, stable_after=30).run()


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])))
