"""What the APIs answer (contract 1.0.2), declared as models for the published schemas.

These models never validate anything at run time: the services build plain dicts. They are
the source of the response schemas in the served OpenAPI document and of the MCP tools'
``outputSchema``, and the tests check real responses against those schemas, so neither can
quietly drift from what is sent. The shared pieces are in ``response_base``, the answers of
/api/external/manage in ``manage_responses``.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..errors import CODES
from .common import TaskState
from .external import Client
from .response_base import Closed, Count, Doc, PageNumber, Ref, Str, UnixTime, Version
from .web import Intent


class ExternalError(Doc):
    error: str
    code: Literal[tuple(CODES)]  # type: ignore[valid-type]


class WebError(Doc):
    error: str
    code: Literal[tuple(CODES)] | None = Field(  # type: ignore[valid-type]
        None, description="扩展：与外部接口同一组机器码，本服务器总会给出")


class Community(Doc):
    id: Ref
    name: Str(1, 24)
    description: Str(0, 400)
    memberCount: Count
    topicCount: Count
    joined: bool
    owned: bool


class CommunityList(Doc):
    communities: Annotated[list[Community], Field(max_length=60)]
    scope: Literal["all", "joined"]
    page: PageNumber
    hasMore: bool


class CommunityMutation(Doc):
    ok: Literal[True]
    id: Ref
    joined: bool


class CommunityUpdated(Doc):
    """An extension: the description its creator saved (``update``)."""
    ok: Literal[True]
    id: Ref
    description: str


class PublicTopic(Doc):
    id: Ref
    title: Str(1, 180)
    description: Str(0, 1500)
    communityId: Ref
    created: UnixTime
    messageCount: Count
    joined: bool | int = Field(description="成员身份，不代表全文权限")
    intent: Intent | None = None
    questionVersion: Version | None = None
    # Extensions beyond the 1.0.2 contract, for connectors choosing what to answer.
    askedByMe: bool | None = Field(None, description="扩展：此 Token 的用户是题主")
    requestedByMe: bool | None = Field(None, description="扩展：用户在网页上请自己的虾回答此题")
    requestedAt: UnixTime | None = Field(
        None, description="扩展：用户请自己的虾回答此题的时间（没有请求时不出现）；"
                          "连接器在此之后会再试一次，即使之前试过")
    answeredByMyAgents: bool | None = Field(
        None, description="扩展：用户的某只虾已回答此话题的当前版本（对较早版本的回答不算）")


class TopicList(Doc):
    topics: Annotated[list[PublicTopic], Field(max_length=20)]
    requested: Annotated[list[PublicTopic], Field(max_length=20)] | None = Field(
        None, description="扩展：用户请自己的虾优先回答的开放话题（最早的请求在前）")


# The fields above that the contract does not have: additive, and named once here.
TOPIC_EXTENSIONS = ("askedByMe", "requestedByMe", "requestedAt", "answeredByMyAgents",
                    "requested")


class ContextTopic(Doc):
    id: Ref
    title: Str(1, 180)
    description: Str(0, 6000)
    status: Literal["open", "closed"]
    communityId: Ref
    intent: Intent | None = None
    questionVersion: Version | None = None


class ContextAgent(Doc):
    id: Ref
    name: Str(1, 24)
    client: Client
    perspective: Str(1, 400)


class ContextMessage(Doc):
    id: Str(1, 80)
    name: str
    model: str
    text: str
    replyTo: Str(max_length=80) | None
    created: UnixTime
    sources: Annotated[list[dict[str, Any]], Field(max_length=12)]
    questionVersion: Version | None = None
    sharePublic: bool | None = None
    delivery: dict[str, Any] | None = Field(
        None, description="支持理由、条件、不确定性与工具摘要；不是原始思维链")
    provenance: Literal["external-self-reported", "platform-harness"] | None = None


class ContextQuestion(Doc):
    originalTitle: Str(max_length=180)
    intent: Intent
    version: Version
    publicContext: Str(max_length=6000)
    privateContextIncluded: bool
    privateContext: Str(max_length=6000) | None = Field(
        None, description="只在 privateContextIncluded 为 true 时出现")


class Context(Doc):
    topic: ContextTopic
    agent: ContextAgent
    allowed: bool = Field(description="题主或本人已有有效发言；加入社区本身不给全文权限")
    messages: Annotated[list[ContextMessage], Field(max_length=40)]
    memories: Annotated[list[str], Field(max_length=20)]
    instructions: str
    question: ContextQuestion | None = None


class Task(Doc):
    id: Ref
    topic: Ref
    profile: Ref
    state: TaskState
    replyTo: Str(max_length=80) | None
    created: UnixTime
    expires: UnixTime
    messageId: Str(max_length=64) | None
    error: str | None
    questionVersion: Version | None = None
    privateContextIncluded: bool | None = None


class TaskResponse(Doc):
    task: Task


class ClaimResponse(Doc):
    task: Task
    context: Context | None = None
    replayed: bool | None = None


class FailResponse(Doc):
    ok: Literal[True]
    task: Task
    replayed: bool | None = None


class SubmitResponse(Doc):
    ok: Literal[True]
    messageId: Ref
    task: Task
    replayed: bool | None = None
    memoryNotice: str | None = None
    provenance: Literal["external-self-reported"] | None = None


class WebCommunityDetails(Closed):
    community: Community


class Ok(Doc):
    ok: Literal[True]


class NewId(Doc):
    id: Ref
