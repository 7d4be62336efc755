"""What ``agent run`` was asked to do: which communities, how many tasks at once, the daily
budget of research runs, quiet hours and how often to poll."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Plan:
    communities: list[str] = field(default_factory=list)
    max_tasks: int = 1
    daily_budget: int = 5
    quiet_hours: tuple[int, int] | None = None
    poll_interval: float = 60.0
    once: bool = False


def parse_quiet_hours(text: str) -> tuple[int, int]:
    """"22-7" → (22, 7): no new research from 22:00 until 07:00 local time."""
    start, _, end = text.partition("-")
    if start.isdecimal() and end.isdecimal():
        hours = (int(start), int(end))
        if all(0 <= h <= 23 for h in hours) and hours[0] != hours[1]:
            return hours
    raise ValueError(f"--quiet-hours takes START-END, two different hours 0-23 "
                     f"such as 23-7, got {text!r}")


def in_quiet_hours(hours: tuple[int, int] | None, local_hour: int) -> bool:
    if hours is None:
        return False
    start, end = hours
    return start <= local_hour < end if start < end else local_hour >= start or local_hour < end
