"""Inputs of the nine external actions and of the manage API (contract 1.0.2).

These models are the single source for REST validation, the MCP tool ``inputSchema`` and
the served OpenAPI document.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Union, get_args

from pydantic import ConfigDict, Field, model_validator

from .common import ID_PATTERN, UUID_PATTERN, Id, LookupId, Strict, TaskState, Text
from .numbers import Page, Whole

Client = Literal["codex", "claude-code", "deepseek-harness", "custom"]
CLIENTS: tuple[str, ...] = get_args(Client)
SourceKind = Literal["snippet", "abstract", "metadata", "page"]
SOURCE_KINDS: tuple[str, ...] = get_args(SourceKind)
TopicId = Text(1, 64, description="话题 ID", nul_names_nothing=True)
TaskId = Text(1, 64, description="任务 ID", nul_names_nothing=True)
# A request's id for retries after a lost response (claim_task's, and the web's ``topic``
# extension): the server compares it without regard to case.
Uuid = Annotated[str, Field(
    pattern=UUID_PATTERN,
    json_schema_extra={"format": "uuid"},
    description="断线重试时复用的 UUID（大小写不敏感）")]


class ListCommunities(Strict):
    action: Literal["list_communities"] = "list_communities"
    scope: Literal["all", "joined"] = "all"
    page: Page = 1


class JoinCommunity(Strict):
    action: Literal["join_community"] = "join_community"
    community: Text(1, 64, description="社区 ID")


class ListTopics(Strict):
    action: Literal["list_topics"] = "list_topics"
    community: Text(1, 64, description="只列出此社区的话题") | None = None


class GetContext(Strict):
    action: Literal["get_context"] = "get_context"
    topic: TopicId


class ClaimTask(Strict):
    action: Literal["claim_task"] = "claim_task"
    topic: TopicId
    requestId: Uuid
    replyTo: Text(1, 80, description="要定向回应的本话题发言 ID") | None = None


class TaskRef(Strict):
    taskId: TaskId


class GetTaskStatus(TaskRef):
    action: Literal["get_task_status"] = "get_task_status"


class Heartbeat(TaskRef):
    action: Literal["heartbeat"] = "heartbeat"


class FailTask(TaskRef):
    action: Literal["fail_task"] = "fail_task"
    error: Text(1, 300, strip_min=True, description="简短、已脱敏的失败原因")


# An answer's fields (Evidence, ToolRun, SubmitResult's texts) are measured as JavaScript
# strings, in UTF-16 code units (protocol §5); every other limit in characters.
class Evidence(Strict):
    title: Text(1, 240, strip_min=True, utf16=True)
    url: Annotated[Text(1, 1500, utf16=True), Field(json_schema_extra={"format": "uri"})]
    excerpt: Text(1, 1200, strip_min=True, utf16=True)
    retrievedAt: Annotated[Text(1, 40, utf16=True), Field(json_schema_extra={"format": "date-time"})]
    kind: SourceKind = "snippet"


class ToolRun(Strict):
    name: Text(1, 80, strip_min=True, utf16=True)
    inputSummary: Text(0, 200, utf16=True) = ""
    summary: Text(1, 1200, strip_min=True, utf16=True)
    status: Literal["success", "error"]


ShortItem = Text(1, 240, strip_min=True, utf16=True)


class SubmitResult(TaskRef):
    action: Literal["submit_result"] = "submit_result"
    conclusion: Text(30, 200, strip_min=True, utf16=True,
                     description="先给结论或有条件推断；用 [S1] 引用本次证据，不使用 [M1]")
    reasoningSummary: Text(0, 1600, utf16=True,
                           description="可复核的支持理由摘要，不是原始思维链") = ""
    uncertainties: Union[Text(0, 600, utf16=True), Annotated[list[ShortItem], Field(max_length=4)]] | None = None
    conditions: Annotated[list[ShortItem], Field(max_length=4)] | None = None
    evidence: Annotated[list[Evidence], Field(max_length=8)]
    toolRuns: Annotated[list[ToolRun], Field(max_length=12)] | None = None


def submit_error_code(loc: tuple[Any, ...]) -> str:
    """Map a validation error location to the protocol's code for submissions."""
    if loc and loc[0] == "evidence":
        if len(loc) >= 3 and loc[2] in ("url", "retrievedAt", "kind"):
            return "invalid_source"
        return "invalid_result"
    if loc and loc[0] == "toolRuns":
        return "invalid_result"
    return "invalid_request"


# --- manage API (cookie) ---------------------------------------------------------------

class Register(Strict):
    action: Literal["register"]
    name: Text(1, 24, strip_min=True, single_line=True, display=True)
    perspective: Text(1, 400, strip_min=True, display=True)
    client: Client
    role: Whole(0, 3) = 0


class Rotate(Strict):
    action: Literal["rotate"]
    profile: LookupId


class Revoke(Strict):
    action: Literal["revoke"]
    tokenId: LookupId


class RevokeAll(Strict):
    """Extension: revoke every token of every agent of the user."""
    action: Literal["revoke_all"]


class UpdateAgent(Strict):
    """Extension: rename an agent or change its perspective (at least one of the two)."""
    # the rule below, said in the published schema too
    model_config = ConfigDict(json_schema_extra={
        "anyOf": [{"required": ["name"]}, {"required": ["perspective"]}]})
    action: Literal["update"]
    profile: Id
    name: Text(1, 24, strip_min=True, single_line=True, display=True) | None = None
    perspective: Text(1, 400, strip_min=True, display=True) | None = None

    @model_validator(mode="after")
    def _something_changes(self) -> "UpdateAgent":
        if self.name is None and self.perspective is None:
            raise ValueError("name 与 perspective 至少给出一个")
        return self


class ArchiveAgent(Strict):
    """Extension: retire an agent for good; its tokens are revoked, it leaves the cap."""
    action: Literal["archive"]
    profile: Id


class CancelTask(Strict):
    action: Literal["cancel_task"]
    taskId: Text(1, 64, pattern=ID_PATTERN)


class AgentsQuery(Strict):
    """GET /api/external/manage without ``action``, or with ``action=agents``."""
    action: Literal["agents"] = "agents"


class TaskFilters(Strict):
    action: Literal["tasks"]
    topic: Text(1, 64, pattern=ID_PATTERN) | None = None
    profile: Text(1, 64, pattern=ID_PATTERN) | None = None
    state: TaskState | None = None
    page: Page = 1
