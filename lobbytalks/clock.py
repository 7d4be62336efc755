"""The only source of time: integer Unix seconds.

``LOBBYTALKS_CLOCK_OFFSET_FILE`` may name a file holding an integer number of seconds added
to the wall clock. It is re-read on every call so end-to-end tests can move a running
server's clock (lease expiry, token expiry) without restarting it.
"""
from __future__ import annotations

import time
from pathlib import Path

_offset_file: Path | None = None


def configure(offset_file: str | Path | None) -> None:
    global _offset_file
    _offset_file = Path(offset_file) if offset_file else None


def offset() -> int:
    if _offset_file is None:
        return 0
    try:
        return int(_offset_file.read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def now() -> int:
    return int(time.time()) + offset()
