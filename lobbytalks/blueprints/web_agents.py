"""A person's own agents: connections and tokens, their tasks, and the memory garden."""
from __future__ import annotations

from typing import Any

from flask import request

from .. import clock
from ..errors import ApiError
from ..models.common import parse_model, query_args
from ..models.common import TASK_STATES
from ..models.external import CLIENTS, TaskFilters
from ..runtime import runtime
from ..services import agents, memories, tasks
from ..services.moderation import SUSPENDED_TASK
from ..services.reading import TAKEN_DOWN, TAKEN_DOWN_TITLE, readable_topic
from ..services.settlement import (AGENT_ARCHIVED, CANCELLED, DEAD_CONNECTION, LEASE_EXPIRED,
                                   TOKEN_REVOKED, TOKEN_ROTATED)
from .web_base import (base_url, Pages, day, distinct_labels, in_own_lang, login_required,
                       render, t, viewer)
from .kept_pages import kept_page
from .web_developers import ENV_SNIPPET, client_configs
from .common import read_conn

pages = Pages()


# How long before an agent's last token expires its card says so: a connector running as a
# service stops answering on that day, with nothing else to tell its owner.
TOKEN_WARNING_SECONDS = 7 * 86400


@pages.get("/agents")
@login_required
@kept_page
def agents_page():
    user = viewer()
    now = clock.now()
    listing = agents.list_agents(runtime().db, user.id, now=now)
    base = base_url()
    live = [a for a in listing["agents"] if not a["archived"]]
    archived = [a for a in listing["agents"] if a["archived"]]
    return render("agents.html", agents=live, archived=archived, clients=CLIENTS, now=now,
                  agent_labels=agent_labels(listing["agents"]),
                  last_tasks=agents.last_tasks(read_conn(), user.id),
                  shown_state=shown_state, reason_text=reason_text,
                  base=base, configs=client_configs(base), env_snippet=ENV_SNIPPET,
                  max_agents=agents.MAX_AGENTS, token_warning_seconds=TOKEN_WARNING_SECONDS)


def agent_labels(own_agents: list[dict[str, Any]], *, with_client: bool = False
                 ) -> dict[str, str]:
    """``{id: name}`` (``name (client)`` ``with_client``), with as much more as it takes
    where one person's agents share a name: its client, the day it was made, its id. A
    filter, a landmark or a button naming one must tell it from the other."""
    def client(a: dict[str, Any]) -> str:
        return t("client." + a["client"])

    def made(a: dict[str, Any]) -> str:  # the memory garden's list has no creation time
        return t("common.created_on", date=day(a["created"])) if "created" in a else a["id"]

    if with_client:
        return distinct_labels([{**a, "name": t("tasks.agent_option", name=a["name"],
                                                client=client(a))} for a in own_agents],
                               [made, lambda a: a["id"]])
    return distinct_labels(own_agents, [client, made, lambda a: a["id"]])


@pages.get("/tasks")
@login_required
@kept_page
def tasks_page():
    user = viewer()
    rt = runtime()
    now = clock.now()
    wanted = query_args({k: v for k, v in request.args.items()
                         if k in ("topic", "profile", "state", "page") and v})
    filter_error = False
    try:
        filters = parse_model(TaskFilters, {"action": "tasks", **wanted}, strict=False)
    except ApiError:
        filter_error = True
        filters = TaskFilters(action="tasks")
    listing = tasks.list_managed(rt.db, user.id, filters, now=now, view=_task_view)
    labels = agent_labels(agents.list_agents(rt.db, user.id, now=now)["agents"], with_client=True)
    # Filters that cannot be read show the unfiltered list with a note, as a 400.
    return render("tasks.html", 400 if filter_error else 200, listing=listing, filters=filters,
                  states=TASK_STATES,
                  agent_labels=labels, filter_error=filter_error,
                  topic_title=filtered_topic_title(filters.topic, listing["tasks"]),
                  shown_state=shown_state, reason_text=reason_text)


def _task_view(row) -> dict:
    """A task as the page lists it: a question an admin took down is named in the reader's
    language, and not linked (its page is a 404 to all but its asker)."""
    return {**tasks.managed_view(row, t("notify.taken_down_title")),
            "takenDown": row["topic_title"] is None, "agent_failed": row["agent_failed"],
            "questionClosed": row["topic_status"] == "closed",
            "answerHidden": bool(row["answer_hidden"]), "hiddenReason": row["answer_hidden_reason"]}


def filtered_topic_title(topic_id: str | None, listed: list[dict]) -> str | None:
    """The title of the question the list is filtered by, even when no task is listed."""
    if topic_id is None:
        return None
    if listed:
        return listed[0]["topicTitle"]
    reader = viewer()
    try:  # a question taken down is as unknown here as on its page
        return readable_topic(read_conn(), topic_id, reader.id, admin=reader.is_admin)["title"]
    except ApiError:
        return t("tasks.topic_unknown")


def shown_state(task: dict) -> str:
    """A task its owner cancelled is ``failed`` in the protocol; people see it apart."""
    return "cancelled" if tasks.cancelled(task) else task["state"]


# The reasons the server itself writes, by the state it leaves a task in, in the reader's
# language; an agent's own ``fail_task`` text is shown as the agent wrote it, even when it
# copies one of the server's sentences (``agent_failed``).
SERVER_REASONS = {
    ("failed", CANCELLED): "tasks.reason.cancelled",
    ("failed", DEAD_CONNECTION): "tasks.reason.dead_connection",
    ("failed", TOKEN_ROTATED): "tasks.reason.rotated",
    ("failed", TOKEN_REVOKED): "tasks.reason.revoked",
    ("failed", AGENT_ARCHIVED): "tasks.reason.archived",
    ("failed", SUSPENDED_TASK): "tasks.reason.suspended",
    ("failed", TAKEN_DOWN): "tasks.reason.taken_down",
    ("expired", LEASE_EXPIRED): "tasks.reason.expired",
}


def reason_text(task: dict) -> str:
    key = None if task["agent_failed"] else SERVER_REASONS.get((task["state"], task["error"]))
    return t(key) if key else t("tasks.reason.agent", text=task["error"])


@pages.get("/memories")
@login_required
def memories_page():
    user = viewer()
    listing = memories.list_for_user(read_conn(), user.id)
    own_agents = listing["agents"]
    by_agent = {a["id"]: {"pending": [], "active": []} for a in own_agents}
    for memory in listing["memories"]:
        by_agent.setdefault(memory["profile"], {"pending": [], "active": []})[
            memory["state"]].append(memory_shown(memory))
    return render("memories.html", agents=own_agents, by_agent=by_agent,
                  agent_labels=agent_labels(own_agents),
                  limit=memories.MAX_MEMORIES)


# A memory is kept as "《question title》：conclusion", the form its agent reads; the garden
# names the question apart, in the page's own punctuation.
def memory_shown(memory: dict) -> dict:
    """The memory with ``about`` (the question it came from, as the page names it, or None)
    and ``text`` the rest."""
    text = memory["text"]
    if text.startswith(TAKEN_DOWN_TITLE + "："):
        return {**memory, "about": t("mem.about_taken_down"),
                "text": text[len(TAKEN_DOWN_TITLE) + 1:]}
    title = memory["questionTitle"]
    if title is None or not text.startswith(f"《{title}》："):
        return {**memory, "about": None}
    return {**memory, "about": t("mem.about", title=in_own_lang(title)),
            "text": text[len(title) + 3:]}
