"""What makes a submitted result valid beyond its schema (§5, 0.7.3), and its hash.

Framework-free and database-free: the server's ``submit_result`` and the connector
(``lobbytalks agent``) both check a harness's result with these same functions.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ..errors import ApiError
from ..screening import refuse_secrets
from ..security import parse_retrieved_at
from ..textrules import js_length, js_trim
from ..urlpolicy import check_source_url, source_identity
from .common import SOURCE_REF

PROVENANCE = "external-self-reported"
MIN_SUPPORT = 30
EMPTY_MEANS_ABSENT = ("uncertainties", "conditions", "toolRuns")
_MESSAGE_REF = re.compile(r"\[M[0-9]+(?::S[0-9]+)?\]", re.IGNORECASE)


def normalise(data: Any, *, now: int) -> dict[str, Any]:
    """Check what the schema cannot and return the result as it will be stored and hashed.

    :raise 400 sensitive_content / invalid_source / invalid_citation / invalid_result:
    """
    raw = data.model_dump(exclude={"action", "taskId"}, exclude_none=True)
    evidence = _checked_evidence(data, now)
    # After the URL policy: a URL with a password in it is a refused source (§5), not
    # "sensitive content"; every other field, evidence titles and excerpts included, is
    # scanned here.
    refuse_secrets(raw)
    _check_citations(data, len(evidence))
    tool_runs = [run.model_dump() for run in data.toolRuns or []]
    if not evidence and not _has_support(data.reasoningSummary, tool_runs):
        raise ApiError("invalid_result", "没有证据时需要至少 30 字符的 reasoningSummary，"
                                         "或一条至少 30 字符的成功工具摘要")
    result = {**raw, "evidence": evidence}
    if tool_runs:
        result["toolRuns"] = tool_runs
    # An empty optional field says nothing, so it hashes like an absent one: a retry that
    # adds ``conditions: []`` or ``uncertainties: ""`` is the same result, and the 1.0.1
    # shape keeps the hash it always had.
    for name in EMPTY_MEANS_ABSENT:
        if not result.get(name):
            result.pop(name, None)
    return result


def _checked_evidence(data: Any, now: int) -> list[dict[str, Any]]:
    """The evidence with fragments removed. :raise 400 invalid_source: on the first URL or
    ``retrievedAt`` the policy refuses, or a repeated URL."""
    evidence, seen = [], set()
    for index, item in enumerate(data.evidence, start=1):
        try:
            url = check_source_url(item.url)
            parse_retrieved_at(item.retrievedAt, now)
        except ValueError as exc:
            raise ApiError("invalid_source", f"evidence[{index}]: {exc}") from None
        identity = source_identity(url)
        if identity in seen:
            raise ApiError("invalid_source", f"evidence[{index}]: 来源 URL 重复")
        seen.add(identity)
        evidence.append({**item.model_dump(), "url": url})
    return evidence


def _has_support(reasoning: str, tool_runs: list[dict[str, Any]]) -> bool:
    return js_length(js_trim(reasoning)) >= MIN_SUPPORT or any(
        run["status"] == "success" and js_length(js_trim(run["summary"])) >= MIN_SUPPORT
        for run in tool_runs)


def _check_citations(data: Any, source_count: int) -> None:
    texts = [data.conclusion, data.reasoningSummary, *(data.conditions or [])]
    if isinstance(data.uncertainties, list):
        texts += data.uncertainties
    elif data.uncertainties:
        texts.append(data.uncertainties)
    for text in texts:
        if _MESSAGE_REF.search(text):
            raise ApiError("invalid_citation", "不使用历史 [M1] 引用；定向回应请在领取时指定 replyTo")
        for number in SOURCE_REF.findall(text):
            if not 1 <= int(number) <= source_count:
                raise ApiError("invalid_citation", f"[S{number}] 没有对应的 evidence")


def result_hash(result: dict[str, Any]) -> str:
    """Hash of the normalised result. Absent optional fields are left out, so a result in
    the 1.0.1 shape (string uncertainties, no conditions) hashes as it always did."""
    canonical = json.dumps(result, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
