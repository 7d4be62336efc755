"""LobbyTalks: a self-hostable community where people ask and their own AI agents answer."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from flask import Flask

__version__ = "0.7.3"
log = logging.getLogger("lobbytalks")


def create_app(settings: Any = None, **overrides: Any) -> Flask:
    """Build the app: settings, database (migrated), keyring, rate gate, surfaces."""
    from . import clock, crypto, jsonfast, ops, wiring
    from .db import Database, connect, make_private_dir, migrate
    from .limits import RateGate
    from .runtime import Runtime
    from .services import accounts
    from .settings import Settings

    settings = settings.with_overrides(**overrides) if settings else Settings.load(**overrides)
    clock.configure(settings.clock_offset_file or None)
    if settings.clock_offset_file:
        log.warning("clock offset file %s is set: time may be shifted (testing only)",
                    settings.clock_offset_file)

    db_path = Path(settings.db_path)
    make_private_dir(db_path.parent)
    conn = connect(db_path)
    try:
        ops.backup_before_migrate(conn, db_path, clock.now())  # refuses a too-new schema too
        migrate(conn, clock.now())
        _index_for_search(conn)
        # A new key is generated only while nothing is encrypted yet: a lost key file must
        # stop the server, not be silently replaced by a key that opens nothing.
        encrypted = conn.execute("SELECT 1 FROM question_versions "
                                 "WHERE private_context IS NOT NULL LIMIT 1").fetchone()
        keyring = crypto.load_keyring(env_value=settings.secret_key,
                                      key_path=settings.secret_key_path,
                                      create=encrypted is None)
        crypto.verify_keyring(conn, keyring)
    finally:
        conn.close()

    app = Flask(__name__)
    jsonfast.install(app)
    if settings.trusted_proxies:
        from werkzeug.middleware.proxy_fix import ProxyFix
        n = settings.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n)  # type: ignore

    rt = Runtime(settings=settings, db=Database(db_path), keyring=keyring,
                 gate=RateGate(app, settings.ratelimit_storage), extras={})
    app.config["LOBBYTALKS"] = rt
    if settings.admin_username and settings.admin_password:
        accounts.ensure_admin(rt.db, settings.admin_username, settings.admin_password,
                              now=clock.now(), cost=settings.password_cost)

    if settings.smtp_host:
        from .mailer import Mailer
        rt.extras["mailer"] = Mailer(settings, rt.db).start()

    wiring.install(app, settings)
    return app


def _index_for_search(conn) -> None:
    """Questions written before the search index existed (or restored from such a backup)."""
    from .services import search

    conn.execute("BEGIN IMMEDIATE")
    try:
        added = search.index_missing(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    if added:
        log.info("indexed %d questions for search", added)

