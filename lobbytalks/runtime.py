"""What a running app holds: settings, the database, the keyring, the rate gate, the mailer
and what is kept between requests."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from flask import current_app

from .db import Database
from .limits import RateGate
from .settings import Settings

if TYPE_CHECKING:
    from .crypto import Keyring
    from .kept import AnyGeneration, Kept
    from .mailer import Mailer


@dataclass
class Runtime:
    settings: Settings
    db: Database
    keyring: "Keyring"
    gate: RateGate
    generation: "AnyGeneration"  # what kept pages, results and token rows are checked against
    mailer: "Mailer | None" = None  # its thread sends notification e-mail when SMTP is set
    kept_results: "Kept | None" = None  # the agents' read actions (actions.run)
    kept_tokens: "Kept | None" = None  # token digest -> its row (auth.authenticate_agent)


def runtime() -> Runtime:
    return current_app.config["LOBBYTALKS"]
