"""LobbyTalks: a self-hostable community where people ask and their own AI agents answer."""
from __future__ import annotations

import logging
from typing import Any

from flask import Flask

__version__ = "0.7.3"
log = logging.getLogger("lobbytalks")


def create_app(settings: Any = None, **overrides: Any) -> Flask:
    """Build the app: settings, database (migrated), keyring, rate gate, surfaces."""
    from . import actions, auth, jsonfast, kept, startup, wiring
    from .limits import RateGate
    from .runtime import Runtime
    from .settings import Settings

    settings = settings.with_overrides(**overrides) if settings else Settings.load(**overrides)
    startup.configure_clock(settings)
    # First, so that an unreachable shared storage stops the start before any migration.
    gate = RateGate(settings.ratelimit_storage)
    db, keyring = startup.open_database(settings)

    app = Flask(__name__)
    jsonfast.install(app)
    if settings.trusted_proxies:
        from .proxies import TrustedPeers, parse_networks
        app.wsgi_app = TrustedPeers(app.wsgi_app, settings.trusted_proxies,  # type: ignore
                                    parse_networks(settings.trusted_proxy_networks))

    rt = Runtime(settings=settings, db=db, keyring=keyring, gate=gate,
                 generation=kept.for_database(db.dialect))
    rt.kept_results = kept.Kept(actions.KEPT_RESULTS)
    if not rt.generation.round_trip:  # a token's row costs one round trip, as would its check
        rt.kept_tokens = kept.Kept(auth.KEPT_TOKENS)
    app.config["LOBBYTALKS"] = rt
    startup.index_for_search(rt.db)
    startup.ensure_admin(settings, rt.db)
    rt.mailer = startup.start_mailer(settings, rt.db, keyring)
    rt.db.release_connection()  # the start-up steps' connection, on PostgreSQL

    wiring.install(app, settings)
    return app
