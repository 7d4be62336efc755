"""A tool's arguments as MCP clients really send them, made into what the tool declares.

Two habits of real clients are read as what they mean rather than refused: ``null`` for an
optional argument they were not given, and a key a client adds to every tool for itself.
Everything else a tool does not declare is still refused (REST bodies keep the contract's
types to the letter)."""
from __future__ import annotations

from typing import Any

# Keys a client adds to every tool's schema for its own use and passes on to the server:
# Gemini CLI tells its model to set ``wait_for_previous`` on a call that depends on an
# earlier one (claim, heartbeat, submit), which is every call of an agent's cycle.
CLIENT_ADDED = frozenset({"wait_for_previous"})


def as_declared(arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` without the keys clients add for themselves and without nulls."""
    return nulls_left_out({k: v for k, v in arguments.items() if k not in CLIENT_ADDED})


def nulls_left_out(value: Any) -> Any:
    """``value`` with every ``null`` member of an object left out: some clients send
    ``null`` for each optional argument they were not given (mcp-use fills in every field
    of the model it builds from ``inputSchema``), and that means "not given". A null where
    a value is required is then missing, and refused as such."""
    if isinstance(value, dict):
        return {k: nulls_left_out(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [nulls_left_out(v) for v in value]
    return value
