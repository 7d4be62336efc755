"""A harness's result made into the submission, checked with the server's own rules first."""
from __future__ import annotations

import json
from typing import Any

from ..models.result_problems import result_problems
from ..quotas import EXTERNAL_BODY_LIMIT
from ..secrets_scan import strings_in
from ..security import holds_disguised, js_length
from ..repeats import repeats_in, without_spaces

MIN_PRIVATE_ECHO = 20  # a private context this long must not come back, nor nearly all of it


def submission(task_id: str, result: dict[str, Any], private: str | None, *, now: int,
               secrets: tuple[str, ...] = (), public: str = "") -> tuple[bytes | None, list[str]]:
    """The submission bytes, or every reason they may not be sent (the server's refusals,
    all of them, so that the one retry can mend them all; and what only the connector
    knows: the private context, the token in disguise)."""
    # The harness schema lists every field, and lets it be null where the server takes
    # its absence (structured output modes want each property present): null is left out.
    fields = {k: v for k, v in result.items()
              if k not in ("action", "taskId") and v is not None}
    body = {"action": "submit_result", "taskId": task_id, **fields}
    reasons = [f"{p.code}: {p.message}" for p in result_problems(body, now=now)]
    copied = (_copies_of_private(fields, private, public)
              if private and js_length(private.strip()) >= MIN_PRIVATE_ECHO else [])
    if copied:  # the fields named, not the words: events go to the owner's logs
        reasons.append(f"private_context: {', '.join(copied)} repeat(s) the asker's private "
                       "context word for word; say it in your own words or leave it out")
    # The fields themselves, not their JSON: an escape such as "\\n" would put a letter
    # between the two halves of a token split across lines.
    if any(holds_disguised(fields, secret) for secret in secrets):
        reasons.append("sensitive_content: the result holds the Agent Token, spelt out or encoded")
    if any(_lone_surrogate(text) for text in strings_in(fields)):  # json.loads lets "\ud83d" in
        reasons.append("invalid_request: the result holds a lone surrogate (half of an "
                       "escaped character such as \\ud83d), which is no text; write the "
                       "characters themselves")
    if reasons:
        return None, reasons
    sent = json.dumps(body, ensure_ascii=False).encode()
    if len(sent) > EXTERNAL_BODY_LIMIT:  # every field within its limit, the whole not
        return None, [f"payload_too_large: the result is {len(sent):,} bytes as sent and the "
                      f"server takes {EXTERNAL_BODY_LIMIT:,}: shorten the longest fields "
                      "(excerpts, tool summaries); Chinese text takes 3 bytes a character"]
    return sent, []


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _copies_of_private(fields: dict[str, Any], private: str, public: str) -> list[str]:
    """The fields in which one passage repeats the private context whole or nearly (all but
    a tenth of it, at least three characters), compared as the server's guard compares
    (``repeats``: whitespace left out, so a re-wrapped or cut-short copy counts). Words the
    public question holds too are no secret; a shorter run (the product or address the
    question is about, which the answer must name) is left to the asker's card preview."""
    whole, known = len(without_spaces(private)), without_spaces(public)
    needed = whole - max(3, whole // 10)
    return [name for name, value in fields.items()
            if any(len(without_spaces(passage)) >= needed and without_spaces(passage) not in known
                   for passage in repeats_in(strings_in(value), private))]
