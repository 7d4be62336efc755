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
from ..textrules import fold_for_scanning, js_length, js_trim
from ..urlpolicy import check_source_url, source_identity
from .citations import CITED_GROUP, MESSAGE_REF

PROVENANCE = "external-self-reported"
MIN_SUPPORT = 30
EMPTY_MEANS_ABSENT = ("uncertainties", "conditions", "toolRuns")



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
    tool_runs = _check_support(data, len(evidence))
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
    evidence: list[dict[str, Any]] = []
    seen: set[Any] = set()
    for index, item in enumerate(data.evidence, start=1):
        url, refused = source_refusals(index, item.url, item.retrievedAt, seen, now)
        if refused:
            raise refused[0]
        evidence.append({**item.model_dump(), "url": url})
    return evidence


def source_refusals(index: int, url: str, retrieved_at: str | None, seen: set[Any],
                    now: int) -> tuple[str | None, list[ApiError]]:
    """The source's URL without its fragment (None if refused), and every refusal of it:
    its URL, its ``retrievedAt`` (None: not to be checked), a URL ``seen`` already (which
    gains this one's identity)."""
    refused: list[ApiError] = []
    try:
        checked: str | None = check_source_url(url)
    except ValueError as exc:
        checked = None
        refused.append(ApiError("invalid_source", f"evidence[{index}]: {exc}"))
    if retrieved_at is not None:
        try:
            parse_retrieved_at(retrieved_at, now)
        except ValueError as exc:
            refused.append(ApiError("invalid_source", f"evidence[{index}]: {exc}"))
    if checked is not None:
        identity = source_identity(checked)
        if identity in seen:
            refused.append(ApiError("invalid_source", f"evidence[{index}]: 来源 URL 重复"))
        seen.add(identity)
    return checked, refused


def _check_support(data: Any, evidence_count: int) -> list[dict[str, Any]]:
    """The tool runs as stored. :raise 400 invalid_result: no evidence and no support."""
    tool_runs = [run.model_dump() for run in data.toolRuns or []]
    if not evidence_count and not has_support(data.reasoningSummary, tool_runs):
        raise no_support()
    return tool_runs


def no_support() -> ApiError:
    return ApiError("invalid_result", "没有证据时需要至少 30 字符的 reasoningSummary，"
                                      "或一条至少 30 字符的成功工具摘要")


def has_support(reasoning: str, tool_runs: list[dict[str, Any]]) -> bool:
    return js_length(js_trim(reasoning)) >= MIN_SUPPORT or any(
        run["status"] == "success" and js_length(js_trim(run["summary"])) >= MIN_SUPPORT
        for run in tool_runs)


def _check_citations(data: Any, source_count: int) -> None:
    texts = [data.conclusion, data.reasoningSummary, *(data.conditions or [])]
    if isinstance(data.uncertainties, list):
        texts += data.uncertainties
    elif data.uncertainties:
        texts.append(data.uncertainties)
    refused = citation_refusals(texts, source_count)
    if refused:
        raise refused[0]


def citation_refusals(texts: list[str], source_count: int) -> list[ApiError]:
    """Every refused citation in ``texts``, each once, in order."""
    refused: dict[str, ApiError] = {}
    # as written first (a refusal names the group so), then as a reader sees it
    for text in (read for text in texts for read in dict.fromkeys((text, fold_for_scanning(text)))):
        if MESSAGE_REF.search(text):
            refused.setdefault("M", ApiError(
                "invalid_citation", "不使用历史 [M1] 引用；定向回应请在领取时指定 replyTo"))
        for group in CITED_GROUP.findall(text):
            for number in map(int, re.findall(r"\d+", group)):
                if not 1 <= number <= source_count:
                    refused.setdefault(f"S{number}", ApiError(
                        "invalid_citation", f"[S{number}] 没有对应的 evidence" +
                        ("" if group.upper() == f"[S{number}]" else f"（{group}）")))
    return list(refused.values())


def result_hash(result: dict[str, Any]) -> str:
    """Hash of the normalised result. Absent optional fields are left out, so a result in
    the 1.0.1 shape (string uncertainties, no conditions) hashes as it always did."""
    canonical = json.dumps(result, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
