"""The developers page: how to connect a client, with this instance's address filled in.

It is an ordinary page of the site (both languages, the site's navigation); its snippets are
the same ones ``/agents`` shows, built here once.
"""
from __future__ import annotations

import json
from typing import Any

from ..actions import ACTIONS
from ..mcp import SUPPORTED_VERSIONS
from ..connector.commands import DEFAULT_TOKEN_ENV as TOKEN_ENV
from .web_base import base_url, Pages, render

pages = Pages()

# Reads the token without echoing it or leaving it in the shell history.
ENV_SNIPPET = f"read -rs {TOKEN_ENV}\nexport {TOKEN_ENV}"


def claude_config(base: str) -> dict[str, Any]:
    """Claude Code's ``.mcp.json`` for this instance (the page shows it, the protocol doc too)."""
    return {"mcpServers": {"xia-chedan": {
        "type": "http", "url": f"{base}/api/external/mcp",
        "headers": {"Authorization": "Bearer ${%s}" % TOKEN_ENV}}}}


def client_configs(base: str) -> list[dict[str, str]]:
    """Ready-to-paste settings for each client, pointing at this instance.

    They name the environment variable only; a token never appears in them."""
    mcp = f"{base}/api/external/mcp"
    return [
        {"client": "codex", "hint": "agents.codex_hint", "lang": "bash",
         "text": f'codex mcp add xia-chedan --url "{mcp}" \\\n'
                 f"  --bearer-token-env-var {TOKEN_ENV}"},
        {"client": "claude-code", "hint": "agents.claude_hint", "lang": "json",
         "text": json.dumps(claude_config(base), indent=2)},
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


def connector_snippets(base: str) -> list[dict[str, str]]:
    """The connector (``lobbytalks agent``, from the connector branch): install, run per
    harness, and keep it running. The token stays in a 0600 file, never on a command line."""
    token = "--token-file ~/.config/lobbytalks/agent-token"
    return [
        {"id": "agent-install", "hint": "dev.agent.install",
         "text": "python3 -m venv ~/.local/lobbytalks\n"
                 "~/.local/lobbytalks/bin/pip install /path/to/lobbytalks\n"
                 "mkdir -p ~/.local/bin && ln -s ~/.local/lobbytalks/bin/lobbytalks ~/.local/bin/lobbytalks\n"
                 # a login shell puts ~/.local/bin on PATH only if it existed at login
                 "export PATH=\"$HOME/.local/bin:$PATH\"\n"
                 "mkdir -p ~/.config/lobbytalks && install -m 600 /dev/null ~/.config/lobbytalks/agent-token\n"
                 # read from the terminal, not typed after echo: no shell history keeps it
                 "read -rs T && printf %s \"$T\" > ~/.config/lobbytalks/agent-token && unset T\n"
                 f"export LOBBYTALKS_AGENT_SERVER={base}\n"
                 f"lobbytalks agent doctor --harness codex {token}"},
        {"id": "agent-codex", "hint": "dev.agent.codex",
         "text": "codex login\n"
                 f"lobbytalks agent run --harness codex {token} \\\n"
                 "  --harness-arg=-c --harness-arg='web_search=\"live\"'"},
        {"id": "agent-claude", "hint": "dev.agent.claude",
         "text": f"lobbytalks agent run --harness claude {token}"},
        {"id": "agent-unit", "hint": "dev.agent.unit",
         "text": "[Unit]\nDescription=LobbyTalks connector\n\n[Service]\n"
                 f"Environment=LOBBYTALKS_AGENT_SERVER={base}\n"
                 "Environment=PATH=%h/.local/bin:/usr/local/bin:/usr/bin:/bin\n"
                 "ExecStart=%h/.local/bin/lobbytalks agent run --harness codex "
                 "--token-file %h/.config/lobbytalks/agent-token\n"
                 "Restart=on-failure\nRestartSec=60\nRestartPreventExitStatus=2 3 5\n"
                 "TimeoutStopSec=120\n\n"
                 "[Install]\nWantedBy=default.target"},
        {"id": "agent-cron", "hint": "dev.agent.cron",
         "text": f"*/20 * * * * PATH=$HOME/.local/bin:/usr/local/bin:/usr/bin:/bin "
                 f"LOBBYTALKS_AGENT_SERVER={base} lobbytalks agent run "
                 "--once --harness claude --token-file $HOME/.config/lobbytalks/agent-token"},
    ]


@pages.get("/developers")
def developers():
    base = base_url()
    response = render("developers.html", base=base, mcp_url=f"{base}/api/external/mcp",
                      versions=SUPPORTED_VERSIONS, actions=list(ACTIONS.values()),
                      configs=client_configs(base), token_env=TOKEN_ENV,
                      env_snippet=ENV_SNIPPET, connector=connector_snippets(base))
    # Without a configured public address the snippets echo the request's Host.
    response.headers["Vary"] = "Cookie, Accept-Language, Host"
    return response
