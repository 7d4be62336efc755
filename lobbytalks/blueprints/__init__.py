"""One module per surface; ``register_all`` is the one place that mounts them.

The ``community_*`` modules add their actions to ``community``'s dispatch table and the
``web_*`` modules their routes to ``web``'s blueprint when imported, so importing them is
part of registering. Nothing is optional: a surface whose import fails stops start-up.
"""
from __future__ import annotations

from flask import Flask


def register_all(app: Flask) -> None:
    from . import (community_account, community_admin, community_agents,  # noqa: F401
                   community_cards, community_memories, community_notifications)
    from . import communities, community, docs, external, health, manage, mcp, web

    for module in (health, communities, community, manage, external, mcp, docs, web):
        app.register_blueprint(module.bp)
