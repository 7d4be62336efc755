"""The developer docs this instance serves, with its own address filled in (§13).

/docs/external-agents-v1.md (the protocol as implemented),
/docs/question-answers-v073.md (intents, versions, private context, answer cards) and
/docs/external-agents-openapi.json (generated from the models and the action table).
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from flask import Blueprint, Response, request

from .. import openapi, prose
from ..actions import ACTIONS
from ..mcp import LATEST_VERSION, SUPPORTED_VERSIONS
from ..runtime import runtime
from ..schemas import model_schema, self_contained
from ..settings import Settings
from .common import base_url
from .web_developers import TOKEN_ENV, claude_config

bp = Blueprint("docs", __name__)


def _cacheable(response: Response) -> Response:
    # With a configured public address the text is the same for everyone; without one it
    # echoes the request's Host, which must not be cached for other visitors.
    if runtime().settings.public_url:
        response.headers["Cache-Control"] = "public, max-age=300"
    else:
        response.headers["Cache-Control"] = "no-store"
    response.headers["Vary"] = "Host"
    return response


@lru_cache(maxsize=4)
def _source(name: str) -> str:
    return resources.files("lobbytalks").joinpath("docs").joinpath(name).read_text("utf-8")


# The protocol document's two halves; what comes before the first is the header of both,
# less the line saying which half comes first.
_HALVES = {"zh": "\n## 中文\n", "en": "\n## English\n"}
_ORDER_NOTE = "中文在前，English follows below."


def _in_language(text: str, lang: str | None) -> str:
    """The header and one language's half, for ``?lang=en`` or ``?lang=zh`` (an English
    reader met 330 lines of Chinese first); both halves otherwise."""
    if lang not in _HALVES:
        return text
    header, _, rest = text.partition(_HALVES["zh"])
    chinese, _, english = rest.partition(_HALVES["en"])
    header = header.replace(_ORDER_NOTE, "").rstrip().removesuffix("---").rstrip()
    chosen = english if lang == "en" else chinese.rstrip().removesuffix("---").rstrip() + "\n"
    return header + "\n" + _HALVES[lang] + chosen


@bp.get("/docs/external-agents-v1.md")
def protocol_markdown():
    text = (_in_language(_source("external-agents-v1.md"), request.args.get("lang"))
            .replace("{{ACTIONS}}", actions_table())
            .replace("{{VERSIONS}}", "、".join(f"`{v}`" for v in SUPPORTED_VERSIONS))
            .replace("{{VERSIONS_EN}}", ", ".join(f"`{v}`" for v in SUPPORTED_VERSIONS))
            .replace("{{LATEST}}", LATEST_VERSION)
            .replace("{{CLAUDE_CONFIG}}", json.dumps(claude_config(base_url()), separators=(",", ":")))
            .replace("{{TOKEN_ENV}}", TOKEN_ENV)
            .replace("{{BASE_URL}}", base_url()))
    return _cacheable(Response(_stated(text, runtime().settings), mimetype="text/markdown",
                               content_type="text/markdown; charset=utf-8"))


def _stated(text: str, settings: Settings) -> str:
    """``{{MAX_AGENTS}}``, ``{{CLAIM_RATE}}`` (Chinese), ``{{CLAIM_RATE_EN}}`` ... filled in."""
    for suffix, lang in (("_EN", "en"), ("", "zh")):
        for name, value in prose.numbers(settings, lang).items():
            text = text.replace("{{" + name.upper() + suffix + "}}", str(value))
    return text


@bp.get("/docs/question-answers-v073.md")
def question_answers_markdown():
    text = _source("question-answers-v073.md").replace("{{BASE_URL}}", base_url())
    return _cacheable(Response(text, mimetype="text/markdown", content_type="text/markdown; charset=utf-8"))


# Built once with this in place of the address; without a public URL each request's Host
# is the address, and building the document for every new Host would let anyone make the
# server spend tens of milliseconds a request.
_ADDRESS_MARK = "https://lobbytalks.invalid/address"


@lru_cache(maxsize=2)
def _openapi_template(settings: Settings) -> str:
    return json.dumps(openapi.document(_ADDRESS_MARK, settings), ensure_ascii=False, indent=1)


@bp.get("/docs/external-agents-openapi.json")
def openapi_json():
    address = json.dumps(base_url(), ensure_ascii=False)[1:-1]  # inside JSON strings
    text = _openapi_template(runtime().settings).replace(_ADDRESS_MARK, address)
    return _cacheable(Response(text, mimetype="application/json"))


# --- the action table of the Markdown doc, generated so it cannot drift ---------------

@lru_cache(maxsize=1)
def actions_table() -> str:
    rows = ["| action | 方法 / method | 参数 / parameters | 返回 / returns |", "|---|---|---|---|"]
    for action in ACTIONS.values():
        schema = self_contained(action.model, "action")
        required = set(schema.get("required", []))
        params = ", ".join(f"`{name}`{'*' if name in required else ''} {_constraint(prop)}".strip()
                           for name, prop in schema["properties"].items()) or "—"
        rows.append(f"| `{action.name}` | {action.method} | {params} | {_returns(action)} |")
    return "\n".join(rows)


def _constraint(prop: dict[str, Any]) -> str:
    if "anyOf" in prop:
        return " or ".join(filter(None, (_constraint(p) for p in prop["anyOf"])))
    kind = prop.get("type")
    if "enum" in prop:
        text = " / ".join(str(v) for v in prop["enum"])
    elif prop.get("format") == "uuid":
        text = "UUID"
    elif kind == "string":
        text = f"{prop.get('minLength', 0)}–{prop['maxLength']}" if "maxLength" in prop else "string"
    elif kind == "integer":
        text = f"{prop.get('minimum', '')}–{prop.get('maximum', '')}"
    elif kind == "array":
        text = f"array ≤{prop['maxItems']}" if "maxItems" in prop else "array"
    else:
        text = str(kind or "")
    if "default" in prop and prop["default"] not in ("", None):
        text += f", default {prop['default']}"
    return f"({text})" if text else ""


def _returns(action) -> str:
    if action.output is None:
        return "—"
    schema, _ = model_schema(action.output)
    required = set(schema.get("required", []))
    fields = [name if name in required else f"{name}?" for name in schema["properties"]]
    return "`{" + ", ".join(fields) + "}`"
