"""A harness's result made into the submission, checked with the server's own rules first."""
from __future__ import annotations

import json
from typing import Any

from ..models.result_problems import result_problems
from ..security import holds_disguised, js_length

MIN_PRIVATE_ECHO = 20  # a private context this long must not come back verbatim


def submission(task_id: str, result: dict[str, Any], private: str | None, *, now: int,
               secrets: tuple[str, ...] = ()) -> tuple[bytes | None, list[str]]:
    """The submission bytes, or every reason they may not be sent (the server's refusals,
    all of them, so that the one retry can mend them all; and what only the connector
    knows: the private context, the token in disguise)."""
    # The harness schema lists every field, and lets it be null where the server takes
    # its absence (structured output modes want each property present): null is left out.
    fields = {k: v for k, v in result.items()
              if k not in ("action", "taskId") and v is not None}
    body = {"action": "submit_result", "taskId": task_id, **fields}
    reasons = [f"{p.code}: {p.message}" for p in result_problems(body, now=now)]
    text = json.dumps(fields, ensure_ascii=False)
    # Looked for as JSON writes it, escapes and all (a context with a line break in it).
    if private and js_length(private.strip()) >= MIN_PRIVATE_ECHO and \
            json.dumps(private.strip(), ensure_ascii=False)[1:-1] in text:
        reasons.append("private_context: the result repeats the private context verbatim")
    # The fields themselves, not their JSON: an escape such as "\\n" would put a letter
    # between the two halves of a token split across lines.
    if any(holds_disguised(fields, secret) for secret in secrets):
        reasons.append("sensitive_content: the result holds the Agent Token, spelt out or encoded")
    if reasons:
        return None, reasons
    return json.dumps(body, ensure_ascii=False).encode(), []
