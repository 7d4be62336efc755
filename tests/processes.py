"""What the tests ask the process table: is a process gone, which children does it have."""
from __future__ import annotations

import os
from pathlib import Path


def _state_and_parent(stat: Path) -> tuple[str, int] | None:
    try:
        fields = stat.read_text().rsplit(")", 1)[1].split()  # the name may hold spaces
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1])


def gone(pid: int) -> bool:
    """Exited, even if nobody has reaped it yet (a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    found = _state_and_parent(Path(f"/proc/{pid}/stat"))
    return found is None or found[0] == "Z"


def children(parent: int) -> set[int]:
    """The live (not zombie) children of ``parent``."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        info = _state_and_parent(stat)
        if info and info[1] == parent and info[0] != "Z":
            found.add(int(stat.parent.name))
    return found
