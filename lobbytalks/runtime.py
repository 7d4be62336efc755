"""What a running app holds: settings, the database, the keyring, the rate gate and the mailer."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from flask import current_app

from .db import Database
from .limits import RateGate
from .settings import Settings

if TYPE_CHECKING:
    from .crypto import Keyring
    from .mailer import Mailer


@dataclass
class Runtime:
    settings: Settings
    db: Database
    keyring: "Keyring"
    gate: RateGate
    mailer: "Mailer | None" = None  # its thread sends notification e-mail when SMTP is set


def runtime() -> Runtime:
    return current_app.config["LOBBYTALKS"]
