"""The JSON-RPC envelope of ``/api/external/mcp`` as the OpenAPI document publishes it."""
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
