"""The signals that ask a LobbyTalks process to stop, one list for every command: the server
drains (``draining``), the connector ends its attempts, the admin commands remove what they
had half written (``cli.main``).

SIGHUP is the terminal the command ran in being closed: a stop like the others, not a kill
that cuts a request or a copy in half.
"""
from __future__ import annotations

import signal

STOP_SIGNALS: tuple[signal.Signals, ...] = (
    signal.SIGINT, signal.SIGTERM, *((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ()))
