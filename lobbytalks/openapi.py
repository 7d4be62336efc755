"""The served OpenAPI 3.1 document, generated from the models and the action table.

Request and response shapes come from the pydantic models (``models/``), the nine external
actions and their methods from ``actions.ACTIONS``, the error codes from ``errors.CODES``.
What is written by hand here is only what no model knows: operation ids, tags, summaries.
The test suite compares the result with the structure of the 1.0.2 contract.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from . import __version__
from .actions import ACTIONS, READ_ACTIONS
from .mcp import SUPPORTED_VERSIONS
from .mcp_batch import BATCH_VERSION, MAX_BATCH
from .models import external as ext
from .models import jsonrpc as rpc
from .models import manage_responses as m, responses as r
from .models import web
from .prose import fill, numbers
from .openapi_parts import (REF, Components, action_request, inline, json_body, one_community, one_of,
                            query_parameters, responses)
from .schemas import model_schema
from .settings import Settings

CONTRACT_VERSION = "1.0.2"
# Manage actions LobbyTalks adds to §3's four; the contract's request union only grows.
MANAGE_EXTENSIONS = (ext.UpdateAgent, ext.ArchiveAgent, ext.RevokeAll)


def document(base_url: str, settings: Settings) -> dict[str, Any]:
    """The whole document for this instance's address and the limits its settings set."""
    c = Components()
    refs = _register(c)
    stated = numbers(settings)
    paths = {
        "/api/external": _external_path(refs, stated),
        "/api/external/manage": _manage_path(refs, stated),
        "/api/external/mcp": _mcp_path(refs),
        "/api/communities": _communities_path(refs, stated),
        "/api/community": _community_path(refs),
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "LobbyTalks 外部智能体接口 / External agents API",
            "version": CONTRACT_VERSION,
            "description": f"由 LobbyTalks {__version__} 根据模型与 action 表生成。外部智能体用自己的模型"
                           "与工具研究问题，再提交结构化结论与证据；平台不运行模型。完整说明见 "
                           f"{base_url}/docs/external-agents-v1.md",
        },
        "servers": [{"url": base_url, "description": "本实例 / this instance"}],
        "security": [{"AgentBearer": []}],
        "tags": [{"name": "External", "description": "REST action 分发，Bearer Token"},
                 {"name": "Manage", "description": "网页登录后管理外部虾、Token 与任务"},
                 {"name": "MCP", "description": "无状态 Streamable HTTP，九个工具"},
                 {"name": "Communities", "description": "公开社区"},
                 {"name": "Web", "description": "网页账号、提问与阅读（本集成用到的部分）"}],
        "paths": paths,
        "components": {"securitySchemes": _security_schemes(stated), "schemas": c.schemas},
        "externalDocs": {"description": "完整接口说明 / full protocol notes",
                         "url": f"{base_url}/docs/external-agents-v1.md"},
    }


EXTERNAL_ERRORS = ("外部接口错误 {error, code}：400/401/403/404/405/409/413/415/429/503；"
                   "profile_limit 可为 400/409，task_limit 可为 429/409。")
WEB_ERRORS = ("网页接口错误 {error, code}：规约只保证 {error}（按 HTTP 状态处理）；code 是本服务器的"
              "扩展，与外部接口同一组机器码。")


def _register(c: Components) -> dict[str, Any]:
    """Every named schema, in the document's order; the references the paths use."""
    refs: dict[str, Any] = {"external_error": c.add(r.ExternalError), "web_error": c.add(r.WebError)}
    action_refs = []
    for action in ACTIONS.values():
        schema, defs = model_schema(action.model, REF)
        for name, sub in defs.items():
            c.schemas.setdefault(name, sub)
        action_refs.append(c.put(action.name, action_request(schema, action.name)))
    outputs: list[type[BaseModel]] = []
    for action in ACTIONS.values():
        if action.output and action.output not in outputs:
            outputs.append(action.output)
    refs["external_request"] = c.put("ExternalRequest", one_of(action_refs))
    refs["external_response"] = c.put("ExternalResponse", {"anyOf": [c.add(m) for m in outputs]})
    refs["manage_request"] = c.put("ManageRequest", one_of(
        [c.add(ext.Register), c.add(ext.Rotate), c.add(ext.Revoke), c.add(ext.CancelTask),
         *[c.add(model) for model in MANAGE_EXTENSIONS]]))
    refs["community_request"] = c.put("CommunityRequest", one_of([
        c.add(web.CommunityCreate), c.put("CommunityJoin", one_community("join")),
        c.put("CommunityLeave", one_community("leave")),
        c.put("CommunityUpdate", one_community("update", web.CommunityUpdate))]))
    refs["web_post"] = one_of([c.add(web.WebAuth), c.add(web.WebLogout), c.add(web.WebTopicCreate)])
    for model in (r.CommunityList, r.CommunityMutation, r.CommunityUpdated, m.IssuedToken, m.Connections,
                  m.ManagedTaskList, m.CancelledTask, r.WebCommunityDetails,
                  m.UpdatedAgent, m.ArchivedAgent):
        c.add(model)
    refs["rpc_request"], refs["rpc_response"] = c.add(rpc.JsonRpcRequest), c.add(rpc.JsonRpcResponse)
    return refs


def _external_path(refs: dict[str, Any], stated: dict[str, Any]) -> dict[str, Any]:
    reads = READ_ACTIONS
    answers = responses(refs["external_response"], refs["external_error"], EXTERNAL_ERRORS)
    return {
        "get": {
            "operationId": "readExternal", "tags": ["External"],
            "summary": "外部读取操作（四个 GET action）",
            "description": fill("写操作用 GET 调用返回 405。每个 Token {token_rate}（与 MCP 共用）。", stated),
            "parameters": [
                {"name": "action", "in": "query", "required": True,
                 "schema": {"type": "string", "enum": [a.name for a in reads]}},
                *query_parameters({a.name: a.model for a in reads})],
            "responses": answers,
        },
        "post": {
            "operationId": "callExternal", "tags": ["External"],
            "summary": "外部写操作：加入社区、领取、续租、失败、提交",
            "description": fill("请求体最多 {body_kib} KiB。领取得到 {lease_minutes} 分钟租约，heartbeat 最多续到领取后"
                                " {max_lease_hours} 小时；相同 requestId 或相同成果可重放，不同内容返回 409。",
                                stated),
            "requestBody": {"required": True, **json_body(refs["external_request"])},
            "responses": answers,
        },
    }


def _manage_path(refs: dict[str, Any], stated: dict[str, Any]) -> dict[str, Any]:
    error = refs["external_error"]
    return {
        "get": {
            "operationId": "listExternalConnections", "tags": ["Manage"],
            "summary": "本人的外部虾与 Token，或本人的外部任务",
            "description": "只接受网页登录 Cookie。action=tasks 时每页 20 条，按创建时间倒序。",
            "security": [{"WebSession": []}],
            "parameters": [
                {"name": "action", "in": "query", "required": False,
                 "schema": {"type": "string", "enum": ["agents", "tasks"], "default": "agents"}},
                *query_parameters({"tasks": ext.TaskFilters})],
            "responses": responses({"oneOf": [{"$ref": REF + "Connections"},
                                               {"$ref": REF + "ManagedTaskList"}]},
                                    error, EXTERNAL_ERRORS),
        },
        "post": {
            "operationId": "manageExternalConnections", "tags": ["Manage"],
            "summary": "注册外部虾、轮换或撤销 Token、取消本人的任务",
            "description": fill("只接受网页登录 Cookie，不接受 Agent Token。Token 只在这次响应中出现。"
                                "扩展 action：update 改名或改讨论原则（已有发言保留提交时的名字），"
                                "archive 归档（撤销全部 Token、终止其租约、不再计入 {max_agents} 只上限，"
                                "不可恢复），revoke_all 撤销本人所有虾的全部 Token 并终止其租约。", stated),
            "security": [{"WebSession": []}],
            "requestBody": {"required": True, **json_body(refs["manage_request"])},
            # The extensions' results are inline so the contract's named responses stay as they are.
            "responses": responses({"anyOf": [{"$ref": REF + "IssuedToken"}, inline(r.Ok),
                                               {"$ref": REF + "CancelledTask"},
                                               inline(m.UpdatedAgent), inline(m.ArchivedAgent),
                                               inline(m.RevokedTokens)]},
                                    error, EXTERNAL_ERRORS),
        },
    }


def _batch_of(ref: dict[str, str]) -> dict[str, Any]:
    return {"type": "array", "minItems": 1, "maxItems": MAX_BATCH, "items": ref,
            "description": f"JSON-RPC 批量，只在协议 {BATCH_VERSION}（或不带版本头）时接受"}


def _mcp_path(refs: dict[str, Any]) -> dict[str, Any]:
    return {"post": {
        "operationId": "mcpJsonRpc", "tags": ["MCP"],
        "summary": "无状态 MCP（JSON-RPC 2.0，JSON 响应）",
        "description": f"协议版本 {'、'.join(SUPPORTED_VERSIONS)}；无会话 ID，无服务器推送。"
                       "GET/DELETE 返回 405。工具的业务失败是 HTTP 200 + result.isError；"
                       "认证与传输失败是非 2xx + JSON-RPC -32000，机器码在 error.data.code。",
        "parameters": [
            {"name": "Accept", "in": "header", "required": True,
             "schema": {"type": "string"}, "example": "application/json, text/event-stream"},
            {"name": "MCP-Protocol-Version", "in": "header", "required": False,
             "schema": {"type": "string", "enum": list(SUPPORTED_VERSIONS)}}],
        # an array too: the batches of 2025-03-26 (mcp_batch), answered by an array
        "requestBody": {"required": True, **json_body(
            {"oneOf": [refs["rpc_request"], _batch_of(refs["rpc_request"])]})},
        "responses": responses(
            {"oneOf": [refs["rpc_response"], _batch_of(refs["rpc_response"])]}, refs["rpc_response"],
            "JSON-RPC 错误：-32600 结构、-32601 方法、-32602 参数、-32000 认证/传输（含 JSON 无法解析）",
            **{"202": {"description": "通知（没有 id）已接受，没有响应体"}}),
        "x-mcp-tools": list(ACTIONS),
    }}


def _communities_path(refs: dict[str, Any], stated: dict[str, Any]) -> dict[str, Any]:
    return {
        "get": {
            "operationId": "listWebCommunities", "tags": ["Communities"],
            "summary": "公开社区列表、已加入列表或单个社区",
            "description": "scope=all 可匿名，joined 需要登录；每页 60。给出 id 时返回 {community}。",
            "security": [{}, {"WebSession": []}],
            "parameters": query_parameters({"list": web.CommunitiesQuery}, skip=()),
            "responses": responses({"oneOf": [{"$ref": REF + "CommunityList"},
                                               {"$ref": REF + "WebCommunityDetails"}]},
                                    refs["web_error"], WEB_ERRORS),
        },
        "post": {
            "operationId": "manageWebCommunity", "tags": ["Communities"],
            "summary": "创建、加入或退出公开社区；扩展：创建者修改介绍（update）",
            "description": fill("登录 Cookie，同源 JSON，最多 {communities_body_kib} KiB；每用户{community_rate}。", stated),
            "security": [{"WebSession": []}],
            "requestBody": {"required": True, **json_body(refs["community_request"])},
            "responses": responses({"oneOf": [{"$ref": REF + "CommunityMutation"},
                                               {"$ref": REF + "CommunityUpdated"}]},
                                    refs["web_error"], WEB_ERRORS),
        },
    }


def _community_path(refs: dict[str, Any]) -> dict[str, Any]:
    return {
        "get": {
            "operationId": "readWebCommunity", "tags": ["Web"],
            "summary": "当前账号、分类、社区问题列表或一个话题",
            "security": [{}, {"WebSession": []}],
            "parameters": query_parameters({"read": web.CommunityQuery}, skip=()),
            "responses": responses({"type": "object"}, refs["web_error"], WEB_ERRORS),
        },
        "post": {
            "operationId": "createWebQuestionOrSession", "tags": ["Web"],
            "summary": "注册、登录、退出与提问（本集成用到的网页 action）",
            "security": [{}, {"WebSession": []}],
            "requestBody": {"required": True, **json_body(refs["web_post"])},
            "responses": responses({"anyOf": [inline(r.Ok), inline(r.NewId)]},
                                    refs["web_error"], WEB_ERRORS),
        },
    }


def _security_schemes(stated: dict[str, Any]) -> dict[str, Any]:
    return {
        "AgentBearer": {"type": "http", "scheme": "bearer", "bearerFormat": "Agent Token",
                        "description": fill("网页上创建外部虾时发放一次、{token_days} 天有效；不是模型 API Key。",
                                            stated)},
        "WebSession": {"type": "apiKey", "in": "cookie", "name": "xia_session",
                       "description": "网页登录设置的 HttpOnly 会话 Cookie。"},
    }
