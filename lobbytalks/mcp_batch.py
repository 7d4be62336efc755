"""JSON-RPC batches on the MCP endpoint, for clients speaking MCP 2025-03-26.

That version's base protocol says implementations must accept a posted array of requests
and notifications; 2025-06-18 removed batching, so a client stating that version is refused
as before. Each message is answered as it would be alone (``mcp.answer``), in order; an
array of notifications only is accepted with 202 and no body. ``initialize`` may not be
part of a batch (2025-03-26 says so), and a batch is at most ``MAX_BATCH`` messages, each
counting against the token's request budget as a request of its own would.

Its answer is at most about ``MAX_ANSWER_BYTES`` plus one message's: twenty `get_context`
calls on large questions would otherwise build a 75 MB body from a 3 KB request, held in
memory at once. Once the answers written reach the limit, the requests after them are not
run; each is told to be sent again on its own.
"""
from __future__ import annotations

from typing import Any, Callable

import orjson

from . import mcp
from .models.jsonrpc import is_response, request_id
from .settings import Settings

BATCH_VERSION = "2025-03-26"
MAX_BATCH = 20
MAX_ANSWER_BYTES = 8 * 1024 * 1024


def answer(batch: list[Any], *, version_header: str | None, run: mcp.RunTool,
           settings: Settings, charge: Callable[[int], None]
           ) -> tuple[int, list[Any] | dict[str, Any] | None]:
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
    if not any(_is_request(m) for m in batch) \
            and any(isinstance(m, dict) and is_response(m) for m in batch):
        # responses (and notifications) only: this server asks nothing, so it cannot take
        # them, and the transport then wants an HTTP error, as for a single response
        return 400, mcp.error_body(None, mcp.INVALID_REQUEST,
                                   "此服务器不向客户端发请求，不接受 JSON-RPC 响应")
    charge(len(batch) - 1)  # the request itself was counted on authentication
    replies: list[Any] = []
    written = 0
    for message in batch:
        if written >= MAX_ANSWER_BYTES and _is_request(message):
            reply = mcp.error_body(request_id(message), mcp.INVALID_REQUEST, NOT_RUN)
        else:  # a notification or a malformed message runs nothing: answered as ever
            reply = _answer_one(message, version_header, run, settings)
        if reply is not None:
            encoded = orjson.dumps(reply)  # written once, spliced into the body as it is
            written += len(encoded)
            replies.append(orjson.Fragment(encoded))
    return (200, replies) if replies else (202, None)


NOT_RUN = (f"批量请求的回答已超过 {MAX_ANSWER_BYTES // (1024 * 1024)} MiB，这条请求没有执行；"
           "请单独发送，或放进更小的批量")


def _is_request(message: Any) -> bool:
    return isinstance(message, dict) and "id" in message and not is_response(message)


def _answer_one(message: Any, version_header: str | None, run: mcp.RunTool,
                settings: Settings) -> dict[str, Any] | None:
    if isinstance(message, list):  # a batch in a batch is no message
        return mcp.error_body(None, mcp.INVALID_REQUEST, "请求必须是 JSON-RPC 对象")
    if isinstance(message, dict) and message.get("method") == "initialize":
        return mcp.error_body(request_id(message), mcp.INVALID_REQUEST,
                              "initialize 不能放在批量请求里")
    _, reply = mcp.answer(message, version_header=version_header, run=run, settings=settings)
    # JSON-RPC never answers a notification, not even one whose params are wrong (alone,
    # such a notification gets its HTTP 400: the transport's error, not a reply)
    return None if _is_notification(message) else reply


def _is_notification(message: Any) -> bool:
    return isinstance(message, dict) and "id" not in message \
        and message.get("jsonrpc") == "2.0" and isinstance(message.get("method"), str)
