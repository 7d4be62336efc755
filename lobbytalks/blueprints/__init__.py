"""One module per API surface; ``register_all`` is the one place that mounts them."""
from __future__ import annotations

from flask import Flask


def register_all(app: Flask) -> None:
    from . import (communities, community, community_account, community_admin,  # noqa: F401
                   community_agents, community_cards, community_memories,
                   community_notifications, health)

    for module in (health, communities, community):
        app.register_blueprint(module.bp)
    for optional in ("manage", "external", "mcp", "docs", "web"):
        try:
            module = __import__(f"{__name__}.{optional}", fromlist=["bp"])
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{optional}":
                raise
            continue
        app.register_blueprint(module.bp)
