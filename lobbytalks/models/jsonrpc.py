"""The JSON-RPC envelope of ``/api/external/mcp`` as the OpenAPI document publishes it, and
which id an answer may echo."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .responses import Doc


class JsonRpcRequest(Doc):
    jsonrpc: Literal["2.0"]
    id: str | float | None = None
    method: str = Field(description="initialize、ping、tools/list、tools/call；没有 id 的通知得到 202")
    params: dict[str, Any] | None = None


class JsonRpcError(Doc):
    code: int
    message: str
    data: dict[str, Any] | None = None


class JsonRpcResponse(Doc):
    jsonrpc: Literal["2.0"]
    id: str | float | None
    result: dict[str, Any] | None = Field(
        None, description="工具的业务失败是 isError:true 的 result，内容带 code/error/status")
    error: JsonRpcError | None = None


# Integers the response encoder (orjson) can write back: signed and unsigned 64-bit.
ECHOABLE_INTEGERS = range(-(2**63), 2**64)


def request_id(payload: Any) -> str | int | float | None:
    """The id to echo: only a valid one (a string or a number, as the contract and MCP's
    schema allow), else null. A whole number only within 64 bits: the encoder writes no
    more, and the parser reads a longer integer as a float that would echo another value
    (a whole float inside that range was written as one, ``1e16``, and echoes as it was).
    Null for a response the client posted: its id is one of the server's own requests'."""
    value = payload.get("id") if isinstance(payload, dict) and not is_response(payload) else None
    if isinstance(value, str):
        return value
    if isinstance(value, float):  # -2**63 itself may be -2**63 - 1 rounded: not echoed
        return value if not value.is_integer() or -(2**63) < value < 2**64 else None
    if isinstance(value, int) and not isinstance(value, bool) and value in ECHOABLE_INTEGERS:
        return value
    return None


def is_response(payload: dict[str, Any]) -> bool:
    """Whether a posted message is a JSON-RPC response (a result or an error, no method)."""
    return "method" not in payload and ("result" in payload or "error" in payload)
