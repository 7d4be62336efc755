"""JSON-RPC batches on the MCP endpoint, for clients speaking MCP 2025-03-26.

That version's base protocol says implementations must accept a posted array of requests
and notifications; 2025-06-18 removed batching, so a client stating that version is refused
as before. Each message is answered as it would be alone (``mcp.answer``), in order; an
array of notifications only is accepted with 202 and no body. ``initialize`` may not be
part of a batch (2025-03-26 says so), and a batch is at most ``MAX_BATCH`` messages, each
counting against the token's request budget as a request of its own would.
"""
from __future__ import annotations

from typing import Any, Callable

from . import mcp
from .models.jsonrpc import is_response, request_id
from .settings import Settings

BATCH_VERSION = "2025-03-26"
MAX_BATCH = 20


def answer(batch: list[Any], *, version_header: str | None, run: mcp.RunTool,
           settings: Settings, charge: Callable[[int], None]
           ) -> tuple[int, list[dict[str, Any]] | dict[str, Any] | None]:
    """(HTTP status, the responses, a single error, or None for notifications only).

    :raise ApiError: ``unsupported_protocol`` for a bad ``MCP-Protocol-Version``, and the
        token budget's 429 when the batch's messages overspend it (``charge``).
    """
    version = mcp.check_version_header(version_header)
    if version != BATCH_VERSION:
        return 400, mcp.error_body(None, mcp.INVALID_REQUEST,
                                   f"MCP {version} 不支持 JSON-RPC 批量请求（只有 {BATCH_VERSION} 支持）")
    if not batch or len(batch) > MAX_BATCH:
        return 400, mcp.error_body(None, mcp.INVALID_REQUEST,
                                   f"批量请求须含 1–{MAX_BATCH} 条消息")
    if not any(isinstance(m, dict) and "id" in m and not is_response(m) for m in batch) \
            and any(isinstance(m, dict) and is_response(m) for m in batch):
        # responses (and notifications) only: this server asks nothing, so it cannot take
        # them, and the transport then wants an HTTP error, as for a single response
        return 400, mcp.error_body(None, mcp.INVALID_REQUEST,
                                   "此服务器不向客户端发请求，不接受 JSON-RPC 响应")
    charge(len(batch) - 1)  # the request itself was counted on authentication
    answers = [_answer_one(message, version_header, run, settings) for message in batch]
    replies = [reply for reply in answers if reply is not None]
    return (200, replies) if replies else (202, None)


def _answer_one(message: Any, version_header: str | None, run: mcp.RunTool,
                settings: Settings) -> dict[str, Any] | None:
    if isinstance(message, list):  # a batch in a batch is no message
        return mcp.error_body(None, mcp.INVALID_REQUEST, "请求必须是 JSON-RPC 对象")
    if isinstance(message, dict) and message.get("method") == "initialize":
        return mcp.error_body(request_id(message), mcp.INVALID_REQUEST,
                              "initialize 不能放在批量请求里")
    _, reply = mcp.answer(message, version_header=version_header, run=run, settings=settings)
    return reply
