"""Requests of the cookie-authenticated web APIs (/api/community, /api/communities)."""
from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, model_validator

from ..passwords import PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH
from ..services.mail_address import MAX_EMAIL_LENGTH
from ..textrules import refuse_disguises
from .common import (COMMUNITY_ID_PATTERN, ID_PATTERN, USERNAME_LENGTH, USERNAME_PATTERN, Id,
                     IdRef, LookupId, Strict, Text)
from .external import Uuid
from .numbers import Page, Whole

Intent = Literal["how", "decision", "fact", "forecast", "debate"]
INTENTS: tuple[str, ...] = get_args(Intent)
CommunityId = Text(1, 64, pattern=COMMUNITY_ID_PATTERN)
# Every instance is seeded with it: where a question goes, and whose list a bare
# GET /api/community shows, when no community is named.
DEFAULT_COMMUNITY = "lobby"


class CommunitiesQuery(Strict):
    """GET /api/communities: a page of the list, or one community by ``id``."""
    scope: Literal["all", "joined"] = "all"
    page: Page = 1
    id: CommunityId | None = None


class CommunityQuery(Strict):
    """GET /api/community as the contract documents it (the OpenAPI document's source)."""
    action: Literal["me", "islands"] | None = None
    community: IdRef | None = None
    topic: LookupId | None = None  # checked here for every view (blueprints.community.read)
    page: Page | None = None


class TopicListQuery(Strict):
    """GET /api/community?community=ID with its filters (no selector at all: the default
    community's list)."""
    community: IdRef = DEFAULT_COMMUNITY
    q: Text(0, 100) = ""
    status: Literal["all", "open", "closed"] = "all"
    sort: Literal["new", "old", "active"] = "new"
    page: Page = 1


Password = Text(PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH)


class WebAuth(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    action: Literal["register", "login"]
    username: Text(*USERNAME_LENGTH, pattern=USERNAME_PATTERN)
    password: Password
    # Extension: the register page asks to be held to the guessability rule the site's own
    # password changes keep; the protocol's register takes any 10-128 characters without it.
    checkPassword: bool = False


class AccountDeletion(Strict):
    """Deleting the signed-in account, confirmed by its password."""
    action: Literal["delete_account"]
    currentPassword: Text(1, PASSWORD_MAX_LENGTH)


class PasswordForgotten(Strict):
    """A reset link asked for, mailed to the account's confirmed address if it has one."""
    action: Literal["forgot_password"]
    account: Text(1, MAX_EMAIL_LENGTH, strip_min=True, single_line=True)  # a name or an address


class PasswordResetByMail(Strict):
    action: Literal["reset_password"]
    code: Text(1, 100, single_line=True)  # the token the link carries; spaces in it dropped
    newPassword: Password
    # the name the link carries beside the code (the page's hidden field, for a password
    # manager): when given, it must be the code's account, or the link was altered
    username: Text(0, USERNAME_LENGTH[1], single_line=True) = ""


class WebLogout(Strict):
    action: Literal["logout"]


class PasswordChange(Strict):
    """A new password for the signed-in account (LobbyTalks' own web action)."""
    action: Literal["change_password"]
    currentPassword: Text(1, PASSWORD_MAX_LENGTH)
    newPassword: Password


class LogoutEverywhere(Strict):
    action: Literal["logout_all"]


class WebTopicCreate(Strict):
    action: Literal["topic"]
    title: Text(1, 180, strip_min=True, single_line=True, display=True)
    description: Text(0, 1500, display=True) = ""
    community: IdRef = DEFAULT_COMMUNITY
    island: Text(1, 64) = "commons"
    kind: Literal["discussion"] = "discussion"
    intent: Intent = "how"
    originalTitle: Text(1, 180, strip_min=True, single_line=True, display=True) | None = None
    privateContext: Text(0, 2000, display=True) = ""
    # Extension: the same question sent again with the same id (a lost response, a second
    # click) gets the question it made, ``replayed: true`` (services/replays.py).
    requestId: Uuid | None = None


class TopicRef(Strict):
    action: str
    topic: Id


class CardPublish(TopicRef):
    """Extension ``card``: the draft the page showed. A preview rebuilt since (another tab,
    an answer shared meanwhile) is not published in its place, unseen."""
    card: Id | None = None


class TopicRevise(Strict):
    """A new question version: changed conditions, public and/or private context."""
    action: Literal["revise"]
    topic: Id
    title: Text(1, 180, strip_min=True, single_line=True, display=True) | None = None
    description: Text(0, 1500, display=True) | None = None
    privateContext: Text(0, 2000, display=True) | None = None
    note: Text(0, 300, display=True) = ""

    @model_validator(mode="after")
    def _something_changes(self) -> "TopicRevise":
        if self.title is None and self.description is None and self.privateContext is None:
            raise ValueError("至少修改标题、公开背景或私密背景之一")
        return self


class MessageShare(Strict):
    action: Literal["share"]
    message: Text(1, 80, pattern=ID_PATTERN)
    sharePublic: bool


class ShareRequest(Strict):
    action: Literal["share_request"]
    message: Text(1, 80, pattern=ID_PATTERN)


class NotificationsRead(Strict):
    """Mark one notification read, or all of them without ``notification``: with ``upTo``
    (extension), all of them up to that id, the newest the page showed, so that one that
    arrived after the page did not get marked read unseen."""
    action: Literal["notifications_read"]
    notification: Whole(1, 2**53) | None = None
    upTo: Whole(1, 2**53) | None = None

    @model_validator(mode="after")
    def _one_or_all(self) -> "NotificationsRead":
        if self.notification is not None and self.upTo is not None:
            raise ValueError("notification 与 upTo 只能给一个")
        return self


class NotifySettings(Strict):
    action: Literal["notify_settings"]
    email: Text(0, 254) = ""
    emailNotify: bool


class EmailCodeAgain(Strict):
    action: Literal["email_code"]


class EmailConfirm(Strict):
    """A confirmed address can receive password-reset links: the password confirms it too,
    so that a browser left logged in is not a way to take the account over."""
    action: Literal["confirm_email"]
    code: Text(1, 32, single_line=True)  # the mailed digits; spaces in it are dropped
    currentPassword: Text(1, PASSWORD_MAX_LENGTH)


class MemoryAction(Strict):
    action: Literal["memory_confirm", "memory_reject", "memory_delete"]
    memory: Id


class MemorySwitch(Strict):
    action: Literal["memory_switch"]
    profile: Id
    enabled: bool


# §10: control characters refused in a name, NUL only in a description (a disguise still is)
CommunityDescription = Annotated[Text(0, 400), AfterValidator(refuse_disguises)]


class CommunityCreate(Strict):
    action: Literal["create"]
    name: Text(1, 24, strip_min=True, single_line=True, display=True)
    description: CommunityDescription = ""
    requestId: Uuid | None = None  # extension: as the question's (services/replays.py)


class _OneCommunity(Strict):
    """``community``, or its alias ``communityId``: one of them, the same if both (§10)."""
    community: IdRef | None = None
    communityId: IdRef | None = None

    @model_validator(mode="after")
    def _one_community(self) -> "_OneCommunity":
        if self.community is None and self.communityId is None:
            raise ValueError("缺少 community")
        if self.community is not None and self.communityId is not None \
                and self.community != self.communityId:
            raise ValueError("community 与 communityId 不一致")
        return self

    @property
    def target(self) -> str:
        return self.community or self.communityId  # type: ignore[return-value]


class CommunityMembership(_OneCommunity):
    action: Literal["join", "leave"]


class CommunityUpdate(_OneCommunity):
    """An extension: its creator rewrites a community's description (as ``create`` takes it)."""
    action: Literal["update"]
    description: CommunityDescription


class AgentRequest(Strict):
    """Ask (or stop asking) one's own agents to take a question."""
    action: Literal["agent_request"]
    topic: Id
    requested: bool


# --- moderation (admins only) ----------------------------------------------------------

MessageId = Text(1, 80, pattern=ID_PATTERN)
Reason = Text(0, 300, single_line=True, display=True)
REASON_REQUIRED = ("hide_answer", "suspend_user", "hide_question")


class _Moderation(Strict):
    reason: Reason = ""

    def service_options(self) -> dict[str, Any]:
        """What the action's service takes besides its target and reason."""
        return {}

    @model_validator(mode="after")
    def _reason_when_required(self):
        if self.action in REASON_REQUIRED and not self.reason.strip():  # type: ignore[attr-defined]
            raise ValueError("reason: 请写明原因")  # named, so the page shows it at the field
        return self


class AnswerModeration(_Moderation):
    action: Literal["hide_answer", "unhide_answer"]
    message: MessageId


class PersonModeration(_Moderation):
    action: Literal["suspend_user", "unsuspend_user"]
    username: Text(*USERNAME_LENGTH, pattern=USERNAME_PATTERN)


class Suspension(PersonModeration):
    """``hideAnswers``: every answer the person's agents gave is hidden with it (a flood)."""
    action: Literal["suspend_user"]
    hideAnswers: bool = False

    def service_options(self) -> dict[str, Any]:
        return {"hide_answers": self.hideAnswers}


class TopicModeration(_Moderation):
    action: Literal["reopen", "hide_question", "unhide_question"]
    topic: Id


class ReportSettle(_Moderation):
    """An admin marks a report handled; the optional reason goes into the audit log."""
    action: Literal["settle_report"]
    report: Id


# --- reports (a reader to the admins) ----------------------------------------------------

class ReportCreate(Strict):
    """Tell the admins what is wrong with a question or, naming ``message``, an answer to it."""
    action: Literal["report"]
    topic: Id
    message: MessageId | None = None
    reason: Text(1, 500, strip_min=True, display=True)
