"""What a running app holds: settings, the database, the keyring and the rate gate."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flask import current_app

from .db import Database
from .limits import RateGate
from .settings import Settings

if TYPE_CHECKING:
    from .crypto import Keyring


@dataclass
class Runtime:
    settings: Settings
    db: Database
    keyring: "Keyring"
    gate: RateGate
    extras: dict[str, Any]


def runtime() -> Runtime:
    return current_app.config["LOBBYTALKS"]
