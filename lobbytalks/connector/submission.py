"""A harness's result made into the submission, checked with the server's own rules first."""
from __future__ import annotations

import json
from typing import Any

from ..models.result_problems import result_problems
from ..secrets_scan import strings_in
from ..security import holds_disguised, js_length
from ..repeats import repeats_in, without_spaces

MIN_PRIVATE_ECHO = 20  # a private context this long must not come back, nor most of it
MIN_PARTIAL_ECHO = 24  # ... "most of it" being this many characters at least


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
    if private and js_length(private.strip()) >= MIN_PRIVATE_ECHO and \
            _repeats_most_of(fields, private):
        reasons.append("private_context: the result repeats the private context, or most "
                       "of it, word for word")
    # The fields themselves, not their JSON: an escape such as "\\n" would put a letter
    # between the two halves of a token split across lines.
    if any(holds_disguised(fields, secret) for secret in secrets):
        reasons.append("sensitive_content: the result holds the Agent Token, spelt out or encoded")
    if reasons:
        return None, reasons
    return json.dumps(body, ensure_ascii=False).encode(), []


def _repeats_most_of(fields: dict[str, Any], private: str) -> bool:
    """Whether one passage of a field repeats the private context, or half of it and at
    least ``MIN_PARTIAL_ECHO`` characters, compared as the server's guard compares
    (``overlap``: whitespace left out): a model re-wraps lines and drops a word at the end,
    and the exact copy alone was caught. A shorter run (a product's name a short context
    mentions, which the answer must name too) is left to the asker's card preview."""
    whole = len(without_spaces(private))
    longest = max((len(without_spaces(passage))
                   for passage in repeats_in(strings_in(fields), private)), default=0)
    return longest >= whole or (2 * longest >= whole and longest >= MIN_PARTIAL_ECHO)
