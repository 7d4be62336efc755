"""One process at a time per database: an exclusive advisory lock next to the file.

``serve`` holds it for its whole life; ``restore`` and ``rotate-key`` take it for their
work, so neither runs beside a server (which would keep serving the replaced file, or the
old keyring), and a server cannot start while they run.
"""
from __future__ import annotations

import fcntl
import os
from pathlib import Path


class DatabaseInUse(RuntimeError):
    pass


def lock_path(db_path: Path) -> Path:
    """Beside the file itself: a database reached through a symbolic link (``--db`` naming a
    link, a linked folder) has the lock of the one it leads to, or a second server or a
    rotate-key would take a lock of its own beside the link and run alongside."""
    real = Path(os.path.realpath(db_path))
    return real.with_name(real.name + ".lock")


def acquire(db_path: Path) -> int:
    """Hold the lock for the life of the process; :raise DatabaseInUse: if another holds it."""
    path = lock_path(db_path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DatabaseInUse(
            f"{db_path} is already being served by another LobbyTalks process "
            f"(lock held on {path}); stop it first or use another --db/--data-dir"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


def in_use(db_path: Path) -> bool:
    """True when another process (a server, a restore) holds the lock. Only looks: no lock
    file is left beside a file nobody serves (a backup), and one on a read-only mount can be
    asked about (a lock needs no write access)."""
    try:
        fd = os.open(lock_path(db_path), os.O_RDONLY)
    except FileNotFoundError:  # every holder made it first
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing also lets go of a lock taken here
    return False


def release(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
