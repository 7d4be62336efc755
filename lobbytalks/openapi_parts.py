"""The building blocks of the OpenAPI document: named components, request and query shapes.

``openapi`` composes the document from these and the models; nothing here states a path.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .models import web
from .schemas import model_schema, without

REF = "#/components/schemas/"


class Components:
    """Collects named schemas; nested models become components of their own."""

    def __init__(self) -> None:
        self.schemas: dict[str, dict[str, Any]] = {}

    def add(self, model: type[BaseModel], name: str | None = None) -> dict[str, str]:
        schema, defs = model_schema(model, REF)
        for def_name, sub in defs.items():
            self.schemas.setdefault(def_name, sub)
        return self.put(name or model.__name__, schema)

    def put(self, name: str, schema: dict[str, Any]) -> dict[str, str]:
        self.schemas[name] = schema
        return {"$ref": REF + name}


def action_request(schema: dict[str, Any], action: str) -> dict[str, Any]:
    """REST dispatches on ``action``, so the request schemas require it (MCP does not)."""
    schema = dict(schema)
    schema["properties"] = {"action": {"const": action, "type": "string"},
                            **without(schema, "action")["properties"]}
    schema["required"] = ["action", *[n for n in schema.get("required", []) if n != "action"]]
    return schema


def one_community(action: str, model: type[BaseModel] = web.CommunityMembership
                  ) -> dict[str, Any]:
    """An action on one community (join and leave share a model); ``communityId`` is
    accepted as an alias of ``community``."""
    schema, _ = model_schema(model, REF)
    schema = action_request(schema, action)
    schema["required"] = ["action", "community", *schema["required"][1:]]
    schema["properties"]["communityId"]["description"] = "community 的别名；两者都给时必须相同"
    return schema


def query_parameters(models: dict[str, type[BaseModel]], skip: tuple[str, ...] = ("action",),
                      ) -> list[dict[str, Any]]:
    """One query parameter per field of any of ``models`` (keyed by the action using it);
    a parameter is required only when every action requires it, else its description says
    which actions do."""
    schemas = {action: model_schema(model, REF)[0] for action, model in models.items()}
    params: dict[str, dict[str, Any]] = {}
    for schema in schemas.values():
        for name, prop in schema["properties"].items():
            if name in skip or name in params:
                continue
            prop = dict(prop)
            needed_by = [a for a, s in schemas.items() if name in s.get("required", [])]
            param: dict[str, Any] = {"name": name, "in": "query",
                                     "required": len(needed_by) == len(schemas)}
            description = prop.pop("description", None)
            if needed_by and len(needed_by) < len(schemas):
                description = f"{'、'.join(needed_by)} 必填" + (f"；{description}" if description else "")
            if description:
                param["description"] = description
            params[name] = {**param, "schema": prop}
    return list(params.values())


def json_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def responses(ok: dict[str, Any], error: dict[str, Any], error_text: str,
               **extra: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "成功", **json_body(ok)}, **extra,
            "default": {"description": error_text, **json_body(error)}}


def one_of(refs: list[dict[str, str]], discriminated: bool = True) -> dict[str, Any]:
    schema: dict[str, Any] = {"oneOf": refs}
    if discriminated:
        schema["discriminator"] = {"propertyName": "action"}
    return schema


def inline(model: type[BaseModel]) -> dict[str, Any]:
    return model_schema(model, REF)[0]
