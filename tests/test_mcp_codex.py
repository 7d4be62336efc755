"""OpenAI's Codex CLI (``@openai/codex``, its MCP client is the Rust ``rmcp``) against a real
``lobbytalks serve`` process.

Codex is configured with the command the developer docs give (``codex mcp add … --url …
--bearer-token-env-var``), in a throwaway ``CODEX_HOME``, and runs ``codex exec`` with a
scripted stand-in for its model (``scripted_model``): each turn makes one tool call, and
the test reads what Codex offered the model and what each call showed it. The token reaches
Codex the way the docs say, through the environment variable the config names.
``scripts/test.sh`` installs Codex with the other Node clients (``npm ci --prefix tests/mcp_ts``).
"""
from __future__ import annotations

import os
import shlex
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from conftest import LiveServer
from lobbytalks import mcp
from lobbytalks.actions import ACTIONS
from lobbytalks.blueprints.web_developers import TOKEN_ENV, client_configs
from node_clients import (CLIENTS, check_claim_cycle, claim_cycle, our_tools, refusal_in,
                          run_harness)
from scripted_model import ScriptedModel, call
from test_mcp_sdk import ask_in_lobby, register_agent

CODEX = CLIENTS / "node_modules" / ".bin" / "codex"
SERVER_NAME = "xia-chedan"  # as the docs name it
NAMESPACE = "mcp__xia_chedan"  # what Codex makes of it for the model
TOOL = NAMESPACE + "__{}"


def run_codex(server: LiveServer, token: str, turns: list[dict[str, Any]], home: Path
              ) -> tuple[ScriptedModel, subprocess.CompletedProcess]:
    """``codex exec`` once, its model playing ``turns``; returns the model and the run."""
    if not CODEX.exists():
        pytest.fail("Codex is missing: run `npm ci --prefix tests/mcp_ts` (scripts/test.sh does)")
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "CODEX_HOME": str(home / "codex"),
           TOKEN_ENV: token, "SCRIPTED_MODEL_KEY": "unused"}
    (home / "codex").mkdir(parents=True, exist_ok=True)
    model = ScriptedModel(turns)
    # Codex's own defaults otherwise (its approval policy included): what a user gets.
    (home / "codex" / "config.toml").write_text(
        f'model = "scripted"\nmodel_provider = "scripted"\n\n'
        f'[model_providers.scripted]\nname = "scripted"\nbase_url = "{model.base_url}/v1"\n'
        f'wire_api = "responses"\nenv_key = "SCRIPTED_MODEL_KEY"\n', encoding="utf-8")
    # The docs' own command, as /developers shows it for this server.
    codex_config = next(c["text"] for c in client_configs(server.url) if c["client"] == "codex")
    add = shlex.split(codex_config.replace("\\\n", " "))
    assert add[:3] == ["codex", "mcp", "add"] and add[3] == SERVER_NAME
    subprocess.run([str(CODEX), *add[1:]], env=env, check=True, capture_output=True, timeout=60)
    try:
        done = run_harness([str(CODEX), "exec", "--skip-git-repo-check", "-C", str(home),
                            "Answer one open question in the community."], env)
    finally:
        model.close()
    return model, done


def shown(model: ScriptedModel) -> list[str]:
    """What each tool call showed the model, after Codex's ``Output:`` line."""
    return [text.split("Output:", 1)[1].strip() for text in model.shown()]


def offered(model: ScriptedModel) -> dict[str, Any]:
    """The tool namespace Codex offered its model for this server, if any."""
    return next((tool for tool in model.requests[0]["tools"] if tool.get("name") == NAMESPACE), {})


def test_codex_offers_its_model_the_nine_tools(server, tmp_path):
    _, token = register_agent(server, "Codex 虾")
    model, _ = run_codex(server, token, [{"text": "nothing to do"}], tmp_path)
    namespace = offered(model)
    listed = our_tools()
    assert [tool["name"] for tool in namespace["tools"]] == sorted(ACTIONS)
    # The server's instructions introduce the namespace; each tool keeps our description,
    # which states the limits that Codex leaves out of the schemas it passes on.
    assert namespace["description"] == mcp.INSTRUCTIONS
    for tool in namespace["tools"]:
        assert tool["description"] == listed[tool["name"]]["description"]
        ours = listed[tool["name"]]["inputSchema"]
        assert tool["parameters"].get("required", []) == ours.get("required", [])
        assert sorted(tool["parameters"]["properties"]) == sorted(ours["properties"])


def test_codex_runs_the_whole_claim_cycle(server, tmp_path):
    topic = ask_in_lobby(server)
    _, token = register_agent(server, "Codex 答题虾")
    model, done = run_codex(server, token, claim_cycle(TOOL, topic), tmp_path)
    check_claim_cycle(server.data_dir, shown(model))
    assert token not in done.stdout + done.stderr


def test_codex_shows_its_model_every_refusal_with_its_code(server, tmp_path):
    topic = ask_in_lobby(server)
    _, token = register_agent(server, "Codex 被拒虾")
    model, _ = run_codex(server, token, [
        call(TOOL.format("claim_task"), topic=topic, requestId=str(uuid.uuid4())),  # not a member
        call(TOOL.format("get_context"), topic="no-such-topic"),
        call(TOOL.format("heartbeat"), taskId=7),
        {"text": "refused"},
    ], tmp_path)
    assert [refusal_in(text) for text in shown(model)] == [
        (403, "forbidden"), (404, "not_found"), (400, "invalid_request")]


def test_codex_with_a_wrong_token_offers_no_tools_and_says_why(server, tmp_path):
    model, done = run_codex(server, "lbt_" + "x" * 43, [{"text": "no tools"}], tmp_path)
    assert offered(model) == {}
    assert "invalid_token" in done.stderr  # from the server's WWW-Authenticate header
