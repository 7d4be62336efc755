"""A throwaway PostgreSQL server for the suite: ``initdb`` + ``pg_ctl`` in a folder, trust auth.

As a script (CI)::

    python tests/pgserver.py start DIR   # prints postgresql://lobbytalks@127.0.0.1:PORT/postgres
    python tests/pgserver.py stop DIR

As a library: ``PgServer(folder).start()`` / ``.stop()``. Durability is switched off
(fsync, synchronous commit, full-page writes), and autovacuum: the data lives for one run
only.

``initdb`` refuses to run as root, so as root the server runs as the ``postgres`` user (or
``nobody`` when that does not exist) through ``runuser``, and the folder is handed to it.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
from pathlib import Path

SUPERUSER = "lobbytalks"
PORT_FILE = "port"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_binary(name: str) -> str:
    """``initdb``/``pg_ctl`` from PATH, else the newest Debian install."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                        key=lambda p: int(Path(p).parts[-3]))
    if not candidates:
        raise RuntimeError(f"{name} not found: install PostgreSQL 15 or newer (apt-get install postgresql)")
    return candidates[-1]


def _service_user() -> str | None:
    """The unprivileged user the server runs as when we are root; None when we are not."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root and neither user postgres nor nobody exists")


class PgServer:
    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).resolve()
        self.data = self.folder / "data"
        self.user = _service_user()

    @property
    def port(self) -> int:
        return int((self.folder / PORT_FILE).read_text())

    @property
    def url(self) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/postgres"

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", self.user, "--"] if self.user else []
        done = subprocess.run([*prefix, *command], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if done.returncode:
            raise RuntimeError(f"{Path(command[0]).name} failed: {done.stderr.strip()}")

    def _hand_over(self) -> None:
        """The server user must own the folder (it is the socket directory too), and reach
        it: a folder inside root's private temp folders will not do."""
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)

    def start(self) -> str:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._hand_over()
        port = free_port()
        (self.folder / PORT_FILE).write_text(str(port))
        self._run(find_binary("initdb"), "-D", str(self.data), "-A", "trust", "-U", SUPERUSER,
                  "-E", "UTF8", "--no-locale")
        self.resume()
        return self.url

    def resume(self) -> None:
        """Start the cluster made by ``start`` again (after ``stop``), on the same port."""
        port = self.port
        # No autovacuum: the suite's databases live for one test each, and an ANALYZE in any
        # of them is a commit, which moves every database's snapshot and so what the app
        # under test keeps (lobbytalks.kept.SnapshotGeneration) in the middle of a test.
        options = (f"-p {port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200 "
                   "-c autovacuum=off")
        self._run(find_binary("pg_ctl"), "-s", "-D", str(self.data), "-o", options,
                  "-l", str(self.folder / "log"), "-w", "start")

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run(find_binary("pg_ctl"), "-s", "-D", str(self.data), "-m", "fast", "-w", "stop")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: pgserver.py start|stop DIR", file=sys.stderr)
        return 2
    server = PgServer(argv[1])
    if argv[0] == "start":
        print(server.start())
    else:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
