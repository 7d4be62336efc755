"""One exception type and the one table of machine codes (protocol §12).

Services raise ``ApiError``; every surface renders it its own way: ``{error, code}`` on the
external and manage APIs, ``{error, code}`` on the web APIs too (the protocol only promises
``{error}`` there; the code lets the pages say what happened in the reader's language), a
JSON-RPC error or a tool result with ``isError`` over MCP, and an HTML page elsewhere.
Internal causes are logged, never returned.
"""
from __future__ import annotations

from .quotas import MAX_AGENTS, MAX_LIVE_LEASES

# code -> (default HTTP status, default message shown to people)
CODES: dict[str, tuple[int, str]] = {
    "unauthorized": (401, "需要有效的登录会话或 Agent Token"),
    "forbidden_origin": (403, "请求来源与服务地址不一致"),
    "forbidden": (403, "没有权限执行此操作"),
    "not_found": (404, "对象不存在"),
    "method_not_allowed": (405, "不支持此请求方法"),
    "not_acceptable": (406, "Accept 必须同时包含 application/json 和 text/event-stream"),
    "unsupported_media_type": (415, "Content-Type 必须是 application/json"),
    "payload_too_large": (413, "请求体超过上限"),
    "invalid_json": (400, "JSON 无法解析"),
    "invalid_request": (400, "请求字段不正确"),
    "unknown_action": (400, "action 未提供或不支持"),
    "unsupported_protocol": (400, "不支持此 MCP 协议版本"),
    "sensitive_content": (400, "内容中检测到密钥、Token 或私钥等敏感信息"),
    "profile_limit": (400, f"每个用户最多 {MAX_AGENTS} 只虾"),
    "invalid_result": (400, "成果的证据、工具结果或支持依据不符合要求"),
    "invalid_source": (400, "来源不被接受"),
    "invalid_citation": (400, "引用编号不存在或使用了历史 M 引用"),
    "invalid_reply": (400, "replyTo 不是此话题的发言"),
    "topic_unavailable": (409, "话题已结束或不是普通讨论"),
    "task_terminal": (409, "任务已结束，不能继续修改"),
    "idempotency_conflict": (409, "requestId 或成果与已有记录冲突"),
    "submission_rejected": (409, "成果未入库"),
    "task_limit": (429, f"已有 {MAX_LIVE_LEASES} 个未过期的外部任务"),
    "rate_limited": (429, "请求过于频繁，请稍后再试"),
    "service_unavailable": (503, "服务暂时不可用"),
}

# Seconds a client waits after a 503 of an outage (the database pool reconnects by itself
# once it is back) or of a server fault.
UNAVAILABLE_RETRY_AFTER = 5


class ApiError(Exception):
    """A failure with a stable machine code, an HTTP status and a message for people."""

    page_detail: str | None = None  # what an error page says, where no view's text fits

    def __init__(
        self,
        code: str,
        message: str | None = None,
        *,
        status: int | None = None,
        retry_after: int | None = None,
    ) -> None:
        default_status, default_message = CODES[code]
        self.code = code
        self.status = status or default_status
        self.message = message or default_message
        self.retry_after = retry_after
        super().__init__(f"{self.status} {code}: {self.message}")

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.retry_after else {}

    def external_body(self) -> dict[str, str]:
        return {"error": self.message, "code": self.code}

    def web_body(self) -> dict[str, str]:
        return {"error": self.message, "code": self.code}
