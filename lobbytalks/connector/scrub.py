"""The token taken out of what a harness left in its work folder, once the attempt has read it.

A harness may print the token, or a model talked into leaking it may write it backwards, in
ROT13, hex or base64: each of those runs is replaced. A file that still holds it in some
other disguise (spelt out with gaps, woven, in pieces: what the result check refuses) is
replaced by a notice, and so is one too large to read (only what the connector captured
itself is bounded by the harness limits). Only regular files are read: opening a FIFO the
harness made would wait for a writer for good, and a link leads somewhere not the
harness's to have rewritten.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterator

from ..security import holds_disguised, written_forms

SCRUB_LIMIT = 16 * 1024 * 1024  # bytes; as much as the connector keeps of a harness's output
REDACTED = b"[redacted]"
TOO_LARGE = (b"[removed by lobbytalks agent: larger than 16 MiB, so it could not be searched "
             b"for the Agent Token]\n")
DISGUISED = b"[removed by lobbytalks agent: it held the Agent Token in a disguised form]\n"


def scrubbed_files(folder: Path, secrets: tuple[str, ...]) -> Iterator[tuple[Path, bytes]]:
    """``(path, what it should hold instead)`` for every file under ``folder``, in folders
    of its own too, that holds a secret or is too large to search."""
    for top, _, names in os.walk(folder):
        for name in names:
            path = Path(top, name)
            data = _regular_file(path)
            if data is None:
                continue
            cleaned = TOO_LARGE if len(data) > SCRUB_LIMIT else without_secrets(data, secrets)
            if cleaned != data:
                yield path, cleaned


def _regular_file(path: Path) -> bytes | None:
    """Up to ``SCRUB_LIMIT`` + 1 bytes of a regular file; None for anything else."""
    try:  # not following a link, and not waiting for a FIFO's writer
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return file.read(SCRUB_LIMIT + 1)


def without_secrets(data: bytes, secrets: tuple[str, ...]) -> bytes:
    for secret in secrets:
        for form in written_forms(secret):
            data = data.replace(form.encode(), REDACTED)
    text = data.decode("utf-8", "replace")
    if any(holds_disguised(text, secret) for secret in secrets):
        return DISGUISED
    return data
