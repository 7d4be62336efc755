"""A throwaway Redis from Debian's redis-server: a pytest fixture and a CI script.

    python tests/redisserver.py start DIR   # prints redis://127.0.0.1:PORT/0, writes DIR/url
    python tests/redisserver.py stop DIR

No persistence, bound to 127.0.0.1 only; everything it writes stays in DIR.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

if __package__ in (None, ""):  # run as a script: python tests/redisserver.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.processes import gone


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.pid_file = self.folder / "redis.pid"

    @property
    def url(self) -> str:
        return (self.folder / "url").read_text().strip()

    def start(self, port: int | None = None, password: str = "") -> str:
        """Start it (again on ``port`` for a restart) and wait until it answers PING."""
        self.folder.mkdir(parents=True, exist_ok=True)
        port = port or _free_port()
        auth = ["--requirepass", password] if password else []
        subprocess.run(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(self.folder),
             "--save", "", "--appendonly", "no", "--daemonize", "yes",
             "--pidfile", str(self.pid_file), "--logfile", str(self.folder / "redis.log"),
             *auth], check=True)
        url = f"redis://{':' + password + '@' if password else ''}127.0.0.1:{port}/0"
        (self.folder / "url").write_text(url + "\n")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self._answers(port):
                return url
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer on port {port}; see {self.folder}/redis.log")

    @staticmethod
    def _answers(port: int) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(64).startswith((b"+PONG", b"-NOAUTH"))
        except OSError:
            return False

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/")[0])

    def keys(self, pattern: str = "*") -> list[str]:
        import redis
        return [k.decode() for k in redis.Redis.from_url(self.url).keys(pattern)]

    def stop(self) -> None:
        try:
            pid = int(self.pid_file.read_text())
        except (FileNotFoundError, ValueError):
            return
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if gone(pid):
                return
            time.sleep(0.02)
        os.kill(pid, signal.SIGKILL)

    def flush(self) -> None:
        import redis
        redis.Redis.from_url(self.url).flushall()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server) -> str:
    """The session's Redis, emptied for this test."""
    redis_server.flush()
    return redis_server.url


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in {"start", "stop"}:
        sys.exit("usage: redisserver.py start|stop DIR")
    redis_server_in = RedisServer(Path(sys.argv[2]))
    if sys.argv[1] == "start":
        print(redis_server_in.start())
    else:
        redis_server_in.stop()
