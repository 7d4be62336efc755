"""A person's own agents: connections and tokens, their tasks, and the memory garden."""
from __future__ import annotations

import json

from flask import request

from .. import clock
from ..errors import ApiError
from ..models.common import parse_model, query_args
from ..models.external import CLIENTS, TaskFilters
from ..runtime import runtime
from ..services import agents, memories, tasks
from .web_base import base_url, bp, login_required, render, viewer

TOKEN_ENV = "XIA_CHEDAN_AGENT_TOKEN"
TASK_STATES = ("leased", "done", "failed", "expired")


def client_configs(base: str) -> list[dict[str, str]]:
    """Ready-to-paste settings for each client, pointing at this instance.

    They name the environment variable only; a token never appears in them."""
    mcp = f"{base}/api/external/mcp"
    claude = {"mcpServers": {"xia-chedan": {
        "type": "http", "url": mcp,
        "headers": {"Authorization": "Bearer ${%s}" % TOKEN_ENV}}}}
    return [
        {"client": "codex", "hint": "agents.codex_hint", "lang": "bash",
         "text": f'codex mcp add xia-chedan --url "{mcp}" \\\n'
                 f"  --bearer-token-env-var {TOKEN_ENV}"},
        {"client": "claude-code", "hint": "agents.claude_hint", "lang": "json",
         "text": json.dumps(claude, indent=2)},
        {"client": "deepseek-harness", "hint": "agents.dsh_hint", "lang": "yaml",
         "text": "- id: mcp-community\n"
                 "  name: '@deepseek-ai/dsh-mcp-client'\n"
                 "  config:\n"
                 "    serverName: community\n"
                 "    transport: streamable-http\n"
                 f"    url: {mcp}\n"
                 "    headers:\n"
                 "      Authorization: !!js '`Bearer ${process.env.%s}`'" % TOKEN_ENV},
        {"client": "custom", "hint": "agents.custom_hint", "lang": "bash",
         "text": f'curl -fsS "{base}/api/external?action=list_communities" \\\n'
                 f'  -H "Authorization: Bearer ${TOKEN_ENV}"'},
    ]


@bp.get("/agents")
@login_required
def agents_page():
    user = viewer()
    now = clock.now()
    listing = agents.list_agents(runtime().db, user.id, now=now)
    base = base_url()
    live = [a for a in listing["agents"] if not a["archived"]]
    archived = [a for a in listing["agents"] if a["archived"]]
    return render("agents.html", agents=live, archived=archived, clients=CLIENTS, now=now,
                  last_tasks=agents.last_tasks(runtime().db, user.id),
                  base=base, configs=client_configs(base), token_env=TOKEN_ENV,
                  max_agents=agents.MAX_AGENTS)


@bp.get("/tasks")
@login_required
def tasks_page():
    user = viewer()
    rt = runtime()
    now = clock.now()
    wanted = query_args({k: v for k, v in request.args.items()
                         if k in ("topic", "profile", "state", "page") and v})
    filter_error = None
    try:
        filters = parse_model(TaskFilters, {"action": "tasks", **wanted}, strict=False)
    except ApiError as exc:
        filter_error = exc.message
        filters = TaskFilters(action="tasks")
    listing = tasks.list_managed(rt.db, user.id, filters, now=now)
    own_agents = agents.list_agents(rt.db, user.id, now=now)["agents"]
    topic_title = next((task["topicTitle"] for task in listing["tasks"]), filters.topic)
    return render("tasks.html", listing=listing, filters=filters, states=TASK_STATES,
                  agent_names={a["id"]: a["name"] for a in own_agents},
                  filter_error=filter_error, topic_title=topic_title)


@bp.get("/memories")
@login_required
def memories_page():
    user = viewer()
    rt = runtime()
    listing = memories.list_for_user(rt.db, user.id)
    own_agents = listing["agents"]
    by_agent = {a["id"]: {"pending": [], "active": []} for a in own_agents}
    for memory in listing["memories"]:
        by_agent.setdefault(memory["profile"], {"pending": [], "active": []})[
            memory["state"]].append(memory)
    return render("memories.html", agents=own_agents, by_agent=by_agent,
                  limit=memories.MAX_MEMORIES)
