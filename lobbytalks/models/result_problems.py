"""Every reason the server would refuse a result for, at once: what the connector hands back
to a harness, so that its one retry can mend them all (the server itself stops at the
first, ``result_rules.normalise``). Read from the body as sent, whatever the schema refused
in it: each check reads the fields of the right type.
"""
from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..errors import ApiError
from ..screening import refuse_secrets
from .common import error_locations, field_path
from .external import SubmitResult, submit_error_code
from .result_rules import citation_refusals, has_support, no_support, source_refusals

CITING = ("conclusion", "reasoningSummary", "conditions", "uncertainties")


def result_problems(body: dict[str, Any], *, now: int) -> list[ApiError]:
    """The schema's refusals, field by field, then the sources', the secret scan's, the
    citations' and the support rule's."""
    try:
        SubmitResult.model_validate(body, strict=True)  # as parse_model does
        told: list[ApiError] = []
    except ValidationError as exc:
        told = [ApiError(submit_error_code(loc), f"{field_path(loc)}: {message}"
                         if field_path(loc) else message) for loc, message in error_locations(exc)]
    evidence = _list(body.get("evidence"))
    refused, sources = _source_problems(evidence, now)
    told += sources
    # as the server scans: after the sources' policy, which already refused a URL with a
    # password in it (not also "sensitive content")
    scanned = {k: v for k, v in body.items() if k not in ("action", "taskId", "evidence")}
    scanned["evidence"] = [{k: v for k, v in item.items() if k != "url" or n not in refused}
                           if isinstance(item, dict) else item
                           for n, item in enumerate(evidence, start=1)]
    try:
        refuse_secrets(scanned)
    except ApiError as exc:
        told.append(exc)
    texts = [text for name in CITING for text in _list(body.get(name), whole=True)
             if isinstance(text, str)]
    told += citation_refusals(texts, len(evidence))
    runs = [run for run in _list(body.get("toolRuns")) if isinstance(run, dict)
            and isinstance(run.get("status"), str) and isinstance(run.get("summary"), str)]
    reasoning = body.get("reasoningSummary")
    if not evidence and not has_support(reasoning if isinstance(reasoning, str) else "", runs):
        told.append(no_support())
    return told


def _source_problems(evidence: list[Any], now: int) -> tuple[set[int], list[ApiError]]:
    """The numbers of the items whose source was refused, and every refusal."""
    refused_items: set[int] = set()
    told: list[ApiError] = []
    seen: set[Any] = set()
    for index, item in enumerate(evidence, start=1):
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            when = item.get("retrievedAt")
            refused = source_refusals(index, item["url"], when if isinstance(when, str) else None,
                                      seen, now)[1]
            refused_items.update([index] if refused else [])
            told += refused
    return refused_items, told


def _list(value: Any, whole: bool = False) -> list[Any]:
    """``value`` if a list; a lone value in one when ``whole`` (a text field); else []."""
    if isinstance(value, list):
        return value
    return [value] if whole and value is not None else []
