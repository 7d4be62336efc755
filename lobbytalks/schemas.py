"""JSON Schemas published from the pydantic models: MCP ``inputSchema``/``outputSchema``, OpenAPI.

pydantic's output is correct but noisy for clients: every property carries an invented
``title``, an optional field reads ``anyOf: [X, {type: null}]`` and nested models hide
behind ``$defs``. ``publish`` rewrites it into the plain shape clients expect, without
changing what validates: an optional field is one you may omit, so it is shown without
``null``; a required field that may be null keeps ``null`` in its ``type`` list.
"""
from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf")
_SCHEMA_MAPS = ("properties", "$defs", "patternProperties")


def publish(schema: dict[str, Any]) -> dict[str, Any]:
    """A cleaned copy of one schema node (recursively)."""
    node = {k: v for k, v in schema.items() if k != "title"}
    for key in _SCHEMA_MAPS:
        if key in node:
            node[key] = {name: publish(sub) for name, sub in node[key].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            node[key] = publish(node[key])
    for key in _SCHEMA_LISTS:
        if key in node:
            node[key] = [publish(sub) for sub in node[key]]
    if "anyOf" in node:
        node = _simplify_union(node)
    return node


def _simplify_union(node: dict[str, Any]) -> dict[str, Any]:
    branches = node["anyOf"]
    if "default" in node and node["default"] is None:
        # Optional by omission: the published schema does not invite null.
        del node["default"]
        branches = [b for b in branches if b != {"type": "null"}]
    if all(set(b) == {"type"} and isinstance(b["type"], str) for b in branches):
        merged: dict[str, Any] = {"type": [b["type"] for b in branches]}
    elif len(branches) == 2 and {"type": "null"} in branches:
        other = next(b for b in branches if b != {"type": "null"})
        if "type" not in other or "$ref" in other:
            return {**node, "anyOf": branches}
        merged = {**other, "type": [other["type"], "null"]}
    elif len(branches) == 1:
        merged = dict(branches[0])
    else:
        return {**node, "anyOf": branches}
    if isinstance(merged.get("type"), list) and len(merged["type"]) == 1:
        merged["type"] = merged["type"][0]
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    return {**merged, **rest}


def model_schema(model: type[BaseModel], ref_prefix: str = "#/$defs/"
                 ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The published schema of ``model`` and of the nested models it refers to."""
    raw = model.model_json_schema(ref_template=ref_prefix + "{model}")
    defs = {name: publish(sub) for name, sub in raw.pop("$defs", {}).items()}
    return publish(raw), defs


def without(schema: dict[str, Any], *names: str) -> dict[str, Any]:
    """``schema`` without the given properties (and without them in ``required``)."""
    result = copy.deepcopy(schema)
    for name in names:
        result.get("properties", {}).pop(name, None)
    if "required" in result:
        result["required"] = [r for r in result["required"] if r not in names]
        if not result["required"]:
            del result["required"]
    return result


def inline(schema: dict[str, Any], defs: dict[str, dict[str, Any]],
           ref_prefix: str = "#/$defs/") -> dict[str, Any]:
    """Replace every local ``$ref`` by the schema it names: a self-contained document."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(ref_prefix):
            target = inline(defs[ref[len(ref_prefix):]], defs, ref_prefix)
            return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return {k: inline(v, defs, ref_prefix) for k, v in schema.items()}
    if isinstance(schema, list):
        return [inline(v, defs, ref_prefix) for v in schema]
    return schema


def self_contained(model: type[BaseModel], *drop: str) -> dict[str, Any]:
    """The model's schema with nested models inlined and ``drop`` properties removed."""
    schema, defs = model_schema(model)
    return without(inline(schema, defs), *drop)
