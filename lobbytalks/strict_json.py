"""Request bodies read as strict JSON, else 400 ``invalid_json``.

orjson's rules (UTF-8 without a BOM, no NaN, no lone surrogates, which SQLite and the
encoder cannot store), at most ``MAX_JSON_DEPTH`` levels of nesting, and no object naming a
key twice: RFC 8259 leaves that to each reader, and readers differ (orjson keeps the last,
others the first), so a proxy or a client checking one copy would see another request
than the one served.
"""
from __future__ import annotations

import json
import re
from typing import Any

import orjson

from .errors import ApiError

# The deepest legitimate body (an MCP tools/call of submit_result) nests 5 levels; past 32
# a body is refused before any recursive code (validation, logging, encoders) walks it.
MAX_JSON_DEPTH = 32
# A key's closing quote and its colon. Inside a string a quote is escaped (\"), so this
# finds every key once, plus any escaped quote a string holds right before a colon.
_KEY_END = re.compile(rb'"[ \t\r\n]*:')


def parse_json(raw: bytes) -> Any:
    """The value ``raw`` holds. An integer past 64 bits is read as a float, which no
    integer field accepts.

    :raise ApiError: ``invalid_json``.
    """
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise ApiError("invalid_json") from None
    # Nesting past the limit takes more opening brackets than the limit (counted in C);
    # most bodies have far fewer, and skip the walk over every value.
    if (raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH
            and nests_deeper_than(data, MAX_JSON_DEPTH)):
        raise ApiError("invalid_json", f"JSON 嵌套超过 {MAX_JSON_DEPTH} 层")
    # A repeated key leaves fewer keys than the text names; only then is it read again,
    # pair by pair (strings holding \": are read again too, and pass).
    if len(_KEY_END.findall(raw)) > _keys_in(data) and _repeats_a_key(raw):
        raise ApiError("invalid_json", "JSON 对象里有重复的键")
    return data


def nests_deeper_than(data: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels (checked without recursion)."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, list):
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in node)
    return False


def _keys_in(data: Any) -> int:
    count, stack = 0, [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            count += len(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


class _RepeatedKey(Exception):
    pass


def _pairs_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise _RepeatedKey
    return dict(pairs)


def _repeats_a_key(raw: bytes) -> bool:
    try:  # orjson read it already: valid UTF-8 JSON, no deeper than the limit
        json.loads(raw, object_pairs_hook=_pairs_once)
    except _RepeatedKey:
        return True
    return False
