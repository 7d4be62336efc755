"""Anthropic's Claude Code CLI (``@anthropic-ai/claude-code``) against a real
``lobbytalks serve`` process.

Claude Code reads the ``.mcp.json`` that /developers and the protocol doc give (it names the
token's environment variable, never the token) and runs ``claude -p`` with a scripted
stand-in for its model (``scripted_model``, pointed at by ``ANTHROPIC_BASE_URL``): each turn
makes one tool call, and the test reads what Claude Code offered the model and what each
call showed it. ``scripts/test.sh`` installs Claude Code with the other Node clients
(``npm ci --prefix tests/mcp_ts``).
"""
from __future__ import annotations

import json
import os
import subprocess
import unicodedata
import uuid
from pathlib import Path
from typing import Any

import pytest

from conftest import LiveServer, good_result
from lobbytalks.actions import ACTIONS
from lobbytalks.blueprints.web_developers import TOKEN_ENV, claude_config
from node_clients import (CLIENTS, check_claim_cycle, claim_cycle, our_tools, refusal_in,
                          run_harness)
from scripted_model import ScriptedModel, call
from test_mcp_sdk import ask_in_lobby, register_agent

CLAUDE = CLIENTS / "node_modules" / ".bin" / "claude"
TOOL = "mcp__xia-chedan__{}"  # the server's name in the docs' .mcp.json


def run_claude(server: LiveServer, token: str, turns: list[dict[str, Any]], home: Path
               ) -> tuple[ScriptedModel, subprocess.CompletedProcess]:
    """``claude -p`` once, its model playing ``turns``; returns the model and the run."""
    if not CLAUDE.exists():
        pytest.fail("Claude Code is missing: run `npm ci --prefix tests/mcp_ts` "
                    "(scripts/test.sh does)")
    config = home / ".mcp.json"
    config.write_text(json.dumps(claude_config(server.url)), encoding="utf-8")
    model = ScriptedModel(turns)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), TOKEN_ENV: token,
           "ANTHROPIC_BASE_URL": model.base_url, "ANTHROPIC_API_KEY": "unused",
           "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    try:
        done = run_harness([str(CLAUDE), "-p", "Answer one open question in the community.",
                            "--mcp-config", str(config), "--strict-mcp-config",
                            "--allowedTools", "mcp__xia-chedan", "--output-format", "json"], env)
    finally:
        model.close()
    return model, done


def offered(model: ScriptedModel) -> dict[str, dict[str, Any]]:
    """This server's tools as Claude Code offered them to its model, by their own names."""
    prefix = TOOL.format("")
    return {tool["name"].removeprefix(prefix): tool for tool in model.requests[0]["tools"]
            if tool["name"].startswith(prefix)}


def nfkc(value: Any) -> Any:
    return json.loads(unicodedata.normalize("NFKC", json.dumps(value, ensure_ascii=False)))


def test_claude_code_offers_its_model_the_nine_tools(server, tmp_path):
    _, token = register_agent(server, "Claude 虾")
    model, _ = run_claude(server, token, [{"text": "nothing to do"}], tmp_path)
    tools = offered(model)
    listed = our_tools()
    assert sorted(tools) == sorted(ACTIONS)
    for name, tool in tools.items():
        # Claude Code passes our words and input schema on whole, limits included, only
        # NFKC-normalised (its fullwidth brackets become ASCII ones).
        ours = listed[name]
        assert tool["description"] == nfkc(ours["description"])
        assert tool["input_schema"]["properties"] == nfkc(ours["inputSchema"]["properties"])
        assert tool["input_schema"].get("required") == ours["inputSchema"].get("required")


def test_claude_code_runs_the_whole_claim_cycle(server, tmp_path):
    topic = ask_in_lobby(server)
    _, token = register_agent(server, "Claude 答题虾")
    model, done = run_claude(server, token, claim_cycle(TOOL, topic), tmp_path)
    assert json.loads(done.stdout)["result"] == "answered"
    check_claim_cycle(server.data_dir, model.shown())
    assert token not in done.stdout + done.stderr


def test_claude_code_shows_its_model_every_refusal_with_its_code(server, tmp_path):
    topic = ask_in_lobby(server)
    _, token = register_agent(server, "Claude 被拒虾")
    model, _ = run_claude(server, token, [
        call(TOOL.format("claim_task"), topic=topic, requestId=str(uuid.uuid4())),  # not a member
        call(TOOL.format("get_context"), topic="no-such-topic"),
        call(TOOL.format("submit_result"), taskId="no-such-task", **good_result(evidence=[])),
        {"text": "refused"},
    ], tmp_path)
    assert [refusal_in(text) for text in model.shown()] == [
        (403, "forbidden"), (404, "not_found"), (400, "invalid_citation")]


def test_claude_code_with_a_wrong_token_offers_no_tools(server, tmp_path):
    model, _ = run_claude(server, "lbt_" + "x" * 43, [{"text": "no tools"}], tmp_path)
    assert offered(model) == {}
