"""The token taken out of what a harness left in its work folder, once the attempt has read it.

A harness may print the token, or a model talked into leaking it may write it backwards, in
ROT13, hex or base64, in UTF-8 or UTF-16, in a file or in a file's name: each of those runs
is replaced. A file that still holds it in some other disguise (spelt out with gaps, woven,
in pieces: what the result check refuses) is replaced by a notice, and so is one too large
to read (only what the connector captured itself is bounded by the harness limits). Only
regular files are read: opening a FIFO the harness made would wait for a writer for good,
and a link leads somewhere not the harness's to have rewritten.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable

from ..security import holds_disguised, written_forms

SCRUB_LIMIT = 16 * 1024 * 1024  # bytes; as much as the connector keeps of a harness's output
REDACTED = b"[redacted]"
TOO_LARGE = (b"[removed by lobbytalks agent: larger than 16 MiB, so it could not be searched "
             b"for the Agent Token]\n")
DISGUISED = b"[removed by lobbytalks agent: it held the Agent Token in a disguised form]\n"


def scrub(folder: Path, secrets: tuple[str, ...], write: Callable[[Path, bytes], None]) -> None:
    """Every name under ``folder`` holding a secret renamed, then every file holding one (or
    too large to search) given to ``write`` with what it should hold instead. A ``folder``
    that is a link is not the harness's own (``os.walk`` would follow it)."""
    if folder.is_symlink() or not folder.is_dir():
        return
    _rename_named(folder, secrets)
    for top, _, names in os.walk(folder):
        for name in names:
            path = Path(top, name)
            data = _regular_file(path)
            if data is None:
                continue
            cleaned = TOO_LARGE if len(data) > SCRUB_LIMIT else without_secrets(data, secrets)
            if cleaned != data:
                write(path, cleaned)


def _rename_named(folder: Path, secrets: tuple[str, ...]) -> None:
    """Files and folders whose names hold a secret renamed, deepest first (a link itself,
    not what it points to)."""
    for top, dirs, files in os.walk(folder, topdown=False):
        for name in dirs + files:
            named = os.fsencode(name)
            cleaned = without_secrets(named, secrets)
            if cleaned == named:
                continue
            base = os.fsdecode(REDACTED if cleaned == DISGUISED else cleaned)
            new, n = base, 1
            while os.path.lexists(os.path.join(top, new)):
                new, n = f"{base}-{n}", n + 1
            os.rename(os.path.join(top, name), os.path.join(top, new))


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
            for encoding in ("utf-8", "utf-16-le", "utf-16-be"):  # Windows tools write UTF-16
                data = data.replace(form.encode(encoding), REDACTED)
    texts = {data.decode("utf-8", "replace")}
    if b"\0" in data:  # UTF-16 and such: a NUL between letters parts every form
        texts |= {data.replace(b"\0", b"").decode("utf-8", "replace"),
                  data.decode("utf-16-le", "replace"), data.decode("utf-16-be", "replace")}
    if any(holds_disguised(text, secret) for text in texts if _reads_as_text(text)
           for secret in secrets):
        return DISGUISED
    return data


def _reads_as_text(text: str) -> bool:
    """Whether the decoded bytes are text someone reads (not one character in a hundred
    undecodable), and so could hold the token in a disguise only a reader undoes. Binary
    data (an image, a build's output, a database) is searched for the written forms above
    only: looking for disguises in it took about 1.4 s a MiB, which a stop waited for."""
    return text.count("\ufffd") * 100 <= len(text)
