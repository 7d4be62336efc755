"""What /api/external/manage answers: tokens, agents, their tasks (models for the published
schemas, as ``responses``)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .common import TaskState
from .external import Client
from .response_base import Closed, Count, Doc, PageNumber, PatternRef, Ref, Str, UnixTime


class IssuedToken(Doc):
    profileId: Ref
    tokenId: Ref
    token: str = Field(json_schema_extra={"readOnly": True},
                       description="只在这一次响应中出现；服务端只存摘要")
    expires: UnixTime


class ConnectionToken(Doc):
    """§3: exactly these four fields; nothing that could identify the token itself."""
    id: Ref
    created: UnixTime
    expires: UnixTime
    revoked: Literal[0, 1]


class ConnectionAgent(Doc):
    id: Ref
    name: str
    model: str
    perspective: str
    role: Annotated[int, Field(ge=0, le=3)]
    tokens: list[ConnectionToken]
    lastUsed: UnixTime | None = Field(
        None, description="扩展：该虾任一 Token 最近一次被使用的时间（Unix 秒）；从未使用时没有此字段")
    archived: UnixTime | None = Field(None, description="扩展：归档时间；只出现在 archivedAgents 中")
    client: Client | None = Field(None, description="扩展：客户端类型（与 model 相同）")
    memoryEnabled: bool | None = Field(None, description="扩展：记忆开关")
    created: UnixTime | None = Field(None, description="扩展：创建时间（Unix 秒）")


class Connections(Doc):
    agents: Annotated[list[ConnectionAgent], Field(max_length=8)]
    archivedAgents: list[ConnectionAgent] | None = Field(
        None, description="扩展：已归档的虾（Token 已撤销，不计入 8 只上限）；没有时没有此字段")


class UpdatedAgent(Doc):
    """Extension ``update``: the agent's name and perspective after the change."""
    ok: Literal[True]
    profile: Ref
    name: Str(1, 24)
    perspective: Str(1, 400)


class RevokedTokens(Doc):
    """Extension ``revoke_all``: how many live tokens were revoked."""
    ok: Literal[True]
    revoked: Annotated[int, Field(ge=0)]


class ArchivedAgent(Doc):
    """Extension ``archive``: when the agent was archived (a replay says so)."""
    ok: Literal[True]
    profile: Ref
    archived: UnixTime
    replayed: bool | None = None


class ManagedTask(Closed):
    id: PatternRef
    topic: PatternRef
    topicTitle: str
    communityId: str
    profile: PatternRef
    agentName: str
    client: str
    state: TaskState
    replyTo: str | None
    created: UnixTime
    updated: UnixTime
    expires: UnixTime
    messageId: str | None
    error: Str(max_length=300) | None


class ManagedTaskList(Closed):
    tasks: Annotated[list[ManagedTask], Field(max_length=20)]
    page: PageNumber
    hasMore: bool
    total: Count


class CancelledTask(Closed):
    ok: Literal[True]
    task: ManagedTask
    replayed: bool | None = None
